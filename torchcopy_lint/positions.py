"""Line/column of reported nodes, computed only for files that have findings.

LibCST's PositionProvider generates code for the whole module while recording a
position for every node (measured at ~110 ms for an average torch file, more
than parsing it). Findings are rare, so instead: count lines with a plain
code generation of the statements before the one holding the finding, then run
the position-recording code generation on that one top-level statement.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata.position_provider import PositionProvidingCodegenState

Span = tuple[int, int, int, int]  # line, column (0-based), end line, end column (0-based)


class _Computed:
    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, object] = {}


def statement_start_lines(module: cst.Module, wanted: set[int]) -> dict[int, int]:
    """1-based first line of each top-level statement whose index is in ``wanted``."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    for line in module.header:
        line._codegen(state)
    newlines = sum(token.count("\n") for token in state.tokens)
    counted = len(state.tokens)
    starts: dict[int, int] = {}
    last = max(wanted) if wanted else -1
    for index, statement in enumerate(module.body):
        if index > last:
            break
        if index in wanted:
            starts[index] = newlines + 1
        statement._codegen(state)
        newlines += sum(token.count("\n") for token in state.tokens[counted:])
        counted = len(state.tokens)
    return starts


def locate(module: cst.Module, targets: Iterable[tuple[cst.CSTNode, int]]) -> dict[int, Span]:
    """Positions of ``(node, top-level statement index)`` pairs, keyed by ``id(node)``."""
    targets = list(targets)
    starts = statement_start_lines(module, {index for _, index in targets})
    spans: dict[int, Span] = {}
    computed_by_statement: dict[int, dict[cst.CSTNode, object]] = {}
    for node, index in targets:
        if index not in computed_by_statement:
            holder = _Computed()
            state = PositionProvidingCodegenState(
                default_indent=module.default_indent,
                default_newline=module.default_newline,
                provider=holder,
                line=starts[index],
            )
            module.body[index]._codegen(state)
            computed_by_statement[index] = holder._computed
        code_range = computed_by_statement[index].get(node)
        if code_range is None:  # not expected; fall back to the statement's first line
            spans[id(node)] = (starts[index], 0, starts[index], 0)
        else:
            spans[id(node)] = (code_range.start.line, code_range.start.column, code_range.end.line, code_range.end.column)  # type: ignore[attr-defined]
    return spans
