"""Where the project and each rule's page live on the web (SARIF, json, the editor server)."""

from __future__ import annotations

PROJECT_URL = "https://github.com/torchcopy-lint/torchcopy-lint"


def rule_url(file_name: str) -> str:
    """The rule's catalogue page, e.g. ``rule_url("TCL001-data-mutation.md")``."""
    return f"{PROJECT_URL}/blob/main/rules/{file_name}"
