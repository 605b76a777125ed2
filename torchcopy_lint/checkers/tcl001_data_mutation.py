"""TCL001 data-mutation: writes through ``.data`` (see rules/TCL001-data-mutation.md)."""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import code_of, subscripted
from torchcopy_lint.analysis.torch_api import is_inplace_method
from torchcopy_lint.analysis.tensors import MAYBE, YES
from torchcopy_lint.analysis.values import Grad
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.fixes.builders import current_statement, method_call, wrap_in_no_grad
from torchcopy_lint.fixes.model import SAFE, UNSAFE, Fix

# Trailing-underscore methods that change flags or placement, not values.
NON_VALUE_INPLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad_"})


def _data_owner(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X`` when ``expr`` is ``X.data`` or an item of it (``X.data[i]``)."""
    expr = subscripted(expr)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return expr.value
    return None


def _without_data(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``X.data[i]`` -> ``X[i]``; ``X.data`` -> ``X``."""
    if isinstance(expr, cst.Subscript):
        return expr.with_changes(value=_without_data(expr.value))
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return expr.value
    return expr


class DataMutation(Checker):
    code = "TCL001"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """A write through ``.data``: ``x.data.add_()``, ``x.data[i] = v``, ``x.data += v``, ``x.data = t``."""
        return "data" in facts.written or "data" in facts.stored_attributes

    def _owner_is_tensor(self, owner: cst.BaseExpression, inplace_call: bool) -> bool:
        if isinstance(owner, cst.Name) and owner.value in ("self", "cls"):
            return False  # ``self.data``: an attribute of an object, not Tensor.data
        kind = self.ctx.tensors.kind(owner)
        if kind is YES:
            return True
        # ``x.data.add_(...)``: a trailing-underscore method on ``.data`` is the
        # tensor API; accept an unknown owner in a file that uses torch.
        return inplace_call and kind is MAYBE and self.ctx.names.imports_torch

    def _fix(self, node: cst.CSTNode, statement: cst.BaseSmallStatement, applicability: str) -> Fix | None:
        """The same write on the tensor itself, under ``torch.no_grad()``.

        Already inside a no-grad region, dropping ``.data`` is enough; otherwise the
        statement is wrapped, which only works for a statement on its own line.
        """
        if self.ctx.grad.disabled:
            return Fix(applicability, ((node, statement),))
        line = current_statement(self.ctx, node)
        if line is None:
            return None
        wrapped, imports = wrap_in_no_grad(self.ctx, line, statement)
        return Fix(applicability, ((line, wrapped),), imports)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and is_inplace_method(func.attr.value)) or func.attr.value in NON_VALUE_INPLACE:
            return
        owner = _data_owner(func.value)
        if owner is None or not self._owner_is_tensor(owner, inplace_call=True):
            return
        fixed_call = node.with_changes(func=func.with_changes(value=_without_data(func.value)))
        if self.ctx.grad.disabled:
            fix = Fix(SAFE, ((node, fixed_call),))
        else:
            line = current_statement(self.ctx, node)
            fix = None
            if line is not None:
                wrapped, imports = wrap_in_no_grad(self.ctx, line, cst.Expr(value=fixed_call))
                fix = Fix(SAFE, ((line, wrapped),), imports)
        self.report(node, fix=fix, instead=_no_grad(owner, f".{func.attr.value}(...)"))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        owner = _data_owner(node.target)
        if owner is not None and self._owner_is_tensor(owner, inplace_call=False):
            operator = code_of(node.operator).strip()
            fix = self._fix(node, node.with_changes(target=_without_data(node.target)), SAFE)
            self.report(node, fix=fix, instead=_no_grad(owner, f" {operator} ..."))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            owner = _data_owner(target.target)
            if owner is None or not (self._owner_is_tensor(owner, inplace_call=False) or self._rebound_from_itself(owner, node.value)):
                continue
            if isinstance(target.target, cst.Subscript):
                fix = None
                if len(node.targets) == 1:
                    fix = self._fix(node, node.with_changes(targets=[target.with_changes(target=_without_data(target.target))]), SAFE)
                self.report(node, fix=fix, instead=_no_grad(owner, "[...] = ..."))
            else:
                self._rebinding(node, owner)

    def _rebound_from_itself(self, owner: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """``mask.data = mask[:h, :w].contiguous()``: a tensor made from the owner itself shows
        that the owner is a tensor too (in a file that uses torch)."""
        if not self.ctx.names.imports_torch or self.ctx.tensors.kind(owner) is not MAYBE or self.ctx.tensors.kind(value) is not YES:
            return False
        owner_text = code_of(owner)
        return any(code_of(name) == owner_text for name in _names_and_attributes(value))

    def _rebinding(self, node: cst.Assign, owner: cst.BaseExpression) -> None:
        """``p.data = t``: ``p.copy_(t)`` only keeps ``p``'s shape, dtype and device, so it is
        the replacement (an unsafe fix) only where ``t`` is shown to keep them too."""
        if _same_layout(node.value, owner):
            fix = self._fix(node, cst.Expr(value=method_call(owner, "copy_", (cst.Arg(node.value),))), UNSAFE) if len(node.targets) == 1 else None
            self.report(node, fix=fix, instead=_no_grad(owner, ".copy_(...)"))
            return
        target = code_of(owner)
        if self.ctx.value(owner).grad is Grad.LEAF:
            instead = f"`torch.utils.swap_tensors({target}, torch.nn.Parameter(...))`, which keeps the parameter's identity (`.copy_` would keep its old dtype and shape)"
        elif isinstance(owner, cst.Name):
            # A local name may be one of several references (``mask = self.mask``): ``.data =``
            # replaced the tensor for all of them, rebinding the name replaces it for one.
            instead = f"`{target} = ...` and the same assignment wherever else this tensor is held (a module attribute, a container), which `.data =` changed too (`.copy_` would keep the old dtype and shape)"
        else:
            instead = f"`{target} = ...` (a new tensor; `.copy_` would keep the old dtype and shape)"
        self.report(node, instead=instead)


def _no_grad(owner: cst.BaseExpression, operation: str) -> str:
    return f'"with torch.no_grad(): {code_of(owner)}{operation}"'


# Methods that keep their receiver's shape, dtype and device.
_LAYOUT_KEEPING = frozenset("clone detach contiguous abs neg sign sqrt exp log sigmoid tanh relu clamp clip mul add sub div pow square lerp".split())


def _same_layout(value: cst.BaseExpression, owner: cst.BaseExpression) -> bool:
    """Whether ``value`` surely has ``owner``'s shape, dtype and device: ``owner`` (or its
    ``.data``) itself, elementwise methods of it, arithmetic with numbers."""
    owner_text = code_of(owner)
    if isinstance(value, (cst.Integer, cst.Float)):
        return False  # a number alone is no tensor
    pending = [value]
    saw_owner = False
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.Integer, cst.Float)):
            continue
        if isinstance(current, cst.UnaryOperation):
            pending.append(current.expression)
        elif isinstance(current, cst.BinaryOperation) and not isinstance(current.operator, cst.MatrixMultiply):
            pending.extend((current.left, current.right))
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in _LAYOUT_KEEPING:
            if any(not isinstance(argument.value, (cst.Integer, cst.Float, cst.UnaryOperation)) for argument in current.args):
                return False
            pending.append(current.func.value)
        elif isinstance(current, (cst.Name, cst.Attribute)) and code_of(current) in (owner_text, f"{owner_text}.data"):
            saw_owner = True
        else:
            return False
    return saw_owner


def _names_and_attributes(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    from torchcopy_lint.walker import iter_children

    found: list[cst.BaseExpression] = []
    pending: list[cst.CSTNode] = [expr]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.Name, cst.Attribute)):
            found.append(current)
        pending.extend(iter_children(current))
    return found

