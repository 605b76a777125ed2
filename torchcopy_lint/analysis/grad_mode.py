"""Is autograd recording here? Tracks ``no_grad`` / ``inference_mode`` regions.

A region starts at ``with torch.no_grad():`` (or ``torch.inference_mode()``,
``torch.set_grad_enabled(False)``, or a name bound to one: ``ctx = torch.no_grad()``
then ``with ctx:``) and at a function decorated with one of them (also by hand, later in
the file: ``f = torch.no_grad()(f)``); a statement
``torch.set_grad_enabled(False)`` switches recording off for the rest of the region it
is in (``True`` back on), as it does at run time until the enclosing ``with`` exits;
``torch.enable_grad()`` inside such a region turns recording back on;
``stack.enter_context(torch.no_grad())`` (an ``ExitStack``) switches it off for the rest of
the block it is in, as the stack's ``with`` block exits there. A nested
function starts afresh (recording on): it may be called from anywhere. A local
``@contextmanager`` function that yields only inside such a region starts one too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import code_of, dotted_name, is_false, target_names
from torchcopy_lint.analysis.torch_api import GRAD_DISABLING, GRAD_ENABLING, GRAD_SETTING
from torchcopy_lint.analysis.torch_names import TorchNames

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from torchcopy_lint.analysis.binder import Records
    from torchcopy_lint.analysis.bindings import FunctionInfo, Scope
    from torchcopy_lint.analysis.semantic import SemanticModel

class GradModeTracker:
    """Walk participant: ``disabled`` is True inside a no-grad region.

    ``with torch.set_grad_enabled(cond):`` records grad on, as it may be; inside it, a
    branch on the same condition tells (the transfer-learning tutorial's ``phase ==
    "train"``): ``if cond:`` runs with grad on and its ``else`` with grad off; ``if not
    cond:`` (or ``phase != "train"``, ``phase == "val"``) with grad off.
    """

    def __init__(self) -> None:
        self._stack: list[bool] = [False]
        self._conditions: list[cst.BaseExpression | None] = [None]  # per region: ``cond`` of ``set_grad_enabled(cond)``
        self._branch_modes: dict[int, bool] = {}  # id(branch) -> grad off in it, set by its ``if``
        self._branches: set[int] = set()  # id(branch) whose mode is pushed
        # Per function (the module first): names bound to a grad-mode switch (``ctx = torch.no_grad()``).
        self._switch_names: list[dict[str, bool]] = [{}]
        self.names: TorchNames | None = None  # set by FileContext once names exist
        self.model: SemanticModel | None = None  # pass 2: call sites tell how functions are called
        self.functions: Callable[[cst.BaseExpression], FunctionInfo | None] | None = None  # pass 1: the binder's functions walked so far
        self.records: Records | None = None  # pass 1: the binder's records so far

    @property
    def disabled(self) -> bool:
        return self._stack[-1]

    @property
    def outer_disabled(self) -> bool:
        """The mode just outside the innermost region (``with`` block, function or lambda).

        Read on entering a lambda, it says whether the code around it had grad off: a
        lambda is often called right there (``model.apply(lambda m: ...)``).
        """
        return self._stack[-2] if len(self._stack) > 1 else False

    def mode_of(self, expr: cst.BaseExpression) -> bool | None:
        """True if ``expr`` disables grad, False if it enables it, None if neither."""
        assert self.names is not None
        if isinstance(expr, cst.Name):
            for names in reversed(self._switch_names):
                if expr.value in names:
                    return names[expr.value]
            return None
        call_args: list[cst.Arg] = []
        if isinstance(expr, cst.Call):
            call_args = list(expr.args)
            expr = expr.func
        name = self.names.torch_qualname(expr)
        if name in GRAD_DISABLING:
            return True if disables(name, call_args) else None
        if name in GRAD_ENABLING:
            return False
        if name in GRAD_SETTING and call_args:
            if is_false(call_args[0].value):
                return True
            if isinstance(call_args[0].value, cst.Name) and call_args[0].value.value == "True":
                return False
        if name is None and isinstance(expr, (cst.Name, cst.Attribute)):
            return self._local_context_manager(expr)
        return None

    def _local_context_manager(self, func: cst.BaseExpression) -> bool | None:
        """True for a ``@contextmanager`` function of the file that yields only with grad
        off (``with evaluating(model):`` where ``evaluating`` does ``with torch.no_grad():
        yield``): the ``with`` body runs inside that region."""
        info = self._local_function(func)
        if info is None or not any(decorator.rsplit(".", 1)[-1] == "contextmanager" for decorator in info.decorators):
            return None
        return True if info.yield_modes and all(info.yield_modes) else None

    def _local_function(self, func: cst.BaseExpression) -> FunctionInfo | None:
        if self.model is not None:
            function = self.model.value(func).function
            return self.model.function_info(function) if function is not None else None
        return self.functions(func) if self.functions is not None else None

    def _local_decorator(self, decorator: cst.BaseExpression) -> bool | None:
        """True for a decorator of the file that calls the function it is given only with
        grad off (its wrapper does ``with torch.no_grad(): return fn(*args, **kwargs)``):
        the decorated function runs inside that region."""
        if not isinstance(decorator, (cst.Name, cst.Attribute)):
            return None
        info = self._local_function(decorator)
        records = self.model.records if self.model is not None else self.records
        if info is None or records is None or not info.params or info.is_method:
            return None
        name = info.params[0].name.value
        modes = [raw.grad_disabled for raw in records.calls if isinstance(raw.call.func, cst.Name) and raw.call.func.value == name and _inside(raw.scope, info.scope)]
        return True if modes and all(modes) else None

    def visit_With(self, node: cst.With) -> None:
        state = self.disabled
        condition = self._conditions[-1]
        for item in node.items:
            mode = self.mode_of(item.item)
            if mode is not None:
                state = mode
            elif (setting := self._conditional_setting(item.item)) is not None:
                state, condition = False, setting
        self._stack.append(state)
        self._conditions.append(condition)

    def leave_With(self, node: cst.With) -> None:
        self._stack.pop()
        self._conditions.pop()

    def _conditional_setting(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``cond`` of ``torch.set_grad_enabled(cond)`` where it is not a literal."""
        if not isinstance(expr, cst.Call) or len(expr.args) != 1 or self.names is None or self.names.torch_qualname(expr.func) not in GRAD_SETTING:
            return None
        return expr.args[0].value

    # -- branches on a set_grad_enabled condition --------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._enter_branch(node)  # an ``elif``: the ``else`` of the ``if`` before it
        condition = self._conditions[-1]
        if condition is None:
            return
        relation = _relation(node.test, condition)
        if relation is None:
            return
        self._branch_modes[id(node.body)] = relation != "same"  # grad off unless the test is the condition
        if node.orelse is not None and relation in ("same", "negated"):
            self._branch_modes[id(node.orelse)] = relation == "same"

    def leave_If(self, node: cst.If) -> None:
        self._leave_branch(node)

    def _enter_branch(self, node: cst.CSTNode) -> None:
        mode = self._branch_modes.pop(id(node), None)
        if mode is not None:
            self._stack.append(mode)
            self._branches.add(id(node))

    def _leave_branch(self, node: cst.CSTNode) -> None:
        if id(node) in self._branches:
            self._branches.discard(id(node))
            self._stack.pop()

    visit_IndentedBlock = visit_SimpleStatementSuite = visit_Else = _enter_branch
    leave_IndentedBlock = leave_SimpleStatementSuite = leave_Else = _leave_branch

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value
        if isinstance(value, cst.Call) and self.names is not None and self.names.torch_qualname(value.func) in GRAD_SETTING:
            mode = self.mode_of(value)
            if mode is not None:
                self._stack[-1] = mode  # ``torch.set_grad_enabled(False)`` as a statement
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "enter_context" and len(value.args) == 1 and len(self._stack) > 1:
            mode = self.mode_of(value.args[0].value)
            if mode is not None:
                self._stack[-1] = mode  # ``stack.enter_context(torch.no_grad())``: until the ``with`` block of the stack ends

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            mode = self.mode_of(node.value)
            if mode is None:
                self._switch_names[-1].pop(name, None)
            else:
                self._switch_names[-1][name] = mode

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # ``torch.autograd.Function.forward(ctx, ...)`` always runs with grad disabled, and
        # so does a function that is only ever called with grad off (the model's call sites).
        state = _is_function_forward(node) or (self.model is not None and self.model.runs_without_grad(self.model.scope_of(node)))
        wrappers = [decorator.decorator for decorator in node.decorators]
        if self.model is not None:
            wrappers += self.model.wrappers_of(node)  # ``f = torch.no_grad()(f)`` later in the file
        for wrapper in wrappers:
            mode = self.mode_of(wrapper)
            if mode is None:
                mode = self._local_decorator(wrapper)
            if mode is not None:
                state = mode
        self._stack.append(state)
        self._switch_names.append({})
        self._conditions.append(None)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._stack.pop()
        self._switch_names.pop()
        self._conditions.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._stack.append(False)
        self._conditions.append(None)

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._stack.pop()
        self._conditions.pop()


