"""The wheel: built from this checkout, installed into a fresh virtual environment without torch.

Needs the package index (the build backend, libcst, flake8). One wheel and one
virtual environment serve every test in the module.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
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
    assert "torchcopy_lint/py.typed" in names  # PEP 561: the package ships its type hints
    assert f"{dist_info}/licenses/LICENSE" in names
    assert "MIT License" in archive_text(wheel, f"{dist_info}/licenses/LICENSE")
    assert not any(name.startswith(("tests/", "docs/", "rules/")) or "__pycache__" in name for name in names)
    assert "torchcopy-lint = torchcopy_lint.cli:main" in entry_points
    assert "TCL = torchcopy_lint.flake8_plugin:TorchCopyLintPlugin" in entry_points
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert any(line.startswith("Requires-Dist: libcst") for line in requires)
    torch_requirements = [line for line in requires if "torch" in line.split(";")[0]]
    assert torch_requirements and all("extra ==" in line for line in torch_requirements), "torch must be an extra only"
    assert any(line.startswith("Requires-Dist: pygls") and "extra == 'server'" in line for line in requires), "the server is an extra"


def archive_text(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(name).decode()


def test_wheel_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        dist_info = next(name.split("/")[0] for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        metadata = archive.read(f"{dist_info}/METADATA").decode()
    headers = [line for line in metadata.split("\n\n", 1)[0].splitlines()]
    assert "License-Expression: MIT" in headers
    assert "License-File: LICENSE" in headers
    assert "Requires-Python: >=3.10" in headers
    urls = dict(line.removeprefix("Project-URL: ").split(", ", 1) for line in headers if line.startswith("Project-URL: "))
    assert {"Homepage", "Repository", "Issues", "Documentation"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = [line.removeprefix("Classifier: ") for line in headers if line.startswith("Classifier: ")]
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (10, 11, 12, 13)} <= set(classifiers)
    assert "Typing :: Typed" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the License-Expression says it
    assert {"server", "runtime", "test"} <= {line.removeprefix("Provides-Extra: ") for line in headers if line.startswith("Provides-Extra: ")}


# -- the source distribution ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    result = run(PYTHON, "-m", "build", "--sdist", "--outdir", out, REPO, cwd=out)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (built,) = out.glob("torchcopy_lint-*.tar.gz")
    return built


def test_sdist_contents(sdist: Path) -> None:
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("LICENSE", "README.md", "pyproject.toml", ".pre-commit-hooks.yaml", "torchcopy_lint/py.typed", "tests/conftest.py", "tests/fixtures/sarif-schema-2.1.0.json", "tools/generate_docs.py", "examples/train_snapshot_bugs.py", ".ci/run"):
        assert needed in names, needed
    for rule_file in (REPO / "rules").glob("TCL*.md"):
        assert f"rules/{rule_file.name}" in names
    assert not any("__pycache__" in name or name.startswith((".git/", ".torchcopy_lint_cache")) for name in names)


def oldest_python() -> str:
    """The oldest supported Python (3.10) when this machine has one, else the one running the tests."""
    candidates = [shutil.which("python3.10"), *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python")))]
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 10)"], capture_output=True).returncode == 0:
            return candidate
    return PYTHON


# What an unpacked sdist must pass without torch, git or the network beyond the package index.
SDIST_TESTS = ["tests/test_catalogue.py", "tests/test_cli.py", "tests/test_output.py", "tests/test_notebooks.py", "tests/test_noqa.py", "tests/test_flake8.py", "tests/test_fixes.py", "tests/test_docs.py", "tests/test_server.py"]


def test_unpacked_sdist_installs_and_its_tests_pass(sdist: Path, tmp_path: Path) -> None:
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path, filter="data") if sys.version_info >= (3, 12) else archive.extractall(tmp_path)  # noqa: S202 - our own archive
    (unpacked,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    python = oldest_python()
    venv = tmp_path / "venv"
    result = run(python, "-m", "venv", venv, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", unpacked, "pytest", "flake8", "jsonschema[format-nongpl]", "nbformat", "pygls>=2,<3", cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    result = run(venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *SDIST_TESTS, cwd=unpacked, timeout=900)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and " failed" not in result.stdout


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
