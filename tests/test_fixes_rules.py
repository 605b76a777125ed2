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


# -- TCL007 leaf-inplace ------------------------------------------------------------------
def test_tcl007_statements_are_wrapped_and_joined() -> None:
    check(
        "TCL007",
        """\
        import torch as th

        w = th.zeros(4, 4, requires_grad=True)
        # reset the first row
        w[0].add_(1)  # keep this comment
        w[:, 1] = 0.0

        w *= 2
        if w.sum() > 0: w.zero_()
        reset = lambda: w.zero_()
        """,
        """\
        import torch as th

        w = th.zeros(4, 4, requires_grad=True)
        # reset the first row
        with th.no_grad():
            w[0].add_(1)  # keep this comment
            w[:, 1] = 0.0

        with th.no_grad():
            w *= 2
        if w.sum() > 0: w.zero_()
        reset = lambda: w.zero_()
        """,
    )


def test_tcl007_adds_the_torch_import_when_the_file_has_none() -> None:
    check(
        "TCL007",
        """\
        from torch.nn import Parameter
        from torch import zeros

        p = Parameter(zeros(2))
        p.fill_(1.0)
        """,
        """\
        from torch.nn import Parameter
        from torch import zeros
        import torch

        p = Parameter(zeros(2))
        with torch.no_grad():
            p.fill_(1.0)
        """,
    )


def test_tcl007_and_tcl001_fixes_side_by_side() -> None:
    source = """\
    import torch

    def step(model, lr):
        for p in model.parameters():
            p.data.mul_(0.9)
            p.add_(p.grad, alpha=-lr)
    """
    outcome = fix_bytes(textwrap.dedent(source).encode(), "example.py", {"TCL001", "TCL007"})
    assert outcome.fixed_count == 2
    assert outcome.fixed.decode() == textwrap.dedent(
        """\
        import torch

        def step(model, lr):
            for p in model.parameters():
                with torch.no_grad():
                    p.mul_(0.9)
                    p.add_(p.grad, alpha=-lr)
        """
    )


# -- TCL101 data-access -----------------------------------------------------------------
def test_tcl101_known_tensors_safe_guessed_ones_unsafe() -> None:
    source = """\
    import torch
    import torch.nn as nn

    def forms(model, param, criterion, x: torch.Tensor):
        a = x.data
        for m in model.modules():
            nn.init.xavier_uniform_(m.weight.data)
        b = (x * 2).data[0]
        c = x.data.data
        loss = criterion(model(x), x)
        d = loss.data
        e = param.data.cpu()
        x.data.zero_()  # TCL001's, not touched
        return a, b, c, d, e
    """
    check(
        "TCL101",
        source,
        """\
        import torch
        import torch.nn as nn

        def forms(model, param, criterion, x: torch.Tensor):
            a = x.detach()
            for m in model.modules():
                nn.init.xavier_uniform_(m.weight.detach())
            b = (x * 2).detach()[0]
            c = x.detach().detach()
            loss = criterion(model(x), x)
            d = loss.data
            e = param.data.cpu()
            x.data.zero_()  # TCL001's, not touched
            return a, b, c, d, e
        """,
    )
    unsafe = fix(source, "TCL101", unsafe=True)
    assert "d = loss.detach()" in unsafe and "e = param.detach().cpu()" in unsafe and "x.data.zero_()" in unsafe


def test_tcl101_with_tcl001_fixes_reads_and_writes() -> None:
    source = """\
    import torch

    def step(w: torch.Tensor, lr):
        g = w.grad.data
        w.data.add_(g, alpha=-lr)
    """
    outcome = fix_bytes(textwrap.dedent(source).encode(), "example.py", {"TCL001", "TCL101"}, unsafe=True)
    assert outcome.fixed.decode() == textwrap.dedent(
        """\
        import torch

        def step(w: torch.Tensor, lr):
            g = w.grad.detach()
            with torch.no_grad():
                w.add_(g, alpha=-lr)
        """
    )


# -- TCL002 tensor-copy-construct ----------------------------------------------------------
TCL002_SOURCE = """\
from torch import tensor
import torch as th

def forms(x: th.Tensor, y: th.Tensor, flag, model, opts):
    a = tensor(x * 2)
    b = th.tensor(data=x, dtype=None, device="cpu", pin_memory=True, requires_grad=True)
    c = th.tensor(x, requires_grad=flag)
    d = x.new_tensor(y, device="cpu")
    e = model.weight.new_tensor(y)
    f = th.tensor([[x, y], (y, x)])
    g = th.Tensor(x)
    h = th.tensor(x, pin_memory=flag)
    i = th.tensor(x, **opts)
    j = model(x).new_tensor(y)
    return a, b, c, d, e, f, g, h, i, j
"""


def test_tcl002_safe_forms() -> None:
    check(
        "TCL002",
        TCL002_SOURCE,
        """\
        from torch import tensor
        import torch as th

        def forms(x: th.Tensor, y: th.Tensor, flag, model, opts):
            a = (x * 2).detach().clone()
            b = x.detach().clone().to(device="cpu").pin_memory().requires_grad_()
            c = x.detach().clone().requires_grad_(flag)
            d = y.detach().clone().to(dtype=x.dtype, device="cpu")
            e = y.detach().clone().to(model.weight)
            f = th.tensor([[x, y], (y, x)])
            g = th.Tensor(x)
            h = th.tensor(x, pin_memory=flag)
            i = th.tensor(x, **opts)
            j = model(x).new_tensor(y)
            return a, b, c, d, e, f, g, h, i, j
        """,
    )


def test_tcl002_unsafe_forms_stack_and_legacy() -> None:
    fixed = fix(TCL002_SOURCE, "TCL002", unsafe=True)
    assert "f = th.stack([th.stack([x, y]), th.stack([y, x])]).detach()" in fixed
    assert "g = x.detach().clone()" in fixed
    assert "h = th.tensor(x, pin_memory=flag)" in fixed and "i = th.tensor(x, **opts)" in fixed


def test_tcl002_stack_imports_torch_when_the_file_has_only_from_imports() -> None:
    check(
        "TCL002",
        """\
        from torch import Tensor, tensor

        def merge(a: Tensor, b: Tensor):
            return tensor((a.sum(), b.sum()), dtype=a.dtype)
        """,
        """\
        from torch import Tensor, tensor
        import torch

        def merge(a: Tensor, b: Tensor):
            return torch.stack([a.sum(), b.sum()]).detach().to(dtype=a.dtype)
        """,
        unsafe=True,
    )
