"""Workers die with their parent; SIGTERM and SIGINT stop a run cleanly; kill -9 during --fix loses nothing (issue 9 item 5).

Each test runs the real CLI with ``-j 2`` on files slow enough to keep both
workers busy, sends a real signal once the workers exist, and then waits (with
a generous limit, not a timing assertion) for every worker to be gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_env
from torchcopy_lint.fixes.apply import fix_bytes

# One TCL001 finding and a lot of code to parse per function: about a second per file.
SLOW = "import torch\n" + "".join(f"def f{i}(m):\n    for p in m.parameters():\n        p.data.zero_()\n" + "x = [1, 2, 3]\n" * 60 for i in range(40))
FILES = 24
PATIENCE = 120.0  # seconds before a test gives up waiting (a failure, never a pass)


def children(pid: int) -> set[int]:
    """Process ids whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as stream:
                    fields = stream.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting: {what}")
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def no_leftovers() -> object:
    """Whatever a failing test leaves running is killed (by its own pid) at teardown."""
    started: list[int] = []
    STARTED.append(started)
    yield
    STARTED.remove(started)
    for pid in started:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as stream:
                ours = b"torchcopy_lint" in stream.read()  # not a process that reused the id
            if ours and alive(pid):
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


STARTED: list[list[int]] = []


def start(tmp_path: Path, *args: str, new_session: bool = False) -> tuple[subprocess.Popen[str], set[int]]:
    for index in range(FILES):
        (tmp_path / f"m{index:02d}.py").write_text(SLOW, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "torchcopy_lint", "--no-cache", "-j", "2", *args, "."],
        cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=new_session,
    )
    workers: set[int] = set()

    def two_workers() -> bool:
        workers.update(children(process.pid))
        return len(workers) >= 2 or process.poll() is not None

    wait_for(two_workers, "two worker processes")
    STARTED[-1].extend([process.pid, *workers])
    assert process.poll() is None, "the run ended before it could be interrupted"
    return process, workers


def assert_gone(workers: set[int]) -> None:
    wait_for(lambda: not any(alive(pid) for pid in workers), f"workers {sorted(workers)} to exit")


@pytest.mark.parametrize(("send", "status", "message"), [(signal.SIGTERM, 128 + signal.SIGTERM, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_sigterm_and_sigint_stop_the_pool_cleanly(tmp_path: Path, send: signal.Signals, status: int, message: str) -> None:
    process, workers = start(tmp_path, new_session=True)
    time.sleep(0.5)  # the workers are inside a file
    # SIGINT goes to the whole process group, as Ctrl-C does; SIGTERM to the main process only.
    if send == signal.SIGINT:
        os.killpg(process.pid, send)
    else:
        process.send_signal(send)
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == status, err
    assert err.splitlines() == [f"torchcopy-lint: {message}"]  # no traceback, from the workers either
    assert_gone(workers)


def test_workers_die_when_the_parent_is_killed(tmp_path: Path) -> None:
    process, workers = start(tmp_path)
    process.kill()
    process.wait(timeout=PATIENCE)
    assert_gone(workers)  # without the fix: both went on under PID 1, for minutes


def test_kill_9_during_fix_loses_nothing(tmp_path: Path) -> None:
    fixed = fix_bytes(SLOW.encode(), "m.py", {"TCL001"}).fixed
    process, workers = start(tmp_path, "--fix")
    paths = sorted(tmp_path.glob("m*.py"))
    wait_for(lambda: any(path.read_bytes() == fixed for path in paths) or process.poll() is not None, "a first fixed file")
    process.kill()
    process.wait(timeout=PATIENCE)
    assert_gone(workers)
    contents = [path.read_bytes() for path in paths]
    time.sleep(1.0)
    assert [path.read_bytes() for path in paths] == contents  # nobody goes on writing
    assert all(content in (SLOW.encode(), fixed) for content in contents)  # each file original or completely fixed
    assert any(content == fixed for content in contents)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(path.name for path in paths)  # no temporary file left


def test_a_killed_parent_not_yet_reaped_counts_as_dead() -> None:
    """A worker whose parent was killed before the worker started checks the parent once; the
    parent is then a zombie until its own parent reaps it, and must not count as alive (else the
    worker watches its new parent, PID 1, and never exits)."""
    from torchcopy_lint.parallel import _alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + PATIENCE
    while alive(child.pid):  # until it has exited (a zombie: nobody has waited for it yet)
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.02)
    try:
        assert not _alive(child.pid)
    finally:
        child.wait()
    assert _alive(os.getpid())
