"""Compute the abstract value of an expression (see :mod:`.values`).

The rules of evaluation, by expression form: a name is the join of the bindings that
reach it; ``self.x`` is the join of every value any method of the class assigns to
``self.x``; a call of a local function is the join of its returns, and a parameter the
join of the arguments its call sites pass (or what its annotation, its role as a hook
callback, or its default says); torch calls, tensor methods and module methods follow
the tables in :mod:`.torch_api`; containers carry their elements, including what was
appended later. Evaluation is memoised per node and grad mode, and cut where it would
loop (a recursive function, ``x = f(x)``): such a value is unknown.

``grad_off`` is whether autograd is off where the expression runs: a computation under
``torch.no_grad()`` has no history, a parameter read there still requires grad.
"""

from __future__ import annotations

import keyword
from dataclasses import replace
from typing import TYPE_CHECKING

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis import naming
from torchcopy_lint.analysis import torch_api as api
from torchcopy_lint.analysis.bindings import Binding, BindingKind, CallSite, FunctionInfo, Scope
from torchcopy_lint.analysis.memo import CycleSafeMemo
from torchcopy_lint.analysis.cst_helpers import dotted_name, is_basic_index, is_false, is_true, keyword_arg, positional_args, string_value
from torchcopy_lint.analysis.values import (
    ARRAY,
    NONE,
    OBJECT,
    SCALAR,
    UNKNOWN,
    Alias,
    AliasHow,
    Grad,
    Kind,
    Value,
    container,
    element_of,
    item_of,
    join,
    join_all,
    mapping,
    tensor,
)

if TYPE_CHECKING:
    from torchcopy_lint.analysis.semantic import SemanticModel

PARAMETER = tensor(Grad.LEAF, "an nn.Parameter")
SIZE = Value(Kind.CONTAINER, element=SCALAR, qualname="torch.Size")
MODULE_OUTPUT = "a module output"
FROZEN_OUTPUT = "a frozen module's output"
INTEGERS = "a tensor of integers"  # argmax, comparisons ...: converting it to a floating dtype always copies
_FLOAT_CONVERSIONS = frozenset({"float", "double", "half", "bfloat16", "cfloat", "cdouble"})
NAMEDTUPLE = "collections.namedtuple"  # a namedtuple class (CALLABLE, its fields) or instance (CONTAINER)
_NAMEDTUPLE_BASES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
_SCALAR_BUILTINS = api.SCALAR_BUILTINS
# Numbers the standard library and numpy name (``best = math.inf``, then ``best = val_loss``):
# a number, which a tensor on another path makes a tensor (values.join).
_NAMED_NUMBERS = frozenset(
    f"{module}.{name}" for module in ("math", "numpy") for name in ("inf", "nan", "pi", "e", "tau", "Inf", "NaN", "NINF", "PINF")
) | {"sys.maxsize"}
_SEQUENCE_BUILTINS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter"})
_PLAIN_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset", "str", "bytes", "int", "float", "bool", "complex", "object", "Exception", "BaseException", "ValueError", "RuntimeError", "TypeError", "KeyError"})
# What a module of no particular class is called: unknown, or annotated ``nn.Module``.
_ANY_MODULE = frozenset({None, "torch.nn.Module", "torch.nn.modules.module.Module"})
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "str", "bool", "bytes", "complex"})
_CONTAINER_ANNOTATIONS = frozenset({"list", "dict", "tuple", "set", "frozenset", "List", "Dict", "Tuple", "Set", "Sequence", "Iterable", "Iterator", "Mapping", "MutableMapping", "OrderedDict", "Deque", "deque"})
_MAX_NESTING = 60  # evaluations in progress at once (deep chains are cut, not overflowed)
_CALL_DEPTH = 2  # calls followed with their own arguments (see Evaluator._returns_at)
_MODULE_ONLY_METHODS = api.MODULE_ONLY_METHODS


def derived(grad: Grad, grad_off: bool) -> Grad:
    """The grad state of a computation's result from its input's."""
    if grad_off:
        return Grad.NO
    return Grad.GRAPH if grad.required else grad


def combined(values: list[Value], grad_off: bool) -> tuple[Grad, str | None, bool]:
    """``(grad, why, loss)`` of a computation on several values (tensors among them)."""
    tensors = [value for value in values if value.kind is Kind.TENSOR]
    loss = any(value.loss for value in tensors)
    if grad_off:
        return Grad.NO, None, loss
    for value in tensors:
        if value.grad.required:
            return Grad.GRAPH, value.why, loss
    if tensors and all(value.grad is Grad.NO for value in tensors) and len(tensors) == len([v for v in values if v.kind is not Kind.SCALAR]):
        return Grad.NO, None, loss
    return Grad.UNKNOWN, None, loss


def without_history(value: Value) -> Value:
    """``value`` as computed under no_grad: results lose their history, leaves stay."""
    if value.kind is Kind.TENSOR and value.grad is Grad.GRAPH:
        return value.with_(grad=Grad.NO, why=None)
    if value.kind is Kind.CONTAINER and value.element is not None:
        items = tuple(without_history(item) for item in value.items) if value.items is not None else None
        return value.with_(element=without_history(value.element), items=items)
    return value


def without_alias(value: Value) -> Value:
    """A deep copy of ``value``: the same kinds, sharing nothing (copied parameters belong
    to no module)."""
    if value.kind is Kind.CONTAINER:
        items = tuple(without_alias(item) for item in value.items) if value.items is not None else None
        element = without_alias(value.element) if value.element is not None else None
        return value.with_(alias=None, element=element, items=items, owner=None)
    return value.with_(alias=None, owner=None)


def _requires_grad_flag(call: cst.Call) -> cst.BaseExpression | None:
    argument = keyword_arg(call, "requires_grad")
    return argument.value if argument is not None else None


