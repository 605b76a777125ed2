"""TCL102 clone-detach-order: ``x.clone().detach()`` (see rules/TCL102-clone-detach-order.md)."""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of as _code_of, method_call, positional_args
from torchcopy_lint.analysis.tensors import NO, YES
from torchcopy_lint.checkers.base import Checker


def code_of(node: cst.CSTNode, limit: int = 60) -> str:
    """Source text of ``node`` on one line, shortened for a message."""
    text = " ".join(_code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class CloneDetachOrder(Checker):
    code = "TCL102"
    triggers = ("clone(",)

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
        if self.ctx.grad.disabled:
            return  # nothing is recorded under no_grad / inference_mode: the order is moot
        kind = self.ctx.tensors.kind(source)
        if kind is NO or (kind is not YES and not self.ctx.names.imports_torch):
            return
        self.report(node, call=code_of(node), target=code_of(source), clone_args=_args_text(inner, skip_first=self._is_function_form(inner)))

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
