"""Mutation test of the catalogue's claims: no mutant of a claim may confirm its rule.

Every rule's claim pairs are mutated (``runtime.mutants``: claim and fixed form
swapped, each of the claim's fixes applied alone, a marked line moved off the
path that runs, a marked line broken, a fixed form that pronounces its own
verdict) and run with real torch on the CPU, all in one ``runner.verify`` call
(fork-mode workers: torch is imported once per worker). The static view is left
out on purpose: the rule's linter would refute most mutants by itself, and the
point is that the programs' own observation refutes them. The unmutated pairs run
alongside as the control: they must be confirmed in the same run.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import pytest

from torchcopy_lint.catalogue import load_catalogue
from torchcopy_lint.runtime import runner
from torchcopy_lint.runtime.claims import RuleClaims, rule_claims
from torchcopy_lint.runtime.mutants import Mutant, hunks_away_from_markers, mutants

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="verify needs torch (the 'runtime' extra)")

RULES = [rule_claims(spec) for spec in load_catalogue().values() if spec.has_claim]
RUNTIME_REFUTATIONS = ("claim observed no hazard", "fixed program observed the hazard", "had not run when the claim observed")


def test_fixed_programs_change_only_the_marked_lines() -> None:
    """Each fixed scenario is its claim with the marked lines (or the line beside one) fixed: the same scenario otherwise."""
    away = {pair.label: hunks_away_from_markers(pair) for rule in RULES for pair in rule.pairs}
    assert {label: lines for label, lines in away.items() if lines} == {}
    assert all(rule.problem is None and rule.pairs for rule in RULES)


def test_every_rule_has_mutants_of_each_kind() -> None:
    for rule in RULES:
        for pair in rule.pairs:
            kinds = {mutant.name.rsplit(" ", 1)[1].split("-")[0] for mutant in mutants(pair)}
            assert {"swapped", "fixed", "moved", "raises"} <= kinds, (pair.label, kinds)


@pytest.fixture(scope="module")
def mutant_run() -> list[tuple[Mutant | None, runner.PairResult]]:
    """(mutant, result) for every mutant of every claim pair, and (None, result) for each original pair."""
    rules = []
    order: list[Mutant | None] = []
    for rule in RULES:
        entries: list[Mutant | None] = [None] * len(rule.pairs) + [mutant for pair in rule.pairs for mutant in mutants(pair)]
        pairs = [*rule.pairs, *(mutant.pair for mutant in entries if mutant is not None)]
        numbered = tuple(replace(pair, index=number) for number, pair in enumerate(pairs, start=1))
        rules.append(RuleClaims(rule.code, rule.name, rule.path, numbered, fix="none"))
        order += entries
    with runner.Executor(jobs=2, isolation="fork") as pool:
        cells = runner.verify(rules, ["cpu"], executor=pool, timeout=120, check_static=False)
    results = [pair for cell in cells for pair in cell.pairs]
    assert len(results) == len(order)
    return list(zip(order, results))


@needs_torch
def test_the_unmutated_claims_are_confirmed(mutant_run: list[tuple[Mutant | None, runner.PairResult]]) -> None:
    originals = [result for mutant, result in mutant_run if mutant is None]
    assert len(originals) == sum(len(rule.pairs) for rule in RULES)
    assert {result.verdict for result in originals} == {"confirmed"}, [result.evidence for result in originals if result.verdict != "confirmed"]


@needs_torch
def test_no_mutant_is_confirmed(mutant_run: list[tuple[Mutant | None, runner.PairResult]]) -> None:
    mutated = [(mutant, result) for mutant, result in mutant_run if mutant is not None]
    assert len(mutated) >= 5 * len(RULES)
    confirmed = {mutant.name: result.evidence for mutant, result in mutated if result.verdict == "confirmed"}
    assert confirmed == {}
    for mutant, result in mutated:
        if mutant.expect == "error":
            assert result.verdict == "error", (mutant.name, result.verdict, result.evidence)
            continue
        # refuted by what the programs observed, not by the linter (left out) nor by an error
        assert result.verdict == "refuted" and not result.errors, (mutant.name, result.verdict, result.evidence)
        assert any(reason in result.evidence for reason in RUNTIME_REFUTATIONS), (mutant.name, result.evidence)


@needs_torch
def test_a_hazard_from_an_unmarked_line_is_refuted_by_the_line_tracing(mutant_run: list[tuple[Mutant | None, runner.PairResult]]) -> None:
    """``moved`` mutants: where the hazard is still observed (it comes from the unmarked copy), the trace refutes it."""
    moved = [(mutant, result) for mutant, result in mutant_run if mutant is not None and " moved-" in mutant.name]
    assert len(moved) == sum(len(pair.marked) for rule in RULES for pair in rule.pairs)
    traced = 0
    for mutant, result in moved:
        claim = result.runs[0]
        if claim.status == "observed" and claim.hazard:
            traced += 1
            assert claim.unreached, mutant.name
            assert "had not run when the claim observed the hazard" in result.evidence, (mutant.name, result.evidence)
    assert traced >= len(RULES) // 2, "the tracing must be what refutes most moved mutants"
