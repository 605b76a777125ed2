"""Small, pure helpers over LibCST nodes that several checkers need."""

from __future__ import annotations

import libcst as cst


def method_call(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
    """``(receiver, method)`` for ``receiver.method(...)``, else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.value, expr.func.attr.value
    return None


def is_inplace_method(name: str) -> bool:
    """PyTorch's convention: a trailing underscore marks an in-place method."""
    return name.endswith("_") and not name.startswith("_") and name != "_"


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value == name:
            return argument
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    return [argument for argument in call.args if argument.keyword is None and not argument.star]


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """``"self.model.weight"`` for a pure Name/Attribute chain, else None."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def root_name(expr: cst.BaseExpression) -> str | None:
    """The variable at the root of an attribute/subscript/method chain."""
    while True:
        if isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            break
    return expr.value if isinstance(expr, cst.Name) else None


def code_of(node: cst.CSTNode) -> str:
    """Source text of an expression node (for messages)."""
    return cst.Module(body=[]).code_for_node(node)


def names_read(node: cst.CSTNode) -> set[str]:
    """Every plain name loaded anywhere inside ``node`` (cheap, approximate)."""
    from torchcopy_lint.walker import iter_children

    found: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        else:
            pending.extend(iter_children(current))
    return found
