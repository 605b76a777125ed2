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
from typing import Callable

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.aliasing import strip_views
from torchcopy_lint.analysis.bindings import Binding, BindingKind, ScopeKind
from torchcopy_lint.analysis.keeping import Way, kept_as
from torchcopy_lint.analysis.cst_helpers import code_of, constant_index, dotted_name, is_basic_index, is_true, keyword_arg, positional_args, subscripted
from torchcopy_lint.analysis.torch_api import writes_values
from torchcopy_lint.analysis.values import Alias, AliasHow, Grad, Kind, Value
from torchcopy_lint.analysis.torch_api import LAYOUT_MAYBE_ALIAS_METHODS, MAYBE_ALIAS_FUNCTION_NAMES, MAYBE_ALIAS_NAMES, NUMPY_INPLACE_METHODS, VIEW_METHODS
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts, bare
from torchcopy_lint.walker import contains, iter_children


def _made_from(value: cst.BaseExpression) -> cst.BaseExpression:
    """What ``value`` is a view of, through views and reshapes that keep dtype and device
    (``torch.from_numpy(frames).flatten()``: ``torch.from_numpy(frames)``)."""
    while True:
        value = strip_views(value)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in LAYOUT_MAYBE_ALIAS_METHODS:
            value = value.func.value
        else:
            return value


NUMPY_SOURCED = frozenset({"torch.as_tensor", "torch.asarray", "torch.from_numpy"})
_NUMPY_SOURCED_NAMES = frozenset(name.rsplit(".", 1)[1] for name in NUMPY_SOURCED)
# numpy methods that write the array in place.
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
    bindings: tuple[Binding, ...]  # the bindings of the source's root name where the chain was formed
    how: str  # "`x.reshape(...)` copies only for some layouts, dtypes or devices"
    numpy_result: bool  # the written object is a numpy array (``x.numpy()``)
    outlives: str | None = None  # why the source is used after the write anyway
    item: str | None = None  # the source is this item of ``source``, a container (``batch["image"]``)

    @property
    def shown(self) -> str:
        """The source as the message names it."""
        return f"{self.source}[{self.item}]" if self.item is not None else self.source


@dataclass
class Pending:
    node: cst.CSTNode
    top: cst.CSTNode | None
    origin: Origin
    target: str
    # The function at whose end the source, state that outlives it, is reported if still pending.
    kept_past: cst.FunctionDef | None = None


@dataclass
class Shared:
    """A tensor made from a numpy array without a copy (``t = torch.from_numpy(a)``)."""

    tensor: str  # "t", "self.features"
    bindings: tuple[Binding, ...]  # the tensor name's binding, or the attribute root's bindings
    how: str
    state: bool  # an attribute of the instance or of an argument: outlives the function
    loops: frozenset[int] = frozenset()  # ids of the loops it was made in
    kept: str | None = None  # kept where it was made, unnamed (``frames.append(torch.from_numpy(buf))``): how


@dataclass
class LoopWrite:
    """An in-place write of a numpy array in a loop body (judged when the loop is left)."""

    node: cst.CSTNode
    top: cst.CSTNode | None
    written: cst.BaseExpression
    keys: list[object]  # the array's keys (see _array_keys)
    loops: frozenset[int]  # ids of the loops around it



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
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and isinstance(func.value, (cst.Name, cst.Attribute)) and keyword_arg(call, "force") is None:
        # ``x.numpy()`` of the tensor itself never copies: it shares or raises (GPU, grad).
        return f"`{text}` shares the tensor's memory"
    return f"`{text}` copies only for some layouts, dtypes or devices"


def _key_of(node: cst.CSTNode) -> str | None:
    if isinstance(node, (cst.Name, cst.Attribute)):
        return dotted_name(node)
    return None


def _root(key: str) -> str:
    return key.split(".", 1)[0]


def _item_of_named(expr: cst.BaseExpression) -> bool:
    """``batch["mask"]``, ``self.cache[0]``: an item at a constant index of a name or attribute chain."""
    return isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) and constant_index(expr) is not None and _key_of(expr.value) is not None


