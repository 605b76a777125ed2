"""Path patterns: the fast path for single-name patterns agrees with pathspec, and cache keys resolve links."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from torchcopy_lint.cache import ResultCache
from torchcopy_lint.config import DEFAULT_EXCLUDES
from torchcopy_lint.discovery import absolute
from torchcopy_lint.patterns import PathPatterns, relative_to_root

ROOT = Path("/project")

PATHS = [
    "/project/a.py", "/project/build/a.py", "/project/src/build", "/project/src/builder/a.py",
    "/project/pkg.egg-info/PKG-INFO", "/project/x/foo.egg-info", "/project/.venv/lib/a.py",
    "/project/test_1.py", "/project/tests/test_12.py", "/project/data/raw.py", "/project/.git",
    "/elsewhere/build/a.py", "/elsewhere/ok.py", "relative/dist/a.py", "./a.py", "../up/venv/a.py",
    "/project", "/project/", "/project/./nested/../build/a.py",
]
PATTERN_SETS = [DEFAULT_EXCLUDES, ("data",), ("test_?.py",), ("*.py",), ("*",), (".*",), ("build", "data", "*.egg-info")]


def pathspec_answer(patterns: PathPatterns, path: str, is_dir: bool) -> bool | None:
    slow = PathPatterns(patterns.patterns, patterns.root)
    slow._names = None  # force the pathspec route
    return slow.check(Path(path), is_dir=is_dir)


@pytest.mark.parametrize("patterns", PATTERN_SETS, ids=lambda p: ",".join(p)[:40])
def test_name_patterns_agree_with_pathspec(patterns: tuple[str, ...]) -> None:
    compiled = PathPatterns(patterns, ROOT)
    assert compiled._names is not None, "single-name patterns should take the fast path"
    for path, is_dir in itertools.product(PATHS, (False, True)):
        if path.startswith("../") and patterns == (".*",):
            # pathspec reads ``..`` as a name that ``.*`` matches, so ``../up/a.py`` (outside the
            # root, given as typed) was excluded: no file name is ``..``.
            assert compiled.check(Path(path), is_dir=is_dir) is None
            continue
        assert compiled.check(Path(path), is_dir=is_dir) == pathspec_answer(compiled, path, is_dir), (path, is_dir)


@pytest.mark.parametrize("pattern", ["src/build", "/top.py", "!keep.py", "**/gen.py", "build/", "[ab].py", "a\\*"])
def test_other_patterns_go_to_pathspec(pattern: str) -> None:
    assert PathPatterns([pattern], ROOT)._names is None


def test_relative_to_root() -> None:
    assert relative_to_root(Path("/project/src/a.py"), ROOT) == "src/a.py"
    assert relative_to_root("/project", ROOT) == "."
    assert relative_to_root(Path("/projectile/a.py"), ROOT) == "/projectile/a.py"  # a sibling, not inside
    assert relative_to_root(Path("/elsewhere/a.py"), ROOT) == "/elsewhere/a.py"


def test_cache_keys_are_resolved_paths(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("x = 1\n")
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    (real / "b.py").symlink_to(real / "a.py")
    cache = ResultCache(tmp_path / "cache", [])
    for path in (real / "a.py", tmp_path / "linked" / "a.py", real / "b.py", tmp_path / "linked" / "b.py", Path(os.path.relpath(real / "a.py"))):
        assert cache._key(path) == str(absolute(path)) == str((real / "a.py").resolve())
