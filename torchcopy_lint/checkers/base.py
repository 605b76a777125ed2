"""The base class every rule's checker derives from.

A checker is a walk participant: it defines ``visit_<NodeType>`` and/or
``leave_<NodeType>`` methods (LibCST node class names) and calls
:meth:`Checker.report`. It reads shared facts from ``self.ctx`` (the semantic model
through :meth:`FileContext.value`, grad mode, flow) and never re-derives them.

A decision that needs more than the node at hand (the rest of the function, the
whole module) is registered with :meth:`Checker.defer` and runs once the walk is
complete; it reports with the ``top`` statement it recorded during the walk.

:meth:`Checker.applies` is the rule's cheap necessary condition on the file's
:class:`~torchcopy_lint.screen.ScreenFacts` (read from Python's ``ast``, before
LibCST): a file where no enabled rule applies is never parsed by LibCST. It must
admit every file where the checker can report (tests/test_screen.py checks it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from torchcopy_lint.lazy import cst

from torchcopy_lint.catalogue import RuleSpec
from torchcopy_lint.context import FileContext
from torchcopy_lint.fixes.model import Fix
from torchcopy_lint.screen import ScreenFacts


class Checker:
    code: ClassVar[str]
    # Whether the rule reads what only LibCST's parse keeps (comments, whitespace): then the
    # file is never analysed on the tree built from ``ast`` (see FileRun.context).
    reads_source_layout: ClassVar[bool] = False

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """Whether this rule may report anything in a file with these facts (never False
        where it would report)."""
        raise NotImplementedError(f"{cls.__name__} declares no screen: define applies(facts)")

    def __init__(self, ctx: FileContext, spec: RuleSpec) -> None:
        self.ctx = ctx
        self.spec = spec

    def report(self, node: cst.CSTNode, fix: Fix | None = None, *, top: cst.CSTNode | None = None, **details: str) -> None:
        """Report ``node``; ``details`` fill the ``{placeholders}`` of the catalogue message
        (every placeholder, and nothing else: see :meth:`RuleSpec.format_message`).

        ``fix`` (see torchcopy_lint/fixes/) is what ``--fix`` may apply. A deferred decision
        passes ``top``, the :attr:`FileContext.top_statement` it recorded during the walk.
        """
        self.ctx.report(node, self.code, self.spec.format_message(details), fix, top=top)

    def defer(self, check: Callable[[], None]) -> None:
        """Run ``check`` when the whole module has been walked."""
        self.ctx.deferred.append(check)
