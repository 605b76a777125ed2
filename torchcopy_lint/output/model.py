"""What every format renders: the findings, the files that could not be checked,
and (where a format needs them) source lines and fixes as text edits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.fixes.text_edits import TextEdit
from torchcopy_lint.output.sources import SourceLines


@dataclass
class Report:
    findings: Sequence[Finding]
    errors: Sequence[FileError] = ()
    sources: SourceLines = field(default_factory=SourceLines)
    edits: Mapping[Finding, Sequence[TextEdit]] = field(default_factory=dict)  # only formats that show fixes ask for them
    root: Path = field(default_factory=Path.cwd)  # what machine formats make paths relative to


def location(finding: Finding) -> str:
    """``path:line:col``, or ``path:cell N:line:col`` in a notebook (ruff's spelling)."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"


def relative_posix(path: str, root: Path) -> str:
    """``path`` relative to ``root`` in forward-slash form, or absolute when outside it."""
    candidate = Path(path)
    try:
        absolute = candidate if candidate.is_absolute() else (Path.cwd() / candidate)
        return absolute.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return candidate.as_posix()
