"""The ``torchcopy-lint`` command: check (default), rules, explain, verify.

Exit status: 0 nothing found, 1 findings, 2 usage/configuration error or a file
that could not be checked.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from torchcopy_lint import __version__
from torchcopy_lint.cache import CACHE_DIR_NAME, ResultCache
from torchcopy_lint.catalogue import CatalogueError
from torchcopy_lint.config import ConfigError, Settings, find_pyproject, load_settings
from torchcopy_lint.diagnostics import FileError, FileResult
from torchcopy_lint.discovery import DEFAULT_EXCLUDES, discover, matches_exclude, relative_to_root
from torchcopy_lint.engine import check_bytes, file_error
from torchcopy_lint.source import CannotCheck, parse_size, read_stdin
from torchcopy_lint.parallel import Job, Stopped, check_paths, default_jobs, raise_stopped
from torchcopy_lint.output import FORMATTERS, statistics, summary
from torchcopy_lint.registry import all_rules
from torchcopy_lint.selection import SelectionError, enabled_codes, validate, without

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "rules", "explain", "verify")


def _codes(values: Sequence[str] | None) -> list[str] | None:
    """Flatten ``--select A,B --select C`` into ``["A", "B", "C"]``."""
    if values is None:
        return None
    return [code.strip().upper() for value in values for code in value.split(",") if code.strip()]


def _size_argument(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchcopy-lint",
        description="Find PyTorch copy and aliasing bugs. Commands: check (default), rules, explain CODE, verify.",
    )
    parser.add_argument("paths", nargs="*", default=None, metavar="PATH", help="files or directories to check (default: .); - reads stdin")
    parser.add_argument("--select", action="append", metavar="CODES", help="rules to run, replacing the default set (codes, prefixes, ALL)")
    parser.add_argument("--extend-select", action="append", metavar="CODES", help="rules to add to the selection (e.g. opt-in TCL1)")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="rules to turn off")
    parser.add_argument("--exclude", action="append", metavar="PATTERN", help="glob patterns to skip (replaces the configured list)")
    parser.add_argument("--extend-exclude", action="append", metavar="PATTERN", help="more glob patterns to skip")
    parser.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too (for pre-commit)")
    parser.add_argument("--format", choices=sorted(FORMATTERS), default="text", help="output format (default: text)")
    parser.add_argument("--statistics", action="store_true", help="print a count per rule instead of each finding")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary line")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: all cores)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--cache-dir", type=Path, default=None, help=f"cache location (default: {CACHE_DIR_NAME} next to the config)")
    parser.add_argument("--config", type=Path, default=None, help="pyproject.toml to read instead of searching for one")
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--max-file-size", type=_size_argument, default=None, metavar="SIZE", help="larger files are reported, not checked (default: 4MB; 0: no limit)")
    parser.add_argument("--stdin-filename", default=None, help="the name to report and configure stdin input under")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes, writing files atomically")
    parser.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, apply unsafe fixes too")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff, write nothing (exit 1 if any)")
    parser.add_argument("--fix-only", action="store_true", help="apply fixes, do not report what remains (implies --fix)")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--version", action="version", version=f"torchcopy-lint {__version__}")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    if args.isolated:
        settings = Settings()
    elif args.config is not None:
        settings = load_settings(args.config)
    else:
        start = Path(args.paths[0]) if args.paths and args.paths[0] != "-" else Path.cwd()
        if args.stdin_filename and (not args.paths or args.paths == ["-"]):
            start = Path(args.stdin_filename).parent if os.path.exists(Path(args.stdin_filename).parent) else Path.cwd()
        found = find_pyproject(start if os.path.exists(start) else Path.cwd())
        settings = load_settings(found) if found else Settings()
    overrides: dict[str, object] = {}
    if args.select is not None:
        # ruff's rule: the highest-priority ``select`` starts the resolution, so a
        # command-line --select drops the file's extend-select and ignore.
        overrides["select"] = tuple(_codes(args.select) or ())
        settings = replace(settings, extend_select=(), ignore=())
    if args.extend_select is not None:
        overrides["extend_select"] = settings.extend_select + tuple(_codes(args.extend_select) or ())
    if args.ignore is not None:
        overrides["ignore"] = settings.ignore + tuple(_codes(args.ignore) or ())
    if args.exclude is not None:
        overrides["exclude"] = tuple(args.exclude)
    if args.extend_exclude is not None:
        overrides["extend_exclude"] = settings.extend_exclude + tuple(args.extend_exclude)
    if args.max_file_size is not None:
        overrides["max_file_size"] = args.max_file_size
    if overrides:
        settings = replace(settings, **overrides)  # type: ignore[arg-type]
    return settings


def _per_file_codes(path: str, codes: frozenset[str], settings: Settings) -> frozenset[str]:
    if not settings.per_file_ignores:
        return codes
    candidate = Path(path)
    relative = relative_to_root(candidate, settings.root)
    for pattern, ignored in settings.per_file_ignores:
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(candidate.name, pattern):
            codes = without(codes, ignored)
    return codes


def run_check(argv: Sequence[str]) -> int:
    parser = _check_parser()
    args = parser.parse_args(list(argv))
    if args.explain:
        return run_explain([args.explain])
    try:
        settings = _settings(args)
        rules = all_rules()
        known = list(rules)
        for selectors in (settings.select or (), settings.extend_select, settings.ignore):
            validate(selectors, known)
        for _pattern, ignored in settings.per_file_ignores:
            validate(ignored, known)
    except (ConfigError, SelectionError, CatalogueError) as error:
        print(f"torchcopy-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")

    codes = enabled_codes({code: rule.spec.default for code, rule in rules.items()}, settings.select, settings.extend_select, settings.ignore)
    # --stdin-filename without paths reads stdin (as ruff does).
    paths = args.paths or (["-"] if args.stdin_filename else ["."])
    results: list[FileResult] = []
    errors: list[FileError] = []
    excludes = (*DEFAULT_EXCLUDES, *settings.exclude, *settings.extend_exclude)

    fixing = args.fix or args.fix_only or args.diff
    if "-" in paths and fixing:
        if len(paths) > 1:
            print("torchcopy-lint: error: --fix/--diff of standard input ('-') prints the fixed source, so it cannot be combined with other paths", file=sys.stderr)
            return EXIT_ERROR
        return _fix_stdin(args, args.stdin_filename or "-", _per_file_codes(args.stdin_filename or "-", codes, settings), settings.max_file_size)
    if "-" in paths:
        name = args.stdin_filename or "-"
        if not (args.force_exclude and args.stdin_filename and matches_exclude(Path(name), excludes, settings.root)):
            try:
                results.append(check_bytes(read_stdin(), name, _per_file_codes(name, codes, settings), max_file_size=settings.max_file_size))
            except CannotCheck as error:
                results.append(FileResult(name, [], file_error(name, error)))
        paths = [path for path in paths if path != "-"]

    if paths:
        found = discover(paths, excludes, settings.root, force_exclude=args.force_exclude)
        errors.extend(found.errors)
        jobs = [Job(path, _per_file_codes(str(path), codes, settings), settings.max_file_size) for path in found.files]
        if args.fix or args.fix_only or args.diff:
            return _run_fixes(args, jobs, errors)
        cache = None
        if not args.no_cache:
            cache_dir = args.cache_dir or settings.root / CACHE_DIR_NAME
            cache = ResultCache(cache_dir, [",".join(sorted(codes)), repr(settings.per_file_ignores), str(settings.root)])
        results.extend(check_paths(jobs, args.jobs or default_jobs(), cache))

    errors.extend(result.error for result in results if result.error is not None)
    errors.sort(key=lambda error: error.path)
    findings = sorted(finding for result in results for finding in result.findings)

    out = sys.stdout
    if args.statistics:
        out.write(statistics(findings))
    else:
        out.write(FORMATTERS[args.format](findings))
    for error in errors:
        print(error, file=sys.stderr)
    if not args.quiet and args.format == "text":
        out.write(summary(findings, len(errors)))
    if errors:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _fix_stdin(args: argparse.Namespace, name: str, codes: frozenset[str], max_file_size: int) -> int:
    """``--fix -`` prints the fixed source (the original where it cannot be fixed), as ruff does;
    ``--diff -`` prints the diff. Remaining findings and errors go to stderr."""
    from torchcopy_lint.fixes.apply import fix_source

    try:
        data = read_stdin()
    except CannotCheck as error:
        print(file_error(name, error), file=sys.stderr)
        return EXIT_ERROR
    result, fixed = fix_source(data, name, codes, args.unsafe_fixes, max_file_size)
    if args.diff:
        sys.stdout.write(result.diff)
    else:
        sys.stdout.buffer.write(fixed)
        sys.stdout.flush()
    if not args.fix_only and not args.diff:
        sys.stderr.write(FORMATTERS["text"](result.remaining))
    if result.error is not None:
        print(result.error, file=sys.stderr)
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if result.diff else EXIT_CLEAN
    return EXIT_FINDINGS if result.remaining and not args.fix_only and not args.exit_zero else EXIT_CLEAN


def _run_fixes(args: argparse.Namespace, jobs: list[Job], errors: list[FileError]) -> int:
    """``--fix`` / ``--fix-only`` / ``--diff``: fix files (or show how), then report what remains."""
    from torchcopy_lint.fixes.apply import FixJob, fix_paths

    write = not args.diff
    fix_jobs, targets = [], set()
    for job in jobs:
        target = os.path.realpath(job.path)  # a link and its target, named both, are one file to fix
        if target not in targets:
            targets.add(target)
            fix_jobs.append(FixJob(job.path, job.codes, args.unsafe_fixes, write, job.max_file_size))
    results = fix_paths(fix_jobs, args.jobs or default_jobs())
    errors = errors + [result.error for result in results if result.error is not None]
    remaining = sorted(finding for result in results for finding in result.remaining)
    fixed = sum(result.fixed_count for result in results)
    out = sys.stdout
    if args.diff:
        out.write("".join(result.diff for result in results))
    elif not args.fix_only:
        out.write(statistics(remaining) if args.statistics else FORMATTERS[args.format](remaining))
    for error in errors:
        print(error, file=sys.stderr)
    if not args.quiet and args.format == "text":
        verb = "Would fix" if args.diff else "Fixed"
        files = sum(1 for result in results if result.diff)
        print(f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}; {len(remaining)} remaining.", file=sys.stderr if args.diff else out)
    if errors:
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if any(result.diff for result in results) else EXIT_CLEAN
    if remaining and not args.fix_only and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def run_rules(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="torchcopy-lint rules", description="List every rule and whether it is on by default.")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(list(argv))
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
    """The command line; SIGTERM unwinds it like Ctrl-C (workers stopped, temporary files removed)."""
    stoppable = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if stoppable:
        signal.signal(signal.SIGTERM, raise_stopped)
    try:
        return _main(argv)
    finally:
        if stoppable:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args and args[0] in COMMANDS else "check"
    if args and args[0] in COMMANDS:
        args = args[1:]
    try:
        if command == "rules":
            return run_rules(args)
        if command == "explain":
            return run_explain(args)
        if command == "verify":
            return run_verify(args)
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
