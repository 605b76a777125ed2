"""Run the claims: one subprocess per program and device, then a verdict per rule and device.

Every program runs in its own process, in its own temporary directory and
process group, with a timeout, seeded, so one claim cannot poison another:

- spawn mode: a fresh interpreter per program (``python -W default -m
  torchcopy_lint.runtime.harness``); the default for accelerators
- fork mode (Linux, the default for the CPU): a worker interpreter imports torch
  once and forks a child per program (``harness --serve``), which saves the
  second or more that ``import torch`` costs each program

Programs run in parallel on a small thread pool (the threads only wait on their
subprocess); each program gets one torch CPU thread (``--threads``).

Each program is a scenario (the ``claim``, the ``claim-fixed`` or the autofixed
claim) followed by the pair's shared ``claim-check``, which alone calls
``observed()``. The claim's ``# TCLNNN`` lines are traced: each must have run
before ``observed()`` was called.

Verdict of one claim pair on one device, strongest first:

- ``refuted``: the flagged program ran and observed no hazard, or observed it
  before a marked line had run; the fixed program observed the hazard; the rule
  does not fire exactly at the flagged program's markers / fires on the fixed one
  (the static view); or the autofix was refuted. A refutation is reported even
  where something else failed too (the evidence names both, and the exit status
  is still 2)
- ``error``: a program raised, timed out, crashed, or never called ``observed()``;
  the autofix does not apply or failed; or the claim could not be linted / the
  rule has no checker or no claim pair
- ``skipped``: a program called ``skip(reason)``, or the device is not available
- ``confirmed``: everything agrees

A rule with an autofix (``fix: safe`` / ``fix: unsafe``) runs a third program per
pair: the flagged claim after the rule's own fix (``claims.autofix_view``). Its
status on a device (``autofix_outcome``), folded into the pair's verdict:

- ``error``: the fix does not change the claim, fails or crashes, or the
  autofixed program raised, timed out, crashed or never called ``observed()``
- ``refuted``: the autofixed program observed the hazard (or observed none
  before its marked line had run), or the rule still fires on it
- ``skipped``: the autofixed program called ``skip(reason)``
- ``unproven``: it observed no hazard, but the claim itself did not observe the
  hazard on this device, so there was nothing to remove (the pair is refuted,
  skipped or an error already)
- ``proven``: the claim observed the hazard, the autofixed claim did not, and
  it lints clean
- ``n/a``: the rule offers no autofix

A rule with several claim pairs gets the strongest verdict among them (refuted,
error, confirmed, skipped: a confirmed pair beats skipped ones); its autofix status likewise (a proven pair
beats skipped ones).
"""

from __future__ import annotations

import json
import os
import queue
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchcopy_lint.runtime.claims import AutofixView, ClaimPair, RuleClaims, StaticView, autofix_view, static_view
from torchcopy_lint.runtime.harness import RESULT_PREFIX

CONFIRMED, REFUTED, SKIPPED, ERROR = "confirmed", "refuted", "skipped", "error"
PROVEN, UNPROVEN, NOT_APPLICABLE = "proven", "unproven", "n/a"
VERDICTS = (CONFIRMED, REFUTED, SKIPPED, ERROR, NOT_APPLICABLE)  # n/a: a rule with ``claim: none``
AUTOFIX_STATUSES = (PROVEN, REFUTED, SKIPPED, UNPROVEN, ERROR, NOT_APPLICABLE)
PROGRAM_KINDS = ("claim", "claim-fixed", "claim-autofixed")
DEFAULT_TIMEOUT = 120.0
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_EVIDENCE_LIMIT = 300  # per program, in the one-line evidence (the JSON runs keep it whole)


