"""The semantic model's records: scopes, bindings, classes, functions.

The :class:`~torchcopy_lint.analysis.binder.Binder` fills these in one walk of the
module; the :class:`~torchcopy_lint.analysis.semantic.SemanticModel` answers questions
from them. They hold CST nodes, never values: a value is computed when asked (see
:mod:`torchcopy_lint.analysis.evaluate`), once every binding of the module is known.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from torchcopy_lint.lazy import cst


class BindingKind(enum.Enum):
    """How a name got its value (ruff's ``BindingKind``, cut to what the rules need)."""

    ASSIGNMENT = "assignment"  # x = v; a, b = v (with a path into v)
    AUGMENTED = "augmented assignment"  # x += v (keeps the earlier bindings as ``previous``)
    ANNOTATION = "annotated assignment"  # x: T = v, or x: T alone
    WALRUS = "named expression"  # (x := v)
    PARAMETER = "parameter"
    LOOP_TARGET = "for target"  # for x in v
    COMPREHENSION_TARGET = "comprehension target"  # [... for x in v]
    WITH_TARGET = "with target"  # with v as x
    IMPORT = "import"
    FUNCTION = "function"
    CLASS = "class"
    EXCEPTION = "except target"
    DELETION = "del"


class ScopeKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    LAMBDA = "lambda"
    COMPREHENSION = "comprehension"


@dataclass(eq=False)
class Addition:
    """A value put into a container after it was created: ``xs.append(v)`` (``spread``
    False), ``xs.extend(vs)`` (``spread``: the elements of ``v``), ``d[k] = v`` (``key``)."""

    value: cst.BaseExpression
    grad_disabled: bool
    spread: bool = False
    key: str | None = None  # a constant string key
    item: bool = False  # an item store (``d[k] = v``, innermost for ``d[k][i] = v``), which a tensor takes too
    nested: int = 0  # put into an item of the container, so many levels down: ``d[k].append(v)`` is 1
    augmented: bool = False  # ``d[k] += v``: the item combined with ``v`` (a tensor item in place: it stays what it was)


@dataclass(eq=False)
class Binding:
    """One binding of a name. Compared by identity."""

    name: str
    kind: BindingKind
    node: cst.CSTNode  # the statement, parameter, loop, import or definition that binds
    scope: "Scope"
    order: int  # walk order: larger is later in the source
    value: cst.BaseExpression | None = None  # assigned value, iterable, default, with-item
    path: tuple[int | None, ...] = ()  # position in an unpacked target: ``a, (b, c) = v`` gives c (1, 1)
    annotation: cst.BaseExpression | None = None
    qualname: str | None = None  # imports: the dotted name bound
    grad_disabled: bool = False  # bound inside a no_grad / inference_mode region
    previous: tuple["Binding", ...] = ()  # AUGMENTED: the bindings it updates
    additions: list[Addition] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Binding({self.name!r}, {self.kind.name}, order={self.order})"


@dataclass(eq=False)
class Scope:
    """A module, class, function, lambda or comprehension scope."""

    kind: ScopeKind
    node: cst.CSTNode
    parent: "Scope | None"
    # Bindings that reach the point of the walk (several after branches); once the scope
    # has been walked, those that reach its end.
    reaching: dict[str, tuple[Binding, ...]] = field(default_factory=dict)
    every: dict[str, list[Binding]] = field(default_factory=dict)  # all bindings of each name
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    def __repr__(self) -> str:
        return f"Scope({self.kind.name}, {type(self.node).__name__})"


@dataclass(eq=False)
class AttributeSite:
    """``self.name = value`` in a method, ``name = value`` in the class body,
    ``self.register_buffer("name", value)`` ... (``how`` says which)."""

    value: cst.BaseExpression | None
    grad_disabled: bool
    how: str = "assignment"  # assignment | buffer | parameter | annotation | augmented
    path: tuple[int | None, ...] = ()  # position in an unpacked value: ``self.a, self.b = pair``
    annotation: cst.BaseExpression | None = None  # ``logits: torch.Tensor`` in a class body (a dataclass field)


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    scope: Scope  # the class body's scope
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    attributes: dict[str, list[AttributeSite]] = field(default_factory=dict)
    additions: dict[str, list[Addition]] = field(default_factory=dict)  # self.name.append(v) ...

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(eq=False)
class CallSite:
    """A call of a local function or class: where its parameters get their values.

    ``offset`` is 1 when the call passes the receiver implicitly (``self.method(x)``,
    ``Trainer(model)`` to ``__init__(self, model)``).

    A call dispatched by a string name (``getattr(cb, hook)(self, *args)``, see
    :meth:`SemanticModel._index_dispatch`) names the call that chose the name in ``via``
    when the name is a parameter of the dispatching function (``self._call("on_batch_end",
    loss)``): ``scope`` and ``grad_disabled`` are then that call's, and ``forwarded`` holds
    the positional arguments it passed for the dispatching function's ``*args`` (which the
    dispatched call spreads).

    A function handed to ``map``/``filter`` (or as ``key=`` to ``sorted``, ``min``, ``max``) is
    called with the *elements* of the iterables: ``iterated`` is set and ``offset`` is -1 for
    ``map(f, xs)`` (``xs`` is position 1 of the call, and goes to parameter 0)."""

    call: cst.Call
    grad_disabled: bool
    offset: int = 0
    scope: "Scope | None" = None  # where the call is (its function may itself run without grad)
    via: cst.Call | None = None
    forwarded: tuple[cst.Arg, ...] | None = None
    iterated: bool = False
    batched: bool = False  # ``DataLoader(ds, collate_fn=f)``: ``f``'s first parameter gets a list of ``ds``'s items

    @property
    def passes_parts(self) -> bool:
        """Whether the parameters get parts of the arguments (elements, items), not them."""
        return self.iterated or self.batched

    def argument(self, index: int | None, name: str) -> cst.BaseExpression | None:
        """The expression passed for a parameter (position ``index``, called ``name``);
        None when the call passes none, or its position is not known (after a ``*xs``).
        For an ``iterated`` site: the iterable whose elements the parameter gets; for a
        ``batched`` one: the dataset whose items the first parameter gets a list of."""
        if self.batched:
            if index is None or index - self.offset != 0:
                return None  # only the first parameter after ``self`` of a collating ``__call__``
            for argument in self.call.args:
                if argument.keyword is not None and argument.keyword.value == "dataset":
                    return argument.value
            first = self.call.args[0] if self.call.args else None
            return first.value if first is not None and first.keyword is None and not first.star else None
        for argument in self.call.args:
            if argument.keyword is not None and argument.keyword.value == name and not self.iterated:
                return argument.value
        if index is None:
            return None
        position = index - self.offset
        positional: list[cst.Arg] = []
        forwarded = self.forwarded
        for argument in self.call.args:
            if argument.keyword is not None or argument.star == "**":
                continue
            if argument.star:
                if forwarded is None:
                    break  # ``f(*args)``: positions unknown from here on
                positional.extend(forwarded)
                forwarded = None
                continue
            positional.append(argument)
        for number, argument in enumerate(positional):
            if argument.star:
                return None
            if number == position:
                return argument.value
        return None


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef | cst.Lambda
    scope: Scope  # the function's own scope
    cls: ClassInfo | None = None  # the class it is a method of
    returns: list[tuple[cst.BaseExpression, bool]] = field(default_factory=list)  # (value, grad disabled)
    yields: list[tuple[cst.BaseExpression, bool]] = field(default_factory=list)
    yield_modes: list[bool] = field(default_factory=list)  # per ``yield`` (bare ones too): grad disabled there
    call_sites: list[CallSite] = field(default_factory=list)
    # Calls that reach it without naming it: an instance's (``evaluator(model)`` of a
    # ``__call__``) and a container's (``self.handlers[mode]()`` of a dict of methods). They
    # tell how it runs (grad mode), not what its parameters hold (the screen does not follow them).
    indirect_calls: list[CallSite] = field(default_factory=list)
    hook_roles: tuple[str, ...] | None = None  # registered as a hook: what each parameter gets
    hook_offset: int = 0  # parameters before the roles (``self`` of a method, ``partial`` arguments)
    # Every registration of it is removed again in the function that made it, and that
    # function runs the model only without grad (features extracted under ``no_grad``).
    hook_runs_without_grad: bool | None = None
    hooked: list[cst.BaseExpression] = field(default_factory=list)  # the modules a forward hook was registered on (``self.head`` of ``self.head.register_forward_hook(fn)``)
    decorators: tuple[str, ...] = ()  # dotted decorator names (``staticmethod``, ``property`` ...)
    made_without_grad: bool = False  # a lambda written where grad is off (``map(lambda b: f(b), ...)`` under no_grad)

    @property
    def name(self) -> str:
        return self.node.name.value if isinstance(self.node, cst.FunctionDef) else "<lambda>"

    @property
    def params(self) -> list[cst.Param]:
        params = self.node.params
        return [*params.posonly_params, *params.params]

    def hook_role(self, index: int) -> str | None:
        """What a hook's parameter at ``index`` (of :attr:`params`) receives (``"module"``,
        ``"inputs"``, ``"output"`` ...), or None (not a hook, or a parameter before the roles)."""
        if self.hook_roles is None or index < self.hook_offset:
            return None
        position = index - self.hook_offset
        return self.hook_roles[position] if position < len(self.hook_roles) else None

    @property
    def is_method(self) -> bool:
        """A method that receives its instance as its first parameter."""
        return self.cls is not None and "staticmethod" not in self.decorators and "classmethod" not in self.decorators
