"""TCL007 leaf-inplace: in-place update of a leaf that requires grad, outside no_grad.

See rules/TCL007-leaf-inplace.md.
"""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import code_of, subscripted
from torchcopy_lint.analysis.torch_api import is_inplace_method
from torchcopy_lint.analysis.tensors import SWITCHED_ON, YES
from torchcopy_lint.catalogue import RuleSpec
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts, is_leaf_evidence
from torchcopy_lint.context import FileContext
from torchcopy_lint.fixes.builders import current_statement, wrap_in_no_grad
from torchcopy_lint.fixes.model import SAFE, Fix

# Trailing-underscore methods that change flags or placement, not values (allowed on a leaf).
NON_VALUE_INPLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "detach_"})


class LeafInplace(Checker):
    code = "TCL007"
    # Every finding needs leaf evidence, which needs one of these words.

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """An in-place write, outside any no_grad region, to something that may be a leaf,
        through the object itself (a method, ``+=``, an item assignment: what the checker
        judges; ``nn.init.zeros_(w)`` runs under no_grad itself), that changes values
        (not ``requires_grad_()``), to a tensor not read through ``.data``, ``.grad`` or
        ``.detach()`` on the spot (which never requires grad)."""
        writes = [write for write in facts.writes if not write.by_argument and not write.cut and write.method not in NON_VALUE_INPLACE]
        return facts.any_event(writes, is_leaf_evidence, with_grad=True)

    def __init__(self, ctx: FileContext, spec: RuleSpec) -> None:
        super().__init__(ctx, spec)
        # Per enclosing lambda: was grad off around it? (The shared analysis starts a
        # lambda with grad on; one inside no_grad is usually called right there.)
        self._lambda_outer: list[bool] = []

    def visit_Lambda(self, node: cst.Lambda) -> None:
        inherited = self._lambda_outer[-1] if self._lambda_outer else False
        self._lambda_outer.append(self.ctx.grad.outer_disabled or inherited)

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._lambda_outer.pop()

    def _grad_off(self) -> bool:
        if self.ctx.grad.disabled:
            return True
        # Inside a lambda (whose body cannot hold a with block or def): the mode around it.
        return bool(self._lambda_outer) and self._lambda_outer[-1] and isinstance(self.ctx.scopes.enclosing_function(), cst.Lambda)

    def _evidence(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> str | None:
        """Evidence that ``target`` is a leaf requiring grad, when it should be reported."""
        if self._grad_off():
            return None
        evidence = self.ctx.tensors.leaf_grad_evidence(target)
        if evidence is None and self.ctx.tensors.grad_switched_on(target):
            evidence = SWITCHED_ON  # ``img.requires_grad_(True)`` earlier, then ``img.clamp_(0, 1)``
        if evidence is None:
            return None
        if value is not None and evidence.startswith("a parameter (.") and _root_is_self(target):
            # ``self.weight += 0.1`` / ``self.weight[i] = w``: a module's own attribute may be a
            # plain number or list; only a tensor being written in shows it is a tensor.
            if self.ctx.tensors.kind(value) is not YES:
                return None
        return evidence

    def _fix(self, node: cst.CSTNode) -> Fix | None:
        """The statement, unchanged, inside ``with torch.no_grad():``.

        Safe: with grad recording on, the update raises (a leaf that requires grad, or a
        view of one, cannot be changed in place), so the fix changes behaviour only
        where the original failed. Only a statement on its own line can be wrapped; an
        update inside an expression, a comprehension or a lambda has no fix.
        """
        line = current_statement(self.ctx, node)
        if line is None:
            return None
        wrapped, imports = wrap_in_no_grad(self.ctx, line, line.body[0])
        return Fix(SAFE, ((line, wrapped),), imports)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if not is_inplace_method(method) or method in NON_VALUE_INPLACE:
            return
        evidence = self._evidence(func.value, None)
        if evidence is not None:
            self.report(node, fix=self._fix(node), target=code_of(func.value), operation=f".{method}(...)", evidence=evidence)

    def _written_evidence(self, written: cst.BaseExpression, value: cst.BaseExpression | None) -> str | None:
        """Evidence for what an index write changes: ``written`` (``params["w"]`` of
        ``params["w"][rows] *= f``, an item that is a parameter), else, index by index, what it
        is an item or a view of (``w`` of ``w[ids][0] = v``), whatever the index."""
        while True:
            evidence = self._evidence(written, value)
            if evidence is not None or not isinstance(written, cst.Subscript):
                return evidence
            written = written.value

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        evidence = self._written_evidence(target.value, node.value) if isinstance(target, cst.Subscript) else self._evidence(target, node.value)
        if evidence is not None:
            operator = code_of(node.operator).strip()
            self.report(node, fix=self._fix(node), target=code_of(node.target), operation=f" {operator} ...", evidence=evidence)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            item = target.target
            if not isinstance(item, cst.Subscript):
                continue
            # Any index, basic or advanced: ``w[mask] = v`` writes to ``w`` itself.
            evidence = self._written_evidence(item.value, node.value)
            if evidence is not None:
                self.report(node, fix=self._fix(node), target=code_of(item.value), operation="[...] = ...", evidence=evidence)
                return


def _root_is_self(expr: cst.BaseExpression) -> bool:
    expr = subscripted(expr)
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls")
