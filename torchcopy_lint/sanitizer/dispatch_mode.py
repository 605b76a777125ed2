"""The dispatch mode: every ATen operator, below autograd, with its schema.

An operator's schema marks the arguments it writes (``Tensor(a!)``, ``alias_info.is_write``),
so this is where writes to storage are seen whoever makes them: an optimizer's ``add_``, a
``copy_``, a ``foreach`` kernel, a write through ``.data``. Two questions are asked of each
written storage, and only while there is something to ask about:

- does a live snapshot (``detach()``, ``.data``, ``state_dict()``) share it, and is the write
  made through something other than the snapshot itself? That is TCL004;
- does a tensor saved for backward hold it? Then the write is queued for the version check
  of ``saved.flush`` (TCL001 / TCL101).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from torchcopy_lint.sanitizer.locations import torch_worker, user_location
from torchcopy_lint.sanitizer.saved import queue_write
from torchcopy_lint.sanitizer.state import Tracker, storage_key

_NO_WRITES: tuple[tuple[int, str], ...] = ()
_written: dict[Any, tuple[tuple[int, str], ...]] = {}


def written_arguments(func: Any) -> tuple[tuple[int, str], ...]:
    """(position, name) of the arguments ``func`` writes, from its schema; cached per operator."""
    known = _written.get(func)
    if known is None:
        try:
            arguments = func._schema.arguments
        except AttributeError:
            arguments = ()
        known = tuple(
            (index, argument.name)
            for index, argument in enumerate(arguments)
            if argument.alias_info is not None and argument.alias_info.is_write
        ) or _NO_WRITES
        _written[func] = known
    return known


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, torch.Tensor)]
    return []


class SanitizerDispatchMode(TorchDispatchMode):
    """Sees every operator; looks only at the ones that write, and only at watched storages."""

    def __init__(self, tracker: Tracker) -> None:
        super().__init__()
        self.tracker = tracker

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        writes = _written.get(func)
        if writes is None:
            writes = written_arguments(func)
        tracker = self.tracker
        if writes and (tracker.snapshots or tracker.saved) and not tracker.busy:
            tracker.busy = True
            try:
                for index, name in writes:
                    value = args[index] if index < len(args) else kwargs.get(name)
                    for tensor in _tensors(value):
                        self._written(func, tensor)
            finally:
                tracker.busy = False
        return func(*args, **kwargs)

    def _written(self, func: Any, tensor: torch.Tensor) -> None:
        tracker = self.tracker
        key = storage_key(tensor)
        if not key:
            return
        snapshots = tracker.snapshots.get(key)
        records = tracker.saved.get(key)
        if not snapshots and not records:
            return
        operation = f"aten.{func._schema.name.split('::')[-1]}"
        location = user_location(2)
        worker = torch_worker(2)
        if records:
            queue_write(tracker, tensor, key, operation, location, worker)
        for snapshot in list(snapshots or ()):
            taken = snapshot.ref()
            if taken is None or taken is tensor or tensor._base is taken:
                continue  # written through the snapshot itself: TCL005's business
            by = f"{operation} in {worker}" if worker else operation
            tracker.emit(
                "TCL004",
                snapshot.location,
                f"snapshot taken here by {snapshot.kind} changed at {location} ({by}) while it was still alive: "
                f"its storage is shared with {snapshot.source}",
            )
