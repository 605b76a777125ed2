"""The analysis's work grows with the code, not with the paths through its call graph.

Counted, not timed: how many binding values the evaluator computes. A callee evaluated with
one call's arguments (call-site return inference) recomputes only the scopes those arguments
can change; before, each such evaluation recomputed every function its callee reached, which
cost torch/_inductor/lowering.py 49 s of analysis (now 2.1 s).
"""

from __future__ import annotations

import pytest

from torchcopy_lint.analysis import evaluate
from torchcopy_lint.engine import FileRun, rules_for


def _chain(length: int) -> str:
    """``h0`` calls ``h1`` twice with its parameter, ``h1`` calls ``h2`` ...: a deep call graph."""
    lines = ["import torch", ""]
    for i in range(length):
        returned = f"h{i + 1}(a) + h{i + 1}(a * 2) + helper(a, b)" if i < length - 1 else "a"
        lines += [f"def h{i}(a, b=None):", "    c = torch.relu(a)", f"    return {returned}", ""]
    lines += ["def helper(x, y):", "    return x if y is None else y", ""]
    lines += ["out = h0(torch.ones(3, requires_grad=True))", "snap = torch.tensor(out)", ""]
    return "\n".join(lines)


def _computed(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[tuple[int, str]]]:
    count = 0
    original = evaluate.Evaluator._binding_value

    def counted(self: evaluate.Evaluator, binding: object) -> object:
        nonlocal count
        count += 1
        return original(self, binding)  # type: ignore[arg-type]

    monkeypatch.setattr(evaluate.Evaluator, "_binding_value", counted)
    # One analysis (screen=False: LibCST's tree only; a screened run that reports analyses twice,
    # the tree built from ``ast`` first, see FileRun.context).
    findings = FileRun("chain.py", rules_for(["TCL002"]), data=source.encode(), screen=False).findings()
    return count, [(finding.line, finding.code) for finding in findings]


def test_binding_values_grow_linearly_with_a_chain_of_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    short, short_findings = _computed(_chain(20), monkeypatch)
    long, long_findings = _computed(_chain(40), monkeypatch)
    # Each function adds a few bindings (its parameters, ``c``) and a few call-site
    # evaluations of them; before the fix each one added about seventeen.
    assert long - short <= 4 * 20, (short, long)
    # The chain's tensor still reaches the end: the copy-construct is found.
    assert short_findings == [(87, "TCL002")] and long_findings == [(167, "TCL002")]
