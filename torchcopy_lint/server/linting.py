"""What the editor server knows about one document, without any LSP: its findings
with their fixes as text edits, or why it cannot be checked, under the settings
of the pyproject.toml nearest to it (select, ignore, per-file-ignores)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from torchcopy_lint.config import ConfigError, Settings
from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.engine import FileRun, file_error
from torchcopy_lint.file_settings import codes_for, selected_codes, settings_for
from torchcopy_lint.fixes.text_edits import TextEdit, edits_between, finding_edits
from torchcopy_lint.source import CannotCheck


@dataclass(frozen=True)
class Item:
    finding: Finding
    edits: tuple[TextEdit, ...] = ()  # the finding's fix, applied alone; empty without one


@dataclass(frozen=True)
class DocumentReport:
    items: tuple[Item, ...] = ()
    error: FileError | None = None  # the document cannot be checked (a syntax error while typing)
    config_error: str | None = None  # the nearest pyproject.toml is broken: defaults were used


def _codes(path: Path | None) -> tuple[frozenset[str], str | None]:
    if path is None:
        return selected_codes(Settings()), None
    try:
        return codes_for(path, settings_for(path)), None
    except ConfigError as error:
        return selected_codes(Settings()), str(error)


def lint_document(path: Path | None, text: str) -> DocumentReport:
    """Check ``text`` (the editor's buffer) as the file at ``path`` (None: an unsaved buffer)."""
    codes, config_error = _codes(path)
    name = str(path) if path is not None else "untitled"
    run = FileRun.from_text(text, name, codes)
    try:
        located = run.located()
        edits = finding_edits(run) if any(raw.fix is not None for _, raw in located) else {}
    except CannotCheck as error:
        return DocumentReport(error=file_error(name, error), config_error=config_error)
    items = tuple(Item(finding, edits.get(finding, ())) for finding, _ in located)
    return DocumentReport(items, config_error=config_error)


def fix_all_safe(path: Path | None, text: str) -> tuple[TextEdit, ...]:
    """The edits that apply every safe fix to ``text`` at once (``--fix``'s result); none when
    there is nothing to fix or the text cannot be fixed."""
    from torchcopy_lint.fixes.apply import fix_bytes

    codes, _ = _codes(path)
    try:
        outcome = fix_bytes(text.encode("utf-8"), str(path) if path else "untitled", codes, unsafe=False, max_file_size=None)
    except CannotCheck:
        return ()
    if not outcome.changed:
        return ()
    return edits_between(text, outcome.fixed.decode("utf-8"))
