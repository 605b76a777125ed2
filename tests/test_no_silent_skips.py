"""CI must show no skips but the CUDA ones (issue 9, item 12): every module a test imports-or-skips is installed by CI."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

CI_PINNED = {"torch"}  # .ci/run installs torch==2.13.0 itself


def test_every_importorskip_module_is_in_the_test_extra() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    installed = {re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower() for requirement in extras["test"]} | CI_PINNED
    wanted = {
        name.lower()
        for path in sorted(Path(REPO, "tests").glob("*.py"))
        for name in re.findall(r"importorskip\(\s*[\"']([\w.]+)[\"']", path.read_text(encoding="utf-8"))
    }
    assert wanted, "no importorskip found: the pattern is stale"
    assert sorted(wanted - installed) == []
