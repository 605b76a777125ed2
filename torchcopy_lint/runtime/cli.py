"""``torchcopy-lint verify``: prove every rule's claim with real torch.

Exit status: 0 every claim that ran was confirmed (skipped ones allowed), 1 a claim
was refuted, 2 an error (a claim that failed to run, a usage error, torch missing,
a ``--device`` that is not available here).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from torchcopy_lint.runtime import INSTALL_HINT

EXIT_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchcopy-lint verify",
        description=(
            "Run every rule's claim (the `python claim` / `python claim-fixed` scenarios of its catalogue file, "
            "each followed by its shared `python claim-check`) with real PyTorch, one subprocess per program and device, "
            "and lint both scenarios with the rule. "
            "A rule with an autofix also runs its flagged claim after the fix, which must remove the hazard. "
            "The sanitizer column runs each program once more under the runtime sanitizer. "
            f"Needs torch: {INSTALL_HINT}"
        ),
        epilog="Exit status: 0 all claims that ran were confirmed, 1 a claim was refuted, 2 errors.",
    )
    parser.add_argument("--device", action="append", metavar="DEVICE", help="cpu, cuda, cuda:1, mps, xpu (repeatable; default: cpu and every available accelerator); "
        "a device named here that is not available is an error (exit 2)")
    parser.add_argument("--select", action="append", metavar="CODES", help="rules to verify (codes, prefixes, ALL; default: every rule, opt-in ones included)")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="rules to leave out")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format (default: text)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="limit for each program (default: 120)")
    parser.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="programs run at once (default: cores, at most 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed for random, numpy and torch in every program (default: 0)")
    parser.add_argument("--threads", type=int, default=1, metavar="N", help="torch CPU threads per program (default: 1)")
    parser.add_argument(
        "--isolation",
        choices=("auto", "fork", "spawn"),
        default="auto",
        help="spawn: a fresh interpreter per program; fork: one per worker imports torch once and forks a child per program (Linux); "
        "auto (default): fork for the CPU on Linux, spawn otherwise",
    )
    parser.add_argument("--rules-dir", type=Path, default=None, metavar="DIR", help="read the claims from this catalogue directory instead of the built-in one")
    parser.add_argument("--no-sanitizer", action="store_true", help="leave out the sanitizer column (each claim and fixed program, scenario and check, run again under the runtime sanitizer)")
    parser.add_argument("-v", "--verbose", action="store_true", help="report each program on stderr as it finishes")
    return parser


def _codes(values: Sequence[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [code.strip().upper() for value in values for code in value.split(",") if code.strip()]


def _error(message: str) -> int:
    print(f"torchcopy-lint verify: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        parser.error("--timeout must be positive")

    from torchcopy_lint.catalogue import CatalogueError, load_catalogue
    from torchcopy_lint.runtime.environment import KNOWN_DEVICE_TYPES, TorchMissing, unavailable_reason
    from torchcopy_lint.selection import SelectionError, enabled_codes, validate

    devices: list[str] = []
    for device in args.device or []:
        device = device.strip().lower()
        kind, _, index = device.partition(":")
        if kind not in KNOWN_DEVICE_TYPES or (index and not index.isdigit()) or (kind == "cpu" and index):
            parser.error(f"unknown device {device!r} (use {', '.join(KNOWN_DEVICE_TYPES)}, or cuda:N / xpu:N)")
        if device not in devices:
            devices.append(device)

    if args.rules_dir is not None and not args.rules_dir.is_dir():
        return _error(f"--rules-dir {args.rules_dir}: not a directory")
    try:
        specs = load_catalogue(args.rules_dir.resolve() if args.rules_dir else None)
        if not specs:
            return _error(f"no rule files (TCL*.md) in {args.rules_dir}")
        select, ignore = _codes(args.select), _codes(args.ignore) or []
        for selectors in (select or [], ignore):
            validate(selectors, specs)
    except (CatalogueError, SelectionError, OSError) as error:
        return _error(str(error))
    codes = enabled_codes({code: True for code in specs}, select, (), ignore)
    if not codes:
        return _error("no rules selected")

    from torchcopy_lint.engine import default_jobs
    from torchcopy_lint.runtime.claims import rule_claims
    from torchcopy_lint.runtime.report import RENDERERS, build_document
    from torchcopy_lint.runtime.runner import DEFAULT_TIMEOUT, Executor, ProbeFailed, verify

    rules = [rule_claims(spec) for code, spec in specs.items() if code in codes]
    progress = (lambda line: print(line, file=sys.stderr, flush=True)) if args.verbose else None
    start = time.perf_counter()
    # The workers start importing torch now; the environment is read in one of them.
    with Executor(jobs=args.jobs or min(4, default_jobs()), seed=args.seed, threads=args.threads, isolation=args.isolation, devices=devices or ["cpu"]) as executor:
        try:
            environment = executor.probe()
        except (TorchMissing, ProbeFailed) as error:
            return _error(str(error))
        if not devices:
            devices = list(environment["available_devices"])
        # A device asked for by name that is not here is an error, not a skip: nothing was verified on it.
        absent = {device: reason for device in devices if (reason := unavailable_reason(device, environment))}
        if absent:
            return _error("; ".join(f"--device {device}: {reason}" for device, reason in absent.items()))
        unavailable: dict[str, str] = {}
        environment["threads_per_program"] = args.threads
        cells = verify(rules, devices, unavailable, executor=executor, timeout=args.timeout or DEFAULT_TIMEOUT, progress=progress)
    sanitizer = None
    if not args.no_sanitizer:
        from torchcopy_lint.sanitizer.claims import sanitizer_column

        ran = [device for device in devices if device not in unavailable]
        timeout = args.timeout or DEFAULT_TIMEOUT
        sanitizer = {device: sanitizer_column(rules, device, seed=args.seed, threads=args.threads, timeout=timeout) for device in ran}
    document = build_document(environment, devices, unavailable, cells, time.perf_counter() - start, sanitizer)
    sys.stdout.write(RENDERERS[args.format](document))
    sys.stdout.flush()
    return int(document["exit_status"])
