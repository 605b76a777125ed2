"""Where does a value go? Kept in a container, on an attribute, under a name, returned.

Snapshot rules ask this of an expression (``x.clone()``, ``model.state_dict()``): is its
result kept beyond the statement, and how? The answer follows the value up through the
methods a rule says keep it the same (``.clone().cpu()``), through list/tuple/dict
displays and comprehensions, to the statement that keeps it:

- held by a record that is kept (``Snapshot(step, v)`` of a namedtuple, a dataclass or
  another class of the file, ``dict(logits=v)``);
- appended or inserted into a container (``history.append(v)``, ``xs.insert(0, v)``,
  ``q.appendleft(v)``, ``xs.extend([v])``, ``xs += [v]``);
- stored on an attribute (``self.prev = v``) or in a container item (``saved[k] = v``);
- bound to a plain name (the rule decides: a snapshot-like name, or a name later kept
  as above, see :class:`Kept`);
- returned, by a function or a lambda, or yielded (the rule decides: whether callers keep
  the result).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.bindings import Binding, CallSite
from torchcopy_lint.analysis.cst_helpers import is_basic_index, short_code
from torchcopy_lint.analysis.evaluate import NAMEDTUPLE
from torchcopy_lint.analysis.values import Kind

CONTAINER_ADDERS = frozenset({"append", "appendleft", "insert", "extend", "add", "put"})
ITEM_SETTERS = frozenset({"__setitem__", "setdefault"})  # calls that store their second argument under their first
_BUILTIN_CONTAINERS = frozenset({"list", "tuple", "dict", "set"})


class Way(enum.Enum):
    APPENDED = "appended"  # into a container
    ATTRIBUTE = "attribute"  # stored on an attribute
    ITEM = "item"  # stored in a container item
    NAME = "name"  # bound to a plain name
    RETURNED = "returned"


@dataclass(frozen=True)
class Kept:
    """How a value is kept. ``text`` is the phrase for messages ("appended to `history`")."""

    way: Way
    text: str
    target: cst.BaseExpression | None = None  # the container, attribute or name
    binding: Binding | None = None  # Way.NAME: the binding the assignment makes

    @property
    def name(self) -> str | None:
        return self.binding.name if self.binding is not None else None


def _short(node: cst.CSTNode) -> str:
    return short_code(node, 30)


def kept_as(
    ctx: "FileContextLike",
    node: cst.BaseExpression,
    through: Callable[[str], bool],
    is_tensor: Callable[[cst.BaseExpression], bool],
) -> Kept | None:
    """How the value of ``node`` (being visited) is kept, or None when it is used up.

    ``through(method)`` says which method calls on the value keep it (``.cpu()`` after a
    clone); ``is_tensor(expr)`` tells a tensor target (``out[i] = v`` copies into a tensor,
    ``t.add_(v)``/``t += v`` too: not kept).
    """
    parents = ctx.parents
    current: cst.CSTNode = node
    index = len(parents) - 1
    wrapped = False  # inside a display or comprehension
    slot: int | None = None  # position in a tuple display that is assigned directly
    while index >= 0:
        parent = parents[index]
        grand = parents[index - 1] if index >= 1 else None
        if isinstance(parent, cst.Attribute) and parent.value is current:
            if not (isinstance(grand, cst.Call) and grand.func is parent) or not through(parent.attr.value):
                return None  # ``x.clone().shape``, ``x.clone().sum()``
            current, index = grand, index - 2
            continue
        if isinstance(parent, cst.Element) and isinstance(grand, (cst.List, cst.Tuple, cst.Set)):
            slot = grand.elements.index(parent) if isinstance(grand, cst.Tuple) and not wrapped else None
            current, index, wrapped = grand, index - 2, True
            continue
        if isinstance(parent, cst.DictElement) and parent.value is current and isinstance(grand, cst.Dict):
            current, index, wrapped, slot = grand, index - 2, True, None
            continue
        if isinstance(parent, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and parent.elt is current:
            current, index, wrapped, slot = parent, index - 1, True, None
            continue
        if isinstance(parent, cst.DictComp) and parent.value is current:
            current, index, wrapped, slot = parent, index - 1, True, None
            continue
        if isinstance(parent, cst.Subscript) and parent.value is current and is_basic_index(parent):
            current, index = parent, index - 1  # ``xs.append(item[2])``: an item or a view of it is kept
            continue
        if isinstance(parent, cst.IfExp) and (parent.body is current or parent.orelse is current):
            current, index = parent, index - 1  # ``x.clone() if first else avg``: kept as the whole is
            continue
        if isinstance(parent, cst.Arg) and parent.value is current and isinstance(grand, cst.Call):
            if _is_builtin_container(ctx, grand):
                # ``tuple(p.clone() for p in ...)``, ``list(snapshots(model))`` of a generator
                current, index, wrapped, slot = grand, index - 2, True, None
                continue
            if _is_record(ctx, grand):
                # ``Snapshot(step, w.clone())``, ``dict(logits=x.clone())``: the record holds it
                current, index, wrapped, slot = grand, index - 2, True, None
                continue
            return _kept_by_call(grand, parent, wrapped, is_tensor) or _kept_by_function(ctx, grand, parent)
        if isinstance(parent, cst.Assign) and parent.value is current:
            for target in parent.targets:
                kept = _kept_by_target(ctx, target.target, slot, is_tensor)
                if kept is not None:
                    return kept
            return None
        if isinstance(parent, cst.AnnAssign) and parent.value is current:
            return _kept_by_target(ctx, parent.target, slot, is_tensor)
        if isinstance(parent, cst.AugAssign) and parent.value is current and wrapped and isinstance(parent.operator, cst.AddAssign):
            if not is_tensor(parent.target):
                return Kept(Way.APPENDED, f"added to `{_short(parent.target)}`", parent.target)
            return None
        if isinstance(parent, cst.Return) and parent.value is current:
            return Kept(Way.RETURNED, "returned")
        if isinstance(parent, cst.Lambda) and parent.body is current:
            return Kept(Way.RETURNED, "returned")  # what calling the lambda gives
        if isinstance(parent, cst.Yield) and parent.value is current:
            return Kept(Way.RETURNED, "yielded")  # what iterating the generator gives
        return None
    return None


def _is_builtin_container(ctx: "FileContextLike", call: cst.Call) -> bool:
    func = call.func
    return isinstance(func, cst.Name) and func.value in _BUILTIN_CONTAINERS and len(call.args) == 1 and ctx.model.is_builtin(func)


def _is_record(ctx: "FileContextLike", call: cst.Call) -> bool:
    """A call that keeps its arguments in what it returns: ``dict(k=v)``, a namedtuple, a
    class of the file (a dataclass, a plain record class), ``types.SimpleNamespace``."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "dict" and ctx.model.is_builtin(func):
        return True
    callee = ctx.model.value(func)
    return callee.kind is Kind.CALLABLE and (callee.cls is not None or callee.qualname in (NAMEDTUPLE, "types.SimpleNamespace"))


