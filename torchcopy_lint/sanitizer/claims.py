"""The catalogue's claim programs run under the sanitizer: does it flag each rule's claim, and
stay silent (for that rule) on the fixed program?

Used by the tests and by ``verify``'s ``sanitizer`` column. The parent (no torch) sends the
programs to one child, ``python -m torchcopy_lint.sanitizer.claims``, which imports torch once
and runs each program in a forked child of its own (``runtime.harness.fork_call``; in-process
where fork is unavailable) with the names ``verify`` provides (``device``, ``observed``,
``skip``, ``shares_storage``), in ``collect`` mode.
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


def run_sanitized(source: str, device: str, name: str, seed: int = 0, threads: int = 1) -> dict[str, Any]:
    """One program under ``sanitize(mode="collect")``: its own result and the hazards reported."""
    import torch

    from torchcopy_lint.runtime import harness
    from torchcopy_lint.sanitizer.session import Sanitizer

    filename = f"<{name}>"
    recorder = harness._Recorder()
    sanitizer = Sanitizer("collect")
    outcome: dict[str, Any]
    try:
        reason = harness._unavailable(torch, device)
        if reason:
            return {"status": "skipped", "reason": reason, "hazards": []}
        harness.reset_state(torch, device, seed, threads)
        namespace = {"__name__": "__main__", "__file__": filename, "device": device, "observed": recorder.observed,
                     "skip": recorder.skip, "shares_storage": harness.shares_storage}
        code = compile(source, filename, "exec")
        with sanitizer:
            exec(code, namespace)  # noqa: S102 - running the claim is the point
        harness.synchronize(torch, device)
        outcome = recorder.result or {"status": "error", "message": "the program finished without calling observed()"}
    except harness._Skip as skipped:
        outcome = {"status": "skipped", "reason": str(skipped)}
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - every failure is a result
        outcome = {"status": "error", "message": harness._error_message(error, filename)}
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
            return run_sanitized(program["source"], program["device"], program["name"], int(program.get("seed", 0)))

        try:
            result = harness.fork_call(work, float(program.get("timeout", 120))) if hasattr(os, "fork") else work()
        except Exception as error:  # noqa: BLE001
            result = {"status": "error", "message": f"{type(error).__name__}: {error}", "hazards": []}
        result.setdefault("hazards", [])
        print(RESULT_PREFIX + json.dumps({"name": program["name"], **result}), flush=True)
    return 0


def run_programs(programs: Sequence[dict[str, Any]], timeout: float = 600.0) -> dict[str, dict[str, Any]]:
    """Run ``programs`` ({name, source, device}) in one child process; results by name."""
    from torchcopy_lint.runtime.runner import child_env

    completed = subprocess.run(
        [sys.executable, "-m", "torchcopy_lint.sanitizer.claims"],
        input=json.dumps(list(programs)),
        capture_output=True,
        text=True,
        env=child_env(0),
        timeout=timeout,
    )
    results = {}
    for line in completed.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
            results[result.pop("name")] = result
    for program in programs:
        if program["name"] not in results:
            tail = " ".join(completed.stderr.strip().splitlines()[-1:])
            results[program["name"]] = {"status": "error", "message": f"no result from the sanitizer's child ({tail})", "hazards": []}
    return results


@dataclass(frozen=True)
class SanitizerVerdict:
    """The sanitizer on one rule's claims: ``flags`` (every claim reports the rule, no fixed
    program does), ``missed``, ``noisy`` (a fixed program reports the rule), ``error`` or ``n/a``."""

    status: str
    evidence: str

    def as_dict(self) -> dict[str, str]:
        return {"status": self.status, "evidence": self.evidence}


def programs_for(rules: Sequence[Any], device: str, unobservable: bool = False) -> list[dict[str, Any]]:
    """The claim and claim-fixed programs of ``rules`` (``runtime.claims.RuleClaims``), each its
    scenario followed by the pair's shared check (which calls ``observed()``, as under ``verify``);
    those of the rules the sanitizer cannot observe only with ``unobservable``."""
    return [
        {"name": f"{pair.code}-{kind}-{pair.index}", "source": pair.program(example.source), "device": device}
        for rule in rules
        if rule.no_claim is None and (unobservable or rule.code not in NOT_OBSERVABLE)
        for pair in rule.pairs
        for kind, example in (("claim", pair.flagged), ("claim-fixed", pair.fixed))
    ]


def _codes(result: dict[str, Any]) -> list[str]:
    return sorted({hazard["code"] for hazard in result.get("hazards", [])})


def verdicts(rules: Sequence[Any], results: dict[str, dict[str, Any]]) -> dict[str, SanitizerVerdict]:
    """Per rule, from the results of ``programs_for``."""
    out: dict[str, SanitizerVerdict] = {}
    for rule in rules:
        if rule.no_claim is not None or rule.code in NOT_OBSERVABLE:
            out[rule.code] = SanitizerVerdict("n/a", NOT_OBSERVABLE.get(rule.code, f"no runtime claim: {rule.no_claim}"))
            continue
        if not rule.pairs:
            out[rule.code] = SanitizerVerdict("error", rule.problem or "no claims")
            continue
        status, notes = FLAGS, []
        for pair in rule.pairs:
            claim = results.get(f"{pair.code}-claim-{pair.index}", {"status": "error", "message": "not run"})
            fixed = results.get(f"{pair.code}-claim-fixed-{pair.index}", {"status": "error", "message": "not run"})
            for label, result in (("claim", claim), ("fixed", fixed)):
                if result["status"] == "error":
                    status = "error"
                    notes.append(f"{label} {pair.index}: {result.get('message', '')}")
            flagged = [h for h in claim.get("hazards", []) if h["code"] == rule.code]
            noisy = [h for h in fixed.get("hazards", []) if h["code"] == rule.code]
            if status != "error" and not flagged:
                status = "missed"
            if status not in ("error", "missed") and noisy:
                status = "noisy"
            lines = ", ".join(str(h["line"]) for h in flagged)
            notes.append(
                f"claim {pair.index}: {rule.code} at line(s) {lines or 'none'} (all codes: {', '.join(_codes(claim)) or 'none'}); "
                f"fixed: {', '.join(_codes(fixed)) or 'no hazard'}"
            )
        out[rule.code] = SanitizerVerdict(status, "; ".join(notes))
    return out


def sanitizer_column(rules: Sequence[Any], device: str = "cpu") -> dict[str, dict[str, str]]:
    """``verify``'s sanitizer column: per rule, does the sanitizer flag the claim and stay silent on
    the fixed program (runs every claim once more, under the sanitizer, on ``device``)."""
    programs = programs_for(rules, device)
    results = run_programs(programs) if programs else {}
    return {code: verdict.as_dict() for code, verdict in verdicts(rules, results).items()}


if __name__ == "__main__":
    sys.exit(serve())
