"""Which rules apply to one file: the selection of its settings less its per-file ignores.

Shared by the command line (for each file it checks) and the editor server
(for each document it is sent, with the pyproject.toml nearest to it).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from torchcopy_lint.config import Settings, find_pyproject, load_settings
from torchcopy_lint.discovery import relative_to_root
from torchcopy_lint.registry import all_rules
from torchcopy_lint.selection import enabled_codes, without


def selected_codes(settings: Settings) -> frozenset[str]:
    """The codes ``select`` / ``extend-select`` / ``ignore`` turn on, before per-file ignores."""
    rules = all_rules()
    return enabled_codes({code: rule.spec.default for code, rule in rules.items()}, settings.select, settings.extend_select, settings.ignore)


def per_file_codes(path: str, codes: frozenset[str], settings: Settings) -> frozenset[str]:
    """``codes`` less those the settings' ``per-file-ignores`` turn off for ``path``."""
    if not settings.per_file_ignores:
        return codes
    candidate = Path(path)
    relative = relative_to_root(candidate, settings.root)
    for pattern, ignored in settings.per_file_ignores:
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(candidate.name, pattern):
            codes = without(codes, ignored)
    return codes


def settings_for(path: Path) -> Settings:
    """The settings of the ``pyproject.toml`` nearest to ``path`` (defaults rooted at its folder
    when there is none). Raises ConfigError for a broken one."""
    found = find_pyproject(path.parent if path.parent.exists() else Path.cwd())
    return load_settings(found) if found else Settings(root=path.parent.resolve())


def codes_for(path: Path, settings: Settings | None = None) -> frozenset[str]:
    settings = settings or settings_for(path)
    return per_file_codes(str(path), selected_codes(settings), settings)
