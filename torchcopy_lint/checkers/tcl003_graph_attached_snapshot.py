"""TCL003 graph-attached-snapshot: ``x.clone()`` kept as a snapshot without ``detach()``.

See rules/TCL003-graph-attached-snapshot.md. A clone of a tensor that requires grad (the
semantic model's evidence: a parameter, a module or hook output, a loss ...) is a
snapshot when its value is kept (:mod:`torchcopy_lint.analysis.keeping`): appended to a
container, stored on an attribute or in an item, bound to a snapshot-like name. Two ways
of keeping need the whole module and are decided after the walk: a clone bound to a
plain name that is later kept (``snap = out.clone(); history.append(snap)``), and a clone
returned by a helper whose callers keep the result (``init = snapshot(model)``) or
whose name says it makes a copy (``pretrained = snapshot_params(model)``).
"""

from __future__ import annotations

from functools import lru_cache

from dataclasses import dataclass

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import positional_args, short_code, writes_in_place
from torchcopy_lint.analysis.keeping import Kept, Way, kept_as
from torchcopy_lint.analysis.naming import is_snapshot_maker_name, is_snapshot_name
from torchcopy_lint.analysis.tensors import SWITCHED_ON
from torchcopy_lint.analysis.torch_api import GRAD_CUTTING_METHODS
from torchcopy_lint.analysis.values import Grad
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.fixes.builders import detach_then_clone, keep_parens
from torchcopy_lint.fixes.model import UNSAFE, Fix

# Methods after ``.clone()`` that keep the result attached to the same graph.
GRAPH_PRESERVING = frozenset(
    """
    to cpu cuda float double half bfloat16 view view_as reshape reshape_as contiguous squeeze unsqueeze
    flatten t transpose permute
    """.split()
)
_KEEPING = (Way.APPENDED, Way.ATTRIBUTE, Way.ITEM)


def _keeps_graph(method: str) -> bool:
    return method in GRAPH_PRESERVING and method not in GRAD_CUTTING_METHODS


def _short(node: cst.CSTNode, limit: int = 40) -> str:
    return short_code(node, limit)


@dataclass
class _Clone:
    """A clone of a tensor that requires grad, whose keeping is decided later."""

    node: cst.Call
    source: cst.BaseExpression
    evidence: str
    top: cst.CSTNode | None


