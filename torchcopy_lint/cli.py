"""The ``torchcopy-lint`` command: check (default), rules, explain, verify, server.

Exit status: 0 nothing found, 1 findings, 2 usage/configuration error or a file
that could not be checked.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from torchcopy_lint import __version__
from torchcopy_lint.stopping import Stopped, raise_stopped

# The checker, the catalogue and LibCST are imported where a command needs them, so
# that ``--version``, ``rules`` and ``explain`` start at once (tests/test_lazy_imports.py).
from torchcopy_lint.exit_codes import EXIT_CLEAN, EXIT_ERROR

COMMANDS = ("check", "rules", "explain", "verify", "server")


def _size_argument(value: str) -> int:
    from torchcopy_lint.source import parse_size

    try:
        return parse_size(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _check_parser() -> argparse.ArgumentParser:
    from torchcopy_lint import output
    from torchcopy_lint.cache import CACHE_DIR_NAME

    parser = argparse.ArgumentParser(
        prog="torchcopy-lint",
        description="Find PyTorch copy and aliasing bugs. Commands: check (default), rules, explain CODE, verify, server.",
    )
    parser.add_argument("paths", nargs="*", default=None, metavar="PATH", help="files or directories to check (default: .); - reads stdin")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--version", action="version", version=f"torchcopy-lint {__version__}")

    rules = parser.add_argument_group("rule selection")
    rules.add_argument("--select", action="append", metavar="CODES", help="rules to run, replacing the default set (codes, prefixes, ALL)")
    rules.add_argument("--extend-select", action="append", metavar="CODES", help="rules to add to the selection (e.g. opt-in TCL1)")
    rules.add_argument("--ignore", action="append", metavar="CODES", help="rules to turn off")

    files = parser.add_argument_group("files")
    files.add_argument("--exclude", action="append", metavar="PATTERN", help="gitignore-style patterns to skip (replaces the configured list)")
    files.add_argument("--extend-exclude", action="append", metavar="PATTERN", help="more gitignore-style patterns to skip")
    files.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too (for pre-commit)")
    files.add_argument("--no-respect-gitignore", action="store_true", help="do not skip what .gitignore and .ignore files exclude")
    files.add_argument("--max-file-size", type=_size_argument, default=None, metavar="SIZE", help="larger files are reported, not checked (default: 4MB; 0: no limit)")
    files.add_argument("--stdin-filename", default=None, help="the name to report and configure stdin input under")
    files.add_argument("--show-files", action="store_true", help="list the files that would be checked, and exit")

    configuration = parser.add_argument_group("configuration")
    configuration.add_argument("--config", type=Path, default=None, help="pyproject.toml to use for every file instead of the nearest one")
    configuration.add_argument("--isolated", action="store_true", help="ignore configuration files")
    configuration.add_argument("--show-settings", action="store_true", help="print the settings for the first PATH and where each comes from, and exit")

    fixes = parser.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes, writing files atomically")
    fixes.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply unsafe fixes too")
    fixes.add_argument("--diff", action="store_true", help="print the fixes as a unified diff, write nothing (exit 1 if any)")
    fixes.add_argument("--fix-only", action="store_true", help="apply fixes, do not report what remains (implies --fix)")

    report = parser.add_argument_group("output")
    output.add_arguments(report)  # --output-format/--format, -o/--output-file
    report.add_argument("--statistics", action="store_true", help="print a count per rule instead of each finding")
    report.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary line")
    report.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")

    running = parser.add_argument_group("running")
    running.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: all cores)")
    running.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    running.add_argument("--cache-dir", type=Path, default=None, help=f"cache location (default: {CACHE_DIR_NAME} next to the config)")
    return parser


def run_check(argv: Sequence[str]) -> int:
    if list(argv) == ["--version"]:
        print(f"torchcopy-lint {__version__}")  # without building the parser (it imports the output formats)
        return EXIT_CLEAN
    parser = _check_parser()
    args = parser.parse_args(list(argv))
    if args.explain:
        return run_explain([args.explain])
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    from torchcopy_lint import check_command

    return check_command.run(args)


def run_rules(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="torchcopy-lint rules", description="List every rule and whether it is on by default.")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(list(argv))
    from torchcopy_lint.registry import all_rules

    rules = all_rules()
    if args.format == "json":
        import json

        print(json.dumps([{"code": r.code, "name": r.spec.name, "default": r.spec.default, "fix": r.spec.fix, "summary": r.spec.summary} for r in rules.values()], indent=2))
        return EXIT_CLEAN
    width = max(len(rule.spec.name) for rule in rules.values())
    for rule in rules.values():
        state = "on " if rule.spec.default else "off"
        print(f"{rule.code}  {rule.spec.name:<{width}}  {state}  {rule.spec.summary}")
    return EXIT_CLEAN


def run_explain(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="torchcopy-lint explain", description="Print a rule's documentation.")
    parser.add_argument("code")
    args = parser.parse_args(list(argv))
    from torchcopy_lint.registry import all_rules

    rule = all_rules().get(args.code.upper())
    if rule is None:
        print(f"torchcopy-lint: error: unknown rule {args.code!r} (see `torchcopy-lint rules`)", file=sys.stderr)
        return EXIT_ERROR
    state = "on by default" if rule.spec.default else "opt-in (off by default)"
    print(f"{rule.code} ({rule.spec.name}): {state}; fix: {rule.spec.fix}\n")
    print(rule.spec.body, end="")
    return EXIT_CLEAN


def run_verify(argv: Sequence[str]) -> int:
    from torchcopy_lint.runtime.cli import main as verify_main

    return verify_main(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line. While checking, SIGTERM unwinds it like Ctrl-C (workers stopped,
    temporary files removed); the server keeps the signal's default."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args and args[0] in COMMANDS else "check"
    if args and args[0] in COMMANDS:
        args = args[1:]
    stoppable = command == "check" and threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if stoppable:
        signal.signal(signal.SIGTERM, raise_stopped)
    try:
        return _run(command, args)
    finally:
        if stoppable:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run(command: str, args: list[str]) -> int:
    try:
        if command == "rules":
            return run_rules(args)
        if command == "explain":
            return run_explain(args)
        if command == "verify":
            return run_verify(args)
        if command == "server":
            from torchcopy_lint.server import main as run_server

            return run_server(args)
        return run_check(args)
    except KeyboardInterrupt:
        print("torchcopy-lint: interrupted", file=sys.stderr)
        return 130
    except Stopped as stop:
        print("torchcopy-lint: terminated", file=sys.stderr)
        return 128 + stop.signum
    except BrokenPipeError:
        # The reader went away (``| head``): exit quietly, without the
        # "Exception ignored ... BrokenPipeError" message at interpreter exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - a bug must be one line, not a traceback
        if os.environ.get("TORCHCOPY_LINT_DEBUG"):
            raise
        print(f"torchcopy-lint: internal error ({type(error).__name__}: {error}); please report it (TORCHCOPY_LINT_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_ERROR
