"""TCL005 detached-inplace: an in-place write to ``x.detach()`` used as its own value.

See rules/TCL005-detached-inplace.md. Two forms are reported:

- a write (``d.mul_(2)``, ``d += 1``, ``d[i] = 0``) through a name bound to ``x.detach()``
  (or a view of it) while ``x`` is still used afterwards: read again, or (when ``x``
  requires grad and fed a computation before the write) a ``backward()`` follows;
- a chained write whose result is used as a value: ``y = x.detach().mul_(2)``.

A standalone ``p.detach().copy_(q)`` statement only updates ``p`` and is not reported.
"Afterwards" needs the rest of the function, so named writes are decided when the
function (or the module) ends, from the flow analysis' ordered name loads and stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.aliasing import detached_view, inplace_write, strip_views, writes_values, written_tensor
from torchcopy_lint.analysis.keeping import CONTAINER_ADDERS
from torchcopy_lint.analysis.cst_helpers import chain_root, dotted_name, short_code, subscripted
from torchcopy_lint.analysis.flow import Point, may_flow
from torchcopy_lint.analysis.bindings import BindingKind
from torchcopy_lint.analysis.values import Alias, AliasHow, Grad, Kind, Value
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts, is_detached_evidence
from torchcopy_lint.fixes.builders import method_call
from torchcopy_lint.fixes.model import UNSAFE, Fix


@dataclass
class _Write:
    node: cst.CSTNode
    top: cst.CSTNode | None
    point: Point
    view: str  # what is written to (``d``, ``d[0]``, ``d.view(-1)``)
    source: str  # dotted source
    operation: str
    requires_grad: bool
    fix: Fix | None = None
    holder: str = ""  # the name bound to the detached alias (``d``)
    alias: str = ".detach()"  # how the alias was made: ``.detach()`` or ``.data``
    outlives: str | None = None  # why the source is used after this function anyway
    copied: str = ""  # what to copy instead (``losses[0]`` of ``losses[0].detach()``; the source by default)
    drawn_from: str | None = None  # the container a loop target holder iterates (``soup`` of ``for n, d in soup.items()``)
    fed: bool = False  # the source fed a computation before the write without being read by name (see _made_with_siblings)
    holders: tuple[str, ...] = ()  # local containers the source was put into before the write (``outs.append(x)``)


@dataclass
class _State:
    writes: list[_Write] = field(default_factory=list)
    detach_receivers: set[int] = field(default_factory=set)  # ids of ``x`` in ``x.detach()``
    # Attribute sources (``self.weight``) of ``.detach()`` calls -> their loads (False) and
    # stores (True) from then on.
    watched: dict[str, list[tuple[Point, bool]]] = field(default_factory=dict)
    # Local containers given a name's tensor (``outs.append(x)``): id(binding of x) -> their names.
    held_in: dict[int, list[str]] = field(default_factory=dict)


def _clone_after_detach(expr: cst.BaseExpression) -> Fix | None:
    """``x.detach()`` (the base of ``expr``, a detached view) as ``x.detach().clone()``.

    Unsafe: the write then stays in the copy, which is the point where the copy was meant
    as a value of its own, but code that meant to update ``x`` without autograd
    (masking or pruning weights through ``w = x.detach(); w[mask] = 0``) stops updating it.
    """
    base = strip_views(expr)
    if not (isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) and base.func.attr.value == "detach"):
        return None
    return Fix(UNSAFE, ((base, method_call(base, "clone")),))


def _short(node: cst.CSTNode, limit: int = 40) -> str:
    return short_code(node, limit)


_DETACHED = (AliasHow.DETACH, AliasHow.DATA)
# What puts one value into a container (``list.insert(i, x)``: the value is the last argument);
# ``extend`` puts in the elements of its argument, not the argument.
_HOLDING_METHODS = CONTAINER_ADDERS - {"extend"}



class DetachedInplace(Checker):
    code = "TCL005"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """A chained in-place call on ``x.detach()`` itself, or a write through a name or an
        attribute that may hold something from ``detach()`` or ``.data`` (the only writes
        :meth:`_record` judges: ``d.mul_(2)``, ``d[0] = 1``, ``d.view(-1).add_(1)`` with ``d =
        x.detach()``; ``self.anchor *= 0.9``; ``prev[n].mul_(0.5)``)."""
        if facts.detach_chain_written:
            return True
        rooted = [write for write in facts.value_writes if write.root is not None]
        if not rooted:
            return False
        reached = facts.reaching(is_detached_evidence)
        return any(facts.event_reaches(write, reached, is_detached_evidence, (write.root,)) for write in rooted)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.ctx.flow.log_names()
        self._states: list[_State] = []

    # -- frames -------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._states.append(_State())

    def leave_Module(self, node: cst.Module) -> None:
        self._decide(self._states.pop())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._states.append(_State())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._decide(self._states.pop())

    # -- is it a tensor's detached view -----------------------------------------------
    def _tensor_source(self, source: cst.BaseExpression) -> bool:
        if not self.ctx.names.imports_torch or self.ctx.value(source).surely_not_tensor:
            return False
        qualname = self.ctx.names.qualname(source)
        return qualname is None or qualname.startswith("torch")  # not ``sys.stdout.detach()``

    def _detached_source(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        viewed = detached_view(expr)
        if viewed is None or viewed[1] != "detach" or not self._tensor_source(viewed[0]):
            return None
        return viewed[0]

    # -- chained writes used as values ---------------------------------------------
    def _note_held(self, container: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``outs.append(x)``, ``outs[i] = x``: the local container ``outs`` holds ``x``'s tensor,
        and sees a later write through ``x``'s detached alias."""
        if not (isinstance(container, cst.Name) and isinstance(value, cst.Name) and self._states):
            return
        held_in = self._states[-1].held_in
        for binding in self.ctx.bindings_of(value):
            holders = held_in.setdefault(id(binding), [])
            if container.value not in holders:
                holders.append(container.value)

    def _holders(self, source: cst.BaseExpression) -> tuple[str, ...]:
        if not isinstance(source, cst.Name):
            return ()
        held_in = self._states[-1].held_in
        found = [holder for binding in self.ctx.bindings_of(source) for holder in held_in.get(id(binding), ())]
        return tuple(dict.fromkeys(found))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _HOLDING_METHODS and node.args:
            self._note_held(func.value, node.args[-1].value)
        if isinstance(func, cst.Attribute) and func.attr.value == "detach" and not node.args:
            source = func.value
            if isinstance(source, cst.Name):
                self._states[-1].detach_receivers.add(id(source))
            else:
                held = subscripted(source)  # ``self.weight``, ``self.fisher`` of ``self.fisher[n]``
                if isinstance(held, cst.Attribute):
                    dotted = dotted_name(held)
                    if dotted is not None:
                        self._states[-1].watched.setdefault(dotted, [])
        if not (isinstance(func, cst.Attribute) and writes_values(func.attr.value)):
            self._check_helper_writes(node)
            return
        receiver = func.value
        # Peel earlier in-place calls of the same chain: ``x.detach().mul_(2).add_(1)``.
        while True:
            receiver = strip_views(receiver)
            if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and writes_values(receiver.func.attr.value):
                receiver = receiver.func.value
            else:
                break
        self._check_chained(node, receiver, _short(func.value), f".{func.attr.value}(...)")

    def _check_helper_writes(self, node: cst.Call) -> None:
        """``f(x.detach())`` where ``f``, a function of the file, writes that parameter in place
        (``def l2_normalize_(t): return t.div_(t.norm())``): the same write as a chained one."""
        if not isinstance(node.func, (cst.Name, cst.Attribute)) or not self._states:
            return
        arguments = [argument.value for argument in node.args if argument.keyword is None and not argument.star]
        if not any(detached_view(argument) is not None for argument in arguments):
            return
        model = self.ctx.model
        written = {index - offset for info, offset in model.called_functions(self.ctx.value(node.func)) for index in model.written_arguments(info)}
        for index in sorted(written):
            if 0 <= index < len(arguments):
                self._check_chained(node, arguments[index], f"{_short(node.func)}({_short(arguments[index])})", "")

    def _check_chained(self, node: cst.Call, receiver: cst.BaseExpression, view: str, operation: str) -> None:
        """Report the write ``node`` makes to ``receiver`` when it is a tensor's detached view
        and the written result is used as a value (or the tensor has history)."""
        source = self._detached_source(receiver)
        if source is None:
            return
        use = self._use_of_chain(node)
        if use == "value":
            reason = "and the result is used as a separate value"
        elif use == "statement" and self.ctx.value(source).has_history and not self.ctx.grad.disabled:
            # ``out.detach().div_(norm)`` on a module output: the forward value changes, its
            # gradient does not know (a parameter updated so, as swa_utils does, is no such case).
            reason = "which has autograd history: its gradient does not see the change"
        else:
            return
        self.report(
            node,
            fix=_clone_after_detach(receiver) if use == "value" else None,  # a copy written by a statement would be lost
            view=view,
            source=_short(source),
            copy=f"{_short(source)}.detach().clone()",
            operation=operation,
            alias=".detach()",
            reason=reason,
        )

    def _use_of_chain(self, node: cst.Call) -> str:
        """"statement" for a standalone statement ``p.detach().copy_(q)``, "link" for a link
        of a longer in-place chain (``x.detach().mul_(2).add_(1)``: the last call decides) or
        a callback's body (``module.apply(lambda m: ...)``), else "value"."""
        parents = self.ctx.parents
        parent = parents[-1] if parents else None
        if isinstance(parent, cst.Expr):
            return "statement"
        if isinstance(parent, cst.Lambda):
            return "link"
        if isinstance(parent, cst.Attribute) and parent.value is node and len(parents) > 1:
            grand = parents[-2]
            if isinstance(grand, cst.Call) and grand.func is parent and writes_values(parent.attr.value):
                return "link"
        return "value"

    # -- writes through a name bound to ``x.detach()`` -----------------------------------
    def _record(self, node: cst.CSTNode) -> None:
        write = inplace_write(node)
        if write is None:
            return
        written, operation = write
        held = self._alias_holder(node, written)
        if held is None:
            return
        holder, alias = held
        source_value: Value | None = alias.source_value if alias is not None else None
        if alias is None:
            # ``d = x.data`` of an ``x`` the file does not type: written in place like a tensor.
            untyped = self._untyped_data(holder) if isinstance(holder, cst.Name) else None
            if untyped is None:
                return
            source, source_value, made = untyped, self.ctx.value(untyped), ".data"
        else:
            source = alias.source
            made = ".data" if alias.how is AliasHow.DATA else ".detach()"
        for _ in range(8):
            # ``adv = x.detach()``, then in a loop ``adv = adv.detach(); adv += step``: an alias of
            # the holder's own earlier alias still writes into ``x`` (on the first pass at least).
            if not (isinstance(source, cst.Name) and isinstance(holder, cst.Name) and source.value == holder.value):
                break
            earlier = self.ctx.value(source).alias  # asked again: the alias's own copy may predate a loop's fixpoint
            if earlier is None or earlier.how not in _DETACHED:
                break
            source, source_value = earlier.source, earlier.source_value
        if not self._tensor_source(source):
            return
        copied = _short(source)
        if isinstance(source, cst.Name) and source_value.alias is not None and source_value.alias.how is AliasHow.VIEW:
            bindings = self.ctx.bindings_of(source)
            if bindings and all(binding.kind is BindingKind.COMPREHENSION_TARGET for binding in bindings):
                # ``[t.detach() for t in h.split(8)]``: each ``t`` is a view of ``h``, which outlives the comprehension.
                source, source_value = source_value.alias.source, source_value.alias.source_value
        dotted = dotted_name(source)
        if dotted is None and isinstance(source, cst.Subscript):
            # ``losses[0].detach()``, ``self.fisher[n].detach()``: an item of ``losses``, ``self.fisher``
            held_by = subscripted(source)
            dotted = held_by.value if isinstance(held_by, cst.Name) else dotted_name(held_by) if isinstance(held_by, cst.Attribute) else None
        if dotted is None and isinstance(source, cst.Attribute) and chain_root(source.value, items=True) is not None:
            # ``self.teacher[-1].weight.detach()``: held by an indexed object; later reads of the
            # chain are not followed, so only its outliving the function (below) can decide.
            dotted = _short(source)
        holder_name = holder.value if isinstance(holder, cst.Name) else dotted_name(holder)
        if dotted is None or holder_name is None or dotted == holder_name:
            return  # ``model(x).detach()``: nobody else holds the source
        state = self._states[-1]
        if "." in holder_name:
            state.watched.setdefault(holder_name, [])  # its reads from here on: is it used as a value?
        fix = None
        bindings = self.ctx.bindings_of(holder) if isinstance(holder, cst.Name) and alias is not None and holder is written_tensor(written) and self.ctx.value(holder).alias is alias else []
        if len(bindings) == 1 and bindings[0].value is not None and not bindings[0].path:
            fix = _clone_after_detach(bindings[0].value)
        assert source_value is not None
        record = _Write(node, self.ctx.top_statement, self.ctx.flow.point(), _short(written), dotted, operation, source_value.requires_grad, fix, holder_name, made, self._outlives(source, source_value), copied, self._drawn_from(holder), self._made_with_siblings(source), self._holders(source))
        state.writes.append(record)

    def _made_with_siblings(self, source: cst.BaseExpression) -> bool:
        """Whether ``source`` is one of several outputs of one module call (``pred, feat =
        model(x)``): the module may have computed the others from it (a head over the global
        features) and saved it for their backward, so it fed a computation before any read."""
        if not isinstance(source, cst.Name):
            return False
        bindings = self.ctx.bindings_of(source)
        return bool(bindings) and all(
            binding.path and isinstance(binding.value, cst.Call) and self.ctx.model.value(binding.value.func).kind is Kind.MODULE
            for binding in bindings
        )

    def _drawn_from(self, holder: cst.BaseExpression) -> str | None:
        """The container a loop target iterates (``soup`` for ``acc`` in ``for n, acc in
        soup.items()``): the aliases it holds are that container's items."""
        if not isinstance(holder, cst.Name):
            return None
        bindings = self.ctx.bindings_of(holder)
        if not bindings or any(binding.kind is not BindingKind.LOOP_TARGET or binding.value is None for binding in bindings):
            return None
        iterable = bindings[0].value
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("items", "values") and not iterable.args:
            iterable = iterable.func.value
        return iterable.value if isinstance(iterable, cst.Name) else None

    def _alias_holder(self, node: cst.CSTNode, written: cst.BaseExpression) -> tuple[cst.BaseExpression, Alias | None] | None:
        """What holds the detached alias a write goes through, and that alias (None: a name
        that may hold ``x.data`` of an untyped ``x``, see :meth:`_untyped_data`): a name bound to
        it (``d.mul_(2)``), an attribute set to it in any method (``self.anchor *= 0.9``), or an
        item of a container of such aliases (``prev[n].mul_(0.5)`` with ``prev = {n: p.detach()
        for ...}``; not ``prev[n] = v``, which replaces the item)."""
        view = written_tensor(written)  # ``d``, for ``d[0]``, ``d.view(-1)``, ``d.data``
        if isinstance(view, cst.Attribute):
            alias = self.ctx.value(view).alias
            return (view, alias) if alias is not None and alias.how in _DETACHED and dotted_name(view) is not None else None
        if not isinstance(view, cst.Name):
            return None
        value = self.ctx.value(view)  # through views and ``d /= ...`` the model keeps the alias
        if value.alias is not None and value.alias.how in _DETACHED:
            return view, value.alias
        if value.kind is Kind.CONTAINER:
            item = written
            while not (isinstance(item, cst.Subscript) and item.value is view):
                item = item.value if isinstance(item, (cst.Subscript, cst.Attribute)) else item.func.value if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) else None  # type: ignore[assignment]
                if item is None:
                    return None
            if isinstance(node, cst.Assign) and item is written:
                return None  # ``prev[n] = v`` puts a new item in
            alias = self.ctx.value(item).alias
            return (view, alias) if alias is not None and alias.how in _DETACHED else None
        return (view, None) if value.alias is None else None

    def _untyped_data(self, view: cst.Name) -> cst.BaseExpression | None:
        """``x`` when ``view`` is bound (once) to ``x.data`` and the file does not type ``x``."""
        bindings = self.ctx.bindings_of(view)
        if len(bindings) != 1 or bindings[0].value is None or bindings[0].path:
            return None
        viewed = detached_view(bindings[0].value)
        if viewed is None or viewed[1] != "data" or self.ctx.value(viewed[0]).kind is not Kind.UNKNOWN:
            return None
        return viewed[0]

    def _outlives(self, source: cst.BaseExpression, value: Value) -> str | None:
        """Why ``source`` is used after the function even if this function does not read it
        again: a module's parameter or a gradient, the caller's tensor, an attribute."""
        root = source
        while isinstance(root, cst.Attribute):
            root = root.value
        if value.grad is Grad.LEAF:
            return f"`{_short(source)}` is a parameter"
        if value.why == "a gradient":
            return f"`{_short(source)}` is a gradient the optimizer reads"
        if isinstance(root, cst.Name) and any(binding.kind is BindingKind.PARAMETER for binding in self.ctx.bindings_of(root)):
            return f"`{_short(source)}` is the caller's tensor" if root is source else f"`{_short(source)}` outlives the call"
        if isinstance(root, cst.Name) and root is source:
            # ``for k, v in state.items(): v.detach().add_(...)``: an element of the caller's container
            owners = [self.ctx.model.caller_owned(binding) for binding in self.ctx.bindings_of(root) if binding.kind is not BindingKind.PARAMETER]
            owner = next((owner for owner in owners if owner is not None), None)
            if owner is not None:
                return f"`{root.value}` is an element of the caller's `{owner.value}`"
        return None

    leave_Call = leave_AugAssign = _record

    def leave_Assign(self, node: cst.Assign) -> None:
        self._record(node)
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._note_held(target.target.value, node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        state = self._states[-1] if self._states else None
        if not state or not state.watched:
            return
        dotted = dotted_name(node)
        if dotted is None or dotted not in state.watched:
            return
        parent = self.ctx.parent
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "detach":
            return
        state.watched[dotted].append((self.ctx.flow.point(), isinstance(parent, cst.AssignTarget)))

    @staticmethod
    def _read_again(write: _Write, names: dict, state: _State) -> bool:
        if "." in write.holder:  # ``self.anchor``: its reads after the write
            seen = state.watched.get(write.holder, [])
            kills = [point for point, store in seen if store]
            return any(not store and may_flow(write.point, point, kills) for point, store in seen)
        events = names.get(write.holder, [])
        kills = [event.point for event in events if event.store]
        return any(not event.store and may_flow(write.point, event.point, kills) for event in events)

    # -- decision -------------------------------------------------------------------------
    def _decide(self, state: _State) -> None:
        if not state.writes:
            return
        names = self.ctx.flow.name_events
        backwards = [event.point for event in self.ctx.flow.call_events if event.kind == "backward"]
        for write in state.writes:
            if "." in write.source:
                seen = state.watched.get(write.source, [])
                loads = [point for point, store in seen if not store]
                kills = [point for point, store in seen if store]
                earlier = any(point.order < write.point.order for point in loads)
            else:
                events = names.get(write.source, [])
                kills = [event.point for event in events if event.store]
                loads = [event.point for event in events if not event.store and id(event.node) not in state.detach_receivers]
                earlier = write.fed or any(point.order < write.point.order for point in loads)
            reason = None
            if any(may_flow(write.point, load, kills) for load in loads):
                reason = f"and `{write.source}` is used afterwards"
            elif (container := next((held for held in write.holders if self._read_again(replace(write, holder=held), names, state)), None)) is not None:
                reason = f"and `{container}`, which holds it, is used afterwards"
            elif write.requires_grad and earlier and any(may_flow(write.point, point, kills) for point in backwards):
                reason = "and a later backward() needs its old value"
            elif write.outlives is not None and self._read_again(write, names, state):
                # ``d = layer.weight.detach(); d /= d.norm(); return d``: used as a value of
                # its own, while the write changed the module's weight.
                reason = f"and `{write.holder}` is then used as its own value, but {write.outlives}"
            elif write.outlives is not None and write.drawn_from is not None and self._read_again(replace(write, holder=write.drawn_from), names, state):
                # ``soup = {n: p.detach() ...}; for n, acc in soup.items(): acc.add_(...)``, then ``soup`` is used
                reason = f"and `{write.drawn_from}`, which holds it, is then used as its own value, but {write.outlives}"
            if reason is not None:
                self.report(write.node, write.fix, top=write.top, view=write.view, source=write.source, copy=f"{write.copied or write.source}.detach().clone()", operation=write.operation, alias=write.alias, reason=reason)
