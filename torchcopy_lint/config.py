"""Settings from ``[tool.torchcopy-lint]`` in the nearest ``pyproject.toml``.

Command-line flags override the file. Keys (all optional)::

    [tool.torchcopy-lint]
    select = ["TCL0"]            # replaces the default set
    extend-select = ["TCL101"]   # adds opt-in rules
    ignore = ["TCL003"]
    exclude = ["generated/*"]    # replaces the built-in exclude list's extra part
    extend-exclude = ["legacy/"]
    per-file-ignores = { "tests/*" = ["TCL004"] }
    max-file-size = "4MB"        # larger files are reported as too large, not checked (0: no limit)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from torchcopy_lint.source import DEFAULT_MAX_FILE_SIZE, parse_size

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

TABLE = "torchcopy-lint"
KNOWN_KEYS = frozenset({"select", "extend-select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "max-file-size"})


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
    root: Path = field(default_factory=Path.cwd)  # where relative patterns start
    source: Path | None = None  # the pyproject.toml read, if any


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has our table."""
    start = start.resolve()
    directory = start if os.path.isdir(start) else start.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if os.path.isfile(candidate):  # False, not PermissionError, in a folder we may not search
            try:
                text = candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                # A broken file that mentions our table is ours: return it so that
                # load_settings reports the error instead of silently using defaults.
                if f"tool.{TABLE}" in text:
                    return candidate
                continue
            tool = data.get("tool", {})
            if isinstance(tool, dict) and TABLE in tool:
                return candidate
    return None


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


def load_settings(path: Path) -> Settings:
    """Read ``[tool.torchcopy-lint]`` from ``path``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
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
    return Settings(
        select=_strings(table["select"], "select", path) if "select" in table else None,
        extend_select=_strings(table.get("extend-select", []), "extend-select", path),
        ignore=_strings(table.get("ignore", []), "ignore", path),
        exclude=_strings(table.get("exclude", []), "exclude", path),
        extend_exclude=_strings(table.get("extend-exclude", []), "extend-exclude", path),
        per_file_ignores=tuple((pattern, _strings(codes, f"per-file-ignores[{pattern!r}]", path)) for pattern, codes in per_file.items()),
        max_file_size=_size(table.get("max-file-size", DEFAULT_MAX_FILE_SIZE), path),
        root=path.parent.resolve(),
        source=path,
    )
