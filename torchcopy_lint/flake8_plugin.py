"""flake8 plugin ``TCL``: a thin adapter over :func:`torchcopy_lint.engine.lint_source`.

flake8 picks the plugin kind from ``__init__``'s parameters: asking for
``tree`` makes this a tree plugin (run once per file, skipped on a syntax
error, which flake8 reports as E999); ``lines`` and ``filename`` are filled in
from flake8's file processor.

Which rules run: exactly those flake8 will report (its ``select`` /
``extend-select`` / ``ignore`` / ``extend-ignore``, read once in
``parse_options``), and an opt-in rule (``default: off`` in the catalogue)
only when a selector names it more precisely than the plugin's prefix:
``select = TCL`` gives the default rules, ``extend-select = TCL1`` or
``TCL102`` adds opt-in ones. (flake8 alone would let any explicit selection,
or a plain ``ignore =`` that replaces its default-ignore list, switch them on.)
Opt-in codes also stay on flake8's default-ignore list.

flake8 applies ``# noqa`` itself (and ``--disable-noqa``); the file-level
``# torchcopy-lint: noqa`` comment, which flake8 does not know, is applied here.

A file the linter cannot check (LibCST rejects code ``ast`` accepted, nesting
too deep to analyse, an internal error) is reported as ``TCL000 cannot check:
reason`` at line 1, so it is visible in flake8's output and can be silenced
like any code (``extend-ignore = TCL000``). Nothing here may raise: an
exception in a plugin stops the whole flake8 run. torch is never imported.
"""

from __future__ import annotations

import argparse
import ast
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from torchcopy_lint import __version__

LOG = logging.getLogger(__name__)
PREFIX = "TCL"
CANNOT_CHECK = "TCL000"


def _catalogue() -> tuple[list[str], list[str]]:
    """(every code, the opt-in codes) from the catalogue; empty when it cannot be read."""
    try:
        from torchcopy_lint.registry import all_rules

        rules = all_rules()
    except Exception:  # noqa: BLE001 - a broken install must not stop flake8
        LOG.warning("torchcopy-lint: cannot load the rule catalogue", exc_info=True)
        return [], []
    return list(rules), [code for code, rule in rules.items() if not rule.spec.default]


def _names_precisely(code: str, selectors: Sequence[str]) -> bool:
    """Whether a selector picks ``code`` by more than the plugin's prefix (``TCL1``, ``TCL102``)."""
    return any(code.startswith(selector) and len(selector) > len(PREFIX) for selector in selectors)


def reported_codes(options: argparse.Namespace) -> tuple[frozenset[str], bool]:
    """(the rules to run, whether TCL000 is shown) under flake8's parsed ``options``."""
    codes, opt_in = _catalogue()
    explicit = [*(getattr(options, "select", None) or []), *(getattr(options, "extend_select", None) or [])]
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)

        def shown(code: str) -> bool:
            return engine.decision_for(code) is Decision.Selected

    except Exception:  # noqa: BLE001 - another flake8 version: run everything, flake8 still filters
        LOG.debug("torchcopy-lint: cannot read flake8's selection", exc_info=True)

        def shown(code: str) -> bool:
            return True

    run = frozenset(code for code in codes if shown(code) and (code not in opt_in or _names_precisely(code, explicit)))
    return run, shown(CANNOT_CHECK)


def _reason(error: Exception) -> str:
    try:
        from torchcopy_lint.engine import CannotCheck
    except Exception:  # noqa: BLE001 - the engine itself failed to import
        CannotCheck = ()  # type: ignore[assignment,misc]  # noqa: N806
    if isinstance(error, CannotCheck):
        return str(error)
    return f"internal error ({type(error).__name__}: {error}); please report it"


class TorchCopyLintPlugin:
    """Report torchcopy-lint findings as flake8 errors ``TCLnnn``."""

    name = "torchcopy-lint"
    version = __version__
    # Set by parse_options; before that (the plugin used outside flake8), the default rules.
    codes: frozenset[str] | None = None
    report_cannot_check = True
    apply_file_noqa = True

    def __init__(self, tree: ast.AST | None = None, lines: Sequence[str] = (), filename: str = "stdin") -> None:
        # flake8 needs the parameter to run us once per parsed file; its ast spares the engine a compile.
        self.tree = tree if isinstance(tree, ast.Module) else None
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        opt_in = _catalogue()[1]
        if opt_in:
            option_manager.extend_default_ignore(opt_in)

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.codes, cls.report_cannot_check = reported_codes(options)
        cls.apply_file_noqa = not getattr(options, "disable_noqa", False)

    @classmethod
    def _codes(cls) -> frozenset[str]:
        if cls.codes is not None:
            return cls.codes
        codes, opt_in = _catalogue()
        return frozenset(codes) - frozenset(opt_in)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            findings = self._findings()
        except Exception as error:  # noqa: BLE001 - CannotCheck (LibCST rejects code ast accepts) or a bug
            LOG.debug("torchcopy-lint: cannot check %s", self.filename, exc_info=True)
            if self.report_cannot_check:
                yield 1, 0, f"{CANNOT_CHECK} cannot check: {_reason(error)}", type(self)
            return
        for finding in findings:
            # Finding.column is 1-based; flake8 wants 0-based and adds 1 when printing.
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)

    def _findings(self) -> list[Any]:
        from torchcopy_lint.engine import lint_source

        codes = self._codes()
        if not codes:
            return []
        return lint_source("".join(self.lines), self.filename, codes, apply_noqa=False, tree=self.tree, file_noqa=self.apply_file_noqa)
