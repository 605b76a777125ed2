"""tools/precision.py on a tiny fake corpus: keys, sampling, classification and render (no network)."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from conftest import REPO

_spec = importlib.util.spec_from_file_location("precision_tool", REPO / "tools" / "precision.py")
assert _spec is not None and _spec.loader is not None
precision = importlib.util.module_from_spec(_spec)
sys.modules["precision_tool"] = precision  # dataclasses look their module up
_spec.loader.exec_module(precision)

SOURCE = """import torch

def step(model, lr):
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
        p.data.add_(p.grad, alpha=-lr)

class Store:
    def load(self, other):
        other.data.zero_()
"""


def _finding(line: int, code: str = "TCL001", column: int = 9) -> dict:
    return {"path": "pkg/mod.py", "line": line, "column": column, "code": code, "message": f"{code} message"}


@pytest.fixture()
def fake(tmp_path: Path) -> dict:
    corpus = tmp_path / "corpus"
    (corpus / "pkg").mkdir(parents=True)
    (corpus / "pkg" / "mod.py").write_text(SOURCE, encoding="utf-8")
    cache = tmp_path / "cache"
    (cache / "results").mkdir(parents=True)
    record = {
        "corpus": "fake",
        "version": "1.2.3",
        "source": "fake-1.2.3-py3-none-any.whl",
        "root": str(corpus),
        "packages": ["pkg"],
        "files": 1,
        "lines": SOURCE.count("\n"),
        "seconds": 0.1,
        "rules": {"TCL001": {"name": "data-mutation", "default": True}, "TCL101": {"name": "data-access", "default": False}},
        "linter": "abc1234",
        "collected": "2026-01-01 00:00 UTC",
        "errors": {"internal": 0, "syntax": 1, "other": 0},
        "error_lines": ["pkg/bad.py: cannot check: syntax error at line 1, column 1: x"],
        "findings": [_finding(5), _finding(6), _finding(10)],
    }
    (cache / "results" / "fake.json").write_text(json.dumps(record), encoding="utf-8")
    return {"cache": cache, "corpus": corpus, "record": record, "tmp": tmp_path}


def _write_classification(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, precision.CSV_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def test_keys_use_the_line_text_and_count_identical_lines(fake: dict) -> None:
    keyed = precision.keyed_findings(precision.load_results(fake["cache"] / "results"), precision.SourceCache())
    keys = [finding["key"] for finding in keyed]
    digest = precision.line_hash("        p.data.add_(p.grad, alpha=-lr)")
    assert keys[0] == ("fake", "pkg/mod.py", "TCL001", digest, 0)
    assert keys[1] == ("fake", "pkg/mod.py", "TCL001", digest, 1)  # the same text twice
    assert keys[2][3] == precision.line_hash("other.data.zero_()")  # whitespace does not matter


def test_sampling_takes_all_below_the_threshold_and_a_seeded_sample_above() -> None:
    few = [{"code": "TCL001", "key": ("c", "p.py", "TCL001", str(i), 0)} for i in range(10)]
    assert precision.sample_findings(few) == few
    many = [{"code": "TCL101", "key": ("c", "p.py", "TCL101", f"{i:04d}", 0)} for i in range(500)]
    first, second = precision.sample_findings(many), precision.sample_findings(list(reversed(many)))
    assert len(first) == precision.SAMPLE_SIZE
    assert first == second  # deterministic, whatever the input order


def test_render_counts_verdicts_and_stale_rows(fake: dict) -> None:
    digest = precision.line_hash("p.data.add_(p.grad, alpha=-lr)")
    classification = fake["tmp"] / "review.csv"
    _write_classification(classification, [
        {"corpus": "fake", "path": "pkg/mod.py", "line": 5, "code": "TCL001", "line_hash": digest, "occurrence": 0, "verdict": "deliberate", "note": "hand-written SGD"},
        {"corpus": "fake", "path": "pkg/mod.py", "line": 6, "code": "TCL001", "line_hash": digest, "occurrence": 1, "verdict": "hazard", "note": "second update"},
        {"corpus": "fake", "path": "pkg/mod.py", "line": 10, "code": "TCL001", "line_hash": precision.line_hash("other.data.zero_()"), "occurrence": 0, "verdict": "false-positive", "note": "not a tensor"},
        {"corpus": "fake", "path": "pkg/gone.py", "line": 3, "code": "TCL001", "line_hash": "0" * 12, "occurrence": 0, "verdict": "hazard", "note": "file removed"},
    ])
    output = fake["tmp"] / "precision.md"
    assert precision.main(["--cache", str(fake["cache"]), "--classification", str(classification), "render", "--output", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    assert "| fake | 1.2.3 | fake-1.2.3-py3-none-any.whl | 1 | 10 | 1 | 0 | 0 |" in text
    assert "| TCL001 data-mutation | 3 | 3 | 3 | 1 | 1 | 1 | 33% | 1 |" in text
    assert "| TCL101 data-access | 0 | 0 | 0 | 0 | 0 | 0 | – | – |" in text
    assert "1 classification(s) match no current finding" in text
    assert "- not a tensor (1): `fake:pkg/mod.py:10`" in text
    assert "p.data.add_" not in text  # no third-party code in the rendered page


def test_sample_writes_the_review_file_and_a_template(fake: dict) -> None:
    classification = fake["tmp"] / "none.csv"
    assert precision.main(["--cache", str(fake["cache"]), "--classification", str(classification), "sample"]) == 0
    review = (fake["cache"] / "review.md").read_text(encoding="utf-8")
    assert "fake:pkg/mod.py:5" in review and ">    5          p.data.add_" in review
    with (fake["cache"] / "review-template.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["line"] for row in rows] == ["5", "6", "10"]
    assert all(row["verdict"] == "" for row in rows)


def test_unknown_verdicts_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    _write_classification(path, [{"corpus": "c", "path": "p.py", "line": 1, "code": "TCL001", "line_hash": "x", "occurrence": 0, "verdict": "maybe", "note": ""}])
    with pytest.raises(SystemExit, match="unknown verdict"):
        precision.load_classification(path)


def test_the_cache_must_be_outside_the_repository() -> None:
    with pytest.raises(SystemExit, match="outside the repository"):
        precision.main(["--cache", str(REPO / "corpora"), "render"])


def test_files_that_cannot_be_checked_are_counted_apart() -> None:
    records = [
        {"path": "a.py", "line": 1, "code": "TCL001", "message": "m"},
        {"path": "bad.py", "line": 2, "code": None, "message": "cannot check: syntax error at line 2, column 1: x"},
    ]
    stderr = "bad.py: cannot check: syntax error at line 2, column 1: x\nold.py: cannot check: syntax error at line 1, column 1: y\n"
    findings, errors = precision.split_output(records, stderr)
    assert [f["path"] for f in findings] == ["a.py"]
    assert errors == ["bad.py: cannot check: syntax error at line 2, column 1: x", "old.py: cannot check: syntax error at line 1, column 1: y"]
    assert [precision.classify_error(line) for line in errors] == ["syntax", "syntax"]


def test_user_level_findings_are_sampled_apart_from_the_libraries() -> None:
    library = [{"code": "TCL006", "group": "library", "key": ("lib", "p.py", "TCL006", f"{i:04d}", 0)} for i in range(300)]
    user = [{"code": "TCL006", "group": "user", "key": ("usr", "p.py", "TCL006", f"{i:04d}", 0)} for i in range(300)]
    alone = precision.sample_findings(library)
    both = precision.sample_findings(library + user)
    assert [f for f in both if f["group"] == "library"] == alone  # adding user code keeps the libraries' sample
    assert sum(1 for f in both if f["group"] == "user") == precision.SAMPLE_SIZES["user"]


def test_render_shows_user_level_corpora_and_before_after(fake: dict) -> None:
    record = dict(fake["record"], corpus="scripts", group="user", version="abcdef123456", source="github.com/o/scripts")
    record["baseline"] = {"linter": "142c15f", "rules": record["rules"], "counts": {"TCL001": 1}, "cannot_check": 0, "seconds": 0.1}
    (fake["cache"] / "results" / "scripts.json").write_text(json.dumps(record), encoding="utf-8")
    output = fake["tmp"] / "precision.md"
    assert precision.main(["--cache", str(fake["cache"]), "--classification", str(fake["tmp"] / "none.csv"), "render", "--output", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    assert "### User-level code" in text and "| Corpus | Commit |" in text
    assert "| scripts | 1 → 3 | 1 → 3 | 0 → 1 |" in text  # TCL001 before → after, total, cannot check
