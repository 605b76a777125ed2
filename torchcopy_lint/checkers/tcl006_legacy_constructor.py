"""TCL006 legacy-constructor: ``torch.Tensor(3)``, ``torch.FloatTensor(data)`` ...

See rules/TCL006-legacy-constructor.md.
"""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of, method_call, names_read, positional_args
from torchcopy_lint.analysis.tensors import YES
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.fixes.builders import append_args, keyword, torch_attr
from torchcopy_lint.fixes.model import SAFE, Fix

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

# For the fix, stricter than the classification: what is certainly an int (a size) or
# certainly a list / tuple / array (data), whatever the runtime types turn out to be.
# ``arr.shape`` of a numpy array is a plain tuple (data to a legacy constructor), so
# ``.shape`` / ``.size()`` count only on a tensor; ``sum(xs, [])`` or ``max(lists)``
# may be a list, ``t.tolist()`` of a 0-d tensor a number, ``np.prod(...)`` a numpy scalar
# (sizes to a legacy constructor): none of those is fixed.
_INT_BUILTINS = frozenset({"len", "int"})
_LIST_BUILTINS = frozenset({"list", "tuple", "sorted", "range"})
_INT_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Power, cst.LeftShift, cst.RightShift)


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
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _INT_OPERATORS):
            return self._certain_int(expr.left, depth + 1) and self._certain_int(expr.right, depth + 1)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
            return len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)  # ``x.shape[0]``
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _INT_BUILTINS and self.ctx.scopes.lookup(expr.func.value) is None:
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
            return self.ctx.tensors.kind(expr.value) is YES
        found = method_call(expr)
        return found is not None and found[1] == "size" and not expr.args and self.ctx.tensors.kind(found[0]) is YES  # type: ignore[attr-defined]

    def _certain_data(self, expr: cst.BaseExpression, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, (cst.List, cst.Tuple)):
            # Tensors inside are TCL002's business (torch.stack); numbers and nested lists only.
            return bool(expr.elements) and not any(self._holds_tensor(element.value) for element in expr.elements)
        if isinstance(expr, cst.ListComp):
            return True
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _LIST_BUILTINS and self.ctx.scopes.lookup(expr.func.value) is None:
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
        return self.ctx.tensors.kind(expr) is YES

    def _bound(self, expr: cst.BaseExpression, depth: int, test) -> bool:  # type: ignore[no-untyped-def]
        """``test`` on the value of a plain name that its scope binds once, by a simple assignment.

        The scopes analysis keeps the latest binding; a name bound twice (``n = 3`` and, in a
        branch or loop, ``n = [1.0, 2.0]``) may hold either at the call, so it is not followed.
        """
        if not isinstance(expr, cst.Name):
            return False
        name = expr.value
        for scope in reversed(self.ctx.scopes.scopes):
            binding = scope.bindings.get(name)
            if binding is not None:
                break
        else:
            return False
        if binding.kind not in ("assign", "annassign") or binding.value is None or scope.kind not in ("module", "function"):
            return False
        if _binding_count(scope.node, name) != 1 or _declared_global(self.ctx.module, name):
            return False
        return bool(test(binding.value, depth + 1))

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


def _binding_count(scope: cst.CSTNode, name: str) -> int:
    """How many places in ``scope`` (not in nested functions, classes or lambdas) bind ``name``."""
    from torchcopy_lint.walker import iter_children

    count = 0
    if isinstance(scope, cst.FunctionDef):
        count += sum(1 for param in _params(scope.params) if param.name.value == name)
        pending: list[cst.CSTNode] = [scope.body]
    else:
        pending = [scope]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            count += node.name.value == name
            pending.extend(node.decorators)
            continue  # its body is another scope
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.AsName, cst.Del)):
            target = node.name if isinstance(node, cst.AsName) else node.target
            count += name in names_read(target)
        elif isinstance(node, cst.CompFor):
            pending.extend(child for child in iter_children(node) if child is not node.target)
            continue  # a comprehension's own targets are its own
        elif isinstance(node, cst.ImportAlias):
            bound = node.asname.name if node.asname is not None else node.name
            count += code_of(bound).split(".")[0] == name
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            count += node.name.value == name
        pending.extend(iter_children(node))
    return count


def _params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.append(star)
    return found


def _declared_global(module: cst.Module, name: str) -> bool:
    """Whether a ``global`` or ``nonlocal`` statement anywhere names ``name``."""
    from torchcopy_lint.walker import iter_children

    pending: list[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(item.name.value == name for item in node.names):
            return True
        if isinstance(node, (cst.BaseExpression,)):
            continue  # statements only
        pending.extend(iter_children(node))
    return False
