"""Per-rule autofixes: each surface form's input and expected output, safe vs unsafe,
overlapping fixes, aliased imports (the `autofixed` blocks are checked in test_fixes.py)."""

from __future__ import annotations

import textwrap

import pytest

from torchcopy_lint.fixes.apply import fix_bytes


def fix(source: str, code: str, unsafe: bool = False) -> str:
    """What ``--fix`` (or ``--fix --unsafe-fixes``) makes of ``source``, checked to be stable."""
    outcome = fix_bytes(textwrap.dedent(source).encode(), "example.py", {code}, unsafe=unsafe)
    again = fix_bytes(outcome.fixed, "example.py", {code}, unsafe=unsafe)
    assert not again.changed, "a second --fix changed the result again"
    return outcome.fixed.decode()


def check(code: str, source: str, expected: str, unsafe: bool = False) -> None:
    assert fix(source, code, unsafe) == textwrap.dedent(expected)


# -- TCL102 clone-detach-order ---------------------------------------------------------
def test_tcl102_forms() -> None:
    check(
        "TCL102",
        """\
        import torch as th

        def forms(y: th.Tensor, model):
            b = y.clone(memory_format=th.contiguous_format).detach()
            c = th.clone(y).detach_()
            d = th.clone(y, memory_format=th.preserve_format).detach()
            e = model.weight.clone().detach().requires_grad_(True)
            f = (y * 2).clone().detach()
            g = (y.clone().detach())
        """,
        """\
        import torch as th

        def forms(y: th.Tensor, model):
            b = y.detach().clone(memory_format=th.contiguous_format)
            c = y.detach().clone()
            d = y.detach().clone(memory_format=th.preserve_format)
            e = model.weight.detach().clone().requires_grad_(True)
            f = (y * 2).detach().clone()
            g = (y.detach().clone())
        """,
    )


def test_tcl102_unknown_receiver_is_unsafe() -> None:
    source = """\
    import torch

    def f(x):
        return x.clone().detach()
    """
    assert fix(source, "TCL102") == textwrap.dedent(source)
    assert fix(source, "TCL102", unsafe=True).endswith("return x.detach().clone()\n")
