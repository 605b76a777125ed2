"""Run a command without the privileges that ignore file permissions, so permission tests run as root too.

CI runs as root, where ``chmod 000`` stops nothing. Instead of skipping, such a
test runs the CLI under ``setpriv`` with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
dropped from the bounding and inheritable sets: root then meets file modes like
any user. As a normal user the command runs as it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conftest import PYTHON, cli_env

DROP_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-dac_override,-dac_read_search"]


def unprivileged(argv: list[str]) -> list[str]:
    """``argv`` prefixed so that file permissions apply to it, also as root."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        raise RuntimeError("running as root without setpriv (util-linux): cannot drop CAP_DAC_OVERRIDE for this test")
    return [*DROP_DAC, *argv]


def run_cli_unprivileged(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m torchcopy_lint ARGS`` in ``cwd``, file permissions enforced."""
    return subprocess.run(
        unprivileged([PYTHON, "-m", "torchcopy_lint", *args]),
        cwd=cwd,
        env=cli_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
