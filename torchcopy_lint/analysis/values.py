"""Abstract values: what an expression may be at run time, as far as the file shows.

A small lattice, in the spirit of a type checker's types but only as fine as the rules
need: the *kind* of object (a tensor, a module, an optimizer, a container ...), for a
tensor whether it *requires grad* (a leaf such as a parameter, or a result with
autograd history) and *why* (the evidence phrase quoted in messages), whether it
*shares storage* with another value (``x.detach()``, ``x.data``, a state dict, a
``reshape`` that may be a view), and for containers what their *elements* are.

Values are immutable; :func:`join` merges the values of the paths that reach a use
(branches, loop iterations, several call sites). ``None`` is absorbed by a join the
way ``Optional[T]`` narrows to ``T`` at a method call: ``best = None`` followed by
``best = loss.clone()`` is a graph-attached clone wherever ``best`` is used as a tensor.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.torch_api import PARAMETER_DICT_CLASSES


class Kind(enum.Enum):
    """What kind of object a value is."""

    UNKNOWN = "unknown"
    NONE = "None"
    SCALAR = "scalar"  # a number, string, bool, shape (torch.Size), dtype or device
    TENSOR = "tensor"
    ARRAY = "numpy array"
    MODULE = "module"  # an nn.Module (losses included)
    OPTIMIZER = "optimizer"
    CONTAINER = "container"  # list, tuple, dict, set, iterator, generator, state dict
    CALLABLE = "callable"  # a function, lambda or class
    OBJECT = "object"  # anything else known not to be a tensor


class Grad(enum.Enum):
    """Whether a tensor requires grad, and why it is sure or not."""

    NO = "no"  # detached, a buffer, created without requires_grad, made under no_grad
    UNKNOWN = "unknown"
    LEAF = "leaf"  # requires grad and has no grad_fn: a parameter, requires_grad=True
    GRAPH = "graph"  # requires grad and has a grad_fn: computed from a leaf while recording

    @property
    def required(self) -> bool:
        return self in (Grad.LEAF, Grad.GRAPH)


class AliasHow(enum.Enum):
    """How a value shares storage with its source."""

    DETACH = "detach"  # x.detach()
    DATA = "data"  # x.data
    VIEW = "view"  # x[0], x.view(-1), x.T
    MAYBE = "maybe"  # x.reshape(...), x.contiguous(), x.to(...): a view only sometimes
    STATE = "state_dict"  # model.state_dict(): references to the module's tensors
    SHALLOW = "shallow copy"  # dict(sd), sd.copy(), copy.copy(x): new container, same tensors
    SAME = "same object"  # best = model


@dataclass(frozen=True, eq=False)
class Alias:
    """``how`` the value shares storage with ``source`` (an expression of the file).

    ``source_value`` is the source's own value (was it a parameter, a module ...?);
    ``via`` the expression that made the alias.
    """

    how: AliasHow
    source: cst.BaseExpression
    source_value: "Value"
    via: cst.CSTNode | None = None  # the call that made the alias (``x.reshape(-1)``), for messages

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Alias) and self.how is other.how and self.source is other.source

    def __hash__(self) -> int:
        return hash((self.how, id(self.source)))


@dataclass(frozen=True, eq=False)
class Value:
    """An abstract value. Fields that do not apply to the kind stay at their defaults."""

    kind: Kind = Kind.UNKNOWN
    grad: Grad = Grad.UNKNOWN
    why: str | None = None  # evidence for grad (or kind): "a module output", "an nn.Parameter"
    alias: Alias | None = None
    element: "Value | None" = None  # what indexing a container gives (and iterating it, unless it is a mapping)
    keys: "Value | None" = None  # a mapping (a dict, a state dict): what iterating it gives; None: not known to be one
    items: "tuple[Value, ...] | None" = None  # a tuple's known positions
    fields: "tuple[tuple[str, Value], ...]" = ()  # values under constant string keys of a dict
    qualname: str | None = None  # an imported name this value is (torch.nn.Linear, torch.float32)
    function: cst.FunctionDef | cst.Lambda | None = None  # a local function this value is
    cls: cst.ClassDef | None = None  # a local class: the class itself (CALLABLE) or its instance
    loss: bool = False  # a loss (or a module computing one)
    bound: bool = False  # a method read from an instance: calls pass the instance first
    preset: int = 0  # ``functools.partial(f, a, b)``: positional arguments calls pass before their own
    owner: cst.BaseExpression | None = None  # the module a parameter came from (``model`` in ``model.parameters()``)
    guessed: bool = False  # the kind comes from a name (``criterion(...)``, ``self.model``), not from types
    # New memory without history (``torch.zeros(n)``, ``torch.randn(h)``, ``torch.tensor(data)``):
    # the tensor form of a literal, the seed of an accumulator or a state, a default return, a
    # conversion of data. Where it meets a tensor that requires grad on another path, the join is
    # that tensor, as a number's would be (see join); what surely does not require grad by
    # intent (``detach()``, ``no_grad``, a buffer) does not give way.
    seed: bool = False
    # A union: the values it may be when they are different local functions, classes or
    # instances (``fn`` of ``for fn in {"a": lambda ...: ..., "b": lambda ...: ...}.values()``,
    # ``cb`` of a list of callbacks of several classes). A call or a method of it is each one's.
    alternatives: "tuple[Value, ...]" = ()

    # Values are compared field by field, CST nodes by identity.
    def _key(self) -> tuple[object, ...]:
        return (
            self.kind, self.grad, self.why, self.alias, self.element, self.keys, self.items, self.fields,
            self.qualname, id(self.function) if self.function else None, id(self.cls) if self.cls else None, self.loss, self.bound, self.preset, id(self.owner) if self.owner is not None else None, self.guessed,
            self.alternatives, self.seed,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    # -- questions ---------------------------------------------------------------
    @property
    def implicit(self) -> int:
        """How many arguments a call of this function passes before its own: the instance of a
        bound method, the positional arguments of a ``partial``."""
        return (1 if self.bound else 0) + self.preset

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def requires_grad(self) -> bool:
        return self.kind is Kind.TENSOR and self.grad.required

    @property
    def has_history(self) -> bool:
        """A tensor with a grad_fn: keeping it keeps its autograd graph alive."""
        return self.kind is Kind.TENSOR and self.grad is Grad.GRAPH

    @property
    def surely_not_tensor(self) -> bool:
        return self.kind not in (Kind.UNKNOWN, Kind.TENSOR)

    def field(self, key: str) -> "Value | None":
        for name, value in self.fields:
            if name == key:
                return value
        return None

    def with_(self, **changes: object) -> "Value":
        return replace(self, **changes)  # type: ignore[arg-type]


UNKNOWN = Value()
NONE = Value(Kind.NONE)
SCALAR = Value(Kind.SCALAR)
OBJECT = Value(Kind.OBJECT)
ARRAY = Value(Kind.ARRAY)
PLAIN_TENSOR = Value(Kind.TENSOR, Grad.NO)
UNKNOWN_TENSOR = Value(Kind.TENSOR)


def tensor(grad: Grad = Grad.UNKNOWN, why: str | None = None, alias: Alias | None = None, loss: bool = False) -> Value:
    return Value(Kind.TENSOR, grad, why, alias, loss=loss)


def container(element: Value | None = None, items: tuple[Value, ...] | None = None, fields: tuple[tuple[str, Value], ...] = (), alias: Alias | None = None, keys: Value | None = None) -> Value:
    if element is None and items:
        element = join_all(items, numeric=False)
    return Value(Kind.CONTAINER, element=element or UNKNOWN, items=items, fields=fields, alias=alias, keys=keys)


def mapping(values: Value | None = None, keys: Value | None = None, fields: tuple[tuple[str, Value], ...] = ()) -> Value:
    """A dict: ``d[k]`` and ``d.values()`` give ``values``, iterating gives ``keys``."""
    return container(values, fields=fields, keys=keys or UNKNOWN)


def element_of(value: Value) -> Value:
    """What iterating over ``value`` gives: a container's elements (a mapping's keys), a tensor's rows."""
    if value.kind is Kind.CONTAINER:
        return value.keys if value.keys is not None else value.element or UNKNOWN
    if value.kind is Kind.TENSOR:
        # Rows of a tensor (or the tensors of a tuple output unpacked): views of it.
        return value.with_(alias=value.alias, items=None)
    if value.kind is Kind.ARRAY:
        return ARRAY
    if value.kind is Kind.MODULE and value.element is not None and value.qualname not in PARAMETER_DICT_CLASSES:
        return value.element  # a ParameterList's parameters (a ParameterDict iterates its keys)
    return UNKNOWN


