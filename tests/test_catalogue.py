"""Every rule's catalogue file drives its own tests: flagged lines, fixed and ok forms."""

from __future__ import annotations

import re

import pytest

from torchcopy_lint.catalogue import EXAMPLE_KINDS, REQUIRED_SECTIONS, load_catalogue
from torchcopy_lint.engine import lint_source
from torchcopy_lint.registry import all_rules, consistency_problems

SPECS = load_catalogue()
CASES = [(code, index, example) for code, spec in SPECS.items() for index, example in enumerate(spec.examples)]


def _id(case: tuple) -> str:
    code, index, example = case
    return f"{code}-{example.kind}-{index}"


def test_every_spec_has_a_checker_and_every_checker_a_spec() -> None:
    assert consistency_problems() == []


@pytest.mark.parametrize("code", sorted(SPECS))
def test_spec_is_complete(code: str) -> None:
    spec = SPECS[code]
    for section in REQUIRED_SECTIONS:
        assert section in spec.sections, f"{spec.path}: missing section '## {section}'"
    kinds = ("flagged", "fixed", "claim", "claim-fixed") if spec.has_claim else ("flagged", "fixed")
    for kind in kinds:
        assert spec.examples_of(kind), f"{spec.path}: needs at least one 'python {kind}' block"
    assert re.fullmatch(r"TCL\d{3}", spec.code)
    assert spec.default == spec.code.startswith("TCL0"), "TCL0xx rules are on by default, TCL1xx opt-in"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_example_matches_markers(case: tuple) -> None:
    """flagged/claim blocks: exactly the marked lines; fixed/ok/claim-fixed: nothing."""
    code, _index, example = case
    assert example.kind in EXAMPLE_KINDS
    found = sorted({f.line for f in lint_source(example.source, f"{code}-{example.kind}.py", {code})})
    expected = example.marked_lines(code) if example.kind in ("flagged", "claim") else []
    if example.kind in ("flagged", "claim"):
        assert expected, f"{code} {example.kind} block has no '# {code}' marker"
    assert found == expected, f"{code} {example.kind} block (rules file line {example.line})"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_examples_are_clean_for_other_default_rules(case: tuple) -> None:
    """A rule's examples must not trip other rules except where marked."""
    code, _index, example = case
    others = {other for other, rule in all_rules().items() if other != code and rule.spec.default}
    findings = lint_source(example.source, "example.py", others)
    unexpected = [(f.line, f.code) for f in findings if f.line not in example.marked_lines(f.code)]
    assert unexpected == []


# -- the message contract ------------------------------------------------------------------
FLAGGED = [(code, index, example) for code, index, example in CASES if example.kind in ("flagged", "claim")]


@pytest.mark.parametrize("case", FLAGGED, ids=[_id(c) for c in FLAGGED])
def test_messages_have_every_placeholder_filled(case: tuple) -> None:
    """No ``{name}`` left in a message (quoted code may hold braces: ``{**sd}``, ``{k: v ...}``)."""
    code, _index, example = case
    for finding in lint_source(example.source, "example.py", {code}):
        assert not re.search(r"\{[A-Za-z_][A-Za-z0-9_]*\}", finding.message), finding.message


def test_report_rejects_missing_and_unknown_placeholders() -> None:
    from torchcopy_lint.catalogue import CatalogueError

    spec = SPECS["TCL004"]
    details = {name: "x" for name in spec.placeholders}
    assert "{" not in spec.format_message(details)
    with pytest.raises(CatalogueError, match="missing"):
        spec.format_message({name: "x" for name in sorted(spec.placeholders)[1:]})
    with pytest.raises(CatalogueError, match="unknown"):
        spec.format_message({**details, "tagret": "x"})


def test_a_malformed_message_template_is_refused_when_the_catalogue_loads(tmp_path) -> None:
    from torchcopy_lint.catalogue import CatalogueError, parse_rule_file

    source = SPECS["TCL004"].path.read_text(encoding="utf-8")
    broken = tmp_path / SPECS["TCL004"].path.name
    broken.write_text(source.replace("message: `{snapshot}`", "message: `{snapshot!r:>3}`", 1), encoding="utf-8")
    with pytest.raises(CatalogueError, match="placeholder"):
        parse_rule_file(broken)


def test_an_unknown_example_tag_is_refused_when_the_examples_are_read(tmp_path) -> None:
    from torchcopy_lint.catalogue import CatalogueError, parse_rule_file

    source = SPECS["TCL004"].path.read_text(encoding="utf-8")
    broken = tmp_path / SPECS["TCL004"].path.name
    broken.write_text(source.replace("```python ok", "```python okay", 1), encoding="utf-8")
    spec = parse_rule_file(broken)  # the front matter is sound: a lint run needs no more
    with pytest.raises(CatalogueError, match="unknown example tag 'python okay'"):
        spec.examples
