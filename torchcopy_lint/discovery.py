"""Which files to check: walk the given paths, skipping what should be skipped.

Directories are searched recursively for ``*.py`` files, never following
symbolic links to directories (so a link loop cannot trap the walk), and
skipping version-control folders, virtual environments (any folder holding a
``pyvenv.cfg``), build output, caches and the configured excludes. A file named
explicitly is always checked unless ``force_exclude`` is set (what pre-commit
needs, since it passes file names one by one).
"""

from __future__ import annotations

import errno
import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from torchcopy_lint.diagnostics import FileError

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".venv", "venv", ".tox", ".nox", ".eggs",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".torchcopy_lint_cache", "*.egg-info",
)


@dataclass
class Discovery:
    files: list[Path]
    errors: list[FileError]


def _matches(path: Path, patterns: Iterable[str], root: Path) -> bool:
    try:
        relative = path.resolve().relative_to(root).as_posix()
    except ValueError:
        relative = path.as_posix()
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*"):
            return True
    return False


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symbolic link loop"
    if error.errno == errno.ENOENT:
        return "no such file or directory"
    if error.errno == errno.EACCES:
        return "permission denied"
    return error.strerror or str(error)


def discover(paths: Iterable[str], excludes: Iterable[str], root: Path, force_exclude: bool = False) -> Discovery:
    patterns = tuple(excludes)
    files: list[Path] = []
    errors: list[FileError] = []
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normpath(str(path))
        if key not in seen:
            seen.add(key)
            files.append(path)

    for raw in paths:
        path = Path(raw)
        try:
            mode = path.stat()
        except OSError as error:
            errors.append(FileError(raw, _reason(error)))
            continue
        if not path.is_dir():
            if not (force_exclude and _matches(path, patterns, root)):
                add(path)
            continue
        if force_exclude and _matches(path, patterns, root):
            continue
        del mode
        for directory, subdirs, names in os.walk(path, onerror=lambda e: errors.append(FileError(e.filename or raw, _reason(e)))):
            current = Path(directory)
            subdirs[:] = sorted(
                name
                for name in subdirs
                if not _matches(current / name, patterns, root)
                and not (current / name / "pyvenv.cfg").exists()
            )
            for name in sorted(names):
                if name.endswith(".py"):
                    candidate = current / name
                    if not _matches(candidate, patterns, root):
                        add(candidate)
    return Discovery(files, errors)