@dataclass(frozen=True)
class ProgramRun:
    """What one program did on one device."""

    kind: str  # "claim", "claim-fixed" or "claim-autofixed"
    status: str  # "observed", "skipped" or "error"
    hazard: bool | None = None
    evidence: str = ""
    message: str = ""  # the skip reason or the error
    seconds: float = 0.0
    unreached: tuple[int, ...] = ()  # watched (marked) lines that had not run when observed() was called

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "status": self.status,
            "hazard": self.hazard,
            "evidence": self.evidence,
            "message": self.message,
            "seconds": round(self.seconds, 3),
            "unreached": list(self.unreached),
        }


@dataclass(frozen=True)
class AutofixResult:
    """Whether the rule's autofix removed the hazard from a claim on one device."""

    status: str  # one of AUTOFIX_STATUSES
    evidence: str
    view: AutofixView | None = None
    run: ProgramRun | None = None

    def as_dict(self, detail: bool = True) -> dict[str, Any]:
        summary: dict[str, Any] = {"status": self.status, "evidence": self.evidence}
        if not detail:
            return summary
        view = self.view
        return {
            **summary,
            "fix": view.fix if view else None,
            "applied": view.applied if view else 0,
            "remaining_lines": list(view.remaining) if view else [],
            "source": view.source if view else None,
            "run": self.run.as_dict() if self.run else None,
        }


NO_AUTOFIX = AutofixResult(NOT_APPLICABLE, "the rule offers no autofix")


@dataclass(frozen=True)
class PairResult:
    index: int
    verdict: str
    evidence: str
    static: StaticView | None
    runs: tuple[ProgramRun, ...]  # the claim and the claim-fixed program (the autofixed one is in ``autofix``)
    autofix: AutofixResult = NO_AUTOFIX
    errors: tuple[str, ...] = ()  # what failed, also when a refutation outranks it in the verdict

    def as_dict(self) -> dict[str, Any]:
        static = None
        if self.static is not None:
            static = {
                "agrees": self.static.agrees,
                "marked_lines": list(self.static.marked),
                "flagged_lines": list(self.static.found),
                "fixed_lines": list(self.static.fixed_found),
                "error": self.static.error,
            }
        return {
            "claim": self.index,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "static": static,
            "runs": [run.as_dict() for run in self.runs],
            "autofix": self.autofix.as_dict(),
            "errors": list(self.errors),
        }


@dataclass(frozen=True)
class Cell:
    """The verdict for one rule on one device."""

    code: str
    name: str
    file: str  # the rule's catalogue file name
    device: str
    verdict: str
    evidence: str
    pairs: tuple[PairResult, ...] = field(default_factory=tuple)
    autofix: AutofixResult = NO_AUTOFIX

    @property
    def has_error(self) -> bool:
        """An error anywhere in the cell, even one reported beside a refutation."""
        return self.verdict == ERROR or self.autofix.status == ERROR or any(pair.errors for pair in self.pairs)

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "file": self.file,
            "device": self.device,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "autofix": self.autofix.as_dict(detail=False),
            "claims": [pair.as_dict() for pair in self.pairs],
        }


