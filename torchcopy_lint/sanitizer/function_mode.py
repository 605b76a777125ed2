"""The function mode: every torch call as the user made it (see ``calls``).

Most calls pass straight through: a name lookup (cached) decides whether the call is one the
sanitizer cares about. After each call, writes queued by the dispatch mode are checked
(``saved.flush``): by then autograd has bumped the versions it was going to bump.
"""

from __future__ import annotations

from typing import Any

from torch.overrides import TorchFunctionMode

from torchcopy_lint.sanitizer.calls import DATA, Calls, kind_of
from torchcopy_lint.sanitizer.legacy import real
from torchcopy_lint.sanitizer.saved import flush
from torchcopy_lint.sanitizer.state import Tracker


class SanitizerFunctionMode(TorchFunctionMode):
    def __init__(self, tracker: Tracker) -> None:
        super().__init__()
        self.tracker = tracker
        self.calls = Calls(tracker)

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        tracker = self.tracker
        if tracker.busy:
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        kind = kind_of(name)
        if kind == "getter" and getattr(func, "__self__", None) is not DATA:
            kind = None  # .grad, .shape, .requires_grad ...: only .data matters
        out = kwargs.get("out") if kwargs else None
        if kind is None and out is None:
            result = func(*args, **kwargs)
            if tracker.pending:
                flush(tracker)
            return result
        calls = self.calls
        if name == "type":  # a legacy class stand-in (``x.type(torch.FloatTensor)``) goes to torch as the real class
            args = tuple(real(arg) for arg in args)
            kwargs = {key: real(value) for key, value in kwargs.items()}
        if kind == "write" or out is not None or name in ("add_", "__iadd__"):
            receiver = out if out is not None else (args[0] if args else None)
            tracker.busy = True
            try:
                calls.before_write(name, receiver)
            finally:
                tracker.busy = False
        result = func(*args, **kwargs)
        if kind is not None:
            tracker.busy = True
            try:
                calls.after[kind](func, name, args, kwargs, result)
            finally:
                tracker.busy = False
        if tracker.pending:
            flush(tracker)
        return result
