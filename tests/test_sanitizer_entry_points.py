"""The sanitizer's doors, each in a subprocess: the pytest plugin and ``python -m torchcopy_lint.sanitize``."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import REPO  # noqa: E402
from torchcopy_lint.runtime.runner import child_env  # noqa: E402

SCRIPT = """\
import sys
import torch

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
best = model.state_dict()
for _ in range(2):
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()
print("args", sys.argv[1:])
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""

TESTS = """\
import torch

def test_snapshot():
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best = model.state_dict()
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()

def test_clean():
    x = torch.ones(3, requires_grad=True)
    (x * x).sum().backward()
"""


def _env(**extra: str) -> dict[str, str]:
    env = child_env(0)
    env.pop("TORCHCOPY_SANITIZE", None)
    env.update(extra)
    return env


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=_env(**env), timeout=300)


# -- python -m torchcopy_lint.sanitize ----------------------------------------------------------

def test_module_runner_reports_and_keeps_the_exit_status(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    result = _run(["-m", "torchcopy_lint.sanitize", "--mode", "collect", "--format", "json", "-o", "report.json", "train.py", "3", "x"], tmp_path)
    assert result.returncode == 3, result.stderr
    assert "args ['3', 'x']" in result.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert [(h["code"], Path(h["file"]).name, h["line"]) for h in report["hazards"]] == [("TCL004", "train.py", 6)]
    assert "train.py:9" in report["hazards"][0]["observation"]


def test_module_runner_warns_by_default_and_prints_the_report(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    result = _run(["-m", "torchcopy_lint.sanitize", "train.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "TorchCopyHazardWarning: TCL004" in result.stderr
    assert "train.py:6: TCL004" in result.stderr and "1 hazard(s) observed" in result.stderr


def test_environment_variable_picks_the_mode_or_turns_it_off(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    raised = _run(["-m", "torchcopy_lint.sanitize", "train.py"], tmp_path, TORCHCOPY_SANITIZE="raise")
    assert raised.returncode == 1 and "TorchCopyHazard: " in raised.stderr
    off = _run(["-m", "torchcopy_lint.sanitize", "train.py"], tmp_path, TORCHCOPY_SANITIZE="0")
    assert off.returncode == 0 and "TCL004" not in off.stderr and "hazard" not in off.stderr
    wrong = _run(["-m", "torchcopy_lint.sanitize", "train.py"], tmp_path, TORCHCOPY_SANITIZE="loud")
    assert wrong.returncode == 2 and "TORCHCOPY_SANITIZE" in wrong.stderr


# -- the pytest plugin ------------------------------------------------------------------------------

PLUGIN = ["-p", "torchcopy_lint.sanitizer.pytest_plugin"]


def test_entry_point_names_the_plugin_module() -> None:
    entry_points = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert entry_points == {"torchcopy_lint.sanitizer.pytest_plugin": "torchcopy_lint.sanitizer.pytest_plugin"}


def _pytest(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_training.py").write_text(TESTS)
    return _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGIN, "test_training.py", *args], tmp_path, **env)


def test_plugin_off_by_default(tmp_path: Path) -> None:
    result = _pytest(tmp_path)
    assert result.returncode == 0, result.stdout
    assert "torchcopy-lint sanitizer" not in result.stdout


def test_plugin_warn_mode_lists_hazards_and_writes_json(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--torchcopy-sanitize", "--torchcopy-sanitize-report", "hazards.json")
    assert result.returncode == 0, result.stdout
    assert "TorchCopyHazardWarning" in result.stdout  # pytest's warnings summary
    assert "test_training.py::test_snapshot: test_training.py:6: TCL004" in result.stdout
    report = json.loads((tmp_path / "hazards.json").read_text())
    assert [(h["test"], h["code"], h["line"]) for h in report["hazards"]] == [("test_training.py::test_snapshot", "TCL004", 6)]


def test_plugin_raise_mode_fails_the_test(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "--torchcopy-sanitize=raise")
    assert result.returncode == 1, result.stdout
    assert "1 failed, 1 passed" in result.stdout and "TorchCopyHazard" in result.stdout


def test_plugin_follows_the_environment_variable(tmp_path: Path) -> None:
    result = _pytest(tmp_path, TORCHCOPY_SANITIZE="collect")
    assert result.returncode == 0, result.stdout
    assert "1 hazard(s) observed" in result.stdout and "TorchCopyHazardWarning" not in result.stdout
