"""Which files to check: walk the given paths, skipping what should be skipped.

Folders are searched recursively for ``*.py`` files and notebooks (``*.ipynb``),
never following symbolic links to folders (so a link loop cannot trap the walk),
and skipping version-control folders, virtual environments (a folder holding
``pyvenv.cfg``), conda environments (a folder holding ``conda-meta/``), build
output, caches, what the governing configuration excludes, and (unless
``respect-gitignore = false``) what ``.gitignore`` and ``.ignore`` files exclude.
A file named explicitly is always checked unless ``force_exclude`` is set (what
pre-commit needs, since it passes file names one by one); ``.gitignore`` applies
to walked entries only.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from torchcopy_lint.config import DEFAULT_EXCLUDES, Settings
from torchcopy_lint.diagnostics import FileError
from torchcopy_lint.patterns import PathPatterns, lexical_absolute, relative_to_root

__all__ = ["DEFAULT_EXCLUDES", "Discovery", "IgnoreFiles", "absolute", "discover", "discover_plainly", "is_environment", "relative_to_root"]


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


def is_environment(folder: Path) -> bool:
    """A virtual environment (``pyvenv.cfg``) or a conda environment (``conda-meta/``).

    os.path's checks answer False, not PermissionError, inside a folder we may not search.
    """
    return os.path.exists(folder / "pyvenv.cfg") or os.path.isdir(folder / "conda-meta")


def _lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read().splitlines()
    except OSError:
        return []


class IgnoreFiles:
    """What ``.gitignore`` and ``.ignore`` files exclude, read as git and ripgrep read them.

    ``.gitignore`` counts inside a git repository only (with ``.git/info/exclude``
    at its root), ``.ignore`` everywhere; files in deeper folders win over
    shallower ones, and ``.ignore`` over ``.gitignore`` in the same folder.
    Each folder's files are read once. With ``floor``, ignore files above that
    folder are not read (a folder named on the command line that they exclude).
    """

    def __init__(self, floor: Path | None = None) -> None:
        self.floor = lexical_absolute(floor) if floor is not None else None
        self._repository: dict[Path, Path | None] = {}
        self._layers: dict[Path, tuple[PathPatterns, ...]] = {}
        self._layers_by_name: dict[str, tuple[PathPatterns, ...]] = {}  # the same, by folder name (no pathlib per file)

    def repository(self, folder: Path) -> Path | None:
        """The root of the git repository holding ``folder``, if any."""
        if folder not in self._repository:
            if os.path.exists(folder / ".git"):
                self._repository[folder] = folder
            else:
                self._repository[folder] = self.repository(folder.parent) if folder.parent != folder else None
        return self._repository[folder]

    def _own(self, folder: Path) -> PathPatterns | None:
        repository = self.repository(folder)
        lines = _lines(folder / ".git" / "info" / "exclude") if repository == folder else []
        if repository is not None:
            lines += _lines(folder / ".gitignore")
        lines += _lines(folder / ".ignore")
        lines = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
        return PathPatterns(lines, folder) if lines else None

    def layers(self, folder: Path) -> tuple[PathPatterns, ...]:
        """The ignore files that apply inside ``folder``, shallowest first."""
        found = self._layers.get(folder)
        if found is None:
            above = self.layers(folder.parent) if folder.parent != folder and folder != self.floor else ()
            own = self._own(folder)
            found = self._layers[folder] = (*above, own) if own is not None else above
        return found

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        folder = os.path.dirname(os.path.abspath(path))
        layers = self._layers_by_name.get(folder)
        if layers is None:
            layers = self._layers_by_name[folder] = self.layers(Path(folder))
        for patterns in reversed(layers):
            verdict = patterns.check(path, is_dir=is_dir)
            if verdict is not None:
                return verdict
        return False


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "symbolic link loop"
    if error.errno == errno.ENOENT:
        return "no such file or directory"
    if error.errno == errno.EACCES:
        return "permission denied"
    return error.strerror or str(error)


def discover(paths: Iterable[str], settings_for: Callable[[Path], Settings], force_exclude: bool = False) -> Discovery:
    """The ``*.py`` files under ``paths``, each folder walked with the settings that govern it."""
    files: list[Path] = []
    errors: list[FileError] = []
    seen: set[str] = set()
    top_ignores = ignore_files = IgnoreFiles()

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

    def skipped(path: Path, settings: Settings, is_dir: bool) -> bool:
        if settings.excluded.matches(path, is_dir=is_dir):
            return True
        return settings.respect_gitignore and ignore_files.ignored(path, is_dir=is_dir)  # the current walk's

    for raw in paths:
        path = Path(raw)
        try:
            info = path.stat()
        except OSError as error:
            fail(raw, error)
            continue
        is_dir = stat.S_ISDIR(info.st_mode)
        if force_exclude and settings_for(path).excluded.matches(path, is_dir=is_dir):
            continue
        if not is_dir:
            add(path)
            continue
        # A folder named explicitly is walked even where an ignore file above it excludes
        # it (`torchcopy-lint ~/.pyenv/versions/...`); what is inside still counts.
        ignore_files = IgnoreFiles(floor=path) if top_ignores.ignored(path, is_dir=True) else top_ignores
        for directory, subdirs, names in os.walk(path, onerror=lambda e: fail(e.filename or raw, e)):
            current = Path(directory)
            settings = settings_for(current)
            subdirs[:] = sorted(name for name in subdirs if not skipped(current / name, settings, True) and not is_environment(current / name))
            for name in sorted(names):
                if not name.endswith((".py", ".ipynb")):
                    continue
                candidate = current / name
                if skipped(candidate, settings, False):
                    continue
                try:
                    entry = candidate.stat()  # a link loop or dangling link: report it here, once
                except OSError as error:
                    fail(str(candidate), error)
                    continue
                if not stat.S_ISREG(entry.st_mode):
                    # A FIFO or socket named *.py would block the read forever.
                    # (Named explicitly it is read: `torchcopy-lint <(cmd)`.)
                    errors.append(FileError(str(candidate), "not a regular file"))
                    continue
                add(candidate)
    return Discovery(files, errors)


def discover_plainly(paths: Iterable[str], root: Path) -> Discovery:
    """The files a run with no configuration and no ignore files would check (benchmarks, corpora)."""
    settings = Settings(root=root, respect_gitignore=False)
    return discover(paths, lambda path: settings)