def _maybe_alias(key: str) -> bool:
    """Screen evidence of a result that aliases only sometimes: ``.reshape()``, ``.to()``,
    ``.numpy()`` ... called as methods, or ``reshape``/``from_numpy`` imported by name
    (not the builtins ``int``, ``float``, ``type``). See torchcopy_lint/screen.py."""
    if key.startswith("."):
        return key[1:] in MAYBE_ALIAS_NAMES
    return bare(key) in MAYBE_ALIAS_FUNCTION_NAMES


class MaybeAliasWrite(Checker):
    code = "TCL008"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """An in-place write to something that may come from a call that aliases only sometimes."""
        return facts.any_event(facts.value_writes, _maybe_alias)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        # The numpy array's key (see _array_keys) -> the tensors made from it without a copy.
        self._shared: dict[object, list[Shared]] = {}
        self._shared_names: dict[str, set[int]] = {}  # a tensor's name -> ids of its bindings made that way
        self._kept_shared: dict[int, str] = {}  # id of such a binding -> how its tensor was kept ("appended to `frames`")
        self._loop_writes: list[LoopWrite] = []  # numpy writes in loops not yet left
        self._reported_writes: set[int] = set()  # ids of the writes reported as changing a kept tensor
        self._pending: list[Pending] = []
        self._pending_keys: set[str] = set()
        self._pending_roots: set[str] = set()

    # -- resolving a written expression to its possible source --------------------
    def _resolve(self, expr: cst.BaseExpression) -> Origin | None:
        """The maybe-alias ``expr``'s memory comes from, through views and names (the
        semantic model follows them), or None."""
        value = self.ctx.value(expr)
        alias = value.alias
        for _ in range(8):
            if alias is None or alias.how is not AliasHow.VIEW:
                break
            alias = alias.source_value.alias
        if alias is None or alias.how is not AliasHow.MAYBE:
            return None
        via = alias.via
        # ``x.detach().cpu().numpy()``: on through the chain to the tensor it starts from.
        item_alias = None  # the first link taken from an item of a container (``batch["mask"].long()``)
        for _ in range(8):
            inner = alias.source_value.alias
            if item_alias is None and _item_of_named(alias.source):
                item_alias = alias
            if _key_of(alias.source) is not None or inner is None or inner.how not in (AliasHow.MAYBE, AliasHow.VIEW, AliasHow.DETACH, AliasHow.DATA):
                break
            alias = inner
        origin = self._origin(alias, via, value)
        if origin is None and item_alias is not None and item_alias is not alias:
            # the item's own origin is gone (a view of another function's local): the item itself
            # is the source (``batch["mask"]``, read again after the write)
            origin = self._origin(item_alias, via, value)
        return origin

    def _origin(self, alias: Alias, via: cst.BaseExpression | None, value: Value) -> Origin | None:
        """The :class:`Origin` of a write through a maybe-alias whose chain ends at ``alias``."""
        source, source_value = alias.source, alias.source_value
        source, source_value = self._viewed_parameter(source, source_value)
        key, item, any_item = _key_of(source), None, False
        if key is None and isinstance(source, cst.Subscript) and len(source.slice) == 1 and isinstance(source.slice[0].slice, cst.Index):
            item = constant_index(source)  # ``batch["image"].cpu()``: an item of ``batch``
            if item is None:  # ``self.cache[utt].float()``: some item of ``self.cache`` (not ``x[mask]`` of a tensor: a copy)
                if self.ctx.value(source.value).kind not in (Kind.CONTAINER, Kind.UNKNOWN):
                    return None
                item, any_item = code_of(source.slice[0].slice.value), True
            source = source.value
            key = _key_of(source)
        if key is None or key in ("self", "cls") or source_value.kind not in (Kind.TENSOR, Kind.ARRAY):
            return None
        if self._local_of_another_function(source):
            return None  # ``self.t = t.to(dtype)`` in another method: that ``t`` is gone here
        how = _describe(via) if isinstance(via, cst.Call) else f"`{key}` may be copied or not"
        outlives = None
        shown = f"{key}[{item}]" if item is not None else key
        owned_by_caller = any(binding.kind is BindingKind.PARAMETER for binding in self._root_bindings(source))
        if any_item and not owned_by_caller:
            return None  # an item of a local container by a computed key: later reads are not matched to it
        if owned_by_caller:
            # The caller's tensor (or ``self.<attr>``, module state): used after the call.
            outlives = f"`{shown}` is the caller's tensor" if shown == _root(key) else f"`{shown}` outlives the call"
        elif source_value.why == "a gradient" or source_value.grad is Grad.LEAF:
            outlives = f"`{key}` is {'a gradient the optimizer reads' if source_value.why == 'a gradient' else 'a parameter'}"
        elif any(self.ctx.model.caller_owned(binding) is not None or self.ctx.model.callers_element(binding) for binding in self._root_bindings(source)):
            outlives = f"`{shown}` outlives the call"  # ``for name, layer in model.named_modules(): m = layer.mask.flatten()``
        elif self._rebinds_its_source(source, key):
            # ``x = x.reshape(...)``: where the write goes through the result, the name no
            # longer reaches the object it came from; a later read of ``x`` that does reach
            # it comes from a path without the rebinding, where the write is no alias.
            return None
        return Origin(key, self._root_bindings(source), how, value.kind is Kind.ARRAY, outlives, item)

    def _local_of_another_function(self, source: cst.BaseExpression) -> bool:
        """Whether ``source``'s root name is bound only in functions the walk is not in, and
        not as their parameter (a value stored on an attribute by another method carries that
        method's local, gone by now; a parameter's tensor is its caller's, and lives on)."""
        while isinstance(source, cst.Attribute):
            source = source.value
        if not isinstance(source, cst.Name):
            return False
        bindings = self.ctx.bindings_of(source)
        if not bindings:
            return False
        enclosing = {id(scope) for scope in self.ctx.scopes.scopes}
        return all(binding.scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) and id(binding.scope) not in enclosing and binding.kind is not BindingKind.PARAMETER for binding in bindings)

    def _viewed_parameter(self, source: cst.BaseExpression, value: Value) -> tuple[cst.BaseExpression, Value]:
        """The caller's tensor a local view is of (``data = source[i:j]`` of a parameter
        ``source``): a write through ``data.to(device)`` lands there when it does not copy.
        ``source`` itself otherwise."""
        if not isinstance(source, cst.Name) or value.alias is None or value.alias.how is not AliasHow.VIEW:
            return source, value
        base, base_value = value.alias.source, value.alias.source_value
        if _key_of(base) is None or any(binding.kind is BindingKind.PARAMETER for binding in self._root_bindings(source)):
            return source, value
        if not any(binding.kind is BindingKind.PARAMETER for binding in self._root_bindings(base)):
            return source, value
        return base, base_value

    def _rebinds_its_source(self, source: cst.BaseExpression, key: str) -> bool:
        """Whether ``source`` (a plain name) lies in the value of an assignment to that same
        name (``x = x.float()``, ``x = x.reshape(...)``): the original object is then
        unreachable through the name wherever the result is."""
        if not isinstance(source, cst.Name):
            return False
        if any(self._held_elsewhere(binding) for binding in self.ctx.bindings_of(source)):
            return False  # ``w = module.weight.data``: the object stays reachable through the module
        for binding in self.ctx.bindings_of(source):
            for candidate in binding.scope.every.get(key, ()):
                if candidate.kind in _REBINDING_KINDS and not candidate.path and candidate.value is not None and contains(candidate.value, source):
                    return True
        return False

    def _root_bindings(self, expr: cst.BaseExpression) -> tuple[Binding, ...]:
        """The bindings of ``expr``'s root name, and through ``x += ...`` (the same object,
        changed in place) the bindings it updated."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        return self.ctx.model.same_object(self.ctx.bindings_of(expr)) if isinstance(expr, cst.Name) else ()

    # -- numpy arrays that tensors were made from -----------------------------------
    def _array_keys(self, array: cst.BaseExpression) -> list[object]:
        """Keys of the numpy array ``array`` names in ``_shared``: its bindings for a name
        (``a``), the dotted name with its root's bindings for an attribute (``self.buf``: the
        same attribute of the same object, in this function)."""
        key = _key_of(array)
        if key is None:
            return []
        bindings = self._root_bindings(array)
        if isinstance(array, cst.Name):
            return [id(binding) for binding in bindings]
        return [(key, id(binding)) for binding in bindings]

    def _record(self, node: cst.CSTNode, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """``t = torch.from_numpy(a)``: a later write to ``a`` changes ``t`` (while ``t`` is
        used). ``a`` may be an attribute (``self.obs_buf``); so may ``t`` (``self.features``:
        state that outlives the function, unless the function stores it again)."""
        made_from = _made_from(value) if value is not None else None  # ``torch.from_numpy(obs).permute(2, 0, 1)[None]``
        made = self._numpy_sourced(made_from) if isinstance(made_from, cst.Call) else None
        if made is None:
            return
        qualname, array, shown, effect = made
        if isinstance(target, cst.Name):
            made = self.ctx.model.binding_made_by(target)
            if made is None:
                return
            tensor, tensor_bindings, state = target.value, (made,), False
            self._shared_names.setdefault(target.value, set()).add(id(made))
        elif isinstance(target, cst.Attribute) and _key_of(target) is not None:
            tensor, tensor_bindings = code_of(target), self._root_bindings(target)
            state = any(binding.kind is BindingKind.PARAMETER for binding in tensor_bindings)
        else:
            return
        how = f"`{tensor} = {qualname}({shown})` {effect}"
        if made_from is not value:
            how = f"`{tensor}` is a view of `{qualname}({shown})` (or, for a reshape, one whenever the layout allows), which {effect}"
        for key in self._array_keys(array):
            self._shared.setdefault(key, []).append(Shared(tensor, tensor_bindings, how, state, frozenset(map(id, self.ctx.flow.loops))))

    def _numpy_sourced(self, call: cst.Call) -> tuple[str, cst.BaseExpression, str, str] | None:
        """``torch.from_numpy(a)`` / ``torch.as_tensor(a)`` of a named array, or of a basic-index
        view of one (``buf[:n]``, ``frames[0]``: numpy slicing copies nothing): (qualname, the
        named array, the argument as written, how the tensor shares its memory), or None."""
        qualname = self.ctx.names.torch_qualname(call.func)
        args = positional_args(call)
        copy = keyword_arg(call, "copy")
        if qualname not in NUMPY_SOURCED or not args or (copy is not None and is_true(copy.value)):
            return None
        given = array = args[0].value
        while isinstance(array, cst.Subscript) and is_basic_index(array):
            array = array.value
        shown = _key_of(array)
        if shown is None or (qualname != "torch.from_numpy" and self.ctx.value(array).kind is not Kind.ARRAY):
            return None
        if given is not array:
            shown = code_of(given)
        return qualname, array, shown, "shares its memory" if qualname == "torch.from_numpy" else "shares its memory or copies, depending on dtype and device"

    def _record_kept_unnamed(self, call: cst.Call) -> None:
        """``frames.append(torch.from_numpy(buf).permute(2, 0, 1))``: a tensor made from an
        array without a copy and kept at once, through views, without a name of its own."""
        kept = kept_as(self.ctx, call, VIEW_METHODS.__contains__, lambda expr: self.ctx.value(expr).is_tensor)
        if kept is None or kept.way not in (Way.APPENDED, Way.ITEM):
            return  # ``self.features = torch.from_numpy(a)``: see _record (it may be stored again)
        made = self._numpy_sourced(call)
        if made is None:
            return
        qualname, array, shown, effect = made
        tensor = f"{qualname}({shown})"
        loops = frozenset(map(id, self.ctx.flow.loops))
        for key in self._array_keys(array):
            self._shared.setdefault(key, []).append(Shared(tensor, (), f"`{tensor}` {effect}", False, loops, kept=kept.text))

    def _forget_attribute(self, target: cst.BaseExpression) -> None:
        """``self.buf = ...``: a later write to ``self.buf`` goes to another array."""
        if isinstance(target, cst.Attribute) and self._shared:
            for key in self._array_keys(target):
                self._shared.pop(key, None)

    def leave_Assign(self, node: cst.Assign) -> None:
        # Runs before the scope analysis binds the targets: lookups see the old bindings.
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._write(node, target.target, numpy_ok=True, tensor_ok=True)
            self._forget_attribute(target.target)
        if len(node.targets) == 1:
            self._record(node, node.targets[0].target, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record(node, node.target, node.value)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._record(node, node.target, node.value)

    # -- writes ------------------------------------------------------------------------
    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, (cst.Name, cst.Subscript)):
            self._write(node, node.target, numpy_ok=True, tensor_ok=True)
        elif isinstance(node.target, cst.Attribute):
            # ``self.buf -= m`` after ``t = torch.from_numpy(self.buf)``; an attribute's
            # value from another method (``self.acc = grad.to(dtype)``) has no later use of
            # its source to judge by.
            self._write(node, node.target, numpy_ok=True, tensor_ok=True, resolve=False)

    def leave_Call(self, node: cst.Call) -> None:
        func = node.func
        called = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if called in _NUMPY_SOURCED_NAMES:
            self._record_kept_unnamed(node)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            if writes_values(method) and not (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and writes_values(receiver.func.attr.value)):
                # ``adv.sub_(m).div_(s)``: one write, reported at its first link.
                self._write(node, receiver, numpy_ok=False, tensor_ok=True)
            elif method in NUMPY_INPLACE_METHODS:
                self._write(node, func.value, numpy_ok=True, tensor_ok=False)
        out = keyword_arg(node, "out")
        if out is not None and isinstance(out.value, (cst.Name, cst.Attribute, cst.Subscript)):
            self._write(node, out.value, numpy_ok=True, tensor_ok=True)
        elif self.ctx.names.qualname(func) == "numpy.copyto" and node.args:
            self._write(node, node.args[0].value, numpy_ok=True, tensor_ok=False)

    def _write(self, node: cst.CSTNode, written: cst.BaseExpression, *, numpy_ok: bool, tensor_ok: bool, resolve: bool = True) -> None:
        if isinstance(written, cst.Subscript) and isinstance(node, (cst.Assign, cst.AugAssign)):
            written = written.value  # ``y[mask] = v`` writes into y whatever the index
        origin = self._resolve(written) if resolve else None
        if origin is not None and (numpy_ok if origin.numpy_result else tensor_ok):
            self._candidate(node, origin, written)
        # A numpy array that a tensor was made from.
        loops = self.ctx.flow.loops
        if not numpy_ok or not (self._shared or loops):
            return
        base = written
        while isinstance(base, cst.Subscript) and is_basic_index(base):
            base = base.value
        keys = self._array_keys(base)
        if loops and keys:
            self._loop_writes.append(LoopWrite(node, self.ctx.top_statement, written, keys, frozenset(map(id, loops))))
        for key in keys:
            for shared in self._shared.get(key, ()):
                origin = Origin(shared.tensor, shared.bindings, shared.how, False)
                kept = self._kept_of(shared)
                if kept is not None:
                    # ``t = torch.from_numpy(buf); frames.append(t); buf[:] = nxt``: what was kept changes
                    self._reported_writes.add(id(node))
                    self._report(Pending(node, self.ctx.top_statement, origin, code_of(subscripted(written))), f"`{shared.tensor}` was {kept} before the write")
                else:
                    self._candidate(node, origin, written, state=shared.state)

    def _kept_of(self, shared: Shared) -> str | None:
        """How the tensor ``shared`` was kept (see :meth:`_note_kept`), or None."""
        if shared.kept is not None:
            return shared.kept
        return next((self._kept_shared[id(binding)] for binding in shared.bindings if id(binding) in self._kept_shared), None)

    def _leave_loop(self, node: cst.For | cst.While) -> None:
        """The end of a loop: a tensor made from an array later in the body than a write of
        that array, and kept, is changed by the next iteration's write (``buf[:] = chunk``,
        then ``frames.append(torch.from_numpy(buf))``)."""
        if not self._loop_writes:
            return
        remaining = []
        for write in self._loop_writes:
            if id(node) not in write.loops:
                remaining.append(write)
                continue
            if id(write.node) in self._reported_writes or self._array_made_in(node, write.written):
                continue
            for shared in (shared for key in write.keys for shared in self._shared.get(key, ()) if id(node) in shared.loops):
                kept = self._kept_of(shared)
                if kept is not None:
                    self._reported_writes.add(id(write.node))
                    origin = Origin(shared.tensor, shared.bindings, shared.how, False)
                    self._report(Pending(write.node, write.top, origin, code_of(subscripted(write.written))), f"`{shared.tensor}` was {kept} in an earlier iteration")
                    break
        self._loop_writes = remaining

    leave_For = leave_While = _leave_loop

    def _array_made_in(self, loop: cst.For | cst.While, written: cst.BaseExpression) -> bool:
        """``buf = np.zeros(n)`` in the loop's body: each iteration writes an array of its own."""
        base = written
        while isinstance(base, cst.Subscript):
            base = base.value
        bindings = self.ctx.bindings_of(base) if isinstance(base, cst.Name) else ()
        return bool(bindings) and all(contains(loop.body, binding.node) for binding in bindings)

    def _candidate(self, node: cst.CSTNode, origin: Origin, written: cst.BaseExpression, state: bool = False) -> None:
        """``state``: the source is an attribute of the instance or of an argument, which
        outlives the function unless the function stores it again after the write."""
        function = next((parent for parent in reversed(self.ctx.parents) if isinstance(parent, cst.FunctionDef)), None)
        pending = Pending(node, self.ctx.top_statement, origin, code_of(subscripted(written)), function if state else None)
        if origin.outlives is not None:
            self._report(pending, origin.outlives)
            return
        # In a loop that keeps the source, the next iteration reads it.
        wanted = {id(binding) for binding in origin.bindings}
        reaches = lambda name: bool(wanted & {id(binding) for binding in self._root_bindings(name)})  # noqa: E731
        for loop in self.ctx.flow.loops:
            if _used_in_loop(loop, origin.source, reaches, origin.item):
                self._report(pending, f"`{origin.shown}` is read again in the next iteration")
                return
        self._pending.append(pending)
        self._pending_keys.add(origin.source)
        self._pending_roots.add(_root(origin.source))

    def _report(self, pending: Pending, why: str) -> None:
        origin = pending.origin
        if "." in pending.target and origin.shown == pending.target:
            return  # ``self.t = self.t.to(dtype)`` in another method: the attribute's old tensor is gone
        self.report(pending.node, top=pending.top, target=pending.target, source=origin.shown, how=origin.how, why=why)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._pending:
            return
        remaining = []
        for pending in self._pending:
            if pending.kept_past is node:
                self._report(pending, f"`{pending.origin.shown}` outlives the call")
            else:
                remaining.append(pending)
        if len(remaining) != len(self._pending):
            self._pending = remaining
            self._pending_keys = {p.origin.source for p in remaining}
            self._pending_roots = {_root(k) for k in self._pending_keys}

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
        used = {id(binding) for binding in self._root_bindings(node)}
        remaining = []
        for pending in self._pending:
            if pending.origin.source == key and used & {id(binding) for binding in pending.origin.bindings} and _reads_item(parents, node, pending.origin.item) and not _other_branch(parents, node, pending.node):
                self._report(pending, f"`{pending.origin.shown}` is used afterwards")
            else:
                remaining.append(pending)
        self._pending = remaining
        self._pending_keys = {p.origin.source for p in remaining}
        self._pending_roots = {_root(k) for k in self._pending_keys}

    def visit_Name(self, node: cst.Name) -> None:
        if self._pending and node.value in self._pending_keys:
            self._use(node, node.value)
        made = self._shared_names.get(node.value)
        if made:
            self._note_kept(node, made)

    def _note_kept(self, node: cst.Name, made: set[int]) -> None:
        """A tensor made from a numpy array without a copy, kept past the statement (appended,
        stored on an attribute or in an item, kept by a function of the file): a later write
        to the array changes what was kept (``self.buffer.add(obs_t)`` before ``self.obs_buf[:] = nxt``)."""
        bindings = [binding for binding in self._root_bindings(node) if id(binding) in made]
        if not bindings:
            return
        kept = kept_as(self.ctx, node, lambda method: False, lambda expr: self.ctx.value(expr).is_tensor)
        if kept is not None and kept.way in (Way.APPENDED, Way.ATTRIBUTE, Way.ITEM):
            for binding in bindings:
                self._kept_shared.setdefault(id(binding), kept.text)

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


    def _held_elsewhere(self, binding: Binding) -> bool:
        """Whether the object ``binding`` gives its name may also be held by another name or
        attribute: its value is (a view, ``.data``, ``detach()`` or maybe-copy of) one."""
        alias = self.ctx.model.binding_value(binding).alias
        for _ in range(8):
            if alias is None:
                return False
            key = _key_of(alias.source)
            if key is not None and key != binding.name:
                return True  # ``X = X.mT`` is a view of what ``X`` held before: on through it
            alias = alias.source_value.alias
        return True


