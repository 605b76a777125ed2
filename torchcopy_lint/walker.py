"""One fast traversal of a LibCST tree that drives every analysis and checker.

LibCST's own ``module.visit(visitor)`` rebuilds every node while walking, which
costs about as much as parsing (measured: 9.4 s of visiting for 11.9 s of parsing
on an eighth of torch's source). This walker only reads: it follows the fields
that can hold expressions or statements, skips whitespace, parentheses and
operator tokens, and calls ``visit_<NodeType>`` / ``leave_<NodeType>`` methods of
the registered participants. Dispatch is a dict lookup per node type.

Participants are called in registration order on visit and in reverse order on
leave, so shared analyses (registered first) see a node before the checkers do
and finish with it after them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import libcst as cst

# Fields that never contain anything a rule cares about (whitespace, brackets,
# punctuation, operator tokens) or whose Name is not a variable reference.
_SKIPPED_FIELDS = frozenset(
    {
        "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon",
        "leading_lines", "lines_after_decorators", "header", "footer", "indent",
        "trailing_whitespace", "leading_whitespace", "newline", "operator", "dot",
        "equal", "colon", "star", "asynchronous", "whitespace_before_colon",
        "default_newline", "default_indent", "encoding", "has_trailing_newline",
        "arrow", "relative", "keyword", "attr", "name", "asname",
    }
)
# (node type, field) pairs that are kept even though the field name is skipped in general:
# a function's or class's name is not a reference, but an import alias's ``name`` is
# handled by the import analysis directly, so nothing needs them walked.
_KEPT_FIELDS = frozenset(
    {
        ("NamedExpr", "target"),
    }
)

Handler = Callable[[cst.CSTNode], Any]


def _child_fields(node_type: type[cst.CSTNode]) -> tuple[str, ...]:
    names = []
    for item in dataclasses.fields(node_type):
        if item.name.startswith("whitespace") or item.name in _SKIPPED_FIELDS:
            if (node_type.__name__, item.name) not in _KEPT_FIELDS:
                continue
        names.append(item.name)
    return tuple(names)


_FIELDS_BY_TYPE: dict[type, tuple[str, ...]] = {}


def iter_children(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    """The semantically interesting children of ``node``, in source order."""
    node_type = type(node)
    fields = _FIELDS_BY_TYPE.get(node_type)
    if fields is None:
        fields = _FIELDS_BY_TYPE[node_type] = _child_fields(node_type)
    for name in fields:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


class Walker:
    """Walks a tree once, calling each participant's visit_/leave_ methods."""

    def __init__(self, participants: Sequence[object]) -> None:
        self._visit: dict[str, list[Handler]] = {}
        self._leave: dict[str, list[Handler]] = {}
        for participant in participants:
            for attribute in dir(participant):
                if attribute.startswith("visit_"):
                    self._visit.setdefault(attribute[6:], []).append(getattr(participant, attribute))
        for participant in reversed(participants):
            for attribute in dir(participant):
                if attribute.startswith("leave_"):
                    self._leave.setdefault(attribute[6:], []).append(getattr(participant, attribute))
        self._by_type_visit: dict[type, list[Handler] | None] = {}
        self._by_type_leave: dict[type, list[Handler] | None] = {}
        self.parents: list[cst.CSTNode] = []

    @property
    def parent(self) -> cst.CSTNode | None:
        """The parent of the node being visited (the node itself is not on the stack)."""
        return self.parents[-1] if self.parents else None

    def walk(self, node: cst.CSTNode) -> None:
        node_type = type(node)
        try:
            visits = self._by_type_visit[node_type]
            leaves = self._by_type_leave[node_type]
        except KeyError:
            visits = self._by_type_visit[node_type] = self._visit.get(node_type.__name__)
            leaves = self._by_type_leave[node_type] = self._leave.get(node_type.__name__)
        if visits:
            for handler in visits:
                handler(node)
        self.parents.append(node)
        for child in iter_children(node):
            self.walk(child)
        self.parents.pop()
        if leaves:
            for handler in leaves:
                handler(node)
