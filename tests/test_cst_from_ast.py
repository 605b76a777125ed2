"""The tree built from ``ast`` is LibCST's tree to the analysis (torchcopy_lint/cst_from_ast.py).

Shapes (tests/cst_shapes.py: the tree less whitespace, comments, the spelling of literals and
brackets but those of operands) must be equal to those of LibCST's parse for
every construct below, every catalogue block, the test corpora, this package and every 12th
file of torch's source (all 2,285 were compared when the module was written: all equal). The findings staying the same
is tests/test_screen.py's job, which runs the screened pipeline (and so this tree) against
the unscreened one (LibCST's tree only).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import libcst as cst
import pytest
from conftest import REPO, differences_in_files, torch_source_files
from cst_shapes import shape

from torchcopy_lint.catalogue import load_catalogue
from torchcopy_lint.cst_from_ast import Unsupported, module_from_ast
from torchcopy_lint.engine import FileRun

_CONSTRUCTS = [
    "import a.b as c, d\nfrom . import (e, f as g)\nfrom ..h.i import *\n",
    "@decorator(1)\n@other\ndef f(x, /, y=1, *args, k, m=2, **kw) -> int:\n    global g\n    nonlocal_ = 1\n    return x\n",
    "def f(a, *, b=1):\n    def g():\n        nonlocal a\n        a = 2\n    return lambda p, /, q=3, *r, s, **t: p\n",
    "class C(B, D, metaclass=M, **extra):\n    t: int = 1\n    u: str\n    async def g(self):\n        async with a as (b, c), d:\n            yield await b\n        async for i in x:\n            yield from i\n",
    "if a:\n    pass\nelif b:\n    pass\nelif c:\n    pass\nelse:\n    pass\n",
    "if a:\n    pass\nelse:\n    if b:\n        pass\n",
    "if a: x = 1; y = 2\nwhile (n := len(s)) > 0: n -= 1\nelse: pass\nfor i, *j in k: break\nelse: continue\n",
    "try:\n    raise ValueError from None\nexcept (ValueError, TypeError) as e:\n    pass\nexcept Exception:\n    raise\nelse:\n    pass\nfinally:\n    assert x, 'm'\n",
    "del w[0], x.attr\ndel y\na[1:2, ::3] += b @ c\nx[(a, b)]\nx[(a, b), c]\nx[a, b,]\nx[()]\nx[:]\nx[::2]\nx[i]\n",
    "total = total + (a + b)\nt = (a + b) + c\nu = a + (b * c)\nv = int((x0 + x1) / 2 / s)\nw = a or (b and c)\nz = (a or b) and c\nq = not a or (  # why\n    b and c\n)\n",
    "x = f(a, *b, c=1, **d)\ny = f(x=1, *rest)\nz = f(*a, *b)\nw = f(**a, b=2)\nv = f()\n",
    "s = 'a' 'b'\nb = b'x'\nr = r'\\d'\nf1 = f'{x!r:>{y}} {z}' 'tail'\nf2 = f'{{literal}} {a}'\nn = (1, 2.5, 3j, 0x10, 1_000, -1, ...)\nt = (True, False, None)\n",
    "a = [1, *b]\nc = {1, *d}\ne = {**f, 'g': 1}\nh = (i for i in j if i if not i)\nk = [l for m in n for l in m]\no = {p: q for p, q in r}\ns = {t for t in u}\nv = [w async for w in x]\n",
    "x = a if b else c\ny = -a + +b - ~c\nz = a < b <= c == d != e > f >= g is h is not i in j not in k\nw = a ** b // c % d << e >> f | g & h ^ i\n",
    "match command:\n    case True | None:\n        pass\n    case [1, *rest] if rest:\n        pass\n    case (a, b) | a, b:\n        pass\n    case (a), b:\n        pass\n    case ():\n        pass\n    case {'k': v, **others}:\n        pass\n    case Point(1, x=0, y=yy) as p:\n        pass\n    case -1 | 1 + 2j | a.b | 'text':\n        pass\n    case [*_]:\n        pass\n    case _:\n        pass\n",
    "x: 'Tensor' = torch.zeros(3)\ndef f(x: 'T' = None, *a: int, **k: str) -> 'R': ...\nclass E: pass\n",
]
if sys.version_info >= (3, 11):
    _CONSTRUCTS.append("try:\n    pass\nexcept* ValueError as e:\n    pass\nexcept* (KeyError, TypeError):\n    pass\n")


def _same_shape(text: str) -> None:
    assert shape(module_from_ast(ast.parse(text), text)) == shape(cst.parse_module(text))


@pytest.mark.parametrize("text", _CONSTRUCTS, ids=lambda text: text.split("\n")[0][:30])
def test_every_construct_has_libcst_s_shape(text: str) -> None:
    _same_shape(text)


def test_shapes_tell_trees_apart() -> None:
    """The comparison itself sees what the analysis would: operators, operand brackets, order."""
    for first, second in [("a + b", "a - b"), ("t + (a + b)", "t + a + b"), ("f(a, b)", "f(b, a)"), ("x[a, b]", "x[(a, b)]"), ("if a: pass\nelse:\n    if b: pass", "if a: pass\nelif b: pass"), ("if a: pass", "if a:\n    pass"), ("a = 1; b = 2", "a = 1\nb = 2")]:
        assert shape(cst.parse_module(first)) != shape(cst.parse_module(second))
        assert shape(module_from_ast(ast.parse(first), first)) != shape(module_from_ast(ast.parse(second), second))


def test_what_it_does_not_build_is_left_to_libcst() -> None:
    """Syntax newer than the module knows (type parameters, ``type`` aliases on Python 3.12)
    raises Unsupported, and FileRun parses the file with LibCST instead."""
    text = "x = 1\n"
    tree = ast.parse(text)
    tree.body.append(_NewStatement())
    with pytest.raises(Unsupported):
        module_from_ast(tree, text)
    if sys.version_info >= (3, 12):
        text = "def first[T](items: list[T]) -> T:\n    return items[0]\n"
        with pytest.raises(Unsupported):
            module_from_ast(ast.parse(text), text)


def test_lines_ended_by_a_lone_carriage_return_are_left_to_libcst() -> None:
    text = "import torch\r\rdef f(w):\r    w.data.add_(1)\r"
    with pytest.raises(Unsupported):
        module_from_ast(ast.parse(text), text)
    found = FileRun.from_text(text, "old_mac.py", ["TCL001"]).findings()  # before: an internal error
    assert [finding.code for finding in found] == ["TCL001"]
    assert found == FileRun.from_text(text, "old_mac.py", ["TCL001"], screen=False).findings()


def test_a_tree_it_fails_to_build_is_left_to_libcst(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug of the builder costs speed, not findings (TORCHCOPY_LINT_DEBUG raises it instead)."""
    from torchcopy_lint import cst_from_ast

    def broken(self: object, node: ast.Call) -> None:
        raise KeyError("a builder bug")

    monkeypatch.setattr(cst_from_ast._Builder, "call", broken)
    monkeypatch.delenv("TORCHCOPY_LINT_DEBUG", raising=False)
    text = "import torch\n\ndef f(w):\n    w.data.add_(torch.ones(1))\n"
    with pytest.raises(Unsupported):
        module_from_ast(ast.parse(text), text)
    assert [(finding.line, finding.code) for finding in FileRun.from_text(text, "bug.py", ["TCL001"]).findings()] == [(4, "TCL001")]
    monkeypatch.setenv("TORCHCOPY_LINT_DEBUG", "1")
    with pytest.raises(KeyError):
        module_from_ast(ast.parse(text), text)


