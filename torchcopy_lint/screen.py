"""The structural pre-screen: cheap facts from Python's own ``ast``, read before LibCST.

Every file is compiled with :mod:`ast` anyway (the syntax check). One walk over that
tree collects :class:`ScreenFacts`; each checker declares a *necessary* condition on
them (``Checker.applies``). A file where no enabled rule applies is never parsed by
LibCST, and only the rules that apply run on the others.

The facts are deliberately coarse, so that they over-approximate what the semantic
model (torchcopy_lint/analysis/) can show:

- **Names, not bindings.** An expression is reduced to the identifiers in it
  (names, attribute names, identifier-like string keys): ``self.fc(x)`` is
  ``{self, fc, x}``. Scopes are ignored: every ``x`` in the file is one node.
- **A may-flow graph between names** (:attr:`ScreenFacts.flows`): ``y -> x`` when a
  value reaching ``x`` may come from ``y``: assignments (also to attributes, by
  attribute name: ``self.h0 = nn.Parameter(...)`` makes ``h0 <- {nn, Parameter}``),
  unpacking, loop and comprehension targets, ``with ... as``, returns and yields
  (into the function's name), call-site arguments (each into the parameters of the
  called function it may bind: by keyword, else by place, see ``_Signature.receive``;
  into all of them through an alias), container adders (``xs.append(v)``: ``xs <- v``), subscript stores,
  hook and callback arguments (into the callback's parameters), annotations,
  ``isinstance`` narrowing, class bases (into the class, and the class into ``self``).
- **Events with the names they involve**: in-place writes (the receiver's names),
  accumulations inside loops, ``clone()`` calls, each marked when inside a
  ``no_grad``/``inference_mode`` region.

A rule then asks: "does any write's receiver *reach* a name that is evidence of X?"
(:meth:`ScreenFacts.reaches`), the way the model would find X, but over names only.
A condition may let a file through that has no finding (it is cheap, not exact), but
it must never rule out one that has: ``tests/test_screen.py`` runs the pipeline with
and without the screen over the catalogue, the test corpora and torch's source, and
the findings must be identical. When the model learns a new way for a value to flow,
add the edge here too (that test tells you when you forgot).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from torchcopy_lint.analysis import naming
from torchcopy_lint.analysis import torch_api as api

__all__ = ["CALLED", "Event", "ScreenFacts", "bare", "facts_of", "final_name", "is_leaf_evidence", "is_module_like"]

# Context managers and decorators that switch autograd recording off, and on again.
_GRAD_OFF_WORDS = frozenset({"no_grad", "inference_mode"})
_GRAD_ON_WORDS = frozenset({"enable_grad", "set_grad_enabled"})
# Calls that put their arguments into their receiver (a list, a dict, a queue).
_ADDERS = frozenset({"append", "appendleft", "insert", "extend", "add", "put", "update", "setdefault"})
# Accumulating calls inside a loop (TCL009's forms).
_ACCUMULATING = frozenset({"append", "appendleft", "insert", "extend", "add_"})
# Calls that name an attribute by a string: ``getattr(m, "w")``, ``register_buffer("w", t)``.
_BY_STRING = frozenset({"getattr", "setattr", "register_buffer", "register_parameter", "register_module", "add_module"})


def final_name(node: ast.AST | None) -> str | None:
    """The last name of an expression: ``data`` for ``a.b.data``, ``clone`` for ``a.clone()``,
    ``w`` for ``w[i]``, ``x`` for ``x``; None for literals and other forms."""
    while node is not None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, (ast.Subscript, ast.Starred)):
            node = node.value
        else:
            return None
    return None


_EMPTY: frozenset[str] = frozenset()


@lru_cache(maxsize=1 << 16)
def bare(key: str) -> str:
    """The identifier of a flow-graph key: ``x`` for ``3@x`` (a local of function 3),
    ``clone`` for ``.clone`` (a method called)."""
    return key.rsplit("@", 1)[-1].lstrip(".").removeprefix(CALLED)


# Fields that never hold a node worth a visit: expression contexts (``Load``), operators.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})
# Fields that hold identifiers, numbers or flags in every node class that has them (``Name.id``,
# ``Attribute.attr``, ``alias.name``, ``ImportFrom.level``): never a node.
_IDENTIFIER_FIELDS = frozenset({"id", "attr", "arg", "name", "asname", "module", "level", "conversion", "is_async", "simple", "rest", "kwd_attrs", "tag", "lineno"})
_NO_CHILDREN = (ast.Constant, ast.Global, ast.Nonlocal)  # a constant's value, the names declared: no nodes


@lru_cache(maxsize=None)
def _child_fields(node_class: type) -> tuple[str, ...]:
    if issubclass(node_class, _NO_CHILDREN):
        return ()
    return tuple(name for name in node_class._fields if name not in _LEAF_FIELDS and name not in _IDENTIFIER_FIELDS)


_CHILDREN_OF: dict[type, Callable[[ast.AST], list[ast.AST]]] = {}


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without contexts and operators, as a list (the walk's hot path)."""
    return (_CHILDREN_OF.get(node.__class__) or _children_of_class(node))(node)


def _children_of_class(example: ast.AST) -> Callable[[ast.AST], list[ast.AST]]:
    of = _CHILDREN_OF[example.__class__] = _children_function(example)
    return of


def _no_children(node: ast.AST) -> list[ast.AST]:
    return []


def _children_function(example: ast.AST) -> Callable[[ast.AST], list[ast.AST]]:
    """A function listing the children of ``example``'s class, written for that class: a
    field is a list in every node of a class or in none (Python's ASDL), so the first node
    seen says which. A single field may hold no node (``None``, ``MatchSingleton.value``'s
    ``True``); in a list, ``None`` stands for an absent item (``Dict.keys`` for ``**d``,
    ``arguments.kw_defaults``)."""
    fields = _child_fields(example.__class__)
    if not fields:
        return _no_children
    lines = ["def children(node):", "    found = []"]
    for name in fields:
        value = getattr(example, name, None)
        if value.__class__ is list:
            lines.append(f"    found.extend(node.{name})")
        else:
            lines += [f"    value = getattr(node, {name!r}, None)", "    if isinstance(value, AST):", "        found.append(value)"]
    lines += ["    if None in found:", "        found = [child for child in found if child is not None]", "    return found"]
    namespace: dict[str, object] = {"AST": ast.AST}
    exec("\n".join(lines), namespace)  # noqa: S102 - code built from ast's own field names
    return namespace["children"]  # type: ignore[return-value]


_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _local_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The names a function binds itself (parameters, assignment and loop targets,
    imports, nested definitions), less those it declares global or nonlocal."""
    arguments = node.args
    bound = {argument.arg for argument in [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg] if argument is not None}
    declared: set[str] = set()
    pending: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
    children = _children
    while pending:  # exact classes, not isinstance: this visits every node of every function
        current = pending.pop()
        node_class = current.__class__
        if node_class is ast.Name:
            if current.ctx.__class__ is not ast.Load:  # type: ignore[attr-defined]
                bound.add(current.id)  # type: ignore[attr-defined]
        elif node_class is ast.Constant or node_class is ast.Lambda:
            pass
        elif node_class in _DEFINITIONS:
            bound.add(current.name)  # type: ignore[attr-defined]
            pending.extend(current.decorator_list)  # type: ignore[attr-defined]
        else:
            if node_class is ast.Global or node_class is ast.Nonlocal:
                declared.update(current.names)  # type: ignore[attr-defined]
            elif node_class is ast.alias:
                bound.add(current.asname or current.name.split(".", 1)[0])  # type: ignore[attr-defined]
            elif node_class is ast.ExceptHandler and current.name:  # type: ignore[attr-defined]
                bound.add(current.name)  # type: ignore[attr-defined]
            pending.extend(children(current))
    return bound - declared


def _is_literal(node: ast.AST) -> bool:
    """A constant or a display of constants (``[1, 2.5]``, ``(3, -1)``): never a tensor."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal(element) for element in node.elts)
    return False


