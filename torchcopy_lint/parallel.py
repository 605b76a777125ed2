"""Many files: spread :class:`~torchcopy_lint.engine.FileRun` over worker processes, reusing cached results.

Workers never outlive the run: each asks the kernel for SIGTERM when its parent
dies (Linux ``PR_SET_PDEATHSIG``; elsewhere a watchdog thread notices the new
parent), ignores Ctrl-C (the parent stops them), and on SIGTERM removes the
temporary file it may be writing and exits at once. When the parent is
interrupted (SIGINT) or terminated (SIGTERM, turned into :class:`Stopped` by the
CLI), it sends SIGTERM to every worker before it exits.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from torchcopy_lint.cache import ResultCache
from torchcopy_lint.diagnostics import FileResult
from torchcopy_lint.engine import FileRun, file_error, freeze_heap_after_imports, rules_for
from torchcopy_lint.fixes.write import remove_temporaries
from torchcopy_lint.heap import CollectingBetween
from torchcopy_lint.source import DEFAULT_MAX_FILE_SIZE, CannotCheck, read_source
from torchcopy_lint.stopping import Stopped, raise_stopped  # noqa: F401 - re-exported

if TYPE_CHECKING:  # the pool's modules load only when a run uses one (not for a file or two)
    from concurrent.futures import ProcessPoolExecutor

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
    from torchcopy_lint.notebook import check_notebook_file, is_notebook  # here: a full cache hit never checks a file

    if is_notebook(str(path)):
        return check_notebook_file(path, codes, max_file_size)
    try:
        data = read_source(path, max_file_size)
    except CannotCheck as error:
        return FileResult(str(path), [], file_error(str(path), error))
    run = FileRun(str(path), rules_for(codes), data=data, max_file_size=max_file_size)
    try:
        return run.result()
    finally:
        run.release()  # the trees go now, not at a collection (see torchcopy_lint/heap.py)


def _run_job(job: Job) -> FileResult:
    return check_file(job.path, job.codes, job.max_file_size)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_PR_SET_PDEATHSIG = 1
_WATCHDOG_SECONDS = 0.5


def _stop_worker(signum: int, frame: object = None) -> None:
    remove_temporaries()
    os._exit(128 + signum)


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            _stop_worker(signal.SIGTERM)
        time.sleep(_WATCHDOG_SECONDS)


def _start_worker(parent: int) -> None:
    """Runs first in each worker process: die with the parent, leave Ctrl-C to it."""
    import ctypes
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    freeze_heap_after_imports()
    watched = os.getppid()  # the parent, or the fork server that started this worker on its behalf
    if watched != parent and parent != 0 and not _alive(parent):
        _stop_worker(signal.SIGTERM)  # the parent died before this worker got going
    threading.Thread(target=_watch_parent, args=(watched,), name="torchcopy-lint-watchdog", daemon=True).start()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (killed, not yet reaped by its own parent) does not:
    a worker forked just before ``kill -9`` of the CLI must not take it for alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (not Linux): ``kill(pid, 0)`` is all there is


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """SIGTERM every worker (each removes its temporary file), then drop the queued work."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public API before Python 3.14
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.join(timeout=5)
        except (OSError, ValueError, AssertionError, AttributeError):
            pass


def map_parallel(function: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[function(item) for item in items]``, over worker processes when it pays off."""
    function = CollectingBetween(function)
    if workers > 1 and len(items) >= 2 * workers:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(os.getpid(),))
        try:
            results = list(pool.map(function, items, chunksize=max(1, min(16, len(items) // (workers * 8)))))
        except BaseException:  # KeyboardInterrupt, Stopped, a broken pool: no worker may go on alone
            _terminate_workers(pool)
            raise
        pool.shutdown(wait=True)
        return results
    return [function(item) for item in items]


def check_paths(jobs_list: Sequence[Job], workers: int, caches: Sequence[ResultCache | None] | None = None) -> list[FileResult]:
    """Check every job, in parallel when it pays off, reusing cached results.

    ``caches[i]`` is job i's cache (None: not cached). A cached finding is
    reported under the path this run named, whatever path stored it.
    """
    cache_of = list(caches) if caches is not None else [None] * len(jobs_list)
    results: list[FileResult | None] = [None] * len(jobs_list)
    pending: list[int] = []
    for index, job in enumerate(jobs_list):
        cache = cache_of[index]
        cached = cache.get(job.path) if cache is not None else None
        if cached is not None:
            name = str(job.path)
            results[index] = FileResult(name, [replace(finding, path=name) for finding in cached], cached=True)
        else:
            pending.append(index)
    fresh = map_parallel(_run_job, [jobs_list[index] for index in pending], workers)
    for index, result in zip(pending, fresh):
        results[index] = result
        cache = cache_of[index]
        if cache is not None and result.error is None and not result.warnings:  # warnings must show on every run
            cache.put(jobs_list[index].path, result.findings)
    for cache in {id(cache): cache for cache in cache_of if cache is not None}.values():
        cache.save()
    return [result for result in results if result is not None]
