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


# -- TCL003 graph-attached-snapshot ---------------------------------------------------
TCL003_SOURCE = """\
import torch as th
from torch import nn

def track(steps, model, x, device):
    w = th.nn.Parameter(th.ones(3))
    bias = nn.Parameter(th.zeros(3))
    history = []
    for _ in range(steps):
        history.append(w.clone())
    prev = th.clone(bias)
    prev2 = th.clone(bias, memory_format=th.contiguous_format)
    out = model(x)
    history.append(out.clone().to(device).float())
    ema_w = (model.fc.weight * 0.9).clone()
    initial = [p.clone() for p in model.parameters()]
    prev_w, prev_b = model.fc.weight.clone(), model.fc.bias.clone()
    return history, prev, prev2, ema_w, initial, prev_w, prev_b
"""


def test_tcl003_forms_are_unsafe_fixes() -> None:
    assert fix(TCL003_SOURCE, "TCL003") == TCL003_SOURCE  # nothing without --unsafe-fixes
    check(
        "TCL003",
        TCL003_SOURCE,
        """\
        import torch as th
        from torch import nn

        def track(steps, model, x, device):
            w = th.nn.Parameter(th.ones(3))
            bias = nn.Parameter(th.zeros(3))
            history = []
            for _ in range(steps):
                history.append(w.detach().clone())
            prev = bias.detach().clone()
            prev2 = bias.detach().clone(memory_format=th.contiguous_format)
            out = model(x)
            history.append(out.detach().clone().to(device).float())
            ema_w = (model.fc.weight * 0.9).detach().clone()
            initial = [p.detach().clone() for p in model.parameters()]
            prev_w, prev_b = model.fc.weight.detach().clone(), model.fc.bias.detach().clone()
            return history, prev, prev2, ema_w, initial, prev_w, prev_b
        """,
        unsafe=True,
    )
