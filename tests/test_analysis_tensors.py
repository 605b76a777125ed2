"""Unit tests of tensor inference and the scope / grad-mode facts it relies on, queried mid-walk."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import writes_in_place
from torchcopy_lint.analysis.tensors import MAYBE, NO, YES
from torchcopy_lint.context import FileContext
from conftest import probe



def kinds(source: str) -> list[object]:
    return probe(source, lambda ctx, expr: ctx.tensors.kind(expr))


def evidence(source: str) -> list[object]:
    return probe(source, lambda ctx, expr: ctx.tensors.grad_evidence(expr))


# -- comprehensions (TCL003) ----------------------------------------------------------

def test_comprehension_element_sees_its_targets() -> None:
    source = """
import torch
def f(model):
    a = [probe(p) for p in model.parameters()]
    b = {n: probe(p) for n, p in model.named_parameters()}
    c = [probe(q) for row in model.groups() for q in row]
"""
    assert kinds(source) == [YES, YES, MAYBE]
    assert evidence(source) == ["an element of .parameters()", "an element of .named_parameters()", None]


def test_self_referencing_loop_iterable_does_not_recurse() -> None:
    source = """
import torch
def f(a, b):
    for a in [a, b]:
        probe(a)
    return [probe(a) for a in [a, b]]
"""
    assert kinds(source) == [MAYBE, MAYBE]


# -- if / elif / else branches (TCL002) -----------------------------------------------

def test_else_branch_does_not_see_the_if_body_binding() -> None:
    source = """
import torch
def f(scales, cond):
    if cond:
        scales = torch.ones(3)
    else:
        probe(scales)
    probe(scales)
"""
    # After the if: the body's binding (the else branch bound nothing).
    assert kinds(source) == [MAYBE, YES]


def test_elif_chain_isolates_each_branch() -> None:
    source = """
import torch
def f(x, c):
    if c == 0:
        x = torch.ones(3)
    elif c == 1:
        probe(x)
        x = [1]
    else:
        probe(x)
"""
    assert kinds(source) == [MAYBE, MAYBE]


def test_a_branch_that_leaves_does_not_bind_after_the_if() -> None:
    source = """
import torch
def f(mesh, group, kind):
    if group is not None:
        mesh = torch.ones(3)
        return mesh
    probe(mesh)
    if kind:
        t = torch.ones(2)
    else:
        raise ValueError(kind)
    probe(t)
    if kind:
        u = [1]
    else:
        u = torch.ones(2)
    probe(u)
    if kind:
        v = torch.ones(2)
    probe(v)
"""
    # ``u`` is a list on one branch and a tensor on the other: either may reach the probe.
    assert kinds(source) == [MAYBE, YES, MAYBE, YES]


# -- state a loop carries: its seed reaches only a loop that never ran (TCL003) ----------

def test_loop_carried_state_is_what_the_body_made() -> None:
    source = """
import torch
import torch.nn as nn
def f(xs, n, h0):
    cell = nn.GRUCell(4, 4)
    h = h0.detach()
    for x in xs:
        h = cell(x, h)
    probe(h)
    k = h0.detach()
    for x in xs:
        if x is None:
            k = cell(x, k)
    probe(k)
    m = h0.detach()
    for x in xs:
        m = cell(x, None)
    probe(m)
"""
    # h: read in the body, rebound on every path through it; k: some paths keep the seed;
    # m: rebound but never read, so nothing is carried and the seed still reaches. (Detached
    # seeds: new memory such as ``torch.zeros`` gives way to any value that requires grad.)
    assert evidence(source) == ["a module output", None, None]


def test_new_memory_gives_way_where_paths_meet() -> None:
    source = """
import torch
def f(model, x, ready, data):
    if ready:
        a = model(x)
    else:
        a = torch.zeros(())
    probe(a)
    b = model(x) if ready else torch.tensor(0.0)
    probe(b)
    c = model(x) if ready else torch.randn(())
    probe(c)
    d = model(x) if not isinstance(data, torch.Tensor) else data
    e = d if isinstance(data, torch.Tensor) else torch.as_tensor(data)
    probe(e)
    g = model(x) if ready else model(x).detach()
    probe(g)
    with torch.no_grad():
        off = model(x)
    h = model(x) if ready else off
    probe(h)
"""
    # New memory without history (zeros, a tensor of numbers, a random draw, a conversion of
    # what is surely no tensor) is a seed; a detached value or one made under no_grad surely
    # does not require grad by intent, and the join says so.
    assert evidence(source) == ["a module output"] * 4 + [None, None]


# -- isinstance narrowing in a conditional expression (TCL002) ------------------------

def test_isinstance_narrows_both_arms_of_a_conditional_expression() -> None:
    source = """