def _target_names(target: ast.AST) -> list[str]:
    """The names an assignment target binds or writes: ``a, (b, c)`` -> a, b, c;
    ``self.x`` -> x; ``d[k]`` -> d; ``*rest`` -> rest."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _target_names(element)]
    name = final_name(target)
    return [name] if name is not None else []


@dataclass(frozen=True)
class Event:
    """Something a rule reports on, with the names it involves."""

    names: frozenset[str]
    grad_off: bool  # inside a no_grad / inference_mode region of its own function
    function: int = 0  # index in :attr:`ScreenFacts.functions` of the function (or lambda) it is in; 0: module level
    in_loop: bool = False  # inside a ``for``/``while`` loop of that same function
    local_target: bool = False  # an accumulation into the function's own local (not a parameter, ``self.x`` or a global)
    root: str | None = None  # a write's: the key of the name or attribute whose storage it changes (``d`` of ``d[0]``, ``d.view(-1)``, ``d.data``; ``anchor`` of ``self.anchor``), if it is one
    by_argument: bool = False  # a write a function makes to an argument (``init.zeros_(w)``, ``out=y``, ``np.copyto(a, v)``), not through the written object itself
    method: str | None = None  # the in-place method of a write by one (``add_`` for ``w.add_(...)``)
    cut: bool = False  # a write to a tensor read through ``.data``, ``.grad`` or ``.detach()`` (views and items of one too): never a leaf that requires grad
    reference: bool = False  # a snapshot by reference: ``best_model = model`` (a snapshot only where the value is a module)
    container: str | None = None  # ``d[k] = v`` / ``d += v``: the key of ``d`` (``self.d``: ``d``), which changes in place only where it is bound to a tensor
    augmented: bool = False  # a write by an augmented assignment (``p -= lr * p.grad``)
    shallow: bool = False  # ``copy.copy(x)``: a snapshot only where ``x`` is a module or already an alias ``detach()``, ``.data`` or ``state_dict()`` took

    @property
    def changes_values(self) -> bool:
        """Not a method that changes flags or shape only (``requires_grad_()``, ``resize_()``:
        not a write for the rules that judge values: TCL004, TCL005, TCL008)."""
        return self.method is None or api.writes_values(self.method)

    @property
    def writes_values_by_method(self) -> bool:
        """A write by an in-place method that changes values (``w.add_(...)``; not
        ``requires_grad_()``): the only write that makes a function train."""
        return self.method is not None and self.changes_values


@dataclass
class FunctionSignals:
    """What one function (or lambda, or the module's own code) shows about how it runs:
    the facts a rule's decision reads per function rather than per file."""

    name: str | None  # None for the module and for lambdas
    is_lambda: bool = False
    parent: int = -1  # index of the enclosing function (-1 for the module)
    evaluates: bool = False  # named like evaluation, or calls ``.eval()`` (itself or a function nested in it)
    steps: bool = False  # calls ``backward()``, ``step()``, ``load_state_dict()`` or ``autograd.grad()`` (itself or nested)
    handed: bool = False  # passed by name to a hook registration or to ``partial`` (which may be registered)
    calls: set[str] = field(default_factory=set)  # final names it calls (itself or nested), aliases resolved
    loop_calls: set[str] = field(default_factory=set)  # those of :attr:`calls` called in a loop (of any function around the call) while grad is on
    parameters: frozenset[str] = frozenset()  # the keys of its parameters


@dataclass(slots=True)
class _Passing:
    """How one call passes its arguments, for matching them to a function's parameters the
    way the semantic model does (``CallSite.argument``: by keyword name, else by position)."""

    positional: tuple[frozenset[str], ...]  # the keys of each positional argument before any ``*xs``
    keywords: tuple[tuple[str, frozenset[str]], ...]  # (name, keys) of each ``name=value``
    spread: frozenset[str]  # ``*xs``, ``**kw`` and the positional arguments after a ``*xs``: any parameter may get them
    bound: bool  # called as an attribute (``obj.m(x)``): perhaps a bound method, whose arguments go one place on


@dataclass(slots=True, eq=False)
class _Signature:
    """One function's (or lambda's) parameters, as keys."""

    positional: tuple[str, ...]  # positional-only and ordinary parameters, in order
    named: dict[str, str]  # every parameter a keyword may name (not ``*args`` or ``**kw``) -> its key
    vararg: str | None  # ``*args``: any positional argument
    kwarg: str | None  # ``**kw``: any keyword argument
    every: tuple[str, ...]

    def receive(self, passing: _Passing, flow: Callable[[str, Iterable[str]], None]) -> None:
        """Flow each argument of ``passing`` into the parameters it may bind: a positional one
        into its place (and the next one, for a bound method's ``self``) or ``*args``; a keyword
        into the parameter of that name or ``**kw``; a spread one into every parameter."""
        if passing.spread:
            for key in self.every:
                flow(key, passing.spread)
        offsets = (0, 1) if passing.bound else (0,)
        count = len(self.positional)
        for place, keys in enumerate(passing.positional):
            if not keys:
                continue
            for offset in offsets:
                if place + offset < count:
                    flow(self.positional[place + offset], keys)
            if self.vararg is not None:
                flow(self.vararg, keys)
        for name, keys in passing.keywords:
            if not keys:
                continue
            key = self.named.get(name)
            if key is not None:
                flow(key, keys)
            if self.kwarg is not None:
                flow(self.kwarg, keys)


@dataclass
class ScreenFacts:
    """What one file shows at a glance (see the module docstring)."""

    identifiers: set[str] = field(default_factory=set)  # every identifier in the file
    called: set[str] = field(default_factory=set)  # final names of callees, aliases resolved
    called_with_data: set[str] = field(default_factory=set)  # callees given a first argument that is not a literal
    chained: set[tuple[str, str]] = field(default_factory=set)  # (method, final name of its receiver): ("detach", "clone")
    stored_attributes: set[str] = field(default_factory=set)  # ``x.attr = ...`` / ``x.attr[i] = ...`` / ``x.attr += ...``
    written: set[str] = field(default_factory=set)  # final names written in place: ``w.add_()``, ``w[i] = v``, ``w += v``
    detach_chain_written: bool = False  # an in-place method called on ``x.detach()`` itself (through views, earlier in-place calls)
    writes: list[Event] = field(default_factory=list)  # each in-place write, with the names of what is written
    accumulations: list[Event] = field(default_factory=list)  # each accumulation (in a loop or not: helpers, per-step methods), with what is added
    clones: list[Event] = field(default_factory=list)  # each ``clone()``, with what is cloned
    snapshots: list[Event] = field(default_factory=list)  # each alias taken: ``.detach()``, ``.data``, ``state_dict()``, ``copy.copy``, ``best = model``
    reference_targets: set[str] = field(default_factory=set)  # ``best = model``: targets assigned a plain name or attribute
    added_to: set[str] = field(default_factory=set)  # final names of containers given an element: ``history.append(v)``
    call_arguments: frozenset[str] = frozenset()  # the keys of every call's arguments
    hook_registrars: frozenset[str] = frozenset()  # hook registrations, and functions of the file registering a parameter (``def add_hook(m, fn): m.register_forward_hook(fn)``)
    compares_identity: bool = False  # ``a is b`` / ``is not`` between two non-constants
    functions: list[FunctionSignals] = field(default_factory=lambda: [FunctionSignals(None)])  # [0] is the module's own code
    flows: dict[str, set[str]] = field(default_factory=dict)  # x -> names whose values may reach x
    binding_sources: dict[str, set[str]] = field(default_factory=dict)  # x -> those of :attr:`flows` that x may be bound to (not only hold as an item)
    noqa: bool = False  # the text holds a ``noqa`` comment (or the word)
    _reaching: dict[Callable[[str], bool], dict[str, bool]] = field(default_factory=dict, repr=False)
    _users_index: dict[str, list[str]] | None = field(default=None, repr=False)
    _training: frozenset[int] | None = field(default=None, repr=False)
    _calling: dict[str, list[int]] | None = field(default=None, repr=False)  # callee name -> functions calling it
    _module_receivers: frozenset[str] | None = field(default=None, repr=False)  # receivers of module-only methods
    _differentiated: frozenset[str] | None = field(default=None, repr=False)  # names ``backward()`` is called on

    @property
    def value_writes(self) -> list[Event]:
        """The writes that may change values (see :attr:`Event.changes_values`)."""
        return [write for write in self.writes if write.changes_values]

    def training_functions(self) -> frozenset[int]:
        """The functions that may train, as ``SemanticModel.trains`` decides (widened): they
        step, write something that may be a parameter by an in-place method (``p.add_(...)``)
        or an augmented assignment (``p -= lr * p.grad``; not ``p[i] = v``, which the model does
        not count), or call a function of the file that trains (by name), themselves or in a
        function nested in them."""
        if self._training is not None:
            return self._training
        functions = self.functions
        training = {index for index, function in enumerate(functions) if function.steps}
        leaves = self.reaching(is_leaf_evidence)
        for write in self.writes:
            if (write.writes_values_by_method or write.augmented) and not leaves.isdisjoint(write.names):
                index = write.function
                while index >= 0 and index not in training:
                    training.add(index)
                    index = functions[index].parent
        while True:
            names = {functions[index].name for index in training}
            grown = {index for index, function in enumerate(functions) if index not in training and not function.calls.isdisjoint(names)}
            if not grown:
                break
            training |= grown
        self._training = frozenset(training)
        return self._training

    def home(self, index: int) -> int:
        """The function whose frame runs the code of function ``index``: a lambda's is the
        enclosing function's (the module's, 0, at the top level)."""
        functions = self.functions
        while functions[index].is_lambda:
            index = functions[index].parent
            if index < 0:
                return 0
        return index

    def callers(self, index: int) -> set[int]:
        """The functions that may call function ``index`` by its name, directly or through
        other functions (by name: methods of any class), ``index`` included."""
        if self._calling is None:
            calling: dict[str, list[int]] = {}
            for other, function in enumerate(self.functions):
                for name in function.calls:
                    calling.setdefault(name, []).append(other)
            self._calling = calling
        found = {index}
        pending = [index]
        while pending:
            name = self.functions[pending.pop()].name
            for other in self._calling.get(name, ()) if name is not None else ():
                if other not in found:
                    found.add(other)
                    home = self.home(other)
                    found.add(home)
                    pending.append(home)
        return found

    def written_into(self, events: list[Event]) -> bool:
        """Whether an in-place write may change what one of ``events`` took its value from
        (TCL004's write changes), in the same function's frame or in one that calls it (a
        helper returns what it made): a written name whose value may flow into the event's
        names (``w.add_()`` after ``w.detach()``; ``p`` for ``v = p.view(-1); v.detach()``),
        or a loop variable over ``parameters()`` the event's names flow into
        (``for p in model.parameters(): p.add_(...)`` after ``model.state_dict()``)."""
        written: dict[int, set[str]] = {}
        for write in self.value_writes:
            written.setdefault(self.home(write.function), set()).update(write.names)
        if not written:
            return False
        taken: dict[int, set[str]] = {}
        for event in events:
            taken.setdefault(self.home(event.function), set()).update(event.names)
        for index, names in taken.items():
            met: set[str] = set()
            for caller in self.callers(index):
                met |= written.get(caller, set())
            if not met:
                continue
            if not self.reaching_from(met).isdisjoint(names):
                return True
            loop_variables = {key for key in met if not _PARAMETER_LOOP_KEYS.isdisjoint(self.flows.get(key, ()))}
            if loop_variables and not self.reaching_from(names).isdisjoint(loop_variables):
                return True
        return False

    def may_train(self) -> bool:
        """Whether something may change a module, its parameters or an optimizer other than
        an in-place write (TCL004's other changes): a function that trains (it steps, calls
        ``backward()`` or ``load_state_dict()``, writes a parameter, calls one that does), a
        call named like training (``train_one_epoch(...)``, ``agent.learn()``), or a call given
        an optimizer (``run(model, opt)``)."""
        if self.training_functions() or any(naming.is_training_call(name) for name in self.called):
            return True
        return any(map(_optimizer_evidence, self.call_arguments)) or self.reaches(self.call_arguments, _optimizer_evidence)

    def keeps_for_later(self) -> bool:
        """Whether a snapshot may be stored to be kept as such (TCL004 reports those without a
        change): a state dict taken, or an attribute or container named like a snapshot or a
        copy of a model (``self.best``, ``history.append(...)``, ``self.target_net = ...``)."""
        if not api.STATE_DICT_METHODS.isdisjoint(self.called):
            return True
        return any(naming.is_snapshot_name(name) or naming.is_model_copy_name(name) for name in self.stored_attributes | self.written | self.added_to)

    def calls_any(self, names: Iterable[str]) -> bool:
        return not self.called.isdisjoint(names)

    def mentions_any(self, names: Iterable[str]) -> bool:
        return not self.identifiers.isdisjoint(names)

    def reaching(self, evidence: Callable[[str], bool]) -> "Reached":
        """Every key whose value may come from a key that ``evidence`` accepts (those
        included), as a set answering ``in`` and ``isdisjoint``. Keys are names (``x``, ``3@x``
        for a function's local) or ``.method`` for a method called. Each key asked about is
        decided by a search back through :attr:`flows` (the keys its value may come from),
        remembered per predicate: the rules ask about a few keys of a graph of thousands."""
        # A method of these facts is remembered under its function: the bound method as a
        # key would make a reference cycle (facts -> answers -> method -> facts).
        cache_key = evidence.__func__ if getattr(evidence, "__self__", None) is self else evidence  # type: ignore[attr-defined]
        known = self._reaching.get(cache_key)
        if known is None:
            known = self._reaching[cache_key] = {}
        return Reached(evidence, self.flows, self._users(), known)

    def reaching_from(self, keys: Iterable[str]) -> frozenset[str]:
        """``reaching(keys.__contains__)`` without a pass over every key of the graph (and
        uncached: each set of keys is asked about once)."""
        users = self._users()
        return _spread([key for key in set(keys) if key in users], users)

    def _users(self) -> dict[str, list[str]]:
        """Every key of the graph (events' keys included), with the keys its values flow into."""
        if self._users_index is None:
            users: dict[str, list[str]] = {}
            for target, sources in self.flows.items():
                users.setdefault(target, [])
                for source in sources:
                    users.setdefault(source, []).append(target)
            for events in (self.writes, self.accumulations, self.clones, self.snapshots):
                for event in events:
                    for key in event.names:
                        users.setdefault(key, [])
            self._users_index = users
        return self._users_index

    def reaches(self, names: Iterable[str], evidence: Callable[[str], bool]) -> bool:
        """Whether a value named by any of ``names`` may come from ``evidence``."""
        return not self.reaching(evidence).isdisjoint(names)

    def carries_history(self, key: str) -> bool:
        """Evidence of autograd history the semantic model may find (see analysis/evaluate.py):
        a leaf (:func:`is_leaf_evidence`), a hook's parameters, the result of calling
        something that may be a module or a loss (:func:`is_module_like`, through flows:
        ``net = Net(); out = net(x)``), or a name ``backward()`` is called on (``err.backward()``)."""
        if key.startswith(CALLED) and key[len(CALLED) :] in self.reaching(self._module_by_name_or_use):
            return True
        if key.startswith(HANDED_TO):
            return key[len(HANDED_TO) :] in self.hook_registrars
        if self._differentiated is None:
            self._differentiated = frozenset(receiver for method, receiver in self.chained if method == "backward")
        return is_leaf_evidence(key) or (bool(self._differentiated) and bare(key) in self._differentiated)

    def _module_by_name_or_use(self, key: str) -> bool:
        """A module by its name (:func:`is_module_like`) or by what it is used as: a receiver of
        a method only modules have (``renderer.fine.parameters()``: the model reads an untyped
        attribute ``fine`` as a module, SemanticModel.class_attribute)."""
        return is_module_like(key) or bare(key) in self._module_receiver_names()

    def _module_receiver_names(self) -> frozenset[str]:
        if self._module_receivers is None:
            self._module_receivers = frozenset(receiver for method, receiver in self.chained if method in api.MODULE_USE_METHODS)
        return self._module_receivers

    def may_be_module(self, key: str) -> bool:
        """Evidence the semantic model may read a value as a module (Kind.MODULE): a module-like
        name or class (:func:`is_module_like`), what :meth:`carries_history` accepts (the result
        of calling a module class of the file, a hook's parameters), or a receiver of a method
        only modules have (``x.parameters()``: what it is used as)."""
        return self._module_by_name_or_use(key) or self.carries_history(key)

    def flows_between(self, first: Iterable[str], second: Iterable[str]) -> bool:
        """Whether a value may flow from a key of ``first`` to one of ``second``, or back."""
        first, second = frozenset(first), frozenset(second)
        if not first or not second:
            return False
        return bool(self.reaching_from(first) & second) or bool(self.reaching_from(second) & first)

    def any_event(self, events: list[Event], evidence: Callable[[str], bool], *, with_grad: bool = False) -> bool:
        """Whether one of ``events`` (outside no_grad when ``with_grad``) involves a name reaching ``evidence``."""
        reached = None
        for event in events:
            if with_grad and event.grad_off:
                continue
            if reached is None:
                reached = self.reaching(evidence)
            if self.event_reaches(event, reached, evidence):
                return True
        return False

    def event_reaches(self, event: Event, reached: frozenset[str], evidence: Callable[[str], bool], names: Iterable[str] | None = None) -> bool:
        """Whether ``event`` involves a key of ``reached`` (what ``evidence`` reaches):
        one of ``names`` (default: its own). An item assignment ``d[k] = v`` changes a tensor
        only where ``d`` itself is one: what ``d`` may be bound to must reach the evidence
        (items put into ``d`` do not make ``d`` a tensor)."""
        container = event.container
        if container is None:
            return not reached.isdisjoint(event.names if names is None else names)
        return evidence(container) or not reached.isdisjoint(self.binding_sources.get(container, ()))


class Reached:
    """:meth:`ScreenFacts.reaching`'s answer: the keys of ``graph`` some key accepted by
    ``evidence`` may flow into. A key is looked up by a search back through ``flows``
    (target -> sources); ``known`` keeps what the searches decided, shared by every answer
    for the same predicate: a successful search decides the keys on its way to the accepted
    key, a failed one every key it met (none of them has an accepted key upstream)."""

    __slots__ = ("_evidence", "_flows", "_graph", "_known")

    def __init__(self, evidence: Callable[[str], bool], flows: dict[str, set[str]], graph: dict[str, list[str]], known: dict[str, bool]) -> None:
        self._evidence = evidence
        self._flows = flows
        self._graph = graph
        self._known = known

    def __contains__(self, key: object) -> bool:
        if key not in self._graph:
            return False
        known = self._known
        found = known.get(key)  # type: ignore[call-overload]
        if found is not None:
            return found
        evidence, flows = self._evidence, self._flows
        reached_from: dict[object, object] = {key: None}  # each key met -> the key it was met from
        pending = [key]
        while pending:
            current = pending.pop()
            state = known.get(current)  # type: ignore[call-overload]
            if state is False:
                continue
            if state or evidence(current):  # type: ignore[arg-type]
                while current is not None:  # every key on the way back to ``key`` is reached too
                    known[current] = True  # type: ignore[index]
                    current = reached_from[current]
                return True
            for source in flows.get(current, ()):  # type: ignore[call-overload]
                if source not in reached_from:
                    reached_from[source] = current
                    pending.append(source)
        for current in reached_from:
            known[current] = False  # type: ignore[index]
        return False

    def isdisjoint(self, keys: Iterable[str]) -> bool:
        return not any(key in self for key in keys)


def _spread(pending: list[str], users: dict[str, list[str]]) -> frozenset[str]:
    """``pending`` and every key their values flow into, through ``users``."""
    reached = set(pending)
    while pending:
        for user in users[pending.pop()]:
            if user not in reached:
                reached.add(user)
                pending.append(user)
    return frozenset(reached)


@lru_cache(maxsize=1 << 16)
def is_module_like(key: str) -> bool:
    """Evidence that a value is a module, a loss function or a criterion: *calling* it (or
    what it flows into) gives a module output or a loss with history. An ``nn.<Class>``,
    ``nn.Module`` subclasses, ``forward``, names the model reads as modules or losses
    (``model``, ``encoder``, ``criterion``, ``F.mse_loss``), model methods (``encode``)."""
    if key.startswith("nn."):
        return api.is_module_class(f"torch.{key}")
    return _module_like_name(bare(key))


@lru_cache(maxsize=65536)
def _module_like_name(name: str) -> bool:
    return (
        name in _MODULE_LIKE_NAMES
        or naming.is_module_name(name)
        or naming.is_modules_name(name)  # ``for m in models: m(x)``: what iterating it gives, called
        or naming.is_loss_callee(name)
        or naming.is_model_method(name)
        or "loss" in name.lower()
    )


@lru_cache(maxsize=1 << 16)
def is_leaf_evidence(key: str) -> bool:
    """Evidence of a leaf that requires grad: ``nn.Parameter``, ``.parameters()``,
    ``requires_grad=True``, ``param_groups``, or a ``.weight``/``.bias`` attribute (an
    attribute only: a variable called ``weight`` is not one). ``parameters``,
    ``named_parameters`` and ``requires_grad_`` count only as a method called (or a
    function: ``()parameters``): ``inspect.signature(f).parameters`` holds no tensors."""
    name = bare(key)
    if name in api.PARAMETER_ATTRIBUTES:
        return "@" not in key and not key.startswith((".", CALLED))
    if name in _LEAF_METHODS:
        return key.startswith((".", CALLED))
    return name in api.LEAF_EVIDENCE_NAMES


@lru_cache(maxsize=1 << 16)
def is_detached_evidence(key: str) -> bool:
    """Evidence of a detached alias: ``detach()`` or ``.data``; not a variable that is merely
    called ``data`` (``3@data``)."""
    if "@" in key and not key.startswith(CALLED):
        return False
    name = bare(key)
    return name in api.DETACHING_METHODS or name == "data"


_LEAF_METHODS = api.PARAMETER_ITERATORS | api.NAMED_PARAMETER_ITERATORS | frozenset({"requires_grad_"})
_MODULE_LIKE_NAMES = api.LOSS_FUNCTION_NAMES | frozenset({"Module", "forward", "__call__", "criterion", "objective"})
_SNAPSHOT_METHODS = api.DETACHING_METHODS | api.STATE_DICT_METHODS
_SNAPSHOT_FUNCTIONS = api.short_names(api.SHALLOW_COPY_FUNCTIONS)
_SHARING_CONSTRUCTORS = api.short_names(api.ALIASING_CONSTRUCTORS)
_HOOK_REGISTRATIONS = frozenset(api.MODULE_HOOKS) | frozenset(api.TENSOR_HOOKS)
_PARAMETER_LOOP_KEYS = frozenset("." + name for name in api.PARAMETER_ITERATORS | api.NAMED_PARAMETER_ITERATORS)


@lru_cache(maxsize=1 << 16)
def _optimizer_evidence(key: str) -> bool:
    """A name the model may read as an optimizer (``opt``, ``torch.optim``'s classes through their imports)."""
    return naming.is_optimizer_name(bare(key))
HANDED_TO = "handed-to:"  # key prefix: what a callback's parameters may receive from the call it is handed to


def _under_nn(node: ast.AST) -> bool:
    """``nn``, ``torch.nn``, ``torch.nn.modules.conv``: an attribute of it may be an nn class."""
    while isinstance(node, ast.Attribute):
        if node.attr == "nn":
            return True
        node = node.value
    return isinstance(node, ast.Name) and node.id == "nn"


class _Collector(ast.NodeVisitor):
    """One walk: identifiers, calls, the flow graph and the events (see ScreenFacts)."""

    # ``ast.NodeVisitor``'s dispatch, with the handler looked up once per node class and
    # children from :func:`_children` (no visits of contexts and operators).
    def visit(self, node: ast.AST) -> None:
        (self._handlers.get(node.__class__) or self._handler(node.__class__))(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        # ``visit`` and ``_children`` inlined: this runs for every node of every file.
        handlers = self._handlers
        for child in (_CHILDREN_OF.get(node.__class__) or _children_of_class(node))(node):
            (handlers.get(child.__class__) or self._handler(child.__class__))(self, child)

    @classmethod
    def _handler(cls, node_class: type) -> Callable[["_Collector", ast.AST], None]:
        handler = cls._handlers[node_class] = getattr(cls, "visit_" + node_class.__name__, _Collector.generic_visit)
        return handler

    def visit_Constant(self, node: ast.Constant) -> None:
        """A constant has nothing to collect (``NodeVisitor``'s version handles old node types)."""

    _handlers: dict[type, Callable[["_Collector", ast.AST], None]] = {}

    def __init__(self) -> None:
        self.facts = ScreenFacts()
        self._aliases: dict[str, set[str]] = {}  # ``T = torch.tensor``, ``import torch.tensor as T``: what a callee may be
        self._raw_calls: list[tuple[str, bool]] = []  # (final callee name, has a non-literal first argument)
        self._call_sites: list[tuple[str, frozenset[str], _Passing]] = []  # (callee, keys of its arguments, how it passes them)
        self._signatures: dict[str, list[_Signature]] = {}  # function name -> the parameters of each function of that name
        self._parameters: dict[str, list[str]] = {}  # function name -> keys of all their parameters (made from _signatures in finish)
        self._grad_off = 0
        self._function: list[tuple[str, ...]] = []  # keys of the enclosing functions (their returns flow into them)
        self._classes: list[tuple[str, ...]] = []  # keys of the enclosing classes
        self._scopes: list[tuple[str, set[str]]] = []  # (key prefix, local names) of the enclosing functions
        self._scope_count = 0
        self._class_body = False  # directly in a class body (its names are attributes)
        self._memo: dict[int, frozenset[str]] = {}  # id(expression) -> its keys, in the current scope
        self._keys: dict[str, str] = {}  # name -> its key, in the current scope
        self._lambda_signatures: dict[int, _Signature] = {}  # id(lambda) -> its parameters
        self._lambda_names: list[tuple[str, ast.Lambda]] = []  # ``f = lambda x: ...``: called as ``f``
        self._lambda_context: list[tuple[ast.Lambda, frozenset[str]]] = []  # a lambda handed to a call
        self._handed: list[tuple[str, frozenset[str]]] = []  # a function handed to a call, by name
        self._made_by: list[tuple[str, frozenset[str]]] = []  # a call's result handed to a call: the function it may return
        self._signals: list[int] = [0]  # indices in facts.functions of the enclosing functions, innermost last
        self._loop_depth: list[int] = [0]  # per enclosing function: how many of its loops are around
        self._function_calls: list[tuple[str, tuple[int, ...], bool]] = []  # (callee, the functions the call is in, in a loop with grad on)
        self._namedtuples: dict[str, set[str]] = {}  # ``T = namedtuple("T", "a b")``: T -> its fields
        self._lookups: dict[str, frozenset[str]] = {}  # ``m = getattr(obj, name)``: m's key -> the keys of ``name``
        self._dispatches: list[tuple[frozenset[str], frozenset[str], tuple[int, ...]]] = []  # (keys of the name, keys of the arguments, the functions it is in)
        self._string_parts: set[str] = set()  # literal parts of the file's f-strings and string concatenations
        self._keeping = 0  # inside a value that may be kept (see _visit_kept)
        self._registered: set[str] = set()  # the keys of what hook registrations are given
        self._display_bound: set[str] = set()  # keys assigned a display or a constant somewhere (``meta = {}``, ``self.cache = []``)
        self._bound_otherwise: set[str] = set()  # keys bound anything else anywhere (parameters, imports, other values, loop targets ...)
        self._display_targets: set[int] = set()  # id() of the targets of those display assignments

    # -- keys -----------------------------------------------------------------------------
    def _key(self, name: str) -> str:
        """A name's node in the flow graph: a function's local is its own node (``3@x``)."""
        found = self._keys.get(name)
        if found is None:
            found = self._keys[name] = self._scoped_key(name)
        return found

    def _scoped_key(self, name: str) -> str:
        for prefix, local in reversed(self._scopes):
            if name in local:
                return prefix + name
        return MODULE_SCOPE + name

    def _target_keys(self, target: ast.AST) -> list[str]:
        """The keys an assignment target binds or writes: ``a, (b, c)`` -> the names' keys;
        ``self.x`` -> ``x``; ``d[k]`` and ``*rest`` -> their base's key."""
        if isinstance(target, (ast.Tuple, ast.List)):
            return [key for element in target.elts for key in self._target_keys(element)]
        if isinstance(target, (ast.Subscript, ast.Starred)):
            return self._target_keys(target.value)
        if isinstance(target, ast.Name):
            if self._class_body:
                return [self._key(target.id), target.id]  # a class attribute: read as ``self.name``
            return [self._key(target.id)]
        if isinstance(target, ast.Attribute):
            return [target.attr]
        return []

    def keys_in(self, node: ast.AST | None) -> frozenset[str]:
        """The flow-graph keys of an expression: its names (scoped), attribute names,
        ``.method`` for each method called, keyword names and identifier-like strings
        (``group["params"]``, ``getattr(self, "h0")``).

        Computed bottom-up once per node (the walk asks again for sub-expressions); the
        memo is dropped when the scope changes, since names resolve per scope.
        """
        if node is None:
            return _EMPTY
        memo = self._memo
        found = memo.get(id(node))
        if found is not None:
            return found
        found = self._leaf_keys(node)
        if found is not None:
            memo[id(node)] = found
            return found
        stack: list[tuple[ast.AST, list[ast.AST] | None]] = [(node, None)]
        while stack:
            current, kids = stack.pop()
            if id(current) in memo:
                continue
            if kids is None:
                kids = _children(current)
                stack.append((current, kids))
                for child in kids:
                    if id(child) not in memo:
                        leaf = self._leaf_keys(child)
                        if leaf is None:
                            stack.append((child, None))
                        else:
                            memo[id(child)] = leaf
                continue
            own = self._own_keys(current)
            if current.__class__ is ast.Attribute and current.attr not in _PASSING_ATTRIBUTES:
                children = []  # ``a.name`` is not made from ``a`` (as ``a.T`` or ``a.data`` are)
            elif current.__class__ is ast.Call and _gives_no_tensor(current):
                children = [memo[id(current.func)]]  # ``x.size(0)``, ``len(xs)``: a number, made from neither
            else:
                children = [memo[id(child)] for child in kids]
                if isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute):
                    children.append(memo[id(current.func.value)])  # a method's result is made from its receiver
            if not children:
                result = frozenset(own) if own else _EMPTY
            elif len(children) == 1 and not own:
                result = children[0]
            else:
                result = frozenset().union(*children, own)
            memo[id(current)] = result
        return memo[id(node)]

    def _leaf_keys(self, node: ast.AST) -> frozenset[str] | None:
        """:meth:`keys_in` of a name or a constant (most nodes), without the general walk;
        None for any other node."""
        node_class = node.__class__
        if node_class is ast.Name:
            return frozenset((self._key(node.id),))  # type: ignore[attr-defined]
        if node_class is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            return frozenset((value,)) if value.__class__ is str and value.isidentifier() else _EMPTY
        return None

    def _own_keys(self, node: ast.AST) -> tuple[str, ...]:
        if isinstance(node, ast.Name):
            return (self._key(node.id),)
        if isinstance(node, ast.Attribute):
            return (node.attr, f"nn.{node.attr}") if _under_nn(node.value) else (node.attr,)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                if node.func.attr == "step" and node.args and isinstance(node.args[0], ast.Name):
                    # ``opt.step(closure)`` returns what ``closure()`` returns
                    return ("." + node.func.attr, CALLED + node.func.attr, CALLED + self._key(node.args[0].id))
                return ("." + node.func.attr, CALLED + node.func.attr)
            if isinstance(node.func, ast.Name):
                return (CALLED + self._key(node.func.id),)
            return ()
        if isinstance(node, ast.keyword):
            # ``requires_grad=True`` makes a leaf; other keywords say nothing a value does not.
            return (REQUIRES_GRAD,) if node.arg == "requires_grad" and isinstance(node.value, ast.Constant) and node.value.value is True else ()
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            return (node.value,)
        return ()

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self._scope_count += 1
        self._scopes.append((f"{self._scope_count}@", _local_names(node)))
        arguments = node.args
        prefix = self._scopes[-1][0]
        self._bound_otherwise.update(prefix + argument.arg for argument in [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg] if argument is not None)
        self._memo.clear()
        self._keys.clear()
        parent = self._signals[-1] if len(self._signals) > 1 else -1
        if isinstance(node, ast.Lambda):
            signals = FunctionSignals(None, is_lambda=True, parent=parent)
        else:
            signals = FunctionSignals(node.name, parent=parent, evaluates=naming.is_evaluation_name(node.name))
        self._signals.append(len(self.facts.functions))
        self.facts.functions.append(signals)
        self._loop_depth.append(0)

    def _leave(self) -> None:
        self._scopes.pop()
        self._memo.clear()
        self._keys.clear()
        self._signals.pop()
        self._loop_depth.pop()

    # -- graph and events ---------------------------------------------------------------
    def _flow(self, target: str, sources: Iterable[str], element: bool = False) -> None:
        """``sources`` may reach ``target``: bound to it, or (``element``) put into it as an
        item (``d[k] = v``, ``xs.append(v)``), which leaves what ``target`` itself is as it was."""
        self.facts.flows.setdefault(target, set()).update(sources)
        if not element:
            self.facts.binding_sources.setdefault(target, set()).update(sources)

    def _flow_names(self, target: ast.AST, sources: Iterable[str], element: bool = False) -> None:
        """Into every key a target binds or writes (the base of a subscript gets an element)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for part in target.elts:
                self._flow_names(part, sources, element)
            return
        element = element or isinstance(target, ast.Subscript)
        for key in self._target_keys(target):
            self._flow(key, sources, element)

    def _event(
        self,
        events: list[Event],
        keys: frozenset[str],
        target: ast.AST | None = None,
        root: str | None = None,
        by_argument: bool = False,
        method: str | None = None,
        cut: bool = False,
        container: str | None = None,
        reference: bool = False,
        shallow: bool = False,
        augmented: bool = False,
    ) -> None:
        local = target is not None and self._is_local_target(target)
        events.append(Event(keys, self._grad_off > 0, self._signals[-1], self._loop_depth[-1] > 0, local, root, by_argument, method, cut, reference, container, augmented, shallow))

    def _visit_kept(self, node: ast.AST | None) -> None:
        """Visit a value that may be kept beyond its statement: assigned, returned, yielded,
        added to a container. TCL004 only judges snapshots kept so (see
        AliasedSnapshot._keep): an alias used on the spot (``f(w.detach())``,
        ``w.data.add_(1)``) is no snapshot."""
        if node is None:
            return
        self._keeping += 1
        self.visit(node)
        self._keeping -= 1

    def _snapshot(self, keys: frozenset[str], shallow: bool = False) -> None:
        """A snapshot taken, when its value may be kept (see :meth:`_visit_kept`)."""
        if self._keeping:
            self._event(self.facts.snapshots, keys, shallow=shallow)

    def _is_local_target(self, target: ast.AST) -> bool:
        """Whether an accumulation's target is held by the current function's own local (not
        a parameter, ``self.total``, a global or a closure's name): outside a loop, TCL009
        only reports accumulations that outlive the call (see its ``_called_per_step``)."""
        root = target
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not isinstance(root, ast.Name) or not self._scopes:
            return True  # no name to outlive the call, or the module's own code
        key = self._key(root.id)
        return key.startswith(self._scopes[-1][0]) and key not in self.facts.functions[self._signals[-1]].parameters

    def _write(self, receiver: ast.AST, by_argument: bool = False, method: str | None = None, container: str | None = None, augmented: bool = False) -> None:
        name = final_name(receiver)
        if name is not None:
            self.facts.written.add(name)
        root = _written_tensor(receiver)
        base = receiver
        while isinstance(base, ast.Subscript):
            base = base.value  # ``w[ids] *= f`` writes ``w``, whatever the index holds
        root_key = self._key(root.id) if isinstance(root, ast.Name) else root.attr if isinstance(root, ast.Attribute) else None
        self._event(self.facts.writes, self.keys_in(base), root=root_key, by_argument=by_argument, method=method, cut=_cut_from_autograd(receiver), container=container, augmented=augmented)

    # -- scopes ---------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.facts.identifiers.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        # Its returns are what calling it gives: ``()f`` (``f()``, ``obj.f()``); a property's
        # are what reading it gives too (``obj.f``).
        callers: tuple[str, ...] = (CALLED + node.name, CALLED + self._key(node.name))
        if any("property" in (final_name(decorator) or "") for decorator in node.decorator_list):
            callers += (node.name,)
        if node.returns is not None:
            self.visit(node.returns)
            for key in callers:
                self._flow(key, self.keys_in(node.returns))
        self._enter(node)
        parameters = self._parameter_keys(node.args)
        self._signatures.setdefault(node.name, []).append(_signature(node.args, parameters))
        self.facts.functions[self._signals[-1]].parameters = frozenset(parameters)
        if self._classes and parameters and not any(final_name(d) == "staticmethod" for d in node.decorator_list):
            self._flow(parameters[0], self._classes[-1])  # ``self`` / ``cls``: an instance of the class
        step = _EPOCH_END_STEPS.get(node.name)
        if step is not None and self._classes and len(parameters) > 1:
            self._flow(parameters[1], {CALLED + step})  # ``validation_epoch_end(self, outputs)``: what the steps returned
        if node.name in ("forward", "__call__") and self._classes:
            for key in self._classes[-1]:
                self._flow(key, {node.name})  # calling an instance runs forward()
        decorated_off = any(not _GRAD_OFF_WORDS.isdisjoint(map(bare, self.keys_in(decorator))) for decorator in node.decorator_list)
        self._function.append(callers)
        self._visit_body(node.body, grad_off=1 if decorated_off else 0, class_body=False)
        self._function.pop()
        self._leave()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def _visit_body(self, body: list[ast.stmt], *, grad_off: int, class_body: bool) -> None:
        """A function's or class's body: grad mode starts afresh (a body runs when called), and
        names bound directly in a class body are attributes."""
        outer_grad, outer_class = self._grad_off, self._class_body
        self._grad_off, self._class_body = grad_off, class_body
        for statement in body:
            self.visit(statement)
        self._grad_off, self._class_body = outer_grad, outer_class

    def _parameter_keys(self, arguments: ast.arguments) -> list[str]:
        keys = []
        for argument in [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]:
            if argument is not None:
                key = self._key(argument.arg)
                keys.append(key)
                self.facts.identifiers.add(argument.arg)
                if argument.annotation is not None:
                    self._flow(key, self.keys_in(argument.annotation))
        return keys

    def visit_arguments(self, node: ast.arguments) -> None:
        for default in [*node.defaults, *node.kw_defaults]:
            if default is not None:
                self.visit(default)
        for argument in [*node.posonlyargs, *node.args, node.vararg, *node.kwonlyargs, node.kwarg]:
            if argument is not None and argument.annotation is not None:
                self.visit(argument.annotation)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self._enter(node)
        self._lambda_signatures[id(node)] = _signature(node.args, self._parameter_keys(node.args))
        grad_off = self._grad_off
        self._grad_off = 0
        self._visit_kept(node.body)  # what a lambda returns
        self._grad_off = grad_off
        self._leave()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.facts.identifiers.add(node.name)
        keys = (node.name, self._key(node.name))  # ``mod.Net`` and ``Net``
        for expr in [*node.bases, *(keyword.value for keyword in node.keywords), *node.decorator_list]:
            self.visit(expr)
            for key in keys:
                self._flow(key, self.keys_in(expr))
        if any(final_name(base) == "NamedTuple" for base in node.bases):
            # ``class T(NamedTuple)``: its annotated names are fields, holding what ``T(...)`` passes
            fields = {statement.target.id for statement in node.body if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)}
            self._namedtuples.setdefault(node.name, set()).update(fields)
        self._classes.append(keys)
        self._visit_body(node.body, grad_off=0, class_body=True)
        self._classes.pop()

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
                self._flow_names(item.optional_vars, self.keys_in(item.context_expr))
        outer = self._grad_off
        switches = {bare(key) for item in node.items for key in self.keys_in(item.context_expr)}
        if not switches.isdisjoint(_GRAD_ON_WORDS):
            self._grad_off = 0  # ``enable_grad()`` / ``set_grad_enabled(...)``: it may be on again
        elif not switches.isdisjoint(_GRAD_OFF_WORDS):
            self._grad_off += 1
        for statement in node.body:
            self.visit(statement)
        self._grad_off = outer

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    # -- loops and comprehensions -----------------------------------------------------------
    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._loop_depth[-1] += 1  # the whole loop statement, as the analysis counts it (analysis/flow.py)
        self.visit(node.iter)
        self.visit(node.target)
        self._flow_names(node.target, self.keys_in(node.iter))
        for statement in [*node.body, *node.orelse]:
            self.visit(statement)
        self._loop_depth[-1] -= 1

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_While(self, node: ast.While) -> None:
        self._loop_depth[-1] += 1
        self.generic_visit(node)
        self._loop_depth[-1] -= 1

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.generic_visit(node)
        self._flow_names(node.target, self.keys_in(node.iter))

    # -- names --------------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        self.facts.identifiers.add(node.id)
        if node.ctx.__class__ is ast.Store and id(node) not in self._display_targets:
            self._bound_otherwise.add(self._key(node.id))
            if self._class_body:
                self._bound_otherwise.add(node.id)  # a class attribute: read as ``self.name``

    def _bound(self, name: str | None) -> None:
        """A name bound by something other than an assignment target (an ``except ... as``,
        a ``match`` capture): not a display."""
        if name is not None:
            self._bound_otherwise.add(self._key(name))

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bound(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._bound(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._bound(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._bound(node.rest)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.facts.identifiers.add(node.attr)
        if node.ctx.__class__ is ast.Store and id(node) not in self._display_targets:
            self._bound_otherwise.add(node.attr)
        if node.attr == "data" and isinstance(node.ctx, ast.Load):
            self._snapshot(self.keys_in(node.value))  # ``w.data`` shares ``w``'s storage
        elif node.attr == "grad" and isinstance(node.value, ast.Name):
            self._flow(self._key(node.value.id), (REQUIRES_GRAD,))  # ``p.grad``: the model reads ``p`` as a leaf
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is not None:
            self.facts.identifiers.add(node.arg)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._imported(alias, alias.name.split("."))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        package = (node.module or "").split(".")
        for alias in node.names:
            self._imported(alias, [*package, alias.name, *((f"nn.{alias.name}",) if "nn" in package else ())])

    def _imported(self, alias: ast.alias, sources: list[str]) -> None:
        bound = alias.asname or alias.name.split(".", 1)[0]
        self.facts.identifiers.update((bound, alias.name.rsplit(".", 1)[-1]))
        self._flow(self._key(bound), sources)
        self._bound_otherwise.add(self._key(bound))
        self._aliases.setdefault(bound, set()).update(alias.name.split("."))

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and self._function:
            for key in self._function[-1]:
                self._flow(key, self.keys_in(node.value))
        self._visit_kept(node.value)

    def _yielded(self, node: ast.Yield | ast.YieldFrom) -> None:
        if node.value is not None and self._function:
            for key in self._function[-1]:
                self._flow(key, self.keys_in(node.value))
        self._visit_kept(node.value)

    visit_Yield = visit_YieldFrom = _yielded  # type: ignore[assignment]

    # -- calls ----------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        callee = final_name(node.func)
        arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
        passing = self._passing(node)
        argument_keys = frozenset().union(*passing.positional, *(keys for _, keys in passing.keywords), passing.spread)
        looked_up = _looked_up_name(node.func)
        if looked_up is not None or isinstance(node.func, ast.Name) and self._key(node.func.id) in self._lookups:
            # ``getattr(obj, name)(...)``: whatever functions the name's strings name (see _dispatched)
            name_keys = self.keys_in(looked_up) if looked_up is not None else self._lookups[self._key(node.func.id)]  # type: ignore[union-attr]
            self._dispatches.append((name_keys, argument_keys, tuple(self._signals)))
        if callee is not None:
            with_data = bool(arguments) and not _is_literal(arguments[0]) and not _op_overload(node.func)
            self._raw_calls.append((callee, with_data))
            if callee == "map" and len(node.args) > 1:
                mapped = final_name(node.args[0])  # ``map(torch.tensor, xs)`` calls torch.tensor with data
                if mapped is not None:
                    self._raw_calls.append((mapped, not _is_literal(node.args[1])))
            self._function_calls.append((callee, tuple(self._signals), not self._grad_off and any(self._loop_depth)))
            self._call_sites.append((callee, argument_keys, passing))
            self._callbacks(callee, node, arguments, argument_keys)
            if callee in _HOOK_REGISTRATIONS:
                self._registered |= argument_keys
            if isinstance(node.func, ast.Attribute):
                self._method_call(callee, node, argument_keys)
            elif callee == "clone":
                self._event(self.facts.clones, argument_keys)  # ``torch.clone`` imported by name
            elif callee in _SNAPSHOT_FUNCTIONS:
                self._snapshot(argument_keys, shallow=True)  # ``from copy import copy``
            self._value_writes(callee, node)
            if callee == "isinstance" and len(node.args) == 2:
                self._flow_names(node.args[0], self.keys_in(node.args[1]))
            if callee in _BY_STRING:
                for argument in arguments:
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str) and argument.value.isidentifier():
                        self.facts.identifiers.add(argument.value)
                        self._flow(argument.value, argument_keys | {callee})
                        self._bound_otherwise.add(argument.value)
        if callee in _ADDERS and isinstance(node.func, ast.Attribute):
            self.visit(node.func)
            for argument in (*node.args, *node.keywords):
                self._visit_kept(argument)  # ``history.append(w.detach())``
            return
        self.generic_visit(node)

    def _passing(self, node: ast.Call) -> _Passing:
        bound = node.func.__class__ is ast.Attribute
        if not node.keywords and not any(argument.__class__ is ast.Starred for argument in node.args):
            return _Passing(tuple(map(self.keys_in, node.args)), (), _EMPTY, bound)  # the common case
        positional: list[frozenset[str]] = []
        spread: set[str] = set()
        unplaced = False  # from a ``*xs`` on, positions are unknown
        for argument in node.args:
            unplaced = unplaced or argument.__class__ is ast.Starred
            if unplaced:
                spread |= self.keys_in(argument)
            else:
                positional.append(self.keys_in(argument))
        keywords = []
        for keyword in node.keywords:
            if keyword.arg is None:
                spread |= self.keys_in(keyword.value)  # ``**kw``
            else:
                keywords.append((keyword.arg, self.keys_in(keyword.value)))
        return _Passing(tuple(positional), tuple(keywords), frozenset(spread), bound)

    def _value_writes(self, callee: str, node: ast.Call) -> None:
        """Writes without an in-place method (TCL008's): ``f(x, out=y)``, ``a.fill(v)``,
        ``np.copyto(a, v)``; and ``torch.from_numpy(a)`` (``as_tensor``, ``asarray``), after
        which a write to ``a`` changes a tensor: ``a`` gets that call's key, as if made by it."""
        for keyword in node.keywords:
            if keyword.arg == "out" and isinstance(keyword.value, (ast.Name, ast.Attribute, ast.Subscript)):
                self._write(keyword.value, by_argument=True)
        if callee in api.NUMPY_INPLACE_METHODS and isinstance(node.func, ast.Attribute):
            self._write(node.func.value)
        elif callee == "copyto" and node.args:
            self._write(node.args[0], by_argument=True)
        elif callee in _SHARING_CONSTRUCTORS and node.args and isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Subscript)):
            for key in self._target_keys(node.args[0]):  # ``a``, ``self.buf``, ``buf[:n]`` (numpy slicing copies nothing)
                self._flow(key, (CALLED + callee,))

    def _method_call(self, method: str, node: ast.Call, argument_keys: frozenset[str]) -> None:
        assert isinstance(node.func, ast.Attribute)
        receiver = node.func.value
        receiver_name = final_name(receiver)
        if receiver_name is not None:
            self.facts.chained.add((method, receiver_name))
        if method in _TRAINING_METHODS or (method == "grad" and receiver_name == "autograd"):
            for index in self._signals:
                self.facts.functions[index].steps = True  # see analysis/flow.py step_event and SemanticModel.trains
        elif method == "eval" and not node.args and not node.keywords:
            for index in self._signals:
                self.facts.functions[index].evaluates = True  # ``model.eval()``: an evaluation follows
        if method == "requires_grad_":  # ``self.W.requires_grad_()`` changes what ``self.W`` is, as ``x.requires_grad = True`` does
            self._flow_names(receiver, {"." + method})
        if api.is_inplace_method(method):  # any trailing underscore: rules differ on which ones write
            self._write(receiver, method=method)
            if api.writes_values(method) and _on_detach(receiver):
                self.facts.detach_chain_written = True  # not ``x.detach().requires_grad_()``: TCL005 judges value writes
            if receiver_name == "init" and node.args:
                self._write(node.args[0], by_argument=True)  # ``nn.init.zeros_(w)`` writes ``w``
        if method in _ADDERS:
            self._flow_names(receiver, argument_keys, element=True)
            if receiver_name is not None:
                self.facts.added_to.add(receiver_name)
        if method in _ACCUMULATING:
            self._event(self.facts.accumulations, argument_keys, receiver)
        if method == "clone":
            self._event(self.facts.clones, self.keys_in(receiver) | argument_keys)
        if method in _SNAPSHOT_METHODS:
            self._snapshot(self.keys_in(receiver))
        elif method in _SNAPSHOT_FUNCTIONS:
            self._snapshot(argument_keys, shallow=True)  # ``copy.copy(model)``

    def _callbacks(self, callee: str, node: ast.Call, arguments: list[ast.AST], argument_keys: frozenset[str]) -> None:
        """A function or lambda handed to a call (a hook, ``map``, ``apply``) is called with
        values from the call: its parameters may hold anything the call involves."""
        context = argument_keys | self.keys_in(node.func) | {f"{HANDED_TO}{callee}"}
        for argument in arguments:
            while isinstance(argument, ast.Call) and final_name(argument.func) == "partial" and argument.args:
                argument = argument.args[0]  # ``register_forward_hook(partial(self._hook, name))``: the hook is ``_hook``
            if isinstance(argument, ast.Lambda):
                self._lambda_context.append((argument, context))
            elif isinstance(argument, (ast.Name, ast.Attribute)):
                name = final_name(argument)
                if name is not None:
                    self._handed.append((name, context))
            elif isinstance(argument, ast.Call):
                factory = final_name(argument.func)
                if factory is not None:
                    self._made_by.append((factory, context))  # ``register_forward_hook(make_hook(name))``

    # -- assignments and writes --------------------------------------------------------------------
    def _assigned(self, targets: list[ast.AST], value: ast.AST | None) -> None:
        value_keys = self.keys_in(value)
        if value is not None and _is_display(value):
            for target in targets:
                if isinstance(target, (ast.Name, ast.Attribute)):
                    self._display_targets.add(id(target))
                    self._display_bound.update(self._target_keys(target))
        for target in targets:
            self._stores(target, value_keys)
            self._flow_names(target, value_keys)
        if value is None:
            return
        if isinstance(value, (ast.Name, ast.Attribute)):
            names = [name for target in targets for name in _target_names(target)]
            self.facts.reference_targets.update(names)
            if any(naming.is_model_copy_name(name) for name in names):
                self._event(self.facts.snapshots, value_keys, reference=True)  # ``best_model = model``: a module kept by reference
        elif not _PARAMETER_LOOP_KEYS.isdisjoint(value_keys):
            names = [name for target in targets for name in _target_names(target)]
            if any(naming.is_snapshot_name(name) or naming.is_model_copy_name(name) for name in names):
                self._event(self.facts.snapshots, value_keys)  # ``start = dict(model.named_parameters())``: the parameters themselves kept
        if _is_simple_alias(value):
            for target in targets:
                if isinstance(target, ast.Name):
                    self._aliases.setdefault(target.id, set()).update(map(bare, value_keys))
        elif isinstance(value, ast.Call) and final_name(value.func) == "partial" and value.args:
            for target in targets:
                if isinstance(target, ast.Name):  # ``step = partial(train_step, model)``: calling it calls train_step
                    self._aliases.setdefault(target.id, set()).update(map(bare, self.keys_in(value.args[0])))
        looked_up = _looked_up_name(value)
        if looked_up is not None:
            for target in targets:
                if isinstance(target, ast.Name):
                    self._lookups[self._key(target.id)] = self.keys_in(looked_up)  # ``method = getattr(type(self), MODES[mode])``
        if isinstance(value, ast.Lambda):
            for target in targets:
                name = final_name(target)
                if name is not None:
                    self._lambda_names.append((name, value))
        bound = {key for target in targets for key in self._target_keys(target)}
        if not bound.isdisjoint(value_keys):  # ``total = total + loss``, ``outs = torch.cat([outs, out])``
            local = all(self._is_local_target(target) for target in targets)
            self._event(self.facts.accumulations, value_keys, targets[0] if local else None)

    def _stores(self, target: ast.AST, value_keys: frozenset[str]) -> None:
        """Record what a store target writes: subscripts (in place), attributes (a field)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._stores(element, value_keys)
            return
        if isinstance(target, ast.Starred):
            self._stores(target.value, value_keys)
            return
        if isinstance(target, ast.Subscript):
            held = target.value
            container = self._key(held.id) if isinstance(held, ast.Name) else held.attr if isinstance(held, ast.Attribute) else None
            self._write(held, container=container)
            self._event(self.facts.accumulations, value_keys, held)  # ``history[k] = out``
        base = target
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Attribute):
            self.facts.stored_attributes.add(base.attr)
            if base.attr in _FLAG_FIELDS:  # ``x.requires_grad = True`` changes what ``x`` is
                self._flow_names(base.value, {REQUIRES_GRAD if base.attr == "requires_grad" else base.attr})

    def visit_Assign(self, node: ast.Assign) -> None:
        self._assigned(node.targets, node.value)
        self._namedtuple(node.targets, node.value)
        for target in node.targets:
            self.visit(target)
        self._visit_kept(node.value)

    def _namedtuple(self, targets: list[ast.AST], value: ast.AST | None) -> None:
        """``T = namedtuple("T", ("a", "b"))``: an attribute ``.a`` of an instance holds what a
        call of ``T`` passes (the model reads the fields of ``T(...)``)."""
        if not isinstance(value, ast.Call) or final_name(value.func) != "namedtuple":
            return
        fields = _namedtuple_fields(value)
        if not fields:
            return
        for target in targets:
            name = final_name(target)
            if name is not None:
                self._namedtuples.setdefault(name, set()).update(fields)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assigned([node.target], node.value)
        self._flow_names(node.target, self.keys_in(node.annotation))
        self._namedtuple([node.target], node.value)
        self.visit(node.target)
        self.visit(node.annotation)
        self._visit_kept(node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._flow(self._key(node.target.id), self.keys_in(node.value))
        self.visit(node.target)
        self._visit_kept(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        value_keys = self.keys_in(node.value)
        # ``x += v`` changes ``x`` in place where ``x`` is a tensor already (what it is bound
        # to); else it binds ``x + v``, a new object: never an alias of anything.
        target = node.target
        container = self._key(target.id) if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
        self._write(target, container=container, augmented=True)
        self._flow_names(target, value_keys, element=container is not None)
        base = node.target
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Attribute):
            self.facts.stored_attributes.add(base.attr)
        self._event(self.facts.accumulations, value_keys, node.target)
        self.visit(node.target)
        self._visit_kept(node.value)  # ``snapshots += [w.detach()]``

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._string_parts.update(_name_parts(node.values))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Add):
            self._string_parts.update(_name_parts((node.left, node.right)))
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        for left, operator, right in zip(operands, node.ops, operands[1:]):
            if isinstance(operator, (ast.Is, ast.IsNot)) and not isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
                self.facts.compares_identity = True  # ``a is b``; ``x is None`` compares with a constant
        self.generic_visit(node)

    # -- after the walk ---------------------------------------------------------------------------------
    def finish(self) -> ScreenFacts:
        facts = self.facts
        resolve = self._resolver()
        facts.call_arguments = frozenset().union(*(keys for _, keys, _ in self._call_sites))
        for callee, with_data in self._raw_calls:
            resolved = resolve(callee)
            facts.called |= resolved
            if with_data:
                facts.called_with_data |= resolved
        # Calls that make a hook callback: a registration, a function of the file whose parameter
        # a registration gets (``add_hook(model, save)``: the model follows the calls into that
        # parameter, SemanticModel._passed_for), or ``partial`` where the file registers a hook
        # (a partial may be handed to one). A function called by a string name gets no hook
        # roles (see SemanticModel._build_indexes).
        self._parameters = {name: [key for signature in signatures for key in signature.every] for name, signatures in self._signatures.items()}
        registrars = {name for name, parameters in self._parameters.items() if not self._registered.isdisjoint(parameters)}
        facts.hook_registrars = frozenset(_HOOK_REGISTRATIONS | registrars)
        registers = bool(registrars) or not facts.called.isdisjoint(_HOOK_REGISTRATIONS)
        self._registering = {f"{HANDED_TO}{name}" for name in (*facts.hook_registrars, *(("partial",) if registers else ()))}
        # Call sites into parameters (of every function of that name: methods are found
        # by name), callbacks into the parameters of the function or lambda handed over.
        for name, value in self._lambda_names:
            signature = self._lambda_signatures.get(id(value))
            if signature is not None:
                self._parameters.setdefault(name, []).extend(signature.every)
                self._signatures.setdefault(name, []).append(signature)
        # ``stopper(val_loss, logits)``: an instance's ``__call__``; ``self.head(z)``: a module's ``forward``
        instance_call = [*self._parameters.get("__call__", ()), *self._parameters.get("forward", ())]
        resolved: dict[str, frozenset[str]] = {}
        into_instances: set[str] = set()  # what every call of no function of the file passes (flowed once: a union)
        instance_called = False
        for callee, argument_keys, passing in self._call_sites:
            functions = resolved.get(callee)
            if functions is None:
                functions = resolved[callee] = resolve(callee)
            passed = None
            for function in functions:
                parameters = self._parameters.get(function)
                if not parameters:
                    pass
                elif function == callee:
                    # Called by its own name: each argument into the parameters it may bind;
                    # the callee's name into all of them (as before).
                    for parameter in parameters:
                        self._flow(parameter, (callee,))
                    for signature in self._signatures.get(function, ()):
                        signature.receive(passing, self._flow)
                else:
                    # Through an alias (``step = partial(train_step, model)``, ``f = self.m``): the
                    # places are unknown (preset or bound arguments come first).
                    passed = passed or argument_keys | {callee}
                    for parameter in parameters:
                        self._flow(parameter, passed)
                for field_name in self._namedtuples.get(function, ()):
                    self._flow(field_name, argument_keys)  # ``T(*args).a``: a field holds what is passed
            if instance_call and functions.isdisjoint(self._parameters):
                instance_called = True
                into_instances |= argument_keys
                into_instances.add(callee)
        if instance_called:
            for parameter in instance_call:
                self._flow(parameter, into_instances)
        self._dispatched()
        handed: set[str] = set()
        registered = [(factory, context) for factory, context in self._made_by if not context.isdisjoint(self._registering)]
        if registered:
            # A hook made by a factory (``register_forward_hook(make_hook(name))``): the
            # functions flowing into the factory's return are what is registered.
            names = {signals.name for signals in facts.functions if signals.name is not None}
            returns: dict[str, set[str]] = {}
            for key, sources in facts.flows.items():
                returns.setdefault(bare(key), set()).update(bare(source) for source in sources)
            for factory, context in registered:
                self._handed.extend((name, context) for name in returns.get(factory, set()) & names)
        self._handed.extend(("__call__", context) for context in self._instances_registered(registered))
        for name, context in self._handed:
            if not context.isdisjoint(self._registering):
                handed |= resolve(name)  # ``hook = self._hook; m.register_forward_hook(hook)``
            for parameter in self._parameters.get(name, ()):
                self._flow(parameter, context)
        for signals in facts.functions:
            signals.handed = signals.name in handed
        for callee, inside, looped in self._function_calls:
            resolved = resolve(callee)
            for index in inside:
                facts.functions[index].calls |= resolved
                if looped:
                    facts.functions[index].loop_calls |= resolved
        for value, context in self._lambda_context:
            for parameter in self._lambda_signatures[id(value)].every if id(value) in self._lambda_signatures else ():
                self._flow(parameter, context)
        self._calls_through_aliases()
        # ``meta = {}`` ... ``meta[k] = v`` replaces an item of a dict, list or set: no tensor
        # changes (``meta[k][0] = v`` and ``meta[k].add_(v)`` write an item: still writes).
        displays = self._display_bound - self._bound_otherwise
        if displays:
            facts.writes = [write for write in facts.writes if write.container not in displays]
        return facts

    def _resolver(self) -> Callable[[str], frozenset[str]]:
        """:func:`_resolve` over this file's aliases, remembered: they are all known when the
        collector finishes, and a file calls the same names many times."""
        aliases = self._aliases
        known: dict[str, frozenset[str]] = {}

        def resolve(name: str) -> frozenset[str]:
            found = known.get(name)
            if found is None:
                found = known[name] = frozenset(_resolve(name, aliases))
            return found

        return resolve

    def _instances_registered(self, registered: list[tuple[str, frozenset[str]]]) -> list[frozenset[str]]:
        """The contexts of registrations that may be given an instance (``SaveOutput()``, or a
        name bound to a call's result): its class's ``__call__`` is the hook (the model gives it
        the roles, SemanticModel._register_hook); methods are found by name."""
        if not any(signals.name == "__call__" for signals in self.facts.functions):
            return []  # no class of the file is callable
        found = [context for _, context in registered]
        named = [(name, context) for name, context in self._handed if not context.isdisjoint(self._registering)]
        if named:
            made: set[str] = {bare(key) for key, sources in self.facts.flows.items() if any(source.startswith(CALLED) for source in sources)}
            found.extend(context for name, context in named if name in made)
        return found

    def _dispatched(self) -> None:
        """Calls by a string name (``getattr(cb, hook)(self, *args)``, ``globals()[name](x)``)
        reach the functions whose names are strings the name may come from (a few flow
        steps back: ``self._call("on_batch_end", loss)`` into ``hook``; ``MODES[mode]`` from
        ``MODES = {...: "_sample"}``), as the semantic model's dispatch index does: their
        parameters get the call's arguments, and they are called from where the call is."""
        flows = self.facts.flows
        # A name built from parts (``f"{stage}_step"``, ``"on_" + event``, here or where its
        # strings come from): any function whose name holds a literal part of one of the file's.
        built = {name for name in self._parameters if any(part in name for part in self._string_parts)} if self._dispatches else set()
        for name_keys, argument_keys, inside in self._dispatches:
            frontier, seen = set(name_keys), set(name_keys)
            for _ in range(_DISPATCH_STEPS):
                frontier = {source for key in frontier for source in flows.get(key, ())} - seen
                seen |= frontier
                if not frontier or len(seen) > _DISPATCH_KEYS:
                    break
            for name in seen | built:
                if name in self._parameters:
                    for parameter in self._parameters[name]:
                        self._flow(parameter, argument_keys)
                    self._function_calls.append((name, inside, True))  # in a loop or not: not told here

    def _calls_through_aliases(self) -> None:
        """Calling ``g`` gives what calling anything ``g`` may be gives: ``g = f; g()`` is
        ``f()`` (``()g <- ()f``), followed as far as the flows go."""
        flows = self.facts.flows
        pending = [key for key in _called_keys(self.facts) if key[len(CALLED) :] in flows]
        seen = set(pending)
        while pending:
            called = pending.pop()
            for source in flows.get(called[len(CALLED) :], ()):
                if source.startswith(CALLED):
                    continue
                result = CALLED + source
                self._flow(called, (result,))
                if result not in seen and source in flows:
                    seen.add(result)
                    pending.append(result)


def _written_tensor(target: ast.AST) -> ast.AST:
    """The tensor whose storage a write to ``target`` changes, as analysis/aliasing.py's
    ``written_tensor`` finds it: ``t`` for ``t[i]``, ``t.data``, ``t.T``, ``t.view(-1)``."""
    while True:
        if isinstance(target, ast.Subscript):
            target = target.value
        elif isinstance(target, ast.Attribute) and (target.attr in api.VIEW_ATTRIBUTES or target.attr == "data"):
            target = target.value
        elif isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and target.func.attr in api.VIEW_METHODS:
            target = target.func.value
        else:
            return target


_OP_NAMESPACES = frozenset({"ops", "aten", "prims"})


def _op_overload(func: ast.AST) -> bool:
    """``torch.ops.aten.mul.Tensor``, ``aten.split.Tensor``: an operator's overload named like a
    legacy constructor (``Tensor``, ``Scalar``), which constructs nothing."""
    if not isinstance(func, ast.Attribute):
        return False
    node = func.value
    while isinstance(node, ast.Attribute):
        if node.attr in _OP_NAMESPACES:
            return True
        node = node.value
    return isinstance(node, ast.Name) and node.id in _OP_NAMESPACES


def _cut_from_autograd(target: ast.AST) -> bool:
    """Whether the tensor ``target`` writes is read through ``.data``, ``.grad`` or
    ``.detach()`` (through items and views of it: ``p.grad[0]``, ``p.data.view(-1)``): a
    tensor that does not require grad, whatever ``p`` is."""
    while True:
        if isinstance(target, ast.Subscript):
            target = target.value
        elif isinstance(target, ast.Attribute) and target.attr in api.VIEW_ATTRIBUTES:
            target = target.value
        elif isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and target.func.attr in api.VIEW_METHODS:
            target = target.func.value
        else:
            break
    if isinstance(target, ast.Attribute):
        return target.attr in ("data", "grad")
    return isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) and target.func.attr in api.DETACHING_METHODS


def _on_detach(receiver: ast.AST) -> bool:
    """Whether an in-place call's receiver is ``x.detach()`` itself, through views, subscripts
    and earlier in-place calls (``x.detach().view(-1).mul_(2).add_(1)``)."""
    while True:
        receiver = _written_tensor(receiver)
        if not (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)):
            return False
        method = receiver.func.attr
        if method == "detach":
            return True
        if not api.is_inplace_method(method):
            return False
        receiver = receiver.func.value


