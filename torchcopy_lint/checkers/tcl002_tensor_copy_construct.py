"""TCL002 tensor-copy-construct: building a tensor from a tensor (see rules/TCL002-tensor-copy-construct.md)."""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import code_of, dotted_name, is_false, is_true, keyword_arg, positional_args, short_code
from torchcopy_lint.analysis.tensors import YES
from torchcopy_lint.analysis.torch_api import LEGACY_CONSTRUCTOR_NAMES, LEGACY_CONSTRUCTORS, LEGACY_DTYPES
from torchcopy_lint.analysis.values import Kind, element_of
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.fixes.builders import detach_clone, keep_parens, keyword, method_call, torch_attr
from torchcopy_lint.fixes.model import SAFE, UNSAFE, Fix

# Legacy typed constructors: ``torch.FloatTensor(t)`` returns an alias of ``t``.
LEGACY_TYPES = LEGACY_CONSTRUCTORS

EFFECT_COPY = "copies with a UserWarning and drops its autograd history"
EFFECT_LIST = "converts each tensor to a Python number (fails for tensors of more than one element) and drops autograd history"
EFFECT_ALIAS = "does not copy: it returns an alias sharing the tensor's storage (a typed constructor raises on a dtype or device mismatch)"
# Keywords of ``torch.tensor`` / ``Tensor.new_tensor`` that the fix can spell as methods.
_FIXABLE_KEYWORDS = frozenset({"data", "dtype", "device", "requires_grad", "pin_memory"})


def _short(node: cst.CSTNode, limit: int = 40) -> str:
    return short_code(node, limit)


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


# What a copy-construct call spells: ``torch.tensor``, ``x.new_tensor``, a legacy type.
_CONSTRUCTOR_NAMES = LEGACY_CONSTRUCTOR_NAMES | {"tensor", "new_tensor"}


