"""A LibCST tree built from Python's ``ast``, for analysis only: no parse, no whitespace.

LibCST's parser is the largest single cost of a cold run (its Rust parser builds several
Python objects per token). Most files the screen admits have no finding, and for them the
analysis needs only the tree's structure: names, calls, attributes, statements. This module
builds that structure from the ``ast`` tree the screen already has, node for node as LibCST's
parser would (the same classes, fields and nesting), leaving out only what the analysis
never reads: whitespace, comments and brackets. ``FileRun`` analyses such a tree first and
parses the file with LibCST only when it reports something, so that every finding's
message, position and fix come from the real tree (see ``FileRun.context``).

What differs from a parsed tree, by design:

- whitespace, comments and empty lines are LibCST's defaults (the code it prints is
  normalised, ``f(a,b)`` -> ``f(a, b)``), and brackets are kept only on binary and boolean
  operations, where :mod:`tcl009_graph_accumulation` reads them (``t += (a + b)``);
- ``elif`` is an ``If`` in ``orelse``, as LibCST writes it (``else:`` then ``if`` is an ``Else``);
- strings are written back from their values (``'a' 'b'`` is one string, ``0x10`` is ``16``).

``tests/test_cst_from_ast.py`` compares the trees with LibCST's over every file of the test
corpora and torch's own source, modulo exactly these differences; the screen's test checks
that the findings stay the same. A tree this module cannot build (syntax newer than it
knows: type parameters, ``type`` aliases) raises :class:`Unsupported`, and the file is parsed
with LibCST.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import libcst as cst

__all__ = ["Unsupported", "module_from_ast"]


class Unsupported(Exception):
    """The ``ast`` tree holds something this module does not build (LibCST parses the file)."""


@cache
def _constructor(node_class: type) -> Callable[..., Any]:
    """A constructor for ``node_class`` that sets its fields directly (keyword arguments only).

    LibCST's generated ``__init__`` runs ``default_factory`` for every whitespace field left
    out (two or three new objects per node) and validates the node afterwards; a tree built
    from a valid ``ast`` needs neither. Fields left out share one default object per field
    (LibCST trees are immutable, so sharing is safe). The code is generated per class, as
    ``dataclasses`` does, so that each field costs one call.
    """
    namespace: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_class": node_class}
    parameters = []
    lines = []
    for index, item in enumerate(dataclasses.fields(node_class)):
        if item.default is not dataclasses.MISSING:
            namespace[f"_default{index}"] = item.default
            parameters.append(f"{item.name}=_default{index}")
        elif item.default_factory is not dataclasses.MISSING:
            namespace[f"_default{index}"] = item.default_factory()
            parameters.append(f"{item.name}=_default{index}")
        else:
            parameters.append(item.name)
        lines.append(f"    _set(node, {item.name!r}, {item.name})")
    signature = f"*, {', '.join(parameters)}" if parameters else ""
    source = f"def make_{node_class.__name__}({signature}):\n    node = _new(_class)\n" + "\n".join(lines) + "\n    return node\n"
    exec(source, namespace)  # noqa: S102 - code generated from the dataclass fields above
    return namespace[f"make_{node_class.__name__}"]  # type: ignore[no-any-return]


class _Constructors:
    """``_nodes.Name(value="x")``: LibCST's ``cst.Name`` built by :func:`_constructor`."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        made = _constructor(getattr(cst, name))
        setattr(self, name, made)  # found as a plain attribute from now on
        return made


_nodes = _Constructors()


def _make(node_class: type, **given: Any) -> Any:
    return _constructor(node_class)(**given)


# -- operators: one shared node each (they carry only whitespace) -----------------------------

_BINARY = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.MatMult: cst.MatrixMultiply,
    ast.LShift: cst.LeftShift, ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitAnd: cst.BitAnd, ast.BitXor: cst.BitXor,
}
_AUGMENTED = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign, ast.Div: cst.DivideAssign,
    ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign, ast.Pow: cst.PowerAssign, ast.MatMult: cst.MatrixMultiplyAssign,
    ast.LShift: cst.LeftShiftAssign, ast.RShift: cst.RightShiftAssign, ast.BitOr: cst.BitOrAssign, ast.BitAnd: cst.BitAndAssign,
    ast.BitXor: cst.BitXorAssign,
}
_UNARY = {ast.Not: cst.Not, ast.USub: cst.Minus, ast.UAdd: cst.Plus, ast.Invert: cst.BitInvert}
_COMPARE = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual, ast.Gt: cst.GreaterThan,
    ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot, ast.In: cst.In, ast.NotIn: cst.NotIn,
}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}


