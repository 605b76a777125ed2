"""FileRun: one pipeline per file (decode -> Python's syntax check -> pre-filter -> one parse -> one walk)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON, cli_env
from torchcopy_lint import engine
from torchcopy_lint.engine import CannotCheck, FileRun, lint_source
from torchcopy_lint.fixes.apply import fix_bytes

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"


def reason(source: str, codes: tuple[str, ...] = ("TCL001",)) -> tuple[str, int | None, int | None]:
    with pytest.raises(CannotCheck) as caught:
        FileRun.from_bytes(source.encode(), "f.py", codes).findings()
    return caught.value.reason, caught.value.line, caught.value.column


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(:\n", ("syntax error at line 1, column 7: invalid syntax", 1, 7)),  # no trigger: LibCST never runs
        ("x = 'abc\n", ("syntax error at line 1, column 5: unterminated string literal (detected at line 1)", 1, 5)),
        ("import torch\nx = (1,\np.data.add_(1)\n", ("syntax error at line 2, column 5: '(' was never closed", 2, 5)),
        ("import torch\nif x:\np.data.add_(1)\n", ("syntax error at line 3, column 1: expected an indented block after 'if' statement on line 2", 3, 1)),
    ],
    ids=["untriggered", "tokenizer", "unclosed", "indentation"],
)
def test_syntax_errors_are_python_s_own_at_python_s_position(source: str, expected: tuple[str, int, int]) -> None:
    assert reason(source) == expected


@pytest.mark.parametrize("body", ["def f(w):\n    return* w.data\n", "def f(x):\n    yield* x.data\n", "for x in*y.data:\n    pass\n"])
def test_valid_python_libcst_would_not_validate_is_linted(body: str) -> None:
    """Valid Python that LibCST's node validation rejects (``return*x``: it wants a space)
    was a CSTValidationError (issue 9, item 7), then a "cannot check" line. The parse skips
    that validation (issue 10): Python's parser accepted the text, so it is linted."""
    source = "import torch\n\n\ndef g(w):\n    w.data.add_(1)\n\n\n" + body
    findings = lint_source(source, "f.py", {"TCL001"})
    assert [(finding.line, finding.code) for finding in findings] == [(5, "TCL001")]


def test_the_unvalidated_parse_is_the_validated_parse() -> None:
    """Skipping LibCST's per-node validation changes no tree: same nodes, same code, for
    every catalogue block and this package's source; and validation is back afterwards."""
    import libcst

    from torchcopy_lint.catalogue import load_catalogue
    from torchcopy_lint.source import parse_cst

    texts = [example.source for spec in load_catalogue().values() for example in spec.examples]
    texts += [path.read_text(encoding="utf-8") for path in sorted((Path(engine.__file__).parent).rglob("*.py"))[::3]]
    for text in texts:
        fast, slow = parse_cst(text), libcst.parse_module(text)
        assert fast.code == text and fast.deep_equals(slow)
    with pytest.raises(libcst.CSTValidationError):
        libcst.Return(value=libcst.Name("x"), whitespace_after_return=libcst.SimpleWhitespace(""))


def test_syntax_newer_than_this_python_is_still_linted() -> None:
    """`except A, B:` is Python 3.14 syntax (PEP 758) that LibCST parses: lint it, never report it broken."""
    source = "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n" + BAD
    run = FileRun.from_bytes(source.encode(), "f.py", {"TCL001"})
    assert [(f.line, f.code) for f in run.findings()] == [(7, "TCL001")]
    older = sys.version_info < (3, 14)
    assert run.newer_syntax is older and (run.tree is None) is older


def test_the_ast_tree_is_kept_and_python_parses_each_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = engine.python_ast
    monkeypatch.setattr(engine, "python_ast", lambda text, path: calls.append(path) or real(text, path))
    run = FileRun.from_bytes(BAD.encode(), "f.py", {"TCL001"})
    assert [f.line for f in run.findings()] == [3]
    assert isinstance(run.tree, ast.Module)
    run.findings(apply_noqa=False)
    assert calls == ["f.py"]


def test_a_tree_handed_in_is_not_compiled_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "python_ast", lambda text, path: pytest.fail("compiled twice"))
    assert [f.line for f in lint_source(BAD, "f.py", {"TCL001"}, tree=ast.parse(BAD))] == [3]


def test_located_pairs_each_finding_with_its_fix() -> None:
    run = FileRun.from_text(BAD + "q.data.zero_()  # noqa\n", "f.py", {"TCL001"})
    pairs = run.located()
    assert [(finding.line, raw.fix is not None) for finding, raw in pairs] == [(3, True)]
    assert [finding.line for finding, _ in run.located(apply_noqa=False)] == [3, 4]
    assert [raw.code for raw in run.fixable(unsafe=True)] == ["TCL001"]  # the noqa line is not fixed


def test_a_file_without_triggers_is_never_parsed_by_libcst(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "parse_cst", lambda source: pytest.fail("parsed"))
    assert FileRun.from_bytes(b"x = 1\n", "f.py", {"TCL001"}).findings() == []


def test_the_fixer_runs_on_the_same_pipeline() -> None:
    outcome = fix_bytes(BAD.encode(), "f.py", {"TCL001"})
    assert outcome.fixed_count == 1 and b"with torch.no_grad():" in outcome.fixed
    with pytest.raises(CannotCheck, match="syntax error at line 1, column 7"):
        fix_bytes(b"def f(:\n", "f.py", {"TCL001"})


@pytest.mark.parametrize("operator", ["and", "or"])
def test_a_boolean_chain_that_crashes_libcst_is_refused(tmp_path: Path, operator: str) -> None:
    """LibCST nests each operand (its native parser segfaults at ~8,000); Python accepts the flat chain."""
    (tmp_path / "chain.py").write_text("import torch\nx = " + f" {operator} ".join(["a"] * 20_000) + "\n" + BAD, encoding="utf-8")
    (tmp_path / "ok.py").write_text(BAD, encoding="utf-8")
    result = subprocess.run(
        [PYTHON, "-m", "torchcopy_lint", "--no-cache", "-q", "-j", "1", "--select", "TCL001", "chain.py", "ok.py"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == ["chain.py: cannot check: too deeply nested to parse (a chain of 20000 and/or operands; the limit is 2000)"]
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["ok.py"]
