"""TCL004 aliased-snapshot: a snapshot taken without a copy while its source keeps changing.

See rules/TCL004-aliased-snapshot.md. A snapshot is ``w.detach()`` / ``w.data`` (or a
view of them), ``model.state_dict()`` / ``optimizer.state_dict()`` (or a shallow copy:
``.copy()``, ``dict(...)``, ``{**sd}``, ``{k: v for k, v in sd.items()}``), or a list/dict
comprehension of ``p.detach()`` / ``p.data`` over ``model.parameters()``. It is reported

- when it is stored on an attribute or in a container that outlives the function and its
  source is trained state (a module's or optimizer's state, a parameter), or is changed
  in place afterwards in the same function;
- when it is held in a local name (or a local container) that is read after a change of
  its source: an optimizer step, a training call, an in-place write, ``load_state_dict``.

The decision needs "after", so the checker records the snapshots and the changes with
their :class:`~torchcopy_lint.analysis.flow.Point` and decides when the function (or the
module) ends, with the name loads and stores the flow analysis logged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from torchcopy_lint.analysis.aliasing import detached_view, inplace_write, is_snapshot_name, written_tensor
from torchcopy_lint.analysis.cst_helpers import code_of, dotted_name, method_call, names_read, positional_args, short_code
from torchcopy_lint.analysis.flow import Point, may_flow
from torchcopy_lint.analysis.tensors import MODULE_LIKE_NAMES, NO, YES
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.fixes.builders import as_receiver, deepcopy_call, detach_clone, keep_parens, method_call as call_method
from torchcopy_lint.fixes.model import SAFE, UNSAFE, Fix

# Evidence (from TensorInference.grad_evidence) that a tensor is trained state.
_PARAMETER_EVIDENCE = ("an nn.Parameter", "a parameter (", "an element of .parameters()", "an element of .named_parameters()", "requires_grad=True", "requires_grad_()")
_PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})
_CONTAINER_ADDERS = frozenset({"append", "appendleft", "insert", "add"})
_MODULE_WORDS = re.compile(r".*(?:model|net|module|encoder|decoder|backbone|layer|classifier|generator|discriminator|critic|actor|policy).*", re.I)
_TRAINED = frozenset({"module", "optimizer", "param"})
_MAX_DEPTH = 4


@dataclass(frozen=True)
class _Taken:
    """What a snapshot expression aliases."""

    kind: str  # module | optimizer | param | tensor
    source: str  # dotted source ("model", "self.model", "w") or its code
    fix: str


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
    kind: str  # write | load | step | train
    written: str | None  # dotted tensor written (write), module loaded (load), optimizer (step)
    text: str


@dataclass
class _State:
    snapshots: list[_Snapshot]
    changes: list[_Change]


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


class AliasedSnapshot(Checker):
    code = "TCL004"
    triggers = (".detach(", ".data", "state_dict(")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.ctx.flow.log_names()
        self._states: list[_State] = []

    # -- frames ---------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._states.append(_State([], []))

    def leave_Module(self, node: cst.Module) -> None:
        self._decide(self._states.pop())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._states.append(_State([], []))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._decide(self._states.pop())

    # -- what is a snapshot -----------------------------------------------------
    def _is_optimizer(self, expr: cst.BaseExpression) -> bool:
        name = _identifier(expr)
        if name is None:
            return False
        lower = name.lower()
        if "sched" in lower or "scaler" in lower:
            return False
        if "optim" in lower or lower == "opt" or lower.startswith("opt_") or lower.endswith("_opt"):
            return True
        callee = self._bound_callee(expr)
        return callee is not None and callee.startswith("torch.optim.") and callee.count(".") == 2

    def _is_module(self, expr: cst.BaseExpression) -> bool:
        name = _identifier(expr)
        if name is None:
            return False
        if name == "self":
            return self._in_module_class()
        if name.lower() in MODULE_LIKE_NAMES or _MODULE_WORDS.fullmatch(name):
            return True
        callee = self._bound_callee(expr)
        return callee is not None and (callee.startswith("torch.nn.") or callee == "torch.optim.swa_utils.AveragedModel") and callee.rsplit(".", 1)[-1][:1].isupper()

    def _bound_callee(self, expr: cst.BaseExpression) -> str | None:
        """The torch name of the call ``expr`` (a local name) was assigned from."""
        if not isinstance(expr, cst.Name):
            return None
        binding = self.ctx.scopes.lookup(expr.value)
        if binding is None or binding.kind != "assign" or not isinstance(binding.value, cst.Call):
            return None
        return self.ctx.names.torch_qualname(binding.value.func)

    def _in_module_class(self) -> bool:
        for scope in reversed(self.ctx.scopes.scopes):
            if scope.kind == "class" and isinstance(scope.node, cst.ClassDef):
                for base in scope.node.bases:
                    qualname = self.ctx.names.torch_qualname(base.value) or ""
                    name = _identifier(base.value) or ""
                    if qualname.startswith("torch.nn.") or name.endswith("Module"):
                        return True
                return False
        return False

    def _state_dict(self, expr: cst.BaseExpression, depth: int = 0) -> _Taken | None:
        """``model.state_dict()`` / ``optimizer.state_dict()``, a shallow copy of one, or a
        local name bound to one of those."""
        if depth > _MAX_DEPTH:
            return None
        called = method_call(expr)
        if called is not None and called[1] == "state_dict":
            owner = called[0]
            kind = "optimizer" if self._is_optimizer(owner) else "module" if self._is_module(owner) else None
            if kind is None:
                return None
            return _Taken(kind, dotted_name(owner) or _short(owner), f"copy.deepcopy({_short(expr)})")
        inner = self._shallow_copy_of(expr)
        if inner is not None:
            taken = self._state_dict(inner, depth + 1)
            if taken is not None:
                return _Taken(taken.kind, taken.source, f"copy.deepcopy({_short(inner)})")
            return None
        if isinstance(expr, cst.Name):
            binding = self.ctx.scopes.lookup(expr.value)
            if binding is not None and binding.kind in ("assign", "annassign") and binding.value is not None:
                return self._state_dict(binding.value, depth + 1)
        return None

    def _shallow_copy_of(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``sd`` for ``sd.copy()``, ``dict(sd)``, ``OrderedDict(sd)``, ``copy.copy(sd)``,
        ``{**sd}``, ``{k: v for k, v in sd.items()}`` (values kept or detached)."""
        if isinstance(expr, cst.Call):
            called = method_call(expr)
            if called is not None and called[1] == "copy" and not expr.args:
                qualname = self.ctx.names.qualname(expr.func)
                if qualname is None:
                    return called[0]
            positional = positional_args(expr)
            if len(positional) == 1 and len(expr.args) == 1:
                qualname = self.ctx.names.qualname(expr.func) or ""
                local = expr.func.value if isinstance(expr.func, cst.Name) and self.ctx.scopes.lookup(expr.func.value) is None else ""
                if qualname in ("copy.copy", "collections.OrderedDict", "typing.OrderedDict") or local in ("dict", "OrderedDict"):
                    return positional[0].value
            return None
        if isinstance(expr, cst.Dict) and expr.elements and isinstance(expr.elements[0], cst.StarredDictElement):
            return expr.elements[0].value
        if isinstance(expr, cst.DictComp):
            clause = expr.for_in
            if clause.inner_for_in is not None or not isinstance(clause.target, cst.Tuple) or len(clause.target.elements) != 2:
                return None
            value_name = clause.target.elements[1].value
            called = method_call(clause.iter)
            if called is None or called[1] != "items" or not isinstance(value_name, cst.Name):
                return None
            value = expr.value
            viewed = detached_view(value)
            if viewed is not None:
                value = viewed[0]
            if isinstance(value, cst.Name) and value.value == value_name.value:
                return called[0]
        return None

    def _parameter_comprehension(self, expr: cst.BaseExpression) -> _Taken | None:
        """``[p.data for p in model.parameters()]``, ``{n: p.detach() for n, p in m.named_parameters()}``."""
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            element = expr.elt
        elif isinstance(expr, cst.DictComp):
            element = expr.value
        else:
            return None
        clause = expr.for_in
        if clause.inner_for_in is not None:
            return None
        called = method_call(clause.iter)
        if called is None or called[1] not in _PARAMETER_ITERATORS:
            return None
        target = clause.target
        if called[1].startswith("named_"):
            if not (isinstance(target, cst.Tuple) and len(target.elements) == 2):
                return None
            target = target.elements[1].value
        viewed = detached_view(element)
        if viewed is None or not isinstance(target, cst.Name) or not (isinstance(viewed[0], cst.Name) and viewed[0].value == target.value):
            return None
        owner = called[0]
        return _Taken("module", dotted_name(owner) or _short(owner), f"[p.detach().clone() for p in {_short(clause.iter, 30)}]")

    def _detached(self, expr: cst.BaseExpression) -> tuple[_Taken, cst.BaseExpression] | None:
        viewed = detached_view(expr)
        if viewed is None:
            return None
        source, how = viewed
        if isinstance(source, cst.Name) and source.value in ("self", "cls"):
            return None  # ``self.data``: an attribute of an object
        if not self.ctx.names.imports_torch:
            return None
        kind = self.ctx.tensors.kind(source)
        if kind is NO:
            return None
        qualname = self.ctx.names.qualname(source)
        if qualname is not None and not qualname.startswith("torch"):
            return None  # ``sys.stdout.detach()``
        evidence = self.ctx.tensors.grad_evidence(source)
        trained = evidence is not None and evidence.startswith(_PARAMETER_EVIDENCE)
        text = _short(source)
        whole = how == "data" and isinstance(expr, cst.Attribute) and expr.attr.value == "data"
        fix = f"{text}.detach().clone()" if whole else f"{_short(expr)}.clone()"
        return _Taken("param" if trained else "tensor", dotted_name(source) or text, fix), source

    def _snapshot(self, expr: cst.BaseExpression) -> tuple[_Taken, str | None] | None:
        """``(what it aliases, the plain local name the source is read from)``, or None."""
        taken = self._state_dict(expr) if not isinstance(expr, cst.Name) else None
        if taken is not None:
            return taken, None
        detached = self._detached(expr)
        if detached is not None:
            taken, source = detached
            root = source.value if isinstance(source, cst.Name) else None
            return taken, root
        taken = self._parameter_comprehension(expr)
        if taken is not None:
            return taken, None
        if isinstance(expr, cst.IfExp):  # ``model.module.state_dict() if ddp else model.state_dict()``
            return self._snapshot(expr.body) or self._snapshot(expr.orelse)
        if isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                found = self._snapshot(element.value)
                if found is not None:
                    return found
        if isinstance(expr, cst.Dict):
            for item in expr.elements:
                if isinstance(item, cst.DictElement):
                    found = self._snapshot(item.value)
                    if found is not None:
                        return found
        return None

    # -- the fix: a copy instead of the alias ------------------------------------------
    def _fix(self, value: cst.BaseExpression, name: str | None) -> Fix | None:
        """A copy of the snapshot ``value`` when it is one itself (not one inside a display
        or a conditional). Safe when the name it is kept under says "kept for later"
        (``best``, ``prev``, ``history``): the code then means the old values."""
        applicability = SAFE if name and is_snapshot_name(name) else UNSAFE
        imports: tuple[str, ...] = ()
        old: cst.BaseExpression = value
        if isinstance(value, cst.Name):
            return None
        if self._state_dict(value) is not None:
            inner = value
            while method_call(inner) is None or method_call(inner)[1] != "state_dict":  # type: ignore[index]
                shallow = self._shallow_copy_of(inner)
                if shallow is None:
                    break
                inner = shallow
            new, imports = deepcopy_call(self.ctx, inner)
        elif self._detached(value) is not None:
            source, how = detached_view(value)  # type: ignore[misc]
            whole = how == "data" and isinstance(value, cst.Attribute)
            new = detach_clone(source) if whole else call_method(as_receiver(value), "clone")
        elif self._parameter_comprehension(value) is not None:
            old = value.value if isinstance(value, cst.DictComp) else value.elt  # type: ignore[union-attr]
            source, how = detached_view(old)  # type: ignore[misc]
            whole = how == "data" and isinstance(old, cst.Attribute)
            new = detach_clone(source) if whole else call_method(as_receiver(old), "clone")
        else:
            return None
        return Fix(applicability, ((old, keep_parens(old, new)),), imports)

    # -- where is it kept ---------------------------------------------------------
    def _is_local(self, name: str) -> bool:
        binding = self.ctx.scopes.lookup(name)
        if binding is None or binding.kind in ("param", "import", "def", "class"):
            return False
        return self.ctx.scopes.current.bindings.get(name) is binding

    def _keep(self, node: cst.CSTNode, value: cst.BaseExpression, target: cst.BaseExpression, point: Point) -> None:
        found = self._snapshot(value)
        if found is None:
            return
        taken, root = found
        snapshot = _Snapshot(node, self.ctx.top_statement, _short(value), taken, point, source_root=root)
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
            if isinstance(container, cst.Name) and self._is_local(container.value):
                snapshot.holder = container.value
            else:
                snapshot.escape, snapshot.escape_name = f"stored in `{_short(container, 30)}`", _identifier(container) or ""
        else:
            return
        snapshot.fix = self._fix(value, snapshot.holder or snapshot.escape_name)
        self._states[-1].snapshots.append(snapshot)

    def leave_Assign(self, node: cst.Assign) -> None:
        point = self.ctx.flow.point()
        for target in node.targets:
            self._keep(node, node.value, target.target, point)
        self._record_write(node)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._keep(node, node.value, node.target, self.ctx.flow.point())

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_write(node)

    def leave_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_ADDERS and node.args:
            item = node.args[-1] if func.attr.value == "insert" else node.args[0]
            container = func.value
            if item.keyword is None and not item.star and self.ctx.tensors.kind(container) is not YES:
                found = self._snapshot(item.value)
                if found is not None:
                    taken, root = found
                    snapshot = _Snapshot(node, self.ctx.top_statement, _short(item.value), taken, self.ctx.flow.point(), source_root=root)
                    if isinstance(container, cst.Name) and self._is_local(container.value):
                        snapshot.holder = container.value
                    else:
                        snapshot.escape, snapshot.escape_name = f"kept in `{_short(container, 30)}`", _identifier(container) or ""
                    snapshot.fix = self._fix(item.value, snapshot.holder or snapshot.escape_name)
                    self._states[-1].snapshots.append(snapshot)
        self._record_write(node)

    # -- what changes a source ------------------------------------------------------
    def _record_write(self, node: cst.CSTNode) -> None:
        changes = self._states[-1].changes
        if isinstance(node, cst.Call):
            called = method_call(node)
            if called is not None and called[1] == "load_state_dict" and self._is_module(called[0]):
                owner = dotted_name(called[0])
                if owner is not None:
                    changes.append(_Change(self.ctx.flow.point(), "load", owner, f"`{_short(node.func)}(...)`"))
                return
            callee = self.ctx.names.torch_qualname(node.func) or ""
            if callee.startswith("torch.nn.init.") and callee.endswith("_") and node.args:
                self._add_write(node.args[0].value, f"`{callee.rsplit('.', 1)[-1]}(...)`")
                return
        write = inplace_write(node)
        if write is None:
            return
        written, operation = write
        self._add_write(written, f"in-place `{_short(written, 30)}{operation}`")

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
            binding = self.ctx.scopes.lookup(tensor.value)
            if binding is not None and binding.kind in ("for", "comprehension") and binding.value is not None:
                called = method_call(binding.value)
                if called is not None and called[1] in _PARAMETER_ITERATORS:
                    owner = dotted_name(called[0])
                    if owner is not None:
                        changes.append(_Change(point, "write", owner, text))

    # -- decision -------------------------------------------------------------------
    def _changes_of(self, snapshot: _Snapshot, state: _State) -> list[_Change]:
        taken = snapshot.taken
        found = []
        if taken.kind != "optimizer":
            found = [
                change
                for change in state.changes
                if change.written is not None and _changes(change.written, taken.source, change.kind == "load")
            ]
        if taken.kind in _TRAINED:
            root = _root(taken.source)
            for event in self.ctx.flow.call_events:
                if event.kind == "train":
                    # ``train(model, loader, optimizer)``, ``self.train_epoch()``, ``train()``:
                    # not ``train(student)`` for a snapshot of ``teacher``.
                    if event.node.args and root not in names_read(event.node):
                        continue
                    found.append(_Change(event.point, "train", event.target, f"`{_short(event.node.func)}(...)`"))
                elif event.kind == "step":
                    if taken.kind == "optimizer" and event.target is not None and not _changes(event.target, taken.source, True):
                        continue
                    found.append(_Change(event.point, "step", event.target, f"`{_short(event.node.func)}()`"))
        return found

    def _decide(self, state: _State) -> None:
        if not state.snapshots:
            return
        names = self.ctx.flow.name_events
        for snapshot in state.snapshots:
            changes = self._changes_of(snapshot, state)
            source_kills = [event.point for event in names.get(snapshot.source_root or "", ()) if event.store] if snapshot.source_root else []
            if snapshot.escape is not None:
                if snapshot.taken.kind in _TRAINED and is_snapshot_name(snapshot.escape_name):
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
    def _hazard(start: Point, changes: list[_Change], uses: list[Point], kills: list[Point], source_kills: list[Point]) -> str | None:
        for change in changes:
            if not may_flow(start, change.point, kills + source_kills):
                continue
            for use in uses:
                if may_flow(change.point, use, kills):
                    return f"it is read after {change.text}"
        return None

    def _report(self, snapshot: _Snapshot, reason: str) -> None:
        details = {"snapshot": snapshot.text, "source": snapshot.taken.source, "reason": reason, "fix": snapshot.taken.fix}
        message = self.spec.message.format_map(details)
        self.ctx.report(snapshot.node, self.code, message, snapshot.fix, top=snapshot.top)


def _identifier(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None
