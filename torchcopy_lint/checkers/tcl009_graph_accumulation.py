"""TCL009 graph-accumulation: tensors with autograd history kept across training-loop
iterations (see rules/TCL009-graph-accumulation.md).

An accumulation (``total += loss``, ``total = total + loss``, ``losses.append(loss)``,
``history[k] = out``) of a value with grad evidence is recorded as a candidate with
the loops around it. When the walk leaves a loop, the candidates in it are reported if
the loop (anywhere in its body, after the accumulation too) calls ``backward()`` or
steps an optimizer (``FlowTracker.events_in``) and the accumulator survives the loop's
iterations: it is bound outside the loop, not reset by a plain assignment at the top
level of the loop's body, and not itself what ``backward()`` is called on in the loop
(gradient accumulation over several batches consumes the accumulated graph).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import dotted_name, keyword_arg, positional_args
from torchcopy_lint.analysis.flow import LoopNode
from torchcopy_lint.analysis.scopes import Binding
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.walker import iter_children

# list.append / deque.appendleft / list.insert / list.extend, and a tensor accumulator's add_().
APPENDING_METHODS = frozenset({"append", "appendleft", "insert", "extend", "add_"})
PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})
CONCATENATING_FUNCTIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})


@dataclass
class Candidate:
    node: cst.CSTNode
    top: cst.CSTNode | None
    accumulator: str  # "total_loss", "self.losses", "history"
    binding: Binding | None  # binding of the accumulator's root name at the accumulation
    evidence: str
    value: str
    done: bool = False


def _accumulator_key(expr: cst.BaseExpression) -> str | None:
    """``losses`` for ``losses``, ``losses[k]`` and ``stats["loss"][i]``; ``self.losses`` likewise."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return dotted_name(expr)


def _has_clone(expr: cst.BaseExpression) -> bool:
    """``x.clone()``, ``x.clone().cpu()``, ``[a.clone(), b]``, ``torch.clone(x)``."""
    pending: list[cst.CSTNode] = [expr]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call):
            func = current.func
            if isinstance(func, cst.Attribute) and func.attr.value == "clone":
                return True
            if isinstance(func, cst.Attribute):
                pending.append(func.value)
        elif isinstance(current, (cst.List, cst.Tuple, cst.Set)):
            pending.extend(element.value for element in current.elements)
        elif isinstance(current, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            pending.append(current.elt)
    return False


def _descendant_ids(node: cst.CSTNode) -> set[int]:
    found: set[int] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        found.add(id(current))
        pending.extend(iter_children(current))
    return found


def _reads(expr: cst.CSTNode, key: str) -> bool:
    pending = [expr]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.Name, cst.Attribute)) and dotted_name(current) == key:
            return True
        pending.extend(iter_children(current))
    return False


def _resets(loop: LoopNode, key: str) -> bool:
    """A plain assignment ``key = ...`` (not ``key = key + x``) among the top-level
    statements of the loop body."""
    body = loop.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(dotted_name(target.target) == key for target in small.targets):
                if not _reads(small.value, key):
                    return True
            if isinstance(small, cst.AnnAssign) and small.value is not None and dotted_name(small.target) == key:
                if not _reads(small.value, key):
                    return True
    return False


