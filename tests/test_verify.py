"""``torchcopy-lint verify``: every rule's claim, run with real torch, checked with the rule.

The whole catalogue is verified on the CPU once, by the real command in a
subprocess. The verdict logic is exercised on a temporary catalogue whose single
rule (TCL001, so that the static view and the autofix have a checker) carries one
claim pair per scenario: refuted either way, an exception, a timeout, a crash,
skip(), no observed() call, leaked global state, a static mismatch; and, with
``fix: safe`` / ``fix: unsafe`` in its front matter, an autofix that removes the
hazard, one that leaves it, one that does not touch the claim, one that leaves a
finding behind, an unsafe fix. Those run in-process
(``runtime.cli.main`` or ``runner.verify``; the programs still run in their own
processes) to save starting interpreters: every torch import costs ~1.7 s of CPU.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, REPO, cli_env
from torchcopy_lint.catalogue import load_catalogue, parse_rule_file
from torchcopy_lint.runtime import INSTALL_HINT, runner
from torchcopy_lint.runtime.claims import rule_claims
from torchcopy_lint.runtime.report import build_document, render_json, render_markdown, render_text
from torchcopy_lint.runtime.cli import main as verify_main
from torchcopy_lint.runtime.runner import run_program
from torchcopy_lint.sanitizer.messages import NOT_OBSERVABLE

# Tests that run claims need torch; the others (a missing torch, the linter without it) do not.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="verify needs torch (the 'runtime' extra)")

DOC = REPO / "docs" / "verification.md"
HEADER = """---
code: TCL001
name: data-mutation
default: on
summary: test claims
message: test
---
## Claim
"""
# Every flagged program writes through `.data` on its marked line 3, so the static view agrees.
PRELUDE = "import torch\nt = torch.zeros(2)\nt.data.zero_()  # TCL001\n"
CLEAN = "import torch\nt = torch.zeros(2)\n"
# The shared check of most scenarios: each scenario states its own hazard, which is
# all a test of the verdict logic needs (the catalogue's checks observe torch instead).
CHECK = "observed(hazard=hazard, evidence=evidence)\n"
SAYS_FINE = 'hazard, evidence = False, "fine"\n'

# name: (claim scenario, fixed scenario[, shared check])
SCENARIOS: dict[str, tuple[str, ...]] = {
    "confirmed": (
        PRELUDE + 'print("program output must not disturb the result line")\nhazard, evidence = True, "hazard seen"\n',
        CLEAN + SAYS_FINE,
    ),
    "flagged-sees-nothing": (PRELUDE + 'hazard, evidence = False, "no hazard here"\n', CLEAN + SAYS_FINE),
    "fixed-has-hazard": (PRELUDE + 'hazard, evidence = True, "hazard seen"\n', CLEAN + 'hazard, evidence = True, "the fix misbehaves"\n'),
    "exception": (PRELUDE + 'raise ValueError("boom")\n', CLEAN + SAYS_FINE),
    "timeout": (PRELUDE + "import time\ntime.sleep(600)\n", CLEAN + SAYS_FINE),
    "crash": (PRELUDE + "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", CLEAN + SAYS_FINE),
    "skip": (PRELUDE + 'skip("needs two GPUs")\n', CLEAN + 'skip("needs two GPUs")\n'),
    "no-observed": (PRELUDE, CLEAN, "pass\n"),
    # the check fails on the fixed program's names: an error, reported with the whole program's line
    "check-raises": (PRELUDE + "value = 1\n", CLEAN + "value = 0\n", 'observed(hazard=1 / value > 0, evidence="divided")\n'),
    # a scenario cannot pronounce its own verdict: only the check gets observed()
    "scenario-calls-observed": (PRELUDE + 'hazard, evidence = True, "hazard seen"\n', CLEAN + 'observed(hazard=False, evidence="fine")\n'),
    # the marked write never runs: the hazard seen does not come from it (line tracing)
    "marked-line-not-run": (CLEAN + "if t.sum() > 0:\n    t.data.zero_()  # TCL001\n" + 'hazard, evidence = True, "hazard seen"\n', CLEAN + SAYS_FINE),
    # The flagged half leaks global state; the fixed half (run next, on the same
    # worker with --jobs 1) must not see it, and must see the same seeded numbers.
    "isolation": (
        PRELUDE
        + "import random\ntorch.set_default_dtype(torch.float64)\ntorch.set_grad_enabled(False)\n"
        + "torch.manual_seed(999)\nrandom.seed(999)\ntorch.nn.Module.leaked = True\n"
        + 'hazard, evidence = True, f"set float64; rand {torch.rand(1).item()}"\n',
        CLEAN
        + "import random\nexpected = torch.rand(1, generator=torch.Generator().manual_seed(0)).item()\nfirst = torch.rand(1).item()\n"
        + 'leaks = [torch.get_default_dtype() != torch.float32, not torch.is_grad_enabled(), hasattr(torch.nn.Module, "leaked"), first != expected]\n'
        + 'hazard, evidence = any(leaks), f"dtype {torch.get_default_dtype()}, grad {torch.is_grad_enabled()}, rand {first} (seed 0: {expected}), random {random.random()}"\n',
    ),
    "static-mismatch": (
        "import torch\nt = torch.zeros(2)  # TCL001\nt.data.zero_()\nhazard, evidence = True, \"hazard seen\"\n",
        CLEAN + "t.data.add_(1)\n" + SAYS_FINE,
    ),
}
EXPECTED = {
    "confirmed": "confirmed",
    "flagged-sees-nothing": "refuted",
    "fixed-has-hazard": "refuted",
    "exception": "error",
    "timeout": "error",
    "crash": "error",
    "skip": "skipped",
    "no-observed": "error",
    "check-raises": "error",
    "scenario-calls-observed": "error",
    "marked-line-not-run": "refuted",
    "isolation": "confirmed",
    "static-mismatch": "refuted",
}


# Claims for a rule whose front matter offers an autofix (TCL001's own: `with torch.no_grad():`
# around the write, without `.data`; a rebinding becomes `copy_`, an unsafe fix). The hazard their
# shared check observes: a write through `.data` does not bump the version counter, the autofixed
# (and the fixed) write does.
UNTRACKED = 'observed(hazard=t._version == 0, evidence=f"version {t._version} after the write")\n'
TRACKED = CLEAN + "with torch.no_grad():\n    t.zero_()\n"
AUTOFIX_SCENARIOS: dict[str, tuple[str, ...]] = {
    "autofix-proven": (PRELUDE, TRACKED, UNTRACKED),
    "autofix-keeps-hazard": (PRELUDE + 'hazard, evidence = True, "hazard seen"\n', CLEAN + SAYS_FINE),
    # a one-line compound statement: flagged, but TCL001 offers no fix there
    "autofix-untouched": (CLEAN + "if True: t.data.zero_()  # TCL001\n", TRACKED, UNTRACKED),
    # one write fixed, one not: the autofixed program still has a finding (at line 5, after the new `with` line)
    "autofix-still-flagged": (PRELUDE + "if False: t.data.zero_()  # TCL001\n", TRACKED, UNTRACKED),
    # `t.data = v` -> `t.copy_(v)` is an unsafe fix (where v keeps t's layout): applied only for
    # a rule with `fix: unsafe`
    "autofix-rebinding": (CLEAN + "t.data = t.data * 0 + 1  # TCL001\n", TRACKED, UNTRACKED),
    # the claim observes no hazard and its autofix does not apply: the refutation is reported, the error beside it
    "autofix-untouched-refuted": (CLEAN + "if True: t.data.zero_()  # TCL001\nt.add_(1)\n", TRACKED, UNTRACKED),
}
SCENARIOS.update(AUTOFIX_SCENARIOS)


def write_catalogue(directory: Path, names: list[str], fix: str = "none") -> Path:
    """A catalogue with one TCL001 rule file holding the named scenarios as claim pairs, in order."""
    blocks = []
    for name in names:
        claim, fixed, check = (*SCENARIOS[name], CHECK)[:3]
        blocks.append(f"```python claim\n{claim}```\n\n```python claim-fixed\n{fixed}```\n\n```python claim-check\n{check}```\n")
    directory.mkdir(parents=True, exist_ok=True)
    header = HEADER.replace("message: test\n", f"message: test\nfix: {fix}\n")
    (directory / "TCL001-data-mutation.md").write_text(header + "\n".join(blocks), encoding="utf-8")
    return directory


def verify(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real command, in a subprocess."""
    return subprocess.run([PYTHON, "-m", "torchcopy_lint", "verify", *args], capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=timeout)


