"""Small, pure helpers over LibCST nodes that several checkers need."""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.torch_api import is_inplace_method


def method_call(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
    """``(receiver, method)`` for ``receiver.method(...)``, else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.value, expr.func.attr.value
    return None


def keyword_arg(call: cst.Call, name: str) -> cst.Arg | None:
    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value == name:
            return argument
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    return [argument for argument in call.args if argument.keyword is None and not argument.star]


def is_basic_index(subscript: cst.Subscript) -> bool:
    """``t[0]``, ``t[1:, -1]``, ``t[..., None]``: indexing that returns a view (a tensor,
    list or mask index copies)."""
    for element in subscript.slice:
        part = element.slice
        if isinstance(part, cst.Slice):
            continue
        value = part.value  # type: ignore[union-attr]
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
        if isinstance(value, (cst.Integer, cst.Ellipsis)) or (isinstance(value, cst.Name) and value.value == "None"):
            continue
        return False
    return True


def string_value(expr: cst.BaseExpression) -> str | None:
    """The value of a plain string literal (``"weight"``), else None."""
    if isinstance(expr, cst.SimpleString):
        text = expr.value
        quote = text[:1]
        if quote in ("'", '"') and "\\" not in text and text[:3] not in ('"""', "'''"):
            return text[1:-1]  # the usual case, without LibCST's ``ast.literal_eval`` (a parse per string)
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


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


def subscripted(expr: cst.BaseExpression) -> cst.BaseExpression:
    """What every index of ``expr`` is applied to: ``w`` of ``w[ids]``, ``self.fisher`` of
    ``self.fisher[n][0]``; ``expr`` itself when it is no subscript."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def constant_index(subscript: cst.Subscript) -> str | None:
    """The code of a subscript's one constant index (``"image"``, ``0``), else None."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    value = subscript.slice[0].slice.value
    return code_of(value) if isinstance(value, (cst.SimpleString, cst.Integer)) else None


def chain_root(expr: cst.BaseExpression, *, items: bool = False) -> cst.Name | None:
    """The name an attribute chain starts from (``self`` of ``self.net``); with ``items``, of
    an attribute and item chain too (``model`` of ``model.shared[0].weight``)."""
    chain = (cst.Attribute, cst.Subscript) if items else (cst.Attribute,)
    while isinstance(expr, chain):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) else None


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


def short_code(node: cst.CSTNode, limit: int = 60) -> str:
    """Source text of ``node`` on one line, shortened to ``limit`` characters for a message."""
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def writes_in_place(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` holds an in-place write to the plain name ``name``:
    ``name.add_(...)``, ``name[i] = v``, ``name += v`` or ``out=name`` (cheap, approximate)."""
    from torchcopy_lint.walker import iter_children

    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call):
            func = current.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name and is_inplace_method(func.attr.value):
                return True
            out = keyword_arg(current, "out")
            if out is not None and isinstance(out.value, cst.Name) and out.value.value == name:
                return True
        elif isinstance(current, cst.AugAssign) and isinstance(current.target, cst.Name) and current.target.value == name:
            return True
        elif isinstance(current, cst.Assign):
            for target in current.targets:
                inner = target.target
                if isinstance(inner, cst.Subscript) and isinstance(inner.value, cst.Name) and inner.value.value == name:
                    return True
        pending.extend(iter_children(current))
    return False


def is_true(expr: cst.BaseExpression | None) -> bool:
    """The literal ``True``."""
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_false(expr: cst.BaseExpression | None) -> bool:
    """The literal ``False``."""
    return isinstance(expr, cst.Name) and expr.value == "False"


def bool_literal(expr: cst.BaseExpression | None) -> bool | None:
    """``True`` or ``False`` for those literals, None for anything else."""
    return True if is_true(expr) else False if is_false(expr) else None


def target_names(target: cst.BaseExpression) -> list[cst.Name]:
    """The Name nodes an assignment target binds (``a``, ``a, (b, c)``, ``*rest``; not
    attributes or subscripts)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []
