"""Unit tests of the shared analyses (torchcopy_lint/analysis/), queried mid-walk."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import pytest

from torchcopy_lint.context import FileContext
from conftest import probe



# -- TorchNames.torch_qualname_candidates (TCL006) ------------------------------------

def _candidates(ctx: FileContext, expr: cst.BaseExpression) -> set[str]:
    return set(ctx.names.torch_qualname_candidates(expr))


def test_candidates_follow_conditional_alias() -> None:
    source = """
import torch
cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
T = Tensor
probe(Tensor)
probe(T)
probe(torch.cuda.LongTensor if cuda else torch.LongTensor)
def f():
    probe(Tensor)
"""
    both = {"torch.cuda.FloatTensor", "torch.FloatTensor"}
    assert probe(source, _candidates) == [both, both, {"torch.cuda.LongTensor", "torch.LongTensor"}, both]


def test_candidates_plain_names_and_imports() -> None:
    source = """
import torch as th
from torch import FloatTensor as FT
import numpy as np
probe(th.Tensor)
probe(FT)
probe(np.ndarray)
maker = th.zeros if True else np.zeros
probe(maker)
probe(unknown)
"""
    assert probe(source, _candidates) == [{"torch.Tensor"}, {"torch.FloatTensor"}, set(), {"torch.zeros"}, set()]


def test_candidates_respect_shadowing() -> None:
    source = """
import torch
Tensor = torch.cuda.FloatTensor if x else torch.FloatTensor
def f(Tensor, torch):
    probe(Tensor)
    probe(torch.Tensor)
"""
    assert probe(source, _candidates) == [set(), set()]


# -- TensorInference.leaf_grad_evidence (TCL007) ---------------------------------------

def _leaf(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    return ctx.tensors.leaf_grad_evidence(expr)


@pytest.mark.parametrize(
    ("setup", "expr", "expected"),
    [
        ("w = torch.nn.Parameter(torch.zeros(3))", "w", "an nn.Parameter"),
        ("w = nn.Parameter(torch.zeros(3), requires_grad=False)", "w", None),
        ("w = nn.Parameter(torch.zeros(3), False)", "w", None),
        ("w = torch.randn(3, requires_grad=True)", "w", "requires_grad=True"),
        ("w = torch.randn(3, requires_grad=False)", "w", None),
        ("w = torch.randn(3)", "w", None),
        ("w = torch.zeros(3).requires_grad_()", "w", "requires_grad_()"),
        ("w = torch.zeros(3).requires_grad_(False)", "w", None),
        ("w = torch.randn(3, requires_grad=True)", "w[0]", "requires_grad=True"),
        ("w = torch.randn(3, requires_grad=True)", "w[1:, 0]", "requires_grad=True"),
        ("w = torch.randn(3, requires_grad=True)", "w.view(-1)", "requires_grad=True"),
        ("w = torch.randn(3, requires_grad=True)", "w.t()", "requires_grad=True"),
        ("w = torch.randn(3, requires_grad=True)\nrow = w[0]", "row", "requires_grad=True"),
        ("w = torch.randn(3, requires_grad=True)\ni = torch.tensor([0])", "w[i]", None),
        ("w = torch.randn(3, requires_grad=True)", "w[[0, 1]]", None),
        ("w = torch.randn(3, requires_grad=True)", "w * 2", None),
        ("w = torch.randn(3, requires_grad=True)", "w.clone()", None),
        ("w = torch.randn(3, requires_grad=True)", "w.detach()", None),
        ("w = torch.randn(3, requires_grad=True)", "w.cuda()", None),
        ("w = torch.randn(3, requires_grad=True)", "w.grad", None),
        ("w = torch.randn(3, requires_grad=True)", "w.data", None),
        ("w = torch.randn(3, requires_grad=True)\nw = w * 2", "w", None),
        ("", "layer.weight", "a parameter (.weight)"),
        ("", "self.fc.bias", "a parameter (.bias)"),
        ("", "layer.weight.grad", None),
        ("", "layer.weight.data", None),
        ("", "model(x)", None),
    ],
)
def test_leaf_grad_evidence(setup: str, expr: str, expected: str | None) -> None:
    source = f"import torch\nimport torch.nn as nn\n{setup}\nprobe({expr})\n"
    assert probe(source, _leaf) == [expected]


def test_leaf_grad_evidence_loops_and_parameters() -> None:
    source = """
