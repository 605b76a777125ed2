"""SARIF 2.1.0, as GitHub code scanning reads it (``github/codeql-action/upload-sarif``).

- ``tool.driver``: name, version, informationUri and every rule of the
  catalogue with its name, short description (the summary), full description
  ("What it does"), help (the whole page, as text and Markdown), help URI,
  default level and whether it is on by default.
- ``results``: rule id and index, message, a region with 1-based lines and
  columns (``columnKind`` says columns count code points), a
  ``partialFingerprints.primaryLocationLineHash`` so alerts survive unrelated
  edits, the fix's text edits where a fix exists, and the fix class. In a
  notebook the region counts lines within the cell, named in the location's
  ``properties.cell`` (the notebook's JSON has no lines a reader could map to).
- Files that could not be checked are ``toolExecutionNotifications`` of the
  invocation, which is then not ``executionSuccessful``.

Paths are relative to the directory the linter ran in (``%SRCROOT%``), which is
the repository root in a CI job.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from torchcopy_lint import __version__
from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.links import PROJECT_URL, rule_url
from torchcopy_lint.output.colour import PLAIN, Style
from torchcopy_lint.output.fingerprints import line_hashes
from torchcopy_lint.output.model import Report, relative_posix

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
ROOT_ID = "%SRCROOT%"


def _rule_descriptor(rule: object) -> dict[str, object]:
    spec = rule.spec  # type: ignore[attr-defined]
    return {
        "id": spec.code,
        "name": spec.name,
        "shortDescription": {"text": _plain(spec.summary)},
        "fullDescription": {"text": spec.sections.get("What it does", spec.summary)},
        "help": {"text": spec.body, "markdown": spec.body},
        "helpUri": rule_url(spec.path.name),
        "defaultConfiguration": {"level": "warning", "enabled": spec.default},
        "properties": {"tags": ["pytorch", "correctness"], "fix": spec.fix},
    }


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


def _artifact(path: str, report: Report) -> dict[str, object]:
    relative = relative_posix(path, report.root)
    if relative.startswith("/"):
        return {"uri": "file://" + quote(relative)}
    return {"uri": quote(relative), "uriBaseId": ROOT_ID}


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    # SARIF regions are 1-based; a 0 column is rejected by GitHub, so never emit one.
    return {"startLine": max(1, line), "startColumn": max(1, column), "endLine": max(1, end_line), "endColumn": max(1, end_column)}


def _error_location(error: FileError, report: Report) -> dict[str, object]:
    location: dict[str, object] = {"artifactLocation": _artifact(error.path, report)}
    if error.line:
        location["region"] = {"startLine": error.line, **({"startColumn": error.column} if error.column else {})}
    return location


def _fix(finding: Finding, report: Report) -> list[dict[str, object]]:
    edits = report.edits.get(finding)
    if not edits or finding.cell is not None:
        return []
    replacements = [
        {"deletedRegion": _region(edit.line, edit.column, edit.end_line, edit.end_column), "insertedContent": {"text": edit.text}}
        for edit in edits
    ]
    return [{"description": {"text": f"{finding.fix} fix for {finding.code}"}, "artifactChanges": [{"artifactLocation": _artifact(finding.path, report), "replacements": replacements}]}]


def _result(finding: Finding, index: int, report: Report, line_hash: str) -> dict[str, object]:
    location: dict[str, object] = {
        "physicalLocation": {
            "artifactLocation": _artifact(finding.path, report),
            "region": _region(finding.line, finding.column, finding.end_line, finding.end_column),
        }
    }
    if finding.cell is not None:
        location["properties"] = {"cell": finding.cell}
    result: dict[str, object] = {
        "ruleId": finding.code,
        "ruleIndex": index,
        "level": "warning",
        "message": {"text": finding.message},
        "locations": [location],
        "partialFingerprints": {"primaryLocationLineHash": line_hash},
    }
    fixes = _fix(finding, report)
    if fixes:
        result["fixes"] = fixes
    if finding.fix:
        result["properties"] = {"fixApplicability": finding.fix}
    return result


def sarif_log(report: Report) -> dict[str, object]:
    from torchcopy_lint.registry import all_rules

    rules = all_rules()
    index = {code: position for position, code in enumerate(rules)}
    hashes = line_hashes(report)
    notifications = [
        {
            "level": "error",
            "message": {"text": f"cannot check: {error.reason}"},
            "locations": [{"physicalLocation": _error_location(error, report)}],
            "descriptor": {"id": "cannot-check"},
        }
        for error in report.errors
    ]
    root_uri = report.root.resolve().as_uri().rstrip("/") + "/"
    run = {
        "tool": {
            "driver": {
                "name": "torchcopy-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": PROJECT_URL,
                "rules": [_rule_descriptor(rule) for rule in rules.values()],
            }
        },
        "invocations": [{"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications}],
        "originalUriBaseIds": {ROOT_ID: {"uri": root_uri}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(finding, index.get(finding.code, -1), report, hashes[finding]) for finding in report.findings],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def format_sarif(report: Report, style: Style = PLAIN) -> str:
    return json.dumps(sarif_log(report), indent=2) + "\n"
