"""Memoisation for the evaluator's mutually recursive questions.

The evaluator's questions call each other: a name's value asks for its bindings, a
binding in a loop asks for the name again (``parts = parts + [h.mean()]``). A question met
again while it is being answered is a cycle, and is cut with a fallback answer
("unknown"). A plain memo would also keep the answers computed *inside* the cycle, which
saw the cut: ``output, hidden = model(data, hidden)`` in a loop, entered at ``output``,
would keep ``hidden`` as "unknown" for good (its value is the very call being answered).

Here an answer is kept only if every cut it saw was at its own frame or above it (it is
the cycle's head). An answer that saw a cut below its frame is kept only while the frame
it was cut at is in progress (so a cycle is still walked once, not once per path through
it), and reading it counts as meeting that cut. It is computed again when it is asked
from outside the cycle, as the head of its own.

That alone does not make answers independent of the order of the questions (which head
is met first still matters): :meth:`SemanticModel._evaluate_in_source_order` asks first,
in source order, for every binding a loop carries, and every cycle of bindings passes
through one of those.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")

_NO_CUT = 1 << 30
_MISSING = object()


class CycleSafeMemo:
    """One stack of questions in progress, shared by the caches of one evaluator."""

    def __init__(self, max_nesting: int) -> None:
        self._max_nesting = max_nesting
        self._active: dict[tuple[int, Hashable], int] = {}  # (id(cache), key) -> its frame's depth
        self._lowest_cut = _NO_CUT  # the lowest frame a cut reached, in the frame being computed
        self._provisional: dict[tuple[int, Hashable], tuple[object, int]] = {}  # -> (answer, depth of its cut)
        self._provisional_at: dict[int, list[tuple[int, Hashable]]] = {}  # depth -> answers valid while it runs

    def get(self, cache: dict, key: Hashable, compute: Callable[[], T], on_cycle: T) -> T:
        """``cache[key]``, computing it with ``compute()`` if it is not known yet;
        ``on_cycle`` where the question is already being answered (or nested too deep)."""
        found = cache.get(key, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        marker = (id(cache), key)
        provisional = self._provisional.get(marker)
        if provisional is not None:
            self._lowest_cut = min(self._lowest_cut, provisional[1])
            return provisional[0]  # type: ignore[return-value]
        depth = self._active.get(marker)
        if depth is not None:
            self._lowest_cut = min(self._lowest_cut, depth)
            return on_cycle
        depth = len(self._active)
        if depth > self._max_nesting:
            # A chain too deep to follow: cut, like a cycle through the outermost question,
            # so that what the chain computed from the cut is not kept beyond that question
            # (asked again from a shallower start, it is followed to the end).
            self._lowest_cut = 0
            return on_cycle
        self._active[marker] = depth
        outer_cut, self._lowest_cut = self._lowest_cut, _NO_CUT
        try:
            result = compute()
        finally:
            del self._active[marker]
            for dropped in self._provisional_at.pop(depth, ()):
                del self._provisional[dropped]
            cut = self._lowest_cut
            self._lowest_cut = min(outer_cut, cut) if cut < depth else outer_cut
        if cut >= depth:
            cache[key] = result
        else:
            self._provisional[marker] = (result, cut)
            self._provisional_at.setdefault(cut, []).append(marker)
        return result
