"""A fix as text edits: what SARIF, the json output and the editor server show.

``--fix`` rewrites the tree; a reader outside the linter (GitHub code scanning,
an editor's quick fix) needs text replacements instead. ``edits_between``
derives them from the text before and after applying a fix, one edit per
changed run of lines (difflib), so an added import and the fixed statement
become two small edits, not one that rewrites everything between them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (line, column) up to, not including, (end_line, end_column)
    with ``text``. Lines and columns are 1-based; columns count characters (code points)."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    def to_dict(self) -> dict[str, object]:
        return {"location": {"row": self.line, "column": self.column}, "end_location": {"row": self.end_line, "column": self.end_column}, "content": self.text}


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
