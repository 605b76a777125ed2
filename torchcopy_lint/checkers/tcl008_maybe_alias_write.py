"""TCL008 maybe-alias-write: in-place writes to a result that copies only sometimes
(see rules/TCL008-maybe-alias-write.md).

``y = x.reshape(-1)`` (``flatten``, ``contiguous``, ``to``, ``cpu``, ``cuda``, ``type``,
``float`` ..., ``numpy``) returns ``x`` itself or a view of it for some layouts, dtypes or
devices and a copy for others. An in-place write to ``y`` then changes ``x`` only
sometimes; it matters when ``x`` is still used after the write. The same holds for a
numpy array written after ``torch.from_numpy(a)`` / ``torch.as_tensor(a)`` while the
tensor is still used.

The checker resolves the written expression through basic subscripts, view methods and
names bound to such chains (recorded when assigned, with the source's binding at that
point) down to a source: a tensor (``kind`` YES) or, for ``as_tensor`` / ``from_numpy``,
a numpy array. A write is a candidate; it is reported at once when the source is a
parameter of the function or an attribute of one (``self.weight``): the caller keeps
using it. Otherwise it is reported when the source is read for its values later: after
the write in the walk (same binding), or anywhere in an enclosing loop that does not
rebind the source (the next iteration reads it).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of, dotted_name, is_basic_index, is_inplace_method, keyword_arg, positional_args
from torchcopy_lint.analysis.scopes import Binding
from torchcopy_lint.analysis.tensors import YES
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.walker import iter_children

# Tensor methods that return the receiver itself (or a view of it) in some cases and a copy in others.
MAYBE_COPY_METHODS = frozenset(
    """
    reshape reshape_as flatten contiguous to cpu cuda type float double half bfloat16 long int
    short bool byte char cfloat cdouble numpy
    """.split()
)
# torch functions of the same kind: the first positional argument is the source.
MAYBE_COPY_FUNCTIONS = frozenset({"torch.reshape", "torch.flatten", "torch.as_tensor", "torch.asarray"})
NUMPY_SOURCED = frozenset({"torch.as_tensor", "torch.asarray", "torch.from_numpy"})
# Methods and attributes that always alias their receiver (a write to them is a write to it).
VIEW_METHODS = frozenset(
    """
    view view_as t transpose swapaxes swapdims permute squeeze unsqueeze narrow select expand
    expand_as detach diagonal unflatten movedim moveaxis unfold as_strided
    """.split()
)
VIEW_ATTRIBUTES = frozenset({"data", "T", "mT", "H", "mH", "real", "imag"})
# Trailing-underscore methods that do not write values.
NON_VALUE_INPLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "record_stream_"})
# numpy methods that write the array in place.
NUMPY_INPLACE_METHODS = frozenset({"fill", "sort", "put", "partition", "itemset"})
# Reading these does not read the tensor's values.
# (``x.grad`` is another tensor: reading it does not read ``x``.)
META_ATTRIBUTES = frozenset(
    """
    shape dtype device ndim is_cuda is_sparse layout requires_grad grad_fn is_leaf names itemsize
    nbytes strides grad
    """.split()
)
META_METHODS = frozenset(
    """
    size dim ndimension numel nelement stride is_contiguous data_ptr storage_offset element_size
    get_device is_floating_point is_complex untyped_storage register_hook
    """.split()
)
META_BUILTINS = frozenset({"len", "isinstance", "id", "type", "hasattr"})


@dataclass
class Origin:
    """Where a written expression's memory may come from."""

    source: str  # "x", "self.weight": the expression that may or may not change
    binding: Binding | None  # the source's (root name's) binding when the chain was formed
    how: str  # "`x.reshape(...)` copies only for some layouts, dtypes or devices"
    numpy_result: bool  # the written object is a numpy array (``x.numpy()``)


@dataclass
class Pending:
    node: cst.CSTNode
    top: cst.CSTNode | None
    origin: Origin
    target: str



def _is_true(node: cst.Arg | None) -> bool:
    return node is not None and isinstance(node.value, cst.Name) and node.value.value == "True"


