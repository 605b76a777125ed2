"""Mutants of a claim pair: programs that must never confirm the rule.

A claim that confirms its rule whatever its programs do proves nothing. Each
mutant below changes the pair in a way that removes, hides or breaks the hazard
the marked lines make; run through ``runner.verify``, none may be confirmed
(``tests/test_verify_mutants.py`` runs them all with real torch):

- ``swapped``: the fixed scenario as the claim, the claim as the fixed one
- ``fixed-hunk-N``: the claim with one of its differences from the fixed scenario
  applied (each difference is a marked line's fix: ``hunks_away_from_markers``
  says where the catalogue breaks that rule)
- ``moved-L``: marked line ``L`` copied, unmarked, just above itself, and the
  marked one put under ``if False:`` so it never runs: the hazard, if observed,
  comes from another line (the line tracing must refute it)
- ``raises-L``: marked line ``L`` replaced by a ``raise TypeError``: broken code
  is an error, never the hazard
- ``fixed-says-no-hazard``: the fixed scenario replaced by a program that
  pronounces its own verdict (only the shared check may call ``observed``)
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

from torchcopy_lint.catalogue import Example
from torchcopy_lint.runtime.claims import ClaimPair

_MARKER_COMMENT = re.compile(r"\s*#\s*TCL\d{3}\b.*$")


@dataclass(frozen=True)
class Mutant:
    name: str
    pair: ClaimPair
    expect: str  # what refutes it: "runtime" (the programs' own observations) or "error"


def _lines(source: str) -> list[str]:
    return source.splitlines(keepends=True)


def hunks(pair: ClaimPair) -> list[tuple[int, int, int, int]]:
    """The claim's differences from the fixed scenario: (claim start, claim end, fixed start, fixed end), 0-based, end excluded."""
    matcher = difflib.SequenceMatcher(a=_lines(pair.flagged.source), b=_lines(pair.fixed.source), autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def hunks_away_from_markers(pair: ClaimPair) -> list[tuple[int, int]]:
    """Claim line ranges (1-based, inclusive) the fixed scenario changes away from every marked line.

    The fixed scenario is meant to be the claim with its marked lines fixed: a change
    may touch a marked line or the line next to one (``d = x.detach()`` above the
    marked ``d.mul_(2)``), nothing else, so the two run the same scenario.
    """
    marked = set(pair.marked)
    away = []
    for i1, i2, _j1, _j2 in hunks(pair):
        first, last = i1 + 1, max(i2, i1 + 1)  # a pure insertion sits between lines i1 and i1 + 1
        if not any(first - 1 <= line <= last + 1 for line in marked):
            away.append((first, last))
    return away


def _with_claim(pair: ClaimPair, source: str) -> ClaimPair:
    return replace(pair, flagged=Example("claim", source, pair.flagged.line))


def _fixed_hunk(pair: ClaimPair, hunk: tuple[int, int, int, int]) -> str:
    claim, fixed = _lines(pair.flagged.source), _lines(pair.fixed.source)
    i1, i2, j1, j2 = hunk
    return "".join(claim[:i1] + fixed[j1:j2] + claim[i2:])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _moved(source: str, line: int) -> str | None:
    """Marked line ``line`` run unmarked just above itself, the marked copy dead (None for a compound header)."""
    lines = _lines(source)
    text = lines[line - 1]
    if text.rstrip().endswith(":"):
        return None
    indent = _indent(text)
    unmarked = _MARKER_COMMENT.sub("", text.rstrip("\n")) + "\n"
    return "".join(lines[: line - 1] + [unmarked, f"{indent}if False:\n", "    " + text] + lines[line:])


def _raises(source: str, line: int) -> str:
    lines = _lines(source)
    indent = _indent(lines[line - 1])
    return "".join(lines[: line - 1] + [f'{indent}raise TypeError("mutant: the marked line is broken")\n'] + lines[line:])


def mutants(pair: ClaimPair) -> list[Mutant]:
    """Every mutant of one claim pair, named ``<code> claim <n> <mutation>``."""
    label = pair.label
    found = [
        Mutant(
            f"{label} swapped",
            replace(pair, flagged=Example("claim", pair.fixed.source, pair.fixed.line), fixed=Example("claim-fixed", pair.flagged.source, pair.flagged.line)),
            "runtime",
        )
    ]
    for number, hunk in enumerate(hunks(pair), start=1):
        found.append(Mutant(f"{label} fixed-hunk-{number}", _with_claim(pair, _fixed_hunk(pair, hunk)), "runtime"))
    for line in pair.marked:
        moved = _moved(pair.flagged.source, line)
        if moved is not None:
            found.append(Mutant(f"{label} moved-{line}", _with_claim(pair, moved), "runtime"))
        found.append(Mutant(f"{label} raises-{line}", _with_claim(pair, _raises(pair.flagged.source, line)), "error"))
    says = Example("claim-fixed", 'observed(hazard=False, evidence="no hazard")\n', pair.fixed.line)
    found.append(Mutant(f"{label} fixed-says-no-hazard", replace(pair, fixed=says), "error"))
    return found
