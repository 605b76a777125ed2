"""Per-rule autofixes: each surface form's input and expected output, safe vs unsafe,
overlapping fixes, aliased imports (the `autofixed` blocks are checked in test_fixes.py)."""

from __future__ import annotations

import textwrap

import pytest

from torchcopy_lint.engine import lint_source
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
            c = x.detach()
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
    k = opts.new_tensor(y)
    return a, b, c, d, e, f, g, h, i, j, k
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
            k = opts.new_tensor(y)
            return a, b, c, d, e, f, g, h, i, j, k
        """,
    )


def test_tcl002_unsafe_forms_stack_and_legacy() -> None:
    fixed = fix(TCL002_SOURCE, "TCL002", unsafe=True)
    assert "f = th.stack([th.stack([x, y]), th.stack([y, x])]).detach()" in fixed
    assert "g = x.detach().clone()" in fixed
    assert "h = th.tensor(x, pin_memory=flag)" in fixed and "i = th.tensor(x, **opts)" in fixed
    assert "k = y.detach().clone().to(opts)" in fixed  # a receiver not shown to be a tensor: unsafe


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


# -- TCL006 legacy-constructor ---------------------------------------------------------------
def test_tcl006_forms() -> None:
    check(
        "TCL006",
        """\
        import numpy as np
        import torch as th
        from torch import LongTensor

        def alloc(x: th.Tensor, arr, shape, items, values):
            a = th.Tensor(x.shape)
            b = th.Tensor(arr.shape)
            c = th.Tensor(x.size(0) * 2, *shape)
            d = th.Tensor(*shape)
            e = LongTensor(len(items))
            f = th.FloatTensor([1, 2], device="cpu")
            g = th.cuda.FloatTensor([1, 2], device="cuda:1")
            h = th.Tensor(np.array([1, 2]))
            i = th.Tensor(np.prod([2, 3]))
            j = th.IntTensor(list(values) + [0])
            k = th.Tensor(values.tolist())
            m = th.DoubleTensor(
                3, 4,
            )
            return a, b, c, d, e, f, g, h, i, j, k, m
        """,
        """\
        import numpy as np
        import torch as th
        from torch import LongTensor

        def alloc(x: th.Tensor, arr, shape, items, values):
            a = th.empty(x.shape)
            b = th.Tensor(arr.shape)
            c = th.empty(x.size(0) * 2, *shape)
            d = th.Tensor(*shape)
            e = th.empty(len(items), dtype=th.int64)
            f = th.tensor([1, 2], device="cpu", dtype=th.float32)
            g = th.cuda.FloatTensor([1, 2], device="cuda:1")
            h = th.tensor(np.array([1, 2]), dtype=th.get_default_dtype())
            i = th.Tensor(np.prod([2, 3]))
            j = th.tensor(list(values) + [0], dtype=th.int32)
            k = th.Tensor(values.tolist())
            m = th.empty(
                3, 4, dtype=th.float64,
            )
            return a, b, c, d, e, f, g, h, i, j, k, m
        """,
    )


def test_tcl006_only_from_imports_get_import_torch() -> None:
    check(
        "TCL006",
        """\
        from torch import FloatTensor

        buf = FloatTensor(2, 3)
        """,
        """\
        from torch import FloatTensor
        import torch

        buf = torch.empty(2, 3, dtype=torch.float32)
        """,
    )


TCL006_EQUIVALENCE = [
    "torch.Tensor(3)",
    "torch.Tensor(2, 3)",
    "torch.FloatTensor(4)",
    "torch.LongTensor(2, 2)",
    "torch.ByteTensor(5)",
    "torch.Tensor(torch.Size([2, 3]))",
    "torch.Tensor(torch.ones(2, 3).shape)",
    "torch.HalfTensor(torch.ones(4, 2).size(0) * 2)",
    "torch.Tensor([1, 2, 3])",
    "torch.Tensor([[1, 2], [3, 4]])",
    "torch.Tensor((1.5, 2))",
    "torch.Tensor(range(4))",
    "torch.Tensor([v / 3 for v in range(5)])",
    "torch.LongTensor([0.9, -1.7, 2.2])",
    "torch.IntTensor([2.9, -1.5])",
    "torch.ByteTensor([1, 0, 255])",
    "torch.BoolTensor([2, 0, -1])",
    "torch.HalfTensor([0.1, 70000.0])",
    "torch.BFloat16Tensor([1.0 / 3])",
    "torch.DoubleTensor([1.0 / 3])",
    "torch.ShortTensor([3] * 2)",
    "torch.CharTensor([-1, 2] + [3])",
    "torch.FloatTensor(list((1, 2)))",
    "torch.LongTensor(sorted([3, 1, 2]))",
    "torch.FloatTensor(np.array([1.7, 2.2]))",
    "torch.Tensor([1, 2], device='cpu')",
]


@pytest.mark.parametrize("expression", TCL006_EQUIVALENCE)
def test_tcl006_fix_builds_the_same_tensor(expression: str) -> None:
    """Run the legacy call and its fixed spelling: same dtype, shape, device, and values for data."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    source = f"import numpy as np\nimport torch\nresult = {expression}\n"
    fixed = fix(source, "TCL006")
    assert fixed != source, "no fix offered"
    before, after = {}, {}
    exec(source, before)
    exec(fixed, after)
    old, new = before["result"], after["result"]
    assert (old.dtype, old.shape, old.device) == (new.dtype, new.shape, new.device)
    if "torch.empty" not in fixed:
        assert torch.equal(old, new)
    assert np is not None


