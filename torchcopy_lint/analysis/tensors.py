"""Is this expression a tensor, and does it require grad? Short answers from the model.

The semantic model (:mod:`.semantic`) computes a full :class:`~.values.Value`; most
checks need only three questions about it, asked at the walk's current point:

- :meth:`TensorFacts.kind`: ``YES`` a tensor the file shows to be one, ``NO`` surely
  something else, ``MAYBE`` (unknown, or a tensor only by its name: ``criterion(...)``);
  rules that would be noisy on unknowns fire only on ``YES``;
- :meth:`TensorFacts.grad_evidence`: why the expression requires grad ("an
  nn.Parameter", "a module output" ...), or None without evidence;
- :meth:`TensorFacts.leaf_grad_evidence`: the same, for leaves only (a parameter, a
  tensor made with ``requires_grad=True``, or a view of one).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis import torch_api as api
from torchcopy_lint.analysis.values import Grad, Kind, Value

if TYPE_CHECKING:
    from torchcopy_lint.context import FileContext


# Why a tensor is read as a leaf that requires grad when ``x.requires_grad_(True)`` (or
# ``x.requires_grad = True``) came earlier in the function (TensorFacts.grad_switched_on).
SWITCHED_ON = "a leaf switched to requires_grad=True"


class Tensorness(enum.Enum):
    NO = 0
    MAYBE = 1
    YES = 2


YES, MAYBE, NO = Tensorness.YES, Tensorness.MAYBE, Tensorness.NO


class TensorFacts:
    """The three questions, answered from ``ctx``'s model where the walk is."""

    def __init__(self, ctx: "FileContext") -> None:
        self._ctx = ctx

    def kind(self, expr: cst.BaseExpression) -> Tensorness:
        value = self._ctx.value(expr)
        if value.kind is Kind.TENSOR:
            return MAYBE if value.guessed else YES  # a guess from a name is no proof
        return MAYBE if value.kind is Kind.UNKNOWN else NO

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) is YES

    def tensor_list(self, expr: cst.BaseExpression) -> str | None:
        """How ``expr`` is a list of tensors, which ``torch.tensor`` and the legacy constructors
        turn into numbers one by one: "display" (``[a, b]``, nested displays too, every element
        a tensor), "built" (a list grown elsewhere whose elements are tensors, or a display
        holding one: ``[[t[i] for i in idx]]``), or None."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            return self._display_of_tensors(expr)
        value = self._ctx.value(expr)
        if value.kind is Kind.CONTAINER and value.element is not None and value.element.is_tensor:
            return "built"
        return None

    def _display_of_tensors(self, display: cst.List | cst.Tuple) -> str | None:
        if not display.elements:
            return None
        how = "display"
        for element in display.elements:
            if isinstance(element, cst.StarredElement):
                return None
            value = element.value
            if isinstance(value, (cst.List, cst.Tuple)):
                inner = self._display_of_tensors(value)
                if inner is None:
                    return None
                how = "built" if inner == "built" else how
                continue
            found = self._ctx.value(value)
            if found.is_tensor:
                continue
            if found.kind is Kind.CONTAINER and found.element is not None and found.element.is_tensor:
                how = "built"  # a comprehension of tensors inside the display
                continue
            return None
        return how

    def grad_evidence(self, expr: cst.BaseExpression) -> str | None:
        value = self._ctx.value(expr)
        if not value.requires_grad:
            return None
        return value.why or "a tensor that requires grad"

    def leaf_grad_evidence(self, expr: cst.BaseExpression) -> str | None:
        value = self._ctx.value(expr)
        if value.kind is not Kind.TENSOR or value.grad is not Grad.LEAF or self._switched_off(expr, value):
            return None
        return value.why or "a leaf that requires grad"

    def grad_switched_on(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr``'s ``requires_grad`` was switched on earlier in this function
        (``x.requires_grad_(True)``, ``x.requires_grad = True``) and it is not known to be
        anything but a tensor: a leaf that requires grad. Asked where it is cloned or written
        in place, which a module (the other owner of ``requires_grad_``) cannot be."""
        return self._ctx.value(expr).kind in (Kind.TENSOR, Kind.UNKNOWN) and self._ctx.switches.switched_on(expr)

    def grad_switched_off(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr``'s ``requires_grad`` was switched off earlier in this function: on
        itself (``w.requires_grad_(False)``) or, for a parameter of ``m.parameters()``, on its
        module (``m.requires_grad_(False)``)."""
        return self._switched_off(expr, self._ctx.value(expr))

    def _switched_off(self, expr: cst.BaseExpression, value: Value) -> bool:
        switches = self._ctx.switches
        if value.grad is Grad.LEAF:
            # ``m.requires_grad_(False)`` earlier here, or a module the file freezes for good
            # (``for p in self.base.parameters(): p.requires_grad_(False)`` in ``__init__``),
            # of a parameter of ``m.parameters()`` or ``m.weight``.
            module = value.owner if value.owner is not None else _parameter_owner(expr)
            while module is not None:  # the module, or one it belongs to (``self.teacher`` of ``self.teacher.head``)
                if switches.switched_off(module) or self._ctx.model.is_frozen(module):
                    return True
                module = module.value if isinstance(module, cst.Attribute) else None
        return switches.switched_off(expr)


def _parameter_owner(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``m`` for ``m.weight`` (a module's own parameter attribute), else None."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Attribute) and expr.attr.value in api.PARAMETER_ATTRIBUTES:
        return expr.value
    return None
