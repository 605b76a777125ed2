"""The pre-commit hook: the manifest validates, and `pre-commit try-repo` runs the committed hook.

``try-repo`` clones this repository at its HEAD commit (so only committed work is
tested; the working tree's uncommitted edits are left out by passing ``--ref``)
and installs it into a fresh virtual environment with pip, which needs the
package index (for libcst and the build backend).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import PYTHON, REPO

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
GOOD = "import torch\nwith torch.no_grad():\n    for p in model.parameters():\n        p.add_(1)\n"
MANIFEST = REPO / ".pre-commit-hooks.yaml"


def pre_commit(*args: str, cwd: Path, home: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PRE_COMMIT_HOME"] = str(home)  # never touch the user's ~/.cache/pre-commit
    env.pop("PYTHONPATH", None)  # the hook must work from its own install, not this checkout
    env["PRE_COMMIT_COLOR"] = "never"
    return subprocess.run([PYTHON, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_manifest_validates(tmp_path: Path) -> None:
    result = pre_commit("validate-manifest", str(MANIFEST), cwd=REPO, home=tmp_path / "home")
    assert result.returncode == 0, result.stdout + result.stderr


def test_manifest_follows_the_conventions() -> None:
    hooks = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    hook = next(hook for hook in hooks if hook["id"] == "torchcopy-lint")
    assert hook["language"] == "python"
    assert hook["entry"].split()[0] == "torchcopy-lint"
    assert "--force-exclude" in hook["entry"].split() + hook.get("args", [])
    assert hook["types"] == ["python"]
    assert hook["require_serial"] is True


def _head() -> str | None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


@pytest.fixture()
def user_repo(tmp_path: Path) -> Path:
    """A user's repository: a bad file, a good file, and a configured exclude."""
    repo = tmp_path / "user-repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "bad.py").write_text(BAD, encoding="utf-8")
    (repo / "good.py").write_text(GOOD, encoding="utf-8")
    (repo / "vendored").mkdir()
    (repo / "vendored" / "third_party.py").write_text(BAD, encoding="utf-8")
    (repo / "pyproject.toml").write_text('[tool.torchcopy-lint]\nextend-exclude = ["vendored/"]\n', encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


@pytest.mark.integration
def test_try_repo_fails_on_a_bad_file_and_passes_on_a_good_one(user_repo: Path, tmp_path: Path) -> None:
    head = _head()
    if head is None:
        pytest.skip("not a git checkout")
    home = tmp_path / "pre-commit-home"

    bad = pre_commit("try-repo", str(REPO), "torchcopy-lint", "--ref", head, "--files", "bad.py", "vendored/third_party.py", cwd=user_repo, home=home)
    output = bad.stdout + bad.stderr
    assert bad.returncode == 1, output
    assert "torchcopy-lint" in output and "Failed" in output
    assert "bad.py:3:5: TCL001 " in output
    assert "third_party.py:" not in output  # configured exclude applied to a named file: --force-exclude
    assert "Traceback" not in output

    good = pre_commit("try-repo", str(REPO), "torchcopy-lint", "--ref", head, "--files", "good.py", "vendored/third_party.py", cwd=user_repo, home=home)
    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "Passed" in output
    assert "TCL001" not in output