def item_of(value: Value, index: int | None) -> Value:
    """``value[index]`` for a constant index (or an unknown one: ``None``)."""
    if value.kind is Kind.CONTAINER and value.items is not None and index is not None and -len(value.items) <= index < len(value.items):
        return value.items[index]
    if value.kind is Kind.CONTAINER:
        return value.element or UNKNOWN  # ``d[k]`` of a mapping is a value, not a key
    return element_of(value)


# -- joins -------------------------------------------------------------------------------

def join_grad(a: Grad, b: Grad) -> Grad:
    """Where two paths meet: evidence of requiring grad on one path is kept unless the other
    path surely does not require it."""
    if a is b:
        return a
    if Grad.NO in (a, b):
        return Grad.UNKNOWN
    if Grad.UNKNOWN in (a, b):
        return b if a is Grad.UNKNOWN else a
    return Grad.GRAPH  # LEAF and GRAPH: requires grad either way


def _join_optional(a: Value | None, b: Value | None, numeric: bool = True) -> Value | None:
    if a is None or b is None:
        return a or b
    return join(a, b, numeric)


def _joined_alias(a: "Value", b: "Value") -> "Alias | None":
    """The alias the join of two tensors keeps: the same kind of sharing on both paths; or a
    sharing that is only possible (``reshape``, ``to``: :attr:`AliasHow.MAYBE`) on one path and
    a tensor of its own on the other (``out = x.to(dtype)``, then ``out = out / 255`` in a branch):
    the result may still share memory, which is all MAYBE says."""
    if a.alias is not None and b.alias is not None:
        return a.alias if a.alias.how is b.alias.how else None
    one, other = (a, b) if a.alias is not None else (b, a)
    if one.alias is not None and one.alias.how is AliasHow.MAYBE and other.kind is Kind.TENSOR and other.alias is None:
        return one.alias
    return None


