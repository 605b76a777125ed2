"""A fix as text edits: what SARIF, the json output and the editor server show.

``--fix`` rewrites the tree; a reader outside the linter (GitHub code scanning,
an editor's quick fix) needs text replacements instead. ``edits_between``
derives them from the text before and after applying a fix, one edit per
changed run of lines (difflib), so an added import and the fixed statement
become two small edits, not one that rewrites everything between them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchcopy_lint.diagnostics import Finding
    from torchcopy_lint.engine import FileRun


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (line, column) up to, not including, (end_line, end_column)
    with ``text``. Lines and columns are 1-based; columns count characters (code points)."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept; only ``\\n`` ends a line (as Python counts them)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _position(lines: list[str], index: int) -> tuple[int, int]:
    """1-based (line, column) where line ``index`` (0-based) starts; past the end, the end."""
    if index < len(lines) or not lines or lines[-1].endswith("\n"):
        return index + 1, 1
    return len(lines), len(lines[-1]) + 1


def edits_between(old: str, new: str) -> tuple[TextEdit, ...]:
    """Whole-line edits that turn ``old`` into ``new``."""
    before, after = split_lines(old), split_lines(new)
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        (line, column), (end_line, end_column) = _position(before, i1), _position(before, i2)
        edits.append(TextEdit(line, column, end_line, end_column, "".join(after[j1:j2])))
    return tuple(edits)


def apply_edits(text: str, edits: tuple[TextEdit, ...] | list[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (the tests' and the server's check)."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line > len(lines):
            return len(text)
        return starts[line - 1] + column - 1

    result = text
    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        result = result[: offset(edit.line, edit.column)] + edit.text + result[offset(edit.end_line, edit.end_column) :]
    return result


def finding_edits(run: "FileRun") -> dict["Finding", tuple[TextEdit, ...]]:
    """Each fixable finding of ``run`` with its fix as text edits (the fix applied alone).

    The fix is applied to the tree as ``--fix`` would (with the imports it
    needs), and the printed result compared with the file's text.
    """
    from torchcopy_lint.fixes.apply import apply_fixes

    before = run.module.code
    edits = {}
    for finding, raw in run.located():
        if raw.fix is None:
            continue
        after = apply_fixes(run.module, [raw]).code
        if after != before:
            edits[finding] = edits_between(before, after)
    return edits


def edits_for(path: str, data: bytes, codes: Iterable[str]) -> dict["Finding", tuple[TextEdit, ...]]:
    """``finding_edits`` of a file's bytes; empty when it cannot be checked (its error is reported elsewhere)."""
    from torchcopy_lint.engine import FileRun
    from torchcopy_lint.source import CannotCheck

    try:
        return finding_edits(FileRun.from_bytes(data, path, codes, max_file_size=None))
    except CannotCheck:
        return {}


def edits_for_findings(findings: Iterable["Finding"], texts: Mapping[str, str]) -> dict["Finding", tuple[TextEdit, ...]]:
    """Text edits for the fixable findings of a report, reading each file again
    (``texts``: contents already in hand, such as stdin). Notebook findings get none:
    their edits would be to the cells, not to the file's JSON."""
    from pathlib import Path

    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fix and finding.cell is None:
            by_path.setdefault(finding.path, []).append(finding)
    edits: dict[Finding, tuple[TextEdit, ...]] = {}
    for path, group in by_path.items():
        try:
            data = texts[path].encode("utf-8") if path in texts else Path(path).read_bytes()
        except OSError:
            continue
        found = edits_for(path, data, {finding.code for finding in group})
        edits.update({finding: found[finding] for finding in group if finding in found})
    return edits
