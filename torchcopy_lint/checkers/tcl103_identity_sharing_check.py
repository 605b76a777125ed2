"""TCL103 identity-sharing-check: ``a is b`` / ``id(a) == id(b)`` between tensors.

See rules/TCL103-identity-sharing-check.md.
"""

from __future__ import annotations

import re

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import code_of as _code_of, method_call
from torchcopy_lint.analysis.bindings import BindingKind
from torchcopy_lint.analysis.tensors import MAYBE, YES
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts

_CONSTANTS = frozenset({"None", "True", "False", "Ellipsis", "NotImplemented"})
_CONSTANT_NAME = re.compile(r"_*[A-Z][A-Z0-9_]*")
_MEMBER_ITERATORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})


def code_of(node: cst.CSTNode, limit: int = 40) -> str:
    """Source text of ``node`` on one line, shortened for a message."""
    text = " ".join(_code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class IdentitySharingCheck(Checker):
    code = "TCL103"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """An ``is`` comparison between two expressions, or ``id()``."""
        return facts.compares_identity or "id" in facts.called

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            right = target.comparator
            operator = target.operator
            if isinstance(operator, (cst.Is, cst.IsNot)):
                pair: tuple[cst.BaseExpression, cst.BaseExpression] | None = (left, right)
                spelled = "is not" if isinstance(operator, cst.IsNot) else "is"
            elif isinstance(operator, (cst.Equal, cst.NotEqual)):
                a, b = self._id_argument(left), self._id_argument(right)
                pair = (a, b) if a is not None and b is not None else None
                spelled = "!=" if isinstance(operator, cst.NotEqual) else "=="
            else:
                pair = None
            if pair is not None and self._both_tensors(*pair):
                self.report(node, comparison=f"{code_of(left)} {spelled} {code_of(right)}", left=code_of(pair[0]), right=code_of(pair[1]))
            left = right

    def _id_argument(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``x`` for the builtin ``id(x)``, else None."""
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "id"):
            return None
        if not self.ctx.model.is_builtin(expr.func) or len(expr.args) != 1 or expr.args[0].keyword is not None or expr.args[0].star:
            return None
        return expr.args[0].value

    def _is_sentinel(self, expr: cst.BaseExpression) -> bool:
        """``None``, ``_MISSING`` (a constant by its name) or a name bound to ``object()``."""
        if not isinstance(expr, cst.Name):
            return False
        if expr.value in _CONSTANTS or _CONSTANT_NAME.fullmatch(expr.value):
            return True
        values = [binding.value for binding in self.ctx.bindings_of(expr)]
        return bool(values) and all(_is_object_call(value) for value in values)

    def _is_member_lookup(self, expr: cst.BaseExpression) -> bool:
        """A loop variable over ``.parameters()`` / ``.named_buffers()`` ...: finding a module's own
        tensor by identity asks "which parameter is this", not whether memory is shared."""
        if not isinstance(expr, cst.Name):
            return False
        for binding in self.ctx.bindings_of(expr):
            if binding.kind in (BindingKind.LOOP_TARGET, BindingKind.COMPREHENSION_TARGET) and binding.value is not None:
                called = method_call(binding.value)
                if called is not None and called[1] in _MEMBER_ITERATORS:
                    return True
        return False

    def _both_tensors(self, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        if self._is_sentinel(a) or self._is_sentinel(b) or self._is_member_lookup(a) or self._is_member_lookup(b):
            return False
        kinds = {self.ctx.tensors.kind(a), self.ctx.tensors.kind(b)}
        if kinds == {YES}:
            return True
        return kinds == {YES, MAYBE} and self.ctx.names.imports_torch


def _is_object_call(value: cst.BaseExpression | None) -> bool:
    """``object()``: a sentinel."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "object" and not value.args
