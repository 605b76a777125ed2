"""``json`` (one array) and ``json-lines`` (one object per line).

A finding keeps the fields it always had (path, line, column, end_line,
end_column, code, name, message, fix) plus ``cell`` (notebooks, else null) and
``url`` (the rule's page).
A file that could not be checked is an entry with ``code: null`` and
``name: "cannot-check"`` (as ruff reports syntax errors), so a consumer of the
JSON alone sees it.
"""

from __future__ import annotations

import json

from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.links import rule_url
from torchcopy_lint.output.colour import PLAIN, Style
from torchcopy_lint.output.model import Report


def _rule_urls() -> dict[str, str]:
    from torchcopy_lint.registry import all_rules

    return {code: rule_url(rule.spec.path.name) for code, rule in all_rules().items()}


def finding_record(finding: Finding, urls: dict[str, str]) -> dict[str, object]:
    record = finding.to_dict()
    record["url"] = urls.get(finding.code)
    return record


def error_record(error: FileError) -> dict[str, object]:
    return {
        "path": error.path,
        "line": error.line,
        "column": error.column,
        "end_line": error.line,
        "end_column": error.column,
        "code": None,
        "name": "cannot-check",
        "message": f"cannot check: {error.reason}",
        "fix": None,
        "cell": None,
        "url": None,
    }


def records(report: Report) -> list[dict[str, object]]:
    urls = _rule_urls()
    return [*(finding_record(finding, urls) for finding in report.findings), *(error_record(error) for error in report.errors)]


def format_json(report: Report, style: Style = PLAIN) -> str:
    return json.dumps(records(report), indent=2) + "\n"


def format_json_lines(report: Report, style: Style = PLAIN) -> str:
    return "".join(json.dumps(record) + "\n" for record in records(report))