def disables(qualname: str | None, args: Sequence[cst.Arg]) -> bool:
    """Whether calling ``qualname`` with ``args`` switches recording off: ``torch.no_grad()``,
    ``torch.inference_mode()``, not ``inference_mode(False)`` / ``inference_mode(mode=False)``."""
    return qualname in GRAD_DISABLING and not (args and is_false(args[0].value))


def _relation(test: cst.BaseExpression, condition: cst.BaseExpression) -> str | None:
    """How an ``if`` test relates to a ``set_grad_enabled`` condition: "same", "negated"
    (``not cond``, ``x != a`` of ``x == a``), "excludes" (``x == b`` of ``x == a``, another
    literal: true only where the condition is false), or None (it does not say)."""
    if _same(test, condition):
        return "same"
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and _same(test.expression, condition):
        return "negated"
    if isinstance(condition, cst.UnaryOperation) and isinstance(condition.operator, cst.Not) and _same(test, condition.expression):
        return "negated"
    if not (isinstance(test, cst.Comparison) and isinstance(condition, cst.Comparison) and len(test.comparisons) == len(condition.comparisons) == 1):
        return None
    mine, theirs = test.comparisons[0], condition.comparisons[0]
    if not _same(test.left, condition.left):
        return None
    equal, unequal = (cst.Equal, cst.NotEqual)
    if isinstance(mine.operator, unequal) and isinstance(theirs.operator, equal) and _same(mine.comparator, theirs.comparator):
        return "negated"
    if isinstance(mine.operator, equal) and isinstance(theirs.operator, unequal) and _same(mine.comparator, theirs.comparator):
        return "negated"
    if isinstance(mine.operator, equal) and isinstance(theirs.operator, equal) and _literal(mine.comparator) and _literal(theirs.comparator) and not _same(mine.comparator, theirs.comparator):
        return "excludes"
    return None


