"""Line/column of reported nodes, computed only for files that have findings.

LibCST's PositionProvider generates code for the whole module while recording a
position for every node (measured at ~110 ms for an average torch file, more
than parsing it). Findings are rare, so instead: count lines with a plain
code generation of the statements before the one holding the finding, then,
within that top-level statement, find the innermost statement that starts a
line around the node (a plain code generation that stops once every reported
node is reached), and run the position-recording code generation on that
statement alone. A finding deep in a 10,000-line class costs a plain pass over
part of the class, not a position-recording pass over all of it (measured:
1.8 s -> 0.3 s for torch's distributed_test.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from torchcopy_lint.lazy import cst
from libcst._nodes.internal import CodegenState
from libcst.metadata.position_provider import PositionProvidingCodegenState

Span = tuple[int, int, int, int]  # line, column (0-based), end line, end column (0-based)


class _Computed:
    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, object] = {}


# LibCST's compound statements and the ``ast`` nodes they become (a simple statement line
# becomes one ``ast`` statement per small statement).
_AST_TYPES: dict[str, tuple[type[ast.stmt], ...]] = {
    "FunctionDef": (ast.FunctionDef, ast.AsyncFunctionDef),
    "ClassDef": (ast.ClassDef,),
    "If": (ast.If,),
    "For": (ast.For, ast.AsyncFor),
    "While": (ast.While,),
    "With": (ast.With, ast.AsyncWith),
    "Try": (ast.Try,),
    "TryStar": tuple(getattr(ast, name) for name in ("TryStar",) if hasattr(ast, name)),
    "Match": tuple(getattr(ast, name) for name in ("Match",) if hasattr(ast, name)),
}


_LONE_CONTINUATION = re.compile(r"^[ \t\f]*\\\r?$", re.MULTILINE)


def ast_lines_up(text: str) -> bool:
    """Whether :func:`statement_start_lines` may read ``text``'s ``ast``: not where a line holds
    only a backslash continuation (LibCST starts the next statement there, ``ast`` after it)."""
    return "\\" not in text or _LONE_CONTINUATION.search(text) is None


def _starts_from_ast(module: cst.Module, tree: ast.Module, wanted: set[int]) -> dict[int, int] | None:
    """:func:`statement_start_lines` read off Python's ``ast`` of the same text: the line of the
    statement's first token (its first decorator's), less the comment and blank lines LibCST
    counts as the statement's own. None when the two trees do not line up (never expected)."""
    starts: dict[int, int] = {}
    last = max(wanted) if wanted else -1
    position = 0  # index in tree.body of the statement module.body[index] begins with
    for index, statement in enumerate(module.body):
        if index > last:
            break
        if position >= len(tree.body):
            return None
        node = tree.body[position]
        small = type(statement) is cst.SimpleStatementLine
        if not small and not isinstance(node, _AST_TYPES.get(type(statement).__name__, ())):
            return None
        if index in wanted:
            leading = len(statement.leading_lines)
            decorators = getattr(statement, "decorators", ())
            if decorators:
                if not node.decorator_list:  # type: ignore[attr-defined]
                    return None
                first = node.decorator_list[0].lineno  # type: ignore[attr-defined]
                leading += len(decorators[0].leading_lines)
            else:
                first = node.lineno
            starts[index] = first - leading
        position += len(statement.body) if small else 1  # type: ignore[arg-type]
    return starts


def statement_start_lines(module: cst.Module, wanted: set[int], tree: ast.Module | None = None) -> dict[int, int]:
    """1-based first line of each top-level statement whose index is in ``wanted``.

    With Python's ``ast`` of the same text (``tree``) the lines are read off it; else
    (newer syntax, an edited tree) the module is generated up to the last one wanted.
    """
    if tree is not None:
        starts = _starts_from_ast(module, tree, wanted)
        if starts is not None:
            return starts
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


class _AllFound(Exception):
    pass


_LINE_STATEMENT: dict[type, bool] = {}


def _is_statement(node_type: type) -> bool:
    known = _LINE_STATEMENT.get(node_type)
    if known is None:
        known = _LINE_STATEMENT[node_type] = issubclass(node_type, cst.BaseStatement)
    return known


class _StatementFinder(CodegenState):
    """Plain code generation that notes, for each target node, the innermost statement that
    starts a line around it: its token offset and the indentation in force there.

    A statement starts a line when it is the one being generated first (the top-level
    statement) or sits directly in an IndentedBlock (not an ``elif``, which its ``if``
    generates with ``is_elif``). Stops with _AllFound once every target is reached.
    """

    def __init__(self, module: cst.Module, targets: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.targets = targets
        self.remaining = len(targets)
        self.open: list[cst.CSTNode] = []
        self.statements: list[tuple[cst.CSTNode, int, tuple[str, ...]]] = []
        self.found: dict[int, tuple[cst.CSTNode, int, tuple[str, ...]]] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        open_nodes = self.open
        if _is_statement(type(node)) and (not open_nodes or type(open_nodes[-1]) is cst.IndentedBlock):
            self.statements.append((node, len(self.tokens), tuple(self.indent_tokens)))
        if id(node) in self.targets and id(node) not in self.found:
            self.found[id(node)] = self.statements[-1]
            self.remaining -= 1
            if not self.remaining:
                raise _AllFound
        open_nodes.append(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.open.pop()
        if self.statements and self.statements[-1][0] is node:
            self.statements.pop()


def locate(module: cst.Module, targets: Iterable[tuple[cst.CSTNode, int]], tree: ast.Module | None = None) -> dict[int, Span]:
    """Positions of ``(node, top-level statement index)`` pairs, keyed by ``id(node)``
    (``tree``: Python's ``ast`` of the module's text, when there is one)."""
    targets = list(targets)
    starts = statement_start_lines(module, {index for _, index in targets}, tree)
    by_statement: dict[int, set[int]] = {}
    for node, index in targets:
        by_statement.setdefault(index, set()).add(id(node))
    # For each top-level statement: where each of its targets' line-starting statements begins.
    found: dict[int, tuple[cst.CSTNode, int, tuple[str, ...]]] = {}
    for index, wanted in by_statement.items():
        if index not in starts:
            continue
        finder = _StatementFinder(module, wanted)
        try:
            module.body[index]._codegen(finder)
        except _AllFound:
            pass
        for node_id, (statement, offset, indent) in finder.found.items():
            line = starts[index] + sum(token.count("\n") for token in finder.tokens[:offset])
            found[node_id] = (statement, line, indent)
    spans: dict[int, Span] = {}
    computed_by_statement: dict[int, dict[cst.CSTNode, object]] = {}
    for node, index in targets:
        place = found.get(id(node))
        computed = None
        if place is not None:
            statement, line, indent = place
            computed = computed_by_statement.get(id(statement))
            if computed is None:
                holder = _Computed()
                state = PositionProvidingCodegenState(
                    default_indent=module.default_indent,
                    default_newline=module.default_newline,
                    provider=holder,
                    line=line,
                )
                state.indent_tokens = list(indent)
                statement._codegen(state)
                computed = computed_by_statement[id(statement)] = holder._computed
        code_range = computed.get(node) if computed is not None else None
        if code_range is None:  # not expected; fall back to the top-level statement's first line
            line = starts.get(index, 1)
            spans[id(node)] = (line, 0, line, 0)
        else:
            spans[id(node)] = (code_range.start.line, code_range.start.column, code_range.end.line, code_range.end.column)  # type: ignore[attr-defined]
    return spans
