"""Jupyter notebooks (``.ipynb``) as Python source, and fixed source back into the notebook.

A notebook is JSON (read with the standard library only). Its code cells are
joined into one Python text, each cell starting on a new line, so that the
rules see the program the kernel runs top to bottom. IPython syntax that is not
Python is neutralised line by line without moving anything else: a line magic
(``%time f()``), a shell escape (``!pip install x``), help (``obj?``,
``??obj``) becomes ``pass`` at the same indentation; in ``x = !ls`` only the
part from ``!`` on becomes ``...``; a cell magic (``%%bash``) blanks its whole
cell unless its body is Python (``%%time``, ``%%capture`` ...), in which case
only the magic line is replaced. Line numbers and the columns of all other
text are unchanged, so a finding maps back to (cell, line, column) directly.

Fixed source goes back cell by cell (``Notebook.with_source``): the changed
runs of lines (difflib) are applied to the original cell text, so magics,
untouched lines, outputs and metadata stay exactly as they were, and the JSON
is written with the notebook's own layout (indent, key order, ASCII escaping,
trailing newline).
"""

from __future__ import annotations

import difflib
import json
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from torchcopy_lint.diagnostics import FileError, FileResult, Finding
from torchcopy_lint.fixes.text_edits import split_lines
from torchcopy_lint.source import DEFAULT_MAX_FILE_SIZE, CannotCheck, check_size, read_source

if TYPE_CHECKING:
    from torchcopy_lint.fixes.apply import FixOutcome

SUFFIX = ".ipynb"

# Cell magics whose body is Python: only the magic line itself is replaced.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3", "ipython"})

_LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:%|!|\?)")
_HELP_SUFFIX = re.compile(r"^(?P<indent>[ \t]*)[\w.\[\]'\"()]+\?{1,2}[ \t]*$")
_ASSIGNED_MAGIC = re.compile(r"^(?P<keep>[ \t]*[\w.,\[\] \t]+?[ \t]*=[ \t]*)(?:%|!)")
_CELL_MAGIC = re.compile(r"^[ \t]*%%(?P<name>[\w-]+)")


class NotebookError(ValueError):
    """The file is not a notebook this module can read; the message is one line."""


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based position among all cells (what "cell 3" means)
    text: str  # the cell's source as stored (joined), newlines normalised to \n
    start: int  # 0-based index of the cell's first line in the joined source
    line_count: int
    as_list: bool  # the source was stored as a list of lines (nbformat's usual form)


@dataclass(frozen=True)
class Layout:
    """How the notebook's JSON was written, to write it back the same way."""

    indent: int | None
    ensure_ascii: bool
    trailing_newline: bool

    def dumps(self, data: object) -> str:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii, separators=(",", ": ") if self.indent is not None else (", ", ": "))
        return text + ("\n" if self.trailing_newline else "")


def _layout(text: str) -> Layout:
    indent: int | None = None
    lines = text.split("\n", 2)
    if len(lines) > 1 and lines[1].strip():
        indent = len(lines[1]) - len(lines[1].lstrip(" "))
    ensure_ascii = not any(ord(char) > 127 for char in text) and "\\u" in text
    return Layout(indent, ensure_ascii, text.endswith("\n"))


def _neutralise_line(line: str) -> str:
    """A line of a Python cell with IPython-only syntax replaced in place."""
    body = line.rstrip("\n")
    newline = line[len(body) :]
    match = _LINE_MAGIC.match(body) or _HELP_SUFFIX.match(body)
    if match:
        return f"{match.group('indent')}pass{newline}"
    assigned = _ASSIGNED_MAGIC.match(body)
    if assigned and "==" not in assigned.group("keep") and not assigned.group("keep").rstrip().endswith(("<=", ">=", "!=")):
        return f"{assigned.group('keep')}...{newline}"
    return line


def _python_lines(text: str) -> tuple[list[str], set[int]]:
    """The cell's lines as Python, and the (0-based) lines that were neutralised."""
    lines = split_lines(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    cell_magic = _CELL_MAGIC.match(lines[0]) if lines else None
    if cell_magic and cell_magic.group("name") not in PYTHON_CELL_MAGICS:
        return ["\n"] * len(lines), set(range(len(lines)))
    out, changed = [], set()
    for index, line in enumerate(lines):
        new = "pass\n" if index == 0 and cell_magic else _neutralise_line(line)
        if new != line:
            changed.add(index)
        out.append(new)
    return out, changed


def _source_text(cell: dict, number: int) -> tuple[str, bool]:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source), True
    if isinstance(source, str):
        return source, False
    raise NotebookError(f"not a Jupyter notebook: cell {number} has no text 'source'")


