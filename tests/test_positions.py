"""Where a top-level statement starts: read off Python's ``ast`` must equal LibCST's own count.

torchcopy_lint/positions.py counts the lines before a finding's top-level statement from the
``ast`` tree the syntax check already built (no code generation of everything above it); the
code-generation count stays as the fallback and is the reference here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from torchcopy_lint.positions import _starts_from_ast, ast_lines_up, statement_start_lines

TRICKY = '''#!/usr/bin/env python
# a header comment

"""Module docstring."""
import os; import sys

# a comment before a decorated function

@decorator  # trailing
# a comment between decorators

@other(
    1,
)
def f(x):
    return x
    # an indented comment after the block: the block's footer


async def g():
    async with a as b:
        pass
x = (
    1
); y = 2
if x:
    pass
elif y:
    pass
else:
    pass
try:
    pass
except Exception:
    pass
finally:
    pass
class C(
    object,
):
    """Doc."""
match x:
    case 1:
        pass
    case _:
        pass
for i in range(3): pass
while False: break
with open(p) as fh: pass
'''


def test_a_line_holding_only_a_continuation_is_left_to_code_generation() -> None:
    source = "x = 1\n\\\nz = 3\n"
    from_ast, generated = _both(source)
    assert from_ast != generated  # LibCST starts ``z = 3`` on the backslash's line
    assert not ast_lines_up(source)
    assert ast_lines_up(TRICKY) and ast_lines_up("s = 'a\\\\b'\n")


def _both(source: str) -> tuple[dict[int, int] | None, dict[int, int]]:
    module = cst.parse_module(source)
    wanted = set(range(len(module.body)))
    return _starts_from_ast(module, ast.parse(source), wanted), statement_start_lines(module, wanted)


def test_tricky_layouts_agree_with_code_generation() -> None:
    from_ast, generated = _both(TRICKY)
    assert from_ast == generated
    assert len(generated) == 12


@pytest.mark.parametrize("path", sorted(Path(__file__).resolve().parents[1].joinpath("torchcopy_lint").rglob("*.py"))[:40], ids=lambda p: p.name)
def test_the_package_sources_agree_with_code_generation(path: Path) -> None:
    from_ast, generated = _both(path.read_text(encoding="utf-8"))
    assert from_ast == generated


def test_trees_that_do_not_line_up_fall_back() -> None:
    module = cst.parse_module("def f():\n    pass\n")
    assert _starts_from_ast(module, ast.parse("x = 1\n"), {0}) is None
    assert statement_start_lines(module, {0}, ast.parse("x = 1\n")) == {0: 1}
