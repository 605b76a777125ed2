"""Gitignore-style path patterns (``pathspec``), as ``exclude``, ``per-file-ignores`` and ``.gitignore`` use them.

A pattern without a slash (``build``, ``*.egg-info``, ``test_*.py``) matches a
name at any depth; one with a slash (``tests/*``, ``src/**/gen.py``,
``/top.py``) is anchored at the root; ``**`` crosses folders; a pattern that
matches a folder matches everything in it; ``!pattern`` re-includes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path


def lexical_absolute(path: Path | str) -> Path:
    """The absolute path without resolving links (``os.path.abspath``): the path as the user sees it."""
    return Path(os.path.abspath(path))


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in posix form, or as given (posix) when outside it."""
    try:
        return lexical_absolute(path).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


class PathPatterns:
    """Patterns read relative to ``root``."""

    def __init__(self, patterns: Iterable[str], root: Path) -> None:
        self.patterns = tuple(patterns)
        self.root = root

    @cached_property
    def _spec(self) -> "pathspec.GitIgnoreSpec":  # noqa: F821 - imported on first use
        # pathspec costs ~0.05 s to import; a run that checks named files never matches a pattern.
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(self.patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def check(self, path: Path, *, is_dir: bool = False) -> bool | None:
        """True: a pattern matches ``path``; False: a ``!pattern`` re-included it; None: no pattern says anything."""
        relative = relative_to_root(path, self.root)
        if relative in ("", "."):
            return None
        return self._spec.check_file(relative + "/" if is_dir else relative).include

    def matches(self, path: Path, *, is_dir: bool = False) -> bool:
        return self.check(path, is_dir=is_dir) is True
