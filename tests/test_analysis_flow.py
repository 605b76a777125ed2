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


# -- ordered events: Point, Block, may_flow, name_events, call_events (TCL004, TCL005) ---------

from torchcopy_lint.analysis.flow import Block, NameEvent, Point, call_event, may_flow  # noqa: E402


def _blocks(*kinds: str) -> tuple[Block, ...]:
    return tuple(Block(cst.Pass(), kind == "loop") for kind in kinds)


def test_may_flow_forward_and_kills() -> None:
    loop, branch = _blocks("loop", "branch")
    start, end = Point(1, ()), Point(5, ())
    assert may_flow(start, end)
    assert not may_flow(end, start)  # backwards without a loop
    assert not may_flow(start, end, [Point(3, ())])  # an unconditional kill between
    assert may_flow(start, end, [Point(3, (branch,))])  # a kill that may not run
    assert may_flow(start, end, [Point(7, ())])  # a kill after the end
    assert may_flow(start, end, [Point(1, ())])  # a kill at the start itself does not count
    # A kill after a loop holding the start runs after every iteration.
    assert not may_flow(Point(1, (loop,)), end, [Point(3, ())])


def test_may_flow_around_a_loop() -> None:
    loop, branch = _blocks("loop", "branch")
    later, earlier = Point(5, (loop,)), Point(2, (loop,))
    assert may_flow(later, earlier)  # the next iteration
    assert not may_flow(later, earlier, [Point(1, (loop,))])  # retaken before the end, every iteration
    assert not may_flow(later, earlier, [Point(6, (loop,))])  # retaken after the start, every iteration
    assert may_flow(later, earlier, [Point(1, (loop, branch))])  # retaken only sometimes
    assert may_flow(later, earlier, [Point(0, ())])  # outside the loop
    # Conditionally taken in one iteration, changed earlier in the body of the next one.
    snapshot, step = Point(5, (loop, branch)), Point(3, (loop,))
    assert may_flow(snapshot, step, [snapshot])
    assert may_flow(step, Point(9, ()), [snapshot])
    # Taken unconditionally after the change: the last iteration's value survives the loop.
    retaken = Point(5, (loop,))
    assert not may_flow(step, Point(9, ()), [retaken])


def _walk(source: str, probe: object | None = None) -> FileContext:
    module = cst.parse_module(source)
    ctx = FileContext("flow.py", module)
    ctx.flow.log_names()
    walker = Walker([*ctx.participants, *([probe] if probe else [])])
    ctx.walker = walker
    walker.walk(module)
    return ctx


def _names(source: str) -> dict[str, list[NameEvent]]:
    """The module-level name events (the flow frame of the module outlives the walk)."""
    return _walk(source).flow.name_events


def _kinds(events: list[NameEvent]) -> list[str]:
    return ["store" if event.store else "load" for event in events]


def test_name_events_order_loads_before_the_store_they_feed() -> None:
    events = _names("x = 1\nx = f(x)\nx += 1\nprint(x)\n")
    assert _kinds(events["x"]) == ["store", "load", "store", "load", "load"]
    orders = [event.point.order for event in events["x"]]
    assert orders == sorted(orders)


def test_name_events_for_targets_with_names_and_comprehensions() -> None:
    events = _names("for p in ps:\n    use(p)\nwith open(f) as h:\n    h.read()\nys = [q for q in qs]\ndel ys\n")
    loop_store = events["p"][0]
    assert loop_store.store and loop_store.point.blocks and loop_store.point.blocks[0].is_loop
    assert _kinds(events["p"]) == ["store", "load"]
    assert _kinds(events["h"]) == ["store", "load"]
    assert "q" not in events  # a comprehension's own variable
    assert _kinds(events["ys"]) == ["store", "store"]  # ``del`` unbinds: logged as a store


def test_blocks_separate_branches_and_loops() -> None:
    source = "if c:\n    a\nelif d:\n    b\nelse:\n    e\nwhile w:\n    g\n    try:\n        h\n    except E:\n        i\n"
    events = _names(source)
    a, b, e = (events[name][0].point.blocks for name in "abe")
    assert len(a) == 1 and a[0] is not b[0] and b[0] is not e[-1]
    g, h, i = (events[name][0].point.blocks for name in "ghi")
    assert [block.is_loop for block in g] == [True]
    assert h == g  # a try body runs unconditionally
    assert len(i) == 2 and i[0] is g[0] and not i[1].is_loop


def test_name_events_are_per_function() -> None:
    seen: dict[str, list[str]] = {}

    class Probe:
        def __init__(self) -> None:
            self.ctx: FileContext | None = None

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            assert self.ctx is not None
            seen[node.name.value] = sorted(self.ctx.flow.name_events)

    probe = Probe()
    module = cst.parse_module("a = 1\ndef f(x):\n    y = x\n    def g():\n        z = 1\n    return y\n")
    ctx = FileContext("flow.py", module)
    ctx.flow.log_names()
    probe.ctx = ctx
    walker = Walker([*ctx.participants, probe])
    ctx.walker = walker
    walker.walk(module)
    assert seen == {"g": ["z"], "f": ["x", "y"]}
    assert sorted(ctx.flow.name_events) == ["a"]