def _store_context(parents: list[cst.CSTNode], node: cst.CSTNode) -> bool:
    """Whether ``node`` (a Name or Attribute whose ancestors are ``parents``) is assigned to."""
    child = node
    for parent in reversed(parents):
        if isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
            child = parent
            continue
        if isinstance(parent, (cst.AssignTarget, cst.For, cst.CompFor, cst.NamedExpr)):
            return getattr(parent, "target", None) is child
        if isinstance(parent, cst.AsName):
            return True
        if isinstance(parent, cst.Del):
            return True
        if isinstance(parent, cst.AnnAssign):
            return parent.target is child
        return False
    return False


def _metadata_context(parents: list[cst.CSTNode], node: cst.CSTNode) -> bool:
    """``x.shape``, ``x.size()``, ``len(x)``, ``x is None``: uses that do not read the values."""
    if not parents:
        return False
    parent = parents[-1]
    if isinstance(parent, cst.Attribute) and parent.value is node:
        if parent.attr.value in META_ATTRIBUTES:
            return True
        if parent.attr.value in META_METHODS and len(parents) > 1 and isinstance(parents[-2], cst.Call) and parents[-2].func is parent:
            return True
        if parent.attr.value == "type" and len(parents) > 1 and isinstance(parents[-2], cst.Call) and not parents[-2].args:
            return True
        return False
    if isinstance(parent, cst.Arg) and len(parents) > 1:
        call = parents[-2]
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in META_BUILTINS
    if isinstance(parent, cst.Comparison):
        return all(isinstance(target.operator, (cst.Is, cst.IsNot)) for target in parent.comparisons)
    if isinstance(parent, cst.ComparisonTarget):
        return isinstance(parent.operator, (cst.Is, cst.IsNot))
    return False


def _describe(call: cst.Call) -> str:
    text = " ".join(code_of(call).split())
    if len(text) > 60:
        text = text[:57] + "..."
    return f"`{text}` copies only for some layouts, dtypes or devices"


def _key_of(node: cst.CSTNode) -> str | None:
    if isinstance(node, (cst.Name, cst.Attribute)):
        return dotted_name(node)
    return None


def _root(key: str) -> str:
    return key.split(".", 1)[0]