def _is_python(notebook: dict) -> bool:
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for holder, key in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(holder)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key].lower() in ("python", "python3", "ipython", "ipython3")
    return True


class Notebook:
    """A parsed notebook: its code cells joined as Python, and the way back."""

    def __init__(self, data: bytes) -> None:
        try:
            self.text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise NotebookError(f"not a notebook: not UTF-8 (invalid byte 0x{data[error.start]:02x} at offset {error.start})") from None
        try:
            self.data = json.loads(self.text)
        except json.JSONDecodeError as error:
            raise NotebookError(f"not a notebook: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
        except RecursionError:
            raise NotebookError("not a notebook: JSON nested too deeply") from None
        if not isinstance(self.data, dict) or not isinstance(self.data.get("cells"), list):
            hint = " (nbformat 3 notebooks are not supported)" if isinstance(self.data, dict) and "worksheets" in self.data else ""
            raise NotebookError(f"not a Jupyter notebook: no 'cells' list{hint}")
        self.layout = _layout(self.text)
        self.cells: list[CodeCell] = []
        self.masked: set[int] = set()
        joined: list[str] = []
        python = _is_python(self.data)
        for number, cell in enumerate(self.data["cells"], start=1):
            if not isinstance(cell, dict):
                raise NotebookError(f"not a Jupyter notebook: cell {number} is not an object")
            if cell.get("cell_type") != "code":
                continue
            text, as_list = _source_text(cell, number)
            text = text.replace("\r\n", "\n")
            lines, changed = _python_lines(text) if python else ([], set())
            self.cells.append(CodeCell(number, text, len(joined), len(lines), as_list))
            self.masked.update(len(joined) + index for index in changed)
            joined.extend(lines)
        self.source = "".join(joined)
        self._starts = [cell.start for cell in self.cells]

    # -- positions ----------------------------------------------------------------

    def _cell_at(self, index: int) -> CodeCell:
        """The cell holding 0-based joined line ``index``."""
        position = bisect_right(self._starts, index) - 1
        while position > 0 and self.cells[position].line_count == 0:
            position -= 1
        return self.cells[max(position, 0)]

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, 1-based line in the cell) of 1-based joined ``line``."""
        cell = self._cell_at(line - 1)
        return cell.number, line - cell.start

    def cell_lines(self, number: int) -> list[str]:
        """The stored text of cell ``number`` (1-based among all cells), by line."""
        for cell in self.cells:
            if cell.number == number:
                return [line.rstrip("\n") for line in split_lines(cell.text)]
        return []

    # -- writing fixed source back -------------------------------------------------

    def cell_texts(self, fixed_source: str) -> dict[int, str]:
        """New text per changed cell (by cell number) once the joined source becomes ``fixed_source``.

        Raises NotebookError when a change would span cells or touch a neutralised
        IPython line, which has no Python text to change.
        """
        before = split_lines(self.source)
        after = split_lines(fixed_source)
        pieces: dict[int, list[str]] = {cell.number: [] for cell in self.cells}
        originals = {cell.number: split_lines(_with_newline(cell.text)) for cell in self.cells}
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
            if tag == "equal":
                for index in range(i1, i2):
                    cell = self._cell_at(index)
                    pieces[cell.number].append(originals[cell.number][index - cell.start])
                continue
            if any(index in self.masked for index in range(i1, i2)):
                raise NotebookError("a fix would change an IPython magic line; notebook left unchanged")
            cell = self._receiving_cell(i1, i2, after[j1:j2])
            if i2 > i1 and self._cell_at(i2 - 1) is not cell:
                raise NotebookError("a fix would span two cells; notebook left unchanged")
            pieces[cell.number].extend(after[j1:j2])
        changed = {}
        for cell in self.cells:
            text = "".join(pieces[cell.number])
            if not cell.text.endswith("\n") and text.endswith("\n"):
                text = text[:-1]  # the cell's last line had no newline: keep it so
            if text != cell.text:
                changed[cell.number] = text
        return changed

    def _receiving_cell(self, i1: int, i2: int, inserted: list[str]) -> CodeCell:
        """The cell a changed run of joined lines [i1, i2) belongs to.

        A pure insertion at a cell boundary goes to the cell below, except added
        imports, which join the end of the cell above (its import block).
        """
        total = len(split_lines(self.source))
        if i2 > i1:
            return self._cell_at(i1)
        if i1 >= total:
            return self._cell_at(total - 1)
        cell = self._cell_at(i1)
        if i1 > 0 and cell.start == i1 and all(line.lstrip().startswith(("import ", "from ")) or not line.strip() for line in inserted):
            return self._cell_at(i1 - 1)
        return cell

    def with_source(self, fixed_source: str) -> bytes:
        """The notebook's bytes with its code cells rewritten from ``fixed_source``."""
        changed = self.cell_texts(fixed_source)
        if not changed:
            return self.text.encode("utf-8")
        if self.layout.dumps(self.data) != self.text:
            raise NotebookError("cannot fix: the notebook's JSON layout cannot be reproduced exactly (re-save it with Jupyter first)")
        by_number = {cell.number: cell for cell in self.cells}
        for number, text in changed.items():
            cell = self.data["cells"][number - 1]
            cell["source"] = split_lines(text) if by_number[number].as_list else text
        return self.layout.dumps(self.data).encode("utf-8")


