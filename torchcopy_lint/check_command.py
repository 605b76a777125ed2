"""What ``torchcopy-lint [check]`` does with its parsed arguments.

settings per file (config.Configuration) -> files (discovery) -> one of:
``--show-settings``, ``--show-files``, fix (``--fix``/``--diff``/``--fix-only``,
files or stdin), or check (cached, in worker processes) -> report.
Exit status: 0 nothing found, 1 findings, 2 usage/configuration error or a file
that could not be checked.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from torchcopy_lint.cache import CACHE_DIR_NAME, ResultCache
from torchcopy_lint.catalogue import CatalogueError
from torchcopy_lint.config import SETTING_NAMES, ConfigError, Configuration, Overrides, Settings, toml_key
from torchcopy_lint.diagnostics import FileError, FileResult
from torchcopy_lint.discovery import discover
from torchcopy_lint.engine import check_bytes, file_error, freeze_heap_after_imports
from torchcopy_lint.exit_codes import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from torchcopy_lint import output
from torchcopy_lint.parallel import Job, check_paths, default_jobs
from torchcopy_lint.registry import all_rules
from torchcopy_lint.file_settings import per_file_codes, selected_codes
from torchcopy_lint.selection import SelectionError, validate
from torchcopy_lint.source import CannotCheck, format_size, read_stdin

STDIN = "-"


def codes_from(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """Flatten ``--select A,B --select C`` into ``("A", "B", "C")``."""
    if values is None:
        return None
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def overrides_from(args: argparse.Namespace) -> Overrides:
    return Overrides(
        select=codes_from(args.select),
        extend_select=codes_from(args.extend_select),
        ignore=codes_from(args.ignore),
        exclude=tuple(args.exclude) if args.exclude is not None else None,
        extend_exclude=tuple(args.extend_exclude) if args.extend_exclude is not None else None,
        max_file_size=args.max_file_size,
        respect_gitignore=False if args.no_respect_gitignore else None,
    )


def _validate(settings: Settings) -> None:
    """Unknown rule codes in a configuration are an error (named with the file they come from)."""
    known = list(all_rules())
    for selectors in (settings.select or (), settings.extend_select, settings.ignore):
        validate(selectors, known)
    for _pattern, ignored in settings.per_file_ignores:
        validate(ignored, known)


def _warn(message: str) -> None:
    print(f"torchcopy-lint: warning: {message}", file=sys.stderr)


class Selection:
    """The codes each file runs: its settings' selection, less its per-file ignores (cached per settings)."""

    def __init__(self, configuration: Configuration) -> None:
        self.configuration = configuration
        self._by_settings: dict[Settings, frozenset[str]] = {}

    def selected(self, settings: Settings) -> frozenset[str]:
        codes = self._by_settings.get(settings)
        if codes is None:
            codes = self._by_settings[settings] = selected_codes(settings)
        return codes

    def for_file(self, path: Path | str) -> tuple[Settings, frozenset[str]]:
        settings = self.configuration.for_path(path)
        return settings, per_file_codes(str(path), self.selected(settings), settings)