def _other_branch(parents: list[cst.CSTNode], node: cst.CSTNode, write: cst.CSTNode) -> bool:
    """Whether ``node`` is in the ``else`` of a conditional whose other branch holds ``write``
    (``img.float().div_(255) if img.dtype == torch.uint8 else img``): it runs instead of the
    write, not after it."""
    child = node
    for parent in reversed(parents):
        if isinstance(parent, cst.IfExp) and parent.orelse is child and contains(parent.body, write):
            return True
        if isinstance(parent, cst.If) and parent.orelse is child and contains(parent.body, write):
            return True
        child = parent
    return False


_REBINDING_KINDS = frozenset({BindingKind.ASSIGNMENT, BindingKind.ANNOTATION, BindingKind.WALRUS})


def _reads_item(parents: list[cst.CSTNode], node: cst.CSTNode, item: str | None) -> bool:
    """Whether this use of a container (``node``) may read its item ``item``: the whole
    container, the same item or an index that may be it; not another constant item
    (``batch["label"]`` after a write through ``batch["image"]``), nor a store of one."""
    if item is None:
        return True
    parent = parents[-1] if parents else None
    if not (isinstance(parent, cst.Subscript) and parent.value is node):
        return True
    if _store_context(parents[:-1], parent):
        return False
    index = constant_index(parent)
    return index is None or index == item


def _used_in_loop(loop: cst.CSTNode, key: str, reaches: Callable[[cst.Name], bool], item: str | None = None) -> bool:
    """Whether ``loop`` reads ``key``'s values (its item ``item``, for a container)
    somewhere, through a name that ``reaches`` the source's binding (not one rebound before
    the loop), and never rebinds it."""
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
            base = node
            while isinstance(base, cst.Attribute):
                base = base.value
            if not _metadata_context(parents, node) and isinstance(base, cst.Name) and reaches(base) and _reads_item(parents, node, item):
                used = True
            if isinstance(node, cst.Name):
                continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not loop:
            continue
        child_parents = [*parents, node]
        # A ``for`` loop's iterable is evaluated once, before the first iteration.
        stack.extend((child, child_parents) for child in iter_children(node) if not (node is loop and isinstance(loop, cst.For) and child is loop.iter))
    return used