# -- the engine's side: check and fix a notebook like a Python file ----------------------


def _in_cells(notebook: Notebook, finding: Finding) -> Finding:
    cell, line = notebook.locate(finding.line)
    end_cell, end_line = notebook.locate(finding.end_line)
    if end_cell != cell:  # cannot happen for a statement; keep the span inside the cell
        end_line = line
    return replace(finding, line=line, end_line=end_line, cell=cell)


def _error_in_cells(notebook: Notebook, error: FileError) -> FileError:
    """A syntax error's joined-source line, said as the cell and line a reader can find."""
    if not error.line:
        return error
    cell, line = notebook.locate(error.line)
    reason = re.sub(rf"\bat line {error.line}\b", f"in cell {cell} at line {line}", error.reason, count=1)
    return FileError(error.path, reason)


def check_notebook(data: bytes, path: str, codes: Iterable[str], max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FileResult:
    """Check a notebook's bytes: findings and errors located by cell; never raises."""
    from torchcopy_lint.engine import FileRun, rules_for

    try:
        notebook = Notebook(data)
        check_size(len(notebook.source.encode("utf-8")), max_file_size)  # the code, not the outputs, must fit
    except NotebookError as error:
        return FileResult(path, [], FileError(path, str(error)))
    except CannotCheck as error:
        return FileResult(path, [], FileError(path, error.reason))
    result = FileRun(path, rules_for(codes), text=notebook.source, max_file_size=None).result()
    findings = [_in_cells(notebook, finding) for finding in result.findings]
    error = _error_in_cells(notebook, result.error) if result.error else None
    return FileResult(path, findings, error, warnings=result.warnings)


def check_notebook_file(path: Path, codes: Iterable[str], max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FileResult:
    try:
        data = read_source(path, None)  # outputs (images) may be large; check_notebook limits the code
    except CannotCheck as error:
        return FileResult(str(path), [], FileError(str(path), error.reason))
    return check_notebook(data, str(path), codes, max_file_size)


def fix_notebook(data: bytes, path: str, codes: Iterable[str], unsafe: bool = False) -> FixOutcome:
    """Fix the code cells of a notebook; the rest of it stays byte for byte. Raises CannotCheck."""
    from torchcopy_lint.fixes.apply import FixFailed, FixOutcome, fix_bytes

    try:
        notebook = Notebook(data)
    except NotebookError as error:
        raise CannotCheck(str(error)) from None
    outcome = fix_bytes(notebook.source.encode("utf-8"), path, codes, unsafe, max_file_size=None)
    remaining = [_in_cells(notebook, finding) for finding in outcome.remaining]
    if not outcome.changed:
        return FixOutcome(path, data, data, 0, remaining)
    fixed_source = outcome.fixed.decode("utf-8")
    try:
        fixed = notebook.with_source(fixed_source)
    except NotebookError as error:
        raise FixFailed(str(error)) from None
    # What remains is reported against the fixed notebook's own cells.
    fixed_notebook = Notebook(fixed)
    remaining = [_in_cells(fixed_notebook, finding) for finding in outcome.remaining]
    return FixOutcome(path, data, fixed, outcome.fixed_count, remaining)


def notebook_diff(path: str, before: bytes, after: bytes) -> str:
    """The change as a unified diff of each changed cell (``--- nb.ipynb:cell 3``), as ruff shows it."""
    old, new = Notebook(before), Notebook(after)
    new_cells = {cell.number: cell for cell in new.cells}
    parts = []
    for cell in old.cells:
        fixed = new_cells.get(cell.number)
        if fixed is None or fixed.text == cell.text:
            continue
        name = f"{path}:cell {cell.number}"
        parts.extend(difflib.unified_diff(split_lines(_with_newline(cell.text)), split_lines(_with_newline(fixed.text)), fromfile=name, tofile=name))
    return "".join(parts)


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