@cache
def _operator(operator_class: type) -> cst.CSTNode:
    return operator_class()  # type: ignore[no-any-return]


_PARENTHESES = ((cst.LeftParen(),), (cst.RightParen(),))


class _Builder:
    """Builds one module's tree; ``text`` finds the brackets ``ast`` drops, where they matter."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line_starts: list[int] | None = None

    # -- statements --------------------------------------------------------------------------

    def module(self, tree: ast.Module) -> cst.Module:
        return _nodes.Module(body=self.statements(tree.body))

    def statements(self, body: Sequence[ast.stmt]) -> list[cst.BaseStatement]:
        """Statements as LibCST groups them: small ones on one line (``a = 1; b = 2``) share a
        ``SimpleStatementLine``; each compound statement stands alone."""
        built: list[cst.BaseStatement] = []
        line: list[cst.BaseSmallStatement] | None = None
        previous_end = 0
        for node in body:
            builder = _SMALL.get(type(node))
            if builder is None:
                built.append(self.compound(node))
                line = None
                continue
            small = builder(self, node)
            if line is not None and node.lineno == previous_end:
                line.append(small)
            else:
                line = [small]
                built.append(_nodes.SimpleStatementLine(body=line))
            previous_end = node.end_lineno or node.lineno
        return built

    def block(self, body: Sequence[ast.stmt]) -> cst.BaseSuite:
        """An indented block, or the small statements after a header's colon on its own line
        (``if done: break``: a ``SimpleStatementSuite``)."""
        first = body[0]
        offset = self._offset(first.lineno, first.col_offset)
        line_start = self.text.rfind("\n", 0, offset) + 1
        if self.text[line_start:offset].strip():
            return _nodes.SimpleStatementSuite(body=[_SMALL[type(node)](self, node) for node in body])
        return _nodes.IndentedBlock(body=self.statements(body))

    def orelse(self, body: Sequence[ast.stmt], node: ast.stmt) -> cst.Else | cst.If | None:
        if not body:
            return None
        if isinstance(node, ast.If) and len(body) == 1 and isinstance(body[0], ast.If) and self._is_elif(body[0]):
            return self.compound(body[0])  # type: ignore[return-value]
        return _nodes.Else(body=self.block(body))

    def compound(self, node: Any) -> cst.BaseCompoundStatement:
        builder = _COMPOUND.get(type(node))
        if builder is None:
            raise Unsupported(type(node).__name__)
        return builder(self, node)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> cst.FunctionDef:
        if getattr(node, "type_params", None):
            raise Unsupported("type parameters")
        return _nodes.FunctionDef(
            name=self.name(node.name),
            params=self.parameters(node.args),
            body=self.block(node.body),
            decorators=[_nodes.Decorator(decorator=self.expr(item)) for item in node.decorator_list],
            returns=_nodes.Annotation(annotation=self.expr(node.returns)) if node.returns is not None else None,
            asynchronous=_nodes.Asynchronous() if type(node) is ast.AsyncFunctionDef else None,
        )

    def class_definition(self, node: ast.ClassDef) -> cst.ClassDef:
        if getattr(node, "type_params", None):
            raise Unsupported("type parameters")
        return _nodes.ClassDef(
            name=self.name(node.name),
            body=self.block(node.body),
            bases=[self.argument(base) for base in node.bases],
            keywords=[self.keyword(item) for item in node.keywords],
            decorators=[_nodes.Decorator(decorator=self.expr(item)) for item in node.decorator_list],
        )

    def if_statement(self, node: ast.If) -> cst.If:
        return _nodes.If(test=self.expr(node.test), body=self.block(node.body), orelse=self.orelse(node.orelse, node))

    def for_statement(self, node: ast.For | ast.AsyncFor) -> cst.For:
        return _nodes.For(
            target=self.expr(node.target),
            iter=self.expr(node.iter),
            body=self.block(node.body),
            orelse=self.orelse(node.orelse, node),
            asynchronous=_nodes.Asynchronous() if type(node) is ast.AsyncFor else None,
        )

    def while_statement(self, node: ast.While) -> cst.While:
        return _nodes.While(test=self.expr(node.test), body=self.block(node.body), orelse=self.orelse(node.orelse, node))

    def with_statement(self, node: ast.With | ast.AsyncWith) -> cst.With:
        items = [
            _nodes.WithItem(item=self.expr(item.context_expr), asname=self.as_name(item.optional_vars) if item.optional_vars is not None else None)
            for item in node.items
        ]
        return _nodes.With(items=items, body=self.block(node.body), asynchronous=_nodes.Asynchronous() if type(node) is ast.AsyncWith else None)

    def try_statement(self, node: Any) -> cst.Try | cst.TryStar:
        """``try`` and, from Python 3.11, ``try`` with ``except*`` (``ast.TryStar``)."""
        star = type(node) is not ast.Try
        handler_class = cst.ExceptStarHandler if star else cst.ExceptHandler
        handlers = [
            _make(
                handler_class,
                body=self.block(handler.body),
                type=self.expr(handler.type) if handler.type is not None else None,
                name=self.as_name_text(handler.name) if handler.name is not None else None,
            )
            for handler in node.handlers
        ]
        return _make(  # type: ignore[no-any-return]
            cst.TryStar if star else cst.Try,
            body=self.block(node.body),
            handlers=handlers,
            orelse=_nodes.Else(body=self.block(node.orelse)) if node.orelse else None,
            finalbody=_nodes.Finally(body=self.block(node.finalbody)) if node.finalbody else None,
        )

    def _is_elif(self, node: ast.If) -> bool:
        """An ``If`` alone in an ``orelse`` was written ``elif`` (LibCST: an ``If`` in ``orelse``)
        unless the text says ``if`` where it starts (``else:`` then ``if``: an ``Else``)."""
        return self.text.startswith("elif", self._offset(node.lineno, node.col_offset))

    # -- match statements --------------------------------------------------------------

    def match(self, node: ast.Match) -> cst.Match:
        cases = [
            _nodes.MatchCase(pattern=self.pattern(case.pattern), body=self.block(case.body), guard=self.expr(case.guard) if case.guard is not None else None)
            for case in node.cases
        ]
        return _nodes.Match(subject=self.expr(node.subject), cases=cases)

    def pattern(self, node: Any) -> Any:
        kind = type(node)
        if kind is ast.MatchAs:
            return _nodes.MatchAs(
                pattern=self.pattern(node.pattern) if node.pattern is not None else None,
                name=self.name(node.name) if node.name is not None else None,
            )
        if kind is ast.MatchValue:
            return _nodes.MatchValue(value=self.expr(node.value))
        if kind is ast.MatchSingleton:
            return _nodes.MatchSingleton(value=self.name(repr(node.value)))
        if kind is ast.MatchOr:
            last = len(node.patterns) - 1
            separator = _operator(cst.BitOr)
            elements = [_nodes.MatchOrElement(pattern=self.pattern(item), **({"separator": separator} if index < last else {})) for index, item in enumerate(node.patterns)]
            return _nodes.MatchOr(patterns=elements)
        if kind is ast.MatchSequence:
            elements = [self.sequence_element(item) for item in node.patterns]
            # LibCST: ``(a, b)`` is a MatchTuple, ``[a, b]`` and ``a, b`` are MatchLists
            tupled = self.text.startswith("(", self._offset(node.lineno, node.col_offset)) and (not node.patterns or self._bracketed_tuple(node.patterns, node))
            return _make(cst.MatchTuple if tupled else cst.MatchList, patterns=elements)
        if kind is ast.MatchMapping:
            elements = [_nodes.MatchMappingElement(key=self.expr(key), pattern=self.pattern(item)) for key, item in zip(node.keys, node.patterns)]
            return _nodes.MatchMapping(elements=elements, rest=self.name(node.rest) if node.rest is not None else None)
        if kind is ast.MatchClass:
            return _nodes.MatchClass(
                cls=self.expr(node.cls),
                patterns=[_nodes.MatchSequenceElement(value=self.pattern(item)) for item in node.patterns],
                kwds=[_nodes.MatchKeywordElement(key=self.name(key), pattern=self.pattern(item)) for key, item in zip(node.kwd_attrs, node.kwd_patterns)],
            )
        raise Unsupported(kind.__name__)

    def sequence_element(self, node: Any) -> Any:
        if type(node) is ast.MatchStar:
            return _nodes.MatchStar(name=self.name(node.name) if node.name is not None else None)
        return _nodes.MatchSequenceElement(value=self.pattern(node))

    # -- small statements ----------------------------------------------------------------

    def expression_statement(self, node: ast.Expr) -> cst.Expr:
        return _nodes.Expr(value=self.expr(node.value))

    def assign(self, node: ast.Assign) -> cst.Assign:
        return _nodes.Assign(targets=[_nodes.AssignTarget(target=self.expr(target)) for target in node.targets], value=self.expr(node.value))

    def augmented_assign(self, node: ast.AugAssign) -> cst.AugAssign:
        return _nodes.AugAssign(target=self.expr(node.target), operator=_operator(_AUGMENTED[type(node.op)]), value=self.expr(node.value))

    def annotated_assign(self, node: ast.AnnAssign) -> cst.AnnAssign:
        return _nodes.AnnAssign(
            target=self.expr(node.target),
            annotation=_nodes.Annotation(annotation=self.expr(node.annotation)),
            value=self.expr(node.value) if node.value is not None else None,
        )

    def return_statement(self, node: ast.Return) -> cst.Return:
        return _nodes.Return(value=self.expr(node.value) if node.value is not None else None)

    def delete(self, node: ast.Delete) -> cst.Del:
        targets = node.targets
        target = self.expr(targets[0]) if len(targets) == 1 else _nodes.Tuple(elements=[_nodes.Element(value=self.expr(item)) for item in targets], lpar=(), rpar=())
        return _nodes.Del(target=target)

    def raise_statement(self, node: ast.Raise) -> cst.Raise:
        return _nodes.Raise(
            exc=self.expr(node.exc) if node.exc is not None else None,
            cause=_nodes.From(item=self.expr(node.cause)) if node.cause is not None else None,
        )

    def assert_statement(self, node: ast.Assert) -> cst.Assert:
        return _nodes.Assert(test=self.expr(node.test), msg=self.expr(node.msg) if node.msg is not None else None)

    def import_statement(self, node: ast.Import) -> cst.Import:
        return _nodes.Import(names=[self.import_alias(alias) for alias in node.names])

    def import_from(self, node: ast.ImportFrom) -> cst.ImportFrom:
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = _nodes.ImportStar()
        else:
            names = [self.import_alias(alias) for alias in node.names]
        return _nodes.ImportFrom(
            module=self.dotted(node.module) if node.module else None,
            names=names,
            relative=[_nodes.Dot() for _ in range(node.level or 0)],
        )

    def import_alias(self, alias: ast.alias) -> cst.ImportAlias:
        return _nodes.ImportAlias(name=self.dotted(alias.name), asname=self.as_name_text(alias.asname) if alias.asname else None)

    def global_statement(self, node: ast.Global) -> cst.Global:
        return _nodes.Global(names=[_nodes.NameItem(name=self.name(name)) for name in node.names])

    def nonlocal_statement(self, node: ast.Nonlocal) -> cst.Nonlocal:
        return _nodes.Nonlocal(names=[_nodes.NameItem(name=self.name(name)) for name in node.names])

    def pass_statement(self, node: ast.Pass) -> cst.Pass:
        return _nodes.Pass()

    def break_statement(self, node: ast.Break) -> cst.Break:
        return _nodes.Break()

    def continue_statement(self, node: ast.Continue) -> cst.Continue:
        return _nodes.Continue()

    # -- pieces ----------------------------------------------------------------------------

    def name(self, identifier: str) -> cst.Name:
        return _nodes.Name(value=identifier)

    def dotted(self, dotted: str) -> cst.Name | cst.Attribute:
        parts = dotted.split(".")
        node: Any = self.name(parts[0])
        for part in parts[1:]:
            node = _nodes.Attribute(value=node, attr=self.name(part))
        return node  # type: ignore[no-any-return]

    def as_name(self, target: ast.expr) -> cst.AsName:
        return _nodes.AsName(name=self.expr(target))

    def as_name_text(self, identifier: str) -> cst.AsName:
        return _nodes.AsName(name=self.name(identifier))

    def parameters(self, arguments: ast.arguments) -> cst.Parameters:
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        params = [self.param(argument, default) for argument, default in zip(positional, defaults)]
        posonly = params[: len(arguments.posonlyargs)]
        star_arg: Any = MISSING_STAR
        if arguments.vararg is not None:
            star_arg = self.param(arguments.vararg, None, "*")
        elif arguments.kwonlyargs:
            star_arg = _nodes.ParamStar()
        return _nodes.Parameters(
            params=params[len(posonly) :],
            star_arg=star_arg,
            kwonly_params=[self.param(argument, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults)],
            star_kwarg=self.param(arguments.kwarg, None, "**") if arguments.kwarg is not None else None,
            posonly_params=posonly,
            posonly_ind=_nodes.ParamSlash() if posonly else MISSING_STAR,
        )

    def param(self, argument: ast.arg, default: ast.expr | None, star: str = "") -> cst.Param:
        return _nodes.Param(
            name=self.name(argument.arg),
            annotation=_nodes.Annotation(annotation=self.expr(argument.annotation)) if argument.annotation is not None else None,
            default=self.expr(default) if default is not None else None,
            star=star,
        )

    def argument(self, node: ast.expr) -> cst.Arg:
        if type(node) is ast.Starred:
            return _nodes.Arg(value=self.expr(node.value), star="*")
        return _nodes.Arg(value=self.expr(node))

    def keyword(self, node: ast.keyword) -> cst.Arg:
        if node.arg is None:
            return _nodes.Arg(value=self.expr(node.value), star="**")
        return _nodes.Arg(value=self.expr(node.value), keyword=self.name(node.arg))

    def call(self, node: ast.Call) -> cst.Call:
        args = node.args
        keywords = node.keywords
        if keywords and args and _before(keywords[0], args[-1]):
            # ``f(x=1, *rest)``: LibCST keeps the order of the text
            ordered: list[ast.expr | ast.keyword] = sorted([*args, *keywords], key=_position)
            built = [self.keyword(item) if isinstance(item, ast.keyword) else self.argument(item) for item in ordered]
        else:
            built = [self.argument(item) for item in args] + [self.keyword(item) for item in keywords]
        return _nodes.Call(func=self.expr(node.func), args=built)

    def elements(self, items: Sequence[ast.expr]) -> list[cst.BaseElement]:
        built: list[cst.BaseElement] = []
        for item in items:
            if type(item) is ast.Starred:
                built.append(_nodes.StarredElement(value=self.expr(item.value)))
            else:
                built.append(_nodes.Element(value=self.expr(item)))
        return built

    def comprehension(self, generators: Sequence[ast.comprehension]) -> cst.CompFor:
        inner: cst.CompFor | None = None
        for generator in reversed(generators):
            inner = _nodes.CompFor(
                target=self.expr(generator.target),
                iter=self.expr(generator.iter),
                ifs=[_nodes.CompIf(test=self.expr(test)) for test in generator.ifs],
                inner_for_in=inner,
                asynchronous=_nodes.Asynchronous() if generator.is_async else None,
            )
        assert inner is not None
        return inner

    def subscript_element(self, node: ast.expr) -> cst.SubscriptElement:
        if type(node) is ast.Slice:
            return _nodes.SubscriptElement(
                slice=_nodes.Slice(
                    lower=self.expr(node.lower) if node.lower is not None else None,
                    upper=self.expr(node.upper) if node.upper is not None else None,
                    step=self.expr(node.step) if node.step is not None else None,
                ),
            )
        if type(node) is ast.Starred:
            return _nodes.SubscriptElement(slice=_nodes.Index(value=self.expr(node.value), star="*"))
        return _nodes.SubscriptElement(slice=_nodes.Index(value=self.expr(node)))

    def subscript(self, node: ast.Subscript) -> cst.Subscript:
        index = node.slice
        if type(index) is ast.Tuple and index.elts and not self._bracketed_tuple(index.elts, index):  # type: ignore[attr-defined]
            elements = [self.subscript_element(item) for item in index.elts]
        else:
            elements = [self.subscript_element(index)]
        return _nodes.Subscript(value=self.expr(node.value), slice=elements)

    def string_parts(self, values: Sequence[ast.expr]) -> list[cst.BaseFormattedStringContent]:
        parts: list[cst.BaseFormattedStringContent] = []
        for value in values:
            if type(value) is ast.Constant:
                text = str(value.value).replace("{", "{{").replace("}", "}}")
                parts.append(_nodes.FormattedStringText(value=text))
            else:
                conversion = chr(value.conversion) if value.conversion >= 0 else None
                spec = self.string_parts(value.format_spec.values) if isinstance(value.format_spec, ast.JoinedStr) else None  # type: ignore[attr-defined]
                parts.append(_nodes.FormattedStringExpression(expression=self.expr(value.value), conversion=conversion, format_spec=spec))
        return parts

    def constant(self, node: ast.Constant) -> cst.BaseExpression:
        value = node.value
        if value is None or value is True or value is False:
            return self.name(repr(value))
        if value is Ellipsis:
            return _nodes.Ellipsis()
        kind = type(value)
        if kind is str or kind is bytes:
            return _nodes.SimpleString(value=repr(value))
        if kind is int:
            return _nodes.Integer(value=repr(value))
        if kind is float:
            return _nodes.Float(value=repr(value))
        if kind is complex:
            return _nodes.Imaginary(value=f"{value.imag!r}j")
        raise Unsupported(f"constant {kind.__name__}")

    # -- expressions ---------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Any:
        kind = type(node)
        if kind is ast.Name:
            return _nodes.Name(value=node.id)  # type: ignore[attr-defined]
        if kind is ast.Attribute:
            return _nodes.Attribute(value=self.expr(node.value), attr=self.name(node.attr))  # type: ignore[attr-defined]
        if kind is ast.Call:
            return self.call(node)  # type: ignore[arg-type]
        if kind is ast.Constant:
            return self.constant(node)  # type: ignore[arg-type]
        builder = _EXPRESSIONS.get(kind)
        if builder is None:
            raise Unsupported(kind.__name__)
        return builder(self, node)

    def binary(self, node: ast.BinOp) -> cst.BinaryOperation:
        return _nodes.BinaryOperation(
            left=self.operand(node.left, node),
            operator=_operator(_BINARY[type(node.op)]),
            right=self.operand(node.right),
        )

    def operand(self, node: ast.expr, starting: ast.expr | None = None) -> Any:
        """An operand of a binary or boolean operation, with its brackets when it is one too
        (``a + (b + c)``: :mod:`tcl009_graph_accumulation` reads them). ``starting``: the
        operation whose first operand ``node`` is (bracketed only if it starts later than it)."""
        built = self.expr(node)
        if type(node) in (ast.BinOp, ast.BoolOp):
            if starting is not None:
                bracketed = (node.lineno, node.col_offset) != (starting.lineno, starting.col_offset)
            else:
                bracketed = self._parenthesized_at(node)
            if bracketed:
                built = _with_parentheses(built)
        return built

    def boolean(self, node: ast.BoolOp) -> cst.BooleanOperation:
        operator = _operator(_BOOLEAN[type(node.op)])
        values = node.values
        built = _nodes.BooleanOperation(left=self.operand(values[0], node), operator=operator, right=self.operand(values[1]))
        for value in values[2:]:
            built = _nodes.BooleanOperation(left=built, operator=operator, right=self.operand(value))
        return built  # type: ignore[no-any-return]

    def unary(self, node: ast.UnaryOp) -> cst.UnaryOperation:
        return _nodes.UnaryOperation(operator=_operator(_UNARY[type(node.op)]), expression=self.expr(node.operand))

    def compare(self, node: ast.Compare) -> cst.Comparison:
        targets = [_nodes.ComparisonTarget(operator=_operator(_COMPARE[type(op)]), comparator=self.expr(value)) for op, value in zip(node.ops, node.comparators)]
        return _nodes.Comparison(left=self.expr(node.left), comparisons=targets)

    def if_expression(self, node: ast.IfExp) -> cst.IfExp:
        return _nodes.IfExp(test=self.expr(node.test), body=self.expr(node.body), orelse=self.expr(node.orelse))

    def lambda_expression(self, node: ast.Lambda) -> cst.Lambda:
        return _nodes.Lambda(params=self.parameters(node.args), body=self.expr(node.body))

    def named(self, node: ast.NamedExpr) -> cst.NamedExpr:
        return _nodes.NamedExpr(target=self.expr(node.target), value=self.expr(node.value))

    def subscript_expression(self, node: ast.Subscript) -> cst.Subscript:
        return self.subscript(node)

    def list_display(self, node: ast.List) -> cst.List:
        return _nodes.List(elements=self.elements(node.elts))

    def tuple_display(self, node: ast.Tuple) -> cst.Tuple:
        return _nodes.Tuple(elements=self.elements(node.elts), lpar=_PARENTHESES[0], rpar=_PARENTHESES[1])

    def set_display(self, node: ast.Set) -> cst.Set:
        return _nodes.Set(elements=self.elements(node.elts))

    def dict_display(self, node: ast.Dict) -> cst.Dict:
        elements: list[cst.BaseDictElement] = [
            _nodes.StarredDictElement(value=self.expr(value)) if key is None else _nodes.DictElement(key=self.expr(key), value=self.expr(value))
            for key, value in zip(node.keys, node.values)
        ]
        return _nodes.Dict(elements=elements)

    def list_comprehension(self, node: ast.ListComp) -> cst.ListComp:
        return _nodes.ListComp(elt=self.expr(node.elt), for_in=self.comprehension(node.generators))

    def set_comprehension(self, node: ast.SetComp) -> cst.SetComp:
        return _nodes.SetComp(elt=self.expr(node.elt), for_in=self.comprehension(node.generators))

    def generator(self, node: ast.GeneratorExp) -> cst.GeneratorExp:
        return _nodes.GeneratorExp(elt=self.expr(node.elt), for_in=self.comprehension(node.generators), lpar=_PARENTHESES[0], rpar=_PARENTHESES[1])

    def dict_comprehension(self, node: ast.DictComp) -> cst.DictComp:
        return _nodes.DictComp(key=self.expr(node.key), value=self.expr(node.value), for_in=self.comprehension(node.generators))

    def starred(self, node: ast.Starred) -> cst.StarredElement:
        return _nodes.StarredElement(value=self.expr(node.value))

    def await_expression(self, node: ast.Await) -> cst.Await:
        return _nodes.Await(expression=self.expr(node.value))

    def yield_expression(self, node: ast.Yield) -> cst.Yield:
        return _nodes.Yield(value=self.expr(node.value) if node.value is not None else None)

    def yield_from(self, node: ast.YieldFrom) -> cst.Yield:
        return _nodes.Yield(value=_nodes.From(item=self.expr(node.value)))

    def joined_string(self, node: ast.JoinedStr) -> cst.FormattedString:
        return _nodes.FormattedString(parts=self.string_parts(node.values), start='f"', end='"')

    # -- brackets the ``ast`` drops ------------------------------------------------------------

    def _offset(self, line: int, column: int) -> int:
        """The text offset of ``ast``'s (line, UTF-8 byte column)."""
        if self._line_starts is None:
            starts = [0]
            text = self.text
            position = text.find("\n")
            while position != -1:
                starts.append(position + 1)
                position = text.find("\n", position + 1)
            self._line_starts = starts
        start = self._line_starts[line - 1]
        if column == 0:
            return start
        line_text = self.text[start : start + column * 4 + 4]
        return start + len(line_text.encode("utf-8")[:column].decode("utf-8", "replace"))

    @staticmethod
    def _bracketed_tuple(items: Sequence[Any], node: Any) -> bool:
        """Whether a tuple of ``items`` has brackets of its own (``x[(a, b)]``: one index, a
        tuple; ``x[a, b]`` and ``x[(a, b), c]``: two): they widen it past its first and last items."""
        first, last = items[0], items[-1]
        return (first.lineno, first.col_offset) != (node.lineno, node.col_offset) and (last.end_lineno, last.end_col_offset) != (
            node.end_lineno,
            node.end_col_offset,
        )

    def _parenthesized_at(self, node: ast.expr) -> bool:
        """Whether the text opens a bracket just before ``node`` (an operation's second operand:
        no call's bracket can sit there), past whitespace and comments."""
        text = self.text
        position = self._offset(node.lineno, node.col_offset) - 1
        while position >= 0:
            character = text[position]
            if character == "\n":
                start = text.rfind("\n", 0, position) + 1
                line = text[start:position]
                hash_at = line.find("#")
                if hash_at != -1 and line.count('"', 0, hash_at) % 2 == 0 and line.count("'", 0, hash_at) % 2 == 0:
                    position = start + hash_at  # a comment ends that line: look before it
                position -= 1
            elif character in " \t\\\r\f":
                position -= 1
            else:
                return character == "("
        return False


