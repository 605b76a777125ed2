"""Apply fixes to a file safely.

Fixes are applied in passes until nothing more changes (at most MAX_PASSES);
within a pass, fixes whose edits overlap are deferred to the next pass, so they
never corrupt each other. Findings on ``# noqa`` lines are not fixed. The result
must parse, compile, and be free of the fixes just applied (re-linted); if any
check fails the file is left untouched and the failure reported. LibCST
round-trips the source exactly, so the encoding (libcst reads the bytes and the
coding cookie), newline style, trailing newline and every comment survive;
writing is atomic and keeps the file's permissions.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from torchcopy_lint.lazy import cst

from torchcopy_lint.context import RawFinding
from torchcopy_lint.diagnostics import Finding
from torchcopy_lint.engine import FileRun
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
    def __init__(self, edits: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self.edits.get(id(original_node), updated_node)


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
    """``module`` with the chosen (non-overlapping) fixes applied, and the imports they need."""
    edits = {id(old): new for raw in chosen for old, new in raw.fix.edits}  # type: ignore[union-attr]
    module = module.visit(_Replace(edits))
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
    fixed = current.module.bytes
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


def _compile_error(text: str, path: str) -> str:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return error.msg
    except (ValueError, RecursionError, MemoryError) as error:
        return f"{type(error).__name__}: {error}"
    return "unknown error"


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` via a temporary file in the same directory."""
    mode = stat.S_IMODE(path.stat().st_mode)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


@dataclass
class FileFixResult:
    """What ``--fix`` / ``--diff`` did to one file (picklable, for worker processes)."""

    path: str
    remaining: list[Finding]
    fixed_count: int = 0
    diff: str = ""
    written: bool = False
    error: str | None = None


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    import difflib

    old = decode(before).splitlines(keepends=True)
    new = decode(after).splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=path, tofile=path))


def fix_file(path: Path, codes: Iterable[str], unsafe: bool, write: bool, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FileFixResult:
    """Fix one file; with ``write`` replace it atomically, else only compute the diff."""
    from torchcopy_lint.notebook import fix_notebook, is_notebook, notebook_diff

    notebook = is_notebook(str(path))
    try:
        if notebook:
            data = read_source(path, None)
            outcome = fix_notebook(data, str(path), codes, unsafe)
        else:
            data = read_source(path, max_file_size)
            outcome = fix_bytes(data, str(path), codes, unsafe, max_file_size=max_file_size)
    except CannotCheck as error:
        return FileFixResult(str(path), [], error=str(error))
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        if os.environ.get("TORCHCOPY_LINT_DEBUG"):
            raise
        return FileFixResult(str(path), [], error=f"internal error while fixing ({type(error).__name__}: {error}); file left unchanged")
    result = FileFixResult(str(path), outcome.remaining, outcome.fixed_count)
    if outcome.changed:
        result.diff = (notebook_diff if notebook else unified_diff)(str(path), outcome.original, outcome.fixed)
        if write:
            try:
                write_atomically(path, outcome.fixed)
                result.written = True
            except OSError as error:
                result.error = f"cannot write the fixed file: {error.strerror or error}"
    return result


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
