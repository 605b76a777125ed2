"""Autofix: each rule's `autofixed` block, idempotence, file fidelity, and failure safety."""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from conftest import REPO, cli_env
from torchcopy_lint.catalogue import load_catalogue
from torchcopy_lint.fixes.apply import FixFailed, fix_bytes
from torchcopy_lint.fixes.model import Fix

SPECS = load_catalogue()
FIXABLE = [code for code, spec in SPECS.items() if spec.fix != "none"]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torchcopy_lint", "--no-cache", *args], capture_output=True, text=True, env=cli_env(), cwd=cwd)


@pytest.mark.parametrize("code", FIXABLE)
def test_autofixed_block_is_what_fix_produces(code: str) -> None:
    spec = SPECS[code]
    (expected,) = spec.examples_of("autofixed")
    flagged = spec.examples_of("flagged")[0]
    source = re.sub(r"[ \t]*#\s*TCL\d{3}\b[^\n]*", "", flagged.source)  # markers are not code
    outcome = fix_bytes(source.encode(), "example.py", {code}, unsafe=True)
    assert outcome.fixed.decode() == expected.source
    assert outcome.fixed_count == len(flagged.marked_lines(code))


@pytest.mark.parametrize("code", FIXABLE)
def test_fix_is_idempotent(code: str) -> None:
    (fixed_block,) = SPECS[code].examples_of("autofixed")
    again = fix_bytes(fixed_block.source.encode(), "example.py", {code}, unsafe=True)
    assert not again.changed and again.fixed_count == 0


@pytest.mark.parametrize("code", sorted(SPECS))
def test_rules_without_fixes_offer_none(code: str) -> None:
    spec = SPECS[code]
    if spec.fix != "none":
        assert spec.examples_of("autofixed"), f"{code} declares fix: {spec.fix} but has no 'python autofixed' block"
        assert "Fix safety" in spec.sections
        return
    for example in spec.examples_of("flagged"):
        assert not fix_bytes(example.source.encode(), "example.py", {code}, unsafe=True).changed


