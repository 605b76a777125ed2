"""The semantic model's answers must not depend on which rules ask first.

The evaluator cuts a cycle of bindings (``parts = parts + [...]``) where it re-enters it,
so a value inside the cycle depends on where the cycle was entered; the model now enters
every such cycle in source order before any rule asks (``_evaluate_in_source_order``).
Found on pytorch/examples (mnist_forward_forward: a TCL009 with ``--select TCL009`` that
the default rules did not report). The per-function "trains" summary is a search of the
functions reached, not a memo with a recursion guard.
"""

from __future__ import annotations

import libcst as cst
import pytest

from torchcopy_lint.context import build_model
from torchcopy_lint.engine import FileRun

_CYCLE = """\
from torch.optim import Adam


def score(xs, ys):
    for i, v in enumerate(ys):
        ys[i] = torch.tensor(xs)[torch.randint(len(xs), size=(1,))].item()
        for label in range(10):
            parts = []
            for layer in self.layers:
                h = layer(h)
                parts = parts + [h.pow(2).mean(1)]
            totals += [sum(parts).unsqueeze(1)]
            self.opt.step()
        return self.forward(a).detach(), self.forward(b).detach()
"""


def _tcl009(source: str, codes: list[str]) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in FileRun.from_text(source, "order.py", codes).findings() if f.code == "TCL009"]


def test_findings_do_not_depend_on_the_other_rules_selected() -> None:
    assert _tcl009(_CYCLE, ["TCL009"]) == _tcl009(_CYCLE, ["TCL004", "TCL009"])


_MUTUAL = """\
import torch


def outer(model, opt, x):
    opt.step()
    inner(model, opt, x)


def inner(model, opt, x):
    if x is None:
        return
    outer(model, opt, x)
"""


@pytest.mark.parametrize("order", [("outer", "inner"), ("inner", "outer")])
def test_a_summary_through_recursion_does_not_depend_on_what_was_asked_first(order: tuple[str, str]) -> None:
    # ``inner`` trains: it calls ``outer``, which steps. Asked after ``outer``, a memo with
    # a recursion guard kept the answer ``inner`` got while ``outer`` was still being
    # answered (no).
    module = cst.parse_module(_MUTUAL)
    model = build_model(module)
    functions = {node.name.value: node for node in module.body if isinstance(node, cst.FunctionDef)}
    answers = {name: model.trains(functions[name]) for name in order}
    assert answers == {"outer": True, "inner": True}



_WRITERS = """\
def normalize_(t, eps):
    return t.div_(t.norm() + eps)


def fill(out, value, scratch):
    out[0] = value
    scratch = scratch * 2
    scratch.add_(1)


def reads(t):
    def inner(u):
        u.zero_()

    return t.sum()


class Buffer:
    def push(self, item, weight):
        weight.mul_(0.5)
"""


def test_written_arguments_are_the_parameters_a_body_writes_in_place() -> None:
    # Positions in FunctionInfo.params (``self`` counts): a rebound parameter is not the
    # caller's any more; a nested function's write is not its outer function's.
    module = cst.parse_module(_WRITERS)
    model = build_model(module)
    infos = {info.name: info for info in model.records.functions.values() if info.name != "<lambda>"}
    written = {name: model.written_arguments(info) for name, info in infos.items()}
    assert written == {"normalize_": {0}, "fill": {0}, "reads": set(), "inner": {0}, "push": {2}}


def test_an_answer_cut_for_depth_is_not_kept_for_a_shallower_question() -> None:
    """A chain deeper than the memo allows is cut (the fallback answer); what the chain
    computed from that cut must not be kept, or the same question asked later from a
    shallower start keeps the fallback for good (found on a NeRF trainer: ``coarse, fine =
    NeRF().to(device), ...`` evaluated 61 questions deep stayed "unknown")."""
    from torchcopy_lint.analysis.memo import CycleSafeMemo

    memo = CycleSafeMemo(max_nesting=5)
    cache: dict = {}

    def chain(n: int) -> str:
        # ``n`` asks ``n + 1`` ... down to 9, which knows its answer.
        if n == 9:
            return "known"
        return memo.get(cache, n, lambda: chain(n + 1), "cut")

    assert chain(0) == "cut"  # asked from the top, the chain is too deep: cut
    assert memo.get(cache, 6, lambda: chain(7), "cut") == "known"  # asked near the end: followed
    assert chain(3) == "known"