def _shorten(text: str, limit: int = _EVIDENCE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _needs_path() -> bool:
    """False when the package is installed in site-packages (putting that first on the path could shadow the stdlib)."""
    import site

    installed = [*site.getsitepackages(), site.getusersitepackages()]
    root = os.path.realpath(_PACKAGE_ROOT)
    return all(os.path.realpath(directory) != root for directory in installed)


def child_env(seed: int, threads: int = 1) -> dict[str, str]:
    env = dict(os.environ)
    if _needs_path():  # a source checkout: make the package importable from the programs' temporary directories
        env["PYTHONPATH"] = _PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONHASHSEED"] = str(seed)
    env["PYTHONIOENCODING"] = "utf-8"
    for variable in THREAD_VARIABLES:
        env[variable] = str(threads)
    return env


def _kill(process: subprocess.Popen[Any]) -> None:
    """Kill the process and its whole process group (whatever the program started)."""
    try:
        if sys.platform != "win32":
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - not tested on Windows
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _to_run(kind: str, result: dict[str, Any], seconds: float) -> ProgramRun:
    status = result.get("status")
    seconds = float(result.get("seconds", seconds))
    if status == "observed":
        unreached = tuple(int(line) for line in result.get("unreached", ()))
        return ProgramRun(kind, "observed", hazard=bool(result.get("hazard")), evidence=str(result.get("evidence", "")), seconds=seconds, unreached=unreached)
    if status == "skipped":
        return ProgramRun(kind, "skipped", message=str(result.get("reason", "")), seconds=seconds)
    return ProgramRun(kind, "error", message=str(result.get("message", "unknown error")), seconds=seconds)


def _harness_command(*extra: str) -> list[str]:
    return [sys.executable, "-W", "default", "-m", "torchcopy_lint.runtime.harness", *extra]


def _result_line(stdout: str) -> dict[str, Any] | None:
    lines = [line[len(RESULT_PREFIX):] for line in stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if not lines:
        return None
    try:
        result = json.loads(lines[-1])
    except ValueError:
        return {"status": "error", "message": f"unreadable result line: {lines[-1][:200]}"}
    return result if isinstance(result, dict) else {"status": "error", "message": "unreadable result line"}


_LIVE: set[subprocess.Popen[Any]] = set()  # spawn-mode processes running now (killed on Ctrl-C)
_LIVE_LOCK = threading.Lock()


def kill_running() -> None:
    """Kill every spawn-mode program still running (their threads then return errors)."""
    with _LIVE_LOCK:
        running = list(_LIVE)
    for process in running:
        _kill(process)


def _spawn(args: Sequence[str], stdin: str, timeout: float, seed: int, threads: int) -> tuple[dict[str, Any], float]:
    """One fresh harness interpreter, in its own directory and process group; its result and duration."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="torchcopy-verify-") as workdir:
        try:
            process = subprocess.Popen(
                _harness_command(*args),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=child_env(seed, threads),
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=sys.platform != "win32",
            )
        except OSError as error:
            return {"status": "error", "message": f"cannot start {sys.executable}: {error}"}, 0.0
        with _LIVE_LOCK:
            _LIVE.add(process)
        try:
            stdout, stderr = process.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()
            return {"status": "error", "message": f"timed out after {timeout:g} s"}, time.perf_counter() - start
        finally:
            _kill(process)
            process.wait()
            with _LIVE_LOCK:
                _LIVE.discard(process)
    seconds = time.perf_counter() - start
    result = _result_line(stdout)
    if result is None:
        status = process.returncode
        how = f"signal {-status}" if status < 0 else f"status {status}"
        detail = _last_line(stderr)
        result = {"status": "error", "message": f"the program's process ended ({how}) without a result" + (f": {detail}" if detail else "")}
    return result, seconds


def run_program(
    source: str,
    device: str,
    name: str,
    kind: str,
    timeout: float = DEFAULT_TIMEOUT,
    seed: int = 0,
    threads: int = 1,
    check: str | None = None,
    watch: Sequence[int] = (),
) -> ProgramRun:
    """Run one claim program in a fresh interpreter (spawn mode); every failure becomes an ``error`` run.

    ``check``: the shared check run after ``source``; ``watch``: lines that must run before ``observed()``.
    """
    args = ["--device", device, "--name", name, "--seed", str(seed), "--threads", str(threads)]
    if check is not None or watch:
        args.append("--request")
        source = json.dumps({"source": source, "check": check, "watch": list(watch)})
    result, seconds = _spawn(args, source, timeout, seed, threads)
    return _to_run(kind, result, seconds)


class WorkerDied(RuntimeError):
    pass


class ForkWorker:
    """A harness in fork mode (``--serve``): imports torch once, forks a child per request.

    Used by one thread at a time. If it dies or stops answering, the request fails
    with :class:`WorkerDied` and the next request starts a new worker.
    """

    _MARGIN = 60.0  # beyond a request's own timeout (which the worker enforces): startup, fork, cleanup

    def __init__(self, seed: int, threads: int = 1) -> None:
        self.seed = seed
        self.threads = threads
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr: Any = None
        self.workdir: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        """Start the worker now (it imports torch while the caller does other things)."""
        if self.process is not None and self.process.poll() is None:
            return self.process
        self.close()
        self.workdir = tempfile.TemporaryDirectory(prefix="torchcopy-verify-worker-")
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            _harness_command("--serve"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=self.workdir.name,
            env=child_env(self.seed, self.threads),
            start_new_session=True,
        )
        return self.process

    def _reply(self, process: subprocess.Popen[bytes], deadline: float) -> bytes | None:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        data = b""
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                data += chunk
        return data

    def request(self, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self.start()
        try:
            assert process.stdin is not None
            process.stdin.write(json.dumps({**payload, "timeout": timeout}).encode("utf-8") + b"\n")
            process.stdin.flush()
            reply = self._reply(process, time.monotonic() + timeout + self._MARGIN)
        except OSError:
            reply = None
        if reply is None or not reply.startswith(RESULT_PREFIX.encode()):
            detail = self._stderr_tail()
            self.close()
            raise WorkerDied("the verify worker died" + (f": {detail}" if detail else ""))
        try:
            result = json.loads(reply[len(RESULT_PREFIX):].decode("utf-8"))
        except ValueError:
            return {"status": "error", "message": f"unreadable result line: {reply[:200]!r}"}
        return result if isinstance(result, dict) else {"status": "error", "message": "unreadable result line"}

    def run(self, source: str, device: str, name: str, kind: str, timeout: float, check: str | None = None, watch: Sequence[int] = ()) -> ProgramRun:
        start = time.perf_counter()
        payload = {"source": source, "device": device, "name": name, "seed": self.seed, "threads": self.threads, "check": check, "watch": list(watch)}
        try:
            result = self.request(payload, timeout)
        except WorkerDied as error:
            return ProgramRun(kind, "error", message=str(error), seconds=time.perf_counter() - start)
        return _to_run(kind, result, time.perf_counter() - start)

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0)
        return _last_line(self.stderr.read().decode("utf-8", "replace"))

    def close(self) -> None:
        """Stop the worker and whatever program it runs (SIGTERM: it kills the program's group first)."""
        process, self.process = self.process, None
        if process is not None:
            try:
                if process.stdin is not None:
                    process.stdin.close()
            except OSError:
                pass
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            _kill(process)
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None
        if self.workdir is not None:
            self.workdir.cleanup()
            self.workdir = None


def fork_supported() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def uses_fork(isolation: str, device: str) -> bool:
    """``auto``: fork mode for the CPU on Linux; a fresh interpreter per program otherwise.

    Accelerators get a fresh interpreter by default: their runtimes must never be
    initialised before a fork, and a fresh process is the safe way to be sure.
    """
    if isolation == "spawn" or not fork_supported():
        return False
    return isolation == "fork" or device == "cpu"


class ProbeFailed(RuntimeError):
    """The environment could not be read (other than torch missing)."""


class Executor:
    """Where programs run: fork-mode workers (started at once) and/or fresh interpreters.

    ``probe()`` reads the environment in a child process too, so the verify
    process itself never imports torch.
    """

    def __init__(self, *, jobs: int = 2, seed: int = 0, threads: int = 1, isolation: str = "auto", devices: Sequence[str] = ("cpu",)) -> None:
        self.jobs, self.seed, self.threads, self.isolation = max(1, jobs), seed, threads, isolation
        self._idle: queue.Queue[ForkWorker] = queue.Queue()
        self._workers: list[ForkWorker] = []
        self.closed = False
        if any(uses_fork(isolation, device) for device in devices):
            for _ in range(self.jobs):
                worker = ForkWorker(seed, threads)
                worker.start()
                self._workers.append(worker)
                self._idle.put(worker)

    def probe(self, timeout: float = 300.0) -> dict[str, Any]:
        """The environment; raises TorchMissing or ProbeFailed."""
        from torchcopy_lint.runtime.environment import TorchMissing

        if self._workers:
            worker = self._idle.get()
            try:
                result = worker.request({"probe": True}, timeout)
            except WorkerDied as error:
                result = {"status": "error", "message": str(error)}
            finally:
                self._idle.put(worker)
        else:
            result, _seconds = _spawn(["--probe"], "", timeout, self.seed, self.threads)
        if result.get("status") == "ok":
            return dict(result["environment"])
        if result.get("status") == "torch-missing":
            raise TorchMissing(str(result.get("message")))
        raise ProbeFailed(f"cannot read the torch environment: {result.get('message')}")

    def run(self, source: str, device: str, name: str, kind: str, timeout: float, check: str | None = None, watch: Sequence[int] = ()) -> ProgramRun:
        """One program (``source``, then ``check`` when given) on one device; ``watch``: lines that must run."""
        if self.closed:
            return ProgramRun(kind, "error", message="not run: verify was stopped")
        if self._workers and uses_fork(self.isolation, device):
            worker = self._idle.get()
            try:
                return worker.run(source, device, name, kind, timeout, check, watch)
            finally:
                self._idle.put(worker)
        return run_program(source, device, name, kind, timeout=timeout, seed=self.seed, threads=self.threads, check=check, watch=watch)

    def close(self) -> None:
        self.closed = True
        kill_running()
        for worker in self._workers:
            worker.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def autofix_outcome(view: AutofixView | None, flagged: ProgramRun, run: ProgramRun | None) -> AutofixResult:
    """Whether the autofix removed the hazard on one device: the status and its evidence in one line.

    ``run`` is the autofixed program's run (None when there was no program to run).
    """
    if view is None:
        return NO_AUTOFIX
    if view.error or view.source is None or run is None:
        return AutofixResult(ERROR, view.error or "the autofixed claim was not run", view, run)
    if run.status == "error":
        return AutofixResult(ERROR, f"the autofixed claim failed: {run.message}", view, run)
    refutations = []
    if run.status == "observed" and run.hazard:
        refutations.append(f"autofix does not remove the hazard: {_shorten(run.evidence)}")
    if run.status == "observed" and run.unreached:
        refutations.append(f"the autofixed claim's marked line(s) {list(run.unreached)} had not run when it observed{'' if run.hazard else ' no hazard'}")
    if view.remaining:
        refutations.append(view.describe())
    if refutations:
        return AutofixResult(REFUTED, "; ".join(refutations), view, run)
    if run.status == "skipped":
        return AutofixResult(SKIPPED, run.message, view, run)
    if flagged.status != "observed" or not flagged.hazard:
        evidence = f"the autofixed claim observed no hazard ({_shorten(run.evidence)}), but the claim itself did not observe it here, so there was none to remove"
        return AutofixResult(UNPROVEN, evidence, view, run)
    return AutofixResult(PROVEN, f"{_shorten(run.evidence)}; {view.describe()}", view, run)


def _unreached(run: ProgramRun) -> str:
    return f"marked line(s) {list(run.unreached)} had not run when the claim observed {'the hazard' if run.hazard else 'no hazard'}"


def pair_verdict(static: StaticView | None, flagged: ProgramRun, fixed: ProgramRun, autofix: AutofixResult = NO_AUTOFIX) -> tuple[str, str, tuple[str, ...]]:
    """The verdict for one claim pair on one device, its evidence in one line, and its errors.

    A refutation outranks an error (both are in the evidence): an autofix that does not
    apply, say, must not hide a claim that observed no hazard.
    """
    runs = (("claim", flagged), ("fixed", fixed))
    errors = [f"{label}: {run.message}" for label, run in runs if run.status == "error"]
    if static is not None and static.error:
        errors.append(static.describe())
    if autofix.status == ERROR:
        errors.append(f"autofix: {autofix.evidence}")
    refutations = []
    if flagged.status == "observed" and not flagged.hazard:
        refutations.append(f"claim observed no hazard: {_shorten(flagged.evidence)}")
    if flagged.status == "observed" and flagged.unreached:
        refutations.append(_unreached(flagged))
    if fixed.status == "observed" and fixed.hazard:
        refutations.append(f"fixed program observed the hazard: {_shorten(fixed.evidence)}")
    if static is not None and static.error is None and not static.agrees:
        refutations.append(static.describe())
    if autofix.status == REFUTED:
        refutations.append(f"autofix: {autofix.evidence}")
    if refutations:
        return REFUTED, "; ".join(refutations + errors), tuple(errors)
    if errors:
        return ERROR, "; ".join(errors), tuple(errors)
    skips = [run.message for _label, run in runs if run.status == "skipped"]
    if autofix.status == SKIPPED:
        skips.append(autofix.evidence)
    if skips:
        return SKIPPED, "; ".join(dict.fromkeys(skips)), ()
    evidence = f"claim: {_shorten(flagged.evidence)} | fixed: {_shorten(fixed.evidence)}"
    if static is not None:
        evidence += f" | {static.describe()}"
    if autofix.status != NOT_APPLICABLE:
        evidence += f" | autofix: {autofix.evidence}"
    return CONFIRMED, evidence, ()


def _combine(pairs: Sequence[PairResult]) -> tuple[str, str]:
    for verdict in (REFUTED, ERROR, CONFIRMED, SKIPPED):
        chosen = [pair for pair in pairs if pair.verdict == verdict]
        if chosen:
            if len(pairs) == 1:
                return verdict, chosen[0].evidence
            return verdict, " || ".join(f"claim {pair.index} {pair.verdict}: {pair.evidence}" for pair in pairs)
    raise ValueError("no claim pairs")


def _combine_autofix(pairs: Sequence[PairResult]) -> AutofixResult:
    """A rule's autofix status on one device: the strongest among its pairs (a proven pair beats skipped ones)."""
    for status in (REFUTED, ERROR, UNPROVEN, PROVEN, SKIPPED, NOT_APPLICABLE):
        chosen = [pair for pair in pairs if pair.autofix.status == status]
        if chosen:
            if len(pairs) == 1:
                return AutofixResult(status, chosen[0].autofix.evidence)
            return AutofixResult(status, " || ".join(f"claim {pair.index} {pair.autofix.status}: {pair.autofix.evidence}" for pair in pairs))
    raise ValueError("no claim pairs")


def verify(
    rules: Sequence[RuleClaims],
    devices: Sequence[str],
    unavailable: dict[str, str] | None = None,
    *,
    executor: Executor | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    check_static: bool = True,
    progress: Callable[[str], None] | None = None,
) -> list[Cell]:
    """Every rule's claims on every device: one Cell per rule and device, in rule then device order.

    ``unavailable`` maps a device to the reason it cannot run (its cells are skipped
    without starting anything). Without an ``executor``, one is made (and closed) here.
    """
    unavailable = unavailable or {}
    statics: dict[tuple[str, int], StaticView | None] = {}
    autofixes: dict[tuple[str, int], AutofixView | None] = {}
    for rule in rules:
        for pair in rule.pairs:
            statics[(rule.code, pair.index)] = static_view(pair) if check_static else None
            autofixes[(rule.code, pair.index)] = autofix_view(pair, rule.fix)

    def source_of(pair: ClaimPair, kind: str) -> str | None:
        """The scenario of a program (its check is the pair's)."""
        if kind == "claim":
            return pair.flagged.source
        if kind == "claim-fixed":
            return pair.fixed.source
        view = autofixes[(pair.code, pair.index)]
        return view.source if view is not None else None

    def watched(pair: ClaimPair, kind: str) -> tuple[int, ...]:
        """The marked lines that must run: the claim's, and where the autofix left them."""
        if kind == "claim":
            return pair.marked
        view = autofixes[(pair.code, pair.index)]
        return view.marked if kind == "claim-autofixed" and view is not None else ()

    tasks: list[tuple[ClaimPair, str, str]] = [
        (pair, device, kind)
        for rule in rules
        for pair in rule.pairs
        for device in devices
        if device not in unavailable
        for kind in PROGRAM_KINDS
        if source_of(pair, kind) is not None
    ]
    own = executor is None and bool(tasks)
    if own:
        executor = Executor(devices=[device for device in devices if device not in unavailable])

    def work(task: tuple[ClaimPair, str, str]) -> ProgramRun:
        pair, device, kind = task
        source = source_of(pair, kind)
        assert executor is not None and source is not None
        check = pair.check.source if pair.check is not None else None
        run = executor.run(source, device, f"{pair.code}-{kind}-{pair.index}", kind, timeout, check, watched(pair, kind))
        if progress is not None:
            progress(f"{pair.code} claim {pair.index} {kind} on {device}: {run.status} ({run.seconds:.1f} s)")
        return run

    finished: dict[tuple[ClaimPair, str, str], ProgramRun] = {}
    try:
        if tasks:
            assert executor is not None
            pool = ThreadPoolExecutor(max_workers=executor.jobs)
            try:
                finished = dict(zip(tasks, pool.map(work, tasks)))
            except BaseException:  # Ctrl-C: stop every program now instead of waiting for their timeouts
                pool.shutdown(wait=False, cancel_futures=True)
                executor.close()
                raise
            pool.shutdown()
    finally:
        if own and executor is not None:
            executor.close()

    cells = []
    for rule in rules:
        has_fix = rule.fix in ("safe", "unsafe")
        for device in devices:
            if rule.no_claim is not None:
                cells.append(Cell(rule.code, rule.name, rule.path.name, device, NOT_APPLICABLE, f"no runtime claim: {rule.no_claim}", autofix=NO_AUTOFIX))
                continue
            if rule.problem:
                autofix = AutofixResult(ERROR, f"not run: {rule.problem}") if has_fix else NO_AUTOFIX
                cells.append(Cell(rule.code, rule.name, rule.path.name, device, ERROR, rule.problem, autofix=autofix))
                continue
            if device in unavailable:
                autofix = AutofixResult(SKIPPED, unavailable[device]) if has_fix else NO_AUTOFIX
                cells.append(Cell(rule.code, rule.name, rule.path.name, device, SKIPPED, unavailable[device], autofix=autofix))
                continue
            results = []
            for pair in rule.pairs:
                flagged = finished[(pair, device, "claim")]
                fixed = finished[(pair, device, "claim-fixed")]
                static = statics[(rule.code, pair.index)]
                autofix = autofix_outcome(autofixes[(rule.code, pair.index)], flagged, finished.get((pair, device, "claim-autofixed")))
                verdict, evidence, errors = pair_verdict(static, flagged, fixed, autofix)
                results.append(PairResult(pair.index, verdict, evidence, static, (flagged, fixed), autofix, errors))
            verdict, evidence = _combine(results)
            cells.append(Cell(rule.code, rule.name, rule.path.name, device, verdict, evidence, tuple(results), _combine_autofix(results)))
    return cells


def exit_status(cells: Sequence[Cell]) -> int:
    """0 every claim that ran was confirmed, 1 a claim was refuted, 2 an error (also one beside a refutation)."""
    if any(cell.has_error for cell in cells):
        return 2
    if any(cell.verdict == REFUTED for cell in cells):
        return 1
    return 0
