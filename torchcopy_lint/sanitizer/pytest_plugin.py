"""pytest plugin: every test's call phase under the sanitizer.

    pytest --torchcopy-sanitize              # warn: a TorchCopyHazardWarning per hazard (pytest lists them)
    pytest --torchcopy-sanitize=raise        # a hazard fails its test
    pytest --torchcopy-sanitize=collect      # only the summary at the end
    pytest --torchcopy-sanitize --torchcopy-sanitize-report hazards.json

``TORCHCOPY_SANITIZE`` (``1``, ``warn``, ``raise``, ``collect``; ``0`` off) turns it on too; the
option wins. Registered under the ``pytest11`` entry point; this module imports neither torch
nor the sanitizer until a test runs with it on. Put the option after the test paths or write
``--torchcopy-sanitize=MODE``: a bare option followed by a path takes the path as its mode.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

from torchcopy_lint.sanitizer.report import Hazard
from torchcopy_lint.sanitizer.runner import ENVIRONMENT, MODES, environment_mode

_MODE = pytest.StashKey[Any]()
_FOUND = pytest.StashKey[list[tuple[str, Hazard]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torchcopy-lint", "torchcopy-lint runtime sanitizer")
    group.addoption(
        "--torchcopy-sanitize",
        nargs="?",
        const="warn",
        default=None,
        choices=MODES,
        metavar="MODE",
        help="run each test under torchcopy-lint's sanitizer: warn (default), raise or collect",
    )
    group.addoption("--torchcopy-sanitize-report", metavar="FILE", default=None, help="write the hazards found as JSON to FILE")


def pytest_configure(config: pytest.Config) -> None:
    mode = config.getoption("--torchcopy-sanitize")
    if mode is None and os.environ.get(ENVIRONMENT) is not None:
        try:
            mode = environment_mode(os.environ[ENVIRONMENT])
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
    config.stash[_MODE] = mode
    config.stash[_FOUND] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    mode = item.config.stash.get(_MODE, None)
    if mode is None:
        yield
        return
    from torchcopy_lint.sanitizer.session import Sanitizer

    sanitizer = Sanitizer(mode)
    with sanitizer:
        yield
    item.config.stash[_FOUND].extend((item.nodeid, hazard) for hazard in sanitizer.report)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if config.stash.get(_MODE, None) is None:
        return
    found = config.stash[_FOUND]
    terminalreporter.section("torchcopy-lint sanitizer")
    for nodeid, hazard in found:
        terminalreporter.line(f"{nodeid}: {hazard}")
    terminalreporter.line(f"{len(found)} hazard(s) observed" if found else "no hazard observed")
    path = config.getoption("--torchcopy-sanitize-report")
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"hazards": [{"test": nodeid, **hazard.as_dict()} for nodeid, hazard in found], "count": len(found)}, handle, indent=2)
