"""The child process that runs one claim program on one device.

    python -m torchcopy_lint.runtime.harness --device cpu --name TCL001-claim < program.py

It reads the program from stdin (``--request``: a JSON request with the scenario,
its check and the lines to watch), seeds ``random``, numpy and torch, resets the
device's state (one CPU thread by default: claims are about semantics, and
intra-op threads only make them slow and noisy on a shared machine), and
executes the program with these names provided:

- ``device``: the device string (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` ...)
- ``observed(hazard, evidence)``: the program's verdict, called exactly once
- ``skip(reason)``: the claim cannot run here (stops the program)
- ``shares_storage(a, b)``: whether two tensors share their storage

A claim comes in two parts: the scenario (the ``claim``, ``claim-fixed`` or
autofixed block) and the rule's shared check (``claim-check``), executed after
it in the same namespace, its lines numbered on from the scenario's. Only the
check gets ``observed``: a scenario cannot pronounce its own verdict. Lines to
watch (the claim's ``# TCLNNN`` markers) are traced with ``sys.settrace`` in the
program's own frames; the result says which of them had not run when
``observed()`` was called (``unreached``): a hazard seen without its marked line
having run does not come from that line.

Whatever the program prints goes to stderr; stdout carries exactly one JSON line,
the result: ``{"status": "observed", "hazard": ..., "evidence": ...}``,
``{"status": "skipped", "reason": ...}`` or ``{"status": "error", "message": ...}``.
Only the standard library is imported at module level: torch is imported in
``run`` so that a missing torch becomes an error result, not a traceback.

Fork mode (``--serve``, Linux): the process imports torch once, then reads one JSON
request per line on stdin and runs each program in a child forked for it (its
own process group and temporary directory, output captured, killed at its
timeout), answering one result line each. A forked child starts from the state
right after ``import torch``, exactly like a fresh interpreter, without paying
for the import again; no device is initialised before the fork. A ``{"probe":
true}`` request answers the environment (``environment.probe``), also from a
forked child, so that no device is ever initialised in the worker itself.
``--probe`` prints the same answer in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

RESULT_PREFIX = "@torchcopy-verify-result "
_EVIDENCE_MAX = 4000


class _Skip(BaseException):
    """Raised by ``skip()``: a BaseException so that a claim's ``except Exception`` does not swallow it."""


class ClaimProtocolError(Exception):
    """The program used ``observed``/``skip`` wrongly."""


class _Recorder:
    def __init__(self, lines: set[int] | None = None) -> None:
        self.result: dict[str, Any] | None = None
        self.lines = lines  # the program's lines run so far (traced), or None
        self.lines_at_verdict: frozenset[int] = frozenset()

    def observed(self, hazard: Any, evidence: Any = "") -> None:
        if self.result is not None:
            raise ClaimProtocolError("observed() was called more than once")
        if self.lines is not None:
            self.lines_at_verdict = frozenset(self.lines)
        if not isinstance(hazard, bool):
            item = getattr(hazard, "item", None)  # a one-element bool tensor / numpy bool
            value = item() if callable(item) else hazard
            if not isinstance(value, bool):
                raise ClaimProtocolError(f"observed(hazard=...) needs a bool, got {type(hazard).__name__}")
            hazard = value
        self.result = {"status": "observed", "hazard": hazard, "evidence": _one_line(str(evidence))[:_EVIDENCE_MAX]}

    @staticmethod
    def skip(reason: Any = "") -> None:
        raise _Skip(_one_line(str(reason)) or "skipped by the claim")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def shares_storage(a: Any, b: Any) -> bool:
    """True when tensors ``a`` and ``b`` are backed by the same storage (views, detach, .data)."""
    storage_a, storage_b = a.untyped_storage(), b.untyped_storage()
    if storage_a.nbytes() == 0 or storage_b.nbytes() == 0:
        return False
    return bool(storage_a.data_ptr() == storage_b.data_ptr())


def _device_type(device: str) -> str:
    return device.split(":", 1)[0]


def _unavailable(torch: Any, device: str) -> str | None:
    """Why ``device`` cannot be used here, or None."""
    kind = _device_type(device)
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if kind == "cpu":
        return None
    if kind == "mps":
        backend = getattr(torch.backends, "mps", None)
        return None if backend is not None and backend.is_available() else "mps not available"
    module = getattr(torch, kind, None)
    if module is None or not hasattr(module, "is_available"):
        return f"torch has no {kind} backend"
    if not module.is_available():
        return f"{kind} not available"
    if index >= module.device_count():
        return f"{device}: only {module.device_count()} {kind} device(s)"
    return None


