"""Stable identities for findings, so CI services can follow one across commits.

A fingerprint hashes what survives unrelated edits (the file, the rule, the
finding's source line without its indentation) plus the occurrence number
among findings that share all three, never the line number itself.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from torchcopy_lint.diagnostics import FileError, Finding
from torchcopy_lint.output.model import Report


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def line_hashes(report: Report) -> dict[Finding, str]:
    """``hash:occurrence`` of each finding's stripped source line (SARIF's primaryLocationLineHash)."""
    seen: Counter[tuple[str, str]] = Counter()
    hashes = {}
    for finding in report.findings:
        digest = _digest(report.sources.line(finding).strip())[:16]
        seen[(finding.path, digest)] += 1
        hashes[finding] = f"{digest}:{seen[(finding.path, digest)]}"
    return hashes


def fingerprints(report: Report, paths: dict[str, str]) -> dict[Finding, str]:
    """One hex fingerprint per finding, unique within the report (GitLab's ``fingerprint``)."""
    seen: Counter[tuple[str, ...]] = Counter()
    result = {}
    for finding in report.findings:
        key = (paths.get(finding.path, finding.path), finding.code, str(finding.cell or ""), report.sources.line(finding).strip())
        seen[key] += 1
        result[finding] = _digest(*key, str(seen[key]))
    return result


def error_fingerprint(error: FileError, path: str) -> str:
    return _digest(path, "cannot-check", error.reason)
