"""Apply fixes to a file safely.

Fixes are applied in passes until nothing more changes (at most MAX_PASSES);
within a pass, fixes whose edits overlap are deferred to the next pass, so they
never corrupt each other. Findings on ``# noqa`` lines are not fixed. The result
must parse, compile, and be free of the fixes just applied (re-linted); if any
check fails the file is left untouched and the failure reported, with the
file's findings as they stand. LibCST round-trips the source (checked: a file it
would not print back byte for byte is left alone), so the encoding (libcst reads
the bytes and the coding cookie), newline style, trailing newline and every
comment survive. fixes/write.py writes the result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from torchcopy_lint.lazy import cst

from torchcopy_lint.context import RawFinding
from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.engine import FileRun, file_error
from torchcopy_lint.fixes.write import WriteRefused, write_fixed
from torchcopy_lint.source import DEFAULT_MAX_FILE_SIZE, CannotCheck, CompileLevel, decode, read_source
from torchcopy_lint.walker import iter_children

MAX_PASSES = 10


@dataclass
class FixOutcome:
    path: str
    original: bytes
    fixed: bytes  # equal to ``original`` when nothing changed
    fixed_count: int = 0
    remaining: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


class FixFailed(CannotCheck):
    """A fix produced code that failed a post-fix check; nothing was written."""


def _subtree_ids(node: cst.CSTNode) -> set[int]:
    seen, pending = set(), [node]
    while pending:
        current = pending.pop()
        seen.add(id(current))
        pending.extend(iter_children(current))
    return seen


def _choose(candidates: list[RawFinding]) -> list[RawFinding]:
    """Fixes whose edits do not overlap each other, in report order."""
    chosen: list[RawFinding] = []
    claimed: set[int] = set()
    for raw in candidates:
        assert raw.fix is not None
        touched = set().union(*(_subtree_ids(old) for old, _ in raw.fix.edits))
        roots = {id(old) for old, _ in raw.fix.edits}
        if touched & claimed or any(root in claimed for root in roots):
            continue
        claimed |= touched
        chosen.append(raw)
    return chosen


class _Replace(cst.CSTTransformer):
    """Replace nodes by identity. With ``explicit_indent``, every existing block that
    uses the module's default indent gets it written out (see :func:`_apply`)."""

    def __init__(self, edits: dict[int, cst.CSTNode], explicit_indent: str | None = None) -> None:
        super().__init__()
        self.edits = edits
        self.explicit_indent = explicit_indent

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        replacement = self.edits.get(id(original_node))
        if replacement is not None:
            return replacement
        if self.explicit_indent is not None and isinstance(updated_node, cst.IndentedBlock) and updated_node.indent is None:
            return updated_node.with_changes(indent=self.explicit_indent)
        return updated_node