def _namedtuple_fields(call: ast.Call) -> tuple[str, ...]:
    """The field names of ``namedtuple("T", ("a", "b"))`` / ``namedtuple("T", "a b")`` (as
    ``analysis/evaluate.py`` reads them); empty when they are not literals."""
    spec = next((keyword.value for keyword in call.keywords if keyword.arg == "field_names"), call.args[1] if len(call.args) > 1 else None)
    if isinstance(spec, (ast.List, ast.Tuple)):
        names = [element.value if isinstance(element, ast.Constant) and isinstance(element.value, str) else None for element in spec.elts]
        return tuple(name for name in names if name is not None)
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        return tuple(spec.value.replace(",", " ").split())
    return ()


def _name_parts(nodes: Iterable[ast.AST]) -> set[str]:
    """The string constants among ``nodes`` that may be part of a name (``"_step"``, ``"on_"``)."""
    return {node.value for node in nodes if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 1 and node.value.replace("_", "a").isalnum()}


def _looked_up_name(func: ast.AST | None) -> ast.AST | None:
    """``name`` of ``getattr(obj, name)`` or ``globals()[name]``; else None."""
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" and len(func.args) in (2, 3):
        return func.args[1]
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "globals":
        return func.slice
    return None


_DISPATCH_STEPS = 4  # flow steps followed back from a dispatched name to the strings it may be
_DISPATCH_KEYS = 512


