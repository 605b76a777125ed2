"""TCL100 unused-noqa: ``# noqa: TCL...`` codes that suppress nothing on their line.

See rules/TCL100-unused-noqa.md.

Unlike the other rules this one cannot decide during the walk: whether a code
is used depends on every rule's findings, positioned. The engine therefore
analyses a file with every rule when TCL100 is enabled and, after positioning
the findings and before applying ``# noqa``, calls :func:`unused_noqa` with the
(line, code) of each of them. The checker class only registers the rule (and its
pre-filter: no "noqa" in the text, nothing to report).
"""

from __future__ import annotations

import functools

from collections.abc import Iterable
from dataclasses import dataclass

from torchcopy_lint.lazy import cst

from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.fixes.model import SAFE, Fix
from torchcopy_lint.noqa import RESERVED_CODES, find_directive, without_codes

CODE = "TCL100"


class UnusedNoqa(Checker):
    code = CODE
    reads_source_layout = True  # the comments themselves

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """A ``# noqa`` comment to judge."""
        return facts.noqa


@dataclass(frozen=True)
class UnusedDirective:
    """One ``# noqa`` comment with unused codes: where it is (1-based line, 0-based columns
    of the directive), which codes, and the fix that takes them out."""

    line: int
    column: int
    end_column: int
    codes: tuple[str, ...]
    node: cst.CSTNode  # the comment's node, which the fix replaces
    fix: Fix

    def details(self) -> dict[str, str]:
        """The placeholders of the catalogue message."""
        plural = len(self.codes) != 1
        return {"codes": ", ".join(self.codes), "s": "s" if plural else "", "es": "" if plural else "es"}


@functools.cache
def _comments_class() -> type:
    """The code generator that finds comments (built on first use: LibCST loads only when a
    file is parsed, see torchcopy_lint/lazy.py)."""
    from libcst._nodes.internal import CodegenState

    class _Comments(CodegenState):
        """Code generation that records each comment's 1-based line, 0-based column and holder."""

        def __init__(self, module: cst.Module) -> None:
            super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
            self.line, self.column = 1, 0
            self.stack: list[cst.CSTNode] = []
            self.found: dict[int, tuple[cst.Comment, int, cst.CSTNode | None]] = {}

        def add_token(self, value: str) -> None:
            super().add_token(value)
            newlines = value.count("\n")
            if newlines:
                self.line += newlines
                self.column = len(value) - value.rfind("\n") - 1
            else:
                self.column += len(value)

        def add_indent_tokens(self) -> None:
            super().add_indent_tokens()
            self.column += sum(len(token) for token in self.indent_tokens)

        def before_codegen(self, node: cst.CSTNode) -> None:
            if type(node) is cst.Comment and self.line not in self.found:
                self.found[self.line] = (node, self.column, self.stack[-1] if self.stack else None)
            self.stack.append(node)

        def after_codegen(self, node: cst.CSTNode) -> None:
            self.stack.pop()

    return _Comments


def _comments(module: cst.Module) -> dict[int, tuple[cst.Comment, int, cst.CSTNode | None]]:
    state = _comments_class()(module)
    module._codegen(state)
    return state.found


def _removal(comment: cst.Comment, holder: cst.CSTNode | None, new_text: str) -> tuple[cst.CSTNode, cst.CSTNode]:
    """The edit that turns ``comment`` into ``new_text`` ("" removes it with the spaces before it)."""
    if new_text:
        return comment, comment.with_changes(value=new_text)
    if isinstance(holder, cst.TrailingWhitespace):
        return holder, holder.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
    if isinstance(holder, cst.EmptyLine):
        return holder, holder.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
    return comment, comment.with_changes(value="#")


def _unused(codes: Iterable[str], reported: set[str]) -> tuple[str, ...]:
    unused = []
    for code in codes:
        prefix = code.upper()
        if not prefix.startswith("TCL") or prefix in RESERVED_CODES:
            continue
        if not any(found.startswith(prefix) for found in reported):
            unused.append(code)
    return tuple(unused)


def unused_noqa(module: cst.Module, text: str, reported: Iterable[tuple[int, str]]) -> list[UnusedDirective]:
    """The ``# noqa`` comments of ``module`` (parsed from ``text``) with unused ``TCL`` codes.

    ``reported``: (1-based line, code) of every rule's finding before ``# noqa`` is applied.
    Only real comments count (a "# noqa" inside a string is text), and a line whose
    directive names TCL100 itself is left alone.
    """
    lines = text.split("\n")
    candidates = {number for number, line in enumerate(lines, start=1) if "noqa" in line.lower()}
    if not candidates:
        return []
    by_line: dict[int, set[str]] = {}
    for line, code in reported:
        by_line.setdefault(line, set()).add(code)
    found = []
    for line, (comment, column, holder) in sorted(_comments(module).items()):
        if line not in candidates:
            continue
        directive = find_directive(comment.value)
        if directive is None or not directive.codes or any(CODE.startswith(code.upper()) for code in directive.codes):
            continue  # a bare noqa (maybe another tool's), or one that suppresses TCL100 itself
        unused = _unused(directive.codes, by_line.get(line, set()))
        if not unused:
            continue
        new_text = without_codes(comment.value, {code.upper() for code in unused})
        fix = Fix(SAFE, (_removal(comment, holder, new_text),))
        found.append(UnusedDirective(line, column + directive.start, column + directive.end, tuple(code.upper() for code in unused), comment, fix))
    return found
