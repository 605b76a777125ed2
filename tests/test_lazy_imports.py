"""LibCST loads only when a file is parsed: importing the package, its analyses and its
checkers does not load it (each would otherwise cost a single-file run 0.25 s)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO, cli_env

PROBE = """
import importlib, pkgutil, sys
import torchcopy_lint
from torchcopy_lint import analysis, checkers
from torchcopy_lint.lazy import is_loaded
names = [f"torchcopy_lint.analysis.{m.name}" for m in pkgutil.iter_modules(analysis.__path__)]
names += [f"torchcopy_lint.checkers.{m.name}" for m in pkgutil.iter_modules(checkers.__path__)]
names += ["torchcopy_lint.cli", "torchcopy_lint.engine", "torchcopy_lint.registry", "torchcopy_lint.context"]
for name in names:
    importlib.import_module(name)
from torchcopy_lint.registry import all_rules
all_rules()
print("loaded" if is_loaded() else "lazy")
from torchcopy_lint.engine import lint_source
lint_source("import torch\\nx.data.add_(1)\\n", "x.py", {"TCL001"})
print("loaded" if is_loaded() else "lazy")
"""


def test_libcst_loads_on_the_first_parse_only() -> None:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=cli_env(), cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["lazy", "loaded"]


def test_libcst_loaded_lazily_is_marked_initialised() -> None:
    """After the lazy load LibCST's spec says "initialised" (``_initializing = False``), as after
    a plain import. Without the mark CPython raises and clears an AttributeError at every
    ``import libcst``, which LibCST's native parser does for each node class it builds: the
    parse of torch/nn+optim+_dynamo's 84 screened files took 14.7 s CPU against 12.2 s."""
    probe = (
        "import sys\nfrom torchcopy_lint.lazy import cst\ncst.parse_module('x = 1\\n')\n"
        "spec = sys.modules['libcst'].__spec__\nprint(getattr(spec, '_initializing', 'absent'))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cli_env(), cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


def test_libcst_imported_first_is_used_as_it_is() -> None:
    """Another tool (a flake8 plugin, an editor) may have imported LibCST already."""
    probe = "import libcst\nfrom torchcopy_lint import cache, lazy\nassert lazy.cst is libcst\nprint(cache._libcst_version())"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=cli_env(), cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(os.path.dirname(__import__("libcst").__file__)), result.stdout


def _imported(args: list[str], cwd: object) -> set[str]:
    """The modules ``torchcopy-lint ARGS`` imports (``-X importtime``), and its exit status."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "torchcopy_lint", *args], capture_output=True, text=True, env=cli_env(), cwd=cwd)
    lines = [line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")]
    return {line for line in lines if line and not line.startswith("imported package")}


def _loads_libcst(modules: set[str]) -> bool:
    return any(name == "libcst" or name.startswith("libcst.") for name in modules)


def test_version_rules_and_explain_import_neither_the_checker_nor_libcst() -> None:
    for args in (["--version"], ["rules"], ["explain", "TCL001"]):
        modules = _imported(args, REPO)
        assert not _loads_libcst(modules), args
        assert "torchcopy_lint.engine" not in modules and "torchcopy_lint.check_command" not in modules, args
    assert "torchcopy_lint.registry" not in _imported(["--version"], REPO)


def test_cache_hits_and_screened_out_files_never_load_libcst(tmp_path) -> None:
    """A file no rule's screen admits is not parsed by LibCST; a full cache hit parses nothing."""
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\n\nprint(torch.ones(3).sum())\n")
    assert not _loads_libcst(_imported(["--no-cache", "clean.py"], tmp_path))
    buggy = tmp_path / "buggy.py"
    buggy.write_text("import torch\n\n\ndef f(w):\n    w.data.add_(1)\n")
    assert _loads_libcst(_imported(["buggy.py"], tmp_path))  # the first run parses it
    hit = _imported(["buggy.py"], tmp_path)  # the second is answered from the cache
    assert not _loads_libcst(hit)
    # ... without the semantic model, the checkers or the screen, nor importlib.metadata
    # (the cache key's LibCST version is read from its files).
    analysis = {name for name in hit if name.startswith(("torchcopy_lint.analysis.", "torchcopy_lint.checkers."))}
    assert not analysis and not {"torchcopy_lint.context", "torchcopy_lint.screen", "importlib.metadata"} & hit, analysis
    # The default output imports only its own format: not SARIF, the CI formats or xml.
    assert not {"torchcopy_lint.output.sarif", "torchcopy_lint.output.ci", "xml.etree.ElementTree"} & hit


FLAKE8_PROBE = """
import ast
from torchcopy_lint.flake8_plugin import TorchCopyLintPlugin
from torchcopy_lint.lazy import is_loaded
source = "import torch\\n\\nprint(torch.ones(3))\\n"
checker = TorchCopyLintPlugin(ast.parse(source), source.splitlines(True), "clean.py")
print(list(checker.run()), "loaded" if is_loaded() else "lazy")
"""


def test_the_flake8_plugin_screens_on_flake8s_tree() -> None:
    """flake8 hands the plugin its ``ast`` tree: a file no rule's screen admits is never parsed by LibCST."""
    result = subprocess.run([sys.executable, "-c", FLAKE8_PROBE], capture_output=True, text=True, env=cli_env(), cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["[]", "lazy"]
