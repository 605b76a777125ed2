"""Settings from ``[tool.torchcopy-lint]`` in the nearest ``pyproject.toml``, per file, as ruff does.

Each file is checked with the settings of the nearest ``pyproject.toml`` above
it that has a ``[tool.torchcopy-lint]`` table (hierarchical: ``a/`` and ``b/``
may each have their own); command-line flags override it. ``--config FILE``
uses one file for everything, ``--isolated`` none. Keys (all optional)::

    [tool.torchcopy-lint]
    select = ["TCL0"]            # replaces the default set
    extend-select = ["TCL101"]   # adds opt-in rules
    ignore = ["TCL003"]
    exclude = ["generated/"]     # gitignore-style patterns, relative to this file's folder
    extend-exclude = ["legacy/**/old_*.py"]
    per-file-ignores = { "tests/**" = ["TCL004"] }
    max-file-size = "4MB"        # larger files are reported as too large, not checked (0: no limit)
    respect-gitignore = true     # skip what .gitignore / .ignore files exclude when walking folders
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from types import ModuleType

from torchcopy_lint.patterns import PathPatterns, lexical_absolute
from torchcopy_lint.source import DEFAULT_MAX_FILE_SIZE, parse_size



def _toml() -> ModuleType:
    """The TOML parser, imported when a file is read (not for ``--isolated`` runs)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10
        import tomli as tomllib
    return tomllib