def test_call_events_classify_training_calls() -> None:
    assert call_event(_call("optimizer.step()")) == ("step", "optimizer")
    assert call_event(_call("scaler.step(self.optimizer)")) == ("step", "self.optimizer")
    assert call_event(_call("loss.backward()")) == ("backward", "loss")
    for call in ("train(model, loader)", "train_one_epoch(model, loader, opt)", "trainer.fit(model)", "self.train_epoch()", "trainer.train()", "run_training(cfg)"):
        assert call_event(_call(call)) is not None and call_event(_call(call))[0] == "train", call  # type: ignore[index]
    for call in ("model.train()", "self.train(mode)", "net.train(False)", "train_test_split(x)", "train_transform(img)", "scheduler.step()"):
        assert call_event(_call(call)) is None, call
    ctx = _walk("for x in data:\n    loss.backward()\n    optimizer.step()\nmodel.train()\n")
    assert [(event.kind, len(event.point.blocks)) for event in ctx.flow.call_events] == [("backward", 1), ("step", 1)]


# -- aliasing helpers and plain classes (TCL004, TCL005) -------------------------------------

from torchcopy_lint.analysis.aliasing import detached_view, inplace_write, is_snapshot_name, strip_views, written_tensor  # noqa: E402
from torchcopy_lint.analysis.cst_helpers import code_of  # noqa: E402


def _expr(source: str) -> cst.BaseExpression:
    return cst.parse_expression(source)


def test_detached_view_through_views_and_basic_indexing() -> None:
    for source, expected in (
        ("x.detach()", ("x", "detach")),
        ("self.w.data", ("self.w", "data")),
        ("x.detach()[0]", ("x", "detach")),
        ("x.detach()[1:, -1]", ("x", "detach")),
        ("x.data.view(-1).t()", ("x", "data")),
        ("x.detach().T", ("x", "detach")),
    ):
        found = detached_view(_expr(source))
        assert found is not None and (code_of(found[0]), found[1]) == expected, source
    for source in ("x.detach().clone()", "x.detach()[mask]", "x.detach().float()", "x.detach(1)", "x.clone()", "x.detach().reshape(-1)"):
        assert detached_view(_expr(source)) is None, source
    assert code_of(strip_views(_expr("x[0].view(2, 2).T"))) == "x"


def test_inplace_write_and_written_tensor() -> None:
    statement = cst.parse_statement
    for source, written, operation in (
        ("d.mul_(2)", "d", ".mul_(...)"),
        ("d.view(-1).fill_(0)", "d.view(-1)", ".fill_(...)"),
        ("d += 1", "d", " += ..."),
        ("d[0] = 1", "d[0]", " = ..."),
    ):
        node = statement(source).body[0]  # type: ignore[attr-defined]
        node = node.value if isinstance(node, cst.Expr) else node
        found = inplace_write(node)
        assert found is not None and (code_of(found[0]), found[1]) == (written, operation), source
    for source in ("d.requires_grad_()", "d.unsqueeze_(0)", "d.resize_(3)", "d.add(1)", "d = 1"):
        node = statement(source).body[0]  # type: ignore[attr-defined]
        node = node.value if isinstance(node, cst.Expr) else node
        assert inplace_write(node) is None, source
    assert code_of(written_tensor(_expr("w.data[0].view(-1)"))) == "w"


def test_snapshot_names() -> None:
    for name in ("best", "best_state", "prevWeights", "w_init", "history", "snapshots", "old_params"):
        assert is_snapshot_name(name), name
    for name in ("_fp_param", "module_parameters", "state", "weights", "cache", "bestow"):
        assert not is_snapshot_name(name), name


def test_instances_of_plain_local_classes_are_not_tensors() -> None:
    from torchcopy_lint.analysis.tensors import MAYBE, NO, YES

    kinds: dict[str, object] = {}

    class Probe:
        def __init__(self) -> None:
            self.ctx: FileContext | None = None

        def visit_Return(self, node: cst.Return) -> None:
            assert self.ctx is not None and isinstance(node.value, cst.Tuple)
            for element in node.value.elements:
                kinds[code_of(element.value)] = self.ctx.tensors.kind(element.value)

    source = (
        "import torch\n"
        "from lib import Base\n"
        "class Plain: pass\n"
        "class Child(Plain, metaclass=Meta): pass\n"
        "class Sub(torch.Tensor): pass\n"
        "class Other(Base): pass\n"
        "def f():\n"
        "    a, b, c, d = Plain(), Child(), Sub(), Other()\n"
        "    return a, b, c, d\n"
    )
    probe = Probe()
    module = cst.parse_module(source)
    ctx = FileContext("t.py", module)
    probe.ctx = ctx
    walker = Walker([*ctx.participants, probe])
    ctx.walker = walker
    walker.walk(module)
    assert kinds == {"a": NO, "b": NO, "c": YES, "d": MAYBE}  # Sub subclasses torch.Tensor
