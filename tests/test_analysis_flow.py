"""Unit tests of the flow analysis (torchcopy_lint/analysis/flow.py) and of deferred reports."""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.flow import step_event
from torchcopy_lint.context import FileContext
from torchcopy_lint.walker import Walker


def _call(source: str) -> cst.Call:
    expression = cst.parse_expression(source)
    assert isinstance(expression, cst.Call)
    return expression


# -- step events and events_in (TCL009) ---------------------------------------------------

def test_step_event_classifies_backward_and_optimizer_steps() -> None:
    assert step_event(_call("loss.backward()")) == "backward"
    assert step_event(_call("scaler.scale(loss).backward()")) == "backward"
    assert step_event(_call("torch.autograd.backward(loss)")) == "backward"
    assert step_event(_call("accelerator.backward(loss)")) == "backward"
    for call in ("optimizer.step()", "opt.step()", "self.optim.step()", "d_optimizer.step()", "scaler.step(opt)", "optimizers[0].step()", "gen_opt.step()"):
        assert step_event(_call(call)) == "step", call


def test_step_event_ignores_other_steps_and_calls() -> None:
    for call in ("scheduler.step()", "lr_scheduler.step()", "env.step(action)", "prof.step()", "step()", "loss.item()", "model(x)"):
        assert step_event(_call(call)) is None, call


def _loop_events(source: str) -> list[tuple[int, frozenset[str]]]:
    """(first line's loop nesting depth, events_in) for every loop, asked at its leave."""
    module = cst.parse_module(source)
    ctx = FileContext("flow.py", module)
    found: list[tuple[int, frozenset[str]]] = []

    class Probe:
        def _leave(self, node: cst.CSTNode) -> None:
            found.append((len(ctx.flow.loops), ctx.flow.events_in(node)))  # type: ignore[arg-type]

        leave_For = leave_While = _leave

    walker = Walker([*ctx.participants, Probe()])
    ctx.walker = walker
    walker.walk(module)
    return found


def test_events_in_covers_the_whole_body_and_nested_loops() -> None:
    source = (
        "for epoch in range(3):\n"
        "    total = 0\n"
        "    for x in data:\n"
        "        total += f(x)\n"
        "        loss.backward()\n"
        "    optimizer.step()\n"
        "while True:\n"
        "    scheduler.step()\n"
    )
    # Inner loop left first (still inside the outer one), then the outer, then the while.
    assert _loop_events(source) == [
        (2, frozenset({"backward"})),
        (1, frozenset({"backward", "step"})),
        (1, frozenset()),
    ]


def test_events_in_skips_nested_functions_but_sees_the_call_that_runs_them() -> None:
    source = (
        "for x in data:\n"
        "    def closure():\n"
        "        loss.backward()\n"
        "        return loss\n"
        "    optimizer.step(closure)\n"
        "for x in data:\n"
        "    def later():\n"
        "        loss.backward()\n"
    )
    assert _loop_events(source) == [(1, frozenset({"step"})), (1, frozenset())]


# -- FileContext.report(top=...): reports decided after the walk left the node --------------

def test_deferred_report_keeps_the_top_level_statement_of_the_node() -> None:
    from torchcopy_lint.engine import lint_source

    # TCL009 decides at the end of a module-level loop, when the walk is back at module level.
    source = (
        "import torch\n"
        "w = torch.randn(3, requires_grad=True)\n"
        "history = []\n"
        "for _ in range(3):\n"
        "    loss = (w * w).sum()\n"
        "    loss.backward()\n"
        "    history.append(loss)\n"
    )
    assert [(finding.line, finding.code) for finding in lint_source(source, "t.py", {"TCL009"})] == [(7, "TCL009")]
    # TCL008 decides at a later use in another top-level statement.
    source = (
        "import torch\n"
        "x = torch.zeros(4)\n"
        "y = x.reshape(2, 2)\n"
        "y[0, 0] = 1\n"
        "\n"
        "print(x)\n"
    )
    assert [(finding.line, finding.code) for finding in lint_source(source, "t.py", {"TCL008"})] == [(4, "TCL008")]
