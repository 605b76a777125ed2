"""LibCST loads only when a file is parsed: importing the package, its analyses and its
checkers does not load it (each would otherwise cost a single-file run 0.25 s)."""

from __future__ import annotations

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
