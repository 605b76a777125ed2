"""``torchcopy-lint verify``: every rule's claim, run with real torch, checked with the rule.

The whole catalogue is verified on the CPU once, by the real command in a
subprocess. The verdict logic is exercised on a temporary catalogue whose single
rule (TCL001, so that the static view has a checker) carries one claim pair per
scenario: refuted either way, an exception, a timeout, a crash, skip(), no
observed() call, leaked global state, a static mismatch. Those run in-process
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
from torchcopy_lint.runtime.report import render_markdown, render_text
from torchcopy_lint.runtime.cli import main as verify_main
from torchcopy_lint.runtime.runner import run_program

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

SCENARIOS: dict[str, tuple[str, str]] = {
    "confirmed": (
        PRELUDE + 'print("program output must not disturb the result line")\nobserved(hazard=True, evidence="hazard seen")\n',
        CLEAN + 'observed(hazard=False, evidence="fine")\n',
    ),
    "flagged-sees-nothing": (
        PRELUDE + 'observed(hazard=False, evidence="no hazard here")\n',
        CLEAN + 'observed(hazard=False, evidence="fine")\n',
    ),
    "fixed-has-hazard": (
        PRELUDE + 'observed(hazard=True, evidence="hazard seen")\n',
        CLEAN + 'observed(hazard=True, evidence="the fix misbehaves")\n',
    ),
    "exception": (
        PRELUDE + 'raise ValueError("boom")\n',
        CLEAN + 'observed(hazard=False, evidence="fine")\n',
    ),
    "timeout": (
        PRELUDE + "import time\ntime.sleep(600)\n",
        CLEAN + 'observed(hazard=False, evidence="fine")\n',
    ),
    "crash": (
        PRELUDE + "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        CLEAN + 'observed(hazard=False, evidence="fine")\n',
    ),
    "skip": (
        PRELUDE + 'skip("needs two GPUs")\n',
        CLEAN + 'skip("needs two GPUs")\n',
    ),
    "no-observed": (
        PRELUDE,
        CLEAN + 'observed(hazard=False, evidence="fine")\n',
    ),
    # The flagged half leaks global state; the fixed half (run next, on the same
    # worker with --jobs 1) must not see it, and must see the same seeded numbers.
    "isolation": (
        PRELUDE
        + "import random\ntorch.set_default_dtype(torch.float64)\ntorch.set_grad_enabled(False)\n"
        + "torch.manual_seed(999)\nrandom.seed(999)\ntorch.nn.Module.leaked = True\n"
        + 'observed(hazard=True, evidence=f"set float64; rand {torch.rand(1).item()}")\n',
        CLEAN
        + "import random\nexpected = torch.rand(1, generator=torch.Generator().manual_seed(0)).item()\nfirst = torch.rand(1).item()\n"
        + 'leaks = [torch.get_default_dtype() != torch.float32, not torch.is_grad_enabled(), hasattr(torch.nn.Module, "leaked"), first != expected]\n'
        + 'observed(hazard=any(leaks), evidence=f"dtype {torch.get_default_dtype()}, grad {torch.is_grad_enabled()}, rand {first} (seed 0: {expected}), random {random.random()}")\n',
    ),
    "static-mismatch": (
        "import torch\nt = torch.zeros(2)  # TCL001\nt.data.zero_()\nobserved(hazard=True, evidence=\"hazard seen\")\n",
        CLEAN + "t.data.add_(1)\nobserved(hazard=False, evidence=\"fine\")\n",
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
    "isolation": "confirmed",
    "static-mismatch": "refuted",
}


def write_catalogue(directory: Path, names: list[str]) -> Path:
    """A catalogue with one TCL001 rule file holding the named scenarios as claim pairs, in order."""
    blocks = [f"```python claim\n{SCENARIOS[name][0]}```\n\n```python claim-fixed\n{SCENARIOS[name][1]}```\n" for name in names]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "TCL001-data-mutation.md").write_text(HEADER + "\n".join(blocks), encoding="utf-8")
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
    not_confirmed = {cell["code"]: cell["evidence"] for cell in document["results"] if cell["verdict"] != "confirmed"}
    assert not_confirmed == {}
    assert code == 0, stderr
    text = render_text(document)
    for rule in load_catalogue():
        assert re.search(rf"^{rule}\s+\S+\s+confirmed$", text, re.M), text


@needs_torch
def test_three_views_agree_for_every_rule(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    for cell in document["results"]:
        assert cell["claims"], cell["code"]
        for claim in cell["claims"]:
            static = claim["static"]
            assert static["agrees"] and static["flagged_lines"] == static["marked_lines"] and static["fixed_lines"] == []
            flagged, fixed = claim["runs"]
            assert (flagged["kind"], flagged["status"], flagged["hazard"]) == ("claim", "observed", True)
            assert (fixed["kind"], fixed["status"], fixed["hazard"]) == ("claim-fixed", "observed", False)
            assert flagged["evidence"] and fixed["evidence"]


@needs_torch
def test_json_document_structure(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    assert set(document) >= {"environment", "devices", "unavailable", "cuda_verified", "results", "summary", "exit_status", "seconds"}
    env = document["environment"]
    assert set(env) >= {"torch", "torch_cuda", "cuda_driver", "python", "platform", "available_devices", "device_names"}
    assert re.match(r"\d+\.\d+", env["torch"]) and "cpu" in env["device_names"]
    assert document["devices"] == ["cpu"]
    assert document["summary"] == {"confirmed": len(load_catalogue()), "refuted": 0, "skipped": 0, "error": 0}
    for cell in document["results"]:
        assert set(cell) == {"code", "name", "file", "device", "verdict", "evidence", "claims"}
        assert "\n" not in cell["evidence"]
        for run in (run for claim in cell["claims"] for run in claim["runs"]):
            assert set(run) == {"kind", "status", "hazard", "evidence", "message", "seconds"}


@needs_torch
def test_markdown_says_cuda_is_unverified_without_it(cpu_run: tuple[int, dict, str]) -> None:
    _code, document, _stderr = cpu_run
    page = render_markdown(document)
    assert page.startswith("# Verification\n") and "| PyTorch |" in page
    assert ("CUDA has not been verified yet" in page) == (not document["cuda_verified"])


def _doc_verdicts(page: str) -> dict[str, dict[str, str]]:
    """{code: {device: verdict}} from a verification page's Results table."""
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
    committed = {code: row.get("cpu") for code, row in _doc_verdicts(page).items()}
    fresh = {code: row["cpu"] for code, row in _doc_verdicts(render_markdown(document)).items()}
    assert committed == fresh, regenerate
    assert page.startswith("# Verification\n") and "generated by `torchcopy-lint verify --format markdown`" in page
    if "cuda" not in page.split("## Results", 1)[1].splitlines()[2]:
        assert "CUDA has not been verified yet" in page


