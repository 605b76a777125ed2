"""Suppression: file-level ``# torchcopy-lint: noqa``, unknown codes, and TCL100 (unused noqa codes)
through the command line, plus the comment rewriting TCL100's fix does."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_main
from torchcopy_lint.engine import lint_source
from torchcopy_lint.noqa import exempt_prefixes, unknown_codes, without_codes
from torchcopy_lint.registry import all_rules

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
LEGACY = "import torch\nx = torch.Tensor(3)\n"  # TCL006


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_main(capsys, "-j", "1", *args)


def codes(out: str) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in out.splitlines() if ": TCL" in line]


# -- file-level exemption ------------------------------------------------------------------


def test_file_level_noqa_exempts_the_whole_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a.py").write_text('"""Doc."""\n# torchcopy-lint: noqa\n' + BAD + LEGACY, encoding="utf-8")
    assert run(capsys, "--no-cache", "a.py") == (0, "All checks passed!\n", "")


def test_file_level_noqa_with_codes_exempts_those_rules(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a.py").write_text("#  TORCHCOPY-LINT:noqa: TCL001\n" + BAD + LEGACY, encoding="utf-8")
    (project / "b.py").write_text("# torchcopy-lint: noqa: TCL0, TCL101\n" + BAD + LEGACY, encoding="utf-8")
    code, out, _ = run(capsys, "--no-cache", "--extend-select", "TCL101", "a.py", "b.py")
    assert code == 1
    assert codes(out) == ["TCL006"]  # a.py: only TCL001 exempt; b.py: everything it names


@pytest.mark.parametrize(
    "line",
    [
        "x = 1  # torchcopy-lint: noqa",  # not on its own line
        "# torchcopy-lint: noqa because of reasons",  # not a directive
        '"""\n# torchcopy-lint: noqa: TCL999x\n"""',
        "# torchcopy-lint: noqaTCL001",
    ],
)
def test_what_is_not_a_file_level_noqa(line: str) -> None:
    assert exempt_prefixes(line + "\n" + BAD) == ()


def test_file_level_noqa_is_applied_by_fix_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a.py").write_text("# torchcopy-lint: noqa: TCL001\n" + BAD, encoding="utf-8")
    code, _out, _ = run(capsys, "--no-cache", "--fix", "a.py")
    assert code == 0
    assert (project / "a.py").read_text(encoding="utf-8") == "# torchcopy-lint: noqa: TCL001\n" + BAD


# -- unknown codes ---------------------------------------------------------------------------


def test_unknown_codes_are_warned_about_on_every_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a.py").write_text(BAD.replace("add_(1)", "add_(1)  # noqa: TCL999, E501, TCL0") + "y = 2  # noqa:TCL2\n# torchcopy-lint: noqa: TCL42\n", encoding="utf-8")
    expected = [
        "a.py:3: warning: unknown rule code TCL999 in a noqa comment (see `torchcopy-lint rules`)",
        "a.py:4: warning: unknown rule code TCL2 in a noqa comment (see `torchcopy-lint rules`)",
        "a.py:5: warning: unknown rule code TCL42 in a noqa comment (see `torchcopy-lint rules`)",
    ]
    for _ in range(2):  # the second run would come from the cache: the warnings must not vanish
        code, out, err = run(capsys, "a.py")
        assert code == 0 and out == "All checks passed!\n"  # TCL0 suppressed the finding
        assert err.splitlines() == expected


def test_known_codes_prefixes_and_other_tools_are_not_warned_about() -> None:
    text = "x = 1  # noqa: TCL0, TCL1, TCL001, E501, B950, TCL000\n"
    assert unknown_codes(text, all_rules()) == []


# -- TCL100 ----------------------------------------------------------------------------------


def test_tcl100_reports_and_fixes_unused_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = (
        "import torch\n"
        "for p in model.parameters():\n"
        "    p.data.add_(1)  # noqa: TCL001\n"
        "    q = p + 1  # noqa: TCL001, E501\n"
        "    r = q  # noqa: TCL004  # keep this note\n"
        "    s = 'not a comment: # noqa: TCL001'\n"
    )
    (project / "a.py").write_text(source, encoding="utf-8")
    code, out, _ = run(capsys, "--no-cache", "--extend-select", "TCL100", "a.py")
    assert code == 1
    assert [line.split(": TCL100 ")[0] for line in out.splitlines() if "TCL100" in line] == ["a.py:4:16", "a.py:5:12"]
    assert "a.py:4:16: TCL100 `# noqa` code TCL001 suppresses nothing: no such finding on this line" in out
    code, out, _ = run(capsys, "--no-cache", "--extend-select", "TCL100", "--fix", "a.py")
    assert code == 0, out
    assert (project / "a.py").read_text(encoding="utf-8") == source.replace("  # noqa: TCL001, E501", "  # noqa: E501").replace("# noqa: TCL004  # keep this note", "# keep this note")
    assert run(capsys, "--no-cache", "--extend-select", "TCL100", "a.py")[0] == 0


def test_tcl100_counts_rules_that_are_not_enabled(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A noqa kept for a stricter configuration (here opt-in TCL101) is in use."""
    (project / "a.py").write_text("import torch\n\ndef f(x: torch.Tensor):\n    return x.data  # noqa: TCL101\n", encoding="utf-8")
    assert run(capsys, "--no-cache", "--select", "TCL100", "a.py")[0] == 0
    assert lint_source("import torch\n\ndef f(x: torch.Tensor):\n    return x  # noqa: TCL101\n", "a.py", {"TCL100"})[0].code == "TCL100"


def test_tcl100_is_off_by_default(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a.py").write_text("x = 1  # noqa: TCL001\n", encoding="utf-8")
    assert run(capsys, "--no-cache", "a.py")[0] == 0
    assert run(capsys, "--no-cache", "--select", "ALL", "a.py")[0] == 1


def test_tcl100_on_a_file_with_a_file_level_exemption() -> None:
    text = "# torchcopy-lint: noqa: TCL100\nx = 1  # noqa: TCL001\n"
    assert lint_source(text, "a.py", {"TCL100"}) == []


@pytest.mark.parametrize(
    ("comment", "unused", "expected"),
    [
        ("# noqa: TCL001", {"TCL001"}, ""),
        ("# noqa: TCL001, E501", {"TCL001"}, "# noqa: E501"),
        ("# noqa:TCL001,TCL004,E501", {"TCL001", "TCL004"}, "# noqa:E501"),
        ("# noqa: TCL001 TCL004", {"TCL004"}, "# noqa: TCL001"),
        ("# noqa: TCL001  # why", {"TCL001"}, "# why"),
        ("# noqa: TCL001 kept by hand", {"TCL001"}, "# kept by hand"),
        ("# type: ignore  # noqa: TCL001", {"TCL001"}, "# type: ignore"),
        ("# NOQA: tcl001, E501", {"TCL001"}, "# NOQA: E501"),
        ("# noqa", {"TCL001"}, "# noqa"),
    ],
)
def test_without_codes(comment: str, unused: set[str], expected: str) -> None:
    assert without_codes(comment, unused) == expected
