"""The human formats: ``concise`` (one line per finding), ``full`` (with the source
line and a caret under the finding), ``pylint``, plus ``--statistics`` and the
summary line. Files that could not be checked go to stderr (see cli.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from torchcopy_lint.diagnostics import Finding
from torchcopy_lint.output.colour import PLAIN, Style
from torchcopy_lint.output.model import Report, location

CONTEXT_LINES = 2  # source lines shown above a finding in the full format
MAX_SHOWN_LINES = 4  # of a finding spanning several lines


def _header(finding: Finding, style: Style, fix_mark: bool) -> str:
    mark = f"{style.fixable('[*]')} " if fix_mark and finding.fix else ""
    position = location(finding)[len(finding.path) :]
    return f"{style.path(finding.path)}{position}: {style.code(finding.code)} {mark}{finding.message}"


def format_concise(report: Report, style: Style = PLAIN) -> str:
    return "".join(_header(finding, style, fix_mark=False) + "\n" for finding in report.findings)


def _snippet(report: Report, finding: Finding, style: Style) -> list[str]:
    lines = report.sources.lines(finding.path, finding.cell)
    if not 0 < finding.line <= len(lines):
        return []
    first = max(1, finding.line - CONTEXT_LINES)
    last = min(len(lines), finding.end_line, finding.line + MAX_SHOWN_LINES - 1)
    width = len(str(last))
    bar = style.gutter(f"{'':>{width}} |")
    out = [bar]
    for number in range(first, last + 1):
        out.append(f"{style.gutter(f'{number:>{width}} |')} {lines[number - 1]}".rstrip())
        if number == finding.line:
            text = lines[number - 1]
            end = finding.end_column if finding.end_line == finding.line else len(text) + 1
            span = max(1, end - finding.column)
            # Tabs keep their width under the caret: copy them from the source line.
            pad = "".join(char if char == "\t" else " " for char in text[: finding.column - 1])
            out.append(f"{bar} {pad}{style.caret('^' * span)} {style.code(finding.code)}")
    out.append(bar)
    return out


def format_full(report: Report, style: Style = PLAIN) -> str:
    blocks = []
    for finding in report.findings:
        lines = [_header(finding, style, fix_mark=True), *_snippet(report, finding, style)]
        lines.append(f"  = help: torchcopy-lint explain {finding.code}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def format_pylint(report: Report, style: Style = PLAIN) -> str:
    """``path:line: [CODE] message`` (ruff's pylint format; pylint-output parsers read it)."""
    lines = []
    for finding in report.findings:
        cell = f"cell {finding.cell}:" if finding.cell is not None else ""
        lines.append(f"{finding.path}:{cell}{finding.line}: [{finding.code}] {finding.message}\n")
    return "".join(lines)


def statistics(findings: Sequence[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    return "".join(f"{count:>5}  {code}  {name}\n" for (code, name), count in sorted(counts.items()))


def summary(findings: Sequence[Finding], errors: int, style: Style = PLAIN) -> str:
    if not findings and not errors:
        return style.summary("All checks passed!") + "\n"
    parts = []
    if findings:
        parts.append(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}.")
    if errors:
        parts.append(f"{errors} file{'s' if errors != 1 else ''} could not be checked.")
    lines = style.summary(" ".join(parts)) + "\n"
    safe = sum(1 for f in findings if f.fix == "safe")
    unsafe = sum(1 for f in findings if f.fix == "unsafe")
    if safe or unsafe:
        more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
        lines += f"{style.fixable('[*]')} {safe} fixable with --fix{more}.\n"
    return lines
