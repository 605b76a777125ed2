"""The base class every rule's checker derives from.

A checker is a walk participant: it defines ``visit_<NodeType>`` and/or
``leave_<NodeType>`` methods (LibCST node class names) and calls
:meth:`Checker.report`. It reads shared facts from ``self.ctx`` (the semantic model
through :meth:`FileContext.value`, grad mode, flow) and never re-derives them.

A decision that needs more than the node at hand (the rest of the function, the
whole module) is registered with :meth:`Checker.defer` and runs once the walk is
complete; it reports with the ``top`` statement it recorded during the walk.

``triggers`` lists substrings of which at least one must occur in a file for
the rule to possibly fire; when no enabled rule's trigger occurs, the engine
skips parsing the file altogether.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from torchcopy_lint.lazy import cst

from torchcopy_lint.catalogue import RuleSpec
from torchcopy_lint.context import FileContext
from torchcopy_lint.fixes.model import Fix


class Checker:
    code: ClassVar[str]
    triggers: ClassVar[tuple[str, ...]]

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