def test_crlf_encoding_permissions_and_comments_survive(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\r\n# caf\xe9\r\nimport torch\r\n\r\nfor p in model.parameters():  # loop\r\n    p.data.zero_()  # reset\r\n"
    target = tmp_path / "legacy.py"
    target.write_bytes(source.encode("latin-1"))
    target.chmod(0o640)
    result = run_cli("--fix", "--select", "TCL001", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
    data = target.read_bytes()
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    text = data.decode("latin-1")
    assert "# caf\xe9" in text and "# loop" in text and "p.zero_()  # reset" in text
    assert "with torch.no_grad():" in text
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["legacy.py"]  # no temporary file left behind


def test_no_trailing_newline_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("import torch\nfor p in m.parameters():\n    p.data.zero_()")
    assert run_cli("--fix", str(target)).returncode == 0
    assert target.read_text() == "import torch\nfor p in m.parameters():\n    with torch.no_grad():\n        p.zero_()"


def test_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    original = "import torch\nfor p in m.parameters():\n    p.data.zero_()\n"
    target.write_text(original)
    result = run_cli("--diff", str(target))
    assert result.returncode == 1
    assert "+        p.zero_()" in result.stdout and "-    p.data.zero_()" in result.stdout
    assert target.read_text() == original
    assert run_cli("--diff", str(tmp_path / "missing.py")).returncode == 2


def test_fix_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("import torch\nfor p in m.parameters():\n    p.data.zero_()\n    p.data[0] = 1\n")
    first = run_cli("--fix", str(target))
    assert first.returncode == 0 and "Fixed 2 findings" in first.stdout
    after_first = target.read_bytes()
    second = run_cli("--fix", str(target))
    assert second.returncode == 0 and "Fixed 0 findings" in second.stdout
    assert target.read_bytes() == after_first


def test_unfixable_findings_remain_and_exit_1(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("import torch\nfor p in m.parameters():\n    if p.grad is None: p.data.zero_()\n")
    result = run_cli("--fix", str(target))
    assert result.returncode == 1 and "TCL001" in result.stdout and "1 remaining" in result.stdout
    assert run_cli("--fix-only", str(target)).returncode == 0


def test_noqa_lines_are_not_fixed(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    original = "import torch\nfor p in m.parameters():\n    p.data.zero_()  # noqa: TCL001\n"
    target.write_text(original)
    assert run_cli("--fix", str(target)).returncode == 0
    assert target.read_text() == original


def test_a_fix_that_breaks_the_code_leaves_the_file_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checker whose fix produces code that does not compile: the post-fix check refuses it."""
    from torchcopy_lint.checkers import tcl001_data_mutation as module

    def broken_fix(self, node, fix=None, **details):  # type: ignore[no-untyped-def]
        bad = cst.Expr(value=cst.Name("return_outside_function_is_fine_but_this_is_not"))
        broken = Fix("safe", ((self.ctx.parents[-2], cst.SimpleStatementLine(body=[cst.Return(value=bad.value)])),))
        self.ctx.report(node, self.code, self.spec.message, broken)

    monkeypatch.setattr(module.DataMutation, "report", broken_fix)
    source = b"import torch\np = torch.ones(2)\np.data.zero_()\n"
    with pytest.raises(FixFailed):
        fix_bytes(source, "broken.py", {"TCL001"})


def test_fix_over_torch_source_still_compiles(tmp_path: Path) -> None:
    """Property: --fix --unsafe-fixes over real code (torch's own source) leaves every file compilable."""
    torch = pytest.importorskip("torch")
    source_root = Path(torch.__file__).parent
    # A fixed, representative slice of torch (modules, optimizers, quantization, DDP hooks, the
    # nn test helpers) keeps this under a minute on two cores; all of torch takes several.
    roots = [source_root / "nn", source_root / "optim", source_root / "ao", source_root / "distributed" / "algorithms"]
    candidates = [path for root in roots for path in sorted(root.rglob("*.py")) if b".data" in path.read_bytes() or b"clone()" in path.read_bytes()]
    copies = []
    for path in candidates:
        target = tmp_path / path.relative_to(source_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        copies.append(target)
    before = {path: path.read_bytes() for path in copies}
    result = run_cli("--fix", "--unsafe-fixes", "--select", "ALL", "-q", str(tmp_path))
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "cannot check" not in result.stderr, result.stderr[-2000:]
    changed = [path for path in copies if path.read_bytes() != before[path]]
    assert changed, "expected torch's .data writes to be fixed somewhere"
    for path in changed:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    # and a second run changes nothing more
    after_first = {path: path.read_bytes() for path in changed}
    again = run_cli("--fix", "--unsafe-fixes", "--select", "ALL", str(tmp_path))
    assert "Fixed 0 findings" in again.stdout, again.stdout[-500:]
    assert all(path.read_bytes() == after_first[path] for path in changed)


# -- property: generated programs ------------------------------------------------

def _snippets() -> list[str]:
    """Every flagged and claim block of the catalogue, markers removed: real surface forms."""
    blocks = []
    for spec in SPECS.values():
        for example in spec.examples_of("flagged") + spec.examples_of("claim"):
            blocks.append(re.sub(r"[ \t]*#\s*TCL\d{3}\b[^\n]*", "", example.source))
    return blocks


SNIPPETS = _snippets()


def _indent(block: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in block.splitlines(keepends=True))


def test_fix_on_generated_programs_compiles_and_settles() -> None:
    """Property: any mix of the catalogue's hazards, nested in functions, loops, ``with``
    blocks and ``no_grad`` regions, with LF or CRLF, fixes into code that compiles, has no
    fixable finding left, and does not change on a second fix."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    wrappers = st.sampled_from(["", "def outer(model, x, opt):\n", "for step in range(3):\n", "with torch.no_grad():\n", "with open('f') as handle:\n", "class Trainer:\n    def run(self, model):\n"])

    @hypothesis.settings(max_examples=40, deadline=None, derandomize=True, database=None)
    @hypothesis.given(parts=st.lists(st.tuples(st.sampled_from(SNIPPETS), wrappers), min_size=1, max_size=4), crlf=st.booleans())
    def check(parts: list[tuple[str, str]], crlf: bool) -> None:
        chunks = ["import torch\n"]
        for block, wrapper in parts:
            body = block if block.endswith("\n") else block + "\n"
            if wrapper:
                depth = "    " * wrapper.count(":\n")
                chunks.append(wrapper + _indent(body, depth))
            else:
                chunks.append(body)
        source = "\n".join(chunks)
        try:
            compile(source, "generated.py", "exec")
        except SyntaxError:
            hypothesis.assume(False)  # e.g. a future import no longer first
        if crlf:
            source = source.replace("\n", "\r\n")
        codes = set(SPECS)
        outcome = fix_bytes(source.encode(), "generated.py", codes, unsafe=True)
        compile(outcome.fixed, "generated.py", "exec", dont_inherit=True)
        if crlf:
            assert b"\n" not in outcome.fixed.replace(b"\r\n", b"")
        again = fix_bytes(outcome.fixed, "generated.py", codes, unsafe=True)
        assert not again.changed
        fixed_counts.append(outcome.fixed_count)

    fixed_counts: list[int] = []
    check()
    assert sum(1 for count in fixed_counts if count) >= 10, fixed_counts  # the property was exercised
