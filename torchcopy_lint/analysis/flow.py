"""Where in the control flow the walk is: loops and statements.

Rules about accumulation and "later" use need to know whether a statement sits
in a loop (of the current function: a nested ``def`` starts afresh) and which
statement is being visited.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple, Union

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import dotted_name, is_true, subscripted, target_names

LoopNode = Union["cst.For", "cst.While"]  # strings: LibCST loads on first use (see __init__)


class Block:
    """A loop body or a conditional branch (if/elif/else, except, match case, a loop's
    ``else``) of the current function. Compared by identity."""

    __slots__ = ("node", "is_loop")

    def __init__(self, node: cst.CSTNode, is_loop: bool) -> None:
        self.node = node
        self.is_loop = is_loop

    def __repr__(self) -> str:
        return f"Block({type(self.node).__name__}, loop={self.is_loop})"


class Point(NamedTuple):
    """A moment of the walk: ``order`` grows along it; ``blocks`` are the loop bodies and
    branches of the function that enclose the moment, outermost first. See :func:`may_flow`."""

    order: int
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class NameEvent:
    """A load or store of a plain name (see :meth:`FlowTracker.log_names`)."""

    point: Point
    node: cst.Name
    store: bool


@dataclass(frozen=True)
class CallEvent:
    """A call that trains: ``"step"`` (an optimizer step), ``"backward"``, ``"train"`` (a
    call such as ``train_one_epoch(model, ...)`` or ``trainer.fit(...)``). ``target`` is the
    dotted optimizer of a step (``scaler.step(opt)`` gives ``opt``), else the receiver."""

    kind: str
    node: cst.Call
    point: Point
    target: str | None


class _Frame:
    """Per function (and the module): where the walk is, and what happened so far."""

    __slots__ = ("blocks", "names", "calls")

    def __init__(self) -> None:
        self.blocks: tuple[Block, ...] = ()
        self.names: dict[str, list[NameEvent]] = {}
        self.calls: list[CallEvent] = []


class FlowTracker:
    """Walk participant: loop stack per function, and the current statement."""

    def __init__(self) -> None:
        self._loops: list[list[LoopNode]] = [[]]
        self.statement: cst.CSTNode | None = None
        self._events: dict[int, set[str]] = {}
        # Ordered events per function (a nested def starts a frame; a lambda does not).
        self._frames: list[_Frame] = [_Frame()]
        self._clock = 0
        self._pending_blocks: dict[int, Block] = {}  # id(body) -> the block it opens
        self._open_blocks: list[int] = []  # ids of the bodies that opened a block
        self._logging_names = False
        self._store_names: dict[int, list[cst.Name]] = {}  # id(statement) -> target names
        self._quiet_names: set[int] = set()  # names logged elsewhere or not at all
        self._comprehension_names: list[frozenset[str]] = []  # variables of enclosing comprehensions
        self.is_optimizer: Callable[[cst.BaseExpression], bool] | None = None  # set by FileContext: the model's answer

    @property
    def loops(self) -> list[LoopNode]:
        """Loops enclosing the current point, innermost last, in this function."""
        return self._loops[-1]

    @property
    def in_loop(self) -> bool:
        return bool(self._loops[-1])

    def _enter_loop(self, node: LoopNode) -> None:
        self._loops[-1].append(node)
        self._pending_blocks[id(node.body)] = Block(node, True)
        if isinstance(node.orelse, cst.Else):
            self._pending_blocks[id(node.orelse.body)] = Block(node.orelse, False)
        if isinstance(node, cst.For) and self._logging_names:
            # The target is rebound at the top of each iteration: logged there (inside the loop).
            self._quiet_names.update(id(name) for name in target_names(node.target))

    def _leave_loop(self, node: LoopNode) -> None:
        self._loops[-1].pop()
        self._events.pop(id(node), None)

    def events_in(self, loop: LoopNode) -> frozenset[str]:
        """Step events (see :func:`step_event`) anywhere in ``loop`` so far, nested loops
        included, nested functions not. Complete for the whole body in a checker's
        ``leave_For`` / ``leave_While`` (checkers leave a node before this tracker)."""
        return frozenset(self._events.get(id(loop), ()))

    def visit_Call(self, node: cst.Call) -> None:
        event = call_event(node, self.is_optimizer)
        if event is not None:
            kind, target = event
            self._frames[-1].calls.append(CallEvent(kind, node, self.point(), target))
        loops = self._loops[-1]
        if loops:
            event = step_event(node, self.is_optimizer)
            if event is not None:
                for loop in loops:
                    self._events.setdefault(id(loop), set()).add(event)

    visit_For = visit_While = _enter_loop
    leave_For = leave_While = _leave_loop

    def _enter_function(self, node: cst.CSTNode) -> None:
        self._loops.append([])
        if isinstance(node, cst.FunctionDef):
            self._frames.append(_Frame())

    def _leave_function(self, node: cst.CSTNode) -> None:
        self._loops.pop()
        if isinstance(node, cst.FunctionDef):
            self._frames.pop()

    visit_FunctionDef = visit_Lambda = _enter_function
    leave_FunctionDef = leave_Lambda = _leave_function

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    # -- ordered events: points, blocks, names, training calls -----------------
    def point(self) -> Point:
        """A fresh :class:`Point` for "now" (each call is later than the previous one)."""
        self._clock += 1
        return Point(self._clock, self._frames[-1].blocks)

    @property
    def name_events(self) -> dict[str, list[NameEvent]]:
        """Loads and stores of each plain name in the current function so far (nested defs
        not included), when some checker called :meth:`log_names`. Complete in a checker's
        ``leave_FunctionDef`` / ``leave_Module``."""
        return self._frames[-1].names

    @property
    def call_events(self) -> list[CallEvent]:
        """Optimizer steps, backward calls and training calls of the current function so far."""
        return self._frames[-1].calls

    def log_names(self) -> None:
        """Opt in (from a checker's ``__init__``) to :attr:`name_events`. A store is logged
        after the value it binds is evaluated (``x = f(x)`` loads, then stores); a ``for``
        target at the top of the loop body; ``x += 1`` is a load (in place for tensors)."""
        self._logging_names = True

    def _open_block(self, node: cst.CSTNode) -> None:
        block = self._pending_blocks.pop(id(node), None)
        if block is None:
            return
        frame = self._frames[-1]
        frame.blocks = (*frame.blocks, block)
        self._open_blocks.append(id(node))
        if block.is_loop and isinstance(block.node, cst.For) and self._logging_names:
            for name in target_names(block.node.target):
                self._log(name, store=True)

    def _close_block(self, node: cst.CSTNode) -> None:
        if self._open_blocks and self._open_blocks[-1] == id(node):
            self._open_blocks.pop()
            frame = self._frames[-1]
            frame.blocks = frame.blocks[:-1]

    visit_IndentedBlock = visit_SimpleStatementSuite = _open_block
    leave_IndentedBlock = leave_SimpleStatementSuite = _close_block

    def visit_If(self, node: cst.If) -> None:
        self._pending_blocks[id(node.body)] = Block(node, False)
        if isinstance(node.orelse, cst.Else):
            self._pending_blocks[id(node.orelse.body)] = Block(node.orelse, False)

    def visit_Try(self, node: cst.Try | cst.TryStar) -> None:
        if isinstance(node.orelse, cst.Else):
            self._pending_blocks[id(node.orelse.body)] = Block(node.orelse, False)

    def _branch_body(self, node: cst.ExceptHandler | cst.ExceptStarHandler | cst.MatchCase) -> None:
        self._pending_blocks[id(node.body)] = Block(node, False)

    visit_TryStar = visit_Try
    visit_ExceptHandler = visit_ExceptStarHandler = visit_MatchCase = _branch_body

    def _log(self, node: cst.Name, store: bool) -> None:
        self._frames[-1].names.setdefault(node.value, []).append(NameEvent(self.point(), node, store))

    def visit_Name(self, node: cst.Name) -> None:
        if self._logging_names and id(node) not in self._quiet_names:
            if any(node.value in names for names in self._comprehension_names):
                return  # a comprehension's own variable
            self._log(node, store=False)

    def _mark_stores(self, node: cst.CSTNode, targets: Iterable[cst.BaseExpression]) -> None:
        if self._logging_names:
            names = [name for target in targets for name in target_names(target)]
            if names:
                self._store_names[id(node)] = names
                self._quiet_names.update(id(name) for name in names)

    def _log_stores(self, node: cst.CSTNode) -> None:
        for name in self._store_names.pop(id(node), ()):
            self._log(name, store=True)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._mark_stores(node, [target.target for target in node.targets])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._mark_stores(node, [node.target] if node.value is not None else [])

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._mark_stores(node, [node.target])

    def visit_Del(self, node: cst.Del) -> None:
        self._mark_stores(node, [node.target])

    def _enter_comprehension(self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        if self._logging_names:  # a comprehension's own variables are not the function's
            names: set[str] = set()
            clause: cst.CompFor | None = node.for_in
            while clause is not None:
                names.update(name.value for name in target_names(clause.target))
                clause = clause.inner_for_in
            self._comprehension_names.append(frozenset(names))

    def _leave_comprehension(self, node: cst.CSTNode) -> None:
        if self._logging_names:
            self._comprehension_names.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def leave_WithItem(self, node: cst.WithItem) -> None:
        if self._logging_names and node.asname is not None:  # the walk does not visit ``as`` names
            for name in target_names(node.asname.name):  # type: ignore[arg-type]
                self._log(name, store=True)

    leave_Assign = leave_AnnAssign = leave_NamedExpr = leave_Del = _log_stores


def _optimizer_like(receiver: cst.BaseExpression) -> bool:
    """``optimizer``, ``opt``, ``self.optim``, ``d_optimizer``, ``scaler`` (a GradScaler) ..."""
    receiver = subscripted(receiver)
    if isinstance(receiver, cst.Attribute):
        name = receiver.attr.value
    elif isinstance(receiver, cst.Name):
        name = receiver.value
    else:
        return False
    name = name.lower()
    return "optim" in name or "scaler" in name or name in ("opt", "opts") or name.startswith("opt_") or name.endswith("_opt")


def step_event(call: cst.Call, is_optimizer: Callable[[cst.BaseExpression], bool] | None = None) -> str | None:
    """``"backward"`` for ``loss.backward()`` / ``torch.autograd.backward(...)`` /
    ``accelerator.backward(loss)``; ``"step"`` for ``step()`` on an optimizer-like
    receiver (``optimizer.step()``, ``scaler.step(opt)``; not ``scheduler.step()`` or
    ``env.step(action)``), named so or shown to be an optimizer by ``is_optimizer`` (the
    semantic model: ``solver = torch.optim.LBFGS(...)``; ``solver.step(closure)``); else None."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "grad" and (dotted_name(func.value) or "").endswith("autograd"):
        # ``torch.autograd.grad(...)``; with ``create_graph=True`` it is part of a computation
        # to be differentiated again (a gradient penalty, a trace estimator, a PINN residual,
        # MAML's inner step), not the end of a step.
        flag = next((argument.value for argument in call.args if argument.keyword is not None and argument.keyword.value == "create_graph"), None)
        return None if flag is not None and is_true(flag) else "backward"
    if func.attr.value == "backward":
        return "backward"  # ``loss.backward()``, ``torch.autograd.backward(...)``
    if func.attr.value == "step" and (_optimizer_like(func.value) or (is_optimizer is not None and is_optimizer(func.value))):
        return "step"
    return None


# Calls that run more training: ``train(model, ...)``, ``train_one_epoch(...)``,
# ``trainer.fit(...)``, ``run_training(...)``. ``model.train()`` (a mode switch) is not one.
_TRAINING_CALL = re.compile(
    r"(?:do_|run_)?(?:train|fit|finetune|fine_tune)"
    r"(?:_(?:one_)?(?:epoch|epochs|step|steps|batch|batches|loop|model|iter|iteration|on_batch|for_epoch|one_cycle))?"
    r"|run_training|training_loop"
)
_MODE_SWITCH_RECEIVERS = re.compile(r"self|.*(?:model|net|module|layer|encoder|decoder|backbone)s?", re.I)


def _identifier(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def call_event(call: cst.Call, is_optimizer: Callable[[cst.BaseExpression], bool] | None = None) -> tuple[str, str | None] | None:
    """``(kind, target)`` of a :class:`CallEvent`, or None for other calls."""
    step = step_event(call, is_optimizer)
    func = call.func
    if step is not None and isinstance(func, cst.Attribute):
        target = dotted_name(func.value)
        if step == "step" and "scaler" in (_identifier(func.value) or "").lower():
            target = dotted_name(call.args[0].value) if call.args else None
        return step, target
    name = _identifier(func)
    if name is None or not _TRAINING_CALL.fullmatch(name):
        return None
    if isinstance(func, cst.Attribute):
        receiver = _identifier(func.value) or ""
        if name == "train" and _MODE_SWITCH_RECEIVERS.fullmatch(receiver):
            return None  # ``model.train()`` / ``self.train(mode)``: switches the mode
        return "train", dotted_name(func.value)
    return "train", None


def _is_prefix(short: tuple[Block, ...], long: tuple[Block, ...]) -> bool:
    return len(short) <= len(long) and all(a is b for a, b in zip(short, long))


def _innermost_common_loop(a: Point, b: Point) -> Block | None:
    found = None
    for left, right in zip(a.blocks, b.blocks):
        if left is not right:
            break
        if left.is_loop:
            found = left
    return found


def may_flow(start: Point, end: Point, kills: Iterable[Point] = ()) -> bool:
    """Whether execution may go from ``start`` to ``end`` without surely passing a kill.

    Structured code only (``break``/``continue``/``return``/exceptions are ignored). The
    path goes forward (``end`` later in the source), or around a loop enclosing both
    (the next iteration). A kill point stops a path when it must run on it: between the
    two and enclosed by no block that does not also enclose ``start`` (it always runs
    after ``start``) or ``end`` (it always runs before ``end``). A kill at ``start`` itself
    does not count. Typical kills: the stores of the name whose value is followed.
    """
    kills = [kill for kill in kills if kill.order != start.order]
    if start.order < end.order and not any(
        start.order < kill.order < end.order and (_is_prefix(kill.blocks, end.blocks) or _is_prefix(kill.blocks, start.blocks))
        for kill in kills
    ):
        return True
    loop = _innermost_common_loop(start, end)
    if loop is None:
        return False
    for kill in kills:
        if not any(block is loop for block in kill.blocks):
            continue
        if kill.order > start.order and _is_prefix(kill.blocks, start.blocks):
            return False  # runs after start in every iteration that reaches start
        if kill.order < end.order and _is_prefix(kill.blocks, end.blocks):
            return False  # runs before end in every iteration that reaches end
    return True