def _called_keys(facts: ScreenFacts) -> set[str]:
    """Every ``()K`` key the flows and events mention."""
    keys = set(facts.flows).union(*facts.flows.values())  # each key once (a source flows into many targets)
    for events in (facts.writes, facts.accumulations, facts.clones, facts.snapshots):
        for event in events:
            keys.update(event.names)
    return {key for key in keys if key.startswith(CALLED)}


_DISPLAY_FACTORIES = frozenset({"dict", "list", "set", "frozenset", "tuple", "defaultdict", "OrderedDict", "Counter", "deque", "str", "int", "float", "bool"})


def _is_display(value: ast.AST) -> bool:
    """A value that is no tensor, whatever its parts: a constant, an f-string, a display or
    comprehension of a dict, list, set or tuple, or a call of a builtin container or number
    type (``dict()``, ``defaultdict(list)``, ``collections.OrderedDict()``)."""
    if isinstance(value, (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Tuple, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "collections" else None
        return name in _DISPLAY_FACTORIES
    return False


def _signature(arguments: ast.arguments, keys: list[str]) -> _Signature:
    """The parameters of ``arguments`` (``keys``: their keys, in _parameter_keys's order)."""
    count = len(arguments.posonlyargs) + len(arguments.args)
    order = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
    present = [argument for argument in order if argument is not None]
    by_argument = dict(zip(map(id, present), keys))
    named = {argument.arg: by_argument[id(argument)] for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    return _Signature(
        tuple(keys[:count]),
        named,
        by_argument[id(arguments.vararg)] if arguments.vararg is not None else None,
        by_argument[id(arguments.kwarg)] if arguments.kwarg is not None else None,
        tuple(keys),
    )


def _is_simple_alias(value: ast.AST) -> bool:
    """``torch.tensor``, ``np.float32``, ``A if c else B``: a value that names a callable."""
    if isinstance(value, (ast.Name, ast.Attribute)):
        return True
    if isinstance(value, ast.IfExp):
        return _is_simple_alias(value.body) and _is_simple_alias(value.orelse)
    if isinstance(value, ast.BoolOp):
        return all(_is_simple_alias(operand) for operand in value.values)
    return False


_FLAG_FIELDS = frozenset({"requires_grad", "data", "grad"})
# Methods whose call may train (an optimizer step, backward, a load): analysis/flow.py's step events, widened.
_TRAINING_METHODS = frozenset({"backward", "step", "load_state_dict"})


def _gives_no_tensor(call: ast.Call) -> bool:
    """``x.size(0)``, ``t.item()``, ``len(xs)``, ``int(n)``: a call whose result is no tensor, as
    the model evaluates it (Evaluator._tensor_method, _builtin_call), so it carries nothing of its
    receiver or arguments. What a function of the file of that name returns still reaches it (its
    returns flow into ``()size``)."""
    func = call.func
    if func.__class__ is ast.Attribute:
        return func.attr in api.NON_TENSOR_METHODS  # type: ignore[attr-defined]
    return func.__class__ is ast.Name and func.id in api.SCALAR_BUILTINS  # type: ignore[attr-defined]


# Attributes whose value is made from the object they are read from: tensor views and
# aliases, a model output's loss and logits (see Evaluator._tensor_attribute).
_PASSING_ATTRIBUTES = api.VIEW_ATTRIBUTES | api.RETURN_TYPE_FIELDS | frozenset({"data", "grad", "loss", "logits"})
# ``*_epoch_end`` methods and the ``*_step`` whose returns a framework hands them (any framework: a name screen).
_EPOCH_END_STEPS = {method: step for methods in api.EPOCH_END_OUTPUTS.values() for method, step in methods.items()}
CALLED = "()"  # key prefix: the result of calling what the rest of the key names (``()3@model``, ``()encoder``)
MODULE_SCOPE = "0@"  # key prefix of module-level names (a function's locals get their own number)
REQUIRES_GRAD = api.REQUIRES_GRAD_TRUE  # the key of ``requires_grad=True`` (a keyword or an attribute set)


def _resolve(name: str, aliases: dict[str, set[str]], depth: int = 3) -> set[str]:
    """``name`` and, through simple aliases (``T = torch.tensor``, ``import x as T``), what it may stand for."""
    if name not in aliases:
        return {name}
    found = {name}
    frontier = {name}
    for _ in range(depth):
        frontier = {target for current in frontier for target in aliases.get(current, ())} - found
        if not frontier:
            break
        found |= frontier
    return found


def facts_of(tree: ast.Module, text: str) -> ScreenFacts:
    """One walk over Python's ``ast`` of a file (``text`` is its source, for comments)."""
    collector = _Collector()
    collector.visit(tree)
    facts = collector.finish()
    facts.noqa = "noqa" in text.lower()
    return facts