class TensorCopyConstruct(Checker):
    code = "TCL002"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """``torch.tensor``, ``new_tensor`` or a legacy type called on something that is not a literal."""
        return not facts.called_with_data.isdisjoint(_CONSTRUCTOR_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.ctx.names.torch_qualname(node.func)
        if callee is None and isinstance(node.func, cst.Name):
            if self.ctx.model.is_builtin(node.func):
                if node.func.value == "map":
                    self._check_map(node)
                return
            partial = self._partial_of_tensor(node.func)
            if partial is not None:
                self._check_factory(node, partial)
                return
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

    def _partial_of_tensor(self, func: cst.Name) -> cst.Call | None:
        """``to_tensor = functools.partial(torch.tensor, dtype=...)``: the ``partial`` call, when
        ``func`` is bound only to one that binds keywords only (calling it calls torch.tensor)."""
        bindings = self.ctx.model.bindings_of(func)
        if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Call) or bindings[0].path:
            return None
        partial = bindings[0].value
        if self.ctx.names.qualname(partial.func) != "functools.partial" or len(positional_args(partial)) != 1:
            return None
        return partial if self.ctx.names.torch_qualname(partial.args[0].value) == "torch.tensor" else None

    def _check_factory(self, node: cst.Call, partial: cst.Call | None = None) -> None:
        """``partial``: the ``functools.partial(torch.tensor, ...)`` that ``node`` calls; its
        keywords are the options (no fix then: the call does not show them)."""
        data = self._data_arg(node)
        if data is None:
            return
        options = partial if partial is not None else node
        call = f"`{_short(node, 60)}`"
        value = self.ctx.value(data)
        if value.is_tensor:
            # Safe where the file shows a tensor; a tensor only by its name (``model(x)``
            # of a ``model`` the file does not type) may be something else.
            fix = self._fix(node, detach_clone(data), UNSAFE if value.guessed else SAFE) if partial is None else None
            self.report(node, fix=fix, call=f"{call} on a tensor", effect=EFFECT_COPY, instead=f"{_source_text(data)}.detach().clone(){self._options(options)}")
        else:
            self._check_tensor_list(node, data, self._options(options), fixable=partial is None)

    def _check_tensor_list(self, node: cst.Call, data: cst.BaseExpression, options: str, *, fixable: bool = True) -> None:
        """``torch.tensor([t1, t2])``, ``torch.FloatTensor(losses)`` of a list of tensors:
        each element becomes a Python number (``options``: the call's dtype and device, as
        methods of the stacked tensor)."""
        call = f"`{_short(node, 60)}`"
        how = self.ctx.tensors.tensor_list(data)
        if how == "display":
            assert isinstance(data, (cst.List, cst.Tuple))
            stacked = _stacked(data)
            stacked = stacked if len(stacked) <= 60 else "torch.stack([...])"
            # Unsafe: equal only for zero-dimensional elements of one dtype on the default
            # device (the stack stays on the elements' device; one-element vectors add a dimension).
            stack, imports = self._stack(data)
            fix = self._fix(node, method_call(stack, "detach"), UNSAFE, imports=imports) if fixable else None
            self.report(node, fix=fix, call=f"{call} on a list of tensors", effect=EFFECT_LIST, instead=f"{stacked}.detach(){options}")
        elif how == "built":
            # A list of tensors built elsewhere (appended in a loop, a comprehension): no fix,
            # the file does not show the list's shape.
            stacked = f"torch.stack({_short(data)})" if not isinstance(data, (cst.List, cst.Tuple)) else "torch.stack([...])"
            self.report(node, call=f"{call} on a list of tensors", effect=EFFECT_LIST, instead=f"{stacked}.detach(){options}")

    def _check_map(self, node: cst.Call) -> None:
        """``map(torch.tensor, xs)`` over tensors: each element copy-constructed."""
        positional = positional_args(node)
        if len(positional) != 2 or self.ctx.names.torch_qualname(positional[0].value) != "torch.tensor":
            return
        iterable = positional[1].value
        value = self.ctx.value(iterable)
        if value.kind is not Kind.TENSOR and element_of(value).is_tensor:
            self.report(node, call=f"`{_short(node, 60)}` over tensors", effect=EFFECT_COPY, instead=f"[t.detach().clone() for t in {_short(iterable)}]")

    # -- fixes -------------------------------------------------------------------
    def _fix(
        self, node: cst.Call, copy: cst.BaseExpression, applicability: str, like: cst.BaseExpression | None = None, imports: tuple[str, ...] = ()
    ) -> Fix | None:
        """``copy`` followed by the keywords as methods (see :meth:`_option_calls`), replacing ``node``."""
        fixed = self._option_calls(node, copy, like)
        if fixed is None:
            return None
        return Fix(applicability, ((node, keep_parens(node, fixed)),), imports)

    def _option_calls(self, node: cst.Call, expr: cst.BaseExpression, like: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """The CST twin of :meth:`_options`: ``expr.to(...).pin_memory().requires_grad_()``.

        None when the call has something the methods cannot say (another keyword, ``*args``,
        a second positional argument, a ``pin_memory=`` that is not a literal).
        """
        if len(positional_args(node)) + sum(1 for argument in node.args if argument.keyword is not None) != len(node.args):
            return None
        if len(positional_args(node)) > 1 or any(argument.keyword.value not in _FIXABLE_KEYWORDS for argument in node.args if argument.keyword is not None):
            return None
        given = {name: arg.value for name in ("dtype", "device") if (arg := keyword_arg(node, name)) is not None and not _is_none(arg.value)}
        if like is not None:
            if not given:
                expr = method_call(expr, "to", (cst.Arg(like),))
            else:
                given = {name: given.get(name) or cst.Attribute(value=like, attr=cst.Name(name)) for name in ("dtype", "device")}
        if given:
            expr = method_call(expr, "to", tuple(keyword(name, value) for name, value in given.items()))
        pin = keyword_arg(node, "pin_memory")
        if pin is not None:
            if is_true(pin.value):
                expr = method_call(expr, "pin_memory")  # before requires_grad_(): the result stays a leaf
            elif not is_false(pin.value):
                return None
        flag = keyword_arg(node, "requires_grad")
        if flag is not None and not is_false(flag.value):
            expr = method_call(expr, "requires_grad_", () if is_true(flag.value) else (cst.Arg(flag.value),))
        return expr

    def _stack(self, display: cst.List | cst.Tuple) -> tuple[cst.Call, tuple[str, ...]]:
        """``torch.stack([a, b])`` for ``[a, b]`` or ``(a, b)``; nested displays stack their rows first."""
        stack, imports = torch_attr(self.ctx, "stack")
        elements = [
            element.with_changes(value=self._stack(element.value)[0]) if isinstance(element.value, (cst.List, cst.Tuple)) else element
            for element in display.elements
        ]
        if elements:
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return cst.Call(func=stack, args=[cst.Arg(cst.List(elements=elements))]), imports

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
        pin = keyword_arg(node, "pin_memory")
        if pin is not None and is_true(pin.value):
            suffix += ".pin_memory()"
        flag = keyword_arg(node, "requires_grad")
        if flag is not None and not is_false(flag.value):
            suffix += ".requires_grad_()" if is_true(flag.value) else f".requires_grad_({code_of(flag.value)})"
        return suffix

    # -- torch.Tensor(t) / torch.FloatTensor(t) ------------------------------
    def _check_legacy(self, node: cst.Call) -> None:
        positional = positional_args(node)
        if len(positional) != 1 or len(node.args) != 1:
            return
        data = positional[0].value
        if self.ctx.tensors.kind(data) is YES:
            # Unsafe: an alias (writes reach ``data``, gradients flow back to it) becomes a copy.
            fix = Fix(UNSAFE, ((node, keep_parens(node, detach_clone(data))),))
            self.report(node, fix=fix, call=f"`{_short(node, 60)}` on a tensor", effect=EFFECT_ALIAS, instead=f"{_source_text(data)}.detach().clone()")
        else:
            # ``torch.FloatTensor(losses)``: the typed constructor's dtype, as the stack's ``.to()``.
            qualname = self.ctx.names.torch_qualname(node.func) or ""
            dtype = LEGACY_DTYPES.get(qualname.rsplit(".", 1)[-1].removesuffix("Tensor"))
            self._check_tensor_list(node, data, f".to({dtype})" if dtype else "", fixable=False)

    # -- x.new_tensor(t) ------------------------------------------------------
    def _check_new_tensor(self, node: cst.Call) -> None:
        assert isinstance(node.func, cst.Attribute)
        receiver = node.func.value
        data = self._data_arg(node)
        if data is None or not self.ctx.names.imports_torch:
            return
        owner = self.ctx.value(receiver)
        if owner.surely_not_tensor or owner.cls is not None:
            return  # another class's own ``new_tensor`` (an instance of a class of this file)
        like = _short(receiver)
        value = self.ctx.value(data)
        if not value.is_tensor:
            self._check_tensor_list(node, data, self._options(node, like=like), fixable=False)
            return
        # ``.to(x)`` evaluates ``x`` after ``t``: only a plain name or attribute chain is moved.
        # Unsafe when the file does not show ``x`` to be a tensor (another class's ``new_tensor``),
        # or shows ``t`` to be one only by its use (as ``torch.tensor`` does above).
        applicability = SAFE if self.ctx.tensors.kind(receiver) is YES and not value.guessed else UNSAFE
        fix = self._fix(node, detach_clone(data), applicability, like=receiver) if dotted_name(receiver) is not None else None
        self.report(node, fix=fix, call=f"`{_short(node, 60)}` on a tensor", effect=EFFECT_COPY, instead=f"{_source_text(data)}.detach().clone(){self._options(node, like=like)}")


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"
