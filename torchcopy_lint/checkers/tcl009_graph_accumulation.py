"""TCL009 graph-accumulation: tensors with autograd history kept across loop iterations
(see rules/TCL009-graph-accumulation.md).

An accumulation (``total += loss``, ``total = total + loss``, ``losses.append(loss)``,
``history[k] = out``, ``totals[k] += v``, ``outs = torch.cat([outs, out])``) of a value the
semantic model shows to carry a graph (a loss, a module output, arithmetic on a parameter:
``Value.has_history``), made while autograd records, inside a loop, is a candidate. When
the function ends it is reported if the accumulator survives the loop's iterations (bound
outside the loop and not reset at the top level of its body) and the accumulated graph is
not consumed on purpose: ``backward()`` called on the accumulator, or on something
computed from it (gradient accumulation, REINFORCE's ``torch.stack(log_probs).sum()``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from dataclasses import dataclass, field

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis import naming
from torchcopy_lint.analysis import torch_api as api
from torchcopy_lint.analysis.bindings import BindingKind, CallSite, FunctionInfo
from torchcopy_lint.analysis.cst_helpers import dotted_name, positional_args, short_code
from torchcopy_lint.analysis.flow import LoopNode
from torchcopy_lint.analysis.values import Grad, Kind, Value, element_of
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import Event, ScreenFacts
from torchcopy_lint.walker import iter_children

# list.append / deque.appendleft / list.insert / list.extend, and a tensor accumulator's add_().
APPENDING_METHODS = frozenset({"append", "appendleft", "insert", "extend", "add_"})
_NO_STEP = "without a training step"
_MAX_DERIVATION = 64  # bindings followed back from a backward() call
_EVERY_KEYWORD = -1  # a helper accumulates what its ``**kwargs`` collects (see _helper_accumulations)
CONCATENATING_FUNCTIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})


@dataclass
class Candidate:
    node: cst.CSTNode
    top: cst.CSTNode | None
    loops: tuple[LoopNode, ...]  # the loops around the accumulation, outermost first
    accumulator: str  # "total_loss", "self.losses", "history"
    root: cst.Name | None  # the accumulator's root name node at the accumulation
    evidence: str
    value: str
    event: str  # the strongest step event of the innermost loop, filled at the loop's end
    slice_index: tuple[cst.Name, ...] = ()  # ``out[i:j] = v`` into a tensor: the names the index reads
    dispatched: bool = False  # in a method a call in the loop reaches by a string name: it outlives the loop's iterations
    per_step: str = ""  # in a loop of a function that trains, into something that outlives its calls: the calls are the iterations


@dataclass
class _Frame:
    """Per function: candidates, and the names that backward() is called on (through
    what they were computed from)."""

    candidates: list[Candidate] = field(default_factory=list)
    backward_reads: set[str] = field(default_factory=set)
    evaluates: bool = False  # named like evaluation, or calls ``.eval()``


def _container_of(expr: cst.BaseExpression) -> cst.BaseExpression:
    """What an item belongs to: ``stats`` for ``stats["loss"][i]`` and for
    ``stats.setdefault("loss", [])`` (the item a dict of lists gives to append to)."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "setdefault":
            expr = expr.func.value
        else:
            return expr


def _accumulator_key(expr: cst.BaseExpression) -> str | None:
    """``losses`` for ``losses``, ``losses[k]``, ``stats["loss"][i]`` and
    ``losses.setdefault(k, [])``; ``self.losses`` likewise."""
    return dotted_name(_container_of(expr))


def _hooked_module(info: FunctionInfo, name: cst.Name) -> bool:
    """Whether ``name`` is the parameter of a forward hook that receives the hooked module."""
    return any(param.name.value == name.value and info.hook_role(index) == "module" for index, param in enumerate(info.params))


def _root_name(expr: cst.BaseExpression) -> cst.Name | None:
    expr = _container_of(expr)
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = _container_of(expr.value)
    return expr if isinstance(expr, cst.Name) else None


def _has_clone(expr: cst.BaseExpression) -> bool:
    """``x.clone()``, ``x.clone().cpu()``, ``[a.clone(), b]``, ``torch.clone(x)``."""
    pending: list[cst.CSTNode] = [expr]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call):
            func = current.func
            if isinstance(func, cst.Attribute) and func.attr.value == "clone":
                return True
            if isinstance(func, cst.Attribute):
                pending.append(func.value)
        elif isinstance(current, (cst.List, cst.Tuple, cst.Set)):
            pending.extend(element.value for element in current.elements)
        elif isinstance(current, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            pending.append(current.elt)
    return False


def _has_inner_loop(loop: cst.For) -> bool:
    """Whether a loop's body (not its ``else``) holds another loop of the same function."""
    pending: list[cst.CSTNode] = [loop.body]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.For, cst.While)):
            return True
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(iter_children(current))
    return False


def _descendant_ids(node: cst.CSTNode) -> set[int]:
    found: set[int] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        found.add(id(current))
        pending.extend(iter_children(current))
    return found


def _reads(expr: cst.CSTNode, key: str) -> bool:
    pending = [expr]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.Name, cst.Attribute)) and dotted_name(current) == key:
            return True
        pending.extend(iter_children(current))
    return False


def _replaces_item(candidate: Candidate) -> bool:
    """``self.parts[k] = v``: an item store, which replaces the step's value of ``k`` (one
    step's graph at a time), unlike ``self.history[k].append(v)``, which keeps each one."""
    node = candidate.node
    return isinstance(node, cst.Assign) and any(isinstance(target.target, cst.Subscript) for target in node.targets)


def _resets(loop: LoopNode, key: str) -> bool:
    """A plain assignment ``key = ...`` (not ``key = key + x``) among the top-level
    statements of the loop body."""
    body = loop.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(dotted_name(target.target) == key for target in small.targets):
                if not _reads(small.value, key):
                    return True
            if isinstance(small, cst.AnnAssign) and small.value is not None and dotted_name(small.target) == key:
                if not _reads(small.value, key):
                    return True
    return False


def _with_history(value: Value) -> Value | None:
    """The value itself, or what a container of it holds, when it carries a graph."""
    if value.has_history:
        return value
    if value.kind is Kind.CONTAINER:
        for held in (value.element, *(value.items or ()), *(field for _, field in value.fields)):
            if held is not None and held.has_history:
                return held  # ``{"loss": loss, "acc": acc}``: its loss
    return None


