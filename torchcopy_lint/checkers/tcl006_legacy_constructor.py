"""TCL006 legacy-constructor: ``torch.Tensor(3)``, ``torch.FloatTensor(data)`` ...

See rules/TCL006-legacy-constructor.md.
"""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.bindings import Binding, BindingKind, ScopeKind
from torchcopy_lint.analysis.cst_helpers import code_of, method_call, positional_args
from torchcopy_lint.analysis.torch_api import LEGACY_CONSTRUCTORS, LEGACY_DTYPES
from torchcopy_lint.analysis.values import Kind
from torchcopy_lint.analysis.torch_api import LEGACY_CONSTRUCTOR_NAMES as _LEGACY_NAMES
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.fixes.builders import append_args, keyword, torch_attr
from torchcopy_lint.fixes.model import SAFE, Fix

# Legacy type constructor -> the dtype it builds (None: the default dtype).
_DTYPES: dict[str, str | None] = {"Tensor": None, **{f"{kind}Tensor": dtype for kind, dtype in LEGACY_DTYPES.items()}}

_SIZE_BUILTINS = frozenset({"len", "int", "max", "min", "round", "abs", "sum"})
_DATA_BUILTINS = frozenset({"list", "tuple", "range", "map", "zip", "sorted", "reversed", "filter"})
_STORAGE_METHODS = frozenset({"storage", "untyped_storage", "_typed_storage", "_untyped_storage"})
_BUFFER_BUILTINS = frozenset({"bytes", "bytearray", "memoryview"})
_MAX_DEPTH = 4

# BUFFER: raw bytes, copied byte for byte by ByteTensor (data for the other types).
SIZES, DATA, UNKNOWN, SKIP, BUFFER = "sizes", "data", "sizes or data", "skip", "buffer"

# For the fix, stricter than the classification: what is certainly an int (a size) or
# certainly a list / tuple / array (data), whatever the runtime types turn out to be.
# ``arr.shape`` of a numpy array is a plain tuple (data to a legacy constructor), so
# ``.shape`` / ``.size()`` count only on a tensor; ``sum(xs, [])`` or ``max(lists)``
# may be a list, ``t.tolist()`` of a 0-d tensor a number, ``np.prod(...)`` a numpy scalar
# (sizes to a legacy constructor): none of those is fixed.
_INT_BUILTINS = frozenset({"len", "int"})
_LIST_BUILTINS = frozenset({"list", "tuple", "sorted", "range"})
_INT_OPERATORS = ("Add", "Subtract", "Multiply", "FloorDivide", "Modulo", "Power", "LeftShift", "RightShift")  # int op int is int


