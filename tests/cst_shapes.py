"""The structure of a LibCST tree, less what :mod:`torchcopy_lint.cst_from_ast` leaves out by
design (whitespace, comments, brackets but those of operands, the spelling of literals): two
trees with equal shapes are the same tree to the analysis."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import libcst as cst

_LEFT_OUT = {
    "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon", "leading_lines",
    "lines_after_decorators", "header", "footer", "indent", "trailing_whitespace", "leading_whitespace",
    "newline", "dot", "equal", "colon", "whitespace_before_colon", "encoding", "default_indent",
    "default_newline", "has_trailing_newline", "first_colon", "second_colon", "whitespace_after_star",
    "whitespace_after_param", "whitespace_after_arg", "start", "end", "prefix", "quote",
}
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def shape(node: Any, operand: bool = False) -> Any:
    if isinstance(node, (list, tuple)):
        return [shape(item) for item in node]
    if not isinstance(node, cst.CSTNode):
        return node
    if isinstance(node, _STRINGS):
        return _string(node)
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return ("Number", ast.literal_eval(node.value))
    fields = []
    for item in dataclasses.fields(node):
        if item.name.startswith("whitespace") or item.name in _LEFT_OUT:
            continue
        value = getattr(node, item.name)
        if isinstance(value, cst.BaseParenthesizableWhitespace | cst.MaybeSentinel):
            continue
        child_is_operand = isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)) and item.name in ("left", "right")
        fields.append((item.name, shape(value, child_is_operand)))
    brackets = bool(operand and isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)) and node.lpar)
    return (type(node).__name__, brackets, fields) if brackets else (type(node).__name__, fields)


def _string(node: Any) -> Any:
    """A string's value, or for one with ``{...}`` parts the shapes of its expressions."""
    expressions: list[Any] = []
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, cst.ConcatenatedString):
            pending += [item.right, item.left]
        elif isinstance(item, cst.FormattedString):
            parts = list(item.parts)
            while parts:
                part = parts.pop(0)
                if isinstance(part, cst.FormattedStringExpression):
                    expressions.append(shape(part.expression))
                    if part.format_spec:
                        parts[0:0] = list(part.format_spec)
    if expressions or _has_formatted(node):
        return ("FString", expressions)
    return ("Str", node.evaluated_value)


def _has_formatted(node: Any) -> bool:
    if isinstance(node, cst.ConcatenatedString):
        return _has_formatted(node.left) or _has_formatted(node.right)
    return isinstance(node, cst.FormattedString)