class GraphAccumulation(Checker):
    code = "TCL009"
    triggers = ("backward", ".step(")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._candidates: dict[int, list[Candidate]] = {}  # id(loop) -> candidates inside it
        # id(loop) -> dotted names that backward() is called on in it (``acc.backward()``,
        # ``scaler.scale(acc / k).backward()``, ``torch.autograd.backward(acc)``).
        self._backward_on: dict[int, set[str]] = {}

    # -- evidence that an accumulated value carries a graph ----------------------
    def _evidence(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        if depth > 3:
            return None
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for element in expr.elements:
                found = self._evidence(element.value, depth + 1)
                if found:
                    return found
            return None
        if isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    found = self._evidence(element.value, depth + 1)
                    if found:
                        return found
            return None
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return self._evidence(expr.elt, depth + 1)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "sum" and self.ctx.scopes.lookup("sum") is None:
            args = positional_args(expr)
            return self._evidence(args[0].value, depth + 1) if args else None
        evidence = self.ctx.tensors.grad_evidence(expr)
        if evidence == "a loss" and isinstance(expr, cst.Name) and not self._computes_loss(expr):
            return None
        return evidence

    def _computes_loss(self, name: cst.Name) -> bool:
        """Whether a loss-named variable is evidence of a graph: ``val_loss = evaluate(...)``
        (a helper that likely returns ``.item()``) is not; ``loss = criterion(...)``,
        ``loss = self.compute_loss(...)``, ``loss = out.sum()`` are."""
        binding = self.ctx.scopes.lookup(name.value)
        if binding is None or binding.value is None or binding.kind not in ("assign", "annassign", "walrus"):
            return True
        value = binding.value
        if self.ctx.tensors.grad_evidence(value) is not None:
            return True  # evidence from the value itself, not from the name
        if isinstance(value, cst.Call):
            func = value.func
            if self.ctx.names.torch_qualname(func) is not None:
                return True  # F.cross_entropy(...), torch.nn.functional.nll_loss(...)
            callee = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            return any(word in callee.lower() for word in ("loss", "criterion", "objective"))
        return True

    def _is_leaf(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A parameter or a tensor created with ``requires_grad=True``: it requires grad but
        has no ``grad_fn``, so keeping it keeps no graph (``params.append(p)``)."""
        if depth > 4:
            return False
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in PARAMETER_ATTRIBUTES
        if isinstance(expr, cst.Name):
            binding = self.ctx.scopes.lookup(expr.value)
            if binding is None:
                return False
            if binding.kind in ("param", "for", "comprehension"):
                return True  # evidence for these is an nn.Parameter or an element of .parameters()
            if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
                return self._is_leaf(binding.value, depth + 1)
            return False
        if isinstance(expr, cst.Call):
            callee = self.ctx.names.torch_qualname(expr.func)
            if callee in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return True
            if callee is not None and keyword_arg(expr, "requires_grad") is not None:
                return True
            return isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "requires_grad_"
        return False

    # -- candidates -----------------------------------------------------------------
    def _accumulates(self, node: cst.CSTNode, accumulator: cst.BaseExpression, value: cst.BaseExpression) -> None:
        loops = self.ctx.flow.loops
        if not loops or self.ctx.grad.disabled:
            return
        key = _accumulator_key(accumulator)
        if key is None or key in ("self", "cls"):
            return
        if _has_clone(value):
            return  # a kept ``x.clone()`` is TCL003's (graph-attached-snapshot) finding
        evidence = self._evidence(value)
        if evidence is None or self._is_leaf(value):
            return
        candidate = Candidate(
            node=node,
            top=self.ctx.top_statement,
            accumulator=key,
            binding=self.ctx.scopes.lookup(key.split(".", 1)[0]),
            evidence=evidence,
            value=" ".join(cst.Module(body=[]).code_for_node(value).split())[:40],
        )
        for loop in loops:
            self._candidates.setdefault(id(loop), []).append(candidate)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._accumulates(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        # Runs before the scope analysis binds the target: lookups see the old binding.
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        key = dotted_name(target)
        value = node.value
        if isinstance(target, cst.Subscript):
            self._accumulates(node, target, value)
            return
        if key is None:
            return
        # total = total + loss / loss + total
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
            if dotted_name(value.left) == key:
                self._accumulates(node, target, value.right)
            elif dotted_name(value.right) == key and isinstance(value.operator, cst.Add):
                self._accumulates(node, target, value.left)
            return
        # outs = torch.cat([outs, out])
        if isinstance(value, cst.Call) and self.ctx.names.torch_qualname(value.func) in CONCATENATING_FUNCTIONS:
            args = positional_args(value)
            if args and isinstance(args[0].value, (cst.List, cst.Tuple)):
                elements = [element.value for element in args[0].value.elements]
                if any(dotted_name(element) == key for element in elements):
                    others = [element for element in elements if dotted_name(element) != key]
                    self._accumulates(node, target, cst.List([cst.Element(element) for element in others]))

    def _note_backward(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
            return
        operands: list[cst.CSTNode] = [func.value, *(argument.value for argument in node.args)]
        names: set[str] = set()
        while operands:
            current = operands.pop()
            key = dotted_name(current) if isinstance(current, (cst.Name, cst.Attribute)) else None
            if key is not None:
                names.add(key)
            if not isinstance(current, (cst.Lambda, cst.FunctionDef)):
                operands.extend(iter_children(current))
        for loop in self.ctx.flow.loops:
            self._backward_on.setdefault(id(loop), set()).update(names)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.ctx.flow.loops:
            self._note_backward(node)
        if not (isinstance(func, cst.Attribute) and func.attr.value in APPENDING_METHODS):
            return
        args = positional_args(node)
        if not args:
            return
        value = args[-1].value if func.attr.value == "insert" else args[0].value
        if func.attr.value == "insert" and len(args) < 2:
            return
        self._accumulates(node, func.value, value)

    # -- the decision, once the whole loop has been walked ---------------------------
    def _leave_loop(self, node: LoopNode) -> None:
        candidates = self._candidates.pop(id(node), None)
        backward_on = self._backward_on.pop(id(node), set())
        if not candidates:
            return
        events = self.ctx.flow.events_in(node)
        if not events:
            return
        inside: set[int] | None = None
        for candidate in candidates:
            if candidate.done:
                continue
            binding = candidate.binding
            if binding is not None and binding.kind not in ("import", "def", "class"):
                if inside is None:
                    inside = _descendant_ids(node)
                if id(binding.node) in inside:
                    continue  # bound in this loop: a fresh accumulator each iteration
            if _resets(node, candidate.accumulator):
                continue
            if candidate.accumulator in backward_on:
                continue  # gradient accumulation: backward() consumes the accumulated graph
            candidate.done = True
            event = "backward()" if "backward" in events else "an optimizer step()"
            message = self.spec.message.format(accumulator=candidate.accumulator, value=candidate.value, evidence=candidate.evidence, event=event)
            self.ctx.report(candidate.node, self.code, message, top=candidate.top)

    leave_For = leave_While = _leave_loop
