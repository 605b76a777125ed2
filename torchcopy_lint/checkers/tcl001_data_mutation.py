"""TCL001 data-mutation: writes through ``.data`` (see rules/TCL001-data-mutation.md)."""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of, is_inplace_method
from torchcopy_lint.analysis.tensors import MAYBE, YES
from torchcopy_lint.checkers.base import Checker


# Trailing-underscore methods that change flags or placement, not values.
NON_VALUE_INPLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad_"})


def _data_owner(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X`` when ``expr`` is ``X.data`` or an item of it (``X.data[i]``)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return expr.value
    return None


class DataMutation(Checker):
    code = "TCL001"
    triggers = (".data",)

    def _owner_is_tensor(self, owner: cst.BaseExpression, inplace_call: bool) -> bool:
        if isinstance(owner, cst.Name) and owner.value in ("self", "cls"):
            return False  # ``self.data``: an attribute of an object, not Tensor.data
        kind = self.ctx.tensors.kind(owner)
        if kind is YES:
            return True
        # ``x.data.add_(...)``: a trailing-underscore method on ``.data`` is the
        # tensor API; accept an unknown owner in a file that uses torch.
        return inplace_call and kind is MAYBE and self.ctx.names.imports_torch

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and is_inplace_method(func.attr.value)) or func.attr.value in NON_VALUE_INPLACE:
            return
        owner = _data_owner(func.value)
        if owner is not None and self._owner_is_tensor(owner, inplace_call=True):
            self.report(node, target=code_of(owner), operation=f".{func.attr.value}(...)")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        owner = _data_owner(node.target)
        if owner is not None and self._owner_is_tensor(owner, inplace_call=False):
            operator = code_of(node.operator).strip()
            self.report(node, target=code_of(owner), operation=f" {operator} ...")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            owner = _data_owner(target.target)
            if owner is None or not self._owner_is_tensor(owner, inplace_call=False):
                continue
            if isinstance(target.target, cst.Subscript):
                self.report(node, target=code_of(owner), operation="[...] = ...")
            else:
                self.report(node, target=code_of(owner), operation=".copy_(...)")
