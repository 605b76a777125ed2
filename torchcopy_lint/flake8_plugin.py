"""flake8 plugin ``TCL``: a thin adapter over :func:`torchcopy_lint.engine.lint_source`.

flake8 picks the plugin kind from ``__init__``'s parameters: asking for
``tree`` makes this a tree plugin (run once per file, skipped on a syntax
error, which flake8 reports as E999); ``lines`` and ``filename`` are filled in
from flake8's file processor. The plugin runs every rule; flake8's
``select``/``ignore``/``extend-select`` and ``# noqa`` decide what is shown.
Opt-in rules (``default: off`` in the catalogue) go on flake8's default ignore
list, so they run only with ``--extend-select``.

Nothing here may raise: an exception in a plugin stops the whole flake8 run.
A file LibCST cannot parse yields nothing. torch is never imported.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from torchcopy_lint import __version__

LOG = logging.getLogger(__name__)


def _all_codes() -> tuple[list[str], list[str]]:
    """(every code, the opt-in codes) from the catalogue; empty when it cannot be read."""
    try:
        from torchcopy_lint.registry import all_rules

        rules = all_rules()
    except Exception:  # noqa: BLE001 - a broken install must not stop flake8
        LOG.warning("torchcopy-lint: cannot load the rule catalogue", exc_info=True)
        return [], []
    return list(rules), [code for code, rule in rules.items() if not rule.spec.default]


class TorchCopyLintPlugin:
    """Report torchcopy-lint findings as flake8 errors ``TCLnnn``."""

    name = "torchcopy-lint"
    version = __version__

    def __init__(self, tree: ast.AST | None = None, lines: Sequence[str] = (), filename: str = "stdin") -> None:
        del tree  # flake8 needs the parameter to run us once per parsed file; LibCST parses the text
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        opt_in = _all_codes()[1]
        if opt_in:
            option_manager.extend_default_ignore(opt_in)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            from torchcopy_lint.engine import lint_source

            codes = _all_codes()[0]
            text = "".join(self.lines)
            findings = lint_source(text, self.filename, codes, apply_noqa=False)
        except Exception:  # noqa: BLE001 - CannotCheck (LibCST rejects code ast accepts) or a bug
            LOG.debug("torchcopy-lint: cannot check %s", self.filename, exc_info=True)
            return
        for finding in findings:
            # Finding.column is 1-based; flake8 wants 0-based and adds 1 when printing.
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
