"""Report formats (``--output-format``) and where the report goes (``-o``).

Each format is a function ``(Report, Style) -> str`` in this package: human
ones in text.py, json and json-lines in json_formats.py, CI ones in ci.py,
SARIF in sarif.py. ``emit`` is what the command line calls.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from torchcopy_lint.output.colour import PLAIN, Style, colour_enabled
from torchcopy_lint.output.model import Report, location
from torchcopy_lint.output.sources import SourceLines
from torchcopy_lint.output.text import statistics, summary

Formatter = Callable[[Report, Style], str]

# name -> "module:function" in this package, imported when used: the CI formats and SARIF
# need json, xml and hashlib, which a one-file run in an editor should not pay for.
FORMATS: dict[str, str] = {
    "concise": "text:format_concise",
    "full": "text:format_full",
    "json": "json_formats:format_json",
    "json-lines": "json_formats:format_json_lines",
    "github": "ci:format_github",
    "gitlab": "ci:format_gitlab",
    "junit": "ci:format_junit",
    "pylint": "text:format_pylint",
    "sarif": "sarif:format_sarif",
}
ALIASES = {"text": "concise"}  # the name the first releases used
HUMAN = frozenset({"concise", "full"})  # coloured, followed by the summary line
WITH_EDITS = frozenset({"sarif"})  # shows each fix as text edits (computed here, reading the files again)

__all__ = ["FORMATS", "HUMAN", "Report", "SourceLines", "Style", "add_arguments", "canonical", "emit", "formatter", "location", "render", "statistics", "summary"]


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The output options of ``check``."""
    parser.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=[*FORMATS, *ALIASES],
        default="concise",
        metavar="FORMAT",
        help=f"how to print findings: {', '.join(FORMATS)} (default: concise; --format is an alias)",
    )
    parser.add_argument("-o", "--output-file", type=Path, default=None, metavar="FILE", help="write the report to FILE instead of stdout (never coloured)")


def formatter(name: str) -> Formatter:
    """The function that writes format ``name`` (or an alias of it)."""
    module, function = FORMATS[canonical(name)].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)  # type: ignore[no-any-return]


def render(name: str, report: Report, style: Style = PLAIN) -> str:
    return formatter(name)(report, style)


def emit(report: Report, args: argparse.Namespace, trailer: str | None = None) -> None:
    """Write the report: to ``args.output_file`` or stdout; unreadable files also to stderr.

    Human formats end with the summary line (``trailer`` replaces it; ``-q``
    drops it); ``--statistics`` prints counts per rule instead of findings.
    """
    name = canonical(args.output_format)
    to_file: Path | None = args.output_file
    if name in WITH_EDITS and not report.edits:
        from torchcopy_lint.fixes.text_edits import edits_for_findings

        report.edits = edits_for_findings(report.findings, report.sources.texts)
    style = Style(colour_enabled(sys.stdout)) if name in HUMAN and to_file is None else PLAIN
    text = statistics(report.findings) if getattr(args, "statistics", False) else render(name, report, style)
    if name in HUMAN and not args.quiet:
        text += trailer if trailer is not None else summary(report.findings, len(report.errors), style)
    if to_file is not None:
        to_file.parent.mkdir(parents=True, exist_ok=True)
        to_file.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    for error in report.errors:
        print(error, file=sys.stderr)
