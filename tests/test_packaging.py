"""The wheel: built from this checkout, installed into a fresh virtual environment without torch.

Needs the package index (the build backend, libcst, flake8). One wheel and one
virtual environment serve every test in the module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

from conftest import PYTHON, REPO
from torchcopy_lint import __version__
from torchcopy_lint.registry import all_rules

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
pytestmark = pytest.mark.integration


def clean_env() -> dict[str, str]:
    """No PYTHONPATH: the venv must use what it installed, never this checkout."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(*args: str | Path, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(arg) for arg in args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    leftovers = [REPO / "build", REPO / "dist"]
    existed = {path: path.exists() for path in leftovers}
    result = run(PYTHON, "-m", "build", "--wheel", "--outdir", out, REPO, cwd=out)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for path, was_there in existed.items():
        assert path.exists() == was_there, f"building the wheel left {path} in the checkout"
    (built,) = out.glob("torchcopy_lint-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (no system site-packages, so no torch) with the wheel and flake8 installed."""
    root = tmp_path_factory.mktemp("venv") / "env"
    result = run(PYTHON, "-m", "venv", "--without-pip", root, cwd=root.parent)
    assert result.returncode == 0, result.stderr
    python = root / "bin" / "python"
    result = run(PYTHON, "-m", "pip", "--python", python, "install", "--quiet", wheel, "flake8", cwd=root.parent)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return root


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    return tmp_path


def test_wheel_contents(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
        metadata = archive.read(f"{dist_info}/METADATA").decode()
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    for code, rule in all_rules().items():
        assert f"torchcopy_lint/rules/{rule.spec.path.name}" in names, code
        module = rule.checker.__module__.replace(".", "/") + ".py"
        assert module in names, code
    for rule_file in (REPO / "rules").glob("TCL*.md"):
        assert f"torchcopy_lint/rules/{rule_file.name}" in names
    assert "torchcopy_lint/flake8_plugin.py" in names
    assert not any(name.startswith(("tests/", "docs/", "rules/")) or "__pycache__" in name for name in names)
    assert "torchcopy-lint = torchcopy_lint.cli:main" in entry_points
    assert "TCL = torchcopy_lint.flake8_plugin:TorchCopyLintPlugin" in entry_points
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert any(line.startswith("Requires-Dist: libcst") for line in requires)
    torch_requirements = [line for line in requires if "torch" in line.split(";")[0]]
    assert torch_requirements and all("extra ==" in line for line in torch_requirements), "torch must be an extra only"


def test_version(venv: Path, work: Path) -> None:
    result = run(venv / "bin" / "torchcopy-lint", "--version", cwd=work)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"torchcopy-lint {__version__}"


def test_rules_come_from_inside_the_installed_package(venv: Path, work: Path) -> None:
    result = run(venv / "bin" / "torchcopy-lint", "rules", cwd=work)
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines()] == list(all_rules())
    where = run(venv / "bin" / "python", "-c", "from torchcopy_lint.catalogue import catalogue_dir; print(catalogue_dir())", cwd=work)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    explain = run(venv / "bin" / "torchcopy-lint", "explain", "TCL001", cwd=work)
    assert explain.returncode == 0 and "## What it does" in explain.stdout


def test_lints_a_bad_file_without_torch(venv: Path, work: Path) -> None:
    result = run(venv / "bin" / "torchcopy-lint", "--no-cache", "bad.py", cwd=work)
    assert result.returncode == 1, result.stderr
    assert any(line.startswith("bad.py:3:5: TCL001 ") for line in result.stdout.splitlines())


def test_torch_is_not_installed(venv: Path, work: Path) -> None:
    result = run(venv / "bin" / "python", "-c", "import torch", cwd=work)
    assert result.returncode != 0 and "No module named 'torch'" in result.stderr


def test_verify_without_torch_explains_itself(venv: Path, work: Path) -> None:
    result = run(venv / "bin" / "torchcopy-lint", "verify", cwd=work)
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr
    assert "torch" in result.stderr


def test_flake8_in_the_venv_uses_the_plugin(venv: Path, work: Path) -> None:
    result = run(venv / "bin" / "python", "-m", "flake8", "--select", "TCL001", "bad.py", cwd=work)
    assert result.returncode == 1, result.stderr
    assert [line.split(": TCL001")[0] for line in result.stdout.splitlines()] == ["bad.py:3:5"]


def test_editable_install_sees_the_checkout_catalogue() -> None:
    """The test environment's own install (`pip install -e .`) reads rules/ from the checkout."""
    try:
        dist = distribution("torchcopy-lint")
    except PackageNotFoundError:
        pytest.skip("torchcopy-lint is not installed in this environment")
    direct_url = dist.read_text("direct_url.json")
    if not direct_url or not json.loads(direct_url).get("dir_info", {}).get("editable"):
        pytest.skip("not an editable install")
    result = subprocess.run(
        [sys.executable, "-c", "from torchcopy_lint.catalogue import catalogue_dir; from torchcopy_lint.registry import all_rules; print(catalogue_dir()); print(','.join(all_rules()))"],
        cwd=Path("/"),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    where, codes = result.stdout.splitlines()
    assert Path(where) == REPO / "rules"
    assert codes.split(",") == list(all_rules())