import torch
def f(mesh):
    a = probe(mesh) if isinstance(mesh, torch.Tensor) else probe(mesh)
    b = probe(mesh) if not isinstance(mesh, torch.Tensor) else probe(mesh)
    probe(mesh)
"""
    assert kinds(source) == [YES, NO, NO, YES, MAYBE]


# -- grad mode: custom autograd Function (TCL003) -------------------------------------

def test_autograd_function_forward_runs_without_grad() -> None:
    source = """
import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        probe(x)

    @staticmethod
    def backward(ctx, grad):
        probe(grad)

class Net(torch.nn.Module):
    def forward(self, x):
        probe(x)
"""
    assert probe(source, lambda ctx, expr: ctx.grad.disabled) == [True, False, False]


# -- cst_helpers.writes_in_place (TCL003) ---------------------------------------------

def test_writes_in_place() -> None:
    def written(source: str, name: str) -> bool:
        return writes_in_place(cst.parse_module(source), name)

    assert written("w_copy.mul_(2)\n", "w_copy")
    assert written("orig[0] = 1\n", "orig")
    assert written("prev += 1\n", "prev")
    assert written("torch.add(a, b, out=prev)\n", "prev")
    assert not written("prev.mul(2)\nother.add_(1)\nx = prev[0]\n", "prev")


# -- isinstance with a tuple that is not all tensor classes (TCL101) -------------------------
def test_isinstance_with_a_non_tensor_class_in_the_tuple_does_not_narrow() -> None:
    source = """
import torch
from torch.nn.utils.rnn import PackedSequence

def f(obj, t):
    if isinstance(obj, (torch.Tensor, PackedSequence)):
        probe(obj)
    else:
        probe(obj)
    if isinstance(t, (torch.Tensor, torch.nn.Parameter)):
        probe(t)