def verify_here(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command in this process (its programs still run in their own processes)."""
    code = verify_main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_scenarios(directory: Path, names: list[str], **executor: object) -> tuple[int, dict[str, runner.PairResult]]:
    """Exit status and result per scenario, through runner.verify."""
    write_catalogue(directory, names)
    rules = [rule_claims(spec) for spec in load_catalogue(directory).values()]
    timeout = float(executor.pop("timeout", 120))  # type: ignore[arg-type]
    with runner.Executor(**executor) as pool:  # type: ignore[arg-type]
        cells = runner.verify(rules, ["cpu"], executor=pool, timeout=timeout)
    (cell,) = cells
    return runner.exit_status(cells), dict(zip(names, cell.pairs))


# -- the real catalogue, on the CPU ------------------------------------------------------

@pytest.fixture(scope="module")
def cpu_run() -> tuple[int, dict, str]:
    result = verify("--device", "cpu", "--format", "json")
    assert result.stdout, result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


@needs_torch
def test_every_rule_is_confirmed_on_cpu(cpu_run: tuple[int, dict, str]) -> None:
    code, document, stderr = cpu_run
    verdicts = {cell["code"]: cell["verdict"] for cell in document["results"] if cell["device"] == "cpu"}
    assert sorted(verdicts) == sorted(load_catalogue()), "every rule in the catalogue is verified (opt-in ones included)"
    not_confirmed = {cell["code"]: cell["evidence"] for cell in document["results"] if cell["verdict"] != "confirmed" and load_catalogue()[cell["code"]].has_claim}
    assert not_confirmed == {}
    assert code == 0, stderr
    text = render_text(document)
    for rule, spec in load_catalogue().items():
        if not spec.has_claim:  # `claim: none (why)`: nothing to run
            assert verdicts[rule] == "n/a" and re.search(rf"^{rule}\s+\S+\s+n/a\s+n/a\s+n/a$", text, re.M), text
            continue
        autofix = "n/a" if spec.fix == "none" else "proven"
        # the last column: the sanitizer flags the claim (or says why it cannot see the rule)
        assert re.search(rf"^{rule}\s+\S+\s+confirmed\s+{re.escape(autofix)}\s+(flags|n/a)$", text, re.M), text


@needs_torch
def test_three_views_agree_for_every_rule(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    for cell in document["results"]:
        if not load_catalogue()[cell["code"]].has_claim:
            assert cell["claims"] == [] and cell["verdict"] == "n/a"
            continue
        assert cell["claims"], cell["code"]
        for claim in cell["claims"]:
            static = claim["static"]
            assert static["agrees"] and static["flagged_lines"] == static["marked_lines"] and static["fixed_lines"] == []
            flagged, fixed = claim["runs"]
            assert (flagged["kind"], flagged["status"], flagged["hazard"]) == ("claim", "observed", True)
            assert (fixed["kind"], fixed["status"], fixed["hazard"]) == ("claim-fixed", "observed", False)
            assert flagged["evidence"] and fixed["evidence"]


@needs_torch
def test_every_autofix_is_proven_on_cpu(cpu_run: tuple[int, dict, str]) -> None:
    """A rule with an autofix: its fix, applied to the flagged claim, removes the hazard and lints clean."""
    _code, document, _stderr = cpu_run
    specs = load_catalogue()
    for cell in document["results"]:
        spec = specs[cell["code"]]
        if spec.fix == "none" or not spec.has_claim:
            assert cell["autofix"]["status"] == "n/a"
            assert all(claim["autofix"]["status"] == "n/a" and claim["autofix"]["run"] is None for claim in cell["claims"])
            continue
        assert cell["autofix"]["status"] == "proven", cell["autofix"]
        assert "| autofix: " in cell["evidence"]
        for claim, flagged in zip(cell["claims"], spec.examples_of("claim")):
            autofix = claim["autofix"]
            assert (autofix["status"], autofix["fix"], autofix["remaining_lines"]) == ("proven", spec.fix, [])
            assert autofix["applied"] >= 1 and autofix["source"] != flagged.source
            run = autofix["run"]
            assert (run["kind"], run["status"], run["hazard"]) == ("claim-autofixed", "observed", False)


@needs_torch
def test_tcl001_autofix_is_proven_on_cpu(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    (cell,) = [cell for cell in document["results"] if (cell["code"], cell["device"]) == ("TCL001", "cpu")]
    assert (cell["verdict"], cell["autofix"]["status"]) == ("confirmed", "proven")
    (claim,) = cell["claims"]
    source = claim["autofix"]["source"]
    assert "with torch.no_grad():\n    w.mul_(3)  # TCL001\n" in source and ".data" not in source
    assert "backward raised" in claim["autofix"]["run"]["evidence"]
    assert "--fix made 1 change(s) to the claim, which then lints clean" in cell["autofix"]["evidence"]


@needs_torch
def test_json_document_structure(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    assert set(document) >= {"environment", "devices", "unavailable", "cuda_verified", "results", "summary", "exit_status", "seconds"}
    env = document["environment"]
    assert set(env) >= {"torch", "torch_cuda", "cuda_driver", "python", "platform", "available_devices", "device_names"}
    assert re.match(r"\d+\.\d+", env["torch"]) and "cpu" in env["device_names"]
    assert document["devices"] == ["cpu"]
    claimed = [spec for spec in load_catalogue().values() if spec.has_claim]
    assert document["summary"] == {"confirmed": len(claimed), "refuted": 0, "skipped": 0, "error": 0, "n/a": len(load_catalogue()) - len(claimed)}
    fixable = sum(spec.fix != "none" for spec in claimed)
    assert document["autofix_summary"] == {"proven": fixable, "refuted": 0, "skipped": 0, "unproven": 0, "error": 0, "n/a": len(load_catalogue()) - fixable}
    for cell in document["results"]:
        assert set(cell) == {"code", "name", "file", "device", "verdict", "evidence", "autofix", "claims"}
        assert set(cell["autofix"]) == {"status", "evidence"}
        assert "\n" not in cell["evidence"] and "\n" not in cell["autofix"]["evidence"]
        for claim in cell["claims"]:
            assert set(claim["autofix"]) == {"status", "evidence", "fix", "applied", "remaining_lines", "source", "run"}
        for run in (run for claim in cell["claims"] for run in claim["runs"]):
            assert set(run) == {"kind", "status", "hazard", "evidence", "message", "seconds", "unreached"}
            assert run["unreached"] == []
        for claim in cell["claims"]:
            assert claim["errors"] == []
    # the sanitizer column: per device run, per rule, each scenario and its check run again under the sanitizer
    assert set(document["sanitizer"]) == {"cpu"}
    column = document["sanitizer"]["cpu"]
    assert set(column) == set(load_catalogue())
    for code, verdict in column.items():
        assert set(verdict) == {"status", "evidence"} and verdict["evidence"]
        assert verdict["status"] in (("flags",) if code not in NOT_OBSERVABLE and load_catalogue()[code].has_claim else ("n/a",)), (code, verdict)


@needs_torch
def test_markdown_says_cuda_is_unverified_without_it(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    page = render_markdown(document)
    assert page.startswith("# Verification\n") and "| PyTorch |" in page
    assert ("CUDA has not been verified yet" in page) == (not document["cuda_verified"])


def _doc_verdicts(page: str) -> dict[str, dict[str, str]]:
    """{code: {column: first word}} from a verification page's Results table (devices, "Autofix", "Sanitizer")."""
    lines = page.split("## Results", 1)[1].strip().splitlines()
    devices = [cell.strip() for cell in lines[0].strip("|").split("|")][1:]
    table = {}
    for line in lines[2:]:
        if not line.startswith("| ["):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        code = re.match(r"\[(TCL\d{3})\]", cells[0]).group(1)
        table[code] = {device: cell.split(" ")[0] for device, cell in zip(devices, cells[1:])}
    return table


@needs_torch
def test_docs_verification_is_up_to_date(cpu_run: tuple[int, dict, str]) -> None:
    """docs/verification.md is the command's own output: same rules, same CPU verdicts."""
    _code, document, _stderr = cpu_run
    page = DOC.read_text(encoding="utf-8")
    regenerate = "regenerate it: python -m torchcopy_lint verify --format markdown > docs/verification.md"
    committed = {code: (row.get("cpu"), row.get("Autofix"), row.get("Sanitizer")) for code, row in _doc_verdicts(page).items()}
    fresh = {code: (row["cpu"], row["Autofix"], row["Sanitizer"]) for code, row in _doc_verdicts(render_markdown(document)).items()}
    assert committed == fresh, regenerate
    assert page.startswith("# Verification\n") and "generated by `torchcopy-lint verify --format markdown`" in page
    if "cuda" not in page.split("## Results", 1)[1].splitlines()[2]:
        assert "CUDA has not been verified yet" in page


# -- verdicts, isolation, timeouts: a temporary catalogue ------------------------------------

@needs_torch
def test_verdict_per_scenario_in_fork_mode(tmp_path: Path) -> None:
    """One worker (jobs=1): each isolation half runs right after its flagged half, in children of the same worker."""
    names = list(EXPECTED)
    code, pairs = run_scenarios(tmp_path / "rules", names, jobs=1, isolation="fork", timeout=3)
    assert {name: pair.verdict for name, pair in pairs.items()} == EXPECTED
    assert code == 2  # an error outranks a refutation
    evidence = {name: pair.evidence for name, pair in pairs.items()}
    assert "claim observed no hazard: no hazard here" in evidence["flagged-sees-nothing"]
    assert "fixed program observed the hazard: the fix misbehaves" in evidence["fixed-has-hazard"]
    assert "ValueError: boom (program line 4)" in evidence["exception"]
    assert "timed out after 3 s" in evidence["timeout"]
    assert "signal 9" in evidence["crash"]
    assert evidence["skip"] == "needs two GPUs"
    assert "without calling observed" in evidence["no-observed"]
    assert evidence["check-raises"] == "fixed: ZeroDivisionError: division by zero (program line 4)"  # the fixed program: 3 lines, then the check
    assert "fixed: NameError: name 'observed' is not defined (program line 3)" in evidence["scenario-calls-observed"]
    assert evidence["marked-line-not-run"] == "marked line(s) [4] had not run when the claim observed the hazard"
    assert pairs["marked-line-not-run"].runs[0].unreached == (4,)
    assert pairs["confirmed"].runs[0].unreached == ()
    assert "static: rule fires at claim line(s) [3] but the markers are at [2]" in evidence["static-mismatch"]
    assert "rule fires on the fixed program at line(s) [3]" in evidence["static-mismatch"]
    assert "dtype torch.float32, grad True" in evidence["isolation"], evidence["isolation"]
    assert "program output" not in repr(pairs["confirmed"].runs)


@needs_torch
def test_isolation_in_spawn_mode(tmp_path: Path) -> None:
    """A fresh interpreter per program: the same guarantee."""
    code, pairs = run_scenarios(tmp_path / "rules", ["isolation"], jobs=2, isolation="spawn")
    assert pairs["isolation"].verdict == "confirmed", pairs["isolation"].evidence
    assert "dtype torch.float32, grad True" in pairs["isolation"].evidence
    assert code == 0


@needs_torch
def test_spawn_mode_timeout() -> None:
    run = run_program("import time\ntime.sleep(600)\n", "cpu", "sleeper", "claim", timeout=2)
    assert (run.status, run.message) == ("error", "timed out after 2 s")
    assert run.seconds < 30


@needs_torch
def test_refuted_claim_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A claim that shows no hazard, and an autofix that leaves the hazard: both refute the rule (exit 1).

    The first claim's autofix observes no hazard either, which proves nothing: unproven.
    """
    write_catalogue(tmp_path / "rules", ["flagged-sees-nothing", "autofix-keeps-hazard"], fix="safe")
    code, out, err = verify_here(capsys, "--rules-dir", str(tmp_path / "rules"), "--device", "cpu", "--jobs", "1")
    assert code == 1, out + err
    assert re.search(r"^TCL001\s+data-mutation\s+refuted\s+refuted\s+missed$", out, re.M), out
    assert "TCL001 on cpu: refuted: claim 1 refuted: claim observed no hazard: no hazard here || " in out
    assert "claim 2 refuted: autofix: autofix does not remove the hazard: hazard seen" in out
    assert "autofix: 1 refuted" in out
    assert out.startswith("torchcopy-lint verify: torch ")


@needs_torch
def test_autofix_scenarios(tmp_path: Path) -> None:
    """The rule's autofix applied to each claim and run: proven, not applicable, still flagged, unsafe only."""
    results = {}
    with runner.Executor(jobs=1, isolation="fork") as pool:
        environment = pool.probe()
        for label, fix, names in (
            ("safe", "safe", ["autofix-proven"]),
            ("broken", "safe", ["autofix-untouched", "autofix-still-flagged", "autofix-rebinding", "autofix-untouched-refuted"]),
            ("unsafe", "unsafe", ["autofix-rebinding"]),
        ):
            write_catalogue(tmp_path / label, names, fix=fix)
            rules = [rule_claims(spec) for spec in load_catalogue(tmp_path / label).values()]
            cell, unavailable = runner.verify(rules, ["cpu", "mps"], {"mps": "mps not available"}, executor=pool)
            results[label] = (runner.exit_status([cell]), cell, dict(zip(names, cell.pairs)))
            assert (unavailable.verdict, unavailable.autofix.status, unavailable.autofix.evidence) == ("skipped", "skipped", "mps not available")

    code, cell, pairs = results["safe"]
    assert (code, cell.verdict, cell.autofix.status) == (0, "confirmed", "proven"), cell.evidence
    assert "claim: version 0 after the write | fixed: version 1 after the write | static: " in cell.evidence
    assert cell.evidence.endswith("| autofix: version 1 after the write; --fix made 1 change(s) to the claim, which then lints clean")
    autofix = pairs["autofix-proven"].autofix
    assert autofix.view is not None and autofix.view.source == "import torch\nt = torch.zeros(2)\nwith torch.no_grad():\n    t.zero_()  # TCL001\n"
    assert autofix.view.marked == (4,) and autofix.run is not None and autofix.run.unreached == ()
    assert autofix.run is not None and (autofix.run.kind, autofix.run.hazard) == ("claim-autofixed", False)

    code, cell, pairs = results["broken"]
    # a refutation outranks the errors in the verdicts; the errors still make the exit status 2
    assert code == 2 and cell.verdict == "refuted" and cell.autofix.status == "refuted" and cell.has_error
    assert {name: (pair.verdict, pair.autofix.status) for name, pair in pairs.items()} == {
        "autofix-untouched": ("error", "error"),
        "autofix-still-flagged": ("refuted", "refuted"),
        "autofix-rebinding": ("error", "error"),  # its fix is unsafe, the rule's is safe
        "autofix-untouched-refuted": ("refuted", "error"),
    }
    both = pairs["autofix-untouched-refuted"]
    assert both.evidence == "claim observed no hazard: version 1 after the write; autofix: the autofix does not apply to the claim"
    assert both.errors == ("autofix: the autofix does not apply to the claim",)
    assert pairs["autofix-untouched"].evidence == "autofix: the autofix does not apply to the claim"
    assert pairs["autofix-untouched"].autofix.run is None  # nothing to run
    assert pairs["autofix-still-flagged"].evidence == "autofix: the rule still fires on the autofixed claim (--fix) at line(s) [5]"
    assert pairs["autofix-rebinding"].evidence == "autofix: the autofix does not apply to the claim"

    code, cell, pairs = results["unsafe"]
    assert (code, cell.verdict, cell.autofix.status) == (0, "confirmed", "proven"), cell.evidence
    assert "t.copy_(t.data * 0 + 1)" in (pairs["autofix-rebinding"].autofix.view.source or "")
    assert "--fix --unsafe-fixes made 1 change(s)" in cell.autofix.evidence

    # the reports: a column in text and markdown, a key in json; an unavailable device: skipped
    cells = [results["safe"][1], results["broken"][1]]
    mps = runner.Cell("TCL001", "data-mutation", "TCL001-data-mutation.md", "mps", "skipped", "mps not available", autofix=unavailable.autofix)
    document = build_document(environment, ["cpu", "mps"], {"mps": "mps not available"}, [cells[1], mps], 1.0)
    assert "TCL001  data-mutation  refuted  skipped (mps not available)  refuted on cpu; skipped on mps" in render_text(document)
    assert "| refuted on cpu; skipped on mps |" in render_markdown(document)
    assert json.loads(render_json(document))["results"][0]["autofix"]["status"] == "refuted"
    assert document["exit_status"] == 2
    document = build_document(environment, ["cpu"], {}, [cells[0]], 1.0)
    assert "| Rule | cpu | Autofix |" in render_markdown(document)
    assert re.search(r"^\| \[TCL001\]\(\.\./rules/TCL001-data-mutation\.md\) `data-mutation` \| confirmed \| proven \|$", render_markdown(document), re.M)
    assert document["autofix_summary"]["proven"] == 1


@needs_torch
def test_skipped_claims_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A skipped pair beside a confirmed one: confirmed, exit 0."""
    write_catalogue(tmp_path / "rules", ["skip", "confirmed"])
    code, out, err = verify_here(capsys, "--rules-dir", str(tmp_path / "rules"), "--device", "cpu", "--jobs", "1", "--format", "json")
    document = json.loads(out)
    (cell,) = document["results"]
    assert cell["verdict"] == "confirmed"
    assert [claim["verdict"] for claim in cell["claims"]] == ["skipped", "confirmed"]
    assert document["devices"] == ["cpu"] and not document["cuda_verified"]
    assert code == 0, err


@needs_torch
@pytest.mark.parametrize("device", ["cuda", "mps", "cuda:7"])
def test_an_absent_device_is_an_error(device: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Asking for a device that is not here verifies nothing on it: exit 2 with one clear line, not skipped cells and exit 0."""
    write_catalogue(tmp_path / "rules", ["confirmed"])
    code, out, err = verify_here(capsys, "--rules-dir", str(tmp_path / "rules"), "--device", "cpu", "--device", device, "--jobs", "1")
    environment = runner.Executor(jobs=1, isolation="spawn").probe()
    from torchcopy_lint.runtime.environment import unavailable_reason

    reason = unavailable_reason(device, environment)
    if reason is None:
        pytest.skip(f"{device} is available here")
    assert (code, out) == (2, "")
    assert err == f"torchcopy-lint verify: error: --device {device}: {reason}\n"
    assert "not available here" in reason or "does not exist here" in reason


def test_claim_pairs_must_match(tmp_path: Path) -> None:
    directory = tmp_path / "rules"
    directory.mkdir()
    path = directory / "TCL001-data-mutation.md"
    path.write_text(HEADER + f"```python claim\n{PRELUDE}```\n", encoding="utf-8")
    rules = [rule_claims(parse_rule_file(path))]
    (cell,) = runner.verify(rules, ["cpu"])
    assert cell.verdict == "error"
    assert "needs a 'python claim' and a 'python claim-fixed' block" in cell.evidence
    assert runner.exit_status([cell]) == 2
    # a pair without the shared check: nothing would judge the fixed program
    path.write_text(HEADER + f"```python claim\n{PRELUDE}```\n\n```python claim-fixed\n{CLEAN}```\n", encoding="utf-8")
    (cell,) = runner.verify([rule_claims(parse_rule_file(path))], ["cpu"])
    assert cell.verdict == "error" and "needs a 'python claim-check' block" in cell.evidence


def test_exit_status_precedence() -> None:
    def cell(verdict: str) -> runner.Cell:
        return runner.Cell("TCL001", "x", "x.md", "cpu", verdict, "")

    assert runner.exit_status([cell("confirmed"), cell("skipped")]) == 0
    assert runner.exit_status([cell("confirmed"), cell("refuted")]) == 1
    assert runner.exit_status([cell("refuted"), cell("error")]) == 2
    assert runner.exit_status([]) == 0
    # a refuted pair whose autofix also failed: refuted in the table, an error in the exit status
    failed = runner.PairResult(1, "refuted", "claim observed no hazard: x; autofix: y", None, (), errors=("autofix: y",))
    assert runner.exit_status([runner.Cell("TCL001", "x", "x.md", "cpu", "refuted", "", (failed,))]) == 2


# -- usage errors and a missing torch ----------------------------------------------------------

@pytest.mark.parametrize("args", [["--select", "TCL9"], ["--select", "TCL001", "--ignore", "TCL001"], ["--rules-dir", "/nonexistent/rules"]])
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = verify_here(capsys, *args)
    assert (code, out) == (2, "")
    assert err.startswith("torchcopy-lint verify: error: ")


@pytest.mark.parametrize("args", [["--device", "tpu"], ["--device", "cpu:1"], ["--jobs", "0"], ["--timeout", "0"]])
def test_bad_arguments_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        verify_main(args)
    assert exit_info.value.code == 2


@pytest.fixture()
def no_torch(tmp_path: Path) -> dict[str, str]:
    """An environment where `import torch` fails, as if torch were not installed."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text('raise ImportError("No module named \'torch\'")\n', encoding="utf-8")
    env = cli_env()
    env["PYTHONPATH"] = str(fake) + os.pathsep + env["PYTHONPATH"]
    return env


def test_missing_torch_names_the_extra(no_torch: dict[str, str]) -> None:
    result = subprocess.run([PYTHON, "-m", "torchcopy_lint", "verify"], capture_output=True, text=True, env=no_torch, cwd=REPO, timeout=120)
    assert result.returncode == 2
    assert INSTALL_HINT in result.stderr and "No module named 'torch'" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_linting_never_imports_torch(no_torch: dict[str, str], tmp_path: Path) -> None:
    probe = (
        "import sys, torchcopy_lint.cli, torchcopy_lint.runtime.cli, torchcopy_lint.runtime.runner, "
        "torchcopy_lint.runtime.report, torchcopy_lint.runtime.claims, torchcopy_lint.runtime.environment, "
        "torchcopy_lint.runtime.harness\n"
        "assert 'torch' not in sys.modules\n"
        "sys.exit(torchcopy_lint.cli.main(['--isolated', '--no-cache', sys.argv[1]]))\n"
    )
    snippet = tmp_path / "snippet.py"
    snippet.write_text("import torch\nw = torch.zeros(3, requires_grad=True)\nw.data.zero_()\n", encoding="utf-8")
    result = subprocess.run([PYTHON, "-c", probe, str(snippet)], capture_output=True, text=True, env=no_torch, cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "TCL001" in result.stdout


# -- CUDA ----------------------------------------------------------------------------------------

def _cuda_available() -> bool:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return False
    version = Path(spec.origin).with_name("version.py")
    if version.is_file() and re.search(r"^cuda(: Optional\[str\])? = None$", version.read_text(encoding="utf-8"), re.M):
        return False  # a CPU-only build: no need to import torch to know
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.cuda
def test_every_rule_on_cuda() -> None:
    if not _cuda_available():
        pytest.skip("no CUDA device")
    result = verify("--device", "cpu", "--device", "cuda", "--format", "json", timeout=600)
    document = json.loads(result.stdout)
    assert document["cuda_verified"]
    cuda = {cell["code"]: (cell["verdict"], cell["evidence"]) for cell in document["results"] if cell["device"] == "cuda"}
    assert sorted(cuda) == sorted(load_catalogue())
    # every rule with a claim is confirmed on CUDA too; one without (TCL100) is n/a there as on the CPU
    expected = {code: "confirmed" if spec.has_claim else "n/a" for code, spec in load_catalogue().items()}
    assert {code: verdict for code, (verdict, _) in cuda.items()} == expected, cuda
    assert result.returncode == 0
    assert "CUDA has not been verified" not in render_markdown(document)
    assert document["environment"]["device_names"]["cuda"]