class Evaluator:
    """Memoised evaluation of expressions against one semantic model.

    ``infer_parameters`` False evaluates parameters from their annotations and defaults
    only: the model builds its call-site and hook indexes with such an evaluator.
    """

    def __init__(
        self,
        model: "SemanticModel",
        infer_parameters: bool = True,
        arguments: dict[int, Value] | None = None,
        depth: int = 0,
        known_calls: dict[int, list[CallSite]] | None = None,
        outer: "Evaluator | None" = None,
        specialised: frozenset[int] = frozenset(),
    ) -> None:
        self.model = model
        # A callee's evaluator (see _returns_at) computes only the bindings and returns of the
        # scopes ``arguments`` can change (id of each: the callee's, with the scopes nested in
        # it); every other binding is what it is for any call, asked of ``outer``.
        self._outer = outer
        self._specialised = specialised
        self._inside: dict[int, bool] = {}  # id(scope) -> within a specialised scope
        self.infer_parameters = infer_parameters
        self._known_calls = known_calls  # call sites to infer parameters from, while the model's are being built
        self._arguments = arguments or {}  # id(parameter binding) -> the value one call passes
        self._depth = depth  # how many calls deep this evaluator evaluates a callee's returns
        self._memo = CycleSafeMemo(_MAX_NESTING)
        self._values: dict[tuple[int, bool], Value] = {}  # id(expression or binding), grad off -> its value
        self._returns: dict[int, Value] = {}
        self._calls: dict[tuple[int, bool], Value] = {}

    # -- entry points ------------------------------------------------------------------
    def value(self, expr: cst.BaseExpression, grad_off: bool = False) -> Value:
        key = (id(expr), grad_off)
        found = self._values.get(key)  # the memo's own first step, without making the closure (the hot path)
        if found is not None:
            return found
        # A cycle (``x = f(x)``, recursion) or a chain too deep to follow is unknown.
        return self._memo.get(self._values, key, lambda: self._evaluate(expr, grad_off), UNKNOWN)

    def binding_value(self, binding: Binding) -> Value:
        key = (id(binding), False)
        found = self._values.get(key)
        if found is not None:
            return found
        if self._outer is not None and not self._specialises(binding.scope):
            return self._outer.binding_value(binding)
        return self._memo.get(self._values, key, lambda: self._binding_value(binding), UNKNOWN)

    def _specialises(self, scope: Scope) -> bool:
        """Whether ``scope`` is, or is nested in, a scope whose parameters this evaluator's
        arguments set."""
        inside = self._inside.get(id(scope))
        if inside is None:
            current: Scope | None = scope
            while current is not None and id(current) not in self._specialised:
                current = current.parent
            inside = self._inside[id(scope)] = current is not None
        return inside

    # -- expressions -----------------------------------------------------------------------
    def _evaluate(self, expr: cst.BaseExpression, off: bool) -> Value:
        result = self._evaluate_form(expr, off)
        if result.kind is Kind.TENSOR and not result.guessed and any(operand.guessed for operand in self._operands(expr, off)):
            return result.with_(guessed=True)  # computed from a value whose kind is a guess
        return result

    def _operands(self, expr: cst.BaseExpression, off: bool) -> list[Value]:
        """The values an expression's tensor result is computed from (already memoised)."""
        if isinstance(expr, cst.Attribute) and expr.attr.value in api.PARAMETER_ATTRIBUTES:
            return []  # ``.weight`` of a module, known or guessed, is a parameter either way
        if isinstance(expr, cst.Attribute) or isinstance(expr, cst.Subscript):
            return [self.value(expr.value, off)]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in api.TENSOR_ONLY_METHODS:
                return []  # ``x.contiguous()`` is a tensor whatever ``x`` was taken for, as on an untyped ``x``
            return [self.value(expr.func.value, off)]
        if isinstance(expr, cst.BinaryOperation):
            return [self.value(expr.left, off), self.value(expr.right, off)]
        if isinstance(expr, cst.UnaryOperation):
            return [self.value(expr.expression, off)]
        return []

    def _evaluate_form(self, expr: cst.BaseExpression, off: bool) -> Value:
        # ``type(...) is``: LibCST's node classes are final, and isinstance against them goes
        # through ABCMeta for every miss (measured: a tenth of the analysis on torch's source).
        form = type(expr)
        if form is cst.Name:
            return self._name(expr)  # type: ignore[arg-type]
        if form is cst.Attribute:
            return self._attribute(expr, off)  # type: ignore[arg-type]
        if form is cst.Call:
            return self._call(expr, off)  # type: ignore[arg-type]
        if form is cst.Subscript:
            return self._subscript(expr, off)  # type: ignore[arg-type]
        if isinstance(expr, cst.BinaryOperation):
            return self._arithmetic(self.value(expr.left, off), self.value(expr.right, off), off)
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return SCALAR
            operand = self.value(expr.expression, off)
            return operand.with_(grad=derived(operand.grad, off), alias=None) if operand.kind is Kind.TENSOR else operand
        if isinstance(expr, cst.BooleanOperation):
            return join(self.value(expr.left, off), self.value(expr.right, off))
        if isinstance(expr, cst.IfExp):
            return join(self.value(expr.body, off), self.value(expr.orelse, off))
        if isinstance(expr, cst.Comparison):
            if all(isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for target in expr.comparisons):
                return SCALAR  # ``s is not None``, ``k in d``: a bool, even of a tensor
            left = self.value(expr.left, off)
            if left.kind is Kind.TENSOR or any(self.value(target.comparator, off).kind is Kind.TENSOR for target in expr.comparisons):
                return tensor(Grad.NO, INTEGERS)
            return SCALAR
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return SCALAR
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return self._display(expr, off)
        if isinstance(expr, cst.Dict):
            return self._dict_display(expr, off)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return container(self.value(expr.elt, off))
        if isinstance(expr, cst.DictComp):
            return mapping(self.value(expr.value, off), self.value(expr.key, off))
        if isinstance(expr, cst.Lambda):
            return Value(Kind.CALLABLE, function=expr)
        if isinstance(expr, cst.NamedExpr):
            return self.value(expr.value, off)
        if isinstance(expr, cst.Ellipsis):
            return OBJECT
        return UNKNOWN

    def _display(self, expr: cst.List | cst.Tuple | cst.Set, off: bool) -> Value:
        values: list[Value] = []
        spread: list[Value] = []
        for element in expr.elements:
            if isinstance(element, cst.StarredElement):
                spread.append(element_of(self.value(element.value, off)))
            else:
                values.append(self.value(element.value, off))
        element_value = join_all([*values, *spread], numeric=False) if values or spread else UNKNOWN
        items = tuple(values) if isinstance(expr, cst.Tuple) and not spread else None
        return container(element_value, items=items)

    def _dict_display(self, expr: cst.Dict, off: bool) -> Value:
        values: list[Value] = []
        keys: list[Value] = []
        fields: list[tuple[str, Value]] = []
        for element in expr.elements:
            if isinstance(element, cst.StarredDictElement):
                inner = self.value(element.value, off)
                values.append((inner.element or UNKNOWN) if inner.kind is Kind.CONTAINER else UNKNOWN)  # ``**inner``: its values
                keys.append(element_of(inner))
                fields.extend(inner.fields)
                continue
            value = self.value(element.value, off)
            values.append(value)
            keys.append(self.value(element.key, off))
            key = string_value(element.key)
            if key is not None:
                fields.append((key, value))
        return mapping(join_all(values, numeric=False) if values else UNKNOWN, join_all(keys, numeric=False) if keys else UNKNOWN, fields=tuple(fields))

    # -- names and bindings -------------------------------------------------------------
    def _name(self, expr: cst.Name) -> Value:
        bindings = self.model.bindings_of(expr)
        if not bindings:
            if expr.value in ("True", "False"):
                return SCALAR
            if expr.value == "None":
                return NONE
            if self.model.is_builtin(expr):
                return Value(Kind.CALLABLE, qualname=f"builtins.{expr.value}")
            # Undefined here (a star import, a global set elsewhere): its name may tell.
            return (_named_like(expr.value) if self.model.names.imports_torch else None) or UNKNOWN
        skipped = self.model.narrowing_of_bindings(expr)
        if skipped is None:
            value = join_all([self.binding_value(binding) for binding in bindings])
        else:
            ids, narrowed = skipped
            values = []
            for binding in bindings:
                found = self.binding_value(binding)
                if id(binding) in ids:
                    if narrowed.kind is not Kind.TENSOR and found.kind is Kind.TENSOR and not found.guessed:
                        continue  # a known tensor never skips ``if torch.is_tensor(x):``
                    found = _narrow(found, narrowed)
                values.append(found)
            value = join_all(values) if values else narrowed
        element = self.model.narrowed_element(expr)
        if element is not None and value.kind is Kind.CONTAINER:
            held = value.element
            if element.kind is Kind.TENSOR and held is not None and held.kind is Kind.TENSOR:
                element = held  # the test says nothing new (the held value knows more)
            items = None if value.items is None else tuple(element for _ in value.items)
            return replace(value, element=element, items=items)
        narrowed = self.model.narrowing(expr)
        return value if narrowed is None else _narrow(value, narrowed)

    def _binding_value(self, binding: Binding) -> Value:
        passed = self._arguments.get(id(binding))
        if passed is not None:
            return passed
        if not binding.grad_disabled and self.infer_parameters and self.model.runs_without_grad(binding.scope):
            binding = _with_grad_off(binding)
        kind = binding.kind
        if kind in (BindingKind.ASSIGNMENT, BindingKind.WALRUS):
            value = self._project(self.value(binding.value, binding.grad_disabled), binding.path) if binding.value is not None else UNKNOWN
            if value.kind is Kind.UNKNOWN and self.model.names.imports_torch:
                value = self._loss_named(binding) or self._module_named(binding) or value
        elif kind is BindingKind.ANNOTATION:
            value = self.value(binding.value, binding.grad_disabled) if binding.value is not None else UNKNOWN
            if value.kind is Kind.UNKNOWN and binding.annotation is not None:
                value = self.annotation_value(binding.annotation)
        elif kind is BindingKind.AUGMENTED:
            before = join_all([self.binding_value(previous) for previous in binding.previous]) if binding.previous else UNKNOWN
            assert binding.value is not None
            value = self._augmented(before, self.value(binding.value, binding.grad_disabled), binding.grad_disabled)
        elif kind is BindingKind.PARAMETER:
            value = self._parameter(binding)
        elif kind in (BindingKind.LOOP_TARGET, BindingKind.COMPREHENSION_TARGET):
            value = self._project(element_of(self.value(binding.value, binding.grad_disabled)), binding.path) if binding.value is not None else UNKNOWN
        elif kind is BindingKind.IMPORT:
            value = SCALAR if binding.qualname in _NAMED_NUMBERS else Value(Kind.OBJECT, qualname=binding.qualname)
        elif kind is BindingKind.FUNCTION:
            value = Value(Kind.CALLABLE, function=binding.node)  # type: ignore[arg-type]
        elif kind is BindingKind.CLASS:
            value = Value(Kind.CALLABLE, cls=binding.node)  # type: ignore[arg-type]
        elif kind is BindingKind.WITH_TARGET:
            value = UNKNOWN
        else:
            value = OBJECT
        if binding.additions:
            value = self._with_additions(value, binding.additions)
        if value.kind is Kind.UNKNOWN and self.model.names.imports_torch and not self._made_by_another_library(binding):
            # Evidence, not proof (a duck-typed object may have such methods): marked as guesses,
            # so that rules asking for a tensor the file shows, and safe fixes, do not rest on it.
            if self.model.records.grad_owners and self.model.used_as_leaf(binding):
                value = tensor(Grad.LEAF, "a tensor whose .grad is read").with_(guessed=True)
            elif (self.model.records.tensor_receivers or self.model.records.first_arguments) and self.model.used_as_tensor(binding):
                value = self._used_as_tensor(binding).with_(guessed=True)
            elif self.model.records.module_receivers and self.model.used_as_module(binding):
                value = Value(Kind.MODULE, guessed=True)
        return value

    def _made_by_another_library(self, binding: Binding) -> bool:
        """``x = ti.field(...)``: what another library made keeps its own ``.grad`` and in-place
        methods; its uses do not make it a tensor."""
        value = binding.value
        if not isinstance(value, cst.Call):
            return False
        qualname = self.model.names.qualname(value.func)
        return qualname is not None and not qualname.startswith("torch")

    def _used_as_tensor(self, binding: Binding) -> Value:
        """A binding the file uses as a tensor (``features.new_tensor(...)``, ``adv.sub_(m)``)
        that nothing else types: a tensor; one it calls ``backward()`` on, a loss with autograd
        history; bound to a method that keeps a tensor a tensor
        (``adv = advantages.reshape(-1)``), that method's result on a tensor, so the alias to
        what it was called on is kept (an untyped argument written through ``reshape``)."""
        if self.model.records.differentiated and self.model.differentiated(binding):
            # ``loss = crit(out, y); loss.backward()``: what it is used as says it has history.
            return tensor(Grad.NO if binding.grad_disabled else Grad.GRAPH, "a loss, differentiated by backward()", loss=True)
        call = binding.value if binding.kind is BindingKind.ASSIGNMENT and not binding.path else None
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            if method in api.VIEW_METHODS or method in api.MAYBE_ALIAS_METHODS or method in api.DETACHING_METHODS:
                receiver = self.value(call.func.value, binding.grad_disabled)
                if receiver.kind is Kind.UNKNOWN:
                    return self._tensor_method(tensor(receiver.grad), call.func.value, method, call, binding.grad_disabled)
        return tensor()

    def _project(self, value: Value, path: tuple[int | None, ...]) -> Value:
        for index in path:
            value = item_of(value, index)
        return value

    def _with_additions(self, value: Value, additions: list) -> Value:
        """A container grown after it was made: its elements include what was added."""
        if value.kind is Kind.TENSOR:
            return self._written_into(value, additions)
        if value.kind not in (Kind.CONTAINER, Kind.UNKNOWN):
            return value
        if value.kind is Kind.UNKNOWN and all(addition.item and not addition.nested for addition in additions):
            return value  # ``x[i] = v`` does not say x is a container: tensors take it too
        added: list[Value] = []
        fields = list(value.fields)
        for addition in additions:
            if addition.item and addition.nested and _receives_item_store(value, addition.nested):
                continue  # ``params[name][~mask] = 0.0`` writes into a tensor of ``params``
            if not addition.item and addition.nested and _held_object(value, addition.nested):
                continue  # ``meters["loss"].update(v)`` of a ``defaultdict(AverageMeter)``: the meter's own method
            item = self.value(addition.value, addition.grad_disabled)
            if addition.augmented and not addition.nested and value.element is not None:
                # ``fisher[n] += g`` of ``fisher = {n: p.detach() ...}``: the item, written in place
                item = self._augmented(value.element, item, addition.grad_disabled)
            if addition.spread:
                item = element_of(item)
            for _ in range(addition.nested):
                item = container(item)  # ``d[k].append(v)``: d's item is a list of v
            added.append(item)
            if addition.key is not None:
                known = next((index for index, (key, _) in enumerate(fields) if key == addition.key), None)
                if known is None:
                    fields.append((addition.key, item))
                else:  # ``stats = {"loss": []}`` then ``stats["loss"].append(v)``
                    fields[known] = (addition.key, join(fields[known][1], item, numeric=False))
        element = join_all([value.element, *added], numeric=False) if value.kind is Kind.CONTAINER and value.element is not None and value.element != UNKNOWN else join_all(added, numeric=False)
        return Value(Kind.CONTAINER, element=element, keys=value.keys, items=None, fields=tuple(fields), alias=value.alias, qualname=value.qualname)

    def _written_into(self, value: Value, additions: list) -> Value:
        """``losses[i] = loss`` with grad on: a tensor that did not require grad takes the
        history of what is stored into it (autograd records a ``CopySlices``)."""
        if value.grad.required:
            return value
        for addition in additions:
            if addition.item and not addition.nested and not addition.grad_disabled:
                stored = self.value(addition.value, False)
                if stored.requires_grad:
                    return value.with_(grad=Grad.GRAPH, why=stored.why, seed=False)
        return value

    def _augmented(self, before: Value, operand: Value, off: bool) -> Value:
        if before.kind is Kind.CONTAINER:
            return container(join(before.element or UNKNOWN, element_of(operand)), alias=before.alias, keys=before.keys)
        if before.kind is Kind.TENSOR and (before.grad is Grad.LEAF or not (operand.kind is Kind.TENSOR and operand.grad.required)):
            # ``t += x`` writes t in place: it stays what it was (a leaf that requires grad
            # stays one: with grad on, the write raises; under no_grad, it keeps no history).
            return before
        return self._arithmetic(before, operand, off)

    def _parameter(self, binding: Binding) -> Value:
        info = self.model.function_of_scope(binding.scope)
        if info is None:
            return UNKNOWN
        param = binding.node
        params = info.params
        index = next((i for i, candidate in enumerate(params) if candidate is param), None)
        hook_role = info.hook_role(index) if index is not None else None
        if hook_role is not None:
            role = (self.model.hooked_inputs(info, self) if hook_role == "inputs" else None) or _hook_role_value(hook_role)
            return without_history(role) if info.hook_runs_without_grad else role
        if index == 0 and info.cls is not None:
            if "staticmethod" not in info.decorators:
                if "classmethod" in info.decorators:
                    return Value(Kind.CALLABLE, cls=info.cls.node)
                return self.model.instance_of(info.cls.node)
        if binding.annotation is not None:
            annotated = self.annotation_value(binding.annotation)
            if annotated.kind is not Kind.UNKNOWN:
                return self._refined_by_callers(annotated, info, index, binding.name)
        if index == 1:
            step = self.model.epoch_outputs_of(info)
            if step is not None:  # ``validation_epoch_end(self, outputs)``: what each ``validation_step`` returned
                return container(self.returns(step))
        if isinstance(param, cst.Param) and param is info.node.params.star_arg and self.infer_parameters:
            sites = info.call_sites if self._known_calls is None else self._known_calls.get(id(info.node), [])
            rests = [self._rest(site, len(params)) for site in sites]
            known = [rest for rest in rests if rest is not None]
            if not known or len(known) != len(rests):
                return container()
            # Iterating gives any of the arguments: unknown unless every one is known (the
            # usual join lets one known argument stand for all: ``for f in fs: x = f(x)`` of
            # ``compose(tokenizer, vocab, to_tensor)`` is not three calls of ``to_tensor``).
            element = _strict_join([rest.element or UNKNOWN for rest in known])
            joined = join_all(known).with_(element=element)
            if len({len(rest.items) if rest.items is not None else -1 for rest in known}) == 1 and known[0].items is not None:
                # Each position is what every call passes there: a number at one call and a
                # tensor at another is either (``push(s, a, reward)`` of floats and of tensors).
                joined = joined.with_(items=tuple(_strict_join([rest.items[i] for rest in known]) for i in range(len(known[0].items))))  # type: ignore[index]
            return joined
        if isinstance(param, cst.Param) and (param is info.node.params.star_arg or param is info.node.params.star_kwarg):
            return container()
        value = self._passed(info, index, binding.name)
        if value.kind is Kind.UNKNOWN and binding.value is not None:
            default = self.value(binding.value)
            if default.kind is not Kind.NONE:
                value = join(value, default)
        if value.kind is Kind.UNKNOWN:
            cls = self.model.class_named_like(binding.name)
            if cls is not None:
                return self.model.instance_of(cls).with_(guessed=True)  # ``buffer`` of a ``RolloutBuffer``
            cls = self.model.class_of_elements_named_like(binding.name)
            if cls is not None:
                return container(self.model.instance_of(cls).with_(guessed=True)).with_(guessed=True)  # ``graphs`` of ``Graph``s
        if value.kind is Kind.UNKNOWN and self.model.names.imports_torch:
            value = _named_like(binding.name) or value
        return value

    def _passed(self, info: FunctionInfo, index: int | None, name: str) -> Value:
        """What the function's call sites pass for the parameter (joined; UNKNOWN if none is known)."""
        if not self.infer_parameters:
            return UNKNOWN
        sites = info.call_sites if self._known_calls is None else self._known_calls.get(id(info.node), [])
        passed = [value for value in (self._argument(site, info, index, name) for site in sites) if value is not None]
        return join_all(passed) if passed else UNKNOWN

    def _refined_by_callers(self, annotated: Value, info: FunctionInfo, index: int | None, name: str) -> Value:
        """An annotation says a parameter is a tensor (``feat: torch.Tensor``), not whether it
        requires grad; the callers may (``StyleLoss(model(img))``). Only evidence of history is
        taken from them: the annotated type stays what the parameter is otherwise."""
        if annotated.kind is not Kind.TENSOR or annotated.grad is not Grad.UNKNOWN:
            return annotated
        passed = self._passed(info, index, name)
        return passed if passed.kind is Kind.TENSOR and passed.grad.required else annotated

    def _argument(self, site: CallSite, info: FunctionInfo, index: int | None, name: str) -> Value | None:
        """What ``site`` passes for the parameter (position ``index``, called ``name``); an
        element of what it passes for a function mapped over iterables (``map(f, xs)``)."""
        passed = site.argument(index, name)
        if passed is None:
            return None
        given = self.value(passed, site.grad_disabled)
        if site.batched:
            return container(self.item_of_dataset(given))
        return element_of(given) if site.iterated else given

    def item_of_dataset(self, dataset: Value) -> Value:
        """``dataset[i]``: what a dataset class of the file's ``__getitem__`` returns; an element
        of a list or tensor used as a dataset."""
        if dataset.cls is not None and dataset.kind is Kind.OBJECT:
            method = self.model.class_attribute(dataset.cls, "__getitem__", self)
            info = self.model.function_info(method.function) if method is not None and method.function is not None else None
            return self.returns(info) if info is not None else UNKNOWN
        return element_of(dataset)

    def _rest(self, site: CallSite, start: int) -> Value | None:
        """What ``site`` passes into ``*args`` (after ``start`` named parameters): a tuple of
        the extra positional arguments; None where their positions are unknown."""
        if site.passes_parts:
            return None
        positional = [argument for argument in site.call.args if argument.keyword is None and argument.star != "**"]
        position = start - site.offset
        values: list[Value] = []
        spread: list[Value] = []  # from a ``*xs`` of unknown length on
        for number, argument in enumerate(positional):
            if argument.star == "*":
                if number < position:
                    return None  # ``f(*xs)``: which of them reach ``*args`` is unknown
                given = self.value(argument.value, site.grad_disabled)
                if given.kind is Kind.CONTAINER and given.items is not None and not spread:
                    values.extend(given.items)
                else:
                    spread.append(element_of(given))
            elif number >= position:
                (spread if spread else values).append(self.value(argument.value, site.grad_disabled))
        if spread:
            return container(_strict_join([*values, *spread]))
        return container(_strict_join(values), items=tuple(values))

    def _positions(self, call: cst.Call, off: bool) -> tuple[list[Value], Value | None]:
        """The positional arguments of a call, ``*xs`` expanded where ``xs``'s positions are
        known; the second part: what any later position holds, after a ``*xs`` of unknown length."""
        values: list[Value] = []
        for argument in call.args:
            if argument.keyword is not None or argument.star == "**":
                continue
            given = self.value(argument.value, off)
            if argument.star != "*":
                values.append(given)
            elif given.kind is Kind.CONTAINER and given.items is not None:
                values.extend(given.items)
            else:
                return values, element_of(given)
        return values, None

    def annotation_value(self, annotation: cst.BaseExpression) -> Value:
        """What a parameter or variable annotated with ``annotation`` holds."""
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            left, right = self.annotation_value(annotation.left), self.annotation_value(annotation.right)
            return right if left.kind is Kind.NONE else left if right.kind is Kind.NONE else join(left, right)
        if isinstance(annotation, cst.Name) and annotation.value == "None":
            return NONE
        if isinstance(annotation, cst.Subscript):
            base = dotted_name(annotation.value) or ""
            last = base.rsplit(".", 1)[-1]
            arguments = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
            if last == "Optional" and arguments:
                return self.annotation_value(arguments[0])
            if last == "Union" and arguments:
                return join_all([value for value in (self.annotation_value(a) for a in arguments) if value.kind is not Kind.NONE] or [NONE])
            if last in _CONTAINER_ANNOTATIONS:
                inner = [self.annotation_value(argument) for argument in arguments if not isinstance(argument, cst.Ellipsis)]
                if last in ("dict", "Dict", "Mapping", "MutableMapping", "OrderedDict") and len(inner) == 2:
                    return mapping(inner[1], inner[0])
                if last in ("tuple", "Tuple") and inner and not any(isinstance(a, cst.Ellipsis) for a in arguments):
                    return container(items=tuple(inner))
                return container(join_all(inner) if inner else UNKNOWN)
            return UNKNOWN
        qualname = self.model.names.qualname(annotation)
        if qualname is not None:
            if qualname in api.PARAMETER_CLASSES:
                return PARAMETER
            if qualname in api.TENSOR_CLASSES or qualname in api.LEGACY_TENSOR_TYPES:
                return tensor()
            if api.is_module_class(qualname):
                return Value(Kind.MODULE, qualname=qualname)
            if api.is_optimizer_class(qualname):
                return Value(Kind.OPTIMIZER, qualname=qualname)
            if qualname in ("numpy.ndarray", "numpy.typing.NDArray"):
                return ARRAY
            if qualname.rsplit(".", 1)[-1] in _CONTAINER_ANNOTATIONS:
                return container()
            if qualname.startswith(("typing.", "typing_extensions.", "torch.")):
                return UNKNOWN  # Any, TypeVar ..., and torch's own aliases
            return OBJECT  # a class of another module: an instance of it
        if isinstance(annotation, (cst.SimpleString, cst.ConcatenatedString)):
            text = string_value(annotation) or ""
            return tensor() if "Tensor" in text or "Parameter" in text else UNKNOWN
        if isinstance(annotation, cst.Name):
            if annotation.value in _SCALAR_ANNOTATIONS:
                return SCALAR
            if annotation.value in _CONTAINER_ANNOTATIONS:
                return container()
            cls = self.model.local_class(annotation)
            if cls is not None:
                return self.model.instance_of(cls)
        return UNKNOWN

    # -- attributes ------------------------------------------------------------------------
    def _attribute(self, expr: cst.Attribute, off: bool) -> Value:
        qualname = self.model.names.qualname(expr)
        if qualname is not None:
            return SCALAR if qualname in _NAMED_NUMBERS else Value(Kind.OBJECT, qualname=qualname)
        receiver = self.value(expr.value, off)
        attr = expr.attr.value
        if receiver.alternatives:
            return join_all([self._attribute_of(alternative, expr, attr) for alternative in receiver.alternatives])
        return self._attribute_of(receiver, expr, attr)

    def _attribute_of(self, receiver: Value, expr: cst.Attribute, attr: str) -> Value:
        if receiver.kind is Kind.TENSOR:
            return self._tensor_attribute(receiver, expr.value, attr)
        if receiver.kind is Kind.CONTAINER and receiver.qualname == NAMEDTUPLE:
            found = receiver.field(attr)
            if found is not None:
                return found  # ``batch.reward`` of a namedtuple
        if receiver.kind is Kind.CONTAINER and receiver.qualname == api.TENSOR_MAPPING:
            return receiver.element or UNKNOWN  # ``enc.input_ids``
        if receiver.kind is Kind.CONTAINER and receiver.qualname == api.GRAPH_BATCH:
            return receiver.field(attr) or UNKNOWN  # ``data.edge_index`` of a PyG batch
        if receiver.cls is not None and receiver.kind is not Kind.CALLABLE:
            found = self.model.class_attribute(receiver.cls, attr, self)
            if found is not None:
                return found
        if receiver.cls is not None and receiver.kind is Kind.CALLABLE:
            found = self.model.class_attribute(receiver.cls, attr, self, instance=False)
            if found is not None:
                return found
        if receiver.kind is Kind.MODULE:
            if attr in api.PARAMETER_ATTRIBUTES:
                return tensor(Grad.LEAF, f"a parameter (.{attr})")
            if attr in ("training",):
                return SCALAR
            # A module of unknown class (not a library one the file built: ``nn.Conv1d(...).stride``
            # is its own): the file's one module class with ``attr``.
            owner = self.model.module_class_with(attr) if receiver.cls is None and receiver.qualname in _ANY_MODULE else None
            if owner is not None:
                found = self.model.class_attribute(owner, attr, self)
                if found is not None:
                    return found
            return UNKNOWN
        if receiver.kind is Kind.OPTIMIZER:
            if attr == api.OPTIMIZER_PARAM_GROUPS:
                return _param_groups()
            return UNKNOWN
        if receiver.kind in (Kind.CONTAINER, Kind.SCALAR, Kind.ARRAY, Kind.NONE):
            return UNKNOWN if receiver.kind is not Kind.ARRAY or attr not in ("T", "shape") else ARRAY
        if receiver.kind is Kind.UNKNOWN:
            return self._unknown_attribute(expr, attr)
        return UNKNOWN

    def _tensor_attribute(self, receiver: Value, source: cst.BaseExpression, attr: str) -> Value:
        if attr == "data":
            return tensor(Grad.NO, alias=Alias(AliasHow.DATA, source, receiver))
        if attr == "grad":
            return tensor(Grad.NO, "a gradient")
        if attr in api.VIEW_ATTRIBUTES:
            return receiver.with_(alias=_view_alias(receiver, source))
        if attr == "shape":
            return SIZE
        if attr in ("loss", "logits"):  # a model output object's fields (``outputs.loss``)
            return tensor(receiver.grad, "a loss" if attr == "loss" else receiver.why, loss=attr == "loss")
        if attr in api.TENSOR_META_ATTRIBUTES:
            return SCALAR if attr in ("requires_grad", "is_leaf", "ndim", "is_cuda", "is_sparse", "itemsize", "nbytes") else OBJECT
        if attr in api.RETURN_TYPE_FIELDS:  # ``x.max(dim).values``: a field of the named tuple a method returned
            return tensor(Grad.NO, INTEGERS) if attr in api.INTEGER_RETURN_FIELDS else tensor(receiver.grad, receiver.why)
        return UNKNOWN

    def _unknown_attribute(self, expr: cst.Attribute, attr: str) -> Value:
        """An attribute of something the file does not show: guess from the name."""
        if not self.model.names.imports_torch:
            return UNKNOWN
        if naming.is_loader_name(attr):
            return _loader(guessed=True)
        if attr in api.PARAMETER_ATTRIBUTES:
            return tensor(Grad.LEAF, f"a parameter (.{attr})")
        if attr == api.OPTIMIZER_PARAM_GROUPS:
            return _param_groups()
        if attr == "grad":
            return tensor(Grad.NO, "a gradient")
        if naming.is_module_name(attr):
            return Value(Kind.MODULE, guessed=True)
        if naming.is_optimizer_name(attr):
            return Value(Kind.OPTIMIZER, guessed=True)
        owner = self.model.class_with_method(attr)
        if owner is not None:  # ``mt.train_step`` of an untyped ``mt``: the file's one class with that method
            return self.model.class_attribute(owner, attr, self) or UNKNOWN
        return UNKNOWN

    # -- subscripts --------------------------------------------------------------------------
    def _subscript(self, expr: cst.Subscript, off: bool) -> Value:
        receiver = self.value(expr.value, off)
        if receiver.kind is Kind.TENSOR:
            if is_basic_index(expr) or (not receiver.guessed and self._number_index(expr, off)):
                return receiver.with_(alias=_view_alias(receiver, expr.value))
            return tensor(derived(receiver.grad, off), receiver.why, loss=receiver.loss)
        if receiver.kind is Kind.CONTAINER:
            if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
                index = expr.slice[0].slice.value
                key = string_value(index)
                if key is not None:
                    return receiver.field(key) or receiver.element or UNKNOWN
                if isinstance(index, cst.Integer):
                    return item_of(receiver, int(index.value, 0))
                if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus) and isinstance(index.expression, cst.Integer):
                    return item_of(receiver, -int(index.expression.value, 0))
                return receiver.element or UNKNOWN
            return receiver  # a slice of a list is a list
        if receiver.kind is Kind.MODULE:
            # nn.Sequential(...)[0], self.layers[i]; a ParameterList's or ParameterDict's items
            return receiver.element if receiver.element is not None else Value(Kind.MODULE)
        if receiver.kind is Kind.ARRAY:
            return ARRAY
        if receiver.cls is not None and receiver.kind is Kind.OBJECT:
            # ``dataset[i]`` of a class of the file: what its ``__getitem__`` returns
            result = self.item_of_dataset(receiver)
            return without_history(result) if off else result
        return UNKNOWN

    def _number_index(self, expr: cst.Subscript, off: bool) -> bool:
        """``w[self.pad_idx]``, ``w[i, :k]``: every index a slice or a name the file shows to be a
        number (an int attribute, a ``range`` loop target), so indexing returns a view, as ``w[0]``
        does; of a tensor the file shows (not one guessed from a name, a loader's batch)."""
        for element in expr.slice:
            part = element.slice
            if isinstance(part, cst.Slice):
                continue
            index = part.value  # type: ignore[union-attr]
            if not isinstance(index, (cst.Name, cst.Attribute)) or self.value(index, off).kind is not Kind.SCALAR:
                return False  # a literal other than a number is no index of a tensor (``batch["image"]``)
        return True

    # -- arithmetic --------------------------------------------------------------------------
    def _arithmetic(self, left: Value, right: Value, off: bool) -> Value:
        if Kind.TENSOR in (left.kind, right.kind):
            grad, why, loss = combined([left, right], off)
            return tensor(grad, why, loss=loss)
        if left.kind is Kind.CONTAINER and right.kind is Kind.CONTAINER:
            return container(join(left.element or UNKNOWN, right.element or UNKNOWN))
        if left.kind is Kind.SCALAR and right.kind is Kind.SCALAR:
            return SCALAR
        if Kind.ARRAY in (left.kind, right.kind) and Kind.UNKNOWN not in (left.kind, right.kind):
            return ARRAY
        return UNKNOWN

    # -- calls -----------------------------------------------------------------------------------
    def _call(self, call: cst.Call, off: bool) -> Value:
        result = self._call_of(call, off)
        if result.kind is Kind.UNKNOWN and _returns_tensor_mapping(call):
            return _TENSOR_MAPPING  # ``tokenizer(texts, return_tensors="pt")``
        return result

    def _call_of(self, call: cst.Call, off: bool) -> Value:
        func = call.func
        qualname = self.model.names.qualname(func)
        if qualname is not None:
            return self._qualified_call(qualname, call, off)
        if isinstance(func, cst.Attribute):
            receiver = self.value(func.value, off)
            return self._method_call(receiver, func.value, func.attr.value, call, off)
        if isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "type" and len(func.args) == 1 and self.model.is_builtin(func.func):
            return without_alias(self.value(func.args[0].value, off))  # ``type(model)()``: another one like it
        callee = self.value(func, off)
        if isinstance(func, cst.Name) and callee.qualname and callee.qualname.startswith("builtins."):
            return self._builtin_call(func.value, call, off)
        result = self._call_value(callee, call, off)
        if result.kind is Kind.UNKNOWN and isinstance(func, cst.Name) and callee.function is None and callee.cls is None:
            return self._call_by_name(func.value, call, off)
        return result

    def _loss_named(self, binding: Binding) -> Value | None:
        """``loss = model.compute_loss(batch)``: a loss-named variable bound to a call of a
        loss-named callable the file does not show (not ``val_loss = evaluate(...)``, which
        usually returns a number)."""
        if not naming.is_loss_name(binding.name) or not isinstance(binding.value, cst.Call) or binding.path:
            return None
        func = binding.value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if not any(word in name.lower() for word in ("loss", "criterion", "objective")):
            return None
        return tensor(Grad.NO if binding.grad_disabled else Grad.GRAPH, "a loss", loss=True).with_(guessed=True)

    def _module_named(self, binding: Binding) -> Value | None:
        """``model = Pipe(...)``: a module-named variable bound to a call of something the
        file does not show (a class of another library) is a module, as a parameter of that
        name is (a guess)."""
        if not isinstance(binding.value, cst.Call) or binding.path or not naming.is_module_name(binding.name):
            return None
        return Value(Kind.MODULE, guessed=True)

    def _call_value(self, callee: Value, call: cst.Call, off: bool) -> Value:
        """Calling a value: a local function or class, a module, an imported callable."""
        if callee.alternatives:  # ``fn(out, y)`` of a dict of lambdas: what each one returns
            return join_all([self._call_value(alternative, call, off) for alternative in callee.alternatives])
        if callee.function is not None:
            info = self.model.function_info(callee.function)
            result = self._returns_at(info, callee, call, off) if info is not None else UNKNOWN
            return without_history(result) if off else result
        if callee.cls is not None and callee.kind is Kind.CALLABLE:
            fields = self._typed_namedtuple_fields(callee.cls)
            if fields:
                # ``class Transition(NamedTuple)``: its calls make tuples as ``namedtuple``'s do.
                return self._namedtuple_instance(Value(Kind.CALLABLE, qualname=NAMEDTUPLE, fields=fields), call, off).with_(cls=callee.cls)
            return self.model.instance_of(callee.cls)
        dunder_call = self._dunder_call(callee)
        if dunder_call is not None:
            return self._call_value(dunder_call, call, off)  # ``cmvn(spec)``: what its class's ``__call__`` returns
        if callee.kind is Kind.MODULE:
            if callee.guessed and callee.qualname is None and not any(argument.keyword is None for argument in call.args):
                # ``base_encoder(num_classes=128)``: a constructor (not ``module(*args)``, nor a
                # library model a builder made: ``model(input_ids=ids, labels=y)``)
                return Value(Kind.MODULE, guessed=True)
            return self._module_output(callee, call, off)
        if callee.kind is Kind.CALLABLE and callee.qualname == NAMEDTUPLE and callee.fields:
            return self._namedtuple_instance(callee, call, off)
        if callee.qualname is not None:
            return self._qualified_call(callee.qualname, call, off)
        return UNKNOWN

    def _dunder_call(self, value: Value) -> Value | None:
        """The bound ``__call__`` of an instance of a class of the file (not a module: its
        calls run ``forward``), or None."""
        if value.cls is None or value.kind is not Kind.OBJECT:
            return None
        method = self.model.class_attribute(value.cls, "__call__", self)
        return method if method is not None and method.function is not None else None

    def _typed_namedtuple_fields(self, node: cst.ClassDef) -> tuple[tuple[str, Value], ...]:
        """The fields of a ``typing.NamedTuple`` class (its annotated class-level names, in
        order) with their defaults; empty for any other class."""
        if not any(base.keyword is None and self.model.names.qualname(base.value) in _NAMEDTUPLE_BASES for base in node.bases):
            return ()
        fields: list[tuple[str, Value]] = []
        for statement in node.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    annotation = small.annotation.annotation
                    kind = dotted_name(annotation.value if isinstance(annotation, cst.Subscript) else annotation) or ""
                    if kind.rsplit(".", 1)[-1] == "ClassVar":
                        continue  # a class attribute, not a field
                    default = self.value(small.value) if small.value is not None else UNKNOWN
                    fields.append((small.target.value, default))
        return tuple(fields)

    def _namedtuple_instance(self, cls: Value, call: cst.Call, off: bool) -> Value:
        """``Transition(s, a, r)``, ``Transition(*args)``, ``Transition(*zip(*batch))``: a tuple
        whose fields hold what is passed in their positions (or by their names)."""
        values, rest = self._positions(call, off)
        fields: list[tuple[str, Value]] = []
        for index, (name, default) in enumerate(cls.fields):
            given = keyword_arg(call, name)
            if given is not None:
                value = self.value(given.value, off)
            elif index < len(values):
                value = values[index]
            else:
                value = rest if rest is not None else default
            fields.append((name, value))
        items = tuple(value for _, value in fields)
        # Iterating gives any field: unknown unless every field is known.
        return Value(Kind.CONTAINER, element=_strict_join(list(items)), items=items, fields=tuple(fields), qualname=NAMEDTUPLE)

    def returns(self, info: FunctionInfo) -> Value:
        """What calling the function gives, for any call: the join of its returns (a
        generator: a container of what it yields); its return annotation where the body
        does not tell."""
        key = id(info.node)
        found = self._returns.get(key)
        if found is not None:
            return found
        if self._outer is not None and not self._specialises(info.scope):
            return self._outer.returns(info)
        self._returns[key] = UNKNOWN  # a recursive call sees "unknown"
        result = self._join_returns(info)
        returns = info.node.returns if isinstance(info.node, cst.FunctionDef) else None
        if result.kind in (Kind.UNKNOWN, Kind.NONE) and returns is not None:
            # The body does not tell (or is a stub: ``...``, ``raise NotImplementedError``).
            annotated = self.annotation_value(returns.annotation)
            result = annotated if annotated.kind is not Kind.UNKNOWN or result.kind is Kind.UNKNOWN else result
        self._returns[key] = result
        return result

    def _join_returns(self, info: FunctionInfo) -> Value:
        if info.yields:
            return container(join_all([self.value(expr, off) for expr, off in info.yields]))
        if info.returns:
            return join_all([self.value(expr, off) for expr, off in info.returns])
        return NONE

    def _returns_at(self, info: FunctionInfo, callee: Value, call: cst.Call, off: bool) -> Value:
        """What this call of the function gives: its returns evaluated with the values this
        call passes (call-site return inference, as type checkers do for unannotated
        functions), a couple of calls deep; beyond that, :meth:`returns`."""
        general = self.returns(info)
        if self._depth >= _CALL_DEPTH or not self.infer_parameters or not (info.returns or info.yields):
            return general
        key = (id(call), off)
        found = self._calls.get(key)
        if found is not None:
            return found
        site = CallSite(call, off, callee.implicit)
        arguments: dict[int, Value] = {}
        for index, param in enumerate([*info.params, *info.node.params.kwonly_params]):
            binding = next((b for b in info.scope.every.get(param.name.value, ()) if b.node is param), None)
            if binding is None:
                continue
            passed = self._argument(site, info, index if index < len(info.params) else None, binding.name)
            if passed is not None and passed.kind is Kind.UNKNOWN and binding.annotation is not None and self.annotation_value(binding.annotation).kind is not Kind.UNKNOWN:
                continue  # an argument the file does not type leaves an annotated parameter as its annotation says (as _parameter)
            if passed is not None and passed != self.binding_value(binding):
                arguments[id(binding)] = passed
        star = info.node.params.star_arg
        if isinstance(star, cst.Param):  # ``def forward(self, *args)``: what this call passes there
            binding = next((b for b in info.scope.every.get(star.name.value, ()) if b.node is star), None)
            rest = self._rest(site, len(info.params))
            if binding is not None and rest is not None:
                arguments[id(binding)] = rest
        result = general
        if arguments:
            self._calls[key] = general  # recursion through this call sees the general answer
            inner = Evaluator(self.model, True, {**self._arguments, **arguments}, self._depth + 1, outer=self, specialised=self._specialised | {id(info.scope)})
            result = inner.returns(info)
        self._calls[key] = result
        return result

    def _loss_grad(self, call: cst.Call, off: bool) -> Grad:
        """A criterion applied to a model's outputs has their history (loss modules have no
        parameters): none where they are shown to have none (``logits`` computed under
        ``torch.no_grad()``), else a graph. A loss computed from data only
        (``self.compute_loss(batch)``, which runs the model itself) has a graph."""
        if off:
            return Grad.NO
        values = [self.value(argument.value, off) for argument in call.args if argument.keyword is None and not argument.star]
        grad, _, _ = combined(values, off)
        outputs = any(value.kind is Kind.TENSOR and (value.loss or value.why in (MODULE_OUTPUT, FROZEN_OUTPUT)) for value in values)
        return Grad.NO if grad is Grad.NO and outputs else Grad.GRAPH

    def _call_by_name(self, name: str, call: cst.Call, off: bool) -> Value:
        """A call of something the file does not show: ``criterion(out, y)``, ``model(x)``."""
        if not self.model.names.imports_torch:
            return UNKNOWN
        if naming.is_loss_callee(name):
            return tensor(self._loss_grad(call, off), "a loss", loss=True).with_(guessed=True)
        if naming.is_module_name(name):
            return tensor(Grad.NO if off else Grad.GRAPH, MODULE_OUTPUT).with_(guessed=True)
        return UNKNOWN

    def _module_output(self, module: Value, call: cst.Call, off: bool) -> Value:
        if not off and self.model.is_frozen(call.func):
            # A frozen module (``requires_grad_(False)``): its output has its input's history only
            # (``*args`` forwarded by a wrapper's ``forward`` included, where the call shows them).
            values, rest = self._positions(call, off)
            grad, why, _ = combined([*values, *([rest] if rest is not None else [])], off)
            return tensor(grad, why or FROZEN_OUTPUT)
        if module.cls is not None:
            forward = self.model.class_attribute(module.cls, "forward", self)
            if forward is not None and forward.function is not None:
                info = self.model.function_info(forward.function)
                if info is not None:
                    result = self._returns_at(info, forward, call, off)
                    if result.kind in (Kind.TENSOR, Kind.CONTAINER):
                        return without_history(result) if off else result
        if module.loss:
            return tensor(self._loss_grad(call, off), "a loss", loss=True)
        if module.qualname is not None and (module.qualname.rsplit(".", 1)[-1] in api.PARAMETER_FREE_MODULES or api.is_library_transform(module.qualname)):
            grad, why, _ = combined([self.value(argument.value, off) for argument in call.args], off)
            return tensor(grad, why)
        return tensor(Grad.NO if off else Grad.GRAPH, MODULE_OUTPUT).with_(guessed=module.guessed)

    def _qualified_call(self, qualname: str, call: cst.Call, off: bool) -> Value:
        positional = positional_args(call)
        first = positional[0].value if positional else None
        if qualname in api.PARAMETER_CLASSES:
            flag = _requires_grad_flag(call)
            if flag is None and len(positional) > 1:
                flag = positional[1].value
            return tensor(Grad.NO, "an nn.Parameter with requires_grad=False") if is_false(flag) else PARAMETER
        if qualname in api.BUFFER_CLASSES:
            return tensor(Grad.NO, "a buffer")
        if qualname in api.LEGACY_CONSTRUCTORS:
            source = self.value(first, off) if first is not None and len(positional) == 1 else UNKNOWN
            if source.kind is Kind.TENSOR:  # ``torch.FloatTensor(t)``: t itself, history included (AliasBackward0)
                return source.with_(alias=Alias(AliasHow.VIEW, first, source, call))  # type: ignore[arg-type]
            return tensor(Grad.NO)
        short = qualname.rsplit(".", 1)[-1]
        if qualname == f"torch.{short}" and first is not None and (short in api.VALUES_INDICES_ALWAYS or short in api.VALUES_INDICES_WITH_DIM):
            receiver = self.value(first, off)
            if receiver.kind is Kind.TENSOR:
                pair = self._values_and_indices(receiver, short, [argument for argument in call.args if argument.keyword is None][1:], call, off)
                if pair is not None:
                    return pair
        if qualname in api.ALIASING_CONSTRUCTORS:
            source = self.value(first, off) if first is not None else UNKNOWN
            if source.kind is Kind.TENSOR and qualname in ("torch.as_tensor", "torch.asarray"):
                return source.with_(alias=Alias(AliasHow.MAYBE, first, source, call))  # type: ignore[arg-type]
            if source.kind in (Kind.SCALAR, Kind.OBJECT, Kind.NONE) and qualname in ("torch.as_tensor", "torch.asarray"):
                return _SEED  # ``torch.as_tensor(x)`` of what is surely no tensor or array: new memory
            alias = Alias(AliasHow.MAYBE if qualname != "torch.from_numpy" else AliasHow.SAME, first, source, call) if first is not None else None
            return tensor(Grad.NO, alias=alias)
        if qualname.startswith("torch.") and qualname.count(".") == 1 and short in api.CREATION_FUNCTIONS:
            if is_true(_requires_grad_flag(call)):
                return tensor(Grad.LEAF, "requires_grad=True")
            return _SEED  # new memory without history: where paths meet, it gives way (see values.join)
        if qualname == f"torch.{short}" and short in api.INTEGER_RESULT_FUNCTIONS:
            return tensor(Grad.NO, INTEGERS)  # ``torch.multinomial(probs, 1)``, ``torch.argmax(logits, -1)``
        if api.is_tensor_function(qualname):
            values = []
            for argument in call.args:
                if argument.keyword is not None:
                    continue
                if isinstance(argument.value, (cst.List, cst.Tuple)) and not argument.star:
                    # ``torch.cat([q, k])``: each tensor given counts (their join would
                    # forget that one of them requires grad when another surely does not).
                    values.extend(self.value(element.value, off) if not isinstance(element, cst.StarredElement) else element_of(self.value(element.value, off)) for element in argument.value.elements)
                    continue
                value = self.value(argument.value, off)
                values.extend(value.items if value.kind is Kind.CONTAINER and value.items is not None else [element_of(value)] if value.kind is Kind.CONTAINER else [value])
            if api.is_loss_function(qualname):
                grad, _, _ = combined(values, off)
                return tensor(Grad.NO if off or grad is Grad.NO else Grad.GRAPH, "a loss", loss=True)
            grad, why, loss = combined(values, off)
            if qualname in api.MAYBE_ALIAS_FUNCTIONS and first is not None:
                source = self.value(first, off)
                return tensor(derived(source.grad, off), source.why, Alias(AliasHow.MAYBE, first, source, call), loss)
            return tensor(grad, why, loss=loss)
        if qualname in api.PARAMETER_LIST_CLASSES or qualname in api.PARAMETER_DICT_CLASSES:
            return Value(Kind.MODULE, qualname=qualname, element=PARAMETER)  # its items: see _subscript, element_of
        if api.is_module_class(qualname):
            return Value(Kind.MODULE, qualname=qualname, loss=api.is_loss_module_class(qualname))
        if api.is_library_transform(qualname):
            return Value(Kind.MODULE, qualname=qualname)  # called: a tensor with its input's history
        if qualname in api.COMPOSED_TRANSFORMS and isinstance(first, (cst.List, cst.Tuple)) and first.elements:
            last = first.elements[-1]
            composed = self.value(last.value, off) if not isinstance(last, cst.StarredElement) else UNKNOWN
            if composed.kind is Kind.MODULE and composed.qualname is not None and api.is_library_transform(composed.qualname):
                return composed  # the pipeline's result is its last transform's: a tensor
        built = api.library_model(qualname)
        if built is not None:
            return Value(Kind.MODULE, qualname=qualname, guessed=built == "guessed")
        if api.is_distribution_class(qualname):
            # The distribution's tensors are computed from what it is given (``Categorical(probs)``).
            grad, why, _ = combined([self.value(argument.value, off) for argument in call.args], off)
            return Value(Kind.OBJECT, grad, why, qualname=qualname)
        if api.is_optimizer_class(qualname):
            return Value(Kind.OPTIMIZER, qualname=qualname)
        if qualname in api.DATA_LOADER_CLASSES:
            return _loader()
        if qualname in api.PACKED_SEQUENCE_MAKERS:
            return Value(Kind.OBJECT, qualname=api.PACKED_SEQUENCE)  # ``packed.data`` is its field
        if qualname in api.GRAPH_LOADER_CLASSES:
            return Value(Kind.CONTAINER, element=_GRAPH_BATCH, qualname=qualname)
        if qualname in api.LOADING_FUNCTIONS:
            return container(Value(Kind.UNKNOWN, Grad.NO))
        if first is not None and api.is_same_type_image_function(qualname):
            source = self.value(first, off)
            if source.kind is Kind.TENSOR:
                return tensor(derived(source.grad, off), source.why)
        if qualname in api.LIBRARY_TENSOR_FUNCTIONS:
            return tensor(Grad.NO, f"a tensor from {short}()")
        if qualname in api.GRAD_NORM_FUNCTIONS:
            return tensor(Grad.NO, "the gradients' total norm")
        if qualname in api.LIBRARY_TENSOR_AND_NUMBER_FUNCTIONS:
            return container(items=(tensor(Grad.NO, f"a tensor from {short}()"), SCALAR))  # ``waveform, rate = torchaudio.load(path)``
        if qualname in api.GRADIENT_FUNCTIONS:
            # ``grad(outputs, inputs, grad_outputs, retain_graph, create_graph, ...)``
            flag = keyword_arg(call, "create_graph")
            create_graph = flag.value if flag is not None else positional[4] if len(positional) > 4 else None
            if create_graph is None or is_false(create_graph):
                return container(tensor(Grad.NO, "a gradient from autograd.grad"))
            if is_true(create_graph):
                # Gradients with a graph of their own (gradient penalties, MAML's inner step).
                return container(tensor(Grad.NO if off else Grad.GRAPH, "a gradient made with create_graph=True"))
            return container(tensor(Grad.UNKNOWN, "a gradient from autograd.grad"))
        if qualname in api.DEEP_COPY_FUNCTIONS and first is not None:
            return without_alias(self.value(first, off))
        if qualname in api.SHALLOW_COPY_FUNCTIONS and first is not None:
            source = self.value(first, off)
            how = AliasHow.SAME if source.kind is Kind.MODULE else AliasHow.SHALLOW
            return source.with_(alias=Alias(how, first, source))
        if qualname == "functools.partial" and first is not None:
            partial = self.value(first, off)
            preset = [argument for argument in call.args[1:] if argument.keyword is None]
            if partial.function is not None and not any(argument.star for argument in call.args):
                return partial.with_(preset=partial.preset + len(preset))  # its parameters from the partial's call site
            return partial
        if qualname == "collections.OrderedDict" and first is not None:
            return self._dict_of(first, off)
        if qualname == "collections.defaultdict" and first is not None:
            # ``defaultdict(AverageMeter)``: each missing item is an instance of the file's class
            factory = self.value(first, off)
            if factory.cls is not None and factory.kind is Kind.CALLABLE and not factory.alternatives:
                return mapping(self.model.instance_of(factory.cls))
            return UNKNOWN
        if qualname == NAMEDTUPLE:
            names = _field_names(call)
            return Value(Kind.CALLABLE, qualname=NAMEDTUPLE, fields=tuple((name, UNKNOWN) for name in names)) if names else UNKNOWN
        root = qualname.split(".", 1)[0]
        if root in ("numpy", "pandas"):
            return ARRAY
        if qualname == "random.sample" and first is not None:
            # ``random.sample(memory, n)``: a list of elements of what it is given (a replay
            # memory's transitions). ``random.choice``/``choices`` stay numbers: following them
            # too added a false positive on unseen code and found nothing more.
            return container(element_of(self.value(first, off)))
        if root in ("math", "random", "time", "os", "json"):
            return SCALAR if root in ("math", "random") else OBJECT
        if qualname.startswith("torch.") and short in ("no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "device", "Generator"):
            return OBJECT
        return UNKNOWN

    def _dict_of(self, source: cst.BaseExpression, off: bool) -> Value:
        """``dict(x)``: a dict from pairs (``named_parameters()``) or another mapping."""
        value = self.value(source, off)
        if value.kind is not Kind.CONTAINER:
            return container()
        element = value.element or UNKNOWN
        if element.kind is Kind.CONTAINER and element.items is not None and len(element.items) == 2:
            return mapping(element.items[1], element.items[0])
        return value.with_(alias=Alias(AliasHow.SHALLOW, source, value)) if value.alias is not None else mapping(element, value.keys, fields=value.fields)

    def _builtin_call(self, name: str, call: cst.Call, off: bool) -> Value:
        positional = positional_args(call)
        args = [self.value(argument.value, off) for argument in positional]
        first = args[0] if args else UNKNOWN
        if name in _SCALAR_BUILTINS:
            return SCALAR
        if name in _SEQUENCE_BUILTINS:
            return container(element_of(first)) if args else container()
        if name == "dict":
            if args:
                return self._dict_of(positional[0].value, off)
            fields = tuple((argument.keyword.value, self.value(argument.value, off)) for argument in call.args if argument.keyword is not None)
            return mapping(join_all([value for _, value in fields]) if fields else UNKNOWN, SCALAR if fields else UNKNOWN, fields=fields)
        if name == "zip" and any(argument.star == "*" for argument in call.args):
            if len(call.args) == 1:
                # ``zip(*rows)``: the columns of the rows (``zip(*transitions)`` of a replay batch)
                rows = element_of(self.value(call.args[0].value, off))
                if rows.kind is Kind.CONTAINER and rows.items is not None:
                    # Iterating gives any column: unknown unless every field is known.
                    return container(container(_strict_join(list(rows.items))), items=tuple(container(item) for item in rows.items))
                if rows.kind is Kind.CONTAINER:
                    return container(container(rows.element or UNKNOWN))
                return container(container())
            # ``zip(target.parameters(), *[m.parameters() for m in models])``: each tuple holds
            # an element of every iterable (its length is unknown: any position is any column).
            columns: list[Value] = []
            for argument in call.args:
                if argument.keyword is None:
                    iterated = element_of(self.value(argument.value, off))
                    columns.append(element_of(iterated) if argument.star else iterated)  # ``*xss``: each of its iterables
            return container(container(_strict_join(columns)))
        if name == "zip":
            return container(container(items=tuple(element_of(arg) for arg in args)))
        if name == "enumerate":
            return container(container(items=(SCALAR, element_of(first))))
        if name == "filter" and len(args) > 1:
            return container(element_of(args[1]))
        if name == "map" and len(args) > 1:
            # What the function returns, for the elements it is called with (see CallSite.iterated).
            info = self.model.function_info(first.function) if first.function is not None else None
            if info is None and first.qualname is not None and api.is_tensor_function(first.qualname) and not api.is_loss_function(first.qualname):
                # ``map(torch.norm, grads)``: a tensor computed from each element.
                grad, why, loss = combined([element_of(value) for value in args[1:]], off)
                return container(tensor(grad, why, loss=loss))
            return container(self.returns(info) if info is not None else UNKNOWN)
        if name == "next":
            return element_of(first)
        if name in ("sum", "min", "max"):
            values = [element_of(first)] if len(args) == 1 else args
            if name == "sum":
                values.append(SCALAR)
            result = join_all(values)
            return result.with_(grad=derived(result.grad, off), alias=None) if result.kind is Kind.TENSOR else result
        if name in ("abs", "round"):
            return first.with_(alias=None) if first.kind is Kind.TENSOR else first
        if name == "range":
            return container(SCALAR)
        if name == "getattr" and len(positional) >= 2:
            attribute = string_value(positional[1].value)
            if attribute is not None and attribute.isidentifier() and not keyword.iskeyword(attribute):
                return self._attribute(cst.Attribute(value=positional[0].value, attr=cst.Name(attribute)), off)
        if name in ("print", "open", "super", "type", "vars", "setattr", "delattr"):
            return OBJECT
        return UNKNOWN

    # -- methods -----------------------------------------------------------------------------------
    def _method_call(self, receiver: Value, source: cst.BaseExpression, method: str, call: cst.Call, off: bool) -> Value:
        if receiver.alternatives:  # ``cb.on_batch_end(...)`` of callbacks of several classes: each one's
            return join_all([self._method_call(alternative, source, method, call, off) for alternative in receiver.alternatives])
        if receiver.guessed and receiver.kind is not Kind.MODULE and method in _MODULE_ONLY_METHODS:
            receiver = Value(Kind.MODULE, guessed=True)  # what it is used as beats what its name says
        if receiver.kind is Kind.TENSOR:
            return self._tensor_method(receiver, source, method, call, off)
        if receiver.cls is not None:
            found = self.model.class_attribute(receiver.cls, method, self, instance=receiver.kind is not Kind.CALLABLE)
            if found is not None and (found.function is not None or found.kind is Kind.MODULE or (found.qualname == NAMEDTUPLE and found.kind is Kind.CALLABLE) or self._dunder_call(found) is not None):
                return self._call_value(found, call, off)  # a method, a submodule, ``self.Transition(*args)``, ``self.cmvn(spec)``
        if receiver.kind is Kind.MODULE:
            return self._module_method(receiver, source, method, call, off)
        if receiver.kind is Kind.OPTIMIZER:
            if method in api.STATE_DICT_METHODS:
                return _state_dict(source, receiver)
            closure = _closure_argument(call) if method == "step" else None
            if closure is not None:
                # ``opt.step(closure)`` returns what the closure returns (LBFGS: the loss).
                callee = self.value(closure, off)
                info = self.model.function_info(callee.function) if callee.function is not None else None
                if info is not None:
                    result = self.returns(info)
                    return without_history(result) if off else result
                return UNKNOWN
            return NONE if method in ("step", "zero_grad", "add_param_group", "load_state_dict") else UNKNOWN
        if receiver.kind is Kind.CONTAINER:
            return self._container_method(receiver, source, method, call, off)
        if receiver.kind is Kind.ARRAY:
            return SCALAR if method in ("item", "tolist", "sum", "mean") else ARRAY
        if receiver.kind in (Kind.SCALAR, Kind.UNKNOWN) and method in api.CONVERSION_METHODS and isinstance(source, (cst.Comparison, cst.BinaryOperation, cst.UnaryOperation)):
            if self.model.names.imports_torch:
                # ``(pred == y).float()`` of values the file does not type: numbers and arrays
                # have no such method, so the comparison (or arithmetic) was a tensor's.
                made = tensor(Grad.NO, INTEGERS) if isinstance(source, cst.Comparison) else tensor(receiver.grad)
                return self._tensor_method(made, source, method, call, off)
        if receiver.kind is Kind.UNKNOWN:
            return self._unknown_method(receiver, source, method, call, off)
        if receiver.cls is not None and receiver.kind is not Kind.CALLABLE:
            return self._call_by_name(method, call, off)  # an attribute the class does not show
        if receiver.kind is Kind.OBJECT and receiver.qualname is not None and api.is_distribution_class(receiver.qualname):
            return self._distribution_method(receiver, method, call, off)
        if receiver.kind is Kind.CALLABLE and method == "apply" and receiver.qualname is not None:
            return tensor(Grad.NO if off else Grad.GRAPH, "a custom autograd Function's output")
        return UNKNOWN

    def _tensor_method(self, receiver: Value, source: cst.BaseExpression, method: str, call: cst.Call, off: bool) -> Value:
        if method == "numpy":
            return Value(Kind.ARRAY, alias=Alias(AliasHow.MAYBE, source, receiver, call))
        if method in ("item",):
            return SCALAR
        if method in ("tolist",):
            return container(SCALAR)
        if method == "size":
            return SIZE if not call.args else SCALAR
        if method in api.NON_TENSOR_METHODS:
            return NONE if method == "backward" else OBJECT if method.startswith("register") else SCALAR
        if method in api.DETACHING_METHODS:
            return tensor(Grad.NO, alias=Alias(AliasHow.DETACH, source, receiver))
        if method == "detach_":
            return receiver.with_(grad=Grad.NO, why=None)
        if method in api.NEW_TENSOR_METHODS:
            return tensor(Grad.LEAF, "requires_grad=True") if is_true(_requires_grad_flag(call)) else tensor(Grad.NO)
        if method == "requires_grad_":
            flag = call.args[0].value if call.args else None
            return receiver.with_(grad=Grad.NO, why=None) if is_false(flag) else receiver.with_(grad=Grad.LEAF, why="requires_grad_()")
        if method in api.VIEW_METHODS:
            return receiver.with_(alias=_view_alias(receiver, source))
        if method in api.VIEW_SEQUENCE_METHODS:
            return container(receiver.with_(alias=_view_alias(receiver, source)))
        if method in api.INTEGER_RESULT_METHODS:
            alias = Alias(AliasHow.MAYBE, source, receiver, call) if method in api.MAYBE_ALIAS_METHODS else None
            return tensor(Grad.NO, INTEGERS, alias=alias)
        if method in api.MAYBE_ALIAS_METHODS:
            if method == "type" and not call.args:
                return SCALAR  # the type's name
            copy = keyword_arg(call, "copy")
            if copy is not None and is_true(copy.value) or receiver.why == INTEGERS and self._to_floating(method, call) or id(call) in self.model.records.dtype_guarded:
                # an explicit copy, integers (booleans) made floating, or a conversion where a test
                # of the dtype says it differs (``x if x.is_floating_point() else x.float()``):
                # never the receiver's memory
                return tensor(derived(receiver.grad, off), receiver.why if receiver.why != INTEGERS else None, loss=receiver.loss)
            return tensor(derived(receiver.grad, off), receiver.why, Alias(AliasHow.MAYBE, source, receiver, call), receiver.loss)
        pair = self._values_and_indices(receiver, method, [argument for argument in call.args if argument.keyword is None], call, off)
        if pair is not None:
            return pair
        if api.is_inplace_method(method):
            if receiver.grad.required or off:
                return receiver
            # ``torch.zeros(n, d).index_add_(0, idx, h)``: what is written in brings its history
            given = [self.value(argument.value, off) for argument in call.args if argument.keyword is None]
            grad, why, _ = combined([value for value in given if value.kind is Kind.TENSOR], off)
            return receiver.with_(grad=Grad.GRAPH, why=why, seed=False) if grad.required else receiver
        if method == "clone":
            return tensor(derived(receiver.grad, off), receiver.why, loss=receiver.loss)
        if api.returns_tensor(method) or api.is_other_tensor_method(method):
            values = [receiver, *(self.value(argument.value, off) for argument in call.args if argument.keyword is None)]
            grad, why, loss = combined(values, off)
            return tensor(grad, why, loss=loss)
        return UNKNOWN

    def _to_floating(self, method: str, call: cst.Call) -> bool:
        """``.float()``, ``.to(torch.float32)``, ``.to(dtype=torch.half)``: a floating dtype."""
        if method in _FLOAT_CONVERSIONS:
            return True
        if method not in ("to", "type"):
            return False
        given = [argument.value for argument in call.args if argument.keyword is None or argument.keyword.value == "dtype"]
        return any((self.model.names.torch_qualname(value) or "") in api.FLOATING_DTYPES for value in given)

    def _values_and_indices(self, receiver: Value, method: str, rest: list[cst.Arg], call: cst.Call, off: bool) -> Value | None:
        """``x.max(1)``, ``torch.sort(x)``: the named tuple ``(values, indices)``, values with
        the receiver's history, indices integers without any (``_, predicted = torch.max(out, 1)``)."""
        if method not in api.VALUES_INDICES_ALWAYS:
            if method not in api.VALUES_INDICES_WITH_DIM:
                return None
            dim = keyword_arg(call, "dim")
            if dim is None and not (rest and self.value(rest[0].value, off).kind is Kind.SCALAR):
                return None  # ``x.max()``, ``torch.max(a, b)``: a tensor
        values = tensor(derived(receiver.grad, off), receiver.why, loss=receiver.loss)
        indices = tensor(Grad.NO, INTEGERS)
        return Value(Kind.CONTAINER, element=join(values, indices, numeric=False), items=(values, indices), fields=(("values", values), ("indices", indices)), qualname=NAMEDTUPLE)

    def _distribution_method(self, receiver: Value, method: str, call: cst.Call, off: bool) -> Value:
        """``dist.log_prob(a)``, ``dist.entropy()``: tensors with the history of the
        distribution's parameters (and the arguments); ``dist.sample()``: none."""
        if method in api.DISTRIBUTION_SAMPLING_METHODS:
            return tensor(Grad.NO)
        if method in api.DISTRIBUTION_COMPUTING_METHODS:
            values = [tensor(receiver.grad, receiver.why), *(self.value(argument.value, off) for argument in call.args if argument.keyword is None)]
            grad, why, _ = combined(values, off)
            return tensor(grad, why)
        return UNKNOWN

    def _module_method(self, receiver: Value, source: cst.BaseExpression, method: str, call: cst.Call, off: bool) -> Value:
        if receiver.element is not None and receiver.qualname in api.PARAMETER_DICT_CLASSES:
            if method == "values":
                return container(receiver.element)
            if method == "items":
                return container(container(items=(SCALAR, receiver.element)))
        if method in api.PARAMETER_ITERATORS:
            return container(tensor(Grad.LEAF, f"an element of .{method}()").with_(owner=source))
        if method in api.NAMED_PARAMETER_ITERATORS:
            return container(container(items=(SCALAR, tensor(Grad.LEAF, f"an element of .{method}()").with_(owner=source))))
        if method in api.BUFFER_ITERATORS:
            return container(tensor(Grad.NO, "a buffer"))
        if method in api.NAMED_BUFFER_ITERATORS:
            return container(container(items=(SCALAR, tensor(Grad.NO, "a buffer"))))
        if method in api.SUBMODULE_ITERATORS:
            return container(Value(Kind.MODULE))
        if method in api.NAMED_SUBMODULE_ITERATORS:
            return container(container(items=(SCALAR, Value(Kind.MODULE))))
        if method in api.STATE_DICT_METHODS:
            return _state_dict(source, receiver)
        if method in api.MODULE_SELF_METHODS:
            return receiver
        if method == "forward":
            return self._module_output(receiver, call, off)
        if method in api.LOAD_STATE_METHODS or method == "zero_grad":
            return OBJECT
        if naming.is_model_method(method):  # ``model.encode(x)``, ``vae.decode(z)``
            arguments = [self.value(argument.value, off) for argument in call.args if argument.keyword is None]
            if receiver.guessed and arguments and all(_plain_data(argument) for argument in arguments):
                # A "model" only by its name, given text and numbers: a tokenizer
                # (``self.sp_model.encode(text)``) as likely as a network.
                return UNKNOWN
            return tensor(Grad.NO if off else Grad.GRAPH, MODULE_OUTPUT).with_(guessed=True)
        # ``model.neg_log_likelihood(x, y)`` of a module of unknown class: the file's one module class with it
        called = self._guessed_method_call(self.model.module_class_with(method) if receiver.cls is None else None, method, call, off)
        return called if called is not None else self._call_by_name(method, call, off)  # ``model.encoder(x)``: a submodule

    def _container_method(self, receiver: Value, source: cst.BaseExpression, method: str, call: cst.Call, off: bool) -> Value:
        element = receiver.element or UNKNOWN
        if method == "items":
            return container(container(items=(receiver.keys or UNKNOWN, element)))
        if method == "values":
            return container(element)
        if method == "keys":
            return container(receiver.keys or UNKNOWN)
        if method in ("get", "pop", "popleft", "setdefault", "popitem"):
            positional = positional_args(call)
            key = string_value(positional[0].value) if positional else None
            return (receiver.field(key) if key is not None else None) or element
        if method == "copy":
            return receiver.with_(alias=Alias(AliasHow.SHALLOW, source, receiver))
        if method == "to" and receiver.qualname in (api.TENSOR_MAPPING, api.GRAPH_BATCH):
            return receiver  # ``BatchEncoding.to(device)``, ``Batch.to(device)``: moves its tensors, returns itself
        if method in ("index", "count"):
            return SCALAR
        if method in ("append", "extend", "insert", "add", "update", "clear", "appendleft", "remove", "sort", "reverse"):
            return NONE
        return UNKNOWN

    def _guessed_method_call(self, owner: cst.ClassDef | None, method: str, call: cst.Call, off: bool) -> Value | None:
        """What calling ``method`` of an instance of ``owner`` (a class guessed for a receiver
        the file does not type) gives; None without such a class or method."""
        found = self.model.class_attribute(owner, method, self) if owner is not None else None
        return self._call_value(found, call, off) if found is not None and found.function is not None else None

    def _unknown_method(self, receiver: Value, source: cst.BaseExpression, method: str, call: cst.Call, off: bool) -> Value:
        """A method of something the file does not show: guess from the method's name."""
        if not self.model.names.imports_torch:
            return UNKNOWN
        if method in api.TENSOR_ONLY_METHODS or any(argument.keyword is not None and argument.keyword.value in api.TENSOR_ONLY_KEYWORDS for argument in call.args):
            return self._tensor_method(tensor(receiver.grad), source, method, call, off)
        if method == "requires_grad_" and _cloned(source):
            # ``x.clone().requires_grad_()``: only tensors and modules switch grad, and a module has no clone()
            return self._tensor_method(tensor(receiver.grad), source, method, call, off)
        if method in _MODULE_ONLY_METHODS - api.STATE_DICT_METHODS - api.LOAD_STATE_METHODS:
            return self._module_method(Value(Kind.MODULE), source, method, call, off)
        if method in api.STATE_DICT_METHODS:
            name = dotted_name(source) or ""
            last = name.rsplit(".", 1)[-1]
            if naming.is_optimizer_name(last):
                return _state_dict(source, Value(Kind.OPTIMIZER))
            if naming.is_module_name(last) or last == "self":
                return _state_dict(source, Value(Kind.MODULE))
            return _state_dict(source, UNKNOWN)
        if method == "forward" or (method in ("__call__",)):
            return tensor(Grad.NO if off else Grad.GRAPH, MODULE_OUTPUT).with_(guessed=True)
        # ``mt.snapshot_student()`` of an untyped ``mt``: the file's one class with that method
        called = self._guessed_method_call(self.model.class_with_method(method), method, call, off)
        return called if called is not None else self._call_by_name(method, call, off)  # ``self.model(x)``, ``self.criterion(out, y)``


# -- helpers ----------------------------------------------------------------------------------

_SEED = tensor(Grad.NO).with_(seed=True)
_TENSOR_MAPPING = Value(Kind.CONTAINER, element=tensor(Grad.NO, "a tensor a tokenizer returned"), keys=SCALAR, qualname=api.TENSOR_MAPPING)
_GRAPH_BATCH = Value(
    Kind.CONTAINER, qualname=api.GRAPH_BATCH, fields=tuple((name, tensor(Grad.NO, "a tensor of a graph batch")) for name in sorted(api.GRAPH_TENSOR_ATTRIBUTES))
)


def _cloned(expr: cst.BaseExpression) -> bool:
    """``x.clone()`` (``x.detach()`` is a tensor already: ``detach`` is a tensor-only method)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "clone"


def _returns_tensor_mapping(call: cst.Call) -> bool:
    """``tokenizer(texts, return_tensors="pt")``: a call of another library that returns a dict of tensors."""
    keyword, wanted = api.TENSOR_MAPPING_KEYWORD
    argument = keyword_arg(call, keyword)
    return argument is not None and string_value(argument.value) == wanted


def _plain_data(value: Value, depth: int = 0) -> bool:
    """Numbers and strings, or containers of them only: no tensor anywhere inside."""
    if value.kind in (Kind.SCALAR, Kind.NONE):
        return True
    if value.kind is not Kind.CONTAINER or depth > 4:
        return False
    held = [v for v in (value.element, *(value.items or ()), *(v for _, v in value.fields)) if v is not None]
    return bool(held) and all(_plain_data(v, depth + 1) for v in held)


def _strict_join(values: list[Value]) -> Value:
    """The join of ``values``, unknown where one of them is (not absorbed as joins do)."""
    if not values or any(value.kind is Kind.UNKNOWN for value in values):
        return UNKNOWN
    return join_all(values, numeric=False)


def _field_names(call: cst.Call) -> tuple[str, ...]:
    """The field names of ``namedtuple("T", ("a", "b"))`` / ``namedtuple("T", "a b")``; empty
    when they are not literals."""
    positional = positional_args(call)
    given = keyword_arg(call, "field_names")
    spec = given.value if given is not None else positional[1].value if len(positional) > 1 else None
    if isinstance(spec, (cst.List, cst.Tuple)):
        names = [string_value(element.value) if not isinstance(element, cst.StarredElement) else None for element in spec.elements]
        return tuple(names) if all(name is not None and name.isidentifier() for name in names) else ()  # type: ignore[misc]
    text = string_value(spec) if spec is not None else None
    if text is None:
        return ()
    names = text.replace(",", " ").split()
    return tuple(names) if all(name.isidentifier() for name in names) else ()


def _with_grad_off(binding: Binding) -> Binding:
    """The same binding, made with grad off (its function only runs under no_grad)."""
    return replace(binding, grad_disabled=True)


def _view_alias(receiver: Value, source: cst.BaseExpression) -> Alias:
    """A view of ``receiver`` shares what it shares (a view of ``x.detach()`` is ``x``'s memory)."""
    if receiver.alias is not None:
        return receiver.alias  # a view shares whatever its receiver shares (a detached source, a maybe-copy)
    return Alias(AliasHow.VIEW, source, receiver)


def _state_dict(source: cst.BaseExpression, owner: Value) -> Value:
    alias = Alias(AliasHow.STATE, source, owner)
    return Value(Kind.CONTAINER, element=tensor(Grad.NO, "a state_dict entry", alias), keys=SCALAR, alias=alias)


def _item_at(value: Value, nested: int) -> Value | None:
    """What the container ``value`` holds ``nested`` levels down (``d[k]`` of ``d``: 1)."""
    for _ in range(nested):
        if value.kind is not Kind.CONTAINER or value.element is None:
            return None
        value = value.element
    return value


def _held_object(value: Value, nested: int) -> bool:
    """Whether what ``d[k].update(v)`` calls a method of is an instance of a class of the file:
    the call is that class's method, not a container's ``update``/``append``."""
    item = _item_at(value, nested)
    return item is not None and item.cls is not None and item.kind in (Kind.OBJECT, Kind.MODULE)


def _receives_item_store(value: Value, nested: int) -> bool:
    """Whether what ``d[a][b] = v`` stores into (``d[a]``: ``nested`` 1) is a tensor or an
    array: the store changes its values, not the container."""
    item = _item_at(value, nested)
    return item is not None and item.kind in (Kind.TENSOR, Kind.ARRAY)


def _loader(guessed: bool = False) -> Value:
    """A DataLoader: it yields batches of tensors (or tuples, lists, dicts of them)."""
    batch = tensor(Grad.NO).with_(guessed=guessed)
    return Value(Kind.CONTAINER, element=batch, qualname=api.DATA_LOADER, guessed=guessed)


def _param_groups() -> Value:
    params = container(tensor(Grad.LEAF, "a parameter of an optimizer's param_groups"))
    return container(Value(Kind.CONTAINER, element=UNKNOWN, fields=(("params", params),)))


def _narrow(value: Value, narrowed: Value) -> Value:
    """``value`` where an ``isinstance`` test says it is ``narrowed``."""
    if value.kind is narrowed.kind and not value.guessed:
        return value  # the test says nothing new (the bound value knows more)
    if narrowed.kind is Kind.TENSOR:
        return tensor(value.grad, value.why, value.alias)
    return narrowed


def _named_like(name: str) -> Value | None:
    """What a name the file does not type says it is: ``model`` a module, ``train_loader`` a
    DataLoader (guesses, marked as such)."""
    if naming.is_module_name(name):
        return Value(Kind.MODULE, guessed=True)
    if naming.is_modules_name(name):
        return container(Value(Kind.MODULE, guessed=True)).with_(guessed=True)
    if naming.is_loader_name(name):
        return _loader(guessed=True)
    if naming.is_optimizer_name(name):
        return Value(Kind.OPTIMIZER, guessed=True)
    return None


def _hook_role_value(role: str) -> Value:
    if role == "module":
        return Value(Kind.MODULE)
    if role == "output":
        output = tensor(Grad.GRAPH, "a module output (forward hook)")
        return output
    if role == "inputs":
        return container(tensor(Grad.UNKNOWN, "a module input (forward hook)"))
    if role in ("grad_inputs", "grad_outputs"):
        return container(tensor(Grad.NO, "a gradient"))
    if role == "grad":
        return tensor(Grad.NO, "a gradient")
    if role == "parameter":
        return PARAMETER
    return UNKNOWN


def _closure_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The closure given to ``optimizer.step(closure)`` / ``step(closure=f)``, if any."""
    positional = positional_args(call)
    if positional:
        return positional[0].value
    keyword = keyword_arg(call, "closure")
    return keyword.value if keyword is not None else None
