"""TCL003 graph-attached-snapshot: ``x.clone()`` kept as a snapshot without ``detach()``.

See rules/TCL003-graph-attached-snapshot.md. A clone is a snapshot when the walk
finds it (possibly through graph-preserving methods such as ``.cpu()``, inside a
list/dict display or a comprehension) appended to a container, stored on an
attribute or a container item, or bound to a snapshot-like name.
"""

from __future__ import annotations

import re

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import code_of, positional_args, writes_in_place, short_code
from torchcopy_lint.analysis.tensors import GRAD_CUTTING_METHODS, NO, YES
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.fixes.builders import detach_then_clone, keep_parens
from torchcopy_lint.fixes.model import UNSAFE, Fix

# Methods after ``.clone()`` that keep the result attached to the same graph.
GRAPH_PRESERVING = frozenset(
    """
    to cpu cuda float double half bfloat16 view view_as reshape reshape_as contiguous squeeze unsqueeze
    flatten t transpose permute
    """.split()
)
# Methods that cut the result off the graph (or fail on a graph-attached tensor).
CUTTING = GRAD_CUTTING_METHODS | {"detach_", "requires_grad_"}
# Name parts that say "this value is kept for later".
SNAPSHOT_WORDS = frozenset(
    """
    prev previous old best saved snapshot snapshots snap init initial orig original copy backup history
    hist ema last before stored
    """.split()
)
CONTAINER_ADDERS = frozenset({"append", "appendleft", "insert", "extend"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def is_snapshot_name(name: str) -> bool:
    """``prev_w``, ``bestLoss``, ``w_init``, ``snapshot`` ...: a name that says "kept for later"."""
    return any(part.lower() in SNAPSHOT_WORDS for part in _WORD.findall(name))


def _short(node: cst.CSTNode, limit: int = 40) -> str:
    return short_code(node, limit)


class GraphAttachedSnapshot(Checker):
    code = "TCL003"
    triggers = ("clone",)

    def visit_Call(self, node: cst.Call) -> None:
        source = self._clone_source(node)
        if source is None or self.ctx.grad.disabled:
            return
        tensors = self.ctx.tensors
        if tensors.kind(source) is NO:
            return
        evidence = tensors.grad_evidence(source)
        if evidence is None:
            return
        where = self._kept_as(node)
        if where is None:
            return
        text = _short(source)
        if not isinstance(source, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not getattr(source, "lpar", None):
            text = f"({text})"
        # Unsafe: the snapshot stops carrying gradients, which changes training silently
        # where a gradient through it was meant (the rule's evidence is a heuristic).
        fixed = detach_then_clone(node, source, function_form=node.func.value is not source)  # type: ignore[attr-defined]
        fix = Fix(UNSAFE, ((node, keep_parens(node, fixed)),))
        self.report(node, fix=fix, clone=_short(node), where=where, evidence=evidence, instead=f"{text}.detach().clone()")

    def _clone_source(self, node: cst.Call) -> cst.BaseExpression | None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "clone":
            if self.ctx.names.torch_qualname(func) is not None:
                positional = positional_args(node)  # torch.clone(x)
                return positional[0].value if positional else None
            return func.value
        return None

    # -- is the clone kept? ---------------------------------------------------
    def _kept_as(self, node: cst.Call) -> str | None:
        """How the clone is kept ("appended to `history`" ...), or None when it is not a snapshot."""
        parents = self.ctx.parents
        current: cst.CSTNode = node
        index = len(parents) - 1
        wrapped = False  # inside a display or comprehension
        slot: int | None = None  # position in a tuple display that is assigned directly
        while index >= 0:
            parent = parents[index]
            grand = parents[index - 1] if index >= 1 else None
            if isinstance(parent, cst.Attribute) and parent.value is current:
                if not (isinstance(grand, cst.Call) and grand.func is parent):
                    return None  # ``x.clone().shape``
                method = parent.attr.value
                if method in CUTTING or method not in GRAPH_PRESERVING:
                    return None
                current, index = grand, index - 2
                continue
            if isinstance(parent, cst.Element) and isinstance(grand, (cst.List, cst.Tuple, cst.Set)):
                slot = grand.elements.index(parent) if isinstance(grand, cst.Tuple) and not wrapped else None
                current, index, wrapped = grand, index - 2, True
                continue
            if isinstance(parent, cst.DictElement) and parent.value is current and isinstance(grand, cst.Dict):
                current, index, wrapped, slot = grand, index - 2, True, None
                continue
            if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and parent.elt is current:
                current, index, wrapped, slot = parent, index - 1, True, None
                continue
            if isinstance(parent, cst.DictComp) and parent.value is current:
                current, index, wrapped, slot = parent, index - 1, True, None
                continue
            if isinstance(parent, cst.Arg) and parent.value is current and isinstance(grand, cst.Call):
                if wrapped and self._is_builtin_container(grand):
                    current, index, slot = grand, index - 2, None  # ``tuple(p.clone() for p in ...)``
                    continue
                return self._kept_by_call(grand, parent, wrapped)
            if isinstance(parent, cst.Assign) and parent.value is current:
                for target in parent.targets:
                    where = self._kept_by_target(target.target, slot)
                    if where is not None:
                        return where
                return None
            if isinstance(parent, cst.AnnAssign) and parent.value is current:
                return self._kept_by_target(parent.target, slot)
            if isinstance(parent, cst.AugAssign) and parent.value is current and wrapped and isinstance(parent.operator, cst.AddAssign):
                if isinstance(parent.target, cst.Name) and self.ctx.tensors.kind(parent.target) is not YES:
                    return f"added to `{parent.target.value}`"
                return None
            return None
        return None

    def _is_builtin_container(self, call: cst.Call) -> bool:
        func = call.func
        return (
            isinstance(func, cst.Name)
            and func.value in ("list", "tuple", "dict", "set")
            and len(call.args) == 1
            and self.ctx.scopes.lookup(func.value) is None
        )

    def _kept_by_call(self, call: cst.Call, arg: cst.Arg, wrapped: bool) -> str | None:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in CONTAINER_ADDERS:
            return None
        method = func.attr.value
        if method == "extend" and not wrapped:
            return None  # ``xs.extend(t.clone())`` iterates the clone: its rows, not a snapshot
        if method == "insert" and call.args.index(arg) != 1:
            return None
        if self.ctx.tensors.kind(func.value) is YES:
            return None
        return f"{'appended' if method != 'insert' else 'inserted'} to `{_short(func.value, 30)}`"

    def _kept_by_target(self, target: cst.BaseExpression, slot: int | None) -> str | None:
        if isinstance(target, (cst.Tuple, cst.List)):
            if slot is None or slot >= len(target.elements):
                return None
            return self._kept_by_target(target.elements[slot].value, None)
        if isinstance(target, cst.Attribute):
            if target.attr.value in ("data", "grad"):
                return None
            return f"stored on `{_short(target, 30)}`"
        if isinstance(target, cst.Subscript):
            if self.ctx.tensors.kind(target.value) is YES:
                return None  # ``out[i] = x.clone()`` copies values into a tensor
            return f"stored in `{_short(target.value, 30)}[...]`"
        if isinstance(target, cst.Name) and is_snapshot_name(target.value):
            scope = self.ctx.scopes.enclosing_function() or self.ctx.module
            if writes_in_place(scope, target.value):
                return None  # ``x_copy = x.clone(); x_copy.mul_(2)``: a working copy, not a snapshot
            return f"bound to `{target.value}`"
        return None
