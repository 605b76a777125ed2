"""The claims of the catalogue, their static view, and the rule's autofix applied to them.

Each rule file carries ``python claim``, ``python claim-fixed`` and ``python
claim-check`` blocks; the n-th ``claim`` is paired with the n-th ``claim-fixed``
and judged by the n-th ``claim-check`` (or by the only one, when there is one).
The claim and its fixed form are two scenarios; the check is the one observation
that runs after each of them and calls ``observed(hazard, evidence)``: the fixed
form is judged by the very test that found the hazard, not by a verdict of its
own. The static view lints both scenarios with the rule itself: the rule must
fire on exactly the ``# TCLNNN`` marker lines of the flagged program and stay
silent on the fixed one.

A rule with an autofix (``fix: safe`` or ``fix: unsafe``) gets a third program per
pair: its ``claim`` block, markers left in, passed through the rule's own fix
(``fixes.apply.fix_bytes``; safe fixes only for a safe rule, unsafe ones too for
an unsafe rule). The fix must change the claim and its result must lint clean
for the rule; ``runner`` then runs it like the other two.
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
    check: Example | None = None  # the shared observation; None only for pairs built by hand

    @property
    def label(self) -> str:
        return f"{self.code} claim {self.index}"

    @property
    def marked(self) -> tuple[int, ...]:
        return tuple(self.flagged.marked_lines(self.code))

    def program(self, scenario: str) -> str:
        """The whole program that runs for a scenario: the scenario, then the shared check."""
        return scenario + (self.check.source if self.check is not None else "")


@dataclass(frozen=True)
class RuleClaims:
    """A rule's claim pairs, or why it has none usable."""

    code: str
    name: str
    path: Path
    pairs: tuple[ClaimPair, ...] = ()
    problem: str | None = None
    fix: str = "none"  # the rule's front matter: "none", "safe" or "unsafe"
    no_claim: str | None = None  # ``claim: none (why)``: nothing to run; verify reports n/a


def rule_claims(spec: RuleSpec) -> RuleClaims:
    if not spec.has_claim:
        return RuleClaims(spec.code, spec.name, spec.path, fix=spec.fix, no_claim=spec.no_claim)
    flagged = spec.examples_of("claim")
    fixed = spec.examples_of("claim-fixed")
    checks = spec.examples_of("claim-check")
    problem = None
    if not flagged or not fixed:
        problem = f"{spec.path.name} needs a 'python claim' and a 'python claim-fixed' block"
    elif len(flagged) != len(fixed):
        problem = f"{spec.path.name} has {len(flagged)} 'python claim' blocks but {len(fixed)} 'python claim-fixed' blocks"
    elif not checks:
        problem = f"{spec.path.name} needs a 'python claim-check' block: the one observation applied to the claim and to its fixed form"
    elif len(checks) not in (1, len(flagged)):
        problem = f"{spec.path.name} has {len(flagged)} claim pairs but {len(checks)} 'python claim-check' blocks (one per pair, or one for all)"
    pairs = () if problem else tuple(
        ClaimPair(spec.code, spec.name, index, bad, good, spec.path, checks[index - 1] if len(checks) > 1 else checks[0])
        for index, (bad, good) in enumerate(zip(flagged, fixed), start=1)
    )
    return RuleClaims(spec.code, spec.name, spec.path, pairs, problem, spec.fix)


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

    marked = pair.marked
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


@dataclass(frozen=True)
class AutofixView:
    """The rule's own autofix applied to a flagged claim: the program to run, or why there is none."""

    fix: str  # "safe" or "unsafe": the applicability the fix was applied with
    source: str | None  # the autofixed program; None when the fix failed or changed nothing
    applied: int = 0  # fixes applied
    remaining: tuple[int, ...] = ()  # lines where the rule still fires on the autofixed program
    error: str | None = None
    marked: tuple[int, ...] = ()  # the claim's markers, where the fix left them in the autofixed program

    @property
    def clean(self) -> bool:
        return self.error is None and self.source is not None and not self.remaining

    def describe(self) -> str:
        if self.error:
            return self.error
        flag = "--fix --unsafe-fixes" if self.fix == "unsafe" else "--fix"
        if self.remaining:
            return f"the rule still fires on the autofixed claim ({flag}) at line(s) {list(self.remaining)}"
        return f"{flag} made {self.applied} change(s) to the claim, which then lints clean"


def autofix_view(pair: ClaimPair, fix: str) -> AutofixView | None:
    """The pair's ``claim`` block (markers left in) after the rule's autofix; None for a rule without one."""
    if fix not in ("safe", "unsafe"):
        return None
    from torchcopy_lint.engine import CannotCheck
    from torchcopy_lint.fixes.apply import fix_bytes
    from torchcopy_lint.registry import all_rules

    if pair.code not in all_rules():
        return AutofixView(fix, None, error=f"no checker is registered for {pair.code}, so there is no autofix to apply")
    try:
        outcome = fix_bytes(pair.flagged.source.encode("utf-8"), f"{pair.code}-claim-autofixed.py", {pair.code}, unsafe=fix == "unsafe")
    except CannotCheck as error:  # FixFailed too: the fix produced code that failed its own post-fix checks
        return AutofixView(fix, None, error=f"the autofix failed on the claim: {error}")
    except Exception as error:  # noqa: BLE001 - a fix crash is this claim's error, not the run's
        return AutofixView(fix, None, error=f"the autofix crashed on the claim ({type(error).__name__}: {error})")
    if not outcome.changed:
        return AutofixView(fix, None, error="the autofix does not apply to the claim")
    remaining = tuple(sorted({finding.line for finding in outcome.remaining if finding.code == pair.code}))
    source = outcome.fixed.decode("utf-8")
    marked = tuple(Example("claim", source, 0).marked_lines(pair.code))
    return AutofixView(fix, source, outcome.fixed_count, remaining, marked=marked)