def _with_parentheses(node: Any) -> Any:
    return node.with_changes(lpar=_PARENTHESES[0], rpar=_PARENTHESES[1])


def _position(node: ast.expr | ast.keyword) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def _before(first: ast.keyword, second: ast.expr) -> bool:
    return _position(first) < _position(second)


MISSING_STAR = cst.MaybeSentinel.DEFAULT

_COMPOUND: dict[type, Callable[[_Builder, Any], cst.BaseCompoundStatement]] = {
    ast.FunctionDef: _Builder.function,
    ast.AsyncFunctionDef: _Builder.function,
    ast.ClassDef: _Builder.class_definition,
    ast.If: _Builder.if_statement,
    ast.For: _Builder.for_statement,
    ast.AsyncFor: _Builder.for_statement,
    ast.While: _Builder.while_statement,
    ast.With: _Builder.with_statement,
    ast.AsyncWith: _Builder.with_statement,
    ast.Try: _Builder.try_statement,
    ast.Match: _Builder.match,
}
if sys.version_info >= (3, 11):
    _COMPOUND[ast.TryStar] = _Builder.try_statement

_SMALL: dict[type, Callable[[_Builder, Any], cst.BaseSmallStatement]] = {
    ast.Expr: _Builder.expression_statement,
    ast.Assign: _Builder.assign,
    ast.AugAssign: _Builder.augmented_assign,
    ast.AnnAssign: _Builder.annotated_assign,
    ast.Return: _Builder.return_statement,
    ast.Delete: _Builder.delete,
    ast.Raise: _Builder.raise_statement,
    ast.Assert: _Builder.assert_statement,
    ast.Import: _Builder.import_statement,
    ast.ImportFrom: _Builder.import_from,
    ast.Global: _Builder.global_statement,
    ast.Nonlocal: _Builder.nonlocal_statement,
    ast.Pass: _Builder.pass_statement,
    ast.Break: _Builder.break_statement,
    ast.Continue: _Builder.continue_statement,
}

