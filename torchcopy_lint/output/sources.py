"""Source lines of reported files, read on demand: the ``full`` format shows them,
fingerprints hash them. Each file is read once; a file that cannot be read
gives no lines (its findings are still reported)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torchcopy_lint.diagnostics import Finding


class SourceLines:
    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        """``texts``: contents already in hand (stdin), by reported path."""
        self._texts = dict(texts or {})
        self._lines: dict[tuple[str, int | None], list[str]] = {}

    @property
    def texts(self) -> Mapping[str, str]:
        """The contents handed in (stdin), by reported path."""
        return self._texts

    def lines(self, path: str, cell: int | None = None) -> list[str]:
        """The file's lines (or a notebook cell's), without line endings."""
        key = (path, cell)
        if key not in self._lines:
            self._lines[key] = self._read(path, cell)
        return self._lines[key]

    def line(self, finding: Finding, number: int | None = None) -> str:
        """Line ``number`` (default: the finding's first line), or "" when unknown."""
        lines = self.lines(finding.path, finding.cell)
        index = (number or finding.line) - 1
        return lines[index] if 0 <= index < len(lines) else ""

    def _read(self, path: str, cell: int | None) -> list[str]:
        from torchcopy_lint.engine import CannotCheck, decode
        from torchcopy_lint.notebook import Notebook, NotebookError

        try:
            if path in self._texts:
                data = self._texts[path].encode("utf-8")
            else:
                data = Path(path).read_bytes()
            if cell is not None:
                return Notebook(data).cell_lines(cell)
            return decode(data).split("\n")
        except (OSError, CannotCheck, NotebookError):
            return []