def reset_state(torch: Any, device: str, seed: int, threads: int = 1) -> None:
    """Seed every generator and put the device in a known state."""
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    torch.manual_seed(seed)  # also seeds every CUDA/MPS/XPU generator
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.set_num_threads(threads)
    kind = _device_type(device)
    if kind in ("cuda", "xpu"):
        module = getattr(torch, kind)
        if ":" in device:
            module.set_device(torch.device(device))
        module.synchronize()  # initialises the device here, not in the middle of the claim
        module.manual_seed_all(seed)
        module.empty_cache()
        try:
            module.reset_peak_memory_stats()
        except (AttributeError, RuntimeError):  # not every backend keeps these statistics
            pass
    elif kind == "mps":
        torch.mps.manual_seed(seed)
        torch.mps.empty_cache()
        torch.mps.synchronize()


def synchronize(torch: Any, device: str) -> None:
    """Wait for queued kernels so that asynchronous device errors surface in this claim."""
    kind = _device_type(device)
    if kind in ("cuda", "xpu", "mps"):
        getattr(torch, kind).synchronize()


def _error_message(error: BaseException, filename: str) -> str:
    """The exception's last line, with the program line that raised it."""
    last = traceback.format_exception_only(type(error), error)[-1].strip()
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == filename]
    where = f" (program line {lines[-1]})" if lines else ""
    return _one_line(last) + where


class _LineTracer:
    """Records the lines run in frames of one file (the program's), ignoring every other frame."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.lines: set[int] = set()

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self._local

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        return self._local if frame.f_code.co_filename == self.filename else None


def _compile_check(check: str, filename: str, offset: int) -> Any:
    """The check, numbered on from the scenario's last line, so errors name the line of the whole program."""
    tree = ast.parse(check, filename)
    ast.increment_lineno(tree, offset)
    return compile(tree, filename, "exec")


def run(
    source: str,
    device: str,
    name: str,
    seed: int,
    threads: int = 1,
    check: str | None = None,
    watch: Sequence[int] = (),
    within: AbstractContextManager[Any] | None = None,
) -> dict[str, Any]:
    """Execute one claim program and return its result (never raises, except KeyboardInterrupt).

    ``check``: the shared check run after ``source`` (which then gets no ``observed``);
    ``watch``: program lines that must have run before ``observed()`` (reported as ``unreached``);
    ``within``: a context the scenario and its check run inside (the sanitizer's session, so
    that it watches exactly the program ``verify`` runs, run the same way).
    """
    filename = f"<{name}>"
    try:
        import torch
    except ImportError as error:
        return {"status": "error", "message": f"torch cannot be imported: {error}"}
    tracer = _LineTracer(filename) if watch else None
    recorder = _Recorder(tracer.lines if tracer is not None else None)
    try:
        reason = _unavailable(torch, device)
        if reason:
            return {"status": "skipped", "reason": reason}
        reset_state(torch, device, seed, threads)
        namespace = {
            "__name__": "__main__",
            "__file__": filename,
            "device": device,
            "skip": recorder.skip,
            "shares_storage": shares_storage,
        }
        if check is None:
            namespace["observed"] = recorder.observed
        code = compile(source, filename, "exec")
        check_code = _compile_check(check, filename, len(source.splitlines())) if check is not None else None
        if tracer is not None:
            sys.settrace(tracer)
        try:
            with within if within is not None else nullcontext():
                exec(code, namespace)  # noqa: S102 - running the claim is the point
                if check_code is not None:
                    namespace["observed"] = recorder.observed  # whatever the scenario bound to the name
                    exec(check_code, namespace)  # noqa: S102
        finally:
            if tracer is not None:
                sys.settrace(None)
        synchronize(torch, device)
    except _Skip as skipped:
        return {"status": "skipped", "reason": str(skipped)}
    except KeyboardInterrupt:
        raise
    except SystemExit as error:
        return {"status": "error", "message": f"the program called exit({error.code!r})"}
    except BaseException as error:  # noqa: BLE001 - every failure is a result
        return {"status": "error", "message": _error_message(error, filename)}
    if recorder.result is None:
        return {"status": "error", "message": "the program finished without calling observed(hazard, evidence)"}
    if watch:
        return {**recorder.result, "unreached": sorted(set(watch) - recorder.lines_at_verdict)}
    return recorder.result


def run_request(request: dict[str, Any]) -> dict[str, Any]:
    """``run`` for one JSON request (fork mode's and ``--request``'s)."""
    return run(
        request["source"],
        request["device"],
        request["name"],
        int(request["seed"]),
        int(request.get("threads", 1)),
        check=request.get("check"),
        watch=[int(line) for line in request.get("watch", ())],
    )


# -- fork mode: one interpreter imports torch once and forks a child per program ----------

def _preload() -> None:
    """What every forked program would import first anyway (nothing that starts a device)."""
    for module in ("numpy", "torch"):
        try:
            __import__(module)
        except Exception:  # noqa: BLE001 - the child reports the failure as its result
            pass


