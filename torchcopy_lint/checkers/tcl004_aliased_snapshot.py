"""TCL004 aliased-snapshot: a snapshot taken without a copy while its source keeps changing.

See rules/TCL004-aliased-snapshot.md. A snapshot is a value the semantic model shows to
share storage with trained state or a tensor (:class:`~torchcopy_lint.analysis.values.Alias`):
``w.detach()`` / ``w.data`` (or a view of them), ``model.state_dict()`` /
``optimizer.state_dict()`` (or a shallow copy: ``.copy()``, ``dict(...)``, ``{**sd}``,
``{k: v for k, v in sd.items()}``), a container of such values (``[p.data for p in
model.parameters()]``), ``copy.copy(model)``, or a module itself kept under a snapshot
name (``best_model = model``). It is reported

- when it is stored on an attribute or in a container that outlives the function and its
  source is trained state (a module's or optimizer's state, a parameter), or is changed
  afterwards in the same function;
- when it is held in a local name (or a local container) that is read after a change of
  its source: an optimizer step, an in-place write, ``load_state_dict`` (not of the
  snapshot itself), or a call that may train it: a local function that trains (the
  model's summary) or an unknown one named like training, given the model, its
  parameters or its optimizer (``train(model, opt)``, ``agent.learn()``).

The decision needs "after", so the checker records the snapshots and the changes with
their :class:`~torchcopy_lint.analysis.flow.Point` and decides when the function (or the
module) ends, with the name loads and stores the flow analysis logged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis import naming
from torchcopy_lint.analysis.aliasing import detached_view, inplace_write, written_tensor
from torchcopy_lint.analysis.bindings import BindingKind, CallSite, ScopeKind
from torchcopy_lint.analysis.cst_helpers import chain_root, dotted_name, method_call, names_read, positional_args, short_code, subscripted
from torchcopy_lint.analysis.flow import Point, may_flow
from torchcopy_lint.analysis.keeping import CONTAINER_ADDERS
from torchcopy_lint.analysis.torch_api import LOAD_STATE_METHODS, NAMED_PARAMETER_ITERATORS, PARAMETER_ITERATORS, STATE_DICT_METHODS
from torchcopy_lint.analysis.values import Alias, AliasHow, Grad, Kind, Value
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.walker import contains
from torchcopy_lint.screen import CALLED, ScreenFacts, bare, is_detached_evidence, is_leaf_evidence, is_module_like
from torchcopy_lint.fixes.builders import as_receiver, deepcopy_call, detach_clone, keep_parens, method_call as call_method
from torchcopy_lint.fixes.model import SAFE, UNSAFE, Fix

_TRAINED = frozenset({"module", "optimizer", "param"})
# Calls that never change a module or an optimizer they are given.
_HARMLESS_BUILTINS = frozenset({"print", "len", "isinstance", "id", "type", "repr", "str", "hasattr", "getattr", "sorted", "list", "tuple", "dict", "zip", "enumerate", "iter", "next", "sum", "min", "max", "any", "all", "map", "filter"})
_HARMLESS_METHODS = frozenset({"state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "children", "modules", "named_modules", "eval", "train", "to", "cuda", "cpu", "zero_grad", "register_forward_hook", "register_buffer", "append", "extend", "items", "keys", "values", "get", "format", "info", "debug", "warning", "log", "write", "add_scalar", "add_histogram", "update"})


@dataclass(frozen=True)
class _Taken:
    """What a snapshot aliases."""

    kind: str  # module | optimizer | param | tensor
    source: str  # dotted source ("model", "self.model", "w") or its code
    fix: str
    state: bool = False  # a state dict: stored anywhere, it is only ever kept to be restored
    reference: bool = False  # a module itself kept by reference (``best_model = model``)
    origin: cst.BaseExpression | None = None  # where the alias was made, when in another function (a helper's return)
    copied: bool = False  # a module's shallow copy (``copy.copy(model)``): meant as a second model


@dataclass
class _Snapshot:
    node: cst.CSTNode
    top: cst.CSTNode | None
    text: str
    taken: _Taken
    point: Point
    holder: str | None = None  # the local name (or local container) that keeps it
    holder_node: cst.Name | None = None  # the target Name: its store is the snapshot's moment
    escape: str | None = None  # "stored on `self.best`"
    escape_name: str = ""  # the attribute or container it escapes into (``best``, ``history``)
    source_root: str | None = None  # a plain local name the source is read from (``w``)
    fix: Fix | None = None


@dataclass(frozen=True)
class _Change:
    point: Point
    kind: str  # write | load | step | call
    written: str | None  # dotted tensor written (write), module loaded (load), optimizer (step)
    text: str
    call: "_CallChange | None" = None
    every_parameter: bool = False  # a write to each parameter of ``written`` (``for p in model.parameters(): p.add_(...)``)


@dataclass(frozen=True)
class _CallChange:
    """A call that may change what it is given (decided per snapshot)."""

    reads: frozenset[str]  # plain names read in its arguments
    receiver: str | None  # root name of the receiver of a method call
    trains: bool  # a local function that trains, or an unknown one named like training
    local: bool  # a local function (its summary is known)
    optimizer_given: bool  # an optimizer among its arguments
    free: frozenset[str] = frozenset()  # a local function's names from outside it (globals, closures)
    holds: frozenset[str] = frozenset()  # modules the receiver was built with (``trainer = Trainer(model, ...)``)


@dataclass
class _State:
    snapshots: list[_Snapshot] = field(default_factory=list)
    changes: list[_Change] = field(default_factory=list)
    stored: dict[str, set[str]] = field(default_factory=dict)  # plain name -> the attributes it is stored on (``self.policy_net = net``)
    rebound: dict[str, list[Point]] = field(default_factory=dict)  # dotted attribute -> when it is assigned (``self.fc = nn.Linear(...)``)


def _short(node: cst.CSTNode, limit: int = 50) -> str:
    return short_code(node, limit)


def _changes(written: str, source: str, whole: bool) -> bool:
    """Whether writing ``written`` in place changes ``source``: the same tensor, a part of
    the source module (``model.fc.weight`` of ``model``, not a ``.grad``), or for a whole
    module load (``model.load_state_dict``) anything inside it."""
    if written == source:
        return True
    if written.startswith(source + "."):
        return "grad" not in written[len(source) + 1 :].split(".")
    return whole and source.startswith(written + ".")


def _root(dotted: str) -> str:
    return dotted.split(".", 1)[0]


def _snapshot_alias(value: Value, depth: int = 0) -> Alias | None:
    """The alias that makes ``value`` a snapshot: its own, or that of what it holds (a
    comprehension of ``p.data`` over parameters, a dict comprehension over a state dict, a
    checkpoint dict ``{"model": model.state_dict(), ...}``)."""
    if value.alias is not None:
        return value.alias
    if value.kind is not Kind.CONTAINER or depth > 2:
        return None
    for held in (value.element, *(item for item in value.items or ()), *(field for _, field in value.fields)):
        if held is not None:
            alias = _snapshot_alias(held, depth + 1)
            if alias is not None and _origin(alias) is not None:
                return alias
    return None


def _origin(alias: Alias) -> tuple[str, cst.BaseExpression, AliasHow] | None:
    """``(kind, source expression, how it was taken)`` at the end of an alias chain: the
    trained state or tensor the snapshot shares storage with; None for a plain view or a
    copy that may not alias (``reshape``)."""
    taken_by: AliasHow | None = None
    current = alias
    for _ in range(8):
        how, source = current.how, current.source_value
        if how is AliasHow.MAYBE and _numpy_view(current):
            how = AliasHow.VIEW  # ``w.detach().numpy()``: the array is the tensor's memory (never a copy)
        if how in (AliasHow.DETACH, AliasHow.DATA, AliasHow.STATE, AliasHow.SAME) and taken_by is None:
            taken_by = how
        if how is AliasHow.MAYBE:
            return None
        if source.alias is not None and how in (AliasHow.DETACH, AliasHow.DATA, AliasHow.VIEW, AliasHow.SHALLOW) and (source.alias.how is not AliasHow.MAYBE or _numpy_view(source.alias)):
            current = source.alias
            continue
        if taken_by is None:
            return None
        if how is AliasHow.STATE or (how is AliasHow.SAME and source.kind is Kind.MODULE):
            kind = {Kind.MODULE: "module", Kind.OPTIMIZER: "optimizer"}.get(source.kind)
            return (kind, current.source, taken_by) if kind else None
        if how in (AliasHow.DETACH, AliasHow.DATA, AliasHow.VIEW) and source.kind in (Kind.TENSOR, Kind.UNKNOWN):
            if source.owner is not None:
                return ("module", source.owner, taken_by)  # ``[p.data for p in model.parameters()]``
            return ("param" if source.grad is Grad.LEAF else "tensor", current.source, taken_by)
        return None
    return None


def _numpy_view(alias: Alias) -> bool:
    """``t.numpy()`` without ``force=True``: it shares the tensor's memory or raises (a CUDA
    tensor, one that requires grad), so it never copies; only what it is called on may."""
    via = alias.via
    return (
        isinstance(via, cst.Call)
        and isinstance(via.func, cst.Attribute)
        and via.func.attr.value == "numpy"
        and not any(argument.keyword is not None and argument.keyword.value == "force" for argument in via.args)
    )


@lru_cache(maxsize=1 << 16)
def _alias_taking(key: str) -> bool:
    """Screen evidence of an alias :func:`_origin` starts from: ``detach()``, ``.data``, ``state_dict()``."""
    return is_detached_evidence(key) or (("@" not in key or key.startswith(CALLED)) and bare(key) in STATE_DICT_METHODS)


@lru_cache(maxsize=1 << 16)
def _trained_state(key: str) -> bool:
    """Screen evidence of trained state: a module, a parameter, an optimizer (see torchcopy_lint/screen.py)."""
    return is_leaf_evidence(key) or is_module_like(key) or naming.is_optimizer_name(bare(key))


class AliasedSnapshot(Checker):
    code = "TCL004"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """A snapshot taken (``detach()``, ``.data``, ``state_dict()``, ``copy.copy``, a module
        kept under a model-copy name) and then a change :meth:`_relevant` may accept: an
        in-place write that may reach its source, or, for a snapshot of trained state, a
        step, a load or a call that may train; or trained state kept under a snapshot name."""
        snapshots = facts.snapshots
        if any(snapshot.reference or snapshot.shallow for snapshot in snapshots):
            # ``best = model`` is a snapshot only of a module (_module_kept); ``copy.copy(x)`` only
            # of a module or of an alias that detach(), .data or state_dict() took (_origin)
            modules = facts.reaching(facts.may_be_module)
            taken = facts.reaching(_alias_taking) if any(snapshot.shallow for snapshot in snapshots) else frozenset()
            snapshots = [
                snapshot
                for snapshot in snapshots
                if not (snapshot.reference or snapshot.shallow)
                or not modules.isdisjoint(snapshot.names)
                or (snapshot.shallow and not taken.isdisjoint(snapshot.names))
            ]
        if not snapshots:
            return False
        if facts.written_into(snapshots) or not LOAD_STATE_METHODS.isdisjoint(facts.called):
            return True  # a write or a load that may change a snapshot's source
        if not (facts.any_event(snapshots, _trained_state) or facts.any_event(snapshots, facts.carries_history)):
            return False
        return facts.keeps_for_later() or facts.may_train()

    def _is_buffer(self, source: cst.Attribute) -> bool:
        """``model.running_mean``: a tensor without grad on a module the file shows (not guessed)."""
        owner = self.ctx.value(source.value)
        return owner.kind is Kind.MODULE and not owner.guessed and self.ctx.value(source).grad is Grad.NO

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.ctx.flow.log_names()
        self._states: list[_State] = []

    # -- frames ---------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._states.append(_State())

    def leave_Module(self, node: cst.Module) -> None:
        self._decide(self._states.pop())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._states.append(_State())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._decide(self._states.pop())

    # -- what is a snapshot -----------------------------------------------------
    def _taken(self, expr: cst.BaseExpression) -> tuple[_Taken, str | None] | None:
        """``(what it aliases, the plain local name the source is read from)``, or None."""
        if isinstance(expr, cst.Name):
            return None  # the snapshot was taken where the name was bound
        value = self.ctx.value(expr)
        alias = _snapshot_alias(value)
        origin = _origin(alias) if alias is not None else None
        if origin is None:
            return self._untyped_data(expr)
        kind, source, how = origin
        if isinstance(source, cst.Name) and source.value in ("self", "cls") and kind in ("param", "tensor"):
            return None  # ``self.data``: an attribute of an object
        qualname = self.ctx.names.qualname(source)
        if qualname is not None and not qualname.startswith("torch"):
            return None  # ``sys.stdout.detach()``
        text = dotted_name(source) or _short(source)
        root = source.value if isinstance(source, cst.Name) else None
        origin = None
        made = alias.source  # the receiver of the .detach() / .data / state_dict() that makes the alias
        if not contains(expr, made):
            # Read from a name or attribute that already holds the alias: taken elsewhere.
            # Only a call of a helper that makes it takes it here (reported in the helper).
            made_root = chain_root(made)
            if not (isinstance(expr, cst.Call) and made_root is not None and self._elsewhere(made_root)):
                return None
            origin = made_root
            passed = self._passed_for(expr, source)
            if passed is not None:  # ``snap(opt)`` of ``def snap(o): return o.state_dict()``: the caller's ``opt``
                text, root = dotted_name(passed) or text, passed.value if isinstance(passed, cst.Name) else None
        if kind == "tensor" and isinstance(source, cst.Attribute) and self._is_buffer(source):
            kind = "param"  # a buffer of a module (``model.running_mean``): module state that training changes
        if kind in ("module", "optimizer") and how in (AliasHow.STATE, AliasHow.SAME):
            same = how is AliasHow.SAME  # of a module: only its shallow copy (``copy.copy(model)``)
            return _Taken(kind, text, f"copy.deepcopy({_short(source if same else expr)})", how is AliasHow.STATE, same, origin, copied=same), root
        if value.alias is None and isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            fix = _short(_copying_elements(expr), 70)  # the elements alias: copy each one
        elif value.alias is None:
            fix = f"copy.deepcopy({_short(expr)})"
        elif value.kind is Kind.ARRAY:
            fix = f"{_short(expr)}.copy()"  # a numpy array's own copy
        elif how is AliasHow.DATA and isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            fix = f"{_short(source)}.detach().clone()"
        else:
            fix = f"{_short(expr)}.clone()"
        return _Taken(kind, text, fix, origin=origin), root

    def _passed_for(self, call: cst.Call, source: cst.BaseExpression) -> cst.BaseExpression | None:
        """What ``call`` passes for the helper's parameter ``source``, when it is a name or an
        attribute chain: the caller's object the alias shares storage with (``self.net`` of the
        caller for ``self.net`` in a method called as ``self.snapshot()``)."""
        root = chain_root(source)
        if root is None:
            return None
        bindings = self.ctx.bindings_of(root)
        whole = False  # the source is held by what the caller passed, not read from it by name
        if bindings and all(binding.kind is not BindingKind.PARAMETER for binding in bindings):
            # ``[layer.loc.detach() for layer in flow.layers]``: an element of what the caller
            # passed as ``flow``, which training the caller's object changes with it
            owners = {id(owner): owner for owner in map(self.ctx.model.caller_owned, bindings)}
            owner = next(iter(owners.values())) if len(owners) == 1 else None
            if owner is None:
                return None
            root, bindings, whole = owner, self.ctx.bindings_of(owner), True
        for binding in bindings:
            if binding.kind is not BindingKind.PARAMETER:
                return None
            for info, offset in self.ctx.model.called_functions(self.ctx.value(call.func)):
                if info.scope is not binding.scope:
                    continue
                names = [param.name.value for param in info.params]
                index = names.index(root.value) if root.value in names else None
                if index == 0 and offset == 1 and info.is_method and isinstance(call.func, cst.Attribute):
                    passed: cst.BaseExpression | None = call.func.value  # ``self`` of a bound method: the receiver
                else:
                    passed = CallSite(call, False, offset).argument(index, root.value)
                if isinstance(passed, (cst.Name, cst.Attribute)) and dotted_name(passed) is not None:
                    return passed if whole else _rerooted(source, passed)
        return None

    def _elsewhere(self, name: cst.Name) -> bool:
        """Whether ``name`` reads a variable of another function (a helper that returned it)."""
        here = self.ctx.scopes.enclosing_function()
        for binding in self.ctx.bindings_of(name):
            scope = binding.scope
            while scope is not None and scope.node is not here and scope.parent is not None and scope.kind is ScopeKind.COMPREHENSION:
                scope = scope.parent
            if scope is not None and scope.node is not here and scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                return True
        return False

    def _untyped_data(self, expr: cst.BaseExpression) -> tuple[_Taken, str | None] | None:
        """``x.data`` of a receiver the file does not type: a tensor's alias only if it is
        changed in place later (no trained-state evidence)."""
        viewed = detached_view(expr)
        if viewed is None or viewed[1] != "data" or not self.ctx.names.imports_torch:
            return None
        source = viewed[0]
        if isinstance(source, cst.Name) and source.value in ("self", "cls"):
            return None
        if self.ctx.value(source).kind is not Kind.UNKNOWN:
            return None  # typed receivers got their alias from the model (or are no tensors)
        qualname = self.ctx.names.qualname(source)
        if qualname is not None and not qualname.startswith("torch"):
            return None
        text = dotted_name(source) or _short(source)
        whole = isinstance(expr, cst.Attribute) and expr.attr.value == "data"
        fix = f"{_short(source)}.detach().clone()" if whole else f"{_short(expr)}.clone()"
        return _Taken("tensor", text, fix), source.value if isinstance(source, cst.Name) else None

    def _module_kept(self, value: cst.BaseExpression, target_name: str) -> tuple[_Taken, str | None] | None:
        """``best_model = model``, ``self.target_net = self.policy_net``: a module kept by
        reference under a name for a copy of a model."""
        if not isinstance(value, (cst.Name, cst.Attribute)) or not naming.is_model_copy_name(target_name):
            return None
        if self.ctx.value(value).kind is not Kind.MODULE:
            return None
        text = dotted_name(value) or _short(value)
        return _Taken("module", text, f"copy.deepcopy({_short(value)})", reference=True), value.value if isinstance(value, cst.Name) else None

    def _parameters_kept(self, value: cst.BaseExpression, target_name: str) -> tuple[_Taken, str | None] | None:
        """``start = {n: p for n, p in model.named_parameters()}``, ``self.target =
        dict(self.q.named_parameters())``, ``init = list(model.parameters())``: a container of
        the parameters themselves, no copy, under a name that says "kept for later"."""
        if not (naming.is_snapshot_name(target_name) or naming.is_model_copy_name(target_name)):
            return None
        element = self.ctx.value(value).element if isinstance(value, (cst.Call, cst.ListComp, cst.DictComp, cst.GeneratorExp)) else None
        if element is None or element.kind is not Kind.TENSOR or element.grad is not Grad.LEAF or element.owner is None or element.alias is not None:
            return None
        owner = element.owner
        if not contains(value, owner):
            return None  # a container made elsewhere and passed on
        text = dotted_name(owner) or _short(owner)
        return _Taken("module", text, f"{{n: p.detach().clone() for n, p in {_short(owner)}.named_parameters()}}", reference=True), owner.value if isinstance(owner, cst.Name) else None

    # -- the fix: a copy instead of the alias ------------------------------------------
    def _fix(self, value: cst.BaseExpression, taken: _Taken, name: str | None) -> Fix | None:
        """A copy of the snapshot ``value`` when it is one itself (not one inside a display
        or a conditional). Safe when the name it is kept under says "kept for later"
        (``best``, ``prev``, ``history``): the code then means the old values."""
        applicability = SAFE if name and naming.is_snapshot_name(name) else UNSAFE
        imports: tuple[str, ...] = ()
        old: cst.BaseExpression = value
        if isinstance(value, (cst.Name, cst.Attribute)) and taken.kind == "module" and detached_view(value) is None:
            new, imports = deepcopy_call(self.ctx, value)  # ``best_model = model``
            return Fix(UNSAFE, ((old, keep_parens(old, new)),), imports)
        if taken.kind in ("module", "optimizer"):
            inner = self._state_dict_call(value)
            if inner is None:
                return None
            new, imports = deepcopy_call(self.ctx, inner)
        elif detached_view(value) is not None:
            source, how = detached_view(value)  # type: ignore[misc]
            whole = how == "data" and isinstance(value, cst.Attribute)
            new = detach_clone(source) if whole else call_method(as_receiver(value), "clone")
        elif isinstance(value, (cst.ListComp, cst.DictComp)) and detached_view(value.value if isinstance(value, cst.DictComp) else value.elt) is not None:
            old = value.value if isinstance(value, cst.DictComp) else value.elt
            source, how = detached_view(old)  # type: ignore[misc]
            whole = how == "data" and isinstance(old, cst.Attribute)
            new = detach_clone(source) if whole else call_method(as_receiver(old), "clone")
        else:
            return None
        return Fix(applicability, ((old, keep_parens(old, new)),), imports)

    def _state_dict_call(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """The ``x.state_dict()`` call ``value`` is, or is a shallow copy of (through ``dict(...)``,
        ``.copy()``, ``copy.copy(...)``, ``OrderedDict(...)``); None inside displays."""
        for _ in range(4):
            called = method_call(value)
            if called is not None and called[1] == "state_dict":
                return value
            if called is not None and called[1] == "copy" and not value.args:  # type: ignore[attr-defined]
                value = called[0]
                continue
            if isinstance(value, cst.Call) and len(value.args) == 1 and len(positional_args(value)) == 1:
                value = value.args[0].value
                continue
            return None
        return None

    # -- where is it kept ---------------------------------------------------------
    def _is_local(self, name: cst.Name) -> bool:
        bindings = self.ctx.bindings_of(name)
        if not bindings:
            return False
        scope = self.ctx.scopes.current
        return all(b.kind not in (BindingKind.PARAMETER, BindingKind.IMPORT, BindingKind.FUNCTION, BindingKind.CLASS) and b.scope is scope for b in bindings)

    def _keep(self, node: cst.CSTNode, value: cst.BaseExpression, target: cst.BaseExpression, point: Point) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements):
            for left, right in zip(target.elements, value.elements):  # ``prev_w, prev_b = w.detach(), b.detach()``
                self._keep(node, right.value, left.value, point)
            return
        found = self._taken(value)
        name = target.value if isinstance(target, cst.Name) else target.attr.value if isinstance(target, cst.Attribute) else None
        if found is None and name is not None:
            found = self._module_kept(value, name) or self._parameters_kept(value, name)
        if found is None:
            return
        taken, root = found
        # A module kept by reference reads as the assignment (``best_model = model``).
        text = f"{_short(target, 30)} = {_short(value)}" if taken.reference else _short(value)
        snapshot = _Snapshot(node, self.ctx.top_statement, text, taken, point, source_root=root)
        if isinstance(target, cst.Name):
            if target.value == root:
                return  # ``x = x.detach()``: the source is no longer reachable by its name
            snapshot.holder, snapshot.holder_node = target.value, target
        elif isinstance(target, cst.Attribute):
            if target.attr.value in ("data", "grad"):
                return
            snapshot.escape, snapshot.escape_name = f"stored on `{_short(target, 30)}`", target.attr.value
        elif isinstance(target, cst.Subscript):
            container = target.value
            if isinstance(container, cst.Name) and self._is_local(container):
                snapshot.holder = container.value
            else:
                snapshot.escape, snapshot.escape_name = f"stored in `{_short(container, 30)}`", _identifier(container) or ""
        else:
            return
        snapshot.fix = self._fix(value, taken, snapshot.holder or snapshot.escape_name)
        self._states[-1].snapshots.append(snapshot)

    def leave_Assign(self, node: cst.Assign) -> None:
        point = self.ctx.flow.point()
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and isinstance(node.value, cst.Name):
                self._states[-1].stored.setdefault(node.value.value, set()).add(_short(target.target))
            self._keep(node, node.value, target.target, point)
            dotted = dotted_name(target.target) if isinstance(target.target, cst.Attribute) else None
            if dotted is not None:
                self._states[-1].rebound.setdefault(dotted, []).append(point)
        self._record_write(node)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._keep(node, node.value, node.target, self.ctx.flow.point())

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_write(node)

    def leave_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in CONTAINER_ADDERS and node.args:
            item = node.args[-1] if func.attr.value == "insert" else node.args[0]
            container = func.value
            if item.keyword is None and not item.star and not self.ctx.value(container).is_tensor:
                found = self._taken(item.value)
                if found is not None:
                    taken, root = found
                    snapshot = _Snapshot(node, self.ctx.top_statement, _short(item.value), taken, self.ctx.flow.point(), source_root=root)
                    if isinstance(container, cst.Name) and self._is_local(container):
                        snapshot.holder = container.value
                    else:
                        snapshot.escape, snapshot.escape_name = f"kept in `{_short(container, 30)}`", _identifier(container) or ""
                    snapshot.fix = self._fix(item.value, taken, snapshot.holder or snapshot.escape_name)
                    self._states[-1].snapshots.append(snapshot)
        self._record_write(node)

    # -- what changes a source ------------------------------------------------------
    def _record_write(self, node: cst.CSTNode) -> None:
        changes = self._states[-1].changes
        if isinstance(node, cst.Call):
            called = method_call(node)
            if called is not None and called[1] == "load_state_dict":
                self._record_load(node, called[0])
                return
            callee = self.ctx.names.torch_qualname(node.func) or ""
            if callee.startswith("torch.nn.init.") and callee.endswith("_") and node.args:
                self._add_write(node.args[0].value, f"`{callee.rsplit('.', 1)[-1]}(...)`")
                return
            call = self._call_change(node)
            if call is not None:
                changes.append(_Change(self.ctx.flow.point(), "call", None, f"`{_short(node.func)}(...)`", call))
        write = inplace_write(node)
        if write is None:
            return
        written, operation = write
        self._add_write(written, f"in-place `{_short(written, 30)}{operation}`")

    def _record_load(self, node: cst.Call, owner_expr: cst.BaseExpression) -> None:
        """``model.load_state_dict(sd)`` changes ``model``, unless ``sd`` is ``model``'s own
        state (restoring a snapshot of it into it changes nothing it shares)."""
        owner = dotted_name(owner_expr)
        if owner is None or self.ctx.value(owner_expr).kind not in (Kind.MODULE, Kind.UNKNOWN, Kind.OPTIMIZER):
            return
        positional = positional_args(node)
        if positional:
            alias = _snapshot_alias(self.ctx.value(positional[0].value))
            origin = _origin(alias) if alias is not None else None
            if origin is not None and dotted_name(origin[1]) == owner:
                return
        self._states[-1].changes.append(_Change(self.ctx.flow.point(), "load", owner, f"`{_short(node.func)}(...)`"))

    def _call_change(self, node: cst.Call) -> _CallChange | None:
        """A call that may change a module, parameters or an optimizer it is given."""
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name is None or self.ctx.names.qualname(func) is not None:
            return None  # torch.save(...), np.mean(...): library calls that do not train
        if isinstance(func, cst.Name) and self.ctx.model.is_builtin(func) and name in _HARMLESS_BUILTINS:
            return None
        receiver = None
        if isinstance(func, cst.Attribute):
            if name in _HARMLESS_METHODS:
                return None
            receiver_kind = self.ctx.value(func.value).kind
            if receiver_kind in (Kind.TENSOR, Kind.CONTAINER, Kind.SCALAR, Kind.ARRAY):
                return None
            root = dotted_name(func.value)
            receiver = _root(root) if root else None
        function = self.ctx.value(func).function
        local = isinstance(function, cst.FunctionDef)
        trains = self.ctx.model.trains(function) if local else naming.is_training_call(name, receiver)  # type: ignore[arg-type]
        reads = frozenset(names_read(cst.List([cst.Element(argument.value) for argument in node.args]))) if node.args else frozenset()
        optimizer_given = any(self.ctx.value(argument.value).kind is Kind.OPTIMIZER for argument in node.args)
        if not (trains or optimizer_given):
            return None
        free = self.ctx.model.free_names(function) if local and trains else frozenset()  # type: ignore[arg-type]
        holds = self._modules_built_with(func.value) if local and trains and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) else frozenset()
        return _CallChange(reads, receiver, trains, local, optimizer_given, free, holds)

    def _modules_built_with(self, receiver: cst.Name) -> frozenset[str]:
        """The names of modules passed to the call that made ``receiver`` (``trainer =
        Trainer(model, optimizer)``): a method of it that trains may train them."""
        names: set[str] = set()
        for binding in self.ctx.bindings_of(receiver):
            if binding.kind is BindingKind.ASSIGNMENT and not binding.path and isinstance(binding.value, cst.Call):
                for argument in binding.value.args:
                    if isinstance(argument.value, cst.Name) and self.ctx.value(argument.value).kind is Kind.MODULE:
                        names.add(argument.value.value)
        return frozenset(names)

    def _module_names_of(self, root: str) -> set[str]:
        """``root`` and the modules its bindings in this scope are made from (``raw =
        model.module if distributed else model``: ``model``)."""
        found = {root}
        for binding in self.ctx.scopes.current.every.get(root, ()):
            if binding.kind is BindingKind.ASSIGNMENT and binding.value is not None:
                found.update(name for name in names_read(binding.value) if name != root and any(b.kind is not BindingKind.IMPORT for b in self.ctx.scopes.current.every.get(name, ())))
        return found

    def _add_write(self, written: cst.BaseExpression, text: str) -> None:
        tensor = written_tensor(written)
        dotted = dotted_name(tensor)
        if dotted is None:
            return
        point = self.ctx.flow.point()
        changes = self._states[-1].changes
        changes.append(_Change(point, "write", dotted, text))
        if isinstance(tensor, cst.Name):
            # ``for p in model.parameters(): p.add_(...)`` changes ``model``'s state.
            for binding in self.ctx.bindings_of(tensor):
                if binding.kind in (BindingKind.LOOP_TARGET, BindingKind.COMPREHENSION_TARGET) and binding.value is not None:
                    called = method_call(binding.value)
                    if called is not None and called[1] in PARAMETER_ITERATORS | NAMED_PARAMETER_ITERATORS:
                        owner = dotted_name(called[0])
                        if owner is not None:
                            changes.append(_Change(point, "write", owner, text, every_parameter=True))

    # -- decision -------------------------------------------------------------------
    def _relevant(self, change: _Change, taken: _Taken) -> bool:
        if change.kind in ("write", "load"):
            # A load changes everything in the module; a write to each of its parameters, every
            # parameter in it (``model.encoder.weight``) and the state of a module in it.
            whole = change.kind == "load" or (change.every_parameter and taken.kind in ("param", "module"))
            return taken.kind != "optimizer" and change.written is not None and _changes(change.written, taken.source, whole)
        if taken.kind not in _TRAINED:
            return False
        if change.kind == "step":
            return not (taken.kind == "optimizer" and change.written is not None and not _changes(change.written, taken.source, True))
        call = change.call
        assert call is not None
        root = _root(taken.source)
        given = root in call.reads or root == call.receiver
        if call.local:
            # A local function that trains: given the model (or its holder), or reaching
            # it by itself (a method of the same object, a closure, a global).
            return call.trains and (given or not call.reads or root == "self" or root in call.free or bool(call.holds and call.holds & self._module_names_of(root)))
        # An unknown function: named like training and given it (or given nothing), or
        # given it together with an optimizer (``run(model, opt)``).
        return (call.trains and (given or (not call.reads and call.receiver is None))) or (given and call.optimizer_given)

    def _changes_of(self, snapshot: _Snapshot, state: _State) -> list[_Change]:
        found = [change for change in state.changes if self._relevant(change, snapshot.taken)]
        if snapshot.taken.kind in _TRAINED:
            for event in self.ctx.flow.call_events:
                if event.kind == "step":
                    change = _Change(event.point, "step", event.target, f"`{_short(event.node.func)}()`")
                    if self._relevant(change, snapshot.taken):
                        found.append(change)
        return found

    def _decide(self, state: _State) -> None:
        if not state.snapshots:
            return
        names = self.ctx.flow.name_events
        for snapshot in state.snapshots:
            changes = self._changes_of(snapshot, state)
            rebinds = _rebinds(snapshot.taken.source, state)
            if rebinds:
                # ``old = self.fc; self.fc = nn.Linear(...); self.fc.weight[:k] = old.weight``:
                # past a new binding of the source, its name reaches another object (an
                # optimizer's step still changes what it was given)
                changes = [change for change in changes if change.kind == "step" or may_flow(snapshot.point, change.point, rebinds)]
            source_kills = [event.point for event in names.get(snapshot.source_root or "", ()) if event.store] if snapshot.source_root else []
            if snapshot.escape is not None:
                if snapshot.taken.kind in _TRAINED and self._kept_for_later(snapshot.taken, snapshot.escape_name) and self._held_twice(snapshot, state):
                    # Kept under a name that says "snapshot" (``self.best``, ``history``) while
                    # the source trains on: a reference kept on purpose has another name.
                    self._report(snapshot, f"{snapshot.escape} while `{snapshot.taken.source}` keeps training")
                    continue
                for change in changes:
                    if may_flow(snapshot.point, change.point, source_kills):
                        self._report(snapshot, f"{snapshot.escape}, then {change.text}")
                        break
                continue
            events = names.get(snapshot.holder or "", [])
            kills = [event.point for event in events if event.store]
            start = snapshot.point
            if snapshot.holder_node is not None:
                for event in events:
                    if event.node is snapshot.holder_node:
                        start = event.point
                        break
            uses = [event.point for event in events if not event.store and event.point.order != start.order]
            reason = self._hazard(start, changes, uses, kills, source_kills)
            if reason is not None:
                self._report(snapshot, reason)

    @staticmethod
    def _held_twice(snapshot: _Snapshot, state: _State) -> bool:
        """Whether a module kept by reference is also held under its own name for training:
        an attribute (``self.target_net = self.policy_net``) or a name stored on another
        attribute too (``self.policy_net = net; self.target_net = net``). A module handed in
        (or built) and stored once (``self.teacher = teacher``, ``self.model_ema = model_ema``)
        is the object's own reference, not a second name for a model that trains. A shallow
        copy (``self.target = copy.copy(encoder)``) was meant as a second model."""
        if not snapshot.taken.reference or snapshot.taken.origin is None and "." in snapshot.taken.source:
            return True
        if snapshot.taken.copied:
            return True
        return len(state.stored.get(snapshot.taken.source, ())) > 1

    @staticmethod
    def _kept_for_later(taken: _Taken, name: str) -> bool:
        """A state dict stored anywhere; a module reference under a name for a copy of a model
        (``target_net``); a detached tensor under a snapshot name (``history``, ``init``)."""
        if taken.state:
            return True
        return naming.is_model_copy_name(name) if taken.reference else naming.is_snapshot_name(name)

    @staticmethod
    def _hazard(start: Point, changes: list[_Change], uses: list[Point], kills: list[Point], source_kills: list[Point]) -> str | None:
        for change in changes:
            if not may_flow(start, change.point, kills + source_kills):
                continue
            for use in uses:
                if may_flow(change.point, use, kills):
                    return f"it is read after {change.text}"
        return None

    def _report(self, snapshot: _Snapshot, reason: str) -> None:
        node, top, fix, text = snapshot.node, snapshot.top, snapshot.fix, snapshot.text
        origin = snapshot.taken.origin
        if isinstance(origin, cst.Name):
            # Made in a helper and returned: reported where the alias is made (the fix is there).
            origin_top = self.ctx.model.top_statement_of(origin)
            if origin_top is not None:
                node, top, fix = origin, origin_top, None
                text = f"{snapshot.text} (returned by a helper)"
        self.report(node, fix, top=top, snapshot=text, source=snapshot.taken.source, reason=reason, copy=snapshot.taken.fix)


def _rebinds(source: str, state: _State) -> list[Point]:
    """When an attribute chain ``source`` (``self.fc``) or one it is read through
    (``self.model`` of ``self.model.fc``) is assigned in the function: from there on the
    name holds another object."""
    parts = source.split(".")
    return [point for end in range(2, len(parts) + 1) for point in state.rebound.get(".".join(parts[:end]), ())]


def _rerooted(chain: cst.BaseExpression, root: cst.BaseExpression) -> cst.BaseExpression:
    """``chain`` read from ``root`` instead of its own first name (``self.net`` of a helper,
    from the caller's ``trainer``: ``trainer.net``)."""
    if isinstance(chain, cst.Attribute):
        return chain.with_changes(value=_rerooted(chain.value, root))
    return root


def _copying_elements(comprehension: cst.ListComp | cst.GeneratorExp | cst.SetComp | cst.DictComp) -> cst.BaseExpression:
    """The comprehension with a copy of each element: ``{n: p.detach().clone() for ...}``."""
    element = comprehension.value if isinstance(comprehension, cst.DictComp) else comprehension.elt
    viewed = detached_view(element)
    if isinstance(element, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
        copied: cst.BaseExpression = _copying_elements(element)  # rows of a nested comprehension: copy their elements
    else:
        copied = call_method(as_receiver(element), "clone") if viewed is not None else detach_clone(element)
    if isinstance(comprehension, cst.DictComp):
        return comprehension.with_changes(value=copied)
    return comprehension.with_changes(elt=copied)




def _identifier(expr: cst.BaseExpression) -> str | None:
    expr = subscripted(expr)
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None
