"""``torchcopy_lint.sanitize()``: one sanitizer session, as a context manager or a decorator.

Entering installs, innermost last: the saved-tensor hooks (``saved``), the legacy constructor
wrappers (``legacy``), the function mode (``function_mode``) and the dispatch mode
(``dispatch_mode``); leaving removes them in reverse order and checks the writes still queued.
The ``with`` statement gives the session's ``Report``; a decorated function's report is the
``report`` attribute of the decorator.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from torchcopy_lint.sanitizer import legacy
from torchcopy_lint.sanitizer.dispatch_mode import SanitizerDispatchMode
from torchcopy_lint.sanitizer.function_mode import SanitizerFunctionMode
from torchcopy_lint.sanitizer.report import Report
from torchcopy_lint.sanitizer.saved import SavedTensors, flush
from torchcopy_lint.sanitizer.state import MODES, Tracker


class Sanitizer(contextlib.ContextDecorator):
    """Watch the code inside for the hazards of the catalogue's rules.

    ``mode``: ``"warn"`` (a ``TorchCopyHazardWarning`` per hazard, the default), ``"raise"``
    (``TorchCopyHazard`` at the first hazard) or ``"collect"`` (only the report). Every mode
    fills ``report``.
    """

    def __init__(self, mode: str = "warn", report: Report | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"sanitize(mode=...) must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.report = report if report is not None else Report()
        self._active: list[tuple[Tracker, contextlib.ExitStack]] = []

    def __enter__(self) -> Report:
        tracker = Tracker(self.report, self.mode)
        stack = contextlib.ExitStack()
        try:
            saved = SavedTensors(tracker)
            stack.enter_context(torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack))
            stack.callback(legacy.listen(tracker))
            stack.enter_context(SanitizerFunctionMode(tracker))
            stack.enter_context(SanitizerDispatchMode(tracker))
        except BaseException:
            stack.close()
            raise
        self._active.append((tracker, stack))
        return self.report

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        tracker, stack = self._active.pop()
        with stack:
            if tracker.pending:
                try:
                    flush(tracker)
                except Exception:
                    if error is None:
                        raise
        return False


def sanitize(mode: str = "warn") -> Sanitizer:
    """``with sanitize(): ...`` or ``@sanitize(mode="raise")``."""
    return Sanitizer(mode)