class _NewStatement(ast.stmt):
    """A statement of some later Python."""


def test_the_tree_prints_as_code() -> None:
    """Messages quote code; on this tree it prints in LibCST's default layout."""
    text = "total = total+(a+b)\nx = f(a,*b,c=1)\n"
    module = module_from_ast(ast.parse(text), text)
    assert module.code == "total = total + (a + b)\nx = f(a, *b, c = 1)\n"


def test_the_catalogue_blocks_have_libcst_s_shape() -> None:
    for spec in load_catalogue().values():
        for example in spec.examples:
            _same_shape(example.source)


def _file_difference(path: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(text)
        built = module_from_ast(tree, text)
    except (OSError, UnicodeDecodeError, SyntaxError, Unsupported):
        return None
    return None if shape(built) == shape(cst.parse_module(text)) else path


def _differences(paths: list[str]) -> list[str]:
    return differences_in_files(_file_difference, paths)


def test_the_corpora_and_this_package_have_libcst_s_shape() -> None:
    paths = sorted(str(path) for root in ("examples", "torchcopy_lint", "tests", "benchmarks") for path in (REPO / root).rglob("*.py"))
    assert len(paths) > 100
    assert _differences(paths) == []


def test_torch_source_has_libcst_s_shape() -> None:
    assert _differences(torch_source_files()[::12]) == []


def test_a_file_without_findings_is_never_parsed_by_libcst() -> None:
    text = "import torch\n\ndef f(w):\n    w.data.add_(1)\n\ndef g(values):\n    return torch.tensor(values)\n"
    clean = FileRun.from_text(text.replace("w.data.add_(1)", "w.add_(1)"), "clean.py", ["TCL001", "TCL002"])
    assert clean.candidates  # admitted by the screen (TCL002: torch.tensor of a name) ...
    assert clean.findings() == []
    assert clean._module is None  # ... and analysed without LibCST's parse
    flagged = FileRun.from_text(text, "flagged.py", ["TCL001", "TCL002"])
    assert [finding.code for finding in flagged.findings()] == ["TCL001"]
    assert flagged._module is not None  # reported from LibCST's own tree


def test_a_rule_that_reads_comments_gets_libcst_s_tree() -> None:
    text = "import torch\nx = torch.zeros(3)  # noqa: TCL001\n"
    run = FileRun.from_text(text, "noqa.py", ["TCL001", "TCL100"])
    assert [finding.code for finding in run.findings()] == ["TCL100"]
    assert run._module is not None


def test_a_hazard_in_a_match_statement_is_found() -> None:
    text = "import torch\n\ndef f(w, command):\n    match command:\n        case 'reset':\n            w.data.zero_()\n"
    run = FileRun.from_text(text, "match.py", ["TCL001"])
    assert [(finding.line, finding.code) for finding in run.findings()] == [(6, "TCL001")]
