"""Shared fixtures: the catalogue and a helper that lints a snippet."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from torchcopy_lint.engine import lint_source
from torchcopy_lint.registry import all_rules

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


def lint(source: str, *codes: str) -> list[tuple[int, str]]:
    """(line, code) of every finding in ``source`` for the given codes (default: all rules)."""
    selected = codes or tuple(all_rules())
    return [(finding.line, finding.code) for finding in lint_source(source, "snippet.py", selected)]


def cli_env() -> dict[str, str]:
    """Environment for running the CLI as a subprocess from the source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


PYTHON = sys.executable
