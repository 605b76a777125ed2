"""What the function mode does with each torch call: the user-level view of a program.

The function mode sees calls as the user wrote them (``x.detach()``, ``w.data``,
``flat[0] = 1``, ``torch.tensor(t)``, ``loss.backward()``, ``total += loss``), with the Python
objects involved, so this is where aliases are made and where writes *through* them are seen:

- ``detach()`` / ``.data`` from user code: an alias of a tensor that requires grad (TCL005 when
  written, TCL101 when a saved tensor changes through it), and a snapshot (TCL004);
  ``detach()`` inside ``Module.state_dict()`` is a snapshot too, named by its key;
  ``detach()`` of a clone made at the same line is TCL102;
- ``clone()`` of a graph-attached tensor: TCL003 when an earlier clone from the same line of
  the same running frame (a loop's earlier pass) is still alive and attached, or when a clone
  is still alive and attached after two later ``backward()`` calls (training iterations) that
  did not free it; a clone autograd itself holds for backward does not count;
- ``reshape``/``contiguous``/``to``/``cpu`` ...: whether the result is its input's memory;
  writes through results of both kinds at one line are TCL008;
- ``torch.tensor(t)`` / ``x.new_tensor(t)`` on a tensor: TCL002;
- ``backward()``: the tensor is remembered; adding it to a total that requires grad is TCL009.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch

from torchcopy_lint.analysis.torch_api import MAYBE_ALIAS_METHODS, METADATA_INPLACE_METHODS, is_inplace_method
from torchcopy_lint.sanitizer.locations import caller_is_user, frame_local, location_of, user_frame, user_location
from torchcopy_lint.sanitizer.state import Clone, Tracker, describe, storage_key

DATA = torch._C.TensorBase.__dict__["data"]
# numpy() results are numpy arrays: writes to them never reach torch.
_MAYBE = MAYBE_ALIAS_METHODS - {"numpy"}
_ADDS = frozenset({"add", "add_", "__add__", "__radd__", "__iadd__"})
_GRAPH_WALK_LIMIT = 100_000


def _kind(name: str) -> str | None:
    if name == "__get__":
        return "getter"
    if name == "detach":
        return "detach"
    if name == "clone":
        return "clone"
    if name in ("tensor", "new_tensor"):
        return name
    if name in ("backward", "grad"):
        return "backward"
    if name in _ADDS:
        return "add"
    if name in _MAYBE:
        return "maybe"
    if name == "__setitem__" or (is_inplace_method(name) and name not in METADATA_INPLACE_METHODS):
        return "write"
    return None


_kinds: dict[str, str | None] = {}


def kind_of(name: str) -> str | None:
    known = _kinds.get(name, "?")
    if known == "?":
        known = _kinds[name] = _kind(name)
    return known


def graph_size(tensor: torch.Tensor) -> int:
    """How many autograd nodes ``tensor`` keeps reachable."""
    seen: set[Any] = set()
    stack = [tensor.grad_fn]
    while stack and len(seen) < _GRAPH_WALK_LIMIT:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def _grad_fn(tensor: torch.Tensor) -> str:
    return type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else "None"


class Calls:
    """The function mode's work, per kind of call."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.after: dict[str, Callable[[Any, str, tuple[Any, ...], dict[str, Any], Any], None]] = {
            "getter": self._getter,
            "detach": self._detach,
            "clone": self._clone,
            "maybe": self._maybe,
            "tensor": self._tensor,
            "new_tensor": self._tensor,
            "backward": self._backward,
            "add": self._add,
            "write": self._noop,
        }

    def before_write(self, name: str, receiver: Any) -> None:
        """An in-place call, ``__setitem__`` or ``out=``: is the receiver a tracked alias?"""
        if not isinstance(receiver, torch.Tensor):
            return
        tracker = self.tracker
        alias = tracker.alias_of(receiver)
        maybe = tracker.maybe_alias_of(receiver)
        if alias is None and maybe is None:
            return
        location = user_location()
        if alias is not None:
            source = alias.source()
            same_line = (alias.location.file, alias.location.line) == (location.file, location.line)
            if source is not None and source.requires_grad and not (alias.kind == ".data" and same_line):
                seen = "autograd does not see it" if alias.kind == ".data" else "autograd sees it: a backward() through a graph that saved the source raises"
                tracker.emit(
                    "TCL005",
                    location,
                    f"in-place {name} through the {alias.kind} alias taken at {alias.location} wrote into its source "
                    f"({describe(source)} that requires grad); {seen}",
                )
        if maybe is not None:
            outcomes = self.tracker.outcomes.setdefault((location.file, location.line), {})
            outcomes.setdefault(maybe.aliased, maybe)
            if len(outcomes) == 2:
                view, copy = outcomes[True], outcomes[False]
                tracker.emit(
                    "TCL008",
                    location,
                    f"in-place {name} through the result of `{view.method}` at {view.location}, which was its input's memory "
                    f"(the write reached the source), and through the result of `{copy.method}` at {copy.location}, which "
                    "was a copy (the write was lost)",
                )

    # -- after the call -------------------------------------------------------------------

    def _noop(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        return None

    def _getter(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        if getattr(func, "__self__", None) is not DATA or not args or not isinstance(result, torch.Tensor):
            return
        if not caller_is_user():
            return
        source = args[0]
        location = user_location()
        if source.requires_grad:
            self.tracker.add_alias(result, source, ".data", location)
        self.tracker.add_snapshot(result, "`.data`", location, describe(source))

    def _detach(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        if not args or not isinstance(result, torch.Tensor):
            return
        source = args[0]
        tracker = self.tracker
        if caller_is_user():
            location = user_location()
            if source.requires_grad:
                tracker.add_alias(result, source, "detach()", location)
            tracker.add_snapshot(result, "detach()", location, describe(source))
            last = tracker.last_clone
            if last is not None and last[0]() is source and (last[1].file, last[1].line) == (location.file, location.line):
                tracker.emit(
                    "TCL102",
                    location,
                    f"detach() of a clone made on the same line: autograd recorded the clone ({_grad_fn(source)}) "
                    "before it was cut off; detach() first and clone() the detached tensor",
                )
            return
        key = frame_local("name", "_save_to_state_dict")
        if isinstance(key, str):
            prefix = frame_local("prefix", "_save_to_state_dict") or ""
            tracker.add_snapshot(result, f"state_dict() (key {prefix}{key!r})", user_location(), f"the module's {describe(source)} {prefix}{key}")

    def _clone(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        if not isinstance(result, torch.Tensor) or result.grad_fn is None or not caller_is_user():
            return
        tracker = self.tracker
        frame = user_frame()
        location = location_of(frame)
        tracker.last_clone = (weakref.ref(result), location)
        site = (location.file, location.line)
        if tracker.report.seen("TCL003", *site):
            return
        kept = []
        for clone in tracker.clones.get(site, ()):
            earlier = clone.ref()
            if earlier is None:
                continue
            kept.append(clone)
            if clone.frame == id(frame) and earlier.grad_fn is not None and not tracker.is_saved(earlier):
                tracker.emit(
                    "TCL003",
                    location,
                    f"a clone made by this line on an earlier pass is still alive and attached to the graph "
                    f"(grad_fn {_grad_fn(earlier)}, {graph_size(earlier)} autograd node(s) reachable, with the tensors they saved)",
                )
                tracker.clones.pop(site, None)
                return
        kept.append(Clone(weakref.ref(result), id(frame), location, tracker.backwards))
        tracker.clones[site] = kept

    def _kept_clones(self) -> None:
        """After a backward(): clones still attached two iterations after they were made."""
        tracker = self.tracker
        for site, clones in list(tracker.clones.items()):
            for clone in clones:
                kept = clone.ref()
                if kept is None or tracker.backwards - clone.backwards < 2 or kept.grad_fn is None or tracker.is_saved(kept):
                    continue
                tracker.clones.pop(site, None)
                tracker.emit(
                    "TCL003",
                    clone.location,
                    f"a clone made here is still alive and attached to the graph {tracker.backwards - clone.backwards} backward() "
                    f"calls later (grad_fn {_grad_fn(kept)}, {graph_size(kept)} autograd node(s) reachable): it keeps them alive "
                    "and passes gradients back to its source",
                )
                break

    def _maybe(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        if not args or not isinstance(result, torch.Tensor) or not isinstance(args[0], torch.Tensor) or not caller_is_user():
            return
        key = storage_key(result)
        aliased = bool(key) and key == storage_key(args[0])
        self.tracker.add_maybe_alias(result, name, user_location(), aliased)

    def _tensor(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        position = 1 if name == "new_tensor" else 0
        data = args[position] if len(args) > position else kwargs.get("data")
        if isinstance(data, torch.Tensor):
            what = f"a {describe(data)} (grad_fn {_grad_fn(data)}, requires_grad={data.requires_grad})"
        elif isinstance(data, (list, tuple)) and data and all(isinstance(item, torch.Tensor) for item in data):
            what = f"a {type(data).__name__} of {len(data)} tensors"
        else:
            return
        callee = "x.new_tensor()" if name == "new_tensor" else "torch.tensor()"
        dropped = "; the copy's history is dropped (requires_grad=False)" if any(
            getattr(item, "requires_grad", False) for item in (data if isinstance(data, (list, tuple)) else [data])
        ) else ""
        self.tracker.emit("TCL002", user_location(), f"{callee} got {what}: it copies it with a UserWarning{dropped}")

    def _backward(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
        for tensor in first if isinstance(first, (list, tuple)) else [first]:
            if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None:
                self.tracker.add_backwarded(tensor)
        self.tracker.backwards += 1
        if self.tracker.clones:
            self._kept_clones()

    def _add(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        tracker = self.tracker
        if len(args) < 2 or not tracker.backwarded or not isinstance(result, torch.Tensor) or not result.requires_grad:
            return
        for done, total in ((args[0], args[1]), (args[1], args[0])):
            if tracker.was_backwarded(done) and isinstance(total, torch.Tensor) and total.grad_fn is not None and total is not done:
                tracker.emit(
                    "TCL009",
                    user_location(),
                    f"a tensor that backward() already ran through (grad_fn {_grad_fn(done)}) was added to a total that is "
                    f"attached to the graph: the total now keeps {graph_size(result)} autograd node(s) of every step alive",
                )
                return
