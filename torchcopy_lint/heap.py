"""The cyclic garbage collector in torchcopy-lint's own processes (the CLI and its workers).

Python's collector starts a collection every few hundred (here: tens of thousands)
net allocations of tracked objects. Parsing a file with LibCST allocates millions of
them, all alive until the file is done, so the collector traverses each big tree
again and again while it is being built, and finds nothing: about a tenth of a cold
run's CPU (measured with ``gc.callbacks`` on every ninth file of torch's source).

So a process of this tool, once its modules are imported, freezes what is alive
(never traversed again) and turns automatic collection off. What a file leaves behind
is freed by reference counting: :meth:`FileRun.release` breaks the analysis' reference
cycles once the file's results are read. The few cycles left are collected between
files, once the tracked objects allocated and not freed since the last collection
(``gc.get_count()[0]``, which Python keeps counting while automatic collection is off)
pass :data:`COLLECT_AFTER`.

Only for processes this tool owns: a host's heap (flake8's, an editor's) keeps Python's
own settings.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Net tracked allocations after which the next gap between two files collects: a few
# files' leftovers at most, or one file that kept what it should not have.
COLLECT_AFTER = 1_000_000

_owned = False


def own_process(preload: Iterable[object] = ()) -> None:
    """Take the collector over in a process of this tool: freeze what is alive, stop
    automatic collection. ``preload`` is consumed first (imports the checkers' modules),
    so that what it loads is frozen too; called again, it freezes what loaded since."""
    global _owned
    for _ in preload:
        pass
    gc.freeze()
    gc.disable()
    _owned = True


def collect_if_due() -> None:
    """Between two files: collect if the garbage may have grown past :data:`COLLECT_AFTER`."""
    if _owned and gc.get_count()[0] > COLLECT_AFTER:
        gc.collect()


class CollectingBetween(Generic[T, R]):
    """``function`` followed by :func:`collect_if_due`: what a worker runs per item
    (picklable when ``function`` is a module-level function)."""

    def __init__(self, function: Callable[[T], R]) -> None:
        self.function = function

    def __call__(self, item: T) -> R:
        try:
            return self.function(item)
        finally:
            collect_if_due()
