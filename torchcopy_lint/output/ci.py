"""CI formats: ``github`` (Actions annotations), ``gitlab`` (Code Quality / Code
Climate JSON) and ``junit`` (XML test report). Each also reports the files that
could not be checked, so a CI view that reads only this output still shows them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from xml.etree import ElementTree

from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.output.colour import PLAIN, Style
from torchcopy_lint.output.fingerprints import error_fingerprint, fingerprints
from torchcopy_lint.output.model import Report, relative_posix

# -- GitHub Actions ------------------------------------------------------------------


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(level: str, properties: list[tuple[str, object]], message: str) -> str:
    joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties)
    return f"::{level} {joined}::{_escape_data(message)}\n"


def _github_finding(f: Finding) -> str:
    cell = f"cell {f.cell}: " if f.cell is not None else ""
    properties: list[tuple[str, object]] = [("file", f.path), ("line", f.line), ("col", f.column), ("endLine", f.end_line), ("endColumn", f.end_column), ("title", f"{f.code} {f.name}")]
    return _annotation("warning", properties, f"{cell}{f.code} {f.message}")


def format_github(report: Report, style: Style = PLAIN) -> str:
    lines = [_github_finding(f) for f in report.findings]
    for e in report.errors:
        where: list[tuple[str, object]] = [("file", e.path)] + ([("line", e.line)] if e.line else []) + ([("col", e.column)] if e.line and e.column else [])
        lines.append(_annotation("error", [*where, ("title", "torchcopy-lint: cannot check")], f"cannot check: {e.reason}"))
    return "".join(lines)


# -- GitLab Code Quality ---------------------------------------------------------------


def _gitlab_root(report: Report) -> Path:
    """GitLab wants paths relative to the repository: $CI_PROJECT_DIR when set."""
    project_dir = os.environ.get("CI_PROJECT_DIR")
    return Path(project_dir) if project_dir else report.root


def format_gitlab(report: Report, style: Style = PLAIN) -> str:
    root = _gitlab_root(report)
    paths = {path: relative_posix(path, root) for path in {f.path for f in report.findings} | {e.path for e in report.errors}}
    prints = fingerprints(report, paths)
    issues: list[dict[str, object]] = []
    for f in report.findings:
        cell = f"cell {f.cell}: " if f.cell is not None else ""
        issues.append(
            {
                "type": "issue",
                "check_name": f.code,
                "description": f"{cell}{f.code} {f.message}",
                "categories": ["Bug Risk"],
                "severity": "major",
                "fingerprint": prints[f],
                "location": {"path": paths[f.path], "positions": {"begin": {"line": f.line, "column": f.column}, "end": {"line": f.end_line, "column": f.end_column}}},
            }
        )
    for e in report.errors:
        issues.append(
            {
                "type": "issue",
                "check_name": "cannot-check",
                "description": f"torchcopy-lint cannot check this file: {e.reason}",
                "categories": ["Bug Risk"],
                "severity": "critical",
                "fingerprint": error_fingerprint(e, paths[e.path]),
                "location": {"path": paths[e.path], "lines": {"begin": e.line or 1}},
            }
        )
    return json.dumps(issues, indent=2) + "\n"


# -- JUnit XML -------------------------------------------------------------------------


def _suite(name: str) -> ElementTree.Element:
    return ElementTree.Element("testsuite", {"name": name})


def format_junit(report: Report, style: Style = PLAIN) -> str:
    """One test suite per file; each finding a failed test case, each unreadable file an errored one."""
    root = ElementTree.Element("testsuites", {"name": "torchcopy-lint"})
    by_path: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_path.setdefault(f.path, []).append(f)
    errors_by_path: dict[str, list[FileError]] = {}
    for e in report.errors:
        errors_by_path.setdefault(e.path, []).append(e)
    total_failures = total_errors = 0
    for path in sorted(set(by_path) | set(errors_by_path)):
        suite = _suite(path)
        failures, errors = by_path.get(path, []), errors_by_path.get(path, [])
        for f in failures:
            where = f"cell {f.cell}, line {f.line}" if f.cell is not None else f"line {f.line}"
            case = ElementTree.SubElement(suite, "testcase", {"name": f"torchcopy-lint.{f.code}", "classname": path, "line": str(f.line), "column": str(f.column)})
            failure = ElementTree.SubElement(case, "failure", {"message": f.message, "type": f.code})
            failure.text = f"{where}, col {f.column}, {f.code} {f.message}"
        for e in errors:
            case = ElementTree.SubElement(suite, "testcase", {"name": "torchcopy-lint.cannot-check", "classname": path})
            error = ElementTree.SubElement(case, "error", {"message": f"cannot check: {e.reason}", "type": "cannot-check"})
            error.text = str(e)
        suite.set("tests", str(len(failures) + len(errors)))
        suite.set("failures", str(len(failures)))
        suite.set("errors", str(len(errors)))
        total_failures += len(failures)
        total_errors += len(errors)
        root.append(suite)
    if not len(root):
        suite = _suite("torchcopy-lint")
        ElementTree.SubElement(suite, "testcase", {"name": "No findings", "classname": "torchcopy-lint"})
        suite.set("tests", "1")
        suite.set("failures", "0")
        suite.set("errors", "0")
        root.append(suite)
    root.set("tests", str(sum(int(suite.get("tests", "0")) for suite in root)))
    root.set("failures", str(total_failures))
    root.set("errors", str(total_errors))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
