"""The semantic model of one module: what the rules ask, answered in one place.

Built from pass 1's :class:`~torchcopy_lint.analysis.binder.Records` once the whole
module has been walked, so every question sees complete facts: ``self.params`` set in
``__init__`` is known in a method above it, a hook registered at the end of the file
gives its callback's parameters their values, a helper's parameters get the values its
call sites pass. Checkers ask :meth:`value` (or the shortcuts on ``FileContext``)
instead of re-deriving anything.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis import grad_mode, naming
from torchcopy_lint.analysis import torch_api as api
from torchcopy_lint.analysis.binder import AFTER_SKIPPED, ELEMENT, TENSOR_PREDICATE, HookRegistration, RawCall, Records, by_name
from torchcopy_lint.analysis.bindings import Addition, AttributeSite, Binding, BindingKind, CallSite, ClassInfo, FunctionInfo, Scope, ScopeKind
from torchcopy_lint.analysis.cst_helpers import dotted_name, keyword_arg, positional_args, string_value
from torchcopy_lint.analysis.evaluate import Evaluator
from torchcopy_lint.analysis.torch_names import TorchNames
from torchcopy_lint.analysis.values import ARRAY, OBJECT, SCALAR, UNKNOWN, AliasHow, Grad, Kind, Value, container, item_of, join_all, tensor

_BUILTIN_NAMES = frozenset(dir(builtins))
# Builtins that call a function they are handed with the elements of an iterable.
_ITERATING_BUILTINS = frozenset({"builtins.map", "builtins.filter", "builtins.sorted", "builtins.min", "builtins.max"})
_DISPATCH_DEPTH = 3  # names followed back (a parameter to its arguments, a name to its value) from a dispatched name to its strings
_DISPATCH_STRINGS = 32  # strings a dispatched name may be, at most
_DISPATCH_STEPS = 256  # expressions looked at for one dispatched name, at most
_BUILTIN_BASES = frozenset({"object", "dict", "list", "tuple", "set", "str", "int", "float", "Exception", "BaseException", "ValueError", "RuntimeError", "TypeError", "KeyError", "NamedTuple"})


def _products(parts: list[list[tuple[str, CallSite | None]]]) -> list[tuple[str, CallSite | None]]:
    """The strings made of one string of each part, in order (each with the first choosing
    call among its parts'); none when a part has none; at most a few dozen."""
    found: list[tuple[str, CallSite | None]] = [("", None)]
    for part in parts:
        found = [(text + more, via or other) for text, via in found for more, other in part][:_DISPATCH_STRINGS]
    return found


# AttributeSite.how of ``self.attr.requires_grad_(flag)`` / ``self.attr.requires_grad = flag`` (binder._switch_attribute)
_GRAD_SWITCHES = frozenset({"grad-on", "grad-off"})
_SWITCHED = {"grad-on": "a tensor whose requires_grad was switched on", "grad-off": "a tensor whose requires_grad was switched off"}


class SemanticModel:
    def __init__(self, records: Records) -> None:
        self.records = records
        self.names = TorchNames(self.bindings_of)
        self.names.imports_torch = records.imports_torch
        self._scope_functions = {id(info.scope): info for info in records.functions.values()}
        self._class_kinds: dict[int, Kind] = {}
        self._trains: dict[int, bool] = {}
        self._frozen: set[object] | None = None  # keys of modules the file freezes (see is_frozen)
        self._training_summaries: dict[int, tuple[bool, list[cst.FunctionDef | cst.Lambda]]] = {}
        self._written_arguments: dict[int, frozenset[int]] = {}  # id(function) -> parameters it writes in place
        self._free_names: dict[int, frozenset[str]] = {}  # id(function) -> names it reads from outside it
        self._kept_arguments: dict[int, frozenset[int]] = {}  # id(function) -> parameters it keeps (see kept_arguments)
        self._without_grad: dict[int, bool] = {}
        self._framework_without_grad: dict[int, bool] = {}  # id(function) -> a framework calls it under no_grad
        self._class_chains: dict[int, list[ClassInfo]] = {}  # id(class) -> it and its local bases
        self._receiver_classes: dict[int, cst.ClassDef | None] = {}
        self._classes_by_word: dict[str, list[cst.ClassDef]] | None = None
        self._module_classes_by_attribute: dict[str, list[cst.ClassDef]] | None = None  # see module_class_with
        self._methods_by_name: dict[str, list[FunctionInfo]] | None = None
        self._dispatched: dict[int, list[tuple[FunctionInfo, CallSite]]] = {}
        self._used_as_tensors: set[int] | None = None  # ids of bindings a tensor-only method is called on
        self._used_as_leaves: set[int] | None = None  # ids of bindings whose ``.grad`` the file reads or sets
        self._used_as_modules: set[int] | None = None  # ids of bindings a module-only method is called on
        self._differentiated: set[int] | None = None  # ids of bindings ``backward()`` is called on
        self._type_tested_ids: set[int] | None = None  # ids of bindings given to ``isinstance``/``type``
        self._dispatch_budget = 0
        self.evaluator = Evaluator(self)
        self._build_indexes()
        self._evaluate_in_source_order()

    def _evaluate_in_source_order(self) -> None:
        """Evaluate every binding of each function (or module) holding a loop whose next
        iteration sees its own bindings, in source order, parameters first, before any
        rule asks. Such a loop makes cycles of bindings (``parts = parts + [h.mean()]``),
        and the evaluator cuts a cycle where it re-enters it (see :mod:`.memo`), so what a
        value inside it is depends on where the cycle was entered. Entered in one fixed
        order, those answers do not depend on which rules run or what they ask first.
        (Cycles through ``self.x`` or call-site parameters elsewhere are not covered.)"""
        scopes = {id(scope) for scope in self.records.cyclic_scopes}
        if scopes:
            for binding in self.records.bindings:  # in source order
                if id(binding.scope) in scopes:
                    self.evaluator.binding_value(binding)

    # -- resolution ----------------------------------------------------------------------
    @property
    def module_scope(self) -> Scope:
        assert self.records.module_scope is not None
        return self.records.module_scope

    def bindings_of(self, name: cst.Name) -> tuple[Binding, ...]:
        """The bindings that may reach this Name node (empty for builtins and unknowns)."""
        return self.records.resolution.get(id(name), ())

    def caller_owned(self, binding: Binding) -> cst.Name | None:
        """The function's parameter a binding holds (part of) what the caller passed through:
        the parameter itself, or a loop or comprehension target over what is read from one
        (``for k, v in state.items()``, ``for name, layer in model.named_modules()``: what the
        caller's object holds); None otherwise. Not the elements of the parameter itself
        (``for batch in loader``: an iterable may make each element afresh)."""
        if binding.kind is BindingKind.PARAMETER:
            node = binding.node
            return node.name if isinstance(node, cst.Param) else None
        if binding.kind not in (BindingKind.LOOP_TARGET, BindingKind.COMPREHENSION_TARGET):
            return None
        iterable = binding.value
        if not isinstance(iterable, (cst.Attribute, cst.Subscript, cst.Call)):
            return None
        while isinstance(iterable, (cst.Attribute, cst.Subscript, cst.Call)):
            iterable = iterable.func if isinstance(iterable, cst.Call) else iterable.value
        if isinstance(iterable, cst.Name) and any(other.kind is BindingKind.PARAMETER for other in self.bindings_of(iterable)):
            return iterable
        return None

    def callers_element(self, binding: Binding) -> bool:
        """Whether a binding is a loop target over a parameter that holds a list, tuple or dict
        (``for g in graphs``): the elements are the caller's objects. Not a DataLoader's (its
        qualname says what it is) nor what :meth:`caller_owned` leaves out for not knowing the
        iterable: an iterable may make each element afresh."""
        iterable = binding.value
        if binding.kind is not BindingKind.LOOP_TARGET or not isinstance(iterable, cst.Name):
            return False
        if not any(other.kind is BindingKind.PARAMETER for other in self.bindings_of(iterable)):
            return False
        held = self.value(iterable)
        return held.kind is Kind.CONTAINER and held.qualname is None

    def used_as_tensor(self, binding: Binding) -> bool:
        """Whether the file calls a method only tensors have on this binding's name
        (``x.detach()``, ``x.new_zeros(...)``, ``x.sum(dim=1)``), or gives it as the input of a
        ``torch.nn.functional`` function (``F.one_hot(targets, n)``: every one takes a tensor
        first): a value it does not type otherwise is a tensor, as its use says (unless the
        file tests its type: then it may be something else where it is not used so)."""
        if self._used_as_tensors is None:
            inputs = [name for func, name in self.records.first_arguments if (self.names.torch_qualname(func) or "").startswith(api.FUNCTIONAL_NAMESPACE)]
            self._used_as_tensors = self._binding_ids([*self.records.tensor_receivers, *inputs]) - self._type_tested()
        return id(binding) in self._used_as_tensors

    def used_as_module(self, binding: Binding) -> bool:
        """Whether the file calls a method only modules have on this binding's name (``m.eval()``
        of ``for m in members``, ``net.parameters()``): a value it does not type otherwise is a
        module, as its use says (unless the file tests its type)."""
        if self._used_as_modules is None:
            self._used_as_modules = self._binding_ids(self.records.module_receivers) - self._type_tested()
        return id(binding) in self._used_as_modules

    def used_as_leaf(self, binding: Binding) -> bool:
        """Whether the file reads (or sets) this binding's ``.grad``: autograd fills it only for
        a leaf that requires grad (``for p in params: p.add_(p.grad, alpha=-lr)``)."""
        if self._used_as_leaves is None:
            self._used_as_leaves = self._binding_ids(self.records.grad_owners) - self._type_tested()
        return id(binding) in self._used_as_leaves

    def close(self) -> None:
        """Break the model's reference cycles (a binding and its scope, a function and its
        call sites, the evaluator and this model) once no question is left to ask, so that
        reference counting frees it and the LibCST nodes it holds (see FileContext.close)."""
        records = self.records
        for holders in (records.scopes.values(), records.functions.values(), records.classes.values(), records.bindings):
            for holder in holders:
                holder.__dict__.clear()
        records.__dict__.clear()
        self.__dict__.clear()

    def differentiated(self, binding: Binding) -> bool:
        """Whether the file calls ``backward()`` on this binding's name (``loss.backward()``):
        only a tensor with autograd history can be differentiated."""
        if self._differentiated is None:
            self._differentiated = self._binding_ids(self.records.differentiated) - self._type_tested()
        return id(binding) in self._differentiated

    def _type_tested(self) -> set[int]:
        """Bindings the file tests the type of (``isinstance(x, list)``, ``type(x) is list``):
        a value that may be one of several types, which one use does not decide."""
        if self._type_tested_ids is None:
            self._type_tested_ids = self._binding_ids(self.records.type_tested)
        return self._type_tested_ids

    def _binding_ids(self, names: list[cst.Name]) -> set[int]:
        return {id(found) for name in names for found in self.bindings_of(name)}

    def same_object(self, bindings: tuple[Binding, ...]) -> tuple[Binding, ...]:
        """``bindings`` and, through ``x += ...`` (which changes a tensor, array or list in
        place), the bindings each one updated: the bindings of one object."""
        found: list[Binding] = []
        pending = list(bindings)
        while pending:
            binding = pending.pop()
            if binding not in found:
                found.append(binding)
                if binding.kind is BindingKind.AUGMENTED:
                    pending.extend(binding.previous)
        return tuple(found)

    def top_statement_of(self, name: cst.Name) -> cst.CSTNode | None:
        """The module-level statement holding a Name node that reads a local of some function
        (where a finding about it is positioned)."""
        for binding in self.bindings_of(name):
            scope: Scope | None = binding.scope
            while scope is not None:
                top = self.records.tops.get(id(scope.node))
                if top is not None:
                    return top
                scope = scope.parent
        return None

    def binding_made_by(self, target: cst.Name) -> Binding | None:
        """The binding an assignment target (``x`` in ``x = ...``) makes."""
        return self.records.targets.get(id(target))

    def is_builtin(self, name: cst.Name) -> bool:
        """A Python builtin (``len``, ``list``), not shadowed by anything the module binds."""
        return name.value in _BUILTIN_NAMES and not self.bindings_of(name)

    def wrappers_of(self, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        """Decorators applied by hand: ``f = torch.no_grad()(f)`` gives ``torch.no_grad()``
        (each rebinding of the function's name to a call of something on the function)."""
        scope = self.scope_of(function)
        outer = scope.parent if scope is not None else None
        if outer is None:
            return []
        found = []
        for binding in outer.every.get(function.name.value, ()):
            value = binding.value
            if binding.kind is not BindingKind.ASSIGNMENT or binding.path or not isinstance(value, cst.Call) or len(value.args) != 1:
                continue
            argument = value.args[0].value
            if isinstance(argument, cst.Name) and any(reaching.node is function for reaching in self.bindings_of(argument)):
                found.append(value.func)
        return found

    def scope_of(self, node: cst.CSTNode) -> Scope | None:
        """The scope ``node`` (a module, class, function, lambda or comprehension) opens."""
        return self.records.scopes.get(id(node))

    def function_info(self, node: cst.CSTNode) -> FunctionInfo | None:
        return self.records.functions.get(id(node))

    def function_of_scope(self, scope: Scope) -> FunctionInfo | None:
        return self._scope_functions.get(id(scope))

    def class_info(self, node: cst.CSTNode) -> ClassInfo | None:
        return self.records.classes.get(id(node))

    def local_class(self, expr: cst.BaseExpression) -> cst.ClassDef | None:
        """The class of this module that ``expr`` names, if any."""
        if isinstance(expr, cst.Name):
            for binding in self.bindings_of(expr):
                if binding.kind is BindingKind.CLASS and isinstance(binding.node, cst.ClassDef):
                    return binding.node
        return None

    def module_class_with(self, attr: str) -> cst.ClassDef | None:
        """The one ``nn.Module`` subclass of this module that sets ``self.<attr>`` or defines a
        method ``attr``: what ``model.attr`` reads where ``model`` is known to be a module but
        not which (``def sample(model): z = model.prior.sample(...)``, ``model`` only ever a
        ``RealNVP``). None when no such class, or several, define it."""
        if self._module_classes_by_attribute is None:
            index: dict[str, list[cst.ClassDef]] = {}
            for info in self.records.classes.values():
                if self.class_kind(info.node) is Kind.MODULE:
                    for name in {*info.attributes, *info.methods}:
                        index.setdefault(name, []).append(info.node)
            self._module_classes_by_attribute = index
        found = self._module_classes_by_attribute.get(attr, [])
        return found[0] if len(found) == 1 else None

    def class_with_method(self, name: str) -> cst.ClassDef | None:
        """The one class of this module that defines a method ``name``, for a distinctive name
        (:func:`naming.is_distinctive_method`): what ``obj.name(...)`` calls where the file does
        not show what ``obj`` is (``def run(mt, loader): mt.snapshot_student()``, ``mt`` only
        ever a ``MeanTeacher``). None when no class, or several, define it."""
        if not naming.is_distinctive_method(name):
            return None
        found = {id(info.cls.node): info.cls.node for info in self._methods_named(name) if info.cls is not None}
        return next(iter(found.values())) if len(found) == 1 else None

    def class_named_like(self, name: str) -> cst.ClassDef | None:
        """The one class of this module whose name ends with the variable's last word
        (``buffer`` and ``RolloutBuffer``, ``replay_memory`` and ``ReplayMemory``, ``train_ds``
        and ``ImageTextDataset``: :func:`naming.class_word`)."""
        if self._classes_by_word is None:
            self._classes_by_word = {}
            for info in self.records.classes.values():
                last = naming.words(info.name)[-1].lower() if naming.words(info.name) else ""
                self._classes_by_word.setdefault(last, []).append(info.node)
        word = naming.class_word(name)
        found = self._classes_by_word.get(word, []) if word is not None else []
        return found[0] if len(found) == 1 else None

    def class_of_elements_named_like(self, name: str) -> cst.ClassDef | None:
        """The one class of this module whose last word is the singular of the variable's
        (``graphs`` and ``Graph``, ``episodes`` and ``Episode``): a collection of its instances."""
        word = naming.class_word(name)
        if word is None or len(word) < 4 or not word.endswith("s") or self.class_named_like(name) is not None:
            return None
        for singular in (word[:-1], word[:-2]) if word.endswith("es") else (word[:-1],):
            found = self.class_named_like(singular)
            if found is not None:
                return found
        return None

    def narrowing(self, name: cst.Name) -> Value | None:
        """What a name is where an ``isinstance`` test (or ``torch.is_tensor``) guards it: a
        tensor for ``isinstance(x, torch.Tensor)``, a module for ``isinstance(m, nn.Conv2d)``,
        something that is no tensor for ``isinstance(x, (int, SymInt))`` or the else branch
        of a tensor test; None where the test says nothing."""
        found = self.records.narrowed.get(id(name))
        if found is None or ELEMENT in found or found[0] == AFTER_SKIPPED:  # type: ignore[operator,index]
            return None
        return self._narrowed(*found)  # type: ignore[misc]

    def narrowing_of_bindings(self, name: cst.Name) -> tuple[frozenset[int], Value] | None:
        """``val`` after ``if torch.is_tensor(val): val = val.item()``: the bindings (by id)
        that reach it only where the test was false, and what they are there (no tensor)."""
        found = self.records.narrowed.get(id(name))
        if found is None or found[0] != AFTER_SKIPPED:  # type: ignore[index]
            return None
        _, ids, kind = found  # type: ignore[misc]
        narrowed = self._narrowed(*kind)
        return (ids, narrowed) if narrowed is not None else None

    def narrowed_element(self, name: cst.Name) -> Value | None:
        """What a container's elements are where ``isinstance(xs[0], T)`` guards ``xs``
        (the test of one element speaks for all: elements are joined anyway)."""
        found = self.records.narrowed.get(id(name))
        if found is None or found[0] == AFTER_SKIPPED or ELEMENT not in found:  # type: ignore[operator,index]
            return None
        return self._narrowed(*found[:2])  # type: ignore[index]

    def _narrowed(self, sense: str, classes: object) -> Value | None:
        if classes == TENSOR_PREDICATE:
            return tensor() if sense == "is" else OBJECT
        classes = self._class_tuple(classes)  # type: ignore[arg-type]
        candidates = [element.value for element in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        verdicts = [self._tensor_class(candidate) for candidate in candidates]
        if verdicts and all(verdict is True for verdict in verdicts):  # (torch.Tensor, PackedSequence) does not
            return tensor() if sense == "is" else OBJECT
        if sense == "is" and verdicts and all(verdict is False for verdict in verdicts):
            return join_all([self._instance_value(candidate) for candidate in candidates])
        return None

    def _class_tuple(self, classes: cst.BaseExpression) -> cst.BaseExpression:
        """What a name given to ``isinstance`` is bound to, when it is bound once to a tuple
        of classes (``PRUNABLE = (nn.Conv2d, nn.Linear)``); ``classes`` itself otherwise."""
        if isinstance(classes, cst.Name):
            bindings = self.bindings_of(classes)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGNMENT and not bindings[0].path and isinstance(bindings[0].value, cst.Tuple):
                return bindings[0].value
        return classes

    def _instance_value(self, cls: cst.BaseExpression) -> Value:
        """An instance of a class that is no tensor class (``isinstance(m, nn.Linear)``)."""
        qualname = self.names.qualname(cls)
        if qualname is not None:
            if api.is_module_class(qualname):
                return Value(Kind.MODULE, qualname=qualname)
            if api.is_optimizer_class(qualname):
                return Value(Kind.OPTIMIZER, qualname=qualname)
            if qualname in ("numpy.ndarray", "numpy.generic"):
                return ARRAY
            return OBJECT
        local = self.local_class(cls)
        if local is not None:
            return self.instance_of(local)
        if isinstance(cls, cst.Name) and self.is_builtin(cls):
            return container() if cls.value in ("list", "tuple", "dict", "set", "frozenset") else SCALAR if cls.value in ("int", "float", "bool", "str", "bytes", "complex") else OBJECT
        return OBJECT

    def _tensor_class(self, expr: cst.BaseExpression) -> bool | None:
        """Whether ``expr`` names a tensor class: True, False, or None when it may be one
        (an unknown class whose name says Tensor)."""
        if self._plain_type(expr):
            return False
        qualname = self.names.qualname(expr)
        if qualname is not None:
            return True if qualname in api.TENSOR_CLASSES else None if "Tensor" in qualname.rsplit(".", 1)[-1] else False
        local = self.local_class(expr)
        if local is not None:
            return self.class_kind(local) is Kind.TENSOR
        text = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
        return None if not text or "Tensor" in text else False

    def _plain_type(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name) and self.is_builtin(expr) and expr.value in _BUILTIN_BASES | {"bytes", "bool", "frozenset", "complex"}:
            return True
        return self.names.qualname(expr) in ("numpy.ndarray", "numpy.generic", "numbers.Number")

    # -- values --------------------------------------------------------------------------
    def value(self, expr: cst.BaseExpression, grad_off: bool = False) -> Value:
        return self.evaluator.value(expr, grad_off)

    def binding_value(self, binding: Binding) -> Value:
        return self.evaluator.binding_value(binding)

    def returns_of(self, info: FunctionInfo, evaluator: Evaluator) -> Value:
        """What calling the function gives (see :meth:`Evaluator.returns`)."""
        return evaluator.returns(info)

    def runs_without_grad(self, scope: Scope | None) -> bool:
        """Whether the code of ``scope`` runs with grad off because every call of its
        function is made with grad off (``evaluate(model)`` called only under
        ``torch.no_grad()``, directly or from a function that is)."""
        while scope is not None and scope.kind is ScopeKind.COMPREHENSION:
            scope = scope.parent
        info = self.function_of_scope(scope) if scope is not None else None
        if info is None:
            return False
        key = id(info.node)
        found = self._without_grad.get(key)
        if found is not None:
            return found
        framework = self._framework_without_grad.get(key)
        if framework is None:
            framework = self._framework_without_grad[key] = self._called_by_framework_without_grad(info)
        if framework:
            return True
        if self._called_unseen(info):
            self._without_grad[key] = False
            return False
        sites = [*info.call_sites, *info.indirect_calls]
        if not sites:
            # A lambda nothing calls by a name is handed to a call where it is written
            # (``map(lambda b: evaluate(b), loader)``): it runs in that region's mode.
            # Not a hook: it runs at each forward or backward pass, wherever it was registered.
            return isinstance(info.node, cst.Lambda) and info.made_without_grad and info.hook_roles is None
        self._without_grad[key] = False  # recursion: assume grad on
        result = all(site.grad_disabled or self.runs_without_grad(site.scope) for site in sites)
        self._without_grad[key] = result
        return result

    def trains(self, function: cst.FunctionDef | cst.Lambda) -> bool:
        """Whether calling ``function`` may train: its body (or a local function it calls,
        transitively) calls ``backward()``, steps an optimizer, loads a state dict or writes
        a parameter in place (``p.data.add_(...)``, ``p -= lr * p.grad``).

        A search of the functions it reaches, each summarised once: so mutual recursion
        (``outer`` calls ``inner``, which calls ``outer``, which steps) gives the same
        answer whichever function is asked about first."""
        found = self._trains.get(id(function))
        if found is not None:
            return found
        seen = {id(function)}
        pending = [function]
        result = False
        while pending and not result:
            trains_itself, callees = self._training_summary(pending.pop())
            result = trains_itself
            for callee in callees:
                if id(callee) not in seen:
                    seen.add(id(callee))
                    pending.append(callee)
        self._trains[id(function)] = result
        return result

    def trains_itself(self, function: cst.FunctionDef | cst.Lambda) -> bool:
        """Whether ``function``'s own body trains (calls ``backward()``, steps an optimizer ...),
        not only a function it calls: a training step or loop, not ``main()``."""
        return self._training_summary(function)[0]

    def _training_summary(self, function: cst.FunctionDef | cst.Lambda) -> tuple[bool, list[cst.FunctionDef | cst.Lambda]]:
        """Whether the body itself trains (then nothing else is needed), else the local
        functions it calls."""
        found = self._training_summaries.get(id(function))
        if found is not None:
            return found
        from torchcopy_lint.analysis.flow import step_event
        from torchcopy_lint.walker import iter_children

        summary: tuple[bool, list[cst.FunctionDef | cst.Lambda]] = (False, [])
        pending: list[cst.CSTNode] = [function.body]
        while pending:
            node = pending.pop()
            if type(node) is cst.Call:  # not isinstance: ABCMeta makes misses slow
                if step_event(node, self.is_optimizer) is not None or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "load_state_dict"):
                    summary = (True, [])
                    break
                if isinstance(node.func, cst.Attribute) and api.writes_values(node.func.attr.value) and self.writes_parameter(node.func.value):
                    summary = (True, [])
                    break
                callee = self.value(node.func).function if isinstance(node.func, (cst.Name, cst.Attribute)) else None
                if callee is not None and callee is not function:
                    summary[1].append(callee)
            elif type(node) is cst.AugAssign and self.writes_parameter(node.target):
                summary = (True, [])  # ``p -= lr * p.grad``: a parameter changed in place, as ``p.sub_(...)`` does
                break
            pending.extend(iter_children(node))
        self._training_summaries[id(function)] = summary
        return summary

    def free_names(self, function: cst.FunctionDef | cst.Lambda) -> frozenset[str]:
        """The names ``function`` (or a function nested in it) reads from outside itself: a
        global (``model`` in a notebook's ``def train(epoch)``) or a closure variable. A call of
        it may reach, and change, what they hold without being given it."""
        found = self._free_names.get(id(function))
        if found is not None:
            return found
        from torchcopy_lint.walker import iter_children

        own = self.scope_of(function)
        names: set[str] = set()
        pending: list[cst.CSTNode] = [function.body]
        while pending:
            node = pending.pop()
            if type(node) is cst.Name and node.value not in names:
                bindings = self.bindings_of(node)
                if bindings and all(not _inside(binding.scope, own) for binding in bindings):
                    names.add(node.value)
            pending.extend(iter_children(node))
        result = self._free_names[id(function)] = frozenset(names)
        return result

    def written_arguments(self, info: FunctionInfo) -> frozenset[int]:
        """The positions (in :attr:`FunctionInfo.params`) of the parameters ``info``'s own body
        writes in place, through the parameter itself or a view of it (``t.div_(n)``,
        ``t[i] = 0``, ``t += 1``): a call of the function writes the arguments it gets there
        (``l2_normalize_(feats.detach())`` writes ``feats``). Nested functions are not its body;
        a parameter rebound in the body is not written as the caller's."""
        found = self._written_arguments.get(id(info.node))
        if found is not None:
            return found
        from torchcopy_lint.analysis.aliasing import inplace_write, written_tensor

        written: set[int] = set()
        for node in self._own_body(info):
            node_type = type(node)  # not isinstance: ABCMeta makes misses slow
            write = inplace_write(node) if node_type in (cst.Call, cst.AugAssign, cst.Assign) else None
            if write is not None:
                index = self._parameter_position(info, written_tensor(write[0]))
                if index is not None:
                    written.add(index)
        result = self._written_arguments[id(info.node)] = frozenset(written)
        return result

    def _own_body(self, info: FunctionInfo) -> Iterator[cst.CSTNode]:
        """Every node of the function's own body (nested functions, classes and lambdas are
        theirs); nothing for a function without parameters, which no summary needs."""
        from torchcopy_lint.walker import iter_children

        pending: list[cst.CSTNode] = [info.node.body] if info.params else []
        while pending:
            node = pending.pop()
            if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                continue
            yield node
            pending.extend(iter_children(node))

    def _parameter_position(self, info: FunctionInfo, expr: cst.BaseExpression | None) -> int | None:
        """The position of the parameter ``expr`` names, when the name is bound only as that parameter."""
        if type(expr) is not cst.Name:
            return None
        names = [param.name.value for param in info.params]
        if expr.value not in names:  # type: ignore[union-attr]
            return None
        bindings = self.bindings_of(expr)  # type: ignore[arg-type]
        return names.index(expr.value) if bindings and all(binding.kind is BindingKind.PARAMETER for binding in bindings) else None  # type: ignore[union-attr]

    def _numbers_index(self, subscript: cst.Subscript) -> bool:
        """``dets[j]`` with ``j`` a number (``for j in range(n)``): a view, as ``dets[0]`` is."""
        return all(type(element.slice) is cst.Index and self.value(element.slice.value).kind is Kind.SCALAR for element in subscript.slice)  # type: ignore[attr-defined]

    def kept_arguments(self, info: FunctionInfo) -> frozenset[int]:
        """The positions (in :attr:`FunctionInfo.params`) of the parameters ``info``'s own body
        keeps beyond the call, as they are: added to a container or stored on an attribute or
        in an item of something the function does not make itself (``def push(self, samples):
        self.items.append(samples)``, ``self.last = x``, ``store[k] = v`` of a parameter or a
        global ``store``). A call of the function keeps what it passes there. Only the
        parameter itself counts (``self.items.append(samples.detach())`` keeps a copy), or, given
        on to a function of the file that keeps it, the parameter or a basic-index view of it
        (``def step(self, dets): self.track.update(dets[j])``: a row of ``dets`` is kept)."""
        found = self._kept_arguments.get(id(info.node))
        if found is not None:
            return found
        from torchcopy_lint.analysis.cst_helpers import is_basic_index
        from torchcopy_lint.analysis.keeping import CONTAINER_ADDERS

        kept: set[int] = set()
        self._kept_arguments[id(info.node)] = frozenset()  # recursion (``a`` calls ``b`` calls ``a``): not kept there

        def given_on(call: cst.Call) -> None:
            """The parameters (or views of them) this call gives to a parameter its callee keeps."""
            passed = {}
            for argument in call.args:
                value = argument.value
                while type(value) is cst.Subscript and (is_basic_index(value) or self._numbers_index(value)):  # type: ignore[arg-type]
                    value = value.value  # type: ignore[attr-defined]
                index = self._parameter_position(info, value) if not argument.star else None
                if index is not None:
                    passed[id(argument.value)] = index
            if not passed or type(call.func) not in (cst.Name, cst.Attribute):
                return
            for callee, offset in self.called_functions(self.value(call.func)):
                if callee.node is info.node:
                    continue
                site = CallSite(call, False, offset)
                for position in self.kept_arguments(callee):
                    given = site.argument(position, callee.params[position].name.value)
                    if given is not None and id(given) in passed:
                        kept.add(passed[id(given)])

        def outlives(holder: cst.BaseExpression) -> bool:
            root = holder
            while type(root) in (cst.Attribute, cst.Subscript):
                root = root.value  # type: ignore[attr-defined]
            if type(root) is not cst.Name:
                return False
            bindings = self.bindings_of(root)
            return bool(bindings) and all(binding.kind is BindingKind.PARAMETER or binding.scope.kind is ScopeKind.MODULE for binding in bindings)

        for node in self._own_body(info):
            node_type = type(node)  # not isinstance: ABCMeta makes misses slow
            if node_type is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in CONTAINER_ADDERS and outlives(node.func.value):
                kept.update(index for index in (self._parameter_position(info, argument.value) for argument in node.args) if index is not None)
            elif node_type is cst.Assign:
                index = self._parameter_position(info, node.value)
                if index is not None and any(type(target.target) in (cst.Attribute, cst.Subscript) and outlives(target.target) for target in node.targets):
                    kept.add(index)
            if node_type is cst.Call:
                given_on(node)  # type: ignore[arg-type]
        result = self._kept_arguments[id(info.node)] = frozenset(kept)
        return result

    def is_frozen(self, module: cst.BaseExpression) -> bool:
        """Whether ``module`` (a name or an attribute) is frozen: the file calls
        ``module.requires_grad_(False)`` (or sets ``requires_grad = False`` on each of its
        parameters) and never switches it back. A frozen module's output has only its
        input's history (``backbone.eval().requires_grad_(False)``, then features of it)."""
        if self._frozen is None:
            switches: dict[object, bool] = {}
            for receiver, enabled in self.records.grad_switches:
                for key in self._module_keys(receiver):
                    switches[key] = switches.get(key, False) or enabled
            self._frozen = {key for key, enabled in switches.items() if not enabled}
        if not self._frozen:
            return False
        if isinstance(module, cst.Attribute) and module.attr.value == "forward":
            module = module.value
        return any(key in self._frozen for key in self._module_keys(module))

    def _module_keys(self, expr: cst.BaseExpression) -> list[object]:
        """A module by name: each binding of a name, or an attribute's name (``self.backbone``)."""
        if isinstance(expr, cst.Name):
            return [id(binding) for binding in self.bindings_of(expr)]
        if isinstance(expr, cst.Attribute):
            return [f".{expr.attr.value}"]
        return []

    def is_optimizer(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` is shown to be an optimizer (``solver = torch.optim.LBFGS(...)``)."""
        return self.value(expr).kind is Kind.OPTIMIZER

    def writes_parameter(self, written: cst.BaseExpression) -> bool:
        """Whether an in-place write to ``written`` changes a parameter (itself, a view of
        it, its ``.data`` or ``.detach()``)."""
        value = self.value(written)
        while value.alias is not None and value.alias.how in (AliasHow.DATA, AliasHow.DETACH, AliasHow.VIEW):
            value = value.alias.source_value
        return value.kind is Kind.TENSOR and value.grad is Grad.LEAF

    # -- classes ---------------------------------------------------------------------------
    def class_kind(self, node: cst.ClassDef, _depth: int = 0) -> Kind:
        """MODULE for an nn.Module subclass, OPTIMIZER, TENSOR (a tensor subclass), OBJECT for
        a plain class, UNKNOWN when a base is not known."""
        found = self._class_kinds.get(id(node))
        if found is not None:
            return found
        kind = Kind.OBJECT
        for base in node.bases:
            if base.keyword is not None:
                continue
            base_kind = self._base_kind(base.value, _depth)
            if base_kind in (Kind.MODULE, Kind.OPTIMIZER, Kind.TENSOR):
                kind = base_kind
                break
            if base_kind is Kind.UNKNOWN:
                kind = Kind.UNKNOWN
        self._class_kinds[id(node)] = kind
        return kind

    def _base_kind(self, base: cst.BaseExpression, depth: int) -> Kind:
        qualname = self.names.qualname(base)
        if qualname is not None:
            if api.is_module_class(qualname):
                return Kind.MODULE
            if api.is_optimizer_class(qualname):
                return Kind.OPTIMIZER
            if qualname in api.TENSOR_CLASSES:
                return Kind.TENSOR
            if qualname in api.PLAIN_BASE_CLASSES:
                return Kind.OBJECT
            last = qualname.rsplit(".", 1)[-1]
            if last.endswith("Module") or last.endswith("Model"):
                return Kind.MODULE  # LightningModule, PreTrainedModel ...
            return Kind.UNKNOWN
        local = self.local_class(base)
        if local is not None and depth < 8:
            return self.class_kind(local, depth + 1)
        if isinstance(base, cst.Name) and self.is_builtin(base) and base.value in _BUILTIN_BASES:
            return Kind.OBJECT
        name = base.attr.value if isinstance(base, cst.Attribute) else base.value if isinstance(base, cst.Name) else ""
        return Kind.MODULE if name.endswith("Module") else Kind.UNKNOWN

    def instance_of(self, node: cst.ClassDef) -> Value:
        kind = self.class_kind(node)
        if kind is Kind.TENSOR:
            return tensor()
        return Value(kind, cls=node)

    def epoch_outputs_of(self, info: FunctionInfo) -> FunctionInfo | None:
        """The ``*_step`` method whose returns a framework hands ``info`` (``validation_epoch_end``
        of a ``LightningModule`` gets the list of what ``validation_step`` returned), by the
        base class's name (``torch_api.EPOCH_END_OUTPUTS``)."""
        if info.cls is None or not isinstance(info.node, cst.FunctionDef) or info.node.name.value not in api.EPOCH_END_METHODS:
            return None
        method = info.node.name.value
        for cls in self._class_chain(info.cls.node):
            for base in cls.node.bases:
                name = dotted_name(base.value) if base.keyword is None else None
                step = api.EPOCH_END_OUTPUTS.get(name.rsplit(".", 1)[-1], {}).get(method) if name is not None else None
                if step is None:
                    continue
                for owner in self._class_chain(info.cls.node):
                    found = owner.methods.get(step)
                    if found is not None:
                        return self.function_info(found)
                return None
        return None

    def _called_unseen(self, info: FunctionInfo) -> bool:
        """A module's ``forward``: the calls the file shows are not all of them. Its instance is
        called through attributes (``self.policy_net(x)`` of a module handed to ``Agent``),
        containers (``nn.Sequential``) and library code, so calls seen under ``no_grad`` (an
        acting step) do not show that it always runs without grad."""
        return info.cls is not None and info.name == "forward" and self.class_kind(info.cls.node) is Kind.MODULE

    def _called_by_framework_without_grad(self, info: FunctionInfo) -> bool:
        """A method a framework calls under ``no_grad`` (``validation_step`` of a
        ``LightningModule``, ``_forward`` of a transformers ``Pipeline``: see
        ``torch_api.NO_GRAD_OVERRIDES``), in a class deriving from that base by its name."""
        if info.cls is None or not isinstance(info.node, cst.FunctionDef):
            return False
        method = info.node.name.value
        for cls in self._class_chain(info.cls.node):
            for base in cls.node.bases:
                name = dotted_name(base.value) if base.keyword is None else None
                if name is not None and method in api.NO_GRAD_OVERRIDES.get(name.rsplit(".", 1)[-1], ()):
                    return True
        return False

    def _class_chain(self, node: cst.ClassDef) -> list[ClassInfo]:
        """The class and its bases defined in this module, in method resolution order (roughly)."""
        found = self._class_chains.get(id(node))
        if found is None:
            found = self._class_chains[id(node)] = self._find_class_chain(node)
        return found

    def _find_class_chain(self, node: cst.ClassDef) -> list[ClassInfo]:
        chain: list[ClassInfo] = []
        pending = [node]
        while pending and len(chain) < 16:
            current = pending.pop(0)
            info = self.class_info(current)
            if info is None or info in chain:
                continue
            chain.append(info)
            for base in current.bases:
                local = self.local_class(base.value) if base.keyword is None else None
                if local is not None:
                    pending.append(local)
        return chain

    def class_attribute(self, node: cst.ClassDef, attr: str, evaluator: Evaluator, instance: bool = True) -> Value | None:
        """``obj.attr`` for an instance (or the class) of a local class; None when the class
        and its local bases do not define ``attr``."""
        for info in self._class_chain(node):
            method = info.methods.get(attr)
            if method is not None:
                function = self.function_info(method)
                if function is not None and "property" in function.decorators and instance:
                    return self.returns_of(function, evaluator)
                return Value(Kind.CALLABLE, function=method, bound=instance and function is not None and function.is_method)
            sites = [*info.attributes.get(attr, ()), *self._foreign_stores(info, attr)]
            switches = [site.how for site in sites if site.how in _GRAD_SWITCHES]
            sites = [site for site in sites if site.how not in _GRAD_SWITCHES]
            additions = [*info.additions.get(attr, []), *self._foreign_additions(info, attr)]
            if sites or additions:
                stores = [site for site in sites if site.how != "augmented"] or sites
                values = [self._site_value(site, evaluator) for site in stores]
                value = join_all(values) if values else UNKNOWN
                if switches and value.kind is Kind.TENSOR and value.grad is not Grad.GRAPH:
                    # ``self.W = torch.empty(n, m)`` then ``self.W.requires_grad_()``: a leaf that
                    # requires grad (both switches seen: either may hold where it is read)
                    value = join_all([value.with_(grad=Grad.LEAF if how == "grad-on" else Grad.NO, why=_SWITCHED[how]) for how in set(switches)])
                if stores is not sites:
                    # ``self.centers -= delta`` in another method changes the stored object
                    # in place: what it is after, or before when that method has not run.
                    updated = [evaluator._augmented(value, self._site_value(site, evaluator), site.grad_disabled) for site in sites if site.how == "augmented"]
                    value = join_all([value, *updated])
                if additions:
                    value = evaluator._with_additions(value, additions)
                if value.kind is Kind.UNKNOWN and attr in self.records.module_attributes and self.names.imports_torch:
                    # ``self.coarse = coarse`` of an untyped argument, and ``renderer.coarse.parameters()``
                    # elsewhere: what the attribute is used as (a guess, as for names: see Evaluator.binding_value).
                    value = Value(Kind.MODULE, guessed=True)
                return value
        return None

    def _site_value(self, site: AttributeSite, evaluator: Evaluator) -> Value:
        if site.how == "buffer":
            return tensor(Grad.NO, "a buffer")
        if site.value is None:
            # ``logits: torch.Tensor`` in a class body: what a dataclass or NamedTuple field holds.
            return evaluator.annotation_value(site.annotation) if site.annotation is not None else UNKNOWN
        value = evaluator.value(site.value, site.grad_disabled)
        for index in site.path:
            value = item_of(value, index)
        return value

    def _foreign_stores(self, info: ClassInfo, attr: str) -> list[AttributeSite]:
        """``obj.attr = v`` outside the class, where ``obj`` is an instance of it (``self.buffer.advantages
        = adv`` in an agent, of a ``RolloutBuffer`` that sets ``self.advantages = None``)."""
        return [site for receiver, name, site in self.records.foreign_stores if name == attr and self._class_of_receiver(receiver) is info.node]

    def _class_of_receiver(self, receiver: cst.BaseExpression) -> cst.ClassDef | None:
        if id(receiver) not in self._receiver_classes:
            self._receiver_classes[id(receiver)] = None  # recursion guard
            self._receiver_classes[id(receiver)] = self.value(receiver).cls
        return self._receiver_classes[id(receiver)]

    def _foreign_additions(self, info: ClassInfo, attr: str) -> list[Addition]:
        """``obj.attr.append(v)`` outside the class, where ``obj`` is an instance of it."""
        return [addition for receiver, name, addition in self.records.foreign_additions if name == attr and self._class_of_receiver(receiver) is info.node]

    # -- indexes: hooks and call sites ------------------------------------------------------
    def _build_indexes(self) -> None:
        """Which functions are hook callbacks and where local functions are called.

        Built with an evaluator that does not infer parameters (the indexes are what
        parameter inference needs)."""
        index = Evaluator(self, infer_parameters=False)
        unresolved = [registration for registration in self.records.hooks if not self._register_hook(registration.roles, registration.callback, index, registration=registration)]
        self._index_calls(index)
        # Again, with parameters inferred from the calls found: ``agent.select_action(x)``
        # where ``agent`` is a parameter that the first round showed to be an ``Agent``.
        found = {id(info.node): list(info.call_sites) for info in self.records.functions.values()}
        for info in self.records.functions.values():
            info.call_sites.clear()
            info.indirect_calls.clear()
        dispatches: list[RawCall] = []
        final = Evaluator(self, infer_parameters=True, known_calls=found)
        self._index_calls(final, dispatches)
        for raw in dispatches:
            self._index_dispatch(raw, final)
        # A callback registered through a parameter of a local function (``def add_hook(m, fn):
        # m.register_forward_hook(fn)``, called as ``add_hook(model, save)``): what the calls pass.
        for registration in unresolved:
            for passed, grad_off in self._passed_for(registration.callback):
                self._register_hook(registration.roles, passed, final, grad_off)

    def _passed_for(self, callback: cst.BaseExpression) -> list[tuple[cst.BaseExpression, bool]]:
        """What the calls of a local function pass for its parameter ``callback`` (a Name), one
        expression per call that passes one."""
        if not isinstance(callback, cst.Name):
            return []
        found = []
        for binding in self.bindings_of(callback):
            info = self.function_of_scope(binding.scope) if binding.kind is BindingKind.PARAMETER else None
            if info is None:
                continue
            index = next((i for i, param in enumerate(info.params) if param is binding.node), None)
            for site in info.call_sites:
                passed = site.argument(index, binding.name) if not site.passes_parts else None
                if passed is not None:
                    found.append((passed, site.grad_disabled))
        return found

    def _register_hook(self, roles: tuple[str, ...], callback: cst.BaseExpression, evaluator: Evaluator, grad_off: bool = False, registration: HookRegistration | None = None) -> bool:
        """Give ``roles`` to the local function ``callback`` is (or a ``partial`` of one): what a
        registration is called with, or what a call passes for the parameter it registers.
        False when the callback is not known to be a local function."""
        offset = 0
        if isinstance(callback, cst.Call) and self.names.qualname(callback.func) == "functools.partial" and callback.args:
            offset = sum(1 for argument in callback.args[1:] if argument.keyword is None)
            callback = callback.args[0].value
        value = evaluator.value(callback, grad_off)
        if value.alternatives:  # ``hook = make_raw(name) if raw else make_safe(name)``: each one
            registered = [self._register_value(roles, alternative, offset, evaluator, registration) for alternative in value.alternatives]
            return any(registered)
        return self._register_value(roles, value, offset, evaluator, registration)

    def _register_value(self, roles: tuple[str, ...], value: Value, offset: int, evaluator: Evaluator, registration: HookRegistration | None) -> bool:
        """Give ``roles`` to the local function (or instance's ``__call__``) ``value`` is."""
        bound, offset = value.bound, offset + value.preset  # ``hook = partial(save, name)`` handed by its name
        if value.function is None and value.cls is not None and value.kind is not Kind.CALLABLE:
            # An instance of a class of the file (``register_forward_hook(SaveOutput())``): its ``__call__``.
            method = self.class_attribute(value.cls, "__call__", evaluator)
            value, bound = (method, True) if method is not None else (value, bound)
        info = self.function_info(value.function) if value.function is not None else None
        if info is None:
            return False
        info.hook_roles = roles
        info.hook_offset = offset + (1 if bound else 0)
        if registration is not None and isinstance(registration.call.func, cst.Attribute):
            info.hooked.append(registration.call.func.value)
        without_grad = registration is not None and self._hook_runs_without_grad(registration, evaluator)
        info.hook_runs_without_grad = without_grad if info.hook_runs_without_grad is None else info.hook_runs_without_grad and without_grad
        return True

    def hooked_inputs(self, info: FunctionInfo, evaluator: Evaluator) -> Value | None:
        """What a forward hook's ``inputs`` hold, from the calls of the modules it is
        registered on that the file shows (``self.head(h)`` in ``forward`` for
        ``self.head.register_forward_hook(fn)``): a tensor with history when every such call
        passes one first; None when the file shows no call, or one passing anything else
        (the first layer of a network gets the data)."""
        sites = [raw for module in info.hooked for raw in self._calls_of_module(module, evaluator)]
        if not sites:
            return None
        for raw in sites:
            arguments = positional_args(raw.call)
            passed = evaluator.value(arguments[0].value, raw.grad_disabled) if arguments else UNKNOWN
            if passed.kind is not Kind.TENSOR or passed.grad is not Grad.GRAPH:
                return None
        described = dotted_name(info.hooked[0]) or "the hooked module"
        return container(tensor(Grad.GRAPH, f"an input of `{described}` (forward hook), computed with grad"))

    def _calls_of_module(self, module: cst.BaseExpression, evaluator: Evaluator) -> list[RawCall]:
        """The calls of ``module`` (``obj.attr``) the file shows: ``self.attr(...)`` in a
        method of the class of the file ``obj`` is an instance of (``self.head(h)`` in
        ``forward`` for ``self.head`` or ``model.head``)."""
        if not isinstance(module, cst.Attribute):
            return []
        owner = evaluator.value(module.value).cls
        if owner is None:
            return []
        calls = self.records.self_calls.get(module.attr.value, ())
        return [raw for raw in calls if evaluator.value(raw.call.func.value).cls is owner]  # type: ignore[attr-defined]

    def _hook_runs_without_grad(self, registration: HookRegistration, evaluator: Evaluator) -> bool:
        """Whether a hook only ever runs without grad: ``handle = m.register_forward_hook(fn)``
        in a function that removes it again (``handle.remove()``) and calls a module only
        under ``no_grad`` / ``inference_mode`` (a ``with`` block, or the function's own
        decorator), or always runs without grad itself."""
        function = self.function_of_scope(registration.scope) if registration.scope is not None else None
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return False
        handle = next(
            (
                target.target.value
                for binding in _assignments_in(function.node.body)
                if binding.value is registration.call
                for target in binding.targets
                if isinstance(target.target, cst.Name)
            ),
            None,
        )
        if handle is None or not _calls_method(function.node.body, handle, "remove"):
            return False
        if self.runs_without_grad(function.scope):
            return True
        from torchcopy_lint.walker import iter_children

        module_calls = 0
        decorated = any(self._disables_grad(decorator.decorator) or grad_mode.disables(self.names.torch_qualname(decorator.decorator), ()) for decorator in function.node.decorators)  # ``@torch.no_grad()``, ``@torch.no_grad``
        pending: list[tuple[cst.CSTNode, bool]] = [(function.node.body, decorated)]
        while pending:
            node, off = pending.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if type(node) is cst.With:
                off = off or any(self._disables_grad(item.item) for item in node.items)
            elif type(node) is cst.Call and isinstance(node.func, (cst.Name, cst.Attribute)) and evaluator.value(node.func).kind is Kind.MODULE:
                if not off:
                    return False
                module_calls += 1
            pending.extend((child, off) for child in iter_children(node))
        return module_calls > 0

    def _disables_grad(self, expr: cst.BaseExpression) -> bool:
        """``torch.no_grad()``, ``torch.inference_mode()`` (not ``inference_mode(False)``)."""
        return isinstance(expr, cst.Call) and grad_mode.disables(self.names.torch_qualname(expr.func), expr.args)

    # -- calls dispatched by a string name ----------------------------------------------------
    def dispatched_from(self, call: cst.Call) -> list[tuple[FunctionInfo, CallSite]]:
        """The functions a call reaches by a string name, with the call sites recorded for
        them: ``getattr(cb, "on_batch_end")(self, loss)`` itself, or ``self._call("on_batch_end",
        loss)`` where ``_call(self, hook, *args)`` does ``getattr(cb, hook)(self, *args)``."""
        return self._dispatched.get(id(call), [])

    def _looked_up(self, func: cst.BaseExpression) -> list[tuple[cst.BaseExpression | None, cst.BaseExpression]]:
        """``(obj, name)`` of each string lookup a callee may be: ``getattr(obj, name)``,
        ``globals()[name]``, or a name assigned one (``method = getattr(type(self), MODES[mode])``)."""
        found = by_name(func)
        if found is not None:
            return [found]
        if isinstance(func, cst.Name):
            return [
                lookup
                for binding in self.bindings_of(func)
                if binding.kind is BindingKind.ASSIGNMENT and not binding.path and binding.value is not None
                for lookup in [by_name(binding.value)]
                if lookup is not None
            ]
        return []

    def _index_dispatch(self, raw: RawCall, index: Evaluator) -> None:
        """Call sites for ``getattr(obj, name)(...)`` (or ``globals()[name](...)``) where the
        name's possible strings are known (see :meth:`_strings`): every method of the file's
        classes with that name (the receiver's class is not asked: like the screen, by name),
        or every module-level function for ``globals()``. A call that resolves already (a
        constant attribute of a known class) was indexed as usual."""
        if index.value(raw.call.func).function is not None:
            return
        module_functions: dict[str, FunctionInfo] | None = None
        for receiver, name in self._looked_up(raw.call.func):
            of_class = receiver is not None and (
                (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "type")
                or (index.value(receiver).kind is Kind.CALLABLE and index.value(receiver).cls is not None)
            )
            dispatching = self._function_around(raw.scope)
            self._dispatch_budget = _DISPATCH_STEPS
            for text, via in dict.fromkeys(self._strings(name, 0)):  # once per (string, choosing call)
                if not text.isidentifier():
                    continue  # ``"transformers-community/dola"``: no function's name
                if via is not None and (dispatching is None or via not in dispatching.call_sites):
                    via = None  # chosen by a call of some other function: the dispatch's own call site stands
                if receiver is None:
                    if module_functions is None:
                        module_functions = {info.name: info for info in self.records.functions.values() if info.cls is None and info.scope.parent is self.module_scope}
                    targets = [(module_functions[text], 0)] if text in module_functions else []
                else:
                    targets = [(info, self._dispatch_offset(info, of_class)) for info in self._methods_named(text)]
                for target, offset in targets:
                    site = CallSite(raw.call, raw.grad_disabled, offset, raw.scope)
                    if via is not None:
                        site = CallSite(raw.call, raw.grad_disabled or via.grad_disabled, offset, via.scope, via.call, self._forwarded(raw, via))
                    target.call_sites.append(site)
                    self._dispatched.setdefault(id(via.call if via is not None else raw.call), []).append((target, site))

    def _function_around(self, scope: Scope | None) -> FunctionInfo | None:
        """The function whose code ``scope`` is (a comprehension's is its function's)."""
        while scope is not None and scope.kind is ScopeKind.COMPREHENSION:
            scope = scope.parent
        return self.function_of_scope(scope) if scope is not None else None

    def _methods_named(self, name: str) -> list[FunctionInfo]:
        if self._methods_by_name is None:
            self._methods_by_name = {}
            for info in self.records.functions.values():
                if info.cls is not None:
                    self._methods_by_name.setdefault(info.name, []).append(info)
        return self._methods_by_name.get(name, [])

    @staticmethod
    def _dispatch_offset(info: FunctionInfo, of_class: bool) -> int:
        """1 where the receiver is passed implicitly: a method looked up on an instance, a classmethod."""
        if "staticmethod" in info.decorators:
            return 0
        if "classmethod" in info.decorators:
            return 1
        return 0 if of_class else 1

    def _forwarded(self, raw: RawCall, via: CallSite) -> tuple[cst.Arg, ...] | None:
        """What ``via`` passed for the dispatching function's ``*args``, when the dispatched
        call spreads exactly that parameter (``getattr(cb, hook)(self, *args)``)."""
        function = self._function_around(raw.scope)
        star = function.node.params.star_arg if function is not None else None
        if not isinstance(star, cst.Param):
            return None
        spread = [argument for argument in raw.call.args if argument.star == "*"]
        if len(spread) != 1 or not (isinstance(spread[0].value, cst.Name) and spread[0].value.value == star.name.value):
            return None
        positional = [argument for argument in via.call.args if argument.keyword is None and argument.star != "**"]
        first = len(function.params) - via.offset
        if any(argument.star for argument in positional[:first]) or first < 0:
            return None
        return tuple(positional[first:])

    def _strings(self, expr: cst.BaseExpression, depth: int) -> list[tuple[str, CallSite | None]]:
        """The strings ``expr`` may be, each with the call of the enclosing function that
        chose it when it comes from one of its parameters (else None): a constant; a name
        bound to one (or looping over a display of them); a parameter, from what its call
        sites pass; ``D[k]`` of a module-level dict, list or tuple display of constants
        (the values under ``k``'s strings, or all of them); either branch of ``a if c else
        b``; ``f"{stage}_step"`` and ``"on_" + event`` from their parts' strings. Bounded: a
        few names followed back, a few dozen strings."""
        self._dispatch_budget -= 1
        if depth > _DISPATCH_DEPTH or self._dispatch_budget < 0:
            return []
        text = string_value(expr)
        if text is not None:
            return [(text, None)]
        if isinstance(expr, cst.IfExp):
            return self._strings(expr.body, depth) + self._strings(expr.orelse, depth)
        if isinstance(expr, cst.FormattedString):
            parts: list[list[tuple[str, CallSite | None]]] = []
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringText):
                    parts.append([(part.value, None)])
                elif isinstance(part, cst.FormattedStringExpression) and part.conversion is None and part.format_spec is None:
                    parts.append(self._strings(part.expression, depth))
                else:
                    return []
            return _products(parts)
        if isinstance(expr, (cst.ConcatenatedString, cst.BinaryOperation)):
            if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.Add):
                return []
            return _products([self._strings(expr.left, depth), self._strings(expr.right, depth)])
        if isinstance(expr, cst.Subscript):
            display = self._display(expr.value)
            if display is None or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
                return []
            pairs = self._display_pairs(display)
            keys = self._strings(expr.slice[0].slice.value, depth) if isinstance(display, cst.Dict) else []
            if keys and all(key is not None for key, _ in pairs):  # constant keys: the values under the key's strings
                return [(value, via) for key, via in keys for found_key, value in pairs if found_key == key]
            return [(value, None) for _, value in pairs]
        if not isinstance(expr, cst.Name):
            return []
        found: list[tuple[str, CallSite | None]] = []
        for binding in self.bindings_of(expr):
            if binding.kind is BindingKind.PARAMETER:
                function = self.function_of_scope(binding.scope)
                if function is None:
                    continue
                index = next((i for i, param in enumerate(function.params) if param is binding.node), None)
                for site in list(function.call_sites):
                    passed = site.argument(index, binding.name) if not site.passes_parts else None
                    if passed is not None:
                        found.extend((text, site) for text, _ in self._strings(passed, depth + 1))
            elif binding.kind in (BindingKind.ASSIGNMENT, BindingKind.ANNOTATION) and not binding.path and binding.value is not None:
                found.extend(self._strings(binding.value, depth + 1))
            elif binding.kind is BindingKind.LOOP_TARGET and not binding.path and isinstance(binding.value, (cst.List, cst.Tuple, cst.Set)):
                for element in binding.value.elements:
                    found.extend(self._strings(element.value, depth + 1))
        return found

    def _display(self, expr: cst.BaseExpression) -> cst.Dict | cst.List | cst.Tuple | None:
        """A dict, list or tuple display: itself, or what a module-level name is bound to once."""
        if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
            return expr
        if isinstance(expr, cst.Name):
            bindings = self.bindings_of(expr)
            if len(bindings) == 1 and bindings[0].scope is self.module_scope and bindings[0].kind in (BindingKind.ASSIGNMENT, BindingKind.ANNOTATION) and not bindings[0].path:
                value = bindings[0].value
                if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
                    return value
        return None

    @staticmethod
    def _display_pairs(display: cst.Dict | cst.List | cst.Tuple) -> list[tuple[str | None, str]]:
        """``(constant key or None, constant string value)`` of each element."""
        pairs: list[tuple[str | None, str]] = []
        if isinstance(display, cst.Dict):
            for element in display.elements:
                if isinstance(element, cst.DictElement):
                    value = string_value(element.value)
                    if value is not None:
                        pairs.append((string_value(element.key), value))
        else:
            for element in display.elements:
                if isinstance(element, cst.Element):
                    value = string_value(element.value)
                    if value is not None:
                        pairs.append((None, value))
        return pairs

    def _index_calls(self, index: Evaluator, dispatches: list[RawCall] | None = None) -> None:
        for raw in self.records.calls:
            if dispatches is not None and self._looked_up(raw.call.func):
                dispatches.append(raw)
            if isinstance(raw.call.func, cst.Subscript):
                # ``self.handlers[mode]()``: any function the container holds.
                for held in _held(index.value(raw.call.func.value)):
                    called = self.function_info(held.function) if held.function is not None else None
                    if called is not None:
                        called.indirect_calls.append(CallSite(raw.call, raw.grad_disabled, held.implicit, raw.scope))
                continue
            callee = index.value(raw.call.func)
            targets = self.called_functions(callee)
            for target, offset in targets:
                target.call_sites.append(CallSite(raw.call, raw.grad_disabled, offset, raw.scope))
            if not targets and callee.qualname == "functools.partial" and raw.call.args and not any(argument.star for argument in raw.call.args):
                # ``partial(f, model, lr=0.1)``: a call site of ``f`` for the arguments it presets
                # (``f``'s parameter 0 is the partial's position 1).
                for info, offset in self.called_functions(index.value(raw.call.args[0].value, raw.grad_disabled)):
                    info.call_sites.append(CallSite(raw.call, raw.grad_disabled, offset - 1, raw.scope))
            elif not targets and callee.qualname in _ITERATING_BUILTINS:
                self._index_iterating_call(raw, callee.qualname, index)
            elif not targets and callee.qualname in api.DATA_LOADER_CLASSES:
                collate = keyword_arg(raw.call, "collate_fn")
                if collate is not None:  # a function, or an instance whose ``__call__`` collates
                    for info, offset in self.called_functions(index.value(collate.value, raw.grad_disabled)):
                        info.call_sites.append(CallSite(raw.call, raw.grad_disabled, offset, raw.scope, batched=True))

    def called_functions(self, callee: Value) -> list[tuple[FunctionInfo, int]]:
        """The functions of the file that calling ``callee`` may run, each with how many
        arguments the call passes implicitly (1 for a bound method): a function or method, a
        class's ``__init__``, an instance's ``__call__`` (``early_stopping(val_loss)``); each
        of a union's (``fn(out, y)`` of a dict of lambdas)."""
        found: list[tuple[FunctionInfo, int]] = []
        for value in callee.alternatives or (callee,):
            info: FunctionInfo | None = None
            offset = 0
            if value.function is not None:
                info, offset = self.function_info(value.function), value.implicit
            elif value.cls is not None and value.kind in (Kind.CALLABLE, Kind.OBJECT, Kind.MODULE):
                # a class: its ``__init__``; an instance: its ``__call__``; a module: its ``forward``
                wanted = "__init__" if value.kind is Kind.CALLABLE else "forward" if value.kind is Kind.MODULE else "__call__"
                for cls in self._class_chain(value.cls):
                    method = cls.methods.get(wanted)
                    if method is not None:
                        info, offset = self.function_info(method), 1
                        break
            if info is not None:
                found.append((info, offset))
        return found

    def _index_iterating_call(self, raw: RawCall, builtin: str, index: Evaluator) -> None:
        """``map(f, xs)``, ``filter(f, xs)``, ``sorted(xs, key=f)``: a local function or lambda
        ``f`` called with the elements of ``xs`` (a call site of ``f``, see ``CallSite.iterated``)."""
        positional = positional_args(raw.call)
        if builtin in ("builtins.map", "builtins.filter"):
            handed, offset = (positional[0].value if positional else None), -1
        else:
            key = keyword_arg(raw.call, "key")
            handed, offset = (key.value if key is not None and positional else None), 0
        if handed is None:
            return
        function = index.value(handed, raw.grad_disabled).function
        info = self.function_info(function) if function is not None else None
        if info is not None:
            info.call_sites.append(CallSite(raw.call, raw.grad_disabled, offset, raw.scope, iterated=True))


def _assignments_in(body: cst.CSTNode) -> list[cst.Assign]:
    """The assignments of a function body (not of its nested functions and classes)."""
    from torchcopy_lint.walker import iter_children

    found: list[cst.Assign] = []
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if type(node) is cst.Assign:
            found.append(node)
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            pending.extend(iter_children(node))
    return found


def _calls_method(body: cst.CSTNode, name: str, method: str) -> bool:
    """Whether ``body`` calls ``name.method(...)`` (``handle.remove()``)."""
    from torchcopy_lint.walker import iter_children

    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if type(node) is cst.Call and isinstance(node.func, cst.Attribute) and node.func.attr.value == method and isinstance(node.func.value, cst.Name) and node.func.value.value == name:
            return True
        pending.extend(iter_children(node))
    return False


def _held(container: Value) -> list[Value]:
    """The values a container holds: its element, items and fields (a dict display's values)."""
    if container.kind is not Kind.CONTAINER:
        return []
    return [value for value in (container.element, *(container.items or ()), *(value for _, value in container.fields)) if value is not None]


def _inside(scope: Scope, outer: Scope | None) -> bool:
    """Whether ``scope`` is ``outer`` or nested in it."""
    current: Scope | None = scope
    while current is not None:
        if current is outer:
            return True
        current = current.parent
    return False
