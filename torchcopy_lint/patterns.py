"""Gitignore-style path patterns (``pathspec``), as ``exclude``, ``per-file-ignores`` and ``.gitignore`` use them.

A pattern without a slash (``build``, ``*.egg-info``, ``test_*.py``) matches a
name at any depth; one with a slash (``tests/*``, ``src/**/gen.py``,
``/top.py``) is anchored at the root; ``**`` crosses folders; a pattern that
matches a folder matches everything in it; ``!pattern`` re-includes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from fnmatch import translate
from functools import cached_property
from pathlib import Path

# A pattern of one name, with ``*`` and ``?`` at most (``build``, ``*.egg-info``): it matches
# a path where any component matches it (gitignore: a name at any depth, and all below a
# matching folder). Every other pattern goes to ``pathspec``.
_NAME_PATTERN = re.compile(r"[^/\\\[\]!#\s]+")
_WILDCARD = re.compile(r"[*?]")
_NOT_NAMES = frozenset({"", ".", ".."})


def lexical_absolute(path: Path | str) -> Path:
    """The absolute path without resolving links (``os.path.abspath``): the path as the user sees it."""
    return Path(os.path.abspath(path))


def relative_to_root(path: Path | str, root: Path) -> str:
    """``path`` relative to ``root`` in posix form, or as given (posix) when outside it.

    String operations, not ``PurePath.relative_to``: discovery asks this of every file and
    folder it walks, and pathlib's parsing was a third of a warm run's time."""
    absolute = os.path.abspath(path)
    top = str(root)
    if absolute == top:
        return "."
    prefix = top if top.endswith(os.sep) else top + os.sep
    if absolute.startswith(prefix):
        relative = absolute[len(prefix):]
    else:
        relative = os.fspath(path)
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


class PathPatterns:
    """Patterns read relative to ``root``."""

    def __init__(self, patterns: Iterable[str], root: Path) -> None:
        self.patterns = tuple(patterns)
        self.root = root
        # Only single names (the default excludes): matched per component, without pathspec.
        self._names: frozenset[str] | None = None
        self._wildcards: re.Pattern[str] | None = None
        if all(_NAME_PATTERN.fullmatch(pattern) for pattern in self.patterns):
            self._names = frozenset(pattern for pattern in self.patterns if not _WILDCARD.search(pattern))
            wildcards = [translate(pattern) for pattern in self.patterns if _WILDCARD.search(pattern)]
            self._wildcards = re.compile("|".join(wildcards)) if wildcards else None

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
        if self._names is not None:
            parts = set(relative.split("/")) - _NOT_NAMES
            if not self._names.isdisjoint(parts):
                return True
            wildcards = self._wildcards
            return True if wildcards is not None and any(wildcards.match(part) for part in parts) else None
        return self._spec.check_file(relative + "/" if is_dir else relative).include

    def matches(self, path: Path, *, is_dir: bool = False) -> bool:
        return self.check(path, is_dir=is_dir) is True
