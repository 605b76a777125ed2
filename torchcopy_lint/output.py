"""Output formats: text (default), json, github (Actions annotations).

Each formatter takes the sorted findings and returns the text to print.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence

from torchcopy_lint.diagnostics import Finding


def format_text(findings: Sequence[Finding]) -> str:
    return "".join(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}\n" for f in findings)


def format_json(findings: Sequence[Finding]) -> str:
    return json.dumps([finding.to_dict() for finding in findings], indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: Sequence[Finding]) -> str:
    lines = []
    for f in findings:
        properties = ",".join(
            [
                f"file={_escape_property(f.path)}",
                f"line={f.line}",
                f"col={f.column}",
                f"endLine={f.end_line}",
                f"endColumn={f.end_column}",
                f"title={_escape_property(f'{f.code} {f.name}')}",
            ]
        )
        lines.append(f"::warning {properties}::{_escape_data(f'{f.code} {f.message}')}\n")
    return "".join(lines)


FORMATTERS: dict[str, Callable[[Sequence[Finding]], str]] = {
    "text": format_text,
    "json": format_json,
    "github": format_github,
}


def statistics(findings: Sequence[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    return "".join(f"{count:>5}  {code}  {name}\n" for (code, name), count in sorted(counts.items()))


def summary(findings: Sequence[Finding], errors: int) -> str:
    if not findings and not errors:
        return "All checks passed!\n"
    parts = []
    if findings:
        parts.append(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''}.")
    if errors:
        parts.append(f"{errors} file{'s' if errors != 1 else ''} could not be checked.")
    lines = " ".join(parts) + "\n"
    safe = sum(1 for f in findings if f.fix == "safe")
    unsafe = sum(1 for f in findings if f.fix == "unsafe")
    if safe or unsafe:
        more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
        lines += f"[*] {safe} fixable with --fix{more}.\n"
    return lines