import torch
import torch.nn as nn
for p in model.parameters():
    probe(p)
for name, p in model.named_parameters():
    probe(p)
    probe(name)
for i, p in enumerate(model.parameters()):
    probe(p)
for b in model.buffers():
    probe(b)
[probe(q) for q in model.parameters()]
def f(w: nn.Parameter, v: torch.Tensor):
    probe(w)
    probe(v)
"""
    assert probe(source, _leaf) == [
        "an element of .parameters()",
        "an element of .named_parameters()",
        None,
        "an element of .parameters()",
        None,
        "an element of .parameters()",
        "an nn.Parameter",
        None,
    ]


def test_leaf_grad_evidence_needs_torch_for_weight() -> None:
    assert probe("probe(layer.weight)\n", _leaf) == [None]


# -- GradModeTracker.outer_disabled (TCL007's lambdas) ----------------------------------

def test_outer_disabled_around_lambda() -> None:
    source = """
import torch
f = lambda: probe(1)
with torch.no_grad():
    g = lambda: probe(2)
    with torch.enable_grad():
        h = lambda: probe(3)
"""
    answers = probe(source, lambda ctx, expr: (ctx.grad.disabled, ctx.grad.outer_disabled))
    assert answers == [(False, False), (False, True), (False, False)]


def test_module_names_include_distillation_roles() -> None:
    from torchcopy_lint.analysis.naming import is_module_name

    assert all(is_module_name(name) for name in ("teacher", "student", "self_teacher", "student_model", "netG", "policy_net"))
    assert not any(is_module_name(name) for name in ("teacher_name", "num_students", "model_cfg", "student_count", "model_dim", "encoder_size"))


def test_model_methods_by_verb_and_getter_noun() -> None:
    from torchcopy_lint.analysis.naming import is_model_method

    assert all(is_model_method(name) for name in ("encode", "encode_image", "encodeText", "decode_latents", "embed_tokens", "get_image_features", "get_logits"))
    # a tokenizer's dict, HF's embedding module getter, other getters
    assert not any(is_model_method(name) for name in ("encode_plus", "batch_encode_plus", "get_input_embeddings", "get_loss", "embedding", "encoder"))


def test_distinctive_method_names() -> None:
    from torchcopy_lint.analysis.naming import is_distinctive_method

    assert all(is_distinctive_method(name) for name in ("snapshot_student", "train_step", "_sync_target", "updateTarget"))
    # one word, Python's own types' methods, dunders: too common to name one class
    assert not any(is_distinctive_method(name) for name in ("update", "step", "reset", "setdefault", "__call__", "is_integer", "format_map"))


_DUCK = """
import torch


class Agent:
    def __init__(self, net):
        self.net = net

    def soft_update(self, tau):
        return tau

    def act_greedy(self, obs):
        return self.net(obs)


class Buffer:
    def soft_update(self, tau):
        return tau


def run(runner, obs):
    {use}
"""


@pytest.mark.parametrize(
    ("use", "expected"),
    [
        ("out = runner.act_greedy(obs)", "TENSOR"),  # one class defines it: the method's return
        ("out = runner.soft_update(0.1)", "UNKNOWN"),  # two classes define it: no guess
        ("out = runner.act(obs)", "UNKNOWN"),  # not the method ``act_greedy``
    ],
)
def test_untyped_receiver_resolves_a_method_one_class_defines(use: str, expected: str) -> None:
    source = _DUCK.replace("{use}", use)
    module = cst.parse_module(source)
    ctx = FileContext("t.py", module)
    statement = module.body[-1].body.body[0].body[0]
    assert ctx.model.value(statement.value).kind.name == expected
