"""Tensors autograd saves for backward: which storages they hold, and autograd's version check,
done again here.

``saved_tensors_hooks`` tell the sanitizer which storages a backward pass will read. Installing
them has a cost: autograd no longer checks the versions of tensors packed by hooks, so
``y = x * x; x.detach().mul_(2); y.sum().backward()`` would silently return a wrong gradient
instead of raising. ``unpack`` therefore repeats that check and raises autograd's own error
(a ``RuntimeError`` saying the variable "has been modified by an inplace operation").

A write that changes a saved tensor's values while its version stays the same (through
``.data``, which has a version counter of its own) is the silent hazard of TCL001 / TCL101:
the dispatch mode queues such writes (``Tracker.pending``) and ``flush`` checks them once the
write is done (the version is bumped by autograd above the dispatch mode, after it returns).
"""

from __future__ import annotations

import weakref

import torch

from torchcopy_lint.sanitizer.state import Tracker, Write, describe, storage_key


class SavedRecord:
    """What ``pack`` returns: the saved tensor (as autograd would keep it) and its version.

    An output of the operator being recorded is kept as a detached alias (same storage and
    version counter): the output itself would hold its own ``grad_fn``, which holds this
    record, a cycle that Python's collector cannot see (autograd, without hooks, saves outputs
    without their ``grad_fn`` for the same reason). Anything else is kept as is, so that its
    Python object lives exactly as long as it would without the sanitizer.
    """

    __slots__ = ("tensor", "version", "__weakref__")

    def __init__(self, tensor: torch.Tensor, version: int) -> None:
        self.tensor = tensor
        self.version = version


_HINT = (
    "Hint: torchcopy-lint's sanitizer repeats this check because its saved-tensor hooks switch off "
    "autograd's own; the error is the one autograd raises without the sanitizer."
)


_peek = getattr(torch._C._autograd, "_get_sequence_nr", None)


def _is_output(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is an output of the node being built: its ``grad_fn`` is the node that
    got the thread's latest sequence number. (Without that counter, assume it is.)"""
    node = tensor.grad_fn
    if node is None:
        return False
    if _peek is None:
        return True
    return bool(node._sequence_nr() == _peek() - 1)


class SavedTensors:
    """The pack/unpack pair installed with ``torch.autograd.graph.saved_tensors_hooks``."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def pack(self, tensor: torch.Tensor) -> SavedRecord:
        tracker = self.tracker
        tracker.busy, was_busy = True, tracker.busy
        try:
            record = SavedRecord(tensor.detach() if _is_output(tensor) else tensor, tensor._version)
            key = storage_key(tensor)
            if key:
                records = tracker.saved.get(key)
                if records is None:
                    records = tracker.saved[key] = weakref.WeakSet()
                records.add(record)
        finally:
            tracker.busy = was_busy
        return record

    def unpack(self, record: SavedRecord) -> torch.Tensor:
        tracker = self.tracker
        if tracker.pending:
            flush(tracker)
        tracker.busy, was_busy = True, tracker.busy
        try:
            tensor = record.tensor
            version = tensor._version
            if version != record.version:
                kind = tensor.type()
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{kind} {list(tensor.shape)}] is at version {version}; expected version "
                    f"{record.version} instead. {_HINT}"
                )
            return tensor
        finally:
            tracker.busy = was_busy


def queue_write(tracker: Tracker, written: torch.Tensor, key: int, operation: str, location_of_write: object, worker: str | None) -> None:
    """A write to storage ``key``, which a saved tensor holds: check it once it is done."""
    alias = tracker.alias_of(written)
    for record in list(tracker.saved.get(key, ())):
        tracker.pending.append(Write(record, record.tensor._version, location_of_write, operation, worker, alias))  # type: ignore[arg-type]


def flush(tracker: Tracker) -> None:
    """Report the queued writes that changed a saved tensor without bumping its version."""
    pending, tracker.pending = tracker.pending, []
    for write in pending:
        tensor = write.saved.tensor
        tracker.busy, was_busy = True, tracker.busy
        try:
            silent = tensor._version == write.version
            what = describe(tensor)
        finally:
            tracker.busy = was_busy
        if not silent:
            continue  # autograd sees it: backward() raises (the unpack check above)
        via = f" (in {write.worker})" if write.worker else ""
        consequence = (
            f"a {what} saved for backward was changed by {write.operation}{via} while its version stayed "
            f"{write.version}, so backward() will use the new values without an error"
        )
        alias = write.alias
        if alias is not None and alias.kind == ".data" and (alias.location.file, alias.location.line) != (write.location.file, write.location.line):
            tracker.emit("TCL101", alias.location, f"this `.data` alias was written at {write.location}: {consequence}")
        else:
            through = "a `.data` alias" if alias is not None and alias.kind == ".data" else "a tensor with a version counter of its own (`.data`)"
            tracker.emit("TCL001", write.location, f"write through {through}: {consequence}")
