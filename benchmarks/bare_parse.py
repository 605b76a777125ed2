"""Baseline for the benchmark: parse every ``.py`` file under the given paths with LibCST.

Nothing else: no pre-filter, no walk, no analysis. Files are read as bytes and
decoded the way torchcopy-lint does (BOM, coding cookie), then handed to
``libcst.parse_module``. With ``-j N`` the files are spread over a
ProcessPoolExecutor exactly like torchcopy-lint's engine does it (same
threshold, same ``pool.map`` chunk size), so the two are compared at the same
number of processes.

This script imports nothing from torchcopy_lint, so it measures LibCST alone::

    python benchmarks/bare_parse.py -j 2 /path/to/site-packages/torch

It prints one summary line and, with ``--json``, a JSON object on stdout.
Files are found the same way torchcopy-lint finds them in a directory: every
``*.py`` file, recursively, not following links to directories, skipping the
same default-excluded folder names and virtual environments.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import os
import sys
import time
import tokenize
from concurrent.futures import ProcessPoolExecutor

import libcst as cst

# Kept in step with torchcopy_lint.discovery.DEFAULT_EXCLUDES so both tools see the same files
# (run.py checks that the counts agree).
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".venv", "venv", ".tox", ".nox", ".eggs",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".torchcopy_lint_cache", "*.egg-info",
)
_RECURSION_LIMIT = 20_000  # as torchcopy_lint.engine


def find_files(paths: list[str]) -> list[str]:
    files: list[str] = []
    for raw in paths:
        if not os.path.isdir(raw):
            files.append(raw)
            continue
        for directory, subdirs, names in os.walk(raw):
            subdirs[:] = sorted(
                name
                for name in subdirs
                if not any(fnmatch.fnmatch(name, pattern) for pattern in DEFAULT_EXCLUDES)
                and not os.path.exists(os.path.join(directory, name, "pyvenv.cfg"))
            )
            for name in sorted(names):
                if name.endswith(".py") and not any(fnmatch.fnmatch(name, pattern) for pattern in DEFAULT_EXCLUDES):
                    files.append(os.path.join(directory, name))
    return files


def decode(data: bytes) -> str | None:
    """As torchcopy_lint.engine.decode, returning None where it would refuse the file."""
    if b"\x00" in data:
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def parse_file(path: str) -> tuple[int, int, str]:
    """(lines, bytes, outcome) where outcome is "ok", "undecodable", "syntax" or "recursion"."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError:
        return 0, 0, "unreadable"
    text = decode(data)
    if text is None:
        return 0, len(data), "undecodable"
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    try:
        cst.parse_module(text)
    except cst.ParserSyntaxError:
        return lines, len(data), "syntax"
    except RecursionError:
        return lines, len(data), "recursion"
    return lines, len(data), "ok"


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def parse_all(files: list[str], workers: int) -> list[tuple[int, int, str]]:
    # Same policy as torchcopy_lint.engine.check_paths.
    if workers > 1 and len(files) >= 2 * workers:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(parse_file, files, chunksize=max(1, min(16, len(files) // (workers * 8)))))
    return [parse_file(path) for path in files]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--files-from", metavar="LIST", help="also parse the files named in LIST, one per line")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores, like torchcopy-lint)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    workers = args.jobs or default_jobs()
    started = time.perf_counter()
    files = find_files(args.paths)
    if args.files_from:
        with open(args.files_from, encoding="utf-8") as listing:
            files.extend(line.rstrip("\n") for line in listing if line.strip())
    if not files:
        parser.error("no files to parse")
    outcomes = parse_all(files, workers)
    elapsed = time.perf_counter() - started
    counts: dict[str, int] = {}
    for _, _, outcome in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
    summary = {
        "files": len(files),
        "lines": sum(lines for lines, _, _ in outcomes),
        "bytes": sum(size for _, size, _ in outcomes),
        "outcomes": counts,
        "jobs": workers,
        "seconds": round(elapsed, 3),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"parsed {summary['files']} files, {summary['lines']} lines, with {workers} processes in {elapsed:.2f} s ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
