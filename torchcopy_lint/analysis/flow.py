"""Where in the control flow the walk is: loops and statements.

Rules about accumulation and "later" use need to know whether a statement sits
in a loop (of the current function: a nested ``def`` starts afresh) and which
statement is being visited.
"""

from __future__ import annotations

import libcst as cst

LoopNode = cst.For | cst.While


class FlowTracker:
    """Walk participant: loop stack per function, and the current statement."""

    def __init__(self) -> None:
        self._loops: list[list[LoopNode]] = [[]]
        self.statement: cst.CSTNode | None = None
        self._events: dict[int, set[str]] = {}

    @property
    def loops(self) -> list[LoopNode]:
        """Loops enclosing the current point, innermost last, in this function."""
        return self._loops[-1]

    @property
    def in_loop(self) -> bool:
        return bool(self._loops[-1])

    def _enter_loop(self, node: LoopNode) -> None:
        self._loops[-1].append(node)

    def _leave_loop(self, node: LoopNode) -> None:
        self._loops[-1].pop()
        self._events.pop(id(node), None)

    def events_in(self, loop: LoopNode) -> frozenset[str]:
        """Step events (see :func:`step_event`) anywhere in ``loop`` so far, nested loops
        included, nested functions not. Complete for the whole body in a checker's
        ``leave_For`` / ``leave_While`` (checkers leave a node before this tracker)."""
        return frozenset(self._events.get(id(loop), ()))

    def visit_Call(self, node: cst.Call) -> None:
        loops = self._loops[-1]
        if loops:
            event = step_event(node)
            if event is not None:
                for loop in loops:
                    self._events.setdefault(id(loop), set()).add(event)

    visit_For = visit_While = _enter_loop
    leave_For = leave_While = _leave_loop

    def _enter_function(self, node: cst.CSTNode) -> None:
        self._loops.append([])

    def _leave_function(self, node: cst.CSTNode) -> None:
        self._loops.pop()

    visit_FunctionDef = visit_Lambda = _enter_function
    leave_FunctionDef = leave_Lambda = _leave_function

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node


def _optimizer_like(receiver: cst.BaseExpression) -> bool:
    """``optimizer``, ``opt``, ``self.optim``, ``d_optimizer``, ``scaler`` (a GradScaler) ..."""
    while isinstance(receiver, cst.Subscript):
        receiver = receiver.value
    if isinstance(receiver, cst.Attribute):
        name = receiver.attr.value
    elif isinstance(receiver, cst.Name):
        name = receiver.value
    else:
        return False
    name = name.lower()
    return "optim" in name or "scaler" in name or name in ("opt", "opts") or name.startswith("opt_") or name.endswith("_opt")


def step_event(call: cst.Call) -> str | None:
    """``"backward"`` for ``loss.backward()`` / ``torch.autograd.backward(...)`` /
    ``accelerator.backward(loss)``; ``"step"`` for ``step()`` on an optimizer-like
    receiver (``optimizer.step()``, ``scaler.step(opt)``; not ``scheduler.step()`` or
    ``env.step(action)``); else None."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "backward":
        return "backward"
    if func.attr.value == "step" and _optimizer_like(func.value):
        return "step"
    return None
