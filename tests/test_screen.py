"""The structural pre-screen never loses a finding (torchcopy_lint/screen.py).

Each checker's ``applies`` is a necessary condition: running the whole pipeline with
the screen and without it must give the same findings, over every catalogue block,
the examples, this package's own source and torch's source. (The whole of torch's
source was compared when the screen was written; the suite compares every 6th file,
sorted, to keep CI short.)

The screened run also analyses each admitted file first on the tree built from ``ast``
(torchcopy_lint/cst_from_ast.py) and parses it with LibCST only when that reports; the
unscreened run uses LibCST's tree alone. So these tests also check that the tree from
``ast`` loses no finding. A rule that reads comments (TCL100) turns that tree off for the
whole file, so the comparisons run the rules without it (FAST_CODES) as well as with it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO, differences_in_files, torch_source_files
from torchcopy_lint.catalogue import load_catalogue
from torchcopy_lint.engine import FileRun, rules_for
from torchcopy_lint.registry import all_rules
from torchcopy_lint import screen
from torchcopy_lint.screen import facts_of
from torchcopy_lint.source import CannotCheck

CODES = sorted(all_rules())
FAST_CODES = sorted(code for code, rule in all_rules().items() if not rule.checker.reads_source_layout)


def _difference(text: str, path: str, codes: list[str] = FAST_CODES) -> str | None:
    """What the screen changes in this file's findings (None: nothing)."""
    try:
        screened = FileRun.from_text(text, path, codes).findings()
    except CannotCheck:
        return None
    unscreened = FileRun.from_text(text, path, codes, screen=False).findings()
    if screened == unscreened:
        return None
    lost = [f"{f.line}:{f.code}" for f in unscreened if f not in screened]
    extra = [f"{f.line}:{f.code}" for f in screened if f not in unscreened]
    return f"{path}: lost {lost}, extra {extra}"