# -- verdicts, isolation, timeouts: a temporary catalogue ------------------------------------

@needs_torch
def test_verdict_per_scenario_in_fork_mode(tmp_path: Path) -> None:
    """One worker (jobs=1): each isolation half runs right after its flagged half, in children of the same worker."""
    names = list(SCENARIOS)
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
    write_catalogue(tmp_path / "rules", ["flagged-sees-nothing"])
    code, out, err = verify_here(capsys, "--rules-dir", str(tmp_path / "rules"), "--device", "cpu", "--jobs", "1")
    assert code == 1, out + err
    assert re.search(r"^TCL001\s+data-mutation\s+refuted$", out, re.M), out
    assert "TCL001 on cpu: refuted: claim observed no hazard: no hazard here" in out
    assert out.startswith("torchcopy-lint verify: torch ")


@needs_torch
def test_skipped_claims_and_devices_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A skipped pair beside a confirmed one: confirmed; a device torch lacks: skipped, not an error."""
    write_catalogue(tmp_path / "rules", ["skip", "confirmed"])
    code, out, err = verify_here(capsys, "--rules-dir", str(tmp_path / "rules"), "--device", "cpu", "--device", "mps", "--jobs", "1", "--format", "json")
    document = json.loads(out)
    cells = {cell["device"]: cell for cell in document["results"]}
    assert cells["cpu"]["verdict"] == "confirmed"
    assert [claim["verdict"] for claim in cells["cpu"]["claims"]] == ["skipped", "confirmed"]
    assert document["devices"] == ["cpu", "mps"] and not document["cuda_verified"]
    if "mps" not in document["environment"]["available_devices"]:
        assert (cells["mps"]["verdict"], cells["mps"]["evidence"]) == ("skipped", "mps not available")
        assert "skipped (mps not available)" in render_text(document)
    assert code == 0, err


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


def test_exit_status_precedence() -> None:
    def cell(verdict: str) -> runner.Cell:
        return runner.Cell("TCL001", "x", "x.md", "cpu", verdict, "")

    assert runner.exit_status([cell("confirmed"), cell("skipped")]) == 0
    assert runner.exit_status([cell("confirmed"), cell("refuted")]) == 1
    assert runner.exit_status([cell("refuted"), cell("error")]) == 2
    assert runner.exit_status([]) == 0


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
    assert all(verdict in ("confirmed", "skipped") for verdict, _ in cuda.values()), cuda
    assert result.returncode == 0
    assert "CUDA has not been verified" not in render_markdown(document)
    assert document["environment"]["device_names"]["cuda"]


