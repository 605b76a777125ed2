"""TCL006 legacy-constructor: ``torch.Tensor(3)``, ``torch.FloatTensor(data)`` ...

See rules/TCL006-legacy-constructor.md.
"""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of, method_call
from torchcopy_lint.analysis.tensors import YES
from torchcopy_lint.checkers.base import Checker

# Legacy type constructor -> the dtype it builds (None: the default dtype).
_DTYPES = {
    "Tensor": None,
    "FloatTensor": "torch.float32",
    "DoubleTensor": "torch.float64",
    "HalfTensor": "torch.float16",
    "BFloat16Tensor": "torch.bfloat16",
    "LongTensor": "torch.int64",
    "IntTensor": "torch.int32",
    "ShortTensor": "torch.int16",
    "CharTensor": "torch.int8",
    "ByteTensor": "torch.uint8",
    "BoolTensor": "torch.bool",
}
LEGACY_CONSTRUCTORS = frozenset(
    {f"torch.{name}" for name in _DTYPES} | {f"torch.cuda.{name}" for name in _DTYPES if name != "Tensor"}
)

_SIZE_BUILTINS = frozenset({"len", "int", "max", "min", "round", "abs", "sum"})
_DATA_BUILTINS = frozenset({"list", "tuple", "range", "map", "zip", "sorted", "reversed", "filter"})
_STORAGE_METHODS = frozenset({"storage", "untyped_storage", "_typed_storage", "_untyped_storage"})
_BUFFER_BUILTINS = frozenset({"bytes", "bytearray", "memoryview"})
_MAX_DEPTH = 4

# BUFFER: raw bytes, copied byte for byte by ByteTensor (data for the other types).
SIZES, DATA, UNKNOWN, SKIP, BUFFER = "sizes", "data", "sizes or data", "skip", "buffer"


class LegacyConstructor(Checker):
    code = "TCL006"
    triggers = ("Tensor",)

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
            if self.ctx.tensors.kind(value) is YES:
                return  # one tensor argument: TCL002 tensor-copy-construct
            what = self._classify(value, 0)
        if what == BUFFER:
            if all(name.endswith(".ByteTensor") for name in legacy):
                return  # bytes to uint8: exact, and faster than torch.tensor(list(...))
            what = DATA
        if what == SKIP:
            return
        self.report(node, callee=_describe(node.func, legacy), what=what, problem=_PROBLEMS[what], instead=_instead(legacy, what))

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
            return SIZES
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
            binding = self.ctx.scopes.lookup(expr.value)
            if binding is not None and binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
                return self._classify(binding.value, depth + 1)
        return UNKNOWN

    def _classify_call(self, call: cst.Call) -> str:
        callee = self.ctx.names.qualname(call.func)
        if callee == "torch.Size":
            return SIZES
        if callee is not None and callee.startswith("torch.") and any(part.endswith("Storage") for part in callee.split(".")):
            return SKIP  # ``torch.ByteStorage._from_buffer(...)``: a tensor over that storage
        if callee is not None and callee.split(".")[0] in ("numpy", "pandas"):
            return DATA
        if isinstance(call.func, cst.Name) and self.ctx.scopes.lookup(call.func.value) is None:
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
