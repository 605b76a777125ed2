"""Skip unchanged files: results keyed by path, size, mtime and settings.

One JSON file per (tool version and code, LibCST version, settings) under the cache directory,
mapping a file's absolute path to its size, modification time and findings.
An unchanged file is not even read on a warm run. The cache is written
atomically (temporary file + rename) so a killed run cannot corrupt it; a
corrupt or unreadable cache is ignored, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from torchcopy_lint import __version__
from torchcopy_lint.diagnostics import Finding
from torchcopy_lint.discovery import absolute

CACHE_DIR_NAME = ".torchcopy_lint_cache"


def implementation_stamp() -> str:
    """Size and mtime of the linter's own code and rule files.

    The version alone is not enough: an editable install (or a checkout under
    development) changes checkers without changing ``__version__``, and cached
    results from the old code would be served as if current.
    """
    from torchcopy_lint.catalogue import catalogue_dir

    package = Path(__file__).resolve().parent
    directories = [package]
    try:
        rules = catalogue_dir()
        if package not in rules.parents:
            directories.append(rules)
    except Exception:  # noqa: BLE001 - the catalogue's own errors are reported elsewhere
        pass
    stamps = []
    for directory in directories:
        for folder, subdirs, names in os.walk(directory):
            subdirs[:] = sorted(name for name in subdirs if name != "__pycache__")
            for name in sorted(names):
                if name.endswith((".py", ".md")):
                    try:
                        info = os.stat(os.path.join(folder, name))
                    except OSError:
                        continue
                    stamps.append(f"{os.path.relpath(os.path.join(folder, name), directory)}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("\n".join(stamps).encode()).hexdigest()


def _libcst_version() -> str:
    """A new LibCST may parse (and so report) differently: its results are not reused.

    Which LibCST is installed, told by its package directory and the size and time of its
    version file, without importing it or ``importlib.metadata`` (which scans every installed
    distribution: the largest cost of a run answered from the cache)."""
    from torchcopy_lint.lazy import origin_of

    origin = origin_of("libcst")
    if not origin:
        return "unknown"
    directory = os.path.dirname(origin)
    stamps = [directory]
    for name in ("_version.py", "__init__.py"):
        try:
            info = os.stat(os.path.join(directory, name))
        except OSError:
            continue
        stamps.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return "|".join(stamps)


class ResultCache:
    def __init__(self, directory: Path, key_parts: list[str]) -> None:
        digest = hashlib.sha256("\0".join([__version__, implementation_stamp(), _libcst_version(), *key_parts]).encode()).hexdigest()[:16]
        self.path = directory / f"{digest}.json"
        self._directory = directory
        self._entries: dict[str, list[object]] = {}
        self._dirty = False
        self._folders: dict[str, str] = {}  # a folder as named -> resolved (once per folder)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self._entries = data
        except (OSError, ValueError):
            pass

    def _key(self, path: Path) -> str:
        """The file's resolved absolute path, as ``absolute(path)``, resolving each folder once
        (``resolve()`` of every file was the largest cost of a warm run)."""
        folder, name = os.path.split(os.path.abspath(path))
        resolved = self._folders.get(folder)
        if resolved is None:
            resolved = self._folders[folder] = str(absolute(Path(folder)))
        key = os.path.join(resolved, name)
        return str(absolute(Path(key))) if os.path.islink(key) else key

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int] | None:
        try:
            info = path.stat()
        except OSError:
            return None
        return info.st_size, info.st_mtime_ns

    def get(self, path: Path) -> list[Finding] | None:
        """The cached findings of an unchanged file; None when there are none to trust.

        An entry of the wrong shape (valid JSON someone else wrote) is dropped, never fatal.
        """
        key = self._key(path)
        entry = self._entries.get(key)
        stamp = self._stamp(path)
        if entry is None or stamp is None:
            return None
        try:
            size, mtime, items = entry  # type: ignore[misc]
            if (size, mtime) != stamp:
                return None
            if not isinstance(items, list):
                raise ValueError("findings must be a list")
            return [Finding.from_dict(item) for item in items]
        except (TypeError, ValueError):
            del self._entries[key]
            self._dirty = True
            return None

    def put(self, path: Path, findings: list[Finding]) -> None:
        stamp = self._stamp(path)
        if stamp is not None:
            self._entries[self._key(path)] = [*stamp, [finding.to_dict() for finding in findings]]
            self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            gitignore = self._directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Created by torchcopy-lint\n*\n", encoding="utf-8")
            handle, temporary = tempfile.mkstemp(dir=self._directory, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(self._entries, stream)
            os.replace(temporary, self.path)
        except OSError:
            pass  # a cache that cannot be written only costs time