def run(args: argparse.Namespace) -> int:
    # --stdin-filename without paths reads stdin (as ruff does).
    paths: list[str] = args.paths or ([STDIN] if args.stdin_filename else ["."])
    stdin_name = args.stdin_filename or STDIN
    try:
        configuration = Configuration(overrides_from(args), config_file=args.config, isolated=args.isolated, check=_validate, warn=_warn)
        selection = Selection(configuration)
        for path in paths:  # settle (and validate) the settings of every named path before any work
            configuration.for_path(stdin_name if path == STDIN and args.stdin_filename else "." if path == STDIN else path)
        if args.show_settings:
            return show_settings(selection, paths[0] if paths[0] != STDIN else stdin_name)
        fixing = args.fix or args.fix_only or args.diff
        if STDIN in paths and fixing:
            if len(paths) > 1:
                print("torchcopy-lint: error: --fix/--diff of standard input ('-') prints the fixed source, so it cannot be combined with other paths", file=sys.stderr)
                return EXIT_ERROR
            return fix_stdin(args, stdin_name, selection)
        files = [path for path in paths if path != STDIN]
        found = discover(files, configuration.for_path, force_exclude=args.force_exclude) if files else None
    except (ConfigError, SelectionError, CatalogueError) as error:
        print(f"torchcopy-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    errors = list(found.errors) if found is not None else []
    jobs = []
    for path in found.files if found is not None else []:
        settings, codes = selection.for_file(path)
        jobs.append(Job(path, codes, settings.max_file_size))
    if found is not None and not found.files and not found.errors:
        _warn("no Python files found under the given paths (see --show-files; excluded and git-ignored files are skipped)")
    if args.show_files:
        return show_files(jobs, errors)
    if fixing:
        return run_fixes(args, jobs, errors)
    results: list[FileResult] = []
    stdin_texts: dict[str, str] = {}
    if STDIN in paths:
        results.append(check_stdin(args, stdin_name, selection, stdin_texts))
    freeze_heap_after_imports()  # this process is the CLI's own (files checked here when there are few)
    results.extend(check_paths(jobs, args.jobs or default_jobs(), caches_for(args, jobs, selection)))
    return report(args, results, errors, stdin_texts)


def caches_for(args: argparse.Namespace, jobs: Sequence[Job], selection: Selection) -> list[ResultCache | None] | None:
    """One result cache per configuration (next to its pyproject.toml, or under --cache-dir)."""
    if args.no_cache:
        return None
    caches: dict[Settings, ResultCache] = {}
    found: list[ResultCache | None] = []
    for job in jobs:
        settings = selection.configuration.for_path(job.path)
        cache = caches.get(settings)
        if cache is None:
            key = [",".join(sorted(selection.selected(settings))), repr(settings.per_file_ignores), str(settings.root), str(settings.max_file_size)]
            cache = caches[settings] = ResultCache(args.cache_dir or settings.root / CACHE_DIR_NAME, key)
        found.append(cache)
    return found


def check_stdin(args: argparse.Namespace, name: str, selection: Selection, texts: dict[str, str]) -> FileResult:
    """Check standard input under ``name``; its text goes into ``texts`` (formats that quote source lines)."""
    settings, codes = selection.for_file(name)
    if args.force_exclude and args.stdin_filename and settings.excluded.matches(Path(name)):
        return FileResult(name, [])
    try:
        data = read_stdin()
    except CannotCheck as error:
        return FileResult(name, [], file_error(name, error))
    texts[name] = data.decode("utf-8", "replace")
    return check_bytes(data, name, codes, max_file_size=settings.max_file_size)


def emit(args: argparse.Namespace, report: output.Report, trailer: str | None = None) -> int | None:
    """Print or write the report; EXIT_ERROR when ``-o FILE`` cannot be written."""
    try:
        output.emit(report, args, trailer)
    except OSError as error:
        print(f"torchcopy-lint: error: cannot write {args.output_file}: {error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
    return None


def report(args: argparse.Namespace, results: Sequence[FileResult], errors: list[FileError], stdin_texts: dict[str, str]) -> int:
    """Warnings, then the report (findings and files that could not be checked); the exit status."""
    errors = sorted([*errors, *(result.error for result in results if result.error is not None)], key=lambda error: error.path)
    for warning in sorted(warning for result in results for warning in result.warnings):
        print(warning, file=sys.stderr)
    findings = sorted(finding for result in results for finding in result.findings)
    status = emit(args, output.Report(findings, errors, output.SourceLines(stdin_texts)))
    if status is not None:
        return status
    if errors:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


# -- fixes ----------------------------------------------------------------------------


def fix_stdin(args: argparse.Namespace, name: str, selection: Selection) -> int:
    """``--fix -`` prints the fixed source (the original where it cannot be fixed), as ruff does;
    ``--diff -`` prints the diff. Remaining findings and errors go to stderr."""
    from torchcopy_lint.fixes.apply import fix_source

    settings, codes = selection.for_file(name)
    try:
        data = read_stdin()
    except CannotCheck as error:
        print(file_error(name, error), file=sys.stderr)
        return EXIT_ERROR
    result, fixed = fix_source(data, name, codes, args.unsafe_fixes, settings.max_file_size)
    if args.diff:
        sys.stdout.write(result.diff)
    else:
        sys.stdout.buffer.write(fixed)
        sys.stdout.flush()
    if not args.fix_only and not args.diff:
        sys.stderr.write(output.render("concise", output.Report(result.remaining)))
    if result.error is not None:
        print(result.error, file=sys.stderr)
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if result.diff else EXIT_CLEAN
    return EXIT_FINDINGS if result.remaining and not args.fix_only and not args.exit_zero else EXIT_CLEAN


def run_fixes(args: argparse.Namespace, jobs: list[Job], errors: list[FileError]) -> int:
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
    verb = "Would fix" if args.diff else "Fixed"
    files = sum(1 for result in results if result.diff)
    fix_summary = f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}; {len(remaining)} remaining.\n"
    human = output.canonical(args.output_format) in output.HUMAN
    if args.diff or args.fix_only:
        sys.stdout.write("".join(result.diff for result in results) if args.diff else "")
        for error in errors:
            print(error, file=sys.stderr)
        if human and not args.quiet:
            (sys.stderr if args.diff else sys.stdout).write(fix_summary)
    else:
        status = emit(args, output.Report(remaining, errors), trailer=fix_summary)
        if status is not None:
            return status
    if errors:
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if any(result.diff for result in results) else EXIT_CLEAN
    if remaining and not args.fix_only and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


# -- what a run would use -------------------------------------------------------------


def show_files(jobs: Sequence[Job], errors: Sequence[FileError]) -> int:
    """``--show-files``: each file a run would check, one per line; paths that cannot be walked on stderr."""
    for job in sorted(jobs, key=lambda job: str(job.path)):
        print(job.path)
    for error in errors:
        print(error, file=sys.stderr)
    return EXIT_ERROR if errors else EXIT_CLEAN


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple) and all(isinstance(item, tuple) for item in value) and value and len(value[0]) == 2:
        return "{ " + ", ".join(f"{json.dumps(pattern)} = {json.dumps(list(codes))}" for pattern, codes in value) + " }"
    if isinstance(value, tuple):
        return json.dumps(list(value))
    return json.dumps(value)


def show_settings(selection: Selection, path: str) -> int:
    """``--show-settings``: the settings for ``path`` and where each came from."""
    settings, codes = selection.for_file(path)
    lines = [
        f"# Settings for {path}",
        f"# configuration: {settings.source if settings.source is not None else 'none (built-in defaults)'}",
        f"# patterns are relative to: {settings.root}",
    ]
    for name in SETTING_NAMES:
        value = getattr(settings, name)
        if name == "select" and value is None:
            shown = "(default rules)"
        elif name == "per_file_ignores" and not value:
            shown = "{}"
        else:
            shown = _toml(value)
        note = f"{format_size(value) if value else 'no limit'}, " if name == "max_file_size" else ""
        lines.append(f"{toml_key(name)} = {shown}  # {note}from {settings.origin(name)}")
    ignored = settings.ignored_for(Path(path))
    lines.append(f"# rules for this file: {', '.join(sorted(codes)) or 'none'}" + (f" (per-file-ignores: {', '.join(ignored)})" if ignored else ""))
    print("\n".join(lines))
    return EXIT_CLEAN
