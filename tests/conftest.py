"""Shared fixtures: the catalogue and a helper that lints a snippet."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.registry import all_rules

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


def differences_in_files(compare: Callable[[str], str | None], paths: list[str]) -> list[str]:
    """``compare(path)`` over ``paths`` in worker processes (``compare`` at a module's top
    level): the answers that are not None, each naming a file that differs."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return [difference for difference in pool.map(compare, paths, chunksize=4) if difference]


def torch_source_files() -> list[str]:
    """Every ``.py`` file of the installed torch, sorted (the test skips without torch)."""
    torch = pytest.importorskip("torch")
    paths = sorted(str(path) for path in Path(torch.__file__).parent.rglob("*.py"))
    assert len(paths) > 1000
    return paths


def lint(source: str, *codes: str) -> list[tuple[int, str]]:
    """(line, code) of every finding in ``source`` for the given codes (default: all rules)."""
    selected = codes or tuple(all_rules())
    return [(finding.line, finding.code) for finding in lint_source(source, "snippet.py", selected)]


def probe(source: str, query: "Callable[[FileContext, cst.BaseExpression], object]") -> list[object]:
    """Walk ``source``; at every ``probe(expr)`` call record ``query(ctx, expr)`` there."""
    import libcst as cst

    from torchcopy_lint.context import FileContext
    from torchcopy_lint.walker import Walker

    module = cst.parse_module(source)
    ctx = FileContext("probe.py", module)
    answers: list[object] = []

    class Probe:
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "probe":
                answers.append(query(ctx, node.args[0].value))

    walker = Walker([*ctx.participants, Probe()])
    ctx.walker = walker
    walker.walk(module)
    return answers


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory, made the current one, with no configuration above it that matters."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command line, in-process: (exit status, stdout, stderr)."""
    from torchcopy_lint.cli import main

    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def cli_env() -> dict[str, str]:
    """Environment for running the CLI as a subprocess from the source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


PYTHON = sys.executable