def _read_all(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything written to ``fd`` until EOF, and whether the deadline passed first."""
    chunks = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            data = os.read(fd, 1 << 16)
            if not data:
                return b"".join(chunks), False
            chunks.append(data)


def _tail(log: Any, limit: int = 2000) -> str:
    log.seek(0)
    text = log.read().decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""


_CHILD: int | None = None  # the child running now, in fork mode


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _die_with_parent(parent: int) -> None:
    """Linux: the child gets SIGKILL if the worker dies (PR_SET_PDEATHSIG), so it cannot outlive it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the worker died before prctl took effect
        os._exit(1)


def _on_terminate(signum: int, frame: Any) -> None:
    """SIGTERM to a worker: kill the running program (its whole process group) first, then exit."""
    if _CHILD is not None:
        _kill_group(_CHILD)
    os._exit(128 + signum)


def fork_call(function: Callable[[], dict[str, Any]], timeout: float) -> dict[str, Any]:
    """``function()`` in a forked child (own process group and directory, output captured), with a timeout."""
    read_end, write_end = os.pipe()
    workdir = tempfile.mkdtemp(prefix="torchcopy-verify-")
    with tempfile.TemporaryFile() as log:
        start = time.monotonic()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            try:
                _die_with_parent(parent)
                os.close(read_end)
                if _REPLY_FD is not None:
                    os.close(_REPLY_FD)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.setsid()
                os.chdir(workdir)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(log.fileno(), 1)
                os.dup2(log.fileno(), 2)
                result = function()
                sys.stdout.flush()
                sys.stderr.flush()
                payload = json.dumps(result).encode("utf-8")
                while payload:
                    payload = payload[os.write(write_end, payload):]
            finally:
                os._exit(0)
        global _CHILD
        _CHILD = pid
        os.close(write_end)
        try:
            data, timed_out = _read_all(read_end, start + timeout)
        finally:
            os.close(read_end)
            _kill_group(pid)  # the program and anything it started
            _, status = os.waitpid(pid, 0)
            _CHILD = None
            shutil.rmtree(workdir, ignore_errors=True)
        seconds = time.monotonic() - start
        if timed_out:
            return {"status": "error", "message": f"timed out after {timeout:g} s", "seconds": seconds}
        try:
            result = json.loads(data.decode("utf-8"))
        except ValueError:
            if os.WIFSIGNALED(status):
                how = f"signal {os.WTERMSIG(status)}"
            else:
                how = f"status {os.WEXITSTATUS(status)}"
            detail = _tail(log)
            message = f"the program's process ended ({how}) without a result" + (f": {detail}" if detail else "")
            return {"status": "error", "message": message, "seconds": seconds}
    result["seconds"] = seconds
    return result


def probe() -> dict[str, Any]:
    """The environment (versions, available devices and their names), or why torch cannot be imported."""
    from torchcopy_lint.runtime.environment import TorchMissing, probe as environment_probe

    try:
        return {"status": "ok", "environment": environment_probe()}
    except TorchMissing as error:
        return {"status": "torch-missing", "message": str(error)}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """One request of fork mode: a probe or a program."""
    timeout = float(request.get("timeout", 120))
    if request.get("probe"):
        return fork_call(probe, timeout)
    return fork_call(lambda: run_request(request), timeout)


_REPLY_FD: int | None = None


def serve() -> int:
    """Answer JSON requests on stdin (one per line) with one JSON result line each, until EOF."""
    global _REPLY_FD
    _REPLY_FD = os.dup(1)
    replies = os.fdopen(_REPLY_FD, "w", encoding="utf-8")
    os.dup2(2, 1)  # nothing but replies on the real stdout
    signal.signal(signal.SIGTERM, _on_terminate)
    _preload()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line))
        except Exception as error:  # noqa: BLE001 - report, keep serving
            reply = {"status": "error", "message": f"verify worker failed: {type(error).__name__}: {error}"}
        replies.write(RESULT_PREFIX + json.dumps(reply) + "\n")
        replies.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchcopy_lint.runtime.harness", description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--name", default="claim", help="shown in tracebacks as <NAME>")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    parser.add_argument("--serve", action="store_true", help="fork mode: read JSON requests on stdin, fork a child for each")
    parser.add_argument("--probe", action="store_true", help="print the environment as one result line")
    parser.add_argument("--request", action="store_true", help="stdin is one JSON request (source, check, watch), not a program")
    args = parser.parse_args(argv)
    if args.serve:
        return serve()
    if args.probe:
        result_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
        with result_stream:
            result_stream.write(RESULT_PREFIX + json.dumps(probe()) + "\n")
        return 0
    source = sys.stdin.read()
    # stdout is reserved for the result line: the program's own output (Python or C) goes to stderr.
    sys.stdout.flush()
    result_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    if args.request:
        request = json.loads(source)
        result = run_request({"device": args.device, "name": args.name, "seed": args.seed, "threads": args.threads, **request})
    else:
        result = run(source, args.device, args.name, args.seed, args.threads)
    sys.stdout.flush()
    with result_stream:
        result_stream.write(RESULT_PREFIX + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
