"""The CLI tunes Python's cyclic collector in its own processes, and a library call never does.

See :mod:`torchcopy_lint.heap`: the CLI freezes what its imports left alive, turns automatic
collection off, frees each file's analysis by breaking its reference cycles and collects
between files once enough garbage may have piled up; ``lint_source``, which flake8 and the
editor server call inside their own processes, leaves their collector alone.
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
        print(code, gc.get_freeze_count() > 0, gc.isenabled())
        """,
        tmp_path,
    )
    assert out == "1 True False"


def test_a_library_call_leaves_the_hosts_collector_alone(tmp_path: Path) -> None:
    out = _run(
        """
        import gc
        from torchcopy_lint.engine import lint_source
        before = gc.get_threshold()
        findings = lint_source(open("train.py").read(), "train.py", ["TCL001"])
        print(len(findings), gc.get_freeze_count(), gc.get_threshold() == before, gc.isenabled())
        """,
        tmp_path,
    )
    assert out == "1 0 True True"


def test_garbage_is_collected_between_files_once_it_may_pass_the_limit(tmp_path: Path) -> None:
    """With automatic collection off, cycles still get freed: between two files once the net
    allocations pass the limit, never while they are below it."""
    out = _run(
        """
        import gc, weakref
        from torchcopy_lint import heap
        from torchcopy_lint.parallel import map_parallel

        class Cycle:
            def __init__(self):
                self.me = self

        def leave_garbage(n):
            return weakref.ref(Cycle())

        heap.own_process()
        heap.COLLECT_AFTER = 10**9
        first = map_parallel(leave_garbage, [1, 2], 1)
        kept = all(ref() is not None for ref in first)
        heap.COLLECT_AFTER = 0
        second = map_parallel(leave_garbage, [1, 2], 1)
        print(kept, all(ref() is None for ref in first + second), gc.isenabled())
        """,
        tmp_path,
    )
    assert out == "True True False"


def test_a_released_run_leaves_no_tree_to_the_collector(tmp_path: Path) -> None:
    """Once its results are read, a checked file's LibCST tree is freed by reference counting:
    FileRun.release breaks the analysis' cycles, so nothing of the tree waits for a collection
    (which is off in the CLI's processes)."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(3, 3)\n"
        "        self.history = []\n\n"
        "    def forward(self, x):\n"
        "        out = self.fc(x)\n"
        "        self.history.append(out.clone())\n"
        "        return out\n\n\n"
        "def train(net, opt, data):\n"
        "    total = 0\n"
        "    for x in data:\n"
        "        loss = net(x).sum()\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        total += loss\n"
        "    net.fc.weight.data.mul_(2)\n"
        "    return total\n"
    )
    (tmp_path / "net.py").write_text(source)
    out = _run(
        """
        import gc
        from torchcopy_lint.engine import FileRun
        from torchcopy_lint.registry import all_rules

        codes = [code for code, rule in all_rules().items() if rule.spec.default]
        data = open("net.py", "rb").read()
        for release in (False, True):
            run = FileRun.from_bytes(data, "net.py", codes)
            found = len(run.result().findings)
            gc.collect()
            gc.disable()
            gc.set_debug(gc.DEBUG_SAVEALL)
            if release:
                run.release()
            del run
            gc.collect()
            nodes = sum(type(o).__module__.startswith("libcst") for o in gc.garbage)
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
            print(found, nodes > 0)
        """,
        tmp_path,
    )
    assert out.splitlines() == ["3 True", "3 False"]
