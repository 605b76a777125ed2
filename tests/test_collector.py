"""The CLI tunes Python's cyclic collector in its own processes, and a library call never does.

See ``engine.freeze_heap_after_imports``: the CLI freezes what its imports left alive and
spaces collections out (a measured ~8% of a cold run's CPU); ``lint_source``, which flake8
and the editor server call inside their own processes, leaves their collector alone.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_HAZARD = "import torch\nw = torch.zeros(3, requires_grad=True)\nw.data.mul_(2)\n"


def _run(code: str, tmp_path: Path) -> str:
    (tmp_path / "train.py").write_text(_HAZARD)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_cli_freezes_its_heap_once_a_file_is_analysed(tmp_path: Path) -> None:
    out = _run(
        """
        import contextlib, gc, io
        from torchcopy_lint.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["--isolated", "--no-cache", "-j", "1", "train.py"])
        print(code, gc.get_freeze_count() > 0, gc.get_threshold())
        """,
        tmp_path,
    )
    assert out == "1 True (50000, 20, 100)"


def test_a_library_call_leaves_the_hosts_collector_alone(tmp_path: Path) -> None:
    out = _run(
        """
        import gc
        from torchcopy_lint.engine import lint_source
        before = gc.get_threshold()
        findings = lint_source(open("train.py").read(), "train.py", ["TCL001"])
        print(len(findings), gc.get_freeze_count(), gc.get_threshold() == before)
        """,
        tmp_path,
    )
    assert out == "1 0 True"