"""
    assert kinds(source) == [MAYBE, MAYBE, YES]


def test_isinstance_of_a_builtin_type_says_the_body_is_no_tensor() -> None:
    """A parameter annotated Tensor but guarded by isinstance(x, list) is a list there
    (a TCL002 false positive found in transformers' blip); the else branch stays a tensor."""
    from conftest import lint

    source = (
        "import torch\n"
        "def f(input_ids: torch.Tensor):\n"
        "    if isinstance(input_ids, list):\n"
        "        a = torch.tensor(input_ids)\n"
        "    else:\n"
        "        b = torch.tensor(input_ids)\n"
        "    c = torch.tensor(input_ids) if isinstance(input_ids, (list, tuple)) else None\n"
    )
    assert lint(source, "TCL002") == [(6, "TCL002")]


def test_buffers_named_weight_and_switched_off_grad_are_not_leaves() -> None:
    """TCL007 false positives from transformers: FrozenBatchNorm2d registers weight/bias as
    buffers, and pytorch_utils switches requires_grad off around a copy_."""
    from conftest import lint

    source = (
        "import torch\n"
        "from torch import nn\n"
        "class FrozenBN(nn.Module):\n"
        "    def __init__(self, n):\n"
        "        super().__init__()\n"
        "        self.register_buffer('weight', torch.ones(n))\n"
        "    def reset(self):\n"
        "        self.weight.fill_(1.0)\n"
        "def replace(module):\n"
        "    new_module = FrozenBN(4)\n"
        "    new_module.weight.copy_(module.weight)\n"
        "    layer = nn.Linear(2, 2)\n"
        "    layer.weight.requires_grad = False\n"
        "    layer.weight.copy_(module.weight)\n"
        "    layer.weight.requires_grad = True\n"
        "    layer.weight.copy_(module.weight)\n"
    )
    assert lint(source, "TCL007") == [(16, "TCL007")]


def test_getattr_with_a_name_that_is_no_identifier_is_unknown() -> None:
    """``getattr(x, "🐍")`` / ``getattr(x, "class")`` cannot be spelled as ``x.name``."""
    source = """
import torch
def f(x):
    probe(getattr(x, "\U0001F40D"))
    probe(getattr(x, "class"))
"""
    assert kinds(source) == [MAYBE, MAYBE]



# -- replay memories: namedtuples, *args, zip(*rows) (TCL002); random draws are data ----------

def _shape(value: object) -> str:
    """``tensor``, ``scalar``, ``unknown``, or ``container[<element>]`` of an analysis value."""
    kind = value.kind.value  # type: ignore[attr-defined]
    if kind == "container":
        return f"container[{_shape(value.element)}]"  # type: ignore[attr-defined]
    return kind


def shapes(source: str) -> list[str]:
    return probe(source, lambda ctx, expr: _shape(ctx.value(expr)))  # type: ignore[return-value]


def test_namedtuple_fields_star_args_and_zip_columns() -> None:
    source = """
import random
from collections import namedtuple
from typing import NamedTuple
import torch
T = namedtuple("T", "a b")
class U(NamedTuple):
    a: torch.Tensor
    b: float = 0.0
def push(*args):
    return T(*args)
def f(x: torch.Tensor):
    t = push(x, 1.0)
    probe(t.a); probe(t.b); probe(t)
    rows = [t]
    batch = T(*zip(*rows))
    probe(batch.a); probe(batch.b)
    xs, ys = zip(*[(x, 2.0)])
    probe(xs); probe(ys)
    u = U(x)
    probe(u.a); probe(u.b); probe(U(b=x, a=1).b)
"""
    assert shapes(source) == [
        "tensor", "scalar", "container[unknown]",
        "container[tensor]", "container[scalar]",
        "container[tensor]", "container[scalar]",
        "tensor", "scalar", "tensor",
    ]


def test_star_args_of_mixed_callers_and_random_draws_stay_unknown_or_data() -> None:
    source = """
import random
import torch
def compose(*fs):
    for f in fs:
        probe(f)
    return fs
def to_tensor(ids):
    return torch.tensor(ids)
def g(tokenizer, rewards: list[float], x: torch.Tensor):
    compose(tokenizer, to_tensor)
    probe(random.sample(range(10), 3)); probe(random.choice(rewards))
    probe(x is None); probe(x in [x])
"""
    assert shapes(source) == ["unknown", "container[scalar]", "scalar", "scalar", "scalar"]


def test_a_sample_of_a_replay_memory_holds_its_transitions_field_by_field() -> None:
    """``random.sample(memory, k)`` is a list of the memory's elements; ``zip(*batch)``
    transposes them, so each field keeps what was pushed there (tensors, or numbers)."""
    source = """
import random
import torch
def learn(observations: list[torch.Tensor], k: int):
    replay = []
    for obs in observations:
        replay.append((obs * 2, obs.sum(), 1.0))
    states, returns, rewards = zip(*random.sample(replay, k))
    probe(states[0]); probe(returns[0]); probe(rewards[0])
"""
    assert shapes(source) == ["tensor", "tensor", "scalar"]


def test_random_choices_are_not_followed() -> None:
    """``random.choice``/``choices`` stay numbers: following them into a list of tensors added a
    false positive on unseen code and found nothing more."""
    source = """
import random
import torch
def learn(observations: list[torch.Tensor]):
    replay = [obs * 2 for obs in observations]
    probe(random.choice(replay)); probe(random.choices(replay, k=2))
"""
    assert "tensor" not in shapes(source)

# -- calls dispatched by a string name (SemanticModel._index_dispatch) -------------------

def test_a_forwarded_star_argument_reaches_the_dispatched_method() -> None:
    source = """
import torch
import torch.nn.functional as F
class Printer:
    def on_batch_end(self, trainer, payload):
        probe(trainer)
        probe(payload)
class Trainer:
    def _call(self, hook, *args):
        return [getattr(cb, hook)(self, *args) for cb in self.callbacks]
    def fit(self, model, x, y):
        self._call("on_batch_end", F.cross_entropy(model(x), y))
"""
    answers = probe(source, lambda ctx, expr: ctx.value(expr))
    assert answers[0].cls is not None and answers[0].cls.name.value == "Trainer"
    assert answers[1].has_history and answers[1].loss


def test_a_method_dispatched_only_under_no_grad_runs_without_grad() -> None:
    source = """
import torch
MODES = {"greedy": "_greedy", "sample": "_sample"}
class Decoder(torch.nn.Module):
    @torch.no_grad()
    def generate(self, x, mode):
        method = getattr(type(self), MODES[mode])
        return method(self, x)
    def _greedy(self, x):
        probe(x)
    def _sample(self, x):
        probe(x)
    def _unlisted(self, x):
        probe(x)
"""
    assert probe(source, lambda ctx, expr: ctx.grad.disabled) == [True, True, False]


def test_each_dispatched_method_gets_the_grad_mode_of_the_call_that_names_it() -> None:
    source = """
import torch
class Hooks:
    def on_eval(self, x):
        probe(x)
    def on_step(self, x):
        probe(x)
class Runner:
    def _call(self, hook, *args):
        for cb in self.callbacks:
            getattr(cb, hook)(*args)
    def run(self, x):
        with torch.no_grad():
            self._call("on_eval", x)
        self._call("on_step", x)
"""
    assert probe(source, lambda ctx, expr: ctx.grad.disabled) == [True, False]


def test_globals_lookup_and_an_unknown_name() -> None:
    source = """
import torch
def scale(x):
    probe(x)
def shift(x):
    probe(x)
@torch.no_grad()
def apply(kind, event, x, obj):
    globals()[kind](x)
    getattr(obj, f"on_{event}")(x)
apply("scale", "end", torch.ones(2), None)
"""
    assert probe(source, lambda ctx, expr: ctx.grad.disabled) == [True, False]


def test_dispatched_names_built_from_parts() -> None:
    source = """
import torch
class Module(torch.nn.Module):
    def validation_step(self, batch):
        probe(batch)
    def test_step(self, batch):
        probe(batch)
    def training_step(self, batch):
        probe(batch)
    def on_validation_end(self):
        probe(self)
    def _run(self, stage, batch):
        with torch.no_grad():
            getattr(self, f"{stage}_step")(batch)
            getattr(self, "on_" + stage + "_end")()
    def evaluate(self, batch, testing):
        self._run("test" if testing else "validation", batch)
"""
    assert probe(source, lambda ctx, expr: ctx.grad.disabled) == [True, True, False, True]


def test_a_local_context_manager_that_yields_under_no_grad_disables_grad() -> None:
    source = """
import contextlib
import torch
from contextlib import contextmanager
@contextlib.contextmanager
def evaluating(model):
    model.eval()
    with torch.no_grad():
        yield model
    model.train()
@contextmanager
def timed():
    yield
class Runner:
    @contextmanager
    def frozen(self):
        with torch.inference_mode():
            yield
    def run(self, x):
        with self.frozen():
            probe(x)
def f(model, x):
    with evaluating(model):
        probe(x)
    with timed():
        probe(x)
"""
    assert probe(source, lambda ctx, expr: ctx.grad.disabled) == [True, True, False]


def test_values_made_inside_a_local_no_grad_context_manager_have_no_graph() -> None:
    source = """
import contextlib
import torch
@contextlib.contextmanager
def evaluating(model):
    with torch.no_grad():
        yield
def f(model, x):
    with evaluating(model):
        out = model(x)
    probe(out)
"""
    assert [value.has_history for value in probe(source, lambda ctx, expr: ctx.value(expr))] == [False]


def test_a_local_decorator_that_calls_the_function_under_no_grad_disables_grad() -> None:
    source = """
import functools
import torch
def evaluation(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    return wrapper
def logged(fn):
    def wrapper(*args):
        print("calling")
        return fn(*args)
    return wrapper
@evaluation
def validate(model, x):
    out = model(x)
    probe(out)
@logged
def train(model, x):
    probe(x)
"""
    answers = probe(source, lambda ctx, expr: (ctx.grad.disabled, ctx.value(expr).has_history))
    assert answers == [(True, False), (False, False)]


# -- functions handed to map / filter / sorted(key=) -------------------------------------

def test_functions_mapped_over_iterables_get_their_elements() -> None:
    source = """
import torch
def f(model, names):
    a = list(map(lambda p: probe(p), model.parameters()))
    b = sorted(model.parameters(), key=lambda q: probe(q).numel())
    def g(w):
        return probe(w)
    c = list(filter(g, model.parameters()))
    d = list(map(lambda n: probe(n), names))
    e = probe(list(map(lambda p: p.clone(), model.parameters())))
"""
    assert kinds(source)[:4] == [YES, YES, YES, MAYBE]
    elements = probe(source, lambda ctx, expr: ctx.value(expr).element)
    assert elements[-1] is not None and elements[-1].is_tensor  # what the mapped function returns



# -- narrowing of the bindings that skipped an if body --------------------------------------

def test_bindings_that_skipped_a_rebinding_body_keep_the_else_narrowing() -> None:
    source = """
import torch
def a(val: torch.Tensor):
    if torch.is_tensor(val):
        val = val.item()
    probe(val)
def b(val: torch.Tensor):
    if isinstance(val, torch.Tensor):
        val = val * 2
    probe(val)
def c(val: torch.Tensor, flag):
    if torch.is_tensor(val):
        if flag:
            val = val.item()
    probe(val)
def d(val: torch.Tensor):
    if torch.is_tensor(val):
        val = val.item()
    val = val + torch.ones(1)
    probe(val)
def e(val):
    if torch.is_tensor(val):
        val = val.item()
    probe(val)
"""
    # a: the item (a known tensor never skips the body); b: the body's tensor; c: the body
    # may keep the tensor; d: bound again after the if; e: the item, or what the test said
    # was no tensor (a number or some object: "maybe" when joined).
    assert kinds(source) == [NO, YES, YES, YES, MAYBE]


def test_an_input_of_a_functional_call_is_a_tensor_by_its_use() -> None:
    source = """
import torch
import torch.nn.functional as F
import mylib
def f(targets, labels, other):
    onehot = F.one_hot(targets, 10)
    mylib.one_hot(labels, 10)
    return probe(targets), probe(labels), probe(other)
"""
    assert kinds(source) == [MAYBE, MAYBE, MAYBE]  # a use is evidence (a guess), not proof
    values = probe(source, lambda ctx, expr: (ctx.value(expr).is_tensor, ctx.value(expr).guessed))
    assert values == [(True, True), (False, False), (False, False)]