def _same(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    return "".join(code_of(a).split()) == "".join(code_of(b).split())


def _literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float))


def _is_function_forward(node: cst.FunctionDef) -> bool:
    """``@staticmethod def forward(ctx, ...)``: a custom autograd Function's forward."""
    params = node.params.posonly_params or node.params.params
    return (
        node.name.value == "forward"
        and bool(params)
        and params[0].name.value == "ctx"
        and any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)
    )


class RequiresGradSwitches:
    """Walk participant: tensors whose ``requires_grad`` was switched off in this function.

    ``w.requires_grad = False`` or ``w.requires_grad_(False)`` (and not switched back on
    since) makes ``w`` no longer a leaf that requires grad, from that point on. A plain name
    is known by its bindings (``for p in frozen.parameters(): p.requires_grad = False`` says
    nothing of a later ``[p.clone() for p in other.parameters()]``), an attribute chain by
    its text (``self.w``).
    """

    def __init__(self, bindings_of: Callable[[cst.Name], tuple[object, ...]]) -> None:
        self._bindings_of = bindings_of
        self._off: list[set[object]] = [set()]
        self._on: list[set[object]] = [set()]  # switched on: ``x_adv.requires_grad_(True)``

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # A function starts with what was switched before its definition in the code around
        # it: a closure defined after ``img.requires_grad_(True)`` (an L-BFGS ``closure()``)
        # reads ``img`` switched on.
        self._off.append(set(self._off[-1]))
        self._on.append(set(self._on[-1]))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._off.pop()
        self._on.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "requires_grad":
                self._switch(target.target.value, off=is_false(node.value))

    def leave_Assign(self, node: cst.Assign) -> None:
        # ``x_adv = x_adv.detach() + step`` after ``x_adv.requires_grad_(True)``: a new value,
        # switched on by nothing (a loop's next ``requires_grad_(True)`` switches it again).
        for target in node.targets:
            for name in target_names(target.target):
                for key in self._keys(name):
                    self._on[-1].discard(key)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_":
            self._switch(node.func.value, off=bool(node.args) and is_false(node.args[0].value))

    def _keys(self, expr: cst.BaseExpression) -> list[object]:
        if isinstance(expr, cst.Name):
            return [id(binding) for binding in self._bindings_of(expr)] or [expr.value]
        dotted = dotted_name(expr)
        return [dotted] if dotted is not None else []

    def _switch(self, owner: cst.BaseExpression, off: bool) -> None:
        for key in self._keys(owner):
            if off:
                self._off[-1].add(key)
                self._on[-1].discard(key)
            else:
                self._off[-1].discard(key)
                self._on[-1].add(key)

    def switched_on(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr``'s ``requires_grad`` was set to True earlier in this function (a
        detached input made a leaf again: ``x_adv.requires_grad_(True)`` in an attack loop)."""
        keys = self._keys(expr)
        return bool(keys) and all(key in self._on[-1] for key in keys)

    def switched_off(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr``'s ``requires_grad`` was set to False earlier in this function."""
        keys = self._keys(expr)
        return bool(keys) and all(key in self._off[-1] for key in keys)


def _inside(scope: Scope | None, outer: Scope) -> bool:
    """Whether ``scope`` is ``outer`` or nested in it."""
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False
