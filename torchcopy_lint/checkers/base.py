"""The base class every rule's checker derives from.

A checker is a walk participant: it defines ``visit_<NodeType>`` and/or
``leave_<NodeType>`` methods (LibCST node class names) and calls
:meth:`Checker.report`. It reads shared facts from ``self.ctx`` (scopes, torch
names, grad mode, tensor inference, flow) and never re-derives them.

``triggers`` lists substrings of which at least one must occur in a file for
the rule to possibly fire; when no enabled rule's trigger occurs, the engine
skips parsing the file altogether.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from torchcopy_lint.catalogue import RuleSpec
from torchcopy_lint.context import FileContext
from torchcopy_lint.fixes.model import Fix


class _Blank(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class Checker:
    code: ClassVar[str]
    triggers: ClassVar[tuple[str, ...]]

    def __init__(self, ctx: FileContext, spec: RuleSpec) -> None:
        self.ctx = ctx
        self.spec = spec

    def report(self, node: cst.CSTNode, fix: Fix | None = None, **details: str) -> None:
        """Report ``node``; ``details`` fill the ``{placeholders}`` of the catalogue message.

        ``fix`` (see torchcopy_lint/fixes/) is what ``--fix`` may apply.
        """
        message = self.spec.message.format_map(_Blank(details)) if details else self.spec.message
        self.ctx.report(node, self.code, message, fix)
