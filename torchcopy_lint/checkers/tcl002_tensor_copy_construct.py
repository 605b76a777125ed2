"""TCL002 tensor-copy-construct: building a tensor from a tensor (see rules/TCL002-tensor-copy-construct.md)."""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of, keyword_arg, positional_args
from torchcopy_lint.analysis.tensors import NO, YES
from torchcopy_lint.checkers.base import Checker

# Legacy typed constructors: ``torch.FloatTensor(t)`` returns an alias of ``t``.
LEGACY_TYPES = frozenset(
    f"{prefix}{kind}Tensor"
    for prefix in ("torch.", "torch.cuda.")
    for kind in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
) | {"torch.Tensor"}

EFFECT_COPY = "copies with a UserWarning and drops its autograd history"
EFFECT_LIST = "converts each tensor to a Python number (fails for tensors of more than one element) and drops autograd history"
EFFECT_ALIAS = "does not copy: it returns an alias sharing the tensor's storage (a typed constructor raises on a dtype or device mismatch)"


def _short(node: cst.BaseExpression, limit: int = 40) -> str:
    text = " ".join(code_of(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _stacked(display: cst.List | cst.Tuple) -> str:
    """``torch.stack([a, b])``; nested lists stack their rows first."""
    parts = [_stacked(element.value) if isinstance(element.value, (cst.List, cst.Tuple)) else _short(element.value, 20) for element in display.elements]
    return f"torch.stack([{', '.join(parts)}])"


def _source_text(node: cst.BaseExpression) -> str:
    """``t`` as the receiver of a method call: parenthesised unless it is atomic."""
    text = _short(node)
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or getattr(node, "lpar", None):
        return text
    return f"({text})"


class TensorCopyConstruct(Checker):
    code = "TCL002"
    triggers = ("tensor", "Tensor")

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.ctx.names.torch_qualname(node.func)
        if callee == "torch.tensor":
            self._check_factory(node)
        elif callee in LEGACY_TYPES or (callee is None and self.ctx.names.torch_qualname_candidates(node.func) & LEGACY_TYPES):
            self._check_legacy(node)  # also ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``
        elif callee is None and isinstance(node.func, cst.Attribute) and node.func.attr.value == "new_tensor":
            self._check_new_tensor(node)

    # -- torch.tensor(t) / torch.tensor([t1, t2]) ------------------------------
    def _data_arg(self, node: cst.Call) -> cst.BaseExpression | None:
        positional = positional_args(node)
        if positional:
            return positional[0].value
        keyword = keyword_arg(node, "data")
        return keyword.value if keyword is not None else None

    def _check_factory(self, node: cst.Call) -> None:
        data = self._data_arg(node)
        if data is None:
            return
        call = f"`{_short(node, 60)}`"
        if self.ctx.tensors.kind(data) is YES:
            self.report(node, call=f"{call} on a tensor", effect=EFFECT_COPY, instead=f"{_source_text(data)}.detach().clone(){self._options(node)}")
        elif isinstance(data, (cst.List, cst.Tuple)) and self._all_tensors(data):
            stacked = _stacked(data)
            stacked = stacked if len(stacked) <= 60 else "torch.stack([...])"
            self.report(node, call=f"{call} on a list of tensors", effect=EFFECT_LIST, instead=f"{stacked}.detach(){self._options(node)}")

    def _all_tensors(self, display: cst.List | cst.Tuple) -> bool:
        if not display.elements:
            return False
        for element in display.elements:
            if isinstance(element, cst.StarredElement):
                return False
            value = element.value
            if isinstance(value, (cst.List, cst.Tuple)):
                if not self._all_tensors(value):
                    return False
            elif self.ctx.tensors.kind(value) is not YES:
                return False
        return True

    def _options(self, node: cst.Call, like: str | None = None) -> str:
        """``.to(...)`` / ``.requires_grad_()`` / ``.pin_memory()`` equivalents of the keywords."""
        given = {name: code_of(arg.value) for name in ("dtype", "device") if (arg := keyword_arg(node, name)) is not None and not _is_none(arg.value)}
        suffix = ""
        if like is not None:
            # ``x.new_tensor(t)`` takes x's dtype and device unless told otherwise.
            if not given:
                suffix += f".to({like})"
            else:
                given = {name: given.get(name, f"{like}.{name}") for name in ("dtype", "device")}
        if given:
            suffix += f".to({', '.join(f'{name}={value}' for name, value in given.items())})"
        flag = keyword_arg(node, "requires_grad")
        if flag is not None and not _is_false(flag.value):
            suffix += ".requires_grad_()" if _is_true(flag.value) else f".requires_grad_({code_of(flag.value)})"
        pin = keyword_arg(node, "pin_memory")
        if pin is not None and _is_true(pin.value):
            suffix += ".pin_memory()"
        return suffix

    # -- torch.Tensor(t) / torch.FloatTensor(t) ------------------------------
    def _check_legacy(self, node: cst.Call) -> None:
        positional = positional_args(node)
        if len(positional) != 1 or len(node.args) != 1:
            return
        data = positional[0].value
        if self.ctx.tensors.kind(data) is YES:
            self.report(node, call=f"`{_short(node, 60)}` on a tensor", effect=EFFECT_ALIAS, instead=f"{_source_text(data)}.detach().clone()")

    # -- x.new_tensor(t) ------------------------------------------------------
    def _foreign_object(self, receiver: cst.BaseExpression) -> bool:
        """A receiver the file shows to be some other class's instance (its own ``new_tensor``)."""
        if not isinstance(receiver, cst.Name):
            return False
        binding = self.ctx.scopes.lookup(receiver.value)
        if binding is None:
            return False
        if binding.kind == "param" and binding.annotation is not None:
            return "Tensor" not in code_of(binding.annotation) and "Parameter" not in code_of(binding.annotation)
        if binding.kind == "assign" and isinstance(binding.value, cst.Call) and isinstance(binding.value.func, cst.Name):
            maker = self.ctx.scopes.lookup(binding.value.func.value)
            return maker is not None and maker.kind == "class"
        return False

    def _check_new_tensor(self, node: cst.Call) -> None:
        assert isinstance(node.func, cst.Attribute)
        receiver = node.func.value
        data = self._data_arg(node)
        if data is None or not self.ctx.names.imports_torch:
            return
        if self.ctx.tensors.kind(receiver) is NO or self._foreign_object(receiver) or self.ctx.tensors.kind(data) is not YES:
            return
        like = _short(receiver)
        self.report(node, call=f"`{_short(node, 60)}` on a tensor", effect=EFFECT_COPY, instead=f"{_source_text(data)}.detach().clone(){self._options(node, like=like)}")


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"
