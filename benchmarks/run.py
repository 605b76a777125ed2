"""Side-by-side benchmark: torchcopy-lint vs a bare LibCST parse vs TorchFix.

    python benchmarks/run.py                 # torch's own source, all cores, 3 rounds
    python benchmarks/run.py -j 2 --repeat 5 --target /some/tree

Each round runs, one after the other (so slow drifts of a shared machine hit
every tool alike):

  bare      python benchmarks/bare_parse.py -j N TARGET     (libcst.parse_module on every file)
  cold      python -m torchcopy_lint --isolated --no-cache -j N -q TARGET   (all default rules)
  warm      python -m torchcopy_lint --isolated --cache-dir TMP -j N -q TARGET
            (after one untimed priming run that filled TMP)
  torchfix  .venv-torchfix/bin/torchfix -j N TARGET         (its default rules)

plus, as a diagnostic, ``bare-screened``: the bare parse of only the files
that pass torchcopy-lint's structural screen (the files it actually parses with
LibCST), which shows what the screen, the walk and the analyses cost on top of
parsing. Then one file (``--single-file``, default torch/nn/modules/module.py),
as pre-commit and editors run it: ``--version``, cold, warm (a primed cache),
and ``ruff check`` and ``flake8`` on the same file where they are installed, next
to ``python -c pass``: the interpreter's own start-up, the floor of every Python tool.

torchcopy-lint runs from a copy of ``torchcopy_lint/`` and ``rules/`` taken at
the start (its result cache is keyed by its own files, so edits to the checkout
during a run would otherwise make the warm runs cold).

Every measurement is the wall-clock time of the whole process (interpreter
start-up and imports included), taken with ``time.perf_counter`` around the
child; the CPU time (user + system, the child and its worker processes) comes
from ``os.wait4`` and is reported beside it because it is much less sensitive
to other load on a shared machine. Medians are printed with the ratios and
written as JSON under benchmarks/results/ (git-ignored).

TorchFix 0.7.0 pins ``libcst>=1.5,<1.6``, so it is installed in its own
virtual environment (``benchmarks/.venv-torchfix`` by default, git-ignored),
created on first use with ``python -m venv`` and ``pip install torchfix==0.7.0``.
Like torchcopy-lint it runs with ``-j N`` worker processes (LibCST's codemod
pool); it pre-filters files on the substring "torch". ``--torchfix-subset K``
times it on every K-th file only and scales the time by the line count; the
output says so when that is used.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TORCHFIX_SPEC = "torchfix==0.7.0"
TARGETS = {"cold_over_bare": 1.0, "torchfix_over_cold": 15.0, "warm_seconds": 1.0, "single_file_warm_cpu": 0.15}

sys.path.insert(0, str(HERE))
import bare_parse  # noqa: E402


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def torch_dir() -> Path:
    out = subprocess.run(
        [sys.executable, "-c", "import torch, os; print(os.path.dirname(torch.__file__)); print(torch.__version__)"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    return Path(out[0])


def package_version(python: str, name: str) -> str | None:
    result = subprocess.run(
        [python, "-c", f"import importlib.metadata as m; print(m.version({name!r}))"],
        capture_output=True, text=True,
    )
    return result.stdout.strip() if result.returncode == 0 else None


def ensure_torchfix(venv: Path) -> Path:
    """The torchfix executable in ``venv``, creating the venv and installing it if needed."""
    executable = venv / "bin" / "torchfix"
    python = venv / "bin" / "python"
    if executable.exists() and package_version(str(python), "torchfix") == TORCHFIX_SPEC.split("==")[1]:
        return executable
    log(f"setting up {venv} with {TORCHFIX_SPEC} ...")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", TORCHFIX_SPEC], check=True)
    return executable


def run_timed(command: list[str], cwd: Path, stdout_path: Path) -> dict[str, object]:
    """Run ``command`` to completion; wall and CPU seconds of the whole process tree."""
    load_before = os.getloadavg()[0]
    with open(stdout_path, "wb") as stdout:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
        # Read stderr while waiting so a chatty child cannot block on a full pipe.
        stderr = process.stderr.read() if process.stderr else b""
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall": round(wall, 3),
        "cpu": round(usage.ru_utime + usage.ru_stime, 3),
        "rc": process.returncode,
        "load1_before": round(load_before, 2),
        "stderr_tail": stderr.decode(errors="replace")[-400:],
    }


def screened_files(files: list[str], texts: dict[str, str], rules: list) -> list[str]:
    """The files the structural screen lets through to LibCST for the default rules."""
    import ast

    from torchcopy_lint.screen import facts_of

    passing = []
    for path in files:
        try:
            tree = ast.parse(texts[path])
        except (SyntaxError, ValueError):
            passing.append(path)  # reported as an error, never parsed by LibCST either way
            continue
        facts = facts_of(tree, texts[path])
        if any(rule.checker.applies(facts) for rule in rules):
            passing.append(path)
    return passing


def time_single_file(path: Path, snapshot: Path, work: Path, repeat: int) -> dict[str, object] | None:
    """One file, as pre-commit and editors run it: torchcopy-lint cold and warm (a warm
    cache), ``--version``, and ruff and flake8 on the same file where installed."""
    if not path.is_file():
        return None
    cache_dir = work / "single-cache"
    lint = [sys.executable, "-m", "torchcopy_lint", "--isolated", "-q"]
    commands = {
        "python -c pass (start-up floor)": [sys.executable, "-c", "pass"],
        "torchcopy-lint --version": [sys.executable, "-m", "torchcopy_lint", "--version"],
        "torchcopy-lint cold": [*lint, "--no-cache", str(path)],
        "torchcopy-lint warm": [*lint, "--cache-dir", str(cache_dir), str(path)],
    }
    ruff = _executable("ruff")
    if ruff:
        commands["ruff check"] = [ruff, "check", "--no-cache", "--isolated", "--exit-zero", str(path)]
    if _executable("flake8"):  # run by this interpreter, as torchcopy-lint is (not through a version manager's shim)
        flake8 = [sys.executable, "-m", "flake8"]
        commands["flake8 (pyflakes+pycodestyle)"] = [*flake8, "--isolated", "--exit-zero", str(path)]
        commands["flake8 --select TCL (the plugin)"] = [*flake8, "--isolated", "--exit-zero", "--select", "TCL", str(path)]
    run_timed(commands["torchcopy-lint warm"], snapshot, work / "single-prime.out")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            times[name].append(float(run_timed(command, snapshot, work / "single.out")["cpu"]))  # type: ignore[arg-type]
    return {"file": str(path), "cpu": {name: round(median(values), 4) for name, values in times.items()}, "runs": times}


def _executable(name: str) -> str | None:
    """``name`` installed next to this interpreter, else on PATH. A version manager's shim on
    PATH (pyenv's is a shell script) would add its own start-up to the tool's time."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else shutil.which(name)


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time torchcopy-lint against a bare LibCST parse and TorchFix.")
    parser.add_argument("--target", type=Path, default=None, help="directory to check (default: torch's installed source)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="processes for every tool (default: all cores)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (default: 3); medians are reported")
    parser.add_argument("--venv", type=Path, default=HERE / ".venv-torchfix", help="TorchFix's virtual environment")
    parser.add_argument("--torchfix-subset", type=int, default=None, metavar="K", help="time TorchFix on every K-th file only and scale by lines")
    parser.add_argument("--skip-torchfix", action="store_true", help="do not run TorchFix")
    parser.add_argument("--skip-screened", action="store_true", help="do not run the bare-screened diagnostic")
    parser.add_argument("--single-file", type=Path, default=None, help="the file for the one-file timings (default: torch/nn/modules/module.py)")
    parser.add_argument("--single-file-only", action="store_true", help="time only the one-file runs (print them as JSON)")
    parser.add_argument("--out", type=Path, default=None, help="JSON results file (default: benchmarks/results/<timestamp>.json)")
    args = parser.parse_args(argv)

    # Time a frozen copy of the linter: the result cache is keyed by the linter's own
    # files, so an edit to the checkout during the run (a shared working tree) would
    # otherwise turn "warm" runs cold and mix two versions of the code in one table.
    work = Path(tempfile.mkdtemp(prefix="tcl-bench-"))
    snapshot = work / "torchcopy-lint"
    for name in ("torchcopy_lint", "rules"):
        shutil.copytree(REPO / name, snapshot / name, ignore=shutil.ignore_patterns("__pycache__"))
    # Byte-compile it, as installing a wheel does: with PYTHONDONTWRITEBYTECODE set (it is on
    # some machines), every run would otherwise compile the package from source (~0.1 s).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(snapshot)], check=True)
    imported = subprocess.run([sys.executable, "-c", "import torchcopy_lint; print(torchcopy_lint.__file__)"], cwd=snapshot, capture_output=True, text=True).stdout.strip()
    if not imported.startswith(str(snapshot)):
        log(f"warning: `python -m torchcopy_lint` in the snapshot imports {imported or 'nothing'}, not the snapshot")
    sys.path.insert(0, str(snapshot))
    from torchcopy_lint.discovery import discover_plainly
    from torchcopy_lint.registry import all_rules

    target = (args.target or torch_dir()).resolve()
    if args.single_file_only:
        single = time_single_file(args.single_file or target / "nn" / "modules" / "module.py", snapshot, work, args.repeat)
        shutil.rmtree(work, ignore_errors=True)
        print(json.dumps({"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "single_file": single}, indent=2))
        return 0
    jobs = args.jobs or bare_parse.default_jobs()
    torchfix = None if args.skip_torchfix else ensure_torchfix(args.venv.resolve())

    # -- what is being checked ----------------------------------------------------------
    files = bare_parse.find_files([str(target)])
    lint_files = discover_plainly([str(target)], Path.cwd()).files
    if sorted(map(str, lint_files)) != sorted(files):
        log(f"warning: bare_parse finds {len(files)} files, torchcopy-lint {len(lint_files)}")
    lines = total_bytes = 0
    texts: dict[str, str] = {}
    for path in files:
        data = Path(path).read_bytes()
        total_bytes += len(data)
        text = bare_parse.decode(data) or ""
        texts[path] = text
        lines += text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    rules = all_rules()
    default_codes = sorted(code for code, rule in rules.items() if rule.spec.default)
    screened = screened_files(files, texts, [rules[code] for code in default_codes])
    screened_lines = sum(texts[path].count("\n") for path in screened)
    with_torch = sum(1 for path in files if "torch" in texts[path])
    del texts

    cache_dir = work / "cache"
    lint = [sys.executable, "-m", "torchcopy_lint", "--isolated", "-j", str(jobs), "-q"]
    commands: dict[str, list[str]] = {
        "bare": [sys.executable, str(HERE / "bare_parse.py"), "-j", str(jobs), "--json", str(target)],
        "cold": [*lint, "--no-cache", str(target)],
        "warm": [*lint, "--cache-dir", str(cache_dir), str(target)],
    }
    if not args.skip_screened:
        listing = work / "screened.txt"
        listing.write_text("\n".join(screened) + "\n", encoding="utf-8")
        commands["bare-screened"] = [sys.executable, str(HERE / "bare_parse.py"), "-j", str(jobs), "--json", "--files-from", str(listing)]
    torchfix_scale = 1.0
    if torchfix is not None:
        if args.torchfix_subset and args.torchfix_subset > 1:
            subset = files[:: args.torchfix_subset]
            subset_lines = sum(
                (lambda t: t.count("\n") + (0 if t.endswith("\n") or not t else 1))(bare_parse.decode(Path(p).read_bytes()) or "")
                for p in subset
            )
            torchfix_scale = lines / max(1, subset_lines)
            commands["torchfix"] = [str(torchfix), "-j", str(jobs), *subset]
            log(f"TorchFix runs on every {args.torchfix_subset}th file ({len(subset)} files, {subset_lines} lines); its times are scaled by {torchfix_scale:.3f}")
        else:
            commands["torchfix"] = [str(torchfix), "-j", str(jobs), str(target)]

    log(f"target {target}: {len(files)} files, {lines} lines; {jobs} processes; {args.repeat} rounds")
    log(f"priming the cache for the warm runs in {cache_dir} ...")
    prime = run_timed(commands["warm"], snapshot, work / "prime.out")
    log(f"  priming run: {prime['wall']:.2f} s (rc {prime['rc']})")

    runs: dict[str, list[dict[str, object]]] = {name: [] for name in commands}
    for round_number in range(1, args.repeat + 1):
        for name, command in commands.items():
            result = run_timed(command, snapshot, work / f"{name}.out")
            if name == "torchfix" and torchfix_scale != 1.0:
                result["measured_wall"], result["measured_cpu"] = result["wall"], result["cpu"]
                result["wall"] = round(float(result["wall"]) * torchfix_scale, 3)  # type: ignore[arg-type]
                result["cpu"] = round(float(result["cpu"]) * torchfix_scale, 3)  # type: ignore[arg-type]
            bad = (name.startswith("bare") and result["rc"] != 0) or (name in ("cold", "warm") and result["rc"] not in (0, 1)) or (name == "torchfix" and result["rc"] not in (0, 1))
            if bad:
                log(f"  {name}: exit status {result['rc']}: {result['stderr_tail']}")
            runs[name].append(result)
            log(f"  round {round_number} {name:<16} {result['wall']:8.2f} s wall {result['cpu']:8.2f} s cpu  (rc {result['rc']}, load {result['load1_before']})")

    findings = sum(1 for line in (work / "cold.out").read_text(errors="replace").splitlines() if line.strip())
    single = time_single_file(args.single_file or target / "nn" / "modules" / "module.py", snapshot, work, args.repeat)
    medians = {name: {"wall": median([float(r["wall"]) for r in results]), "cpu": median([float(r["cpu"]) for r in results])} for name, results in runs.items()}  # type: ignore[arg-type]

    def ratio(a: str, b: str, kind: str) -> float | None:
        if a not in medians or b not in medians or not medians[b][kind]:
            return None
        return round(medians[a][kind] / medians[b][kind], 3)

    ratios = {
        "cold_over_bare": {kind: ratio("cold", "bare", kind) for kind in ("wall", "cpu")},
        "torchfix_over_cold": {kind: ratio("torchfix", "cold", kind) for kind in ("wall", "cpu")},
        "cold_over_bare_screened": {kind: ratio("cold", "bare-screened", kind) for kind in ("wall", "cpu")},
    }
    report = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cores_available": bare_parse.default_jobs(),
            "python": platform.python_version(),
        },
        "versions": {
            "torch": package_version(sys.executable, "torch"),
            "libcst": package_version(sys.executable, "libcst"),
            "torchcopy_lint": package_version(sys.executable, "torchcopy-lint"),
            "torchcopy_lint_commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or None,
            "torchcopy_lint_uncommitted_changes": bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "torchcopy_lint", "rules"], capture_output=True, text=True).stdout.strip()),
            "torchfix": package_version(str(args.venv / "bin" / "python"), "torchfix") if torchfix else None,
            "torchfix_libcst": package_version(str(args.venv / "bin" / "python"), "libcst") if torchfix else None,
        },
        "target": str(target),
        "files": len(files),
        "lines": lines,
        "bytes": total_bytes,
        "jobs": jobs,
        "repeat": args.repeat,
        "default_rules": default_codes,
        "files_passing_screen": len(screened),
        "lines_passing_screen": screened_lines,
        "single_file": single,
        "files_containing_torch": with_torch,
        "torchcopy_lint_findings": findings,
        "torchfix_subset_every": args.torchfix_subset if torchfix_scale != 1.0 else None,
        "torchfix_scale": torchfix_scale,
        "priming_run": prime,
        "commands": commands if torchfix_scale == 1.0 else {**commands, "torchfix": [*commands["torchfix"][:3], f"<{len(commands['torchfix']) - 3} files>"]},
        "runs": runs,
        "medians": medians,
        "ratios": ratios,
        "targets": TARGETS,
    }
    out = args.out or HERE / "results" / f"{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)

    # -- summary ------------------------------------------------------------------------
    print(f"\n{target}")
    print(f"{len(files)} files, {lines} lines ({total_bytes / 1e6:.1f} MB); {len(screened)} files ({screened_lines} lines) pass torchcopy-lint's screen")
    print(f"{jobs} processes for every tool, median of {args.repeat} rounds; torch {report['versions']['torch']}, libcst {report['versions']['libcst']}, TorchFix {report['versions']['torchfix']} (libcst {report['versions']['torchfix_libcst']})")
    print()
    print(f"{'':<18}{'wall s':>10}{'cpu s':>10}   runs (wall)")
    for name, result in medians.items():
        label = name + (" (scaled)" if name == "torchfix" and torchfix_scale != 1.0 else "")
        walls = ", ".join(f"{float(r['wall']):.2f}" for r in runs[name])  # type: ignore[arg-type]
        print(f"{label:<18}{result['wall']:>10.2f}{result['cpu']:>10.2f}   {walls}")
    print()

    def verdict(value: float | None, limit: float, below: bool) -> str:
        if value is None:
            return "not measured"
        return "meets target" if (value <= limit if below else value >= limit) else "MISSES target"

    cold_bare = ratios["cold_over_bare"]
    print(f"torchcopy-lint cold / bare parse:   {cold_bare['wall']}x wall, {cold_bare['cpu']}x cpu   (target <= {TARGETS['cold_over_bare']}x: {verdict(cold_bare['wall'], TARGETS['cold_over_bare'], True)})")
    tf = ratios["torchfix_over_cold"]
    if tf["wall"] is not None:
        scaled = " (TorchFix scaled from a subset)" if torchfix_scale != 1.0 else ""
        print(f"TorchFix / torchcopy-lint cold:     {tf['wall']}x wall, {tf['cpu']}x cpu   (target >= {TARGETS['torchfix_over_cold']}x: {verdict(tf['wall'], TARGETS['torchfix_over_cold'], False)}){scaled}")
    warm = medians["warm"]["wall"]
    print(f"torchcopy-lint warm re-run:         {warm:.2f} s wall   (target < {TARGETS['warm_seconds']} s: {verdict(warm, TARGETS['warm_seconds'] - 1e-9, True)})")
    pre = ratios["cold_over_bare_screened"]
    if pre["wall"] is not None:
        print(f"(diagnostic) cold / bare parse of the files the screen lets through: {pre['wall']}x wall, {pre['cpu']}x cpu")
    if single:
        print(f"\none file ({single['file']}), median CPU s of {args.repeat}:")
        for name, seconds in single["cpu"].items():
            print(f"  {name:<28}{seconds:8.3f}")
        warm_single = single["cpu"].get("torchcopy-lint warm")
        if warm_single is not None:
            print(f"torchcopy-lint warm, one file:      {warm_single:.3f} s cpu   (target <= {TARGETS['single_file_warm_cpu']} s: {verdict(warm_single, TARGETS['single_file_warm_cpu'], True)})")
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
