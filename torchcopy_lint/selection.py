"""Which rules run: ruff-style ``select`` / ``extend-select`` / ``ignore``.

- ``select`` replaces the default set; ``extend-select`` adds to it; ``ignore``
  removes. Entries are code prefixes (``TCL0``, ``TCL004``) or ``ALL``.
- The longest matching prefix decides; on a tie, ``ignore`` wins.
- Without ``select``, the default set is the rules whose catalogue says
  ``default: on``; it is the weakest selector, so any ``ignore`` beats it.
- Opt-in rules (``default: off``) run only when a selector names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


class SelectionError(ValueError):
    pass


def _strength(code: str, selectors: Iterable[str]) -> int:
    """Length of the longest selector matching ``code`` (ALL = 0), -1 for none."""
    best = -1
    for selector in selectors:
        if selector == "ALL":
            best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best


def validate(selectors: Iterable[str], known: Iterable[str]) -> None:
    known = list(known)
    for selector in selectors:
        if selector != "ALL" and not any(code.startswith(selector) for code in known):
            raise SelectionError(f"unknown rule selector {selector!r} (see `torchcopy-lint rules`)")


def enabled_codes(
    defaults: Mapping[str, bool],
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> frozenset[str]:
    """Codes that run, given each code's default state and the selectors."""
    enabled = set()
    for code, default_on in defaults.items():
        if select is None:
            chosen = 0 if default_on else -1
        else:
            chosen = _strength(code, select)
        chosen = max(chosen, _strength(code, extend_select))
        if chosen >= 0 and chosen > _strength(code, ignore):
            enabled.add(code)
    return frozenset(enabled)


def without(codes: frozenset[str], ignored_prefixes: Iterable[str]) -> frozenset[str]:
    """``codes`` minus those matching any prefix (used for per-file ignores)."""
    prefixes = tuple(prefix for prefix in ignored_prefixes)
    if "ALL" in prefixes:
        return frozenset()
    return frozenset(code for code in codes if not code.startswith(prefixes))
