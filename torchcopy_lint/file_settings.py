"""Which rules apply to one file: the selection of its settings less its per-file ignores.

Shared by the command line (for each file it checks, through
check_command.Selection) and the editor server (for each document it is sent,
with the pyproject.toml nearest to it, read afresh each time).
"""

from __future__ import annotations

from pathlib import Path

from torchcopy_lint.config import Configuration, Settings
from torchcopy_lint.registry import all_rules
from torchcopy_lint.selection import enabled_codes, without


def selected_codes(settings: Settings) -> frozenset[str]:
    """The codes ``select`` / ``extend-select`` / ``ignore`` turn on, before per-file ignores."""
    rules = all_rules()
    return enabled_codes({code: rule.spec.default for code, rule in rules.items()}, settings.select, settings.extend_select, settings.ignore)


def per_file_codes(path: str, codes: frozenset[str], settings: Settings) -> frozenset[str]:
    """``codes`` less those the settings' ``per-file-ignores`` turn off for ``path`` (gitignore-style patterns)."""
    ignored = settings.ignored_for(Path(path))
    return without(codes, ignored) if ignored else codes


def settings_for(path: Path) -> Settings:
    """The settings of the ``pyproject.toml`` nearest to ``path`` (defaults rooted at the
    current folder when there is none). Raises ConfigError for a broken one."""
    return Configuration().for_path(path)


def codes_for(path: Path, settings: Settings | None = None) -> frozenset[str]:
    settings = settings or settings_for(path)
    return per_file_codes(str(path), selected_codes(settings), settings)