def _may_hold_history(value: Value) -> bool:
    """Whether a helper's value may carry a graph: one that does, or a tensor (or a container
    of them) whose history is unknown here, as the join of a dict's items is (``logs[k]`` of
    ``{"loss": loss, "acc": acc}``); not a number made from it."""
    if _with_history(value) is not None:
        return True
    held = [value] if value.kind is Kind.TENSOR else [value.element, *(value.items or ())] if value.kind is Kind.CONTAINER else []
    return any(item is not None and item.kind is Kind.TENSOR and item.grad is Grad.UNKNOWN for item in held)


class GraphAccumulation(Checker):
    code = "TCL009"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """An accumulation, while grad is recorded, of something that may carry history, that
        :meth:`_decide` could report: in a loop of a function that steps, calls a function
        that trains, or evaluates; or outside a loop in a function that may be a hook, that
        trains or is named like a training step, or a helper given what it accumulates
        (judged at a call in some training or evaluation loop)."""
        reached = facts.reaching(facts.carries_history)
        candidates = [event for event in facts.accumulations if not event.grad_off and not reached.isdisjoint(event.names)]
        if not candidates:
            return False
        functions = facts.functions
        training = facts.training_functions()
        training_names = {functions[index].name for index in training}

        def loop_trains(index: int) -> bool:  # a step in the loop, or a call of a local function that trains
            return functions[index].steps or not functions[index].calls.isdisjoint(training_names)

        # Names called in a loop (grad on) of a function whose loops may be training or
        # evaluation loops: a helper's accumulation is judged at such a call (_helper_call).
        hosted = {name for index, caller in enumerate(functions) if caller.evaluates or loop_trains(index) for name in caller.loop_calls}
        def given(event: Event, parameters: frozenset[str]) -> bool:  # what it adds is a parameter, or made from one (``for k, v in metrics.items()``)
            return not event.names.isdisjoint(parameters) or any(not parameters.isdisjoint(facts.flows.get(name, ())) for name in event.names)

        for event in candidates:
            function = functions[event.function]
            if function.is_lambda:
                return True  # a lambda's loops and frames are the enclosing function's: not told apart here
            if event.in_loop:
                if function.evaluates or loop_trains(event.function):
                    return True
            elif event.local_target:
                continue  # outside a loop, only what outlives the call is reported (see _called_per_step)
            elif function.handed or event.function in training or naming.is_training_step_name(function.name or ""):
                return True
            elif function.name == "forward" and training:
                return True  # a module's forward in a file that trains: see _is_trained_forward
            if (function.name in hosted or (function.name == "__call__" and hosted)) and not (event.in_loop and event.local_target) and given(event, function.parameters):
                # a helper accumulating its argument (in a loop of its own too: ``def log(self,
                # **metrics)``): reported at its call in a training or evaluation loop (an
                # instance's ``__call__`` is called by the instance's name)
                return True
        return False

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._frames: list[_Frame] = []
        self._events: dict[int, str] = {}  # id(loop) -> its step event, once the loop is left
        self._training_calls: dict[int, str] = {}  # id(loop) -> a local function it calls that trains
        self._dispatch_reported: set[int] = set()  # accumulations in dispatched methods, reported once
        self._helpers: dict[int, list[tuple[int, str, cst.CSTNode]]] = {}  # id(function) -> (parameter index, accumulator, accumulation) it accumulates
        self._file_trains: bool | None = None  # whether any function of the file trains
        self._in_a_step: dict[tuple[int, bool], bool] = {}  # (id of a function's node, by_name) -> _called_in_a_step
        self._emptied_attributes: dict[str, bool] = {}  # attribute name -> emptied by a forward or a training function

    # -- frames -------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._frames.append(_Frame())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._frames.append(_Frame(evaluates=naming.is_evaluation_name(node.name.value)))

    def _leave_frame(self, node: cst.CSTNode) -> None:
        self._decide(self._frames.pop())

    leave_Module = leave_FunctionDef = _leave_frame

    def _leave_loop(self, node: LoopNode) -> None:
        events = self.ctx.flow.events_in(node)
        if "backward" in events:
            self._events[id(node)] = "iterations of a loop that calls backward()"
        elif "step" in events:
            self._events[id(node)] = "iterations of a loop that steps an optimizer"
        elif id(node) in self._training_calls:
            self._events[id(node)] = f"iterations of a loop that trains (`{self._training_calls[id(node)]}()`)"
        else:
            self._events[id(node)] = _NO_STEP

    leave_For = leave_While = _leave_loop

    # -- candidates -----------------------------------------------------------------------
    def _accumulates(self, node: cst.CSTNode, accumulator: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """Record a candidate; whether one was recorded."""
        loops = self.ctx.flow.loops
        if self.ctx.grad.disabled:
            return False
        repeated = None if loops else self._called_per_step(accumulator)
        if not loops and repeated is None:
            return False
        key = _accumulator_key(accumulator)
        if key is None or key in ("self", "cls"):
            return False
        if self._kept_clone(value):
            return False  # a kept ``x.clone()`` is TCL003's (graph-attached-snapshot) finding
        if not isinstance(accumulator, cst.Subscript) and self.ctx.value(accumulator).grad is Grad.LEAF:
            return False  # ``self.centers -= delta`` of a parameter: autograd refuses it (TCL007's finding), nothing is kept
        if _through_data(accumulator):
            return False  # ``w.data += v``: added into memory autograd does not see, no graph is kept (TCL001's finding)
        if not loops and self._from_parameters(value):
            return False  # a helper accumulating what it is given: judged where it is called (visit_Call)
        if not loops and isinstance(node, cst.Assign) and isinstance(accumulator, cst.Subscript) and not self.ctx.value(accumulator.value).is_tensor:
            return False  # ``self.hidden[device] = output`` in a hook: each call replaces the item (the latest graph), nothing grows
        held = _with_history(self.ctx.value(value))
        if held is None:
            return False
        self._frames[-1].candidates.append(
            Candidate(
                node=node,
                top=self.ctx.top_statement,
                loops=tuple(loops),
                accumulator=key,
                root=_root_name(accumulator),
                evidence=held.why or "it has autograd history",
                value=short_code(value, 40),
                event=repeated or "",
                slice_index=self._tensor_slice_index(accumulator),
                per_step=self._trained_per_call(accumulator, key) if loops else "",
            )
        )
        return True

    def _trained_per_call(self, accumulator: cst.BaseExpression, key: str) -> str:
        """For an accumulation in a loop (or a helper's, called outside one): the phrase of :meth:`_called_per_step` when the
        enclosing function trains (once per step) and the accumulator outlives its calls without
        being reset by them (``for b, l in zip(buckets, losses): self.bucket_loss[b] += l`` after
        the step's ``backward()``); else empty."""
        repeated = self._called_per_step(accumulator, training_only=True)
        if repeated is None:
            return ""
        function = self.ctx.scopes.enclosing_function()
        return "" if isinstance(function, cst.FunctionDef) and _resets(function, key) else repeated

    def _tensor_slice_index(self, accumulator: cst.BaseExpression) -> tuple[cst.Name, ...]:
        """``out[i:j]`` (``out[slicer]``) where ``out`` is a tensor, not a list or dict: the
        names its index reads."""
        if not isinstance(accumulator, cst.Subscript) or self.ctx.value(accumulator.value).kind is not Kind.TENSOR:
            return ()
        return tuple(name for element in accumulator.slice for name in _name_nodes(element))

    def _kept_clone(self, value: cst.BaseExpression) -> bool:
        """``x.clone()`` itself, or a name bound to one (``snap = out.clone(); xs.append(snap)``)."""
        if _has_clone(value):
            return True
        return isinstance(value, cst.Name) and any(
            binding.value is not None and _has_clone(binding.value) for binding in self.ctx.bindings_of(value)
        )

    def _from_parameters(self, value: cst.BaseExpression) -> bool:
        """Whether ``value`` is computed from the enclosing function's parameters (not ``self``)."""
        function = self.ctx.scopes.enclosing_function()
        info = self.ctx.model.function_info(function) if function is not None else None
        if info is None or info.hook_roles is not None:
            return False  # a hook's parameters are what forward passes give it, not a caller's
        for name in _name_nodes(value):
            for binding in self.ctx.bindings_of(name):
                if binding.kind is BindingKind.PARAMETER and binding.scope is info.scope and not (info.is_method and binding.node is info.params[0]):
                    return True
        return False

    def _helper_accumulations(self, function: cst.FunctionDef) -> list[tuple[int, str, cst.CSTNode]]:
        """``(parameter index, accumulator, accumulation)`` for each parameter the function adds to something
        that outlives it, when what it adds may keep history: ``def update(self, val, n=1):
        self.sum += val * n`` (not ``self.sum += float(val)``), outside its own ``no_grad``."""
        found = self._helpers.get(id(function))
        if found is not None:
            return found
        info = self.ctx.model.function_info(function)
        found = self._helpers[id(function)] = []
        if info is None:
            return found
        params = info.params
        first = 1 if info.is_method else 0
        if any(self.ctx.grad.mode_of(decorator.decorator) for decorator in function.decorators):
            return found  # ``@torch.no_grad() def update(...)``: it keeps no graph
        for node in _statements_and_calls(function.body, self._disables_grad):
            accumulated = _accumulation(node, self.ctx.names.torch_qualname)
            if accumulated is None:
                continue
            target, value = accumulated
            root = _root_name(target)
            if root is None or not self._outlives_call(root, info, rebound=isinstance(node, cst.Assign) and target is root):
                continue
            if isinstance(target, cst.Subscript) and self.ctx.value(target.value).kind is Kind.ARRAY:
                continue  # ``self.act_buf[self.ptr] = act`` of a numpy buffer: the slot gets a copy of the numbers
            names = _name_nodes(value)
            keywords = function.params.star_kwarg
            if isinstance(keywords, cst.Param) and any(self._element_of_argument(name, keywords) for name in names):
                # ``def log(self, **metrics): for k, v in metrics.items(): self.history[k].append(v)``:
                # what the keyword arguments are is judged at each call
                found.append((_EVERY_KEYWORD, _accumulator_key(target) or root.value, node))
                continue
            if not _may_hold_history(self.ctx.value(value)):
                continue  # it keeps a number made from its argument (``(logits.argmax(-1) == y).sum()``)
            for index, param in enumerate(params[first:], start=first):
                if any(self._holds_argument(name, param) or self._element_of_argument(name, param) for name in names):
                    found.append((index, _accumulator_key(target) or root.value, node))
        return found

    def _element_of_argument(self, name: cst.Name, param: cst.Param) -> bool:
        """Whether ``name`` is a loop variable over what was passed for ``param``, its
        ``values()`` or ``items()`` (``for k, v in losses.items(): self.totals[k] += v``)."""
        for binding in self.ctx.bindings_of(name):
            if binding.kind is not BindingKind.LOOP_TARGET or binding.value is None:
                continue
            iterable = binding.value
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("items", "values") and not iterable.args:
                iterable = iterable.func.value
            if isinstance(iterable, cst.Name) and iterable.value == param.name.value and self._holds_argument(iterable, param):
                return True
        return False

    def _disables_grad(self, block: cst.With) -> bool:
        """``with torch.no_grad():`` (or ``inference_mode``, ...) inside a helper."""
        return any(self.ctx.grad.mode_of(item.item) for item in block.items)

    def _holds_argument(self, name: cst.Name, param: cst.Param) -> bool:
        """Whether ``name`` may still hold what was passed for ``param``, as it was passed: not
        after ``val = val.item()``, nor after ``if torch.is_tensor(val): val = val.item()``."""
        bindings = [binding for binding in self.ctx.bindings_of(name) if binding.kind is BindingKind.PARAMETER and binding.node is param]
        if not bindings:
            return False
        skipped = self.ctx.model.narrowing_of_bindings(name)
        return skipped is None or id(bindings[0]) not in skipped[0] or skipped[1].kind is Kind.TENSOR

    def _outlives_call(self, root: cst.Name, info: FunctionInfo, rebound: bool = False) -> bool:
        """``self.x``, a global or a closure variable, or the caller's container: not the call's
        own. A parameter ``rebound`` by a plain assignment (``x = torch.cat([x, a])``) is
        the call's own from there on: the caller's object is left as it was."""
        if info.is_method and info.params and root.value == info.params[0].name.value:
            return True
        bindings = self.ctx.bindings_of(root)
        return bool(bindings) and all(binding.scope is not info.scope or (binding.kind is BindingKind.PARAMETER and not rebound) for binding in bindings)

    def _helper_call(self, node: cst.Call) -> None:
        """``meter.update(loss)`` in a loop, where ``update`` adds its argument to ``self.sum``:
        the accumulation is this call's (the helper would accumulate floats just as well)."""
        if self.ctx.grad.disabled:
            return
        per_step = ""
        if not self.ctx.flow.loops:
            # Outside a loop, in a function that trains once per step: ``self.meter.update(loss)``
            # on an object that outlives the call repeats with the calls.
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            per_step = self._trained_per_call(receiver, dotted_name(receiver) or "") if receiver is not None else ""
            if not per_step:
                return
        else:
            self._dispatched_helper_call(node)
        if not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        callee = self.ctx.value(node.func)
        for info, offset in self.ctx.model.called_functions(callee):  # a function, a method, an instance's ``__call__``
            if info.name != "__init__" and self._helper_call_of(node, info, offset, per_step):
                return  # a class's ``__init__`` keeps what it is given once

    def _helper_call_of(self, node: cst.Call, info: FunctionInfo, offset: int, per_step: str = "") -> bool:
        """A candidate when ``info`` (run by ``node``) accumulates what ``node`` gives it
        (``per_step``: outside a loop, the phrase for the calls that repeat it)."""
        if not isinstance(info.node, cst.FunctionDef):
            return False
        accumulations = self._helper_accumulations(info.node)
        if not accumulations:
            return False
        site = CallSite(node, False, offset)
        named = {param.name.value for param in info.params}
        for index, accumulator, _ in accumulations:
            if index == _EVERY_KEYWORD:  # what ``**kwargs`` collects: the first keyword argument with history
                extra = [a.value for a in node.args if a.keyword is not None and a.keyword.value not in named]
                argument = next((value for value in extra if _with_history(self.ctx.value(value)) is not None), None)
            else:
                argument = site.argument(index, info.params[index].name.value)
            if argument is None:
                continue
            held = _with_history(self.ctx.value(argument))
            if held is None or _has_clone(argument):
                continue
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else node.func
            root = _root_name(receiver)
            holder = self._holder_root(root)
            loops = tuple(self.ctx.flow.loops)
            if holder is not root and root is not None:
                # ``for cb in self.callbacks``: its iterations reach other objects, not again the same one
                loops = tuple(loop for loop in loops if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == root.value))
            self._frames[-1].candidates.append(
                Candidate(
                    node=node,
                    top=self.ctx.top_statement,
                    loops=loops,
                    accumulator=f"{short_code(node.func, 30)}(...)` into `{accumulator}",
                    root=holder,
                    evidence=held.why or "it has autograd history",
                    value=short_code(argument, 40),
                    event=per_step,
                )
            )
            return True
        return False

    def _holder_root(self, root: cst.Name | None) -> cst.Name | None:
        """The name whose object keeps what a helper method accumulates: the receiver's root,
        or for a loop variable over a container (``for cb in self.callbacks: cb.update(loss)``)
        the container's root, since the objects it holds outlive the loop variable."""
        if root is None:
            return None
        bindings = self.ctx.bindings_of(root)
        if bindings and all(binding.kind is BindingKind.LOOP_TARGET and binding.value is not None for binding in bindings):
            holders = {held.value: held for binding in bindings if (held := _root_name(binding.value)) is not None}  # type: ignore[arg-type]
            if len(holders) == 1:
                return next(iter(holders.values()))
        return root

    def _dispatched_helper_call(self, node: cst.Call) -> None:
        """A call that reaches methods by a string name (``getattr(cb, "on_batch_end")(self,
        loss)``, or ``self._call("on_batch_end", loss)`` that does ``getattr(cb, hook)(self,
        *args)``: see :meth:`SemanticModel.dispatched_from`) in a loop, handing a method what
        it accumulates. Reported at the accumulation in that method: the call hands the value
        to every method of that name, the one that keeps it is at fault (a callback keeping
        the loss it is given)."""
        for target, site in self.ctx.model.dispatched_from(node):
            if not isinstance(target.node, cst.FunctionDef):
                continue
            for index, accumulator, accumulation in self._helper_accumulations(target.node):
                if index == _EVERY_KEYWORD:
                    continue  # keyword arguments are not dispatched by position
                argument = site.argument(index, target.params[index].name.value)
                if argument is None or _has_clone(argument):
                    continue
                held = _with_history(self.ctx.value(argument))
                if held is None:
                    continue  # not a graph (a method that keeps a number made from it is no helper accumulation)
                self._frames[-1].candidates.append(
                    Candidate(
                        node=accumulation,
                        top=self._top_of(accumulation),
                        loops=tuple(self.ctx.flow.loops),
                        accumulator=accumulator,
                        root=None,
                        evidence=held.why or "it has autograd history",
                        value=short_code(argument, 40),
                        event="",
                        dispatched=True,
                    )
                )

    def _top_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The module-level statement holding ``node`` (a statement of another function)."""
        for name in _name_nodes(node):
            top = self.ctx.model.top_statement_of(name)
            if top is not None:
                return top
        return None

    def _called_per_step(self, accumulator: cst.BaseExpression, *, training_only: bool = False) -> str | None:
        """Outside a loop, the iterations are calls: a forward hook, or a function that runs
        once per training step, adding to something that outlives the call (an attribute,
        a name of an enclosing scope or the module). The phrase for the message, or None
        (``training_only``: only the calls of a function that trains count, not passes)."""
        function = self.ctx.scopes.enclosing_function()
        info = self.ctx.model.function_info(function) if function is not None else None
        if info is None:
            return None
        in_forward = self._is_trained_forward(info)
        if training_only and (info.hook_roles is not None or in_forward):
            return None
        called_per_step = False
        if info.hook_roles is not None:
            repeated = "forward passes (in a hook)"
        elif in_forward:
            repeated = "forward passes"
        elif isinstance(function, cst.FunctionDef) and (self.ctx.model.trains(function) or naming.is_training_step_name(info.name)):
            repeated = f"calls of `{info.name}()`, once per step"
        elif not training_only and isinstance(function, cst.FunctionDef) and info.name != "__init__" and self._called_in_a_step(info, by_name=False):
            # ``loss = self.objective()`` in the training step: what ``objective`` keeps on ``self`` piles up
            repeated = f"calls of `{info.name}()`, once per step"
            called_per_step = True
        else:
            return None
        root = _root_name(accumulator)
        if root is None:
            return None
        bindings = self.ctx.bindings_of(root)
        outlives = bool(bindings) and all(binding.scope is not info.scope for binding in bindings)
        if isinstance(accumulator, (cst.Attribute, cst.Subscript)) and _hooked_module(info, root):
            outlives = True  # ``module.maps.append(out)``: an attribute of the hooked module, which outlives the pass
        elif isinstance(accumulator, (cst.Attribute, cst.Subscript)) and root.value in ("self", "cls"):
            outlives = True
            key = _accumulator_key(accumulator)
            if info.hook_roles is not None and self._consumed_per_step(info, key):
                return None
            if (in_forward or called_per_step) and (key is None or self._emptied_per_step(key.rsplit(".", 1)[-1], info)):
                return None  # collected for this step's loss and emptied once it is read (aux losses, a bounded queue)
            if in_forward and self._in_eval_mode():
                return None  # ``if not self.training: self.maps.append(attn)``: never while training
        elif in_forward:
            return None  # a forward's own names and its module's globals: judged elsewhere
        return repeated if outlives else None

    def _in_eval_mode(self) -> bool:
        """Whether the walk is in the branch of ``if not self.training:`` (or the ``else`` of
        ``if self.training:``) of a method."""
        parents = self.ctx.walker.parents
        for index, parent in enumerate(parents):
            if type(parent) is not cst.If or index + 1 >= len(parents):
                continue
            test, child = parent.test, parents[index + 1]
            negated = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
            flag = test.expression if negated else test  # type: ignore[union-attr]
            if dotted_name(flag) != "self.training":  # type: ignore[arg-type]
                continue
            if (negated and child is parent.body) or (not negated and child is parent.orelse):
                return True
        return False

    def _called_in_a_step(self, info: FunctionInfo, by_name: bool = True) -> bool:
        """Whether a call of ``info`` runs once per training step: in a step loop of a function
        that trains itself, or outside any loop of a function that trains itself (a step
        function such as ``train_step``). ``by_name``: a method's calls on receivers the file
        does not type count too."""
        key = (id(info.node), by_name)
        known = self._in_a_step.get(key)
        if known is None:
            known = self._in_a_step[key] = self._runs_in_a_step(info, by_name)
        return known

    def _runs_in_a_step(self, info: FunctionInfo, by_name: bool) -> bool:
        sites = [(site.call, site.scope) for site in info.call_sites]
        if info.cls is not None and by_name:  # ``model.pop_aux_losses()`` on a ``model`` the file does not type: by the method's name
            sites += [(raw.call, raw.scope) for raw in self.ctx.model.records.calls if isinstance(raw.call.func, cst.Attribute) and raw.call.func.attr.value == info.name]
        for call, scope in sites:
            caller = self.ctx.model.function_of_scope(scope) if scope is not None else None
            if caller is None or not isinstance(caller.node, cst.FunctionDef) or not self.ctx.model.trains_itself(caller.node):
                continue
            if _in_a_step(caller.node.body, call) or _innermost_loop_of(caller.node.body, call) is None:
                return True
        return False

    def _is_trained_forward(self, info: FunctionInfo) -> bool:
        """``forward`` of a module class of a file that trains: run once per training step,
        so what it adds to its module's attributes piles up (``self.maps.append(attn)``)."""
        if info.name != "forward" or info.cls is None or self.ctx.model.class_kind(info.cls.node) is not Kind.MODULE:
            return False
        if self._file_trains is None:
            functions = self.ctx.model.records.functions.values()
            self._file_trains = any(isinstance(other.node, cst.FunctionDef) and self.ctx.model.trains(other.node) for other in functions)
        return self._file_trains

    def _emptied_per_step(self, attribute: str, forward: FunctionInfo) -> bool:
        """Whether the forward itself, or a training function in each step of its loop, rebinds,
        clears, pops or deletes an attribute of this name (on ``self`` or through a module:
        ``model.aux_losses.clear()`` after ``backward()``). Emptied only elsewhere (once per
        epoch, in a visualisation, in ``__init__``) it still grows while the model trains."""
        found = self._emptied_attributes.get(attribute)
        if found is None:
            found = False
            for other in self.ctx.model.records.functions.values():
                node = other.node
                if not isinstance(node, cst.FunctionDef) or node.name.value == "__init__":
                    continue
                emptyings = _attribute_emptyings(node.body, attribute)
                if not emptyings:
                    continue
                if node is forward.node:
                    found = True
                elif self.ctx.model.trains(node):
                    found = any(_in_a_step(node.body, emptying) for emptying in emptyings)
                if not found:
                    found = self._called_in_a_step(other)  # ``model.pop_aux_losses()`` in the training step
                if found:
                    break
            self._emptied_attributes[attribute] = found
        return found

    def _consumed_per_step(self, hook: FunctionInfo, key: str | None) -> bool:
        """Whether what a hook method collects in ``key`` (``self.feats``) is emptied by another
        method of its class that a training function calls: features collected for this
        step's loss and cleared when it is computed (FitNets hints, Grad-CAM), not kept."""
        if hook.cls is None or key is None:
            return False
        for name, method in hook.cls.methods.items():
            if method is hook.node or name == "__init__" or not _empties(method.body, key):
                continue
            info = self.ctx.model.function_info(method)
            for site in info.call_sites if info is not None else ():
                caller = self.ctx.model.function_of_scope(site.scope) if site.scope is not None else None
                if caller is not None and isinstance(caller.node, cst.FunctionDef) and _in_a_step(caller.node.body, site.call):
                    return True
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._accumulates(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        key = dotted_name(target)
        value = node.value
        if isinstance(target, cst.Subscript):
            self._accumulates(node, target, value)
            return
        if key is None:
            return
        for term in _accumulated_terms(value, key, self.ctx.names.torch_qualname):
            if self._accumulates(node, target, term):
                break

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._note_backward(node)
        self._note_training_call(node)
        self._helper_call(node)
        if isinstance(func, cst.Attribute) and func.attr.value == "eval" and not node.args:
            self._frames[-1].evaluates = True  # ``model.eval()``: an evaluation follows
        if not (isinstance(func, cst.Attribute) and func.attr.value in APPENDING_METHODS):
            return
        args = positional_args(node)
        if not args or (func.attr.value == "insert" and len(args) < 2):
            return
        value = args[-1].value if func.attr.value == "insert" else args[0].value
        if func.attr.value == "extend" and not isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
            value_of = self.ctx.value(value)
            if value_of.kind is Kind.TENSOR:
                return  # ``xs.extend(t)`` iterates a tensor's rows: views kept, judged on t itself below
        self._accumulates(node, func.value, value)

    def _note_training_call(self, node: cst.Call) -> None:
        """A loop that calls a local function that trains is a training loop."""
        loops = self.ctx.flow.loops
        if not loops or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        function = self.ctx.value(node.func).function
        if isinstance(function, cst.FunctionDef) and self.ctx.model.trains(function):
            for loop in loops:
                self._training_calls.setdefault(id(loop), function.name.value)

    # -- backward() consumes what it is called on ----------------------------------------------
    def _note_backward(self, node: cst.Call) -> None:
        func = node.func
        is_backward = isinstance(func, cst.Attribute) and func.attr.value == "backward"
        if not is_backward and self.ctx.names.torch_qualname(func) not in ("torch.autograd.backward", "torch.autograd.grad"):
            return
        operands: list[cst.BaseExpression] = [func.value] if isinstance(func, cst.Attribute) else []
        operands += [argument.value for argument in node.args]
        reads = self._frames[-1].backward_reads
        # What backward() is called on, and transitively what that was made of:
        # ``for lp, r in zip(log_probs, returns): parts.append(-lp * r)`` then
        # ``torch.cat(parts).sum().backward()`` consumes ``log_probs`` too.
        pending: list[cst.CSTNode] = list(operands)
        seen: set[int] = set()
        while pending and len(seen) < _MAX_DERIVATION:
            expr = pending.pop()
            reads.update(_dotted_reads(expr, graph_only=True))
            for name_node in _name_nodes(expr, graph_only=True):
                for binding in self.ctx.model.same_object(self.ctx.bindings_of(name_node)):
                    if id(binding) in seen:
                        continue
                    seen.add(id(binding))
                    if binding.value is not None and binding.kind is not BindingKind.PARAMETER:
                        pending.append(binding.value)
                    pending.extend(addition.value for addition in binding.additions)

    # -- the decision, once the function has been walked -------------------------------------
    def _decide(self, frame: _Frame) -> None:
        inside: dict[int, set[int]] = {}
        for candidate in frame.candidates:
            if candidate.accumulator in frame.backward_reads:
                continue  # the accumulated graph is consumed by a backward() on purpose
            if not candidate.loops:  # iterations by calls (see _called_per_step)
                self._report(candidate, candidate.event)
                continue
            loop = self._accumulating_loop(candidate, inside)
            if loop is None:
                continue
            event = self._events.get(id(loop), _NO_STEP)
            if event == _NO_STEP:
                outer = candidate.loops[: candidate.loops.index(loop)]
                stepping = [enclosing for enclosing in outer if self._events.get(id(enclosing), _NO_STEP) != _NO_STEP]
                if stepping:
                    # Parts of one training step's loss, kept until that step's backward();
                    # unless the accumulator outlives the training loop's iterations too
                    # (``for k, v in parts.items(): totals[k] += v`` with ``totals`` made
                    # before the loop over batches).
                    if "(" not in candidate.accumulator and not ("." in candidate.accumulator and _replaces_item(candidate)) and self._survives(candidate, stepping[-1], inside) and not _emptied(stepping[-1], candidate):
                        self._report(candidate, self._events[id(stepping[-1])])
                    continue
                if candidate.per_step:
                    self._report(candidate, candidate.per_step)  # the loop is not the repetition: the function's calls are
                    continue
                if not frame.evaluates:
                    continue  # no step and no evaluation: the caller may backpropagate through it
                if self._over_modules(loop):
                    continue  # ``for layer in self.layers``: the stages of one forward pass, not repeated evaluations
                if self._fills_slices(candidate, loop, inside):
                    continue  # ``out[i:j] = f(...)``: one result computed piece by piece, like ``torch.cat`` of the pieces
                if self._made_per_batch(candidate, loop):
                    continue  # ``for x in loader: out = 0; for k in range(n): out = out + model(aug(x, k))``
                event = "iterations of an evaluation loop with grad enabled (no torch.no_grad())"
            self._report(candidate, event)

    def _fills_slices(self, candidate: Candidate, loop: LoopNode, inside: dict[int, set[int]]) -> bool:
        """A tensor written slice by slice, at an index that changes with the iteration
        (it reads a name bound in the loop): each iteration fills another part of one
        result, whose graph is that result's own, not history kept across steps."""
        descendants = inside.get(id(loop))
        if descendants is None:
            descendants = inside[id(loop)] = _descendant_ids(loop)
        return any(
            id(binding.node) in descendants
            for name in candidate.slice_index
            for binding in self.ctx.bindings_of(name)
        )

    def _made_per_batch(self, candidate: Candidate, loop: LoopNode) -> bool:
        """Whether ``loop`` repeats a computation a number of times (``for k in range(n)``,
        not over more data) for an accumulator made anew at the top of each iteration of an
        enclosing loop over a data loader: what it adds up is that batch's one result
        (test-time augmentations, Monte Carlo dropout samples), which lives for the batch; what
        the batches' results are accumulated into across the loader is judged on its own."""
        if not (isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range" and self.ctx.model.is_builtin(loop.iter.func)):
            return False
        outer = candidate.loops[: candidate.loops.index(loop)]
        return any(
            isinstance(enclosing, cst.For) and _resets(enclosing, candidate.accumulator) and self.ctx.value(enclosing.iter).qualname == api.DATA_LOADER
            for enclosing in outer
        )

    def _over_modules(self, loop: LoopNode) -> bool:
        """A ``for`` loop over modules: each iteration applies the next layer to the same input.
        Not one with a loop of its own (``for m in members: for x, y in loader: ...``): each
        iteration is a whole evaluation of another model, kept by what it accumulates."""
        if not isinstance(loop, cst.For) or _has_inner_loop(loop):
            return False
        iterated = self.ctx.value(loop.iter)
        return self.ctx.value(loop.target).kind is Kind.MODULE or (iterated.kind is not Kind.TENSOR and element_of(iterated).kind is Kind.MODULE)

    def _report(self, candidate: Candidate, event: str) -> None:
        if candidate.dispatched:
            if id(candidate.node) in self._dispatch_reported:
                return  # one finding per accumulation, however many calls reach it
            self._dispatch_reported.add(id(candidate.node))
        self.report(candidate.node, top=candidate.top, accumulator=candidate.accumulator, value=candidate.value, evidence=candidate.evidence, event=event)

    def _accumulating_loop(self, candidate: Candidate, inside: dict[int, set[int]]) -> LoopNode | None:
        """The innermost loop across whose iterations the accumulator survives: bound
        outside it (an attribute's root, a name bound before it) and not reset at the top
        of its body."""
        if candidate.dispatched:
            return candidate.loops[-1]  # the method's own ``self.x``, not rebound by the loop
        if candidate.root is None:
            return None
        for loop in reversed(candidate.loops):
            if self._survives(candidate, loop, inside):
                return loop
        return None

    def _survives(self, candidate: Candidate, loop: LoopNode, inside: dict[int, set[int]]) -> bool:
        """Whether the accumulator is bound outside ``loop`` and not reset at the top level of its body."""
        if candidate.root is None:
            return False
        bindings = self.ctx.model.same_object(self.ctx.bindings_of(candidate.root))
        descendants = inside.get(id(loop))
        if descendants is None:
            descendants = inside[id(loop)] = _descendant_ids(loop)
        # Bound before the loop, or not in this file at all (a global, a star import:
        # ``total += loss`` on a name bound elsewhere).
        outside = not bindings or any(
            binding.kind in (BindingKind.PARAMETER, BindingKind.IMPORT)
            or id(binding.node) not in descendants
            or (binding.kind is BindingKind.AUGMENTED and not binding.previous)
            for binding in bindings
        )
        return outside and not _resets(loop, candidate.accumulator)


def _through_data(accumulator: cst.BaseExpression) -> bool:
    """``w.data``, ``w.data[i]``: an accumulator read through ``.data`` (the sum lands in the
    tensor's memory; the result's graph is dropped with the temporary that held it)."""
    while isinstance(accumulator, cst.Subscript):
        accumulator = accumulator.value
    return isinstance(accumulator, cst.Attribute) and accumulator.attr.value == "data"


def _accumulation(node: cst.CSTNode, qualname: Callable[[cst.BaseExpression], str | None]) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``(accumulator, value)`` of ``acc += v``, ``acc = acc + v``, ``acc = torch.cat([acc, v])``,
    ``acc.append(v)``, ``acc[k] = v``."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
        return node.target, node.value
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target, value = node.targets[0].target, node.value
        if isinstance(target, cst.Subscript):
            return target, value
        key = dotted_name(target)
        added = _accumulated_terms(value, key, qualname) if key is not None else []
        return (target, added[0]) if len(added) == 1 else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in APPENDING_METHODS:
        args = positional_args(node)
        if args:
            return node.func.value, args[-1].value if node.func.attr.value == "insert" else args[0].value
    return None


def _emptied(loop: LoopNode, candidate: Candidate) -> bool:
    """Whether the accumulator (a plain local name) is rebound, deleted or cleared anywhere in
    ``loop`` other than by the accumulation itself."""
    return _empties(loop.body, candidate.accumulator, candidate.node, any_del=True)


def _empties(body: cst.CSTNode, key: str, accumulation: cst.CSTNode | None = None, *, any_del: bool = False) -> bool:
    """Whether ``body`` (not its nested functions and classes) rebinds, deletes or clears
    ``key`` (a name or an attribute chain) other than by ``accumulation``; with ``any_del``,
    any ``del`` statement counts (in a loop, ``del`` frees what a step made)."""
    pending: list[cst.CSTNode] = [body]
    while pending:
        current = pending.pop()
        if current is accumulation:
            continue
        if isinstance(current, (cst.Assign, cst.AnnAssign)):
            targets = [target.target for target in current.targets] if isinstance(current, cst.Assign) else [current.target]
            if any(key in _bound_keys(target) for target in targets):
                return True
        if isinstance(current, cst.Del) and (any_del or key in _bound_keys(_container_of(current.target))):
            return True
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in ("clear", "pop", "popleft") and dotted_name(current.func.value) == key:
            return True
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(iter_children(current))
    return False


def _attribute_emptyings(body: cst.CSTNode, attribute: str) -> list[cst.CSTNode]:
    """The statements and calls of ``body`` (not of its nested functions and classes) that
    rebind, delete, clear or pop an attribute named ``attribute``, whatever it is read from."""
    found: list[cst.CSTNode] = []
    pending: list[cst.CSTNode] = [body]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.Assign, cst.AnnAssign)):
            targets = [target.target for target in current.targets] if isinstance(current, cst.Assign) else [current.target]
            if any(key.rsplit(".", 1)[-1] == attribute and "." in key for target in targets for key in _bound_keys(target)):
                found.append(current)
        elif isinstance(current, cst.Del) and any(key.rsplit(".", 1)[-1] == attribute for key in _bound_keys(_container_of(current.target))):
            found.append(current)
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in ("clear", "pop", "popleft"):
            receiver = current.func.value
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == attribute:
                found.append(current)
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(iter_children(current))
    return found


