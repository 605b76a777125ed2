"""The README's example outputs are real runs: each one is run again and compared
(tools/readme_examples.py; regenerate with `python tools/readme_examples.py`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, cli_env


def test_readme_examples_are_current() -> None:
    result = subprocess.run([sys.executable, str(REPO / "tools" / "readme_examples.py"), "--check"], env=cli_env(), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr or "torch" in result.stderr  # only the verify excerpt may be skipped, and only without torch


def test_the_check_notices_a_stale_example(tmp_path) -> None:  # type: ignore[no-untyped-def]
    readme = tmp_path / "README.md"
    readme.write_text("<!-- example: torchcopy-lint --select TCL001 examples/train_snapshot_bugs.py -->\n```console\n$ torchcopy-lint --select TCL001 examples/train_snapshot_bugs.py\nAll checks passed!\n```\n", encoding="utf-8")
    command = [sys.executable, str(REPO / "tools" / "readme_examples.py"), "--readme", str(readme)]
    stale = subprocess.run([*command, "--check"], env=cli_env(), capture_output=True, text=True, timeout=300)
    assert stale.returncode == 1 and "README example is stale" in stale.stderr
    assert subprocess.run(command, env=cli_env(), capture_output=True, text=True, timeout=300).returncode == 0
    text = readme.read_text(encoding="utf-8")
    assert "examples/train_snapshot_bugs.py:34:9: TCL001 in-place write" in text and "All checks passed!" not in text
    assert subprocess.run([*command, "--check"], env=cli_env(), capture_output=True, text=True, timeout=300).returncode == 0


@pytest.mark.parametrize("section", ["## Notebooks", "## Output formats", "## Editor integration", "torchcopy-lint-fix", "TCL000", "source.fixAll.torchcopy-lint"])
def test_readme_documents(section: str) -> None:
    assert section in (REPO / "README.md").read_text(encoding="utf-8")


def test_every_output_format_is_documented() -> None:
    from torchcopy_lint.output import FORMATS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for name in FORMATS:
        assert f"| `{name}`" in readme, name
