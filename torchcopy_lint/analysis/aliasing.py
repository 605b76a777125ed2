"""Which expressions share storage with another tensor, and which statements write in place.

Structural helpers (no scope lookups): ``detached_view`` finds ``x`` in ``x.detach()``,
``x.data`` and views of them (``x.detach()[0]``, ``x.data.view(-1)``); ``inplace_write``
finds the tensor a statement writes to (``t.mul_(2)``, ``t += 1``, ``t[i] = v``).
Whether ``x`` is a tensor is the caller's question (see :mod:`.tensors`).
"""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import is_basic_index
from torchcopy_lint.analysis.naming import is_snapshot_name
from torchcopy_lint.analysis.torch_api import VIEW_ATTRIBUTES, VIEW_METHODS, writes_values

def strip_views(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` for ``x[0]``, ``x.view(-1)``, ``x.T``, ``x.t()[1:]`` ...: peel views off."""
    while True:
        if isinstance(expr, cst.Subscript) and is_basic_index(expr):
            expr = expr.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value in VIEW_ATTRIBUTES:
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in VIEW_METHODS:
            expr = expr.func.value
        else:
            return expr


def detached_view(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
    """``(x, "detach")`` for ``x.detach()`` (or a view of it), ``(x, "data")`` for
    ``x.data`` (or a view of it); else None. Both share ``x``'s storage."""
    base = strip_views(expr)
    if isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) and base.func.attr.value == "detach" and not base.args:
        return base.func.value, "detach"
    if isinstance(base, cst.Attribute) and base.attr.value == "data":
        return base.value, "data"
    return None


def written_tensor(target: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor whose storage a write to ``target`` changes: ``t`` for ``t[i]``,
    ``t.data[i]``, ``t.view(-1)``, ``t.data``; ``target`` itself otherwise."""
    while True:
        if isinstance(target, cst.Subscript):
            target = target.value
        elif isinstance(target, cst.Attribute) and target.attr.value in VIEW_ATTRIBUTES | {"data"}:
            target = target.value
        elif isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) and target.func.attr.value in VIEW_METHODS:
            target = target.func.value
        else:
            return target


def inplace_write(node: cst.CSTNode) -> tuple[cst.BaseExpression, str] | None:
    """``(written, operation)`` when ``node`` writes values in place: ``t.add_(1)`` (a Call),
    ``t += 1`` (an AugAssign), ``t[i] = v`` (an Assign to a subscript). ``written`` is the
    expression written to as it appears (``t``, ``t[i]``, ``t.data``); see :func:`written_tensor`."""
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and writes_values(func.attr.value):
            return func.value, f".{func.attr.value}(...)"
        return None
    if isinstance(node, cst.AugAssign):
        operator = node.operator
        symbol = type(operator).__name__
        text = {
            "AddAssign": "+=", "SubtractAssign": "-=", "MultiplyAssign": "*=", "DivideAssign": "/=",
            "FloorDivideAssign": "//=", "ModuloAssign": "%=", "PowerAssign": "**=", "MatrixMultiplyAssign": "@=",
            "BitAndAssign": "&=", "BitOrAssign": "|=", "BitXorAssign": "^=", "LeftShiftAssign": "<<=", "RightShiftAssign": ">>=",
        }.get(symbol, "op=")
        return node.target, f" {text} ..."
    if isinstance(node, cst.Assign):
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                return target.target, " = ..."
    return None

__all__ = ["detached_view", "inplace_write", "is_snapshot_name", "strip_views", "writes_values", "written_tensor"]
