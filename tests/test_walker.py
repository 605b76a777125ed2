"""The walker's child lists are written per node class (generated code): they must list what a
plain loop over the class's fields lists, in the same order, for every node of real code."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from torchcopy_lint.walker import Walker, _fields_of, iter_children

REPO = Path(__file__).resolve().parent.parent

_EVERY_SHAPE = """
import a.b as c
from . import (d, e as f)
@decorator(1)
def f(x, /, y=1, *args, k, m=2, **kw) -> int:
    global g
    match x:
        case True | None: pass
        case [1, *rest] if rest: pass
        case {"k": v, **others}: pass
        case Point(x=0, y=yy) as p: pass
    z = {**kw, "a": [i async for i in y] if y else (lambda q=3: q)()}
    w = f"{x!r:>{y}} {z}"
    del w[0], x.attr
    a[1:2, ::3] += b @ c
    try:
        raise ValueError from None
    except* (ValueError, TypeError) as e:
        return e
    finally:
        assert x, "m"
class C(B, metaclass=M):
    t: int = 1
    async def g(self):
        async with a as (b, c), d:
            yield await b
    while (n := len(self)) > 0:
        print(*n, sep="")
    else:
        pass
"""


def _children_by_fields(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children as the walker listed them before its code was generated per class."""
    found: list[cst.CSTNode] = []
    for name in _fields_of(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def _sources() -> list[str]:
    return [_EVERY_SHAPE, *(path.read_text(encoding="utf-8") for path in sorted((REPO / "torchcopy_lint").rglob("*.py")))]


@pytest.mark.parametrize("source", _sources(), ids=lambda text: text[:20])
def test_generated_children_are_those_of_every_field_in_order(source: str) -> None:
    pending: list[cst.CSTNode] = [cst.parse_module(source)]
    seen = 0
    while pending:
        node = pending.pop()
        expected = _children_by_fields(node)
        assert iter_children(node) == expected, type(node).__name__
        pending.extend(expected)
        seen += 1
    assert seen > 1


def test_the_walk_visits_every_child_once_in_source_order_with_its_parents() -> None:
    module = cst.parse_module(_EVERY_SHAPE)
    order: list[tuple[cst.CSTNode, cst.CSTNode | None]] = []
    walker = Walker([])

    def record(node: cst.CSTNode) -> None:
        order.append((node, walker.parent))

    for node_type in {type(node) for node, _ in _preorder(module)}:
        walker._visit.setdefault(node_type.__name__, []).append(record)
    walker.walk(module)
    assert order == list(_preorder(module))


def _preorder(node: cst.CSTNode, parent: cst.CSTNode | None = None):  # type: ignore[no-untyped-def]
    yield node, parent
    for child in _children_by_fields(node):
        yield from _preorder(child, node)