def _file_difference(path: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _difference(text, path)


def _differences(paths: list[str]) -> list[str]:
    return differences_in_files(_file_difference, paths)


def test_the_screen_keeps_every_finding_of_the_catalogue() -> None:
    cases = [(f"{code}-{example.kind}-{index}", example.source) for code, spec in load_catalogue().items() for index, example in enumerate(spec.examples)]
    for codes in (CODES, FAST_CODES):
        differences = [difference for name, source in cases if (difference := _difference(source, f"{name}.py", codes))]
        assert differences == []


def test_the_screen_keeps_every_finding_of_the_examples_and_this_package() -> None:
    paths = sorted(str(path) for root in ("examples", "torchcopy_lint", "tests", "benchmarks", "tools") for path in (REPO / root).rglob("*.py"))
    assert _differences(paths) == []


def test_the_screen_keeps_every_finding_on_torch_source() -> None:
    assert _differences(torch_source_files()[::6]) == []


def test_the_screen_rules_out_files_and_rules() -> None:
    """It is not a no-op: a file with no candidate is not parsed, and only admitted rules run."""
    plain = FileRun.from_text("import torch\n\nprint(torch.ones(3))\n", "plain.py", CODES)
    assert plain.candidates == [] and plain.findings() == []
    data_write = FileRun.from_text("import torch\n\n\ndef f(w):\n    w.data.add_(1)\n", "w.py", CODES)
    admitted = {rule.code for rule in data_write.candidates}
    assert {"TCL001", "TCL101"} <= admitted and not admitted & {"TCL002", "TCL003", "TCL006", "TCL009"}


_DISPATCH = """
class History:
    def on_batch_end(self, trainer, loss):
        self.losses.append(loss)

class Trainer:
    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def fit(self, xs, criterion):
        for x in xs:
            loss = criterion(x)
            loss.backward()
            self._call("{event}", loss)
"""


_SCALE = "def scale(v, w):\n    w.mul_(2)\n    return v\n\n"


@pytest.mark.parametrize(
    ("source", "code", "admitted"),
    [
        # TCL008: the write reaches a maybe-alias through a helper's return and a parameter.
        ("def flat(t):\n    return t.reshape(-1)\n\ndef g(t):\n    v = flat(t)\n    v.mul_(2)\n", "TCL008", True),
        ("def g(n):\n    v = int(n)\n    v += 1\n", "TCL008", False),  # the builtin int() is no .int()
        # A call that gives no tensor (``x.size(0)``, ``len(xs)``) carries nothing of its receiver
        # or arguments: the model reads it as a number (Evaluator._tensor_method, _builtin_call).
        ("def g(x):\n    flat = x.reshape(-1)\n    n = flat.size(0)\n    n += 1\n", "TCL008", False),
        ("def g(x):\n    flat = x.reshape(-1)\n    n = len(flat)\n    n += 1\n", "TCL008", False),
        ("def g(x):\n    flat = x.reshape(-1)\n    n = flat.sum(0)\n    n += 1\n", "TCL008", True),
        # ... but what a function of the file with such a name returns still reaches its calls.
        ("class A:\n    def size(self):\n        return self.x.reshape(-1)\n\ndef g(a):\n    n = a.size()\n    n += 1\n", "TCL008", True),
        ("def len(x):\n    return x.reshape(-1)\n\ndef g(x):\n    n = len(x)\n    n += 1\n", "TCL008", True),
        # TCL008: writes without an in-place method; an array a tensor was made from.
        ("import numpy as np\ndef f(t):\n    a = t.numpy()\n    np.sin(a, out=a)\n", "TCL008", True),
        ("def f(t):\n    a = t.numpy()\n    a.fill(0)\n", "TCL008", True),
        ("import torch\ndef f(a):\n    t = torch.from_numpy(a)\n    a[0] = 1\n    return t\n", "TCL008", True),
        ("def f(a):\n    b = a.copy()\n    b[0] = 1\n", "TCL008", False),
        # TCL007: a leaf reached through a loop over parameters; not inside no_grad.
        ("def f(model):\n    for p in model.parameters():\n        p.add_(1)\n", "TCL007", True),
        ("import torch\ndef f(model):\n    with torch.no_grad():\n        for p in model.parameters():\n            p.add_(1)\n", "TCL007", False),
        # TCL009: a helper adds what it is given; the call site passes a loss.
        ("class Meter:\n    def update(self, v):\n        self.sum += v\n\ndef f(m, batches, criterion):\n    for x in batches:\n        m.update(criterion(x))\n", "TCL009", True),
        ("def f(xs):\n    total = 0\n    for x in xs:\n        total += len(x)\n", "TCL009", False),
        # TCL009: outputs kept in a loop count only where the decision could report them.
        ("def f(model, xs):\n    outs = []\n    for x in xs:\n        outs.append(model(x))\n    return outs\n", "TCL009", False),
        ("def evaluate(model, xs):\n    outs = []\n    for x in xs:\n        outs.append(model(x))\n    return outs\n", "TCL009", True),
        ("def f(model, xs, opt):\n    outs = []\n    for x in xs:\n        out = model(x)\n        outs.append(out)\n        out.sum().backward()\n        opt.step()\n", "TCL009", True),
        ("def f(model, xs):\n    outs = []\n    for x in xs:\n        outs.append(model(x))\n\ndef g(model, xs):\n    model.eval()\n    f(model, xs)\n", "TCL009", False),
        # TCL009: outside a loop, only an accumulation that outlives the call (self.x, a global) counts.
        ("def train_step(model, opt, x):\n    parts = []\n    loss = model(x)\n    parts.append(loss)\n    loss.backward()\n    opt.step()\n", "TCL009", False),
        ("class T:\n    def train_step(self, model, opt, x):\n        loss = model(x)\n        self.losses.append(loss)\n        loss.backward()\n        opt.step()\n", "TCL009", True),
        # TCL004: a write changes a snapshot's source only if the written name flows into it.
        ("def f(w):\n    s = w.detach()\n    text = str(s)\n    text += '!'\n    return s, text\n", "TCL004", False),
        ("def f(w):\n    s = w.detach()\n    w.add_(1)\n    return s\n", "TCL004", True),
        ("import torch.nn as nn\ndef f(w):\n    s = w.detach()\n    nn.init.zeros_(w)\n    return s\n", "TCL004", True),
        ("def f(model):\n    sd = model.state_dict()\n    for p in model.parameters():\n        p.add_(1)\n    return sd\n", "TCL004", True),
        # TCL004: only a snapshot that may be kept (assigned, added, returned) is one; an alias used on the spot is not.
        ("def f(w):\n    show(w.detach())\n    w.add_(1)\n", "TCL004", False),
        ("def f(w):\n    w.data.add_(1)\n    return w\n", "TCL004", False),
        ("def f(w, history):\n    history.append(w.detach())\n    w.add_(1)\n", "TCL004", True),
        ("def take(w):\n    return w.data\n\ndef f(w):\n    s = take(w)\n    w.add_(1)\n    return s\n", "TCL004", True),
        ("def f(w):\n    s = (t := w.detach())\n    w.add_(1)\n    return s, t\n", "TCL004", True),
        # TCL004: a snapshot of trained state, then a training call or one given an optimizer.
        ("def f(model, opt, loader):\n    w = model.weight.detach()\n    run(model, opt, loader)\n    return w\n", "TCL004", True),
        ("def f(model, loader):\n    w = model.weight.detach()\n    show(model, loader)\n    return w\n", "TCL004", False),
        # TCL009: a method called by a string name (``getattr(cb, hook)(self, *args)``) keeps what the call naming it passes.
        (_DISPATCH.format(event="on_batch_end"), "TCL009", True),
        (_DISPATCH.format(event="on_epoch_end"), "TCL009", False),
        # TCL009: a function handed to a call is a hook only when a registration (or ``partial``) gets it.
        ("import torch\nstore = []\ndef hook(m, i, out):\n    store.append(out)\nmodel.register_forward_hook(hook)\n", "TCL009", True),
        ("import torch\nstore = []\ndef hook(m, i, out):\n    store.append(out)\nrun_later(model, hook)\n", "TCL009", False),
        ("import torch\nstore = []\ndef add(m, fn):\n    m.register_forward_hook(fn)\ndef hook(m, i, out):\n    store.append(out)\nadd(model, hook)\n", "TCL009", True),
        ("import torch\ndef add(m, fn):\n    m.register_forward_hook(fn)\ndef hook(m, i, out):\n    m.last = out.clone()\nadd(model, hook)\n", "TCL003", True),
        (_DISPATCH.replace("getattr(cb, hook)", 'getattr(cb, "on_" + hook)').format(event="batch_end"), "TCL009", True),
        # TCL005: a write through a plain name holding a detached alias, or a chained write on ``x.detach()`` itself.
        ("def f(x):\n    d = x.data\n    d[0] = 1\n    return x\n", "TCL005", True),
        ("def f(x):\n    return x.detach().view(-1).mul_(2)\n", "TCL005", True),
        ("def f(self):\n    self.w.data.add_(1)\n", "TCL005", False),
        ("def f(x):\n    data = load(x)\n    data[0] = 1\n    return x\n", "TCL005", False),
        # TCL005: a hook's parameter written in place after a detach in the caller.
        ("def scale(t):\n    t.mul_(2)\n\ndef f(w):\n    scale(w.detach())\n", "TCL005", True),
        # An item assignment changes a tensor only where its target is bound to one; items put into it do not make it one.
        ("def f(model):\n    meta = {}\n    meta['w'] = model.weight\n    meta['n'] = 1\n", "TCL007", False),
        ("def f(model, meta):\n    meta['w'] = model.weight\n    meta['n'] = 1\n", "TCL007", False),
        ("def f(model):\n    w = model.weight\n    w[0] = 1\n", "TCL007", True),
        ("def f(model):\n    rows = [model.weight]\n    rows[0][0] = 1\n", "TCL007", True),  # an item's own item: the parameter
        # ``x += v`` changes ``x`` in place only where ``x`` is already a tensor.
        ("def f(model):\n    total = 0\n    for p in model.parameters():\n        total += p.sum()\n", "TCL007", False),
        ("def f(model):\n    w = model.weight\n    w += 1\n", "TCL007", True),
        ("def f(x):\n    n = 0\n    y = x.reshape(-1)\n    n += y.sum()\n    return x, n\n", "TCL008", False),
        ("def f(x):\n    y = x.reshape(-1)\n    y += 1\n    return x\n", "TCL008", True),
        # TCL007: flag methods and writes through .data / .grad / .detach() never write a leaf that requires grad.
        ("def f(model):\n    for p in model.parameters():\n        p.requires_grad_(False)\n        p.data.mul_(2)\n        p.grad.zero_()\n", "TCL007", False),
        ("def f(model):\n    for p in model.parameters():\n        p.mul_(2)\n", "TCL007", True),
        # TCL005 / TCL008: a flag method is no write of values.
        ("def f(x):\n    return x.detach().requires_grad_()\n", "TCL005", False),
        ("def f(x):\n    y = x.reshape(-1)\n    y.requires_grad_()\n    return x\n", "TCL008", False),
        # TCL009: ``partial`` makes a hook only in a file that registers one.
        ("from functools import partial\nstore = []\ndef hook(m, i, out, name):\n    store.append(out)\nh = partial(hook, name='a')\n", "TCL009", False),
        ("from functools import partial\nstore = []\ndef hook(m, i, out, name):\n    store.append(out)\nmodel.register_forward_hook(partial(hook, name='a'))\n", "TCL009", True),
        # TCL009: a helper's accumulation is judged at a call in a training loop, not at one outside it.
        ("class Meter:\n    def record(self, v):\n        self.sum += v\n\ndef f(m, x, criterion, opt):\n    m.record(criterion(x))\n    opt.step()\n", "TCL009", False),
        ("class Meter:\n    def record(self, v):\n        self.sum += v\n\ndef f(m, xs, criterion, opt):\n    for x in xs:\n        m.record(criterion(x))\n        opt.step()\n", "TCL009", True),
        # TCL002: an operator overload named Tensor constructs nothing.
        ("import torch\ndef f(a, b):\n    return torch.ops.aten.mul.Tensor(a, b)\n", "TCL002", False),
        ("import torch\ndef f(a):\n    return torch.Tensor(a)\n", "TCL002", True),
        # TCL004: ``best = x`` keeps a snapshot only of what may be a module.
        ("class C:\n    def f(self):\n        prev = self.depth\n        self.depth += 1\n        return prev\n", "TCL004", False),
        ("def f(net, x):\n    best_model = net\n    net.weight.add_(x)\n    return best_model\n", "TCL004", True),
        ("def f(x, opt):\n    best_model = x\n    for p in x.parameters():\n        p.add_(1)\n    return best_model\n", "TCL004", True),  # a module by what it is used as
        # TCL007: ``self.W.requires_grad_()`` makes ``self.W`` a leaf, as ``self.W.requires_grad = True`` does.
        ("import torch\nclass L:\n    def __init__(self, n):\n        self.W = torch.empty(n)\n        self.W.requires_grad_()\n    def decay(self, wd):\n        self.W -= wd * self.W\n", "TCL007", True),
        ("import torch\nclass L:\n    def __init__(self, n):\n        self.W = torch.empty(n)\n    def decay(self, wd):\n        self.W -= wd * self.W\n", "TCL007", False),
        # TCL004: ``copy.copy(x)`` shares storage only for a module or an alias detach(), .data or state_dict() took.
        ("import copy\ndef f(config):\n    saved = copy.copy(config)\n    config['lr'] = 0.1\n    return saved\n", "TCL004", False),
        ("import copy\ndef f(net, x):\n    saved = copy.copy(net)\n    net.weight.add_(x)\n    return saved\n", "TCL004", True),
        ("import copy\ndef f(w):\n    d = w.detach()\n    saved = copy.copy(d)\n    w.add_(1)\n    return saved\n", "TCL004", True),
        # A call's arguments reach the parameters they may bind (by keyword, else by place; one
        # place on for a bound method's ``self``), as SemanticModel's call sites pass them.
        (_SCALE + "def f(model, n):\n    scale(model.weight, n)\n", "TCL007", False),
        (_SCALE + "def f(model, n):\n    scale(n, model.weight)\n", "TCL007", True),
        (_SCALE + "def f(model, n):\n    scale(n, w=model.weight)\n", "TCL007", True),
        (_SCALE + "def f(model, n):\n    scale(w=n, v=model.weight)\n", "TCL007", False),
        ("class S:\n    def scale(self, w):\n        w.mul_(2)\n\ndef f(s, model):\n    s.scale(model.weight)\n", "TCL007", True),
        ("def scale(v, *ws):\n    for w in ws:\n        w.mul_(2)\n\ndef f(model, n):\n    scale(n, model.weight)\n", "TCL007", True),
        # ... any of them where the places are unknown: after a ``*xs``, through an alias (a partial presets some).
        (_SCALE + "def f(model, n, rest):\n    scale(*rest, model.weight)\n", "TCL007", True),
        (_SCALE + "def f(model, n):\n    rescale = scale\n    rescale(model.weight, n)\n", "TCL007", True),
    ],
)
def test_screen_conditions_follow_values_between_names(source: str, code: str, admitted: bool) -> None:
    import ast

    rule = all_rules()[code]
    assert rule.checker.applies(facts_of(ast.parse(source), source)) is admitted


_EVERY_SHAPE = """
import a.b as c
from . import d
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
    try:
        raise ValueError from None
    except (ValueError, TypeError) as e:
        return e
    finally:
        assert x, "m"
class C(B, metaclass=M):
    t: int = 1
    async def g(self):
        async with a as (b, c), d:
            yield await b
"""


def _children_by_isinstance(node: ast.AST) -> list[ast.AST]:
    """The screen's child lists as written before they were generated per class."""
    fields = screen._child_fields(node.__class__)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


@pytest.mark.parametrize("source", [_EVERY_SHAPE, *(path.read_text(encoding="utf-8") for path in sorted((REPO / "torchcopy_lint").glob("*.py")))], ids=lambda text: text[:20])
def test_children_generated_per_node_class_are_those_of_every_field(source: str) -> None:
    """The per-class child functions skip no node and let no non-node through: ``True`` in
    ``case True``, ``None`` keys of ``{**kw}`` and absent keyword-only defaults."""
    for node in ast.walk(ast.parse(source)):
        assert screen._children(node) == _children_by_isinstance(node), ast.dump(node)[:200]


_GRAPH_SOURCE = '''
import torch

class Net(torch.nn.Module):
    def forward(self, x):
        return self.fc(x)

def train(model, loader, opt):
    losses, snaps = [], []
    for x, y in loader:
        out = model(x)
        loss = (out - y).pow(2).mean()
        loss.backward()
        losses.append(loss)
        w = model.fc.weight
        snap = w.detach()
        snaps.append(snap)
        alias = snap
        cfg = {"lr": 0.1}
        total = len(cfg)
    return losses, snaps, alias, total
'''


@pytest.mark.parametrize("predicate", ["carries_history", "may_be_module", "is_leaf_evidence", "is_detached_evidence"])
def test_reaching_is_the_forward_closure_of_the_accepted_keys(predicate: str) -> None:
    """``ScreenFacts.reaching`` answers key by key, searching back through the flows: it must
    accept exactly the keys a spread from every accepted key reaches (asked in two orders,
    since answers are remembered between questions)."""
    facts = facts_of(ast.parse(_GRAPH_SOURCE), _GRAPH_SOURCE)
    evidence = getattr(facts, predicate) if hasattr(facts, predicate) else getattr(screen, predicate)
    users = facts._users()
    expected = screen._spread([key for key in users if evidence(key)], users)
    assert expected and set(users) - expected  # the example has keys of both kinds
    for keys in (sorted(users), sorted(users, reverse=True)):
        fresh = facts_of(ast.parse(_GRAPH_SOURCE), _GRAPH_SOURCE)
        reached = fresh.reaching(getattr(fresh, predicate) if hasattr(fresh, predicate) else evidence)
        assert {key for key in keys if key in reached} == expected
        assert "no such key" not in reached