class MaybeAliasWrite(Checker):
    code = "TCL008"
    triggers = (
        "reshape", "flatten", "contiguous", ".to(", ".cpu(", ".cuda(", ".type(", ".float(", ".double(",
        ".half(", ".bfloat16(", ".long(", ".int(", ".short(", ".bool(", ".byte(", ".char(", ".cfloat(",
        ".cdouble(", ".numpy(", "from_numpy", "as_tensor", "asarray",
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        # id(assignment node) -> (node, bound name, origin) for ``y = <maybe-copy chain>``.
        self._origins: dict[int, tuple[cst.CSTNode, str, Origin]] = {}
        # id(numpy array binding) -> [(binding, tensor name, assignment node, how)] for ``t = torch.from_numpy(a)``.
        self._shared: dict[int, list[tuple[Binding, str, cst.CSTNode, str]]] = {}
        self._pending: list[Pending] = []
        self._pending_keys: set[str] = set()
        self._pending_roots: set[str] = set()

    # -- resolving a written expression to its possible source --------------------
    def _is_numpy(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if depth > 4:
            return False
        if isinstance(expr, cst.Call):
            qualname = self.ctx.names.qualname(expr.func)
            if qualname is not None and qualname.split(".")[0] == "numpy":
                return True
            return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy" and self.ctx.tensors.kind(expr.func.value) is YES
        if isinstance(expr, cst.Name):
            binding = self.ctx.scopes.lookup(expr.value)
            if binding is None:
                return False
            if binding.kind == "param" and binding.annotation is not None:
                return (self.ctx.names.qualname(binding.annotation) or "") in ("numpy.ndarray", "numpy.typing.NDArray")
            if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
                return self._is_numpy(binding.value, depth + 1)
        return False

    def _resolve(self, expr: cst.BaseExpression) -> Origin | None:
        how: str | None = None
        numpy_result: bool | None = None
        innermost: str | None = None  # "tensor" / "numpy": what the innermost conversion needs
        for _ in range(16):
            if isinstance(expr, cst.Subscript):
                if not is_basic_index(expr):
                    return None
                expr = expr.value
                continue
            if isinstance(expr, cst.Attribute) and expr.attr.value in VIEW_ATTRIBUTES:
                expr = expr.value
                continue
            if isinstance(expr, cst.Call):
                func = expr.func
                qualname = self.ctx.names.torch_qualname(func)
                if qualname in MAYBE_COPY_FUNCTIONS or qualname == "torch.from_numpy":
                    args = positional_args(expr)
                    if not args or _is_true(keyword_arg(expr, "copy")):
                        return None
                    if numpy_result is None:
                        numpy_result = False
                    if qualname in MAYBE_COPY_FUNCTIONS and how is None:
                        how = _describe(expr)
                    innermost = "numpy" if qualname in NUMPY_SOURCED else "tensor"
                    expr = args[0].value
                    continue
                if qualname is not None or not isinstance(func, cst.Attribute):
                    return None
                method = func.attr.value
                if method in VIEW_METHODS:
                    if numpy_result is None:
                        numpy_result = False
                    innermost = "tensor"
                    expr = func.value
                    continue
                if method in MAYBE_COPY_METHODS:
                    if _is_true(keyword_arg(expr, "copy")) or (method == "type" and not expr.args):
                        return None
                    if numpy_result is None:
                        numpy_result = method == "numpy"
                    if how is None:
                        how = _describe(expr)
                    innermost = "tensor"
                    expr = func.value
                    continue
                return None
            break
        key = _key_of(expr)
        if key is None:
            return None
        binding = self.ctx.scopes.lookup(_root(key))
        if how is None:
            # No maybe-copy step yet: a name bound to such a chain carries its origin.
            if isinstance(expr, cst.Name) and binding is not None:
                recorded = self._origins.get(id(binding.node))
                if recorded is not None and recorded[1] == expr.value:
                    origin = recorded[2]
                    if numpy_result is not None:
                        origin = Origin(origin.source, origin.binding, origin.how, numpy_result)
                    return origin
            return None
        if key in ("self", "cls"):
            return None
        if innermost == "numpy":
            if not self._is_numpy(expr):
                return None
        elif self.ctx.tensors.kind(expr) is not YES:
            return None
        return Origin(key, binding, how, bool(numpy_result))

    # -- recording chains -----------------------------------------------------------
    def _record(self, node: cst.CSTNode, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if value is None or not isinstance(target, cst.Name):
            return
        origin = self._resolve(value)
        if origin is not None:
            self._origins[id(node)] = (node, target.value, origin)
        if isinstance(value, cst.Call):
            qualname = self.ctx.names.torch_qualname(value.func)
            args = positional_args(value)
            if qualname in NUMPY_SOURCED and args and isinstance(args[0].value, cst.Name) and not _is_true(keyword_arg(value, "copy")):
                array = args[0].value
                if qualname == "torch.from_numpy" or self._is_numpy(array):
                    binding = self.ctx.scopes.lookup(array.value)
                    if binding is not None:
                        effect = "shares its memory" if qualname == "torch.from_numpy" else "shares its memory or copies, depending on dtype and device"
                        how = f"`{target.value} = {qualname}({array.value})` {effect}"
                        self._shared.setdefault(id(binding), []).append((binding, target.value, node, how))

    def leave_Assign(self, node: cst.Assign) -> None:
        # Runs before the scope analysis binds the targets: lookups see the old bindings.
        if len(node.targets) == 1:
            self._record(node, node.targets[0].target, node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._write(node, target.target, numpy_ok=True, tensor_ok=True)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record(node, node.target, node.value)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._record(node, node.target, node.value)

    # -- writes ------------------------------------------------------------------------
    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, (cst.Name, cst.Subscript)):
            self._write(node, node.target, numpy_ok=True, tensor_ok=True)

    def leave_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if is_inplace_method(method) and method not in NON_VALUE_INPLACE:
                self._write(node, func.value, numpy_ok=False, tensor_ok=True)
            elif method in NUMPY_INPLACE_METHODS:
                self._write(node, func.value, numpy_ok=True, tensor_ok=False)
        out = keyword_arg(node, "out")
        if out is not None and isinstance(out.value, (cst.Name, cst.Attribute, cst.Subscript)):
            self._write(node, out.value, numpy_ok=True, tensor_ok=True)
        elif self.ctx.names.qualname(func) == "numpy.copyto" and node.args:
            self._write(node, node.args[0].value, numpy_ok=True, tensor_ok=False)

    def _write(self, node: cst.CSTNode, written: cst.BaseExpression, *, numpy_ok: bool, tensor_ok: bool) -> None:
        if isinstance(written, cst.Subscript) and isinstance(node, (cst.Assign, cst.AugAssign)):
            written = written.value  # ``y[mask] = v`` writes into y whatever the index
        origin = self._resolve(written)
        if origin is not None and (numpy_ok if origin.numpy_result else tensor_ok):
            self._candidate(node, origin, written)
        # A numpy array that a tensor was made from.
        if not numpy_ok or not self._shared:
            return
        base = written
        while isinstance(base, cst.Subscript) and is_basic_index(base):
            base = base.value
        if not isinstance(base, cst.Name):
            return
        binding = self.ctx.scopes.lookup(base.value)
        if binding is None:
            return
        for _array_binding, tensor, assignment, how in self._shared.get(id(binding), ()):
            tensor_binding = self.ctx.scopes.lookup(tensor)
            if tensor_binding is not None and tensor_binding.node is assignment:
                self._candidate(node, Origin(tensor, tensor_binding, how, False), written)

    def _candidate(self, node: cst.CSTNode, origin: Origin, written: cst.BaseExpression) -> None:
        target = written
        while isinstance(target, cst.Subscript):
            target = target.value
        pending = Pending(node, self.ctx.top_statement, origin, code_of(target))
        if origin.binding is not None and origin.binding.kind == "param":
            # The caller's tensor (or ``self.<attr>``, module state): used after the call.
            outlives = "is the caller's tensor" if origin.source == _root(origin.source) else "outlives the call"
            self._report(pending, f"`{origin.source}` {outlives}")
            return
        # In a loop that keeps the source, the next iteration reads it.
        for loop in self.ctx.flow.loops:
            if _used_in_loop(loop, origin.source):
                self._report(pending, f"`{origin.source}` is read again in the next iteration")
                return
        self._pending.append(pending)
        self._pending_keys.add(origin.source)
        self._pending_roots.add(_root(origin.source))

    def _report(self, pending: Pending, why: str) -> None:
        origin = pending.origin
        message = self.spec.message.format(target=pending.target, source=origin.source, how=origin.how, why=why)
        self.ctx.report(pending.node, self.code, message, top=pending.top)

    # -- later uses of a source --------------------------------------------------------
    def _use(self, node: cst.Name | cst.Attribute, key: str) -> None:
        parents = self.ctx.parents
        if _store_context(parents, node):
            if isinstance(node, cst.Attribute):  # ``self.w = ...``: a different object from here on
                self._pending = [p for p in self._pending if p.origin.source != key]
                self._pending_keys = {p.origin.source for p in self._pending}
            return
        if _metadata_context(parents, node):
            return
        binding = self.ctx.scopes.lookup(_root(key))
        remaining = []
        for pending in self._pending:
            if pending.origin.source == key and pending.origin.binding is binding:
                self._report(pending, f"`{key}` is used afterwards")
            else:
                remaining.append(pending)
        self._pending = remaining
        self._pending_keys = {p.origin.source for p in remaining}
        self._pending_roots = {_root(k) for k in self._pending_keys}

    def visit_Name(self, node: cst.Name) -> None:
        if self._pending and node.value in self._pending_keys:
            self._use(node, node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not self._pending:
            return
        base = node.value
        while isinstance(base, cst.Attribute):
            base = base.value
        if not (isinstance(base, cst.Name) and base.value in self._pending_roots):
            return
        key = dotted_name(node)
        if key is not None and key in self._pending_keys:
            self._use(node, key)


def _used_in_loop(loop: cst.CSTNode, key: str) -> bool:
    """Whether ``loop`` reads ``key``'s values somewhere and never rebinds it."""
    used = False
    root = _root(key)
    stack: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = [(loop, [])]
    while stack:
        node, parents = stack.pop()
        if isinstance(node, cst.Name) and node.value == root and _store_context(parents, node):
            return False  # rebound in the loop: each iteration has its own source
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == key:
            if _store_context(parents, node):
                return False
            if not _metadata_context(parents, node):
                used = True
            if isinstance(node, cst.Name):
                continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not loop:
            continue
        child_parents = [*parents, node]
        stack.extend((child, child_parents) for child in iter_children(node))
    return used