_EXPRESSIONS: dict[type, Callable[[_Builder, Any], Any]] = {
    ast.BinOp: _Builder.binary,
    ast.BoolOp: _Builder.boolean,
    ast.UnaryOp: _Builder.unary,
    ast.Compare: _Builder.compare,
    ast.IfExp: _Builder.if_expression,
    ast.Lambda: _Builder.lambda_expression,
    ast.NamedExpr: _Builder.named,
    ast.Subscript: _Builder.subscript_expression,
    ast.List: _Builder.list_display,
    ast.Tuple: _Builder.tuple_display,
    ast.Set: _Builder.set_display,
    ast.Dict: _Builder.dict_display,
    ast.ListComp: _Builder.list_comprehension,
    ast.SetComp: _Builder.set_comprehension,
    ast.GeneratorExp: _Builder.generator,
    ast.DictComp: _Builder.dict_comprehension,
    ast.Starred: _Builder.starred,
    ast.Await: _Builder.await_expression,
    ast.Yield: _Builder.yield_expression,
    ast.YieldFrom: _Builder.yield_from,
    ast.JoinedStr: _Builder.joined_string,
}


def module_from_ast(tree: ast.Module, text: str) -> cst.Module:
    """The LibCST tree of ``text`` (whose ``ast`` is ``tree``), for analysis only (see the module
    docstring). Raises :class:`Unsupported` for what it does not build."""
    if "\r" in text and "\r" in text.replace("\r\n", ""):
        raise Unsupported("lines ended by a lone carriage return")  # Python counts them as lines; the offsets here do not
    try:
        return _Builder(text).module(tree)
    except RecursionError:
        raise Unsupported("too deeply nested") from None
    except Exception as error:  # noqa: BLE001 - a tree this module cannot build is LibCST's to parse
        if os.environ.get("TORCHCOPY_LINT_DEBUG"):
            raise
        raise Unsupported(f"{type(error).__name__}: {error}") from None
