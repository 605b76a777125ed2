"""The example the README's first command lints: the buggy script is flagged, the fixed one is clean."""

from __future__ import annotations

from conftest import REPO
from torchcopy_lint.engine import lint_source
from torchcopy_lint.registry import all_rules

DEFAULT = {code for code, rule in all_rules().items() if rule.spec.default}


def _codes(name: str) -> list[str]:
    path = REPO / "examples" / name
    return [finding.code for finding in lint_source(path.read_text(), str(path), DEFAULT)]


def test_buggy_example_shows_the_hazards() -> None:
    assert _codes("train_snapshot_bugs.py") == ["TCL003", "TCL009", "TCL009", "TCL004", "TCL001"]


def test_fixed_example_is_clean() -> None:
    assert _codes("train_snapshot_fixed.py") == []
