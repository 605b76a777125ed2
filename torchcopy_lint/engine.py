"""Checking: read -> pre-filter -> parse once -> every rule in one walk -> noqa -> sort.

``lint_source`` checks one text (used by the CLI workers, the flake8 plugin,
the tests and ``verify``). ``check_paths`` spreads files over worker processes
and consults the result cache.
"""

from __future__ import annotations

import io
import os
import symtable
import sys
import tokenize
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import libcst as cst

from torchcopy_lint.cache import ResultCache
from torchcopy_lint.context import FileContext
from torchcopy_lint.diagnostics import FileError, FileResult, Finding
from torchcopy_lint.noqa import is_suppressed, suppressions
from torchcopy_lint.positions import locate
from torchcopy_lint.registry import Rule, all_rules
from torchcopy_lint.walker import Walker

_RECURSION_LIMIT = 20_000
T = TypeVar("T")
R = TypeVar("R")


class CannotCheck(Exception):
    """Raised with a one-line reason when a source cannot be checked."""


def _one_line(message: str) -> str:
    """Messages quote code, which can span lines (``(a +\n b).data``); a finding is one line."""
    return " ".join(part.strip() for part in message.splitlines()) if "\n" in message or "\r" in message else message


def _undecodable(encoding: str, data: bytes, error: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    return f"cannot decode as {encoding}: invalid byte 0x{data[error.start]:02x} at line {line}, column {column}"


def decode(data: bytes) -> str:
    """Bytes to text the way Python would read the file (BOM, coding cookie)."""
    if b"\x00" in data:
        raise CannotCheck("file contains NUL bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # detect_encoding also fails when the first two lines are not UTF-8 and
        # carry no declaration: say which byte, not "missing declaration".
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise CannotCheck(_undecodable("utf-8", data, bad)) from None
        raise CannotCheck(f"bad encoding declaration: {error.msg}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise CannotCheck(_undecodable(encoding, data, error)) from None
    except LookupError:
        raise CannotCheck(f"unknown encoding {encoding!r}") from None
    # Universal newlines, as Python reads source: a lone "\r" ends a line too
    # (line numbers are counted on "\n").
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _rules_for(codes: Iterable[str]) -> list[Rule]:
    rules = all_rules()
    return [rules[code] for code in sorted(codes) if code in rules]


def analyse(module: cst.Module, path: str, rules: Sequence[Rule]) -> FileContext:
    """Build the semantic model (one walk), then run the rules' checkers (a second walk)."""
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        ctx = FileContext(path, module)  # pass 1: the semantic model
        checkers = [rule.checker(ctx, rule.spec) for rule in rules]
        walker = Walker([*ctx.participants, *checkers])
        ctx.walker = walker
        walker.walk(module)  # pass 2: the checkers
        ctx.run_deferred()
    except RecursionError:
        raise CannotCheck("too deeply nested to analyse") from None
    return ctx


_PYTHON_RECURSION_LIMIT = 1000  # the interpreter's default: what `python file.py` accepts
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too complex", "parser stack overflow")


def _refuse_too_deep(text: str, path: str) -> None:
    """Refuse code nested deeper than Python itself accepts, before LibCST sees it.

    LibCST's native parser overflows its stack (a segmentation fault that kills
    the process and, in a worker, the whole run) or takes minutes on
    expressions nested a few thousand deep. Python's own parser rejects those
    with a SyntaxError or RecursionError at about a tenth of LibCST's cost.
    Other syntax errors are left to LibCST, which also knows syntax newer than
    the running interpreter.

    ``symtable.symtable`` runs the same tokenizer and parser as ``compile`` but
    builds no Python ``ast`` objects: half the cost of ``PyCF_ONLY_AST`` on
    torch's source (this check was 15% of LibCST's parse time with ``compile``),
    with the same refusals (same messages; the recursion thresholds agree to
    within one frame of call depth, which already varies with the caller).
    """
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_PYTHON_RECURSION_LIMIT)  # the walker raises it; Python's own check scales with it
    except RecursionError:
        pass  # called from deeper than that already: keep the current limit
    try:
        symtable.symtable(text, path, "exec")
    except SyntaxError as error:
        if any(reason in str(error.msg) for reason in _TOO_DEEP):
            raise CannotCheck(f"syntax error at line {error.lineno}: {error.msg}") from None
    except (RecursionError, MemoryError):
        raise CannotCheck("too deeply nested to parse") from None
    except ValueError:
        pass  # e.g. NUL bytes (already refused by decode); LibCST decides
    finally:
        sys.setrecursionlimit(limit)


def parse(text: str, path: str, source: bytes | None = None) -> cst.Module:
    """Parse once with LibCST (from ``source`` bytes when given, to keep their encoding).

    Raises CannotCheck with a one-line reason.
    """
    _refuse_too_deep(text, path)
    try:
        return cst.parse_module(source if source is not None else text)
    except cst.ParserSyntaxError as error:
        raise CannotCheck(f"syntax error at line {error.raw_line}, column {error.raw_column + 1}: {error.message.splitlines()[0] if error.message else 'invalid syntax'}") from None
    except RecursionError:
        raise CannotCheck("too deeply nested to parse") from None


def might_fire(text: str, rules: Sequence[Rule]) -> bool:
    """The pre-filter: does any rule's trigger substring occur in ``text``?"""
    return any(trigger in text for rule in rules for trigger in rule.checker.triggers)


def noqa_table(text: str) -> dict[int, frozenset[str] | None]:
    # Python's own line breaks only: str.splitlines() also splits at \f, \v, \x1c-\x1e,
    # \x85 and \u2028/9, which would shift every later noqa comment by a line.
    return suppressions(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def findings_of(ctx: FileContext, text: str, path: str, rules: Sequence[Rule], *, apply_noqa: bool = True) -> list[Finding]:
    """The analysed file's findings, positioned, noqa-filtered and sorted."""
    if not ctx.findings:
        return []
    spans = locate(ctx.module, [(raw.node, raw.statement_index) for raw in ctx.findings])
    noqa = noqa_table(text) if apply_noqa else {}
    names = {rule.code: rule.spec.name for rule in rules}
    findings = set()
    for raw in ctx.findings:
        line, column, end_line, end_column = spans[id(raw.node)]
        if is_suppressed(raw.code, line, noqa):
            continue
        fix = raw.fix.applicability if raw.fix is not None else None
        findings.add(Finding(path, line, column + 1, end_line, end_column + 1, raw.code, names[raw.code], _one_line(raw.message), fix))
    return sorted(findings)


def lint_source(text: str, path: str, codes: Iterable[str], *, apply_noqa: bool = True) -> list[Finding]:
    """All findings for ``text`` (already decoded), sorted by position.

    ``apply_noqa=False`` keeps findings on ``# noqa`` lines (the flake8 plugin:
    flake8 applies noqa itself and honours ``--disable-noqa``).
    Raises CannotCheck for a syntax error or an internal failure.
    """
    rules = _rules_for(codes)
    if not rules or not might_fire(text, rules):
        return []
    ctx = analyse(parse(text, path), path, rules)
    return findings_of(ctx, text, path, rules, apply_noqa=apply_noqa)


def check_bytes(data: bytes, path: str, codes: Iterable[str]) -> FileResult:
    """Check one file's bytes; every failure becomes a FileError, never an exception."""
    try:
        return FileResult(path, lint_source(decode(data), path, codes))
    except CannotCheck as error:
        return FileResult(path, [], FileError(path, str(error)))
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
        if os.environ.get("TORCHCOPY_LINT_DEBUG"):
            raise
        return FileResult(path, [], FileError(path, f"internal error ({type(error).__name__}: {error}); please report it"))


def check_file(path: Path, codes: Iterable[str]) -> FileResult:
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return FileResult(str(path), [], FileError(str(path), "is a directory"))
    except PermissionError:
        return FileResult(str(path), [], FileError(str(path), "permission denied"))
    except OSError as error:
        return FileResult(str(path), [], FileError(str(path), error.strerror or str(error)))
    return check_bytes(data, str(path), codes)


# -- many files -------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    path: Path
    codes: frozenset[str]


def _run_job(job: Job) -> FileResult:
    return check_file(job.path, job.codes)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def map_parallel(function: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[function(item) for item in items]``, over worker processes when it pays off."""
    if workers > 1 and len(items) >= 2 * workers:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(function, items, chunksize=max(1, min(16, len(items) // (workers * 8)))))
    return [function(item) for item in items]


def check_paths(jobs_list: Sequence[Job], workers: int, cache: ResultCache | None = None) -> list[FileResult]:
    """Check every job, in parallel when it pays off, reusing cached results."""
    results: list[FileResult | None] = [None] * len(jobs_list)
    pending: list[int] = []
    for index, job in enumerate(jobs_list):
        cached = cache.get(job.path) if cache is not None else None
        if cached is not None:
            results[index] = FileResult(str(job.path), cached, cached=True)
        else:
            pending.append(index)
    fresh = map_parallel(_run_job, [jobs_list[index] for index in pending], workers)
    for index, result in zip(pending, fresh):
        results[index] = result
        if cache is not None and result.error is None:
            cache.put(jobs_list[index].path, result.findings)
    if cache is not None:
        cache.save()
    return [result for result in results if result is not None]
