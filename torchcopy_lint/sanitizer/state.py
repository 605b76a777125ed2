"""The sanitizer's memory of one session: which tensors are aliases, snapshots, maybe-alias
results, clones kept across iterations, saved for backward, or backward()-ed, and the hazards
reported so far.

Every table holds weak references only (keyed by ``id`` or by storage address), so the
sanitizer never keeps a tensor alive; an entry is dropped when its tensor dies.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from torchcopy_lint.sanitizer.locations import Location
from torchcopy_lint.sanitizer.messages import rule_text
from torchcopy_lint.sanitizer.report import Hazard, Report, TorchCopyHazard, TorchCopyHazardWarning

MODES = ("warn", "raise", "collect")


def storage_key(tensor: torch.Tensor) -> int:
    """The address of the tensor's storage (0 for no memory: empty, meta, fake)."""
    try:
        return int(tensor.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError, TypeError):
        return 0


def describe(tensor: torch.Tensor) -> str:
    """``Parameter float32 [1, 3]``: enough to recognise a tensor in a message."""
    kind = "Parameter" if isinstance(tensor, torch.nn.Parameter) else "tensor"
    return f"{kind} {str(tensor.dtype).removeprefix('torch.')} {list(tensor.shape)}"


@dataclass
class Alias:
    """A ``detach()`` or ``.data`` result, taken by user code from a tensor that requires grad."""

    ref: weakref.ref[torch.Tensor]
    source: weakref.ref[torch.Tensor]
    kind: str  # "detach()" or ".data"
    location: Location


@dataclass
class Snapshot:
    """A ``detach()`` / ``.data`` / ``state_dict()`` result: storage shared with its source."""

    ref: weakref.ref[torch.Tensor]
    kind: str
    location: Location
    source: str  # what it shares storage with, in words


@dataclass
class MaybeAlias:
    """The result of ``reshape``/``contiguous``/``to``/``cpu`` ...: its input's memory or a copy."""

    ref: weakref.ref[torch.Tensor]
    method: str
    location: Location
    aliased: bool


@dataclass
class Clone:
    """A clone attached to the graph, made by user code at one line of one running frame."""

    ref: weakref.ref[torch.Tensor]
    frame: int  # id() of the frame that made it: the same frame again is a loop's next pass
    location: Location
    backwards: int  # backward() calls seen before it was made


@dataclass
class Write:
    """A write to the storage of a tensor saved for backward, checked once it is done."""

    saved: Any  # saved.SavedRecord
    version: int  # the saved tensor's version before the write
    location: Location
    operation: str
    worker: str | None
    alias: Alias | None


@dataclass
class Tracker:
    """One session's tables and its hazard sink."""

    report: Report
    mode: str = "warn"
    aliases: dict[int, Alias] = field(default_factory=dict)
    snapshots: dict[int, list[Snapshot]] = field(default_factory=dict)
    maybe: dict[int, MaybeAlias] = field(default_factory=dict)
    outcomes: dict[tuple[str, int], dict[bool, MaybeAlias]] = field(default_factory=dict)
    clones: dict[tuple[str, int], list[Clone]] = field(default_factory=dict)
    last_clone: tuple[weakref.ref[torch.Tensor], Location] | None = None
    backwarded: dict[int, weakref.ref[torch.Tensor]] = field(default_factory=dict)
    backwards: int = 0  # backward() / autograd.grad() calls so far: training iterations
    saved: dict[int, weakref.WeakSet[Any]] = field(default_factory=dict)
    pending: list[Write] = field(default_factory=list)
    busy: bool = False  # inside the sanitizer's own bookkeeping: the modes pass everything through

    # -- weak tables ------------------------------------------------------------------

    def _weak(self, tensor: torch.Tensor, table: dict[int, Any]) -> weakref.ref[torch.Tensor]:
        key = id(tensor)
        return weakref.ref(tensor, lambda _ref, key=key, table=table: table.pop(key, None))

    def add_alias(self, result: torch.Tensor, source: torch.Tensor, kind: str, location: Location) -> None:
        self.aliases[id(result)] = Alias(self._weak(result, self.aliases), weakref.ref(source), kind, location)

    def alias_of(self, tensor: torch.Tensor) -> Alias | None:
        """The alias record of ``tensor`` or of the tensor it is a view of."""
        for candidate in (tensor, tensor._base):
            if candidate is None:
                continue
            alias = self.aliases.get(id(candidate))
            if alias is not None and alias.ref() is candidate:
                return alias
        return None

    def add_snapshot(self, result: torch.Tensor, kind: str, location: Location, source: str) -> None:
        key = storage_key(result)
        if not key:
            return
        entries = self.snapshots.setdefault(key, [])

        def drop(ref: weakref.ref[torch.Tensor], key: int = key) -> None:
            remaining = [entry for entry in self.snapshots.get(key, ()) if entry.ref is not ref]
            if remaining:
                self.snapshots[key] = remaining
            else:
                self.snapshots.pop(key, None)

        entries.append(Snapshot(weakref.ref(result, drop), kind, location, source))

    def add_maybe_alias(self, result: torch.Tensor, method: str, location: Location, aliased: bool) -> None:
        self.maybe[id(result)] = MaybeAlias(self._weak(result, self.maybe), method, location, aliased)

    def maybe_alias_of(self, tensor: torch.Tensor) -> MaybeAlias | None:
        for candidate in (tensor, tensor._base):
            if candidate is None:
                continue
            record = self.maybe.get(id(candidate))
            if record is not None and record.ref() is candidate:
                return record
        return None

    def add_backwarded(self, tensor: torch.Tensor) -> None:
        self.backwarded[id(tensor)] = self._weak(tensor, self.backwarded)

    def was_backwarded(self, tensor: object) -> bool:
        ref = self.backwarded.get(id(tensor))
        return ref is not None and ref() is tensor

    def is_saved(self, tensor: torch.Tensor) -> bool:
        """Whether autograd currently holds ``tensor``'s storage for a backward pass."""
        records = self.saved.get(storage_key(tensor))
        return bool(records) and len(records) > 0

    # -- hazards ------------------------------------------------------------------------

    def emit(self, code: str, location: Location, observation: str) -> None:
        """Report a hazard once per rule and line; warn or raise as the mode says."""
        if self.report.seen(code, location.file, location.line):
            return
        name, summary = rule_text(code)
        hazard = Hazard(code, name, summary, location.file, location.line, location.function, observation)
        self.report.add(hazard)
        if self.mode == "warn":
            warnings.warn_explicit(f"{code} {summary}: {observation}", TorchCopyHazardWarning, location.file, location.line)
        elif self.mode == "raise":
            raise TorchCopyHazard(hazard)

    def guarded(self, work: Callable[[], None]) -> None:
        """Run bookkeeping with the modes passing everything through."""
        if self.busy:
            return
        self.busy = True
        try:
            work()
        finally:
            self.busy = False