class GraphAttachedSnapshot(Checker):
    code = "TCL003"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """A ``clone()``, made while grad is recorded, of something that may carry history."""
        return facts.any_event(facts.clones, facts.carries_history, with_grad=True)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._bound: dict[int, tuple[_Clone, str]] = {}  # id(binding) -> clone bound to a plain name
        self._named: dict[int, tuple[_Clone, str]] = {}  # id(binding) -> clone bound to a snapshot-like name in a function that does not train
        self._returned: dict[int, list[_Clone]] = {}  # id(function) -> clones it returns
        self._kept_loads: dict[int, Kept] = {}  # id(binding) -> how a later load of the name keeps it
        self._kept_calls: dict[int, tuple[str, Kept]] = {}  # id(function) -> how a call's result is kept
        self.defer(self._decide)

    def visit_Call(self, node: cst.Call) -> None:
        self._note_kept_call(node)
        source = self._clone_source(node)
        if source is None or self.ctx.grad.disabled:
            return
        value = self.ctx.value(source)
        switched_on = not value.requires_grad and self.ctx.tensors.grad_switched_on(source)
        if not (value.requires_grad or switched_on) or (value.grad is Grad.LEAF and self.ctx.tensors.grad_switched_off(source)):
            return  # ``model.requires_grad_(False)`` just before: the clone records nothing
        kept = kept_as(self.ctx, node, _keeps_graph, self._is_tensor)
        if kept is None:
            return
        why = SWITCHED_ON if switched_on else value.why or "it requires grad"
        clone = _Clone(node, source, why, self.ctx.top_statement)
        if kept.way is Way.RETURNED:
            function = self.ctx.scopes.enclosing_function()
            if isinstance(function, (cst.FunctionDef, cst.Lambda)):
                self._returned.setdefault(id(function), []).append(clone)
        elif kept.way is Way.NAME:
            name = kept.name or ""
            function = self.ctx.scopes.enclosing_function()
            if is_snapshot_name(name) and not writes_in_place(function or self.ctx.module, name):
                if self._outlives_a_step(function):
                    self._report(clone, kept.text)
                elif kept.binding is not None:
                    self._named.setdefault(id(kept.binding), (clone, kept.text))  # reported if it leaves the call
            elif kept.binding is not None:
                self._bound[id(kept.binding)] = (clone, kept.text)
        elif not self._forward_output(kept):
            self._report(clone, kept.text)

    def _forward_output(self, kept: Kept) -> bool:
        """Appended to a list local to ``forward()`` (``predictions.append(flow.clone())`` of a
        refinement loop that then writes ``flow`` in place): the module's outputs, made to carry
        gradients into this step's loss, not snapshots."""
        function = self.ctx.scopes.enclosing_function()
        if kept.way is not Way.APPENDED or not isinstance(kept.target, cst.Name) or not isinstance(function, cst.FunctionDef) or function.name.value != "forward":
            return False
        bindings = self.ctx.bindings_of(kept.target)
        return bool(bindings) and all(binding.scope.node is function for binding in bindings)

    def _outlives_a_step(self, function: cst.CSTNode | None) -> bool:
        """Whether a local snapshot may be read after a training step: at module level, or in
        a function that trains. ``x_init = x.clone()`` inside ``forward()`` (a residual, a
        learned initial state) lives for one pass and is meant to carry gradients; it is
        reported only if it leaves the call (returned, stored, added to a container)."""
        return not isinstance(function, (cst.FunctionDef, cst.Lambda)) or self.ctx.model.trains(function)

    def _is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.ctx.value(expr).is_tensor

    def _report(self, clone: _Clone, where: str) -> None:
        source, node = clone.source, clone.node
        text = _short(source)
        if not isinstance(source, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not getattr(source, "lpar", None):
            text = f"({text})"
        # Unsafe: the snapshot stops carrying gradients, which changes training silently
        # where a gradient through it was meant (the rule's evidence is a heuristic).
        fixed = detach_then_clone(node, source, function_form=node.func.value is not source)  # type: ignore[attr-defined]
        fix = Fix(UNSAFE, ((node, keep_parens(node, fixed)),))
        self.report(node, fix=fix, top=clone.top, clone=_short(node), where=where, evidence=clone.evidence, instead=f"{text}.detach().clone()")

    # -- kept later: through a name, through a helper's callers ----------------------------
    def visit_Name(self, node: cst.Name) -> None:
        """A load of a name in a place that keeps it (``history.append(snap)``)."""
        if type(self.ctx.parent) not in _keeping_parents():  # exact types: LibCST's isinstance is slow, these are final classes
            return
        bindings = self.ctx.bindings_of(node)
        if not bindings or self._keeps_another_item(self.ctx.parent, bindings):
            return
        kept = kept_as(self.ctx, node, _keeps_graph, self._is_tensor)
        if kept is None or kept.way is Way.NAME:
            return
        if kept.way is Way.RETURNED:
            function = self.ctx.scopes.enclosing_function()
            if not isinstance(function, (cst.FunctionDef, cst.Lambda)):
                return
            kept = Kept(Way.RETURNED, kept.text, binding=None, target=function)  # type: ignore[arg-type]
        for binding in bindings:
            self._kept_loads.setdefault(id(binding), kept)

    def _keeps_another_item(self, parent: cst.CSTNode | None, bindings: tuple) -> bool:
        """``self.xs.append(item[0])`` of ``item = (x[i], y[i], out.clone())``: an item that is
        not the clone is what this load keeps."""
        if type(parent) is not cst.Subscript or len(parent.slice) != 1 or not isinstance(parent.slice[0].slice, cst.Index):
            return False
        index = parent.slice[0].slice.value
        if not isinstance(index, cst.Integer):
            return False
        position = int(index.value, 0)
        for binding in bindings:
            display = binding.value
            if isinstance(display, cst.Tuple) and not binding.path and position < len(display.elements):
                element = display.elements[position].value
                if not (isinstance(element, cst.Call) and self._clone_source(element) is not None):
                    return True
        return False

    def _note_kept_call(self, node: cst.Call) -> None:
        """A call of a local function or of a lambda bound to a name whose result is kept
        (``init = snapshot(model)``, ``self.anchor = list(snapshots(model))`` of a generator)."""
        if not isinstance(node.func, (cst.Name, cst.Attribute)) or self.ctx.grad.disabled:
            return
        function = self.ctx.value(node.func).function
        if not isinstance(function, (cst.FunctionDef, cst.Lambda)) or id(function) in self._kept_calls:
            return
        kept = kept_as(self.ctx, node, _keeps_graph, self._is_tensor)
        if kept is None or kept.way is Way.RETURNED:
            return
        name = function.name.value if isinstance(function, cst.FunctionDef) else short_code(node.func, 30)
        if kept.way is Way.NAME and not (is_snapshot_name(kept.name or "") or is_snapshot_maker_name(name)):
            return  # ``out = helper(x)``: a plain result; ``anchor = snapshot_params(model)``: kept
        self._kept_calls[id(function)] = (name, kept)

    def _decide(self) -> None:
        for key, (clone, bound) in self._named.items():
            kept = self._kept_loads.get(key)
            if kept is None:
                continue  # it dies with the call
            if kept.way is Way.RETURNED and isinstance(kept.target, cst.FunctionDef) and kept.target.name.value == "forward":
                continue  # returned by ``forward()``: a module output, not a snapshot
            self._report(clone, bound)  # returned, stored or added: the snapshot outlives the call
        for key, (clone, bound) in self._bound.items():
            kept = self._kept_loads.get(key)
            if kept is None:
                continue
            if kept.way in _KEEPING:
                self._report(clone, f"{bound} and {kept.text}")
            elif kept.way is Way.RETURNED and isinstance(kept.target, (cst.FunctionDef, cst.Lambda)):
                self._returned.setdefault(id(kept.target), []).append(clone)
        for key, clones in self._returned.items():
            call = self._kept_calls.get(key)
            if call is None:
                continue
            name, kept = call
            for clone in clones:
                self._report(clone, f"returned by `{name}()` and {kept.text}")

    def _clone_source(self, node: cst.Call) -> cst.BaseExpression | None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "clone":
            if self.ctx.names.torch_qualname(func) is not None:
                positional = positional_args(node)  # torch.clone(x)
                return positional[0].value if positional else None
            return func.value
        return None


@lru_cache(maxsize=None)
def _keeping_parents() -> frozenset[type]:
    """Parents of a name load that may keep it (built on first use: LibCST loads lazily)."""
    return frozenset({cst.Arg, cst.Element, cst.DictElement, cst.Assign, cst.AnnAssign, cst.Attribute, cst.Return, cst.Subscript})
