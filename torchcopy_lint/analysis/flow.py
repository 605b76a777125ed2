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