def test_tcl006_names_bound_more_than_once_are_not_followed() -> None:
    """The scopes analysis keeps a name's latest binding; one bound twice may hold either value."""
    check(
        "TCL006",
        """\
        import torch

        LIMIT = 4
        SIZES = [2, 3]

        def f(c, items):
            n = 3
            if c:
                n = [1.0, 2.0]
            a = torch.Tensor(n)
            m = [1.0]
            for _ in items:
                m = 4
            b = torch.Tensor(m)
            q: int = 2
            d = torch.Tensor(q)
            return a, b, d, torch.Tensor(LIMIT), torch.Tensor(SIZES)

        def g():
            global SIZES
            SIZES = 5
        """,
        """\
        import torch

        LIMIT = 4
        SIZES = [2, 3]

        def f(c, items):
            n = 3
            if c:
                n = [1.0, 2.0]
            a = torch.Tensor(n)
            m = [1.0]
            for _ in items:
                m = 4
            b = torch.Tensor(m)
            q: int = 2
            d = torch.empty(q)
            return a, b, d, torch.empty(LIMIT), torch.Tensor(SIZES)

        def g():
            global SIZES
            SIZES = 5
        """,
    )


# -- several rules at once ---------------------------------------------------------------------
def test_overlapping_fixes_of_different_rules_settle_in_passes() -> None:
    """A statement TCL007 wraps holds calls TCL002 and TCL006 rewrite: the overlapping edits wait for
    the next pass and all land."""
    source = textwrap.dedent(
        """\
        import torch as th

        w = th.zeros(2, requires_grad=True)

        def reset(t: th.Tensor):
            w.copy_(th.tensor(t) + th.FloatTensor([1, 2]))
        """
    )
    outcome = fix_bytes(source.encode(), "example.py", {"TCL002", "TCL006", "TCL007"})
    assert outcome.fixed_count == 3
    assert outcome.fixed.decode() == textwrap.dedent(
        """\
        import torch as th

        w = th.zeros(2, requires_grad=True)

        def reset(t: th.Tensor):
            with th.no_grad():
                w.copy_(t.detach().clone() + th.tensor([1, 2], dtype=th.float32))
        """
    )


def test_tcl101_data_then_detach_is_not_detached_twice() -> None:
    check(
        "TCL101",
        """\
        import torch

        def copies(param_q: torch.Tensor):
            a = param_q.data.detach().clone()
            return a, param_q.data.clone()
        """,
        """\
        import torch

        def copies(param_q: torch.Tensor):
            a = param_q.detach().clone()
            return a, param_q.detach().clone()
        """,
    )


def test_tcl001_rebinding_is_fixed_only_where_the_layout_is_kept() -> None:
    source = """\
    import torch

    def step(p: torch.nn.Parameter, q):
        p.data = p.data * 0.9 + 0.1
        p.data = p.data.to(torch.float16)
        p.data = q
    """
    fixed = fix(source, "TCL001", unsafe=True)
    assert "p.copy_(p.data * 0.9 + 0.1)" in fixed
    assert "p.data = p.data.to(torch.float16)" in fixed and "p.data = q" in fixed
    messages = [f.message for f in lint_source(textwrap.dedent(source), "s.py", {"TCL001"})]
    assert "torch.utils.swap_tensors(p, torch.nn.Parameter(...))" in messages[1]

