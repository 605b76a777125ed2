"""Many files: spread :class:`~torchcopy_lint.engine.FileRun` over worker processes, reusing cached results."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from torchcopy_lint.cache import ResultCache
from torchcopy_lint.diagnostics import FileResult
from torchcopy_lint.engine import FileRun, file_error, rules_for
from torchcopy_lint.notebook import check_notebook_file, is_notebook
from torchcopy_lint.source import DEFAULT_MAX_FILE_SIZE, CannotCheck, read_source

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Job:
    """One file to check: its path (as named in this run), its enabled codes, its size limit."""

    path: Path
    codes: frozenset[str]
    max_file_size: int | None = DEFAULT_MAX_FILE_SIZE


def check_file(path: Path, codes: frozenset[str], max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FileResult:
    """Read and check one file; every failure becomes a FileError."""
    if is_notebook(str(path)):
        return check_notebook_file(path, codes, max_file_size)
    try:
        data = read_source(path, max_file_size)
    except CannotCheck as error:
        return FileResult(str(path), [], file_error(str(path), error))
    return FileRun(str(path), rules_for(codes), data=data, max_file_size=max_file_size).result()


def _run_job(job: Job) -> FileResult:
    return check_file(job.path, job.codes, job.max_file_size)


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
        if cache is not None and result.error is None and not result.warnings:  # warnings must show on every run
            cache.put(jobs_list[index].path, result.findings)
    if cache is not None:
        cache.save()
    return [result for result in results if result is not None]
