"""The catalogue's claim programs run under the sanitizer: does it flag each rule's claim at its
markers, and stay silent (for that rule) on the fixed program?

Used by the tests and by ``verify``'s ``sanitizer`` column. A program is what ``verify`` runs: a
scenario (``claim`` or ``claim-fixed``) followed by the pair's shared ``claim-check``, through the
same ``runtime.harness.run`` (only the check gets ``observed``; its lines are numbered on from the
scenario's), with the sanitizer's session (``collect`` mode) around both. The parent (no torch)
sends the programs to one child, ``python -m torchcopy_lint.sanitizer.claims``, which imports
torch once and runs each program in a forked child of its own (``runtime.harness.fork_call``;
in-process where fork is unavailable).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from torchcopy_lint.sanitizer.messages import NOT_OBSERVABLE

RESULT_PREFIX = "@torchcopy-sanitizer-claim "
FLAGS = "flags"
STATUSES = (FLAGS, "missed", "noisy", "error", "n/a")


def run_sanitized(source: str, device: str, name: str, seed: int = 0, threads: int = 1, check: str | None = None) -> dict[str, Any]:
    """One program (``source``, then ``check``) run as ``verify`` runs it, under
    ``sanitize(mode="collect")``: its own result and the hazards reported."""
    from torchcopy_lint.runtime import harness
    from torchcopy_lint.sanitizer.session import Sanitizer

    sanitizer = Sanitizer("collect")
    outcome = harness.run(source, device, name, seed, threads, check=check, within=sanitizer)
    outcome["hazards"] = [hazard.as_dict() for hazard in sanitizer.report]
    return outcome


def serve() -> int:
    """Read a JSON list of programs on stdin; print one result line per program."""
    from torchcopy_lint.runtime import harness

    import torch  # noqa: F401 - once, before the forks
    import torch._dynamo  # noqa: F401 - torch's modes import it on first use

    import torchcopy_lint.sanitizer.session  # noqa: F401

    programs = json.loads(sys.stdin.read() or "[]")
    for program in programs:
        def work(program: dict[str, Any] = program) -> dict[str, Any]:
            return run_sanitized(
                program["source"], program["device"], program["name"], int(program.get("seed", 0)), int(program.get("threads", 1)), program.get("check")
            )

        try:
            result = harness.fork_call(work, float(program.get("timeout", 120))) if hasattr(os, "fork") else work()
        except Exception as error:  # noqa: BLE001
            result = {"status": "error", "message": f"{type(error).__name__}: {error}", "hazards": []}
        result.setdefault("hazards", [])
        print(RESULT_PREFIX + json.dumps({"name": program["name"], **result}), flush=True)
    return 0


def _text(output: str | bytes | None) -> str:
    return output.decode("utf-8", "replace") if isinstance(output, bytes) else output or ""


def run_programs(programs: Sequence[dict[str, Any]], timeout: float = 600.0) -> dict[str, dict[str, Any]]:
    """Run ``programs`` ({name, source, check, device}) in one child process; results by name."""
    from torchcopy_lint.runtime.runner import child_env

    try:
        completed = subprocess.run(
            [sys.executable, "-m", "torchcopy_lint.sanitizer.claims"],
            input=json.dumps(list(programs)),
            capture_output=True,
            text=True,
            env=child_env(0),
            timeout=timeout,
        )
        stdout, stderr = completed.stdout, completed.stderr
    except subprocess.TimeoutExpired as expired:  # the programs that answered keep their results
        stdout, stderr = _text(expired.stdout), f"{_text(expired.stderr)}\ntimed out after {timeout:.0f} s"
    results = {}
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
            results[result.pop("name")] = result
    for program in programs:
        if program["name"] not in results:
            tail = " ".join(stderr.strip().splitlines()[-1:])
            results[program["name"]] = {"status": "error", "message": f"no result from the sanitizer's child ({tail})", "hazards": []}
    return results


@dataclass(frozen=True)
class SanitizerVerdict:
    """The sanitizer on one rule's claims: ``flags`` (every claim program reports the rule at
    exactly its ``# TCLNNN`` markers, no fixed program reports it), ``missed`` (a marked line not
    reported), ``noisy`` (reported where nothing is marked: a fixed program, or an unmarked line of
    the claim program, its check included), ``error`` or ``n/a``."""

    status: str
    evidence: str

    def as_dict(self) -> dict[str, str]:
        return {"status": self.status, "evidence": self.evidence}


def programs_for(rules: Sequence[Any], device: str, unobservable: bool = False, **run: Any) -> list[dict[str, Any]]:
    """The claim and claim-fixed programs of ``rules`` (``runtime.claims.RuleClaims``): each
    scenario with the pair's shared check, which runs after it and alone calls ``observed()``,
    as under ``verify``; those of the rules the sanitizer cannot observe only with ``unobservable``.
    ``run``: ``seed``, ``threads``, ``timeout`` (seconds) for every program, as ``verify`` was given them."""
    return [
        {
            "name": f"{pair.code}-{kind}-{pair.index}",
            "source": example.source,
            "check": pair.check.source if pair.check is not None else None,
            "device": device,
            **run,
        }
        for rule in rules
        if rule.no_claim is None and (unobservable or rule.code not in NOT_OBSERVABLE)
        for pair in rule.pairs
        for kind, example in (("claim", pair.flagged), ("claim-fixed", pair.fixed))
    ]


def _codes(result: dict[str, Any]) -> list[str]:
    return sorted({hazard["code"] for hazard in result.get("hazards", [])})


def _lines(result: dict[str, Any], code: str) -> list[int]:
    return sorted({int(hazard["line"]) for hazard in result.get("hazards", []) if hazard["code"] == code})


def _numbers(lines: Sequence[int]) -> str:
    return ", ".join(str(line) for line in lines) or "none"


def _pair_status(code: str, marked: Sequence[int], claim: dict[str, Any], fixed: dict[str, Any]) -> str:
    """One pair's status, from its two results (their rule's hazards only)."""
    if "error" in (claim["status"], fixed["status"]):
        return "error"
    reported = _lines(claim, code)
    if not marked or not set(marked) <= set(reported):  # no marker: nothing it could be flagged at
        return "missed"
    if set(reported) - set(marked) or _lines(fixed, code):
        return "noisy"
    return FLAGS


def verdicts(rules: Sequence[Any], results: dict[str, dict[str, Any]]) -> dict[str, SanitizerVerdict]:
    """Per rule, from the results of ``programs_for``: the worst of its pairs' statuses."""
    rank = ("error", "missed", "noisy", FLAGS)
    out: dict[str, SanitizerVerdict] = {}
    for rule in rules:
        if rule.no_claim is not None or rule.code in NOT_OBSERVABLE:
            out[rule.code] = SanitizerVerdict("n/a", NOT_OBSERVABLE.get(rule.code, f"no runtime claim: {rule.no_claim}"))
            continue
        if not rule.pairs:
            out[rule.code] = SanitizerVerdict("error", rule.problem or "no claims")
            continue
        statuses, notes = [], []
        for pair in rule.pairs:
            claim = results.get(f"{pair.code}-claim-{pair.index}", {"status": "error", "message": "not run"})
            fixed = results.get(f"{pair.code}-claim-fixed-{pair.index}", {"status": "error", "message": "not run"})
            statuses.append(_pair_status(rule.code, pair.marked, claim, fixed))
            for label, result in (("claim", claim), ("fixed", fixed)):
                if result["status"] == "error":
                    notes.append(f"{label} {pair.index}: {result.get('message', '')}")
            notes.append(
                f"claim {pair.index}: {rule.code} at line(s) {_numbers(_lines(claim, rule.code))}, marked {_numbers(pair.marked)} "
                f"(all codes: {', '.join(_codes(claim)) or 'none'}); fixed: {', '.join(_codes(fixed)) or 'no hazard'}"
            )
        out[rule.code] = SanitizerVerdict(min(statuses, key=rank.index), "; ".join(notes))
    return out


def sanitizer_column(rules: Sequence[Any], device: str = "cpu", seed: int = 0, threads: int = 1, timeout: float = 120.0) -> dict[str, dict[str, str]]:
    """``verify``'s sanitizer column: per rule, does the sanitizer flag the claim at its markers and
    stay silent on the fixed program (runs every claim and fixed program once more, each scenario
    with its check, under the sanitizer, on ``device``)."""
    programs = programs_for(rules, device, seed=seed, threads=threads, timeout=timeout)
    results = run_programs(programs, timeout=max(600.0, 60.0 + timeout * len(programs))) if programs else {}
    return {code: verdict.as_dict() for code, verdict in verdicts(rules, results).items()}


if __name__ == "__main__":
    sys.exit(serve())