class _MergeCreatedWiths(cst.CSTTransformer):
    """Join consecutive ``with torch.no_grad():`` blocks that fixes just created,
    so three fixed lines in a row become one block, not three."""

    def __init__(self, created: set[int]) -> None:
        super().__init__()
        self.created = created

    def _merge(self, original: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        # Identity is checked on the original nodes: the transformer rebuilds the updated ones.
        merged: list[cst.BaseStatement] = []
        previous_created = False
        for before, after in zip(original, updated):
            created = id(before) in self.created
            previous = merged[-1] if merged else None
            if (
                created
                and previous_created
                and isinstance(previous, cst.With)
                and isinstance(after, cst.With)
                and not after.leading_lines
                and _code(previous.items[0].item) == _code(after.items[0].item)
                and isinstance(previous.body, cst.IndentedBlock)
                and isinstance(after.body, cst.IndentedBlock)
            ):
                merged[-1] = previous.with_changes(body=previous.body.with_changes(body=[*previous.body.body, *after.body.body]))
            else:
                merged.append(after)
                previous_created = created
        return merged

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._merge(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._merge(original_node.body, updated_node.body))


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _has_import(module: cst.Module, name: str) -> bool:
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        if alias.asname is None and isinstance(alias.name, cst.Name) and alias.name.value == name:
                            return True
    return False


def _is_docstring_or_future(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    return isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__"


def ensure_imports(module: cst.Module, names: Iterable[str]) -> cst.Module:
    """Add ``import NAME`` after the docstring / __future__ imports where missing."""
    body = list(module.body)
    for name in sorted(set(names)):
        if _has_import(module.with_changes(body=body), name):
            continue
        position = 0
        while position < len(body) and _is_docstring_or_future(body[position]):
            position += 1
        # Join an existing block of leading imports instead of splitting it.
        while position < len(body) and isinstance(body[position], cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in body[position].body):  # type: ignore[union-attr]
            position += 1
        body.insert(position, cst.SimpleStatementLine(body=[cst.Import(names=[cst.ImportAlias(name=cst.Name(name))])]))
    return module.with_changes(body=body)


def apply_fixes(module: cst.Module, chosen: list[RawFinding]) -> cst.Module:
    """``module`` with the chosen (non-overlapping) fixes applied, and the imports they need.

    Blocks a fix creates are indented by the module's default indent. When that
    holds a form feed (``"\f    "``: the file's first indented line starts with
    one), a nested block would repeat it, and Python resets the column at a form
    feed: the nested line would not be indented at all. So the existing blocks
    keep their indentation bytes written out, and new blocks get it without the
    form feed.
    """
    edits = {id(old): new for raw in chosen for old, new in raw.fix.edits}  # type: ignore[union-attr]
    indent = module.default_indent
    unusual = indent.strip(" \t") != ""
    module = module.visit(_Replace(edits, explicit_indent=indent if unusual else None))
    if unusual:
        module = module.with_changes(default_indent="".join(c for c in indent if c in " \t") or "    ")
    created = {id(new) for new in edits.values() if isinstance(new, cst.With)}
    if created:
        module = module.visit(_MergeCreatedWiths(created))
    return ensure_imports(module, [name for raw in chosen for name in raw.fix.imports])  # type: ignore[union-attr]


def fix_bytes(data: bytes, path: str, codes: Iterable[str], unsafe: bool = False, *, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FixOutcome:
    """Fix what can be fixed in ``data``; raises CannotCheck / FixFailed."""
    return fix_run(FileRun.from_bytes(data, path, codes, max_file_size=max_file_size, keep_bytes=True), unsafe)


def fix_run(run: FileRun, unsafe: bool = False) -> FixOutcome:
    """Fix what can be fixed in the file of ``run`` (built from bytes, ``keep_bytes``); raises CannotCheck / FixFailed.

    A file without fixable findings costs what checking it costs (one parse,
    one walk); a fixed file is parsed and analysed once more, from its new
    text, for the post-fix checks and the findings that remain.
    """
    assert run.data is not None and run.keep_bytes, "the fixer rewrites a file's own bytes"
    data, path = run.data, run.path
    run.check_syntax()  # the same refusals as checking (NUL bytes, undecodable, invalid Python)
    if not run.might_fire:
        return FixOutcome(path, data, data)
    current = run
    fixed_count = 0
    for _ in range(MAX_PASSES):
        chosen = _choose(current.fixable(unsafe))
        if not chosen:
            break
        current = current.edited(apply_fixes(current.module, chosen))
        fixed_count += len(chosen)
    else:
        raise FixFailed(f"fixes did not settle after {MAX_PASSES} passes; file left unchanged")
    if fixed_count == 0:
        return FixOutcome(path, data, data, 0, run.findings())
    fixed = current.module.bytes + _round_trip_loss(run, data)
    # Re-read the new text from scratch: what was built as a tree must mean the same once printed.
    recheck = FileRun(path, run.rules, data=fixed, max_file_size=None)
    try:
        new_text = recheck.text
    except CannotCheck as error:
        raise FixFailed(f"fixed code cannot be read back ({error}); file left unchanged") from None
    before, after = CompileLevel.of(run.text, path), CompileLevel.of(new_text, path)
    if not after.at_least(before):
        raise FixFailed(f"fixed code does not compile ({_compile_error(new_text, path)}); file left unchanged")
    try:
        remaining = recheck.findings()
        leftover = {raw.code for raw in recheck.fixable(unsafe)}
    except CannotCheck as error:
        raise FixFailed(f"fixed code cannot be re-checked ({error}); file left unchanged") from None
    if leftover:
        raise FixFailed(f"fixed code still has fixable {', '.join(sorted(leftover))} findings; file left unchanged")
    return FixOutcome(path, data, fixed, fixed_count, remaining)


def _round_trip_loss(run: FileRun, data: bytes) -> bytes:
    """LibCST must print the untouched file back byte for byte, or fixing would change other lines.

    It does not always (LibCST 1.9): it drops the final ``\r`` of a file with
    ``\r``-only line ends (returned here, to be put back), and a form feed in
    the indentation of a block's later line (such a file is left alone, with
    the line named).
    """
    printed = run.module.bytes
    if printed == data:
        return b""
    if data.startswith(printed) and data[len(printed):] in (b"\r", b"\n", b"\r\n"):
        return data[len(printed):]
    line = next((number for number, (old, new) in enumerate(zip(data.splitlines(), printed.splitlines()), start=1) if old != new), None)
    where = f" (line {line})" if line is not None else ""
    raise FixFailed(f"LibCST would not write this file back unchanged{where}, e.g. a form feed in indentation; file left unchanged")


def _compile_error(text: str, path: str) -> str:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return error.msg
    except (ValueError, RecursionError, MemoryError) as error:
        return f"{type(error).__name__}: {error}"
    return "unknown error"


@dataclass
class FileFixResult:
    """What ``--fix`` / ``--diff`` did to one file (picklable, for worker processes).

    When the file was not fixed (an error), ``remaining`` holds its findings as
    they stand, so they are still reported.
    """

    path: str
    remaining: list[Finding]
    fixed_count: int = 0
    diff: str = ""
    written: bool = False
    error: FileError | None = None


def _lines(text: str) -> list[str]:
    """Python's lines (``decode`` made every line end ``\n``); str.splitlines would also split at form feeds."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    import difflib

    old, new = _lines(decode(before)), _lines(decode(after))
    return "".join(difflib.unified_diff(old, new, fromfile=path, tofile=path))


def fix_file(path: Path, codes: Iterable[str], unsafe: bool, write: bool, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FileFixResult:
    """Fix one file (or notebook); with ``write`` write it (see fixes/write.py), else only compute the diff."""
    from torchcopy_lint.notebook import check_notebook, fix_notebook, is_notebook, notebook_diff

    name = str(path)
    notebook = is_notebook(name)
    data: bytes | None = None
    run: FileRun | None = None

    def as_they_stand() -> list[Finding]:
        """The file's findings, reported when nothing was written."""
        if notebook:
            return check_notebook(data, name, codes, max_file_size).findings if data is not None else []
        return run.findings() if run is not None else []

    try:
        data = read_source(path, None if notebook else max_file_size)  # a notebook's outputs may be large: its code is limited
        if notebook:
            outcome = fix_notebook(data, name, codes, unsafe)
        else:
            run = FileRun.from_bytes(data, name, codes, max_file_size=None, keep_bytes=True)
            outcome = fix_run(run, unsafe)
    except FixFailed as error:
        return _unfixed(name, error.reason, as_they_stand)
    except CannotCheck as error:
        return FileFixResult(name, [], error=file_error(name, error))
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        if os.environ.get("TORCHCOPY_LINT_DEBUG"):
            raise
        return _unfixed(name, f"internal error while fixing ({type(error).__name__}: {error}); file left unchanged", as_they_stand)
    result = FileFixResult(name, outcome.remaining, outcome.fixed_count)
    if outcome.changed:
        if write:
            try:
                write_fixed(path, outcome.fixed)
            except WriteRefused as error:
                return _unfixed(name, str(error), as_they_stand)
            result.written = True
        result.diff = (notebook_diff if notebook else unified_diff)(name, outcome.original, outcome.fixed)
    return result


def fix_source(data: bytes, name: str, codes: Iterable[str], unsafe: bool, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> tuple[FileFixResult, bytes]:
    """Fix text that is not a file (standard input): the result, and the bytes to print
    (the fixed source, or the original where it could not be fixed)."""
    run = FileRun.from_bytes(data, name, codes, max_file_size=max_file_size, keep_bytes=True)
    try:
        outcome = fix_run(run, unsafe)
    except FixFailed as error:
        return _unfixed(name, error.reason, run.findings), data
    except CannotCheck as error:
        return FileFixResult(name, [], error=file_error(name, error)), data
    except Exception as error:  # noqa: BLE001 - the source must still come back
        if os.environ.get("TORCHCOPY_LINT_DEBUG"):
            raise
        return _unfixed(name, f"internal error while fixing ({type(error).__name__}: {error})", run.findings), data
    diff = unified_diff(name, outcome.original, outcome.fixed) if outcome.changed else ""
    return FileFixResult(name, outcome.remaining, outcome.fixed_count, diff), outcome.fixed


def _unfixed(name: str, reason: str, findings: Callable[[], list[Finding]]) -> FileFixResult:
    """Nothing was written: report why, and the file's findings as they stand."""
    try:
        remaining = findings()
    except Exception:  # noqa: BLE001 - the reason line is reported either way
        remaining = []
    return FileFixResult(name, remaining, error=FileError(name, reason, action="fix"))


@dataclass(frozen=True)
class FixJob:
    path: Path
    codes: frozenset[str]
    unsafe: bool
    write: bool
    max_file_size: int | None = DEFAULT_MAX_FILE_SIZE


def _run_fix_job(job: FixJob) -> FileFixResult:
    return fix_file(job.path, job.codes, job.unsafe, job.write, job.max_file_size)


def fix_paths(jobs: list[FixJob], workers: int) -> list[FileFixResult]:
    from torchcopy_lint.parallel import map_parallel

    return map_parallel(_run_fix_job, jobs, workers)
