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
import stat
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


def absolute(path: Path) -> Path:
    """``path.resolve()``, or the lexical absolute path where resolving fails.

    ``resolve()`` raises RuntimeError (3.11, 3.12) or OSError (3.13+) on a
    symbolic link loop; such a path must still get its one-line error later.
    """
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in posix form, or as given when outside it."""
    try:
        return absolute(path).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _matches(path: Path, patterns: Iterable[str], root: Path) -> bool:
    relative = relative_to_root(path, root)
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*"):
            return True
    return False


def matches_exclude(path: Path, patterns: Iterable[str], root: Path) -> bool:
    """Whether an exclude pattern matches ``path`` (its name or its path from ``root``)."""
    return _matches(path, patterns, root)


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

    def fail(path: str, error: OSError) -> None:
        key = os.path.normpath(path)
        if key not in seen:  # one line per path, even when named twice
            seen.add(key)
            errors.append(FileError(path, _reason(error)))

    for raw in paths:
        path = Path(raw)
        try:
            info = path.stat()
        except OSError as error:
            fail(raw, error)
            continue
        if not stat.S_ISDIR(info.st_mode):
            if not (force_exclude and _matches(path, patterns, root)):
                add(path)
            continue
        if force_exclude and _matches(path, patterns, root):
            continue
        for directory, subdirs, names in os.walk(path, onerror=lambda e: fail(e.filename or raw, e)):
            current = Path(directory)
            subdirs[:] = sorted(
                name
                for name in subdirs
                if not _matches(current / name, patterns, root)
                and not os.path.exists(current / name / "pyvenv.cfg")  # False, not an error, in an unreadable folder
            )
            for name in sorted(names):
                if name.endswith(".py"):
                    candidate = current / name
                    if not _matches(candidate, patterns, root):
                        try:
                            info = candidate.stat()  # a link loop or dangling link: report it here, once
                        except OSError as error:
                            fail(str(candidate), error)
                            continue
                        if not stat.S_ISREG(info.st_mode):
                            # A FIFO or socket named *.py would block the read forever.
                            # (Named explicitly it is read: `torchcopy-lint <(cmd)`.)
                            errors.append(FileError(str(candidate), "not a regular file"))
                            continue
                        add(candidate)
    return Discovery(files, errors)