TABLE = "torchcopy-lint"
MISSPELLED_TABLE = "torchcopy_lint"  # the import name; ignored, with a warning
KNOWN_KEYS = frozenset({"select", "extend-select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "max-file-size", "respect-gitignore"})
DEFAULT, COMMAND_LINE = "default", "command line"

# Always skipped when walking folders (whatever exclude says); gitignore-style patterns.
DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".venv", "venv", ".tox", ".nox", ".eggs",
    "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".torchcopy_lint_cache", "*.egg-info", ".ipynb_checkpoints",
)


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0 = no limit
    respect_gitignore: bool = True
    root: Path = field(default_factory=lambda: lexical_absolute(os.getcwd()))  # where relative patterns start
    source: Path | None = None  # the pyproject.toml read, if any
    # Where each setting came from (key -> "default" / a pyproject.toml / "command line"), for --show-settings.
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def origin(self, name: str) -> str:
        return self.origins.get(name, DEFAULT)

    @cached_property
    def excluded(self) -> PathPatterns:
        """The built-in excludes, then ``exclude`` and ``extend-exclude``."""
        return PathPatterns((*DEFAULT_EXCLUDES, *self.exclude, *self.extend_exclude), self.root)

    @cached_property
    def _per_file(self) -> tuple[tuple[PathPatterns, tuple[str, ...]], ...]:
        return tuple((PathPatterns([pattern], self.root), codes) for pattern, codes in self.per_file_ignores)

    def ignored_for(self, path: Path) -> tuple[str, ...]:
        """The code prefixes ``per-file-ignores`` turns off for ``path``."""
        return tuple(code for patterns, codes in self._per_file if patterns.matches(path) for code in codes)


SETTING_NAMES = tuple(item.name for item in fields(Settings) if item.name not in ("root", "source", "origins"))


def toml_key(name: str) -> str:
    return name.replace("_", "-")


@dataclass(frozen=True)
class Overrides:
    """What the command line sets; None leaves the file's value."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] | None = None
    max_file_size: int | None = None
    respect_gitignore: bool | None = None

    def apply(self, settings: Settings) -> Settings:
        changes: dict[str, object] = {}
        origins = dict(settings.origins)

        def merged(name: str) -> None:  # extend the file's list: both places count
            where = origins.get(name)
            origins[name] = f"{where}, {COMMAND_LINE}" if where and where != DEFAULT else COMMAND_LINE

        if self.select is not None:
            # ruff's rule: the highest-priority ``select`` starts the resolution, so a
            # command-line --select drops the file's extend-select and ignore.
            changes.update(select=self.select, extend_select=(), ignore=())
            origins.update(select=COMMAND_LINE, extend_select=COMMAND_LINE, ignore=COMMAND_LINE)
        for name in ("extend_select", "ignore", "extend_exclude"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = tuple(changes.get(name, getattr(settings, name))) + value  # type: ignore[arg-type]
                merged(name)
        for name in ("exclude", "max_file_size", "respect_gitignore"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = value
                origins[name] = COMMAND_LINE
        return replace(settings, **changes, origins=origins) if changes else settings  # type: ignore[arg-type]


def _strings(value: object, key: str, path: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: [tool.{TABLE}] {key} must be a list of strings")
    return tuple(value)


def _size(value: object, path: Path) -> int:
    try:
        return parse_size(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{path}: [tool.{TABLE}] max-file-size: {error}") from None


def _read_toml(path: Path) -> dict[str, object]:
    tomllib = _toml()
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


def load_settings(path: Path) -> Settings:
    """Read ``[tool.torchcopy-lint]`` from ``path``."""
    data = _read_toml(path)
    tool = data.get("tool", {})
    table = tool.get(TABLE, {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown option(s) in [tool.{TABLE}]: {', '.join(unknown)}")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] per-file-ignores must be a table of pattern = [codes]")
    respect_gitignore = table.get("respect-gitignore", True)
    if not isinstance(respect_gitignore, bool):
        raise ConfigError(f"{path}: [tool.{TABLE}] respect-gitignore must be true or false")
    values: dict[str, object] = {
        "select": _strings(table["select"], "select", path) if "select" in table else None,
        "extend_select": _strings(table.get("extend-select", []), "extend-select", path),
        "ignore": _strings(table.get("ignore", []), "ignore", path),
        "exclude": _strings(table.get("exclude", []), "exclude", path),
        "extend_exclude": _strings(table.get("extend-exclude", []), "extend-exclude", path),
        "per_file_ignores": tuple((pattern, _strings(codes, f"per-file-ignores[{pattern!r}]", path)) for pattern, codes in per_file.items()),
        "max_file_size": _size(table.get("max-file-size", DEFAULT_MAX_FILE_SIZE), path),
        "respect_gitignore": respect_gitignore,
    }
    origins = {name: str(path) for name in values if toml_key(name) in table}
    return Settings(**values, root=lexical_absolute(path).parent, source=path, origins=origins)  # type: ignore[arg-type]


def _has_our_table(path: Path, warn: Callable[[str], None]) -> bool:
    """Whether ``path`` (a pyproject.toml) configures torchcopy-lint; warns about the misspelled table."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    tomllib = _toml()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        # A broken file that mentions our table is ours: load_settings reports the
        # error instead of silently using defaults.
        return f"tool.{TABLE}" in text
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        return False
    if MISSPELLED_TABLE in tool:
        warn(f"{path}: [tool.{MISSPELLED_TABLE}] is ignored: the table is [tool.{TABLE}] (with a hyphen)")
    return TABLE in tool


def find_pyproject(start: Path, warn: Callable[[str], None] = lambda message: None) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has our table."""
    directory = lexical_absolute(start)
    if not os.path.isdir(directory):
        directory = directory.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if os.path.isfile(candidate) and _has_our_table(candidate, warn):  # isfile: False, not PermissionError
            return candidate
    return None


class Configuration:
    """The settings for each file: the nearest configuration above it, overridden by the command line.

    ``check`` validates each Settings once, when first loaded (unknown rule
    codes). Lookups are cached per folder, so a walk costs one ``stat`` per folder.
    """

    def __init__(
        self,
        overrides: Overrides = Overrides(),
        *,
        config_file: Path | None = None,
        isolated: bool = False,
        check: Callable[[Settings], None] = lambda settings: None,
        warn: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.overrides = overrides
        self._check = check
        self._warn = warn
        self._warned: set[str] = set()
        self._by_file: dict[Path, Settings] = {}
        self._by_folder: dict[Path, Settings] = {}
        self._fixed: Settings | None = None
        if isolated:
            self._fixed = self._settle(Settings())
        elif config_file is not None:
            self._fixed = self._settle(load_settings(config_file))
        self._default: Settings | None = None

    def _warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self._warn(message)

    def _settle(self, settings: Settings) -> Settings:
        settings = self.overrides.apply(settings)
        self._check(settings)
        return settings

    def for_path(self, path: Path | str) -> Settings:
        """The settings for a file (those of its folder) or a folder."""
        if self._fixed is not None:
            return self._fixed
        absolute = lexical_absolute(path)
        return self._for_folder(absolute if os.path.isdir(absolute) else absolute.parent)

    def _for_folder(self, folder: Path) -> Settings:
        settled = self._by_folder.get(folder)
        if settled is not None:
            return settled
        candidate = folder / "pyproject.toml"
        if os.path.isfile(candidate) and _has_our_table(candidate, self._warn_once):
            settled = self._by_file.get(candidate)
            if settled is None:
                settled = self._by_file[candidate] = self._settle(load_settings(candidate))
        elif folder.parent != folder:
            settled = self._for_folder(folder.parent)
        else:
            if self._default is None:
                self._default = self._settle(Settings())
            settled = self._default
        self._by_folder[folder] = settled
        return settled
