"""tools/seed_claims.py: every claim of the seed articles runs with real torch, and docs/seed-claims.md is current."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import REPO

_spec = importlib.util.spec_from_file_location("seed_claims_tool", REPO / "tools" / "seed_claims.py")
assert _spec is not None and _spec.loader is not None
seeds = importlib.util.module_from_spec(_spec)
sys.modules["seed_claims_tool"] = seeds
_spec.loader.exec_module(seeds)

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the seed claims run with torch")
SEEDS_DIR = REPO.parent / "shared" / "seeds"


def test_catalogue_parses() -> None:
    claims = seeds.load()
    assert len(claims) >= 30
    assert [claim.id for claim in claims] == [f"S{number:02d}" for number in range(1, len(claims) + 1)]
    for claim in claims:
        assert claim.articles and claim.says and "holds =" in claim.program and "evidence =" in claim.program, claim.id
    if SEEDS_DIR.is_dir():  # the articles live beside the checkout, not in it
        names = {path.name for path in SEEDS_DIR.iterdir()}
        assert {article for claim in claims for article in claim.articles} <= names
        assert names <= {article for claim in claims for article in claim.articles}, "every seed article has its claims listed"


def test_a_malformed_section_is_refused(tmp_path) -> None:
    bad = tmp_path / "seeds.md"
    bad.write_text("## S01: something\n- article: x.txt\n\n```python seed\nholds = True\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="S01"):
        seeds.load(bad)


@pytest.fixture(scope="module")
def fresh() -> tuple[list, dict, dict]:
    claims = seeds.load()
    environment, runs = seeds.run(claims)
    return claims, environment, runs


@needs_torch
def test_every_seed_claim_runs(fresh: tuple[list, dict, dict]) -> None:
    claims, _environment, runs = fresh
    failed = {claim.id: seeds.verdict(runs[claim.id]) for claim in claims if seeds.verdict(runs[claim.id]) not in ("true", "false")}
    assert failed == {}
    assert all(runs[claim.id].evidence for claim in claims)


@needs_torch
def test_docs_seed_claims_is_up_to_date(fresh: tuple[list, dict, dict]) -> None:
    claims, environment, runs = fresh
    page = seeds.render(claims, environment, runs)
    committed = seeds.DOC.read_text(encoding="utf-8")
    assert seeds.table(committed) == seeds.table(page), "regenerate it: python tools/seed_claims.py --write"
    assert len(seeds.table(committed)) == len(claims)
    if environment["torch"] == committed.split("Torch ", 1)[1].split(",", 1)[0]:
        assert committed == page, "regenerate it: python tools/seed_claims.py --write"
    for claim in claims:
        assert claim.program.rstrip("\n") in committed