def join(a: Value, b: Value, numeric: bool = True) -> Value:
    """The value of an expression that may be ``a`` or ``b``.

    ``numeric``: a number on one path and a tensor on the other is a tensor (an accumulator
    ``total = 0`` grown by ``total += loss``); not so for the elements of a container.
    """
    if a == b:
        return a
    for first, second in ((a, b), (b, a)):
        if first.kind is Kind.NONE:
            return second  # Optional[T] is T wherever it is used as a T
        if first == UNKNOWN:
            return second  # what one path shows is what the value may be
    if a.kind is not b.kind:
        # A number that becomes a tensor (``total = 0`` then ``total += loss``) is a tensor.
        if numeric and {a.kind, b.kind} == {Kind.SCALAR, Kind.TENSOR}:
            return a if a.kind is Kind.TENSOR else b
        return UNKNOWN
    if numeric and a.kind is Kind.TENSOR and a.seed is not b.seed:
        # ``penalty = torch.zeros(())`` on one path, a loss on the other: what the other path
        # computes is what the value is, as with a number (``total = 0``).
        other = b if a.seed else a
        if other.grad.required:
            return other
    grad = join_grad(a.grad, b.grad)
    why = a.why if a.grad is grad or a.why and not b.why else b.why
    if not grad.required and grad is not Grad.NO:
        why = a.why if a.why == b.why else None
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    fields = tuple((key, join(value, b.field(key) or value)) for key, value in a.fields) + tuple(
        (key, value) for key, value in b.fields if a.field(key) is None
    )
    function = a.function if a.function is b.function else None
    cls = a.cls if a.cls is b.cls else None
    alternatives: tuple[Value, ...] = ()
    if a.kind in _UNION_KINDS and function is None and cls is None:
        alternatives = _union(a, b)
    return Value(
        kind=a.kind,
        grad=grad,
        why=why,
        alias=_joined_alias(a, b),
        element=_join_optional(a.element, b.element, numeric=False),
        keys=_joined_keys(a, b),
        items=items,
        fields=fields,
        qualname=a.qualname if a.qualname == b.qualname else None,
        function=function,
        cls=cls,
        loss=a.loss or b.loss,
        bound=a.bound and b.bound,
        preset=a.preset if a.preset == b.preset else 0,
        owner=a.owner if a.owner is b.owner else None,
        guessed=a.guessed and b.guessed,
        alternatives=alternatives,
        seed=a.seed and b.seed,
    )


def _joined_keys(a: Value, b: Value) -> Value | None:
    """What iterating the join gives, where either is a mapping (the other's elements if not)."""
    if a.keys is None and b.keys is None:
        return None
    return join(element_of(a), element_of(b), numeric=False)


_UNION_KINDS = frozenset({Kind.CALLABLE, Kind.OBJECT})
_MAX_ALTERNATIVES = 8


def _union(a: Value, b: Value) -> tuple[Value, ...]:
    """The local functions, classes and instances ``a`` or ``b`` may be (none when either
    may be something else, or there are too many to follow)."""
    found: list[Value] = []
    for value in (a, b):
        for alternative in value.alternatives or (value,):
            if alternative.function is None and alternative.cls is None:
                return ()
            if not any(alternative.function is seen.function and alternative.cls is seen.cls and alternative.kind is seen.kind for seen in found):
                found.append(alternative)
    return tuple(found) if len(found) <= _MAX_ALTERNATIVES else ()


def join_all(values: "tuple[Value, ...] | list[Value]", numeric: bool = True) -> Value:
    result: Value | None = None
    for value in values:
        result = value if result is None else join(result, value, numeric)
    return result if result is not None else UNKNOWN
