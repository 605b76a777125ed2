"""The claims of the catalogue, and their static view.

Each rule file carries ``python claim`` and ``python claim-fixed`` blocks; the
n-th ``claim`` is paired with the n-th ``claim-fixed``. The static view lints both
with the rule itself: the rule must fire on exactly the ``# TCLNNN`` marker lines
of the flagged program and stay silent on the fixed one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from torchcopy_lint.catalogue import Example, RuleSpec


@dataclass(frozen=True)
class ClaimPair:
    """One flagged program and its fixed form, from one rule file."""

    code: str
    name: str
    index: int  # 1-based position among the rule's claims
    flagged: Example
    fixed: Example
    path: Path

    @property
    def label(self) -> str:
        return f"{self.code} claim {self.index}"


@dataclass(frozen=True)
class RuleClaims:
    """A rule's claim pairs, or why it has none usable."""

    code: str
    name: str
    path: Path
    pairs: tuple[ClaimPair, ...] = ()
    problem: str | None = None


def rule_claims(spec: RuleSpec) -> RuleClaims:
    flagged = spec.examples_of("claim")
    fixed = spec.examples_of("claim-fixed")
    problem = None
    if not flagged or not fixed:
        problem = f"{spec.path.name} needs a 'python claim' and a 'python claim-fixed' block"
    elif len(flagged) != len(fixed):
        problem = f"{spec.path.name} has {len(flagged)} 'python claim' blocks but {len(fixed)} 'python claim-fixed' blocks"
    pairs = () if problem else tuple(
        ClaimPair(spec.code, spec.name, index, bad, good, spec.path)
        for index, (bad, good) in enumerate(zip(flagged, fixed), start=1)
    )
    return RuleClaims(spec.code, spec.name, spec.path, pairs, problem)


@dataclass(frozen=True)
class StaticView:
    """Whether the rule agrees with its own claim: fires at the markers, silent on the fix."""

    marked: tuple[int, ...]
    found: tuple[int, ...]
    fixed_found: tuple[int, ...]
    error: str | None = None

    @property
    def agrees(self) -> bool:
        return self.error is None and bool(self.marked) and self.found == self.marked and not self.fixed_found

    def describe(self) -> str:
        if self.error:
            return f"static: {self.error}"
        problems = []
        if not self.marked:
            problems.append("the claim has no '# TCLNNN' marker")
        if self.found != self.marked:
            problems.append(f"rule fires at claim line(s) {list(self.found)} but the markers are at {list(self.marked)}")
        if self.fixed_found:
            problems.append(f"rule fires on the fixed program at line(s) {list(self.fixed_found)}")
        if problems:
            return "static: " + "; ".join(problems)
        lines = ", ".join(str(line) for line in self.found)
        return f"static: fires at claim line {lines} as marked, silent on the fixed program"


def static_view(pair: ClaimPair) -> StaticView:
    """Lint both programs with the pair's rule (lazily imported: the registry loads every checker)."""
    from torchcopy_lint.engine import CannotCheck, lint_source
    from torchcopy_lint.registry import all_rules

    marked = tuple(pair.flagged.marked_lines(pair.code))
    if pair.code not in all_rules():
        return StaticView(marked, (), (), error=f"no checker is registered for {pair.code}")
    try:
        found = tuple(sorted({f.line for f in lint_source(pair.flagged.source, f"{pair.code}-claim.py", {pair.code})}))
        fixed = tuple(sorted({f.line for f in lint_source(pair.fixed.source, f"{pair.code}-claim-fixed.py", {pair.code})}))
    except CannotCheck as error:
        return StaticView(marked, (), (), error=f"cannot lint the claim: {error}")
    except Exception as error:  # noqa: BLE001 - a checker crash is this claim's error, not the run's
        return StaticView(marked, (), (), error=f"the linter failed on the claim ({type(error).__name__}: {error})")
    return StaticView(marked, found, fixed)