def _in_a_step(body: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` (a call, a statement) is in a loop of ``body`` that itself (not a loop
    nested in it) calls ``backward()`` or ``step()``: once per training step, not once per epoch."""
    loop = _innermost_loop_of(body, node)
    if loop is None:
        return False
    pending: list[cst.CSTNode] = [loop.body]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in ("backward", "step"):
            return True
        if not isinstance(current, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(iter_children(current))
    return False


def _innermost_loop_of(body: cst.CSTNode, node: cst.CSTNode) -> LoopNode | None:
    """The innermost ``for``/``while`` of ``body`` (not of nested functions) holding ``node``."""
    pending: list[tuple[cst.CSTNode, LoopNode | None]] = [(body, None)]
    while pending:
        current, loop = pending.pop()
        if current is node:
            return loop
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        inner = current if isinstance(current, (cst.For, cst.While)) else loop
        pending.extend((child, inner) for child in iter_children(current))
    return None


def _bound_keys(target: cst.BaseExpression) -> list[str]:
    """The names and attribute chains an assignment target rebinds (not items it stores)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [key for element in target.elements for key in _bound_keys(element.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_keys(target.value)
    key = dotted_name(target)
    return [key] if key is not None else []


def _accumulated_terms(value: cst.BaseExpression, key: str, qualname: Callable[[cst.BaseExpression], str | None]) -> list[cst.BaseExpression]:
    """What ``key = value`` adds to the accumulator ``key``: the other term of a sum with it
    (``total + loss``, ``0.9 * avg + 0.1 * loss``), the other pieces of a concatenation with it
    (``torch.cat([outs, out])``), on either side of a conditional (``out if outs is None else
    torch.cat([outs, out])``); empty for anything else. ``qualname`` resolves torch names."""
    if isinstance(value, cst.IfExp):
        return [*_accumulated_terms(value.body, key, qualname), *_accumulated_terms(value.orelse, key, qualname)]
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        return _added_terms(value, key)
    if isinstance(value, cst.Call) and qualname(value.func) in CONCATENATING_FUNCTIONS:
        args = positional_args(value)
        if args and isinstance(args[0].value, (cst.List, cst.Tuple)):
            elements = [element.value for element in args[0].value.elements]
            if any(dotted_name(element) == key for element in elements):
                return [element for element in elements if dotted_name(element) != key]
    return []


def _added_terms(value: cst.BinaryOperation, key: str) -> list[cst.BaseExpression]:
    """The term added to the accumulator ``key`` by ``value``, a sum of two terms of which
    one is the accumulator, alone or scaled (``total + loss``, ``loss + total``, ``total - x``,
    ``0.9 * avg + 0.1 * loss``, ``avg * decay + v``); empty when none is. A subtracted
    accumulator (``x - total``) is no accumulation."""
    terms: list[tuple[cst.BaseExpression, bool]] = []  # (term, subtracted)
    pending: list[tuple[cst.BaseExpression, bool]] = [(value, False)]
    while pending:
        current, negative = pending.pop()
        if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, (cst.Add, cst.Subtract)) and (current is value or not current.lpar):
            pending.append((current.right, negative != isinstance(current.operator, cst.Subtract)))
            pending.append((current.left, negative))
        else:
            terms.append((current, negative))
    own = [index for index, (term, negative) in enumerate(terms) if not negative and _is_scaled(term, key)]
    if len(own) != 1 or len(terms) != 2:
        return []  # ``score = score + a + b``: a sum computed term by term (a CRF's path score), not reported
    return [term for index, (term, _) in enumerate(terms) if index != own[0]]


def _is_scaled(term: cst.BaseExpression, key: str) -> bool:
    """``key`` itself, or ``key`` multiplied or divided by something that does not read it."""
    if dotted_name(term) == key:
        return True
    if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, (cst.Multiply, cst.Divide)):
        if dotted_name(term.left) == key:
            return not _reads(term.right, key)
        if dotted_name(term.right) == key and isinstance(term.operator, cst.Multiply):
            return not _reads(term.left, key)
    return False


def _statements_and_calls(body: cst.CSTNode, skipped: Callable[[cst.With], bool] | None = None) -> list[cst.CSTNode]:
    """The assignments and calls in a function body (not in nested functions or classes,
    nor in ``with`` blocks ``skipped`` says to leave out)."""
    found: list[cst.CSTNode] = []
    pending = [body]
    kept, nested = _accumulation_types(), _nested_scope_types()  # exact types: these classes are final
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind in kept:
            found.append(current)
        if kind is cst.With and skipped is not None and skipped(current):  # type: ignore[arg-type]
            continue
        if kind not in nested:
            pending.extend(iter_children(current))
    return found


@lru_cache(maxsize=None)
def _accumulation_types() -> frozenset[type]:
    return frozenset({cst.AugAssign, cst.Assign, cst.Call})


@lru_cache(maxsize=None)
def _nested_scope_types() -> frozenset[type]:
    return frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _dotted_reads(expr: cst.CSTNode, *, graph_only: bool = False) -> set[str]:
    """Every name and attribute chain read in ``expr`` (``self.log_probs`` and ``self``);
    ``graph_only``: not inside what cuts autograd history (see :func:`_cuts_history`)."""
    found: set[str] = set()
    pending = [expr]
    while pending:
        current = pending.pop()
        if graph_only and _cuts_history(current):
            continue
        if isinstance(current, (cst.Name, cst.Attribute)):
            dotted = dotted_name(current)
            if dotted is not None:
                found.add(dotted)
        pending.extend(iter_children(current))
    return found


def _name_nodes(expr: cst.CSTNode, *, graph_only: bool = False) -> list[cst.Name]:
    found: list[cst.Name] = []
    pending = [expr]
    while pending:
        current = pending.pop()
        if graph_only and _cuts_history(current):
            continue
        if isinstance(current, cst.Name):
            found.append(current)
        else:
            pending.extend(iter_children(current))
    return found


def _cuts_history(node: cst.CSTNode) -> bool:
    """``x.detach()``, ``x.item()``, ``x.data``, ``x.shape``: what ``backward()`` on an expression
    holding it cannot reach through it (``clf(bank.detach())`` and ``nn.Linear(bank.shape[1], k)``
    consume no graph of ``bank``)."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:  # type: ignore[attr-defined]
        return node.func.attr.value in api.GRAD_CUTTING_METHODS  # type: ignore[attr-defined]
    return type(node) is cst.Attribute and (node.attr.value == "data" or node.attr.value in api.TENSOR_META_ATTRIBUTES)  # type: ignore[attr-defined]