class LegacyConstructor(Checker):
    code = "TCL006"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """A legacy type (``torch.Tensor``, ``torch.FloatTensor`` ...) is called, perhaps through an alias."""
        return facts.calls_any(_LEGACY_NAMES)

    def visit_Call(self, node: cst.Call) -> None:
        legacy = sorted(name for name in self.ctx.names.torch_qualname_candidates(node.func) if name in LEGACY_CONSTRUCTORS)
        if not legacy:
            return
        positional = [argument for argument in node.args if argument.keyword is None and argument.star != "**"]
        if not positional:
            return  # ``torch.Tensor()``: an empty tensor, harmless
        if any(argument.star == "*" for argument in positional) or len(positional) > 1:
            what = SIZES
        else:
            value = positional[0].value
            if self.ctx.value(value).is_tensor or self.ctx.tensors.tensor_list(value):
                return  # a tensor, or a list of them: TCL002 tensor-copy-construct
            what = self._classify(value, 0)
        if what == BUFFER:
            if all(name.endswith(".ByteTensor") for name in legacy):
                return  # bytes to uint8: exact, and faster than torch.tensor(list(...))
            what = DATA
        if what == SKIP:
            return
        fix = self._fix(node, positional, what)
        self.report(node, fix=fix, callee=_describe(node.func, legacy), what=what, problem=_PROBLEMS[what], instead=_instead(legacy, what))

    # -- the fix ------------------------------------------------------------------
    def _fix(self, node: cst.Call, positional: list[cst.Arg], what: str) -> Fix | None:
        """Sizes -> ``torch.empty(sizes, dtype=..., device=...)``; data -> ``torch.tensor(data, dtype=...)``.

        The same memory or the same values and dtype, spelled as what they are (see the rule's
        *Fix safety*). Only for a constructor known for certain (not one branch of a conditional
        alias), arguments that are certainly sizes or certainly data, and no keyword but
        ``device=`` (on a CPU type).
        """
        callee = self.ctx.names.torch_qualname(node.func)
        if callee not in LEGACY_CONSTRUCTORS:
            return None
        cuda = callee.startswith("torch.cuda.")
        dtype = _DTYPES[callee.rsplit(".", 1)[1]]
        keywords = [argument for argument in node.args if argument.keyword is not None or argument.star == "**"]
        if any(argument.keyword is None or argument.keyword.value != "device" for argument in keywords) or (cuda and keywords):
            return None
        if what == SIZES and self._certain_sizes(positional):
            factory = "empty"
        elif what == DATA and len(positional) == 1 and not positional[0].star and self._certain_data(positional[0].value, 0):
            factory = "tensor"
        else:
            return None
        func, imports = torch_attr(self.ctx, factory)
        extra = []
        if dtype is not None:
            extra.append(keyword("dtype", torch_attr(self.ctx, dtype.split(".", 1)[1])[0]))
        elif factory == "tensor":
            # torch.tensor infers int64 from ints where torch.Tensor gives the default dtype.
            extra.append(keyword("dtype", cst.Call(func=torch_attr(self.ctx, "get_default_dtype")[0])))
        if cuda:
            extra.append(keyword("device", cst.SimpleString('"cuda"')))
        return Fix(SAFE, ((node, node.with_changes(func=func, args=append_args(node.args, extra))),), imports)

    def _certain_sizes(self, positional: list[cst.Arg]) -> bool:
        plain = [argument for argument in positional if not argument.star]
        if len(plain) != len(positional):
            # ``torch.Tensor(*shape)`` may be ``torch.Tensor([1, 2])``: only with a plain int beside it.
            return any(self._certain_int(argument.value, 0) for argument in plain)
        if len(plain) > 1:
            return True  # several positional arguments are sizes to a legacy constructor (or an error)
        return self._certain_int(plain[0].value, 0) or self._certain_size(plain[0].value)

    def _certain_int(self, expr: cst.BaseExpression, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.BinaryOperation) and type(expr.operator).__name__ in _INT_OPERATORS:
            return self._certain_int(expr.left, depth + 1) and self._certain_int(expr.right, depth + 1)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
            return len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)  # ``x.shape[0]``
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _INT_BUILTINS and self.ctx.model.is_builtin(expr.func):
                return True
            found = method_call(expr)
            if found is not None and (found[1] in ("dim", "numel") or (found[1] == "size" and expr.args)):
                return True
            return False
        return self._bound(expr, depth, self._certain_int)

    def _certain_size(self, expr: cst.BaseExpression) -> bool:
        """``torch.Size(...)``, or a tensor's ``.shape`` / ``.size()``."""
        if isinstance(expr, cst.Call) and self.ctx.names.qualname(expr.func) == "torch.Size":
            return True
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
            return self.ctx.value(expr.value).is_tensor
        found = method_call(expr)
        return found is not None and found[1] == "size" and not expr.args and self.ctx.value(found[0]).is_tensor  # type: ignore[attr-defined]

    def _certain_data(self, expr: cst.BaseExpression, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, (cst.List, cst.Tuple)):
            # Tensors inside are TCL002's business (torch.stack); numbers and nested lists only.
            return bool(expr.elements) and not any(self._holds_tensor(element.value) for element in expr.elements)
        if isinstance(expr, cst.ListComp):
            return True
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _LIST_BUILTINS and self.ctx.model.is_builtin(expr.func):
                return True
            positional = positional_args(expr)
            return (
                self.ctx.names.qualname(expr.func) in ("numpy.array", "numpy.asarray")
                and bool(positional)
                and isinstance(positional[0].value, (cst.List, cst.Tuple, cst.ListComp))
                and self._certain_data(positional[0].value, depth + 1)
            )
        if isinstance(expr, cst.Subscript) and all(isinstance(element.slice, cst.Slice) for element in expr.slice):
            return self._certain_data(expr.value, depth + 1)  # ``values[:2]``
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Add):
                return self._certain_data(expr.left, depth + 1) and self._certain_data(expr.right, depth + 1)
            if isinstance(expr.operator, cst.Multiply):
                left, right = expr.left, expr.right
                return (self._certain_data(left, depth + 1) and self._certain_int(right, depth + 1)) or (
                    self._certain_int(left, depth + 1) and self._certain_data(right, depth + 1)
                )
            return False
        return self._bound(expr, depth, self._certain_data)

    def _holds_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self._holds_tensor(element.value) for element in expr.elements)
        return self.ctx.value(expr).is_tensor

    def _bound(self, expr: cst.BaseExpression, depth: int, test) -> bool:  # type: ignore[no-untyped-def]
        """``test`` on the value of a plain name that its scope binds once, by a simple assignment.

        A name bound twice (``n = 3`` and, in a branch or loop, ``n = [1.0, 2.0]``), grown
        after it was made (``xs.append(...)``) or declared global may hold something else at
        the call, so it is not followed.
        """
        binding = self._only_binding(expr)
        return binding is not None and bool(test(binding.value, depth + 1))

    def _only_binding(self, expr: cst.BaseExpression) -> Binding | None:
        if not isinstance(expr, cst.Name):
            return None
        bindings = self.ctx.bindings_of(expr)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        scope = binding.scope
        if (
            binding.kind not in (BindingKind.ASSIGNMENT, BindingKind.ANNOTATION)
            or binding.value is None
            or binding.path
            or binding.additions
            or scope.kind not in (ScopeKind.MODULE, ScopeKind.FUNCTION)
            or len(scope.every.get(binding.name, ())) != 1
            or any(binding.name in other.declared_global | other.declared_nonlocal for other in self.ctx.model.records.scopes.values())
        ):
            return None
        return binding

    def _classify(self, expr: cst.BaseExpression, depth: int) -> str:
        """Is a single argument a size, data, or unknown? SKIP when it is harmless."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return DATA if expr.elements else SKIP  # ``torch.Tensor([])``: empty, harmless
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return DATA
        if isinstance(expr, cst.Integer):
            return SKIP if expr.evaluated_value == 0 else SIZES
        if isinstance(expr, cst.Float):
            return DATA  # a float is not a size; torch raises on it
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
            # A tensor's shape is a torch.Size (sizes); a numpy array's or a gym space's is a
            # plain tuple, which a legacy constructor takes as data: ``torch.Tensor((6,))``.
            owner = self.ctx.value(expr.value)
            return SIZES if owner.is_tensor else DATA if owner.kind is Kind.ARRAY else UNKNOWN
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
            return SIZES
        if isinstance(expr, cst.Subscript) and all(isinstance(element.slice, cst.Slice) for element in expr.slice):
            return DATA if self._classify(expr.value, depth + 1) == DATA else UNKNOWN  # ``values[:2]``
        if isinstance(expr, cst.BinaryOperation):
            sides = (self._classify(expr.left, depth + 1), self._classify(expr.right, depth + 1))
            if DATA in sides:
                return DATA  # ``[0, 0] * 2``, ``head + tail``
            return SIZES if sides == (SIZES, SIZES) else UNKNOWN
        if isinstance(expr, cst.Call):
            return self._classify_call(expr)
        if isinstance(expr, cst.Name):
            bindings = self.ctx.bindings_of(expr)
            found = {self._classify_binding(binding, depth + 1) for binding in bindings}
            if len(found) == 1:
                return found.pop()
            found.discard(SKIP)
            return found.pop() if len(found) == 1 else UNKNOWN
        value = self.ctx.value(expr)
        if value.kind in (Kind.CONTAINER, Kind.ARRAY):
            return SIZES if value.qualname == "torch.Size" else DATA
        return UNKNOWN

    def _classify_binding(self, binding: Binding, depth: int) -> str:
        """What a name holds through one of its bindings: a container grown after it was
        made (``tokens = []`` then ``tokens.append(t)`` or ``tokens += [t]``) is data."""
        if binding.additions or (binding.kind is BindingKind.AUGMENTED and self.ctx.model.binding_value(binding).kind is Kind.CONTAINER):
            return DATA
        if binding.kind in (BindingKind.ASSIGNMENT, BindingKind.ANNOTATION, BindingKind.WALRUS) and binding.value is not None and not binding.path:
            return self._classify(binding.value, depth)
        value = self.ctx.model.binding_value(binding)
        if value.kind in (Kind.CONTAINER, Kind.ARRAY):
            return SIZES if value.qualname == "torch.Size" else DATA
        return UNKNOWN

    def _classify_call(self, call: cst.Call) -> str:
        callee = self.ctx.names.qualname(call.func)
        if callee == "torch.Size":
            return SIZES
        if callee is not None and callee.startswith("torch.") and any(part.endswith("Storage") for part in callee.split(".")):
            return SKIP  # ``torch.ByteStorage._from_buffer(...)``: a tensor over that storage
        if callee is not None and callee.split(".")[0] in ("numpy", "pandas"):
            return DATA
        if isinstance(call.func, cst.Name) and self.ctx.model.is_builtin(call.func):
            if call.func.value in _SIZE_BUILTINS:
                return SIZES
            if call.func.value in _DATA_BUILTINS:
                return DATA
            if call.func.value in _BUFFER_BUILTINS:
                return BUFFER
        found = method_call(call)
        if found is not None:
            method = found[1]
            if method in ("size", "dim", "numel"):
                return SIZES
            if method in ("tolist", "numpy"):
                return DATA
            if method in _STORAGE_METHODS:
                return SKIP  # a tensor viewing an existing storage: neither hazard
        return UNKNOWN


_PROBLEMS = {
    SIZES: "it returns uninitialized memory, not a tensor holding those numbers",
    DATA: "it converts the data to its own dtype whatever the data's dtype is",
    UNKNOWN: "with sizes it returns uninitialized memory, with data it ignores the data's dtype",
}


def _describe(func: cst.BaseExpression, legacy: list[str]) -> str:
    written = code_of(func)
    if written in legacy and len(legacy) == 1:
        return written
    return f"{written} (= {' or '.join(legacy)})"


def _instead(legacy: list[str], what: str) -> str:
    dtypes = {_DTYPES[name.rsplit(".", 1)[1]] for name in legacy}
    cuda = {name.startswith("torch.cuda.") for name in legacy}
    options = []
    if len(dtypes) == 1 and None not in dtypes:
        options.append(f"dtype={dtypes.pop()}")
    elif len(dtypes) > 1:
        options.append("dtype=...")
    if cuda == {True}:
        options.append('device="cuda"')
    elif len(cuda) > 1:
        options.append("device=...")
    extra = "".join(f", {option}" for option in options)
    sized = f"torch.empty(size{extra}) or torch.zeros(size{extra})"
    # torch.tensor infers int64 from ints where torch.Tensor gave the default float dtype.
    data = f"torch.tensor(data{extra or ', dtype=torch.get_default_dtype()'})"
    if what == SIZES:
        return sized
    if what == DATA:
        return data
    return f"{sized} for sizes, {data} for data"
