"""TCL102 clone-detach-order: ``x.clone().detach()`` (see rules/TCL102-clone-detach-order.md)."""

from __future__ import annotations

import re

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import short_code as code_of, method_call, positional_args, root_name
from torchcopy_lint.analysis.tensors import NO, YES
from torchcopy_lint.analysis.values import Grad, Kind
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.fixes.builders import detach_then_clone, keep_parens
from torchcopy_lint.fixes.model import SAFE, UNSAFE, Fix

# Fresh tensors from these torch functions do not require grad unless asked to.
_GRADIENT_NAME = re.compile(r"(^|_)grads?$")



class CloneDetachOrder(Checker):
    code = "TCL102"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """``detach()`` called on the result of ``clone()``."""
        return ("detach", "clone") in facts.chained or ("detach_", "clone") in facts.chained

    def visit_Call(self, node: cst.Call) -> None:
        outer = method_call(node)
        if outer is None or outer[1] not in ("detach", "detach_") or node.args:
            return
        inner = outer[0]
        if not isinstance(inner, cst.Call):
            return
        source = self._cloned(inner)
        if source is None:
            return
        if self.ctx.grad.disabled or self._never_requires_grad(source):
            return  # nothing is recorded: the order is moot
        kind = self.ctx.tensors.kind(source)
        if kind is NO or (kind is not YES and not self.ctx.names.imports_torch):
            return
        function_form = self._is_function_form(inner)
        fix = self._fix(node, inner, source, function_form, kind is YES)
        self.report(node, fix=fix, call=code_of(node), target=code_of(source), clone_args=_args_text(inner, skip_first=function_form))

    def _fix(self, node: cst.Call, clone: cst.Call, source: cst.BaseExpression, function_form: bool, known_tensor: bool) -> Fix:
        """``x.clone(args).detach()`` / ``torch.clone(x, args).detach()`` -> ``x.detach().clone(args)``.

        The same tensor either way; safe when ``x`` is a tensor (``torch.clone`` takes
        only tensors), unsafe when the file does not show it (another class's
        ``clone()`` may return a tensor while having no ``detach()`` itself).
        """
        fixed = detach_then_clone(clone, source, function_form)
        return Fix(SAFE if known_tensor or function_form else UNSAFE, ((node, keep_parens(node, fixed)),))

    def _never_requires_grad(self, source: cst.BaseExpression) -> bool:
        """A tensor the model shows cannot require grad (``x.data``, a detached copy, a
        gradient, a registered buffer, a factory tensor) or one named like a gradient:
        autograd records no clone."""
        value = self.ctx.value(source)
        if value.kind is Kind.TENSOR and value.grad is Grad.NO:
            return True
        name = root_name(source)
        return name is not None and _GRADIENT_NAME.search(name) is not None

    def _is_function_form(self, call: cst.Call) -> bool:
        return self.ctx.names.callee(call) == "torch.clone"

    def _cloned(self, call: cst.Call) -> cst.BaseExpression | None:
        """``x`` for ``x.clone(...)`` or ``torch.clone(x, ...)``, else None."""
        if self._is_function_form(call):
            positional = positional_args(call)
            return positional[0].value if positional else None
        inner = method_call(call)
        if inner is not None and inner[1] == "clone" and self.ctx.names.torch_qualname(inner[0]) is None:
            return inner[0]
        return None


def _args_text(call: cst.Call, skip_first: bool) -> str:
    arguments = list(call.args)
    if skip_first and arguments:
        arguments = arguments[1:]
    return ", ".join(code_of(argument.value) if argument.keyword is None else f"{argument.keyword.value}={code_of(argument.value)}" for argument in arguments)
