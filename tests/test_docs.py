"""The docs generated from the catalogue are up to date, and the README keeps its promises."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_generated_docs_are_up_to_date() -> None:
    result = subprocess.run([sys.executable, str(REPO / "tools" / "generate_docs.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.startswith("#")]
    assert commands, ".ci/run runs nothing"
    # The last line is the test command; the ones before it only set the shell up.
    assert "pytest" in commands[-1]
    assert commands[-1] in readme, f".ci/run command not in README: {commands[-1]}"
