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

import nbformat
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


@pytest.mark.parametrize("hook_id", ["torchcopy-lint", "torchcopy-lint-fix"])
def test_manifest_follows_the_conventions(hook_id: str) -> None:
    hooks = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    hook = next(hook for hook in hooks if hook["id"] == hook_id)
    assert hook["language"] == "python"
    arguments = hook["entry"].split() + hook.get("args", [])
    assert arguments[0] == "torchcopy-lint"
    assert "--force-exclude" in arguments
    assert ("--fix" in arguments) is (hook_id == "torchcopy-lint-fix")
    assert hook["types_or"] == ["python", "pyi", "jupyter"] and "types" not in hook
    assert hook["require_serial"] is True


def _head() -> str | None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


@pytest.fixture()
def head() -> str:
    """The commit try-repo clones (only committed work is tested)."""
    commit = _head()
    if commit is None:
        pytest.skip("not a git checkout")
    return commit


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
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BAD)])
    nbformat.write(notebook, str(repo / "train.ipynb"))
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


@pytest.mark.integration
def test_try_repo_fails_on_a_bad_file_and_passes_on_a_good_one(user_repo: Path, tmp_path: Path, head: str) -> None:
    home = tmp_path / "pre-commit-home"

    bad = pre_commit("try-repo", str(REPO), "torchcopy-lint", "--ref", head, "--files", "bad.py", "train.ipynb", "vendored/third_party.py", cwd=user_repo, home=home)
    output = bad.stdout + bad.stderr
    assert bad.returncode == 1, output
    assert "torchcopy-lint" in output and "Failed" in output
    assert "bad.py:3:5: TCL001 " in output
    assert "train.ipynb:cell 1:3:5: TCL001 " in output  # types_or includes jupyter
    assert "third_party.py:" not in output  # configured exclude applied to a named file: --force-exclude
    assert "Traceback" not in output

    good = pre_commit("try-repo", str(REPO), "torchcopy-lint", "--ref", head, "--files", "good.py", "vendored/third_party.py", cwd=user_repo, home=home)
    output = good.stdout + good.stderr
    assert good.returncode == 0, output
    assert "Passed" in output
    assert "TCL001" not in output


FIXABLE = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
FIXED = "import torch\nfor p in model.parameters():\n    with torch.no_grad():\n        p.add_(1)\n"


@pytest.mark.integration
def test_try_repo_fix_hook_fixes_then_passes(user_repo: Path, tmp_path: Path, head: str) -> None:
    home = tmp_path / "pre-commit-home"
    (user_repo / "bad.py").write_text(FIXABLE, encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)

    first = pre_commit("try-repo", str(REPO), "torchcopy-lint-fix", "--ref", head, "--files", "bad.py", "vendored/third_party.py", cwd=user_repo, home=home)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output  # it changed a file: the commit must be redone
    assert "files were modified by this hook" in output and "Traceback" not in output
    assert (user_repo / "bad.py").read_text(encoding="utf-8") == FIXED
    assert (user_repo / "vendored" / "third_party.py").read_text(encoding="utf-8") == BAD  # excluded: untouched

    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    second = pre_commit("try-repo", str(REPO), "torchcopy-lint-fix", "--ref", head, "--files", "bad.py", cwd=user_repo, home=home)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout


@pytest.mark.integration
def test_try_repo_fix_hook_fails_on_what_it_cannot_fix(user_repo: Path, tmp_path: Path, head: str) -> None:
    (user_repo / "loop.py").write_text("import torch\nfor x in batches:\n    loss = model(x).sum()\n    loss.backward()\n    total += loss\n", encoding="utf-8")
    subprocess.run(["git", "add", "."], cwd=user_repo, check=True)
    result = pre_commit("try-repo", str(REPO), "torchcopy-lint-fix", "--ref", head, "--files", "loop.py", cwd=user_repo, home=tmp_path / "home")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "files were modified" not in output
    assert "loop.py:5:5: TCL009 " in output