def _kept_by_call(call: cst.Call, arg: cst.Arg, wrapped: bool, is_tensor: Callable[[cst.BaseExpression], bool]) -> Kept | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ITEM_SETTERS:
        # ``cache.__setitem__(k, v)`` (a lambda cannot assign), ``d.setdefault(k, v)``: the value is position 1
        if call.args.index(arg) != 1 or arg.keyword is not None or is_tensor(func.value):
            return None
        return Kept(Way.ITEM, f"stored in `{_short(func.value)}[...]`", func.value)
    if not isinstance(func, cst.Attribute) or func.attr.value not in CONTAINER_ADDERS:
        return None
    method = func.attr.value
    if method == "extend" and not wrapped:
        return None  # ``xs.extend(t.clone())`` iterates the value: its rows, not the value
    if method == "insert" and call.args.index(arg) != 1:
        return None
    if is_tensor(func.value):
        return None
    verb = "inserted" if method == "insert" else "appended"
    return Kept(Way.APPENDED, f"{verb} to `{_short(func.value)}`", func.value)


def _kept_by_function(ctx: "FileContextLike", call: cst.Call, arg: cst.Arg) -> Kept | None:
    """A function or method of the file that keeps the parameter this argument goes to
    (``self.bank.push(x.clone())`` with ``def push(self, s): self.items.append(s)``)."""
    if arg.star or not isinstance(call.func, (cst.Name, cst.Attribute)):
        return None
    callee = ctx.model.value(call.func)
    if callee.function is None:
        return None  # a class's ``__init__`` keeps what it is given in the instance: a record (above)
    for info, offset in ctx.model.called_functions(callee):
        site = CallSite(call, False, offset)
        if any(site.argument(index, info.params[index].name.value) is arg.value for index in ctx.model.kept_arguments(info)):
            return Kept(Way.APPENDED, f"kept by `{_short(call.func)}(...)`", call.func)
    return None


def _kept_by_target(ctx: "FileContextLike", target: cst.BaseExpression, slot: int | None, is_tensor: Callable[[cst.BaseExpression], bool]) -> Kept | None:
    if isinstance(target, (cst.Tuple, cst.List)):
        if slot is None or slot >= len(target.elements):
            return None
        return _kept_by_target(ctx, target.elements[slot].value, None, is_tensor)
    if isinstance(target, cst.Attribute):
        if target.attr.value in ("data", "grad"):
            return None
        return Kept(Way.ATTRIBUTE, f"stored on `{_short(target)}`", target)
    if isinstance(target, cst.Subscript):
        if is_tensor(target.value):
            return None  # ``out[i] = x.clone()`` copies values into a tensor
        return Kept(Way.ITEM, f"stored in `{_short(target.value)}[...]`", target.value)
    if isinstance(target, cst.Name):
        return Kept(Way.NAME, f"bound to `{target.value}`", target, ctx.model.binding_made_by(target))
    return None


class FileContextLike:  # pragma: no cover - typing stand-in for FileContext (avoids an import cycle)
    parents: list[cst.CSTNode]
    model: object
