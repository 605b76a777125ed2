"""The ``torchcopy-lint`` command: exit codes, formats, selection, noqa, config, discovery, cache.

Most tests call :func:`torchcopy_lint.cli.main` in-process (fast); the ones about
stdin, the console entry and argument errors run it as a subprocess. TCL001 is
the rule under test; other rules may fire on the same snippets, so assertions
that count findings select TCL001.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON, cli_env
from torchcopy_lint import parallel
from torchcopy_lint.cli import main
from torchcopy_lint.registry import all_rules
from torchcopy_lint.selection import enabled_codes

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
GOOD = "import torch\nwith torch.no_grad():\n    for p in model.parameters():\n        p.add_(1)\n"
MESSAGE = 'in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): p.add_(...)"'
LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<code>TCL\d{3}) (?P<message>.+)$")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["-j", "1", *args]) if not args or args[0] not in ("rules", "explain", "verify") else main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def finding_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if LINE.match(line)]


def subprocess_cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "torchcopy_lint", *args],
        cwd=cwd,
        env=cli_env(),
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- exit status and output ------------------------------------------------------


def test_clean_exits_0(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "good.py", GOOD)
    code, out, err = run(capsys, "--no-cache", "good.py")
    assert (code, out, err) == (0, "All checks passed!\n", "")


def test_findings_exit_1_with_path_line_col_code_message(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", "--select", "TCL001", "bad.py")
    assert code == 1
    assert err == ""
    assert out == f"bad.py:3:5: TCL001 {MESSAGE}\nFound 1 finding.\n[*] 1 fixable with --fix.\n"


def test_exit_zero(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--no-cache", "--exit-zero", "bad.py")
    assert code == 0 and "TCL001" in out


@pytest.mark.parametrize(
    "args",
    [
        ["--select", "NOPE"],
        ["--ignore", "TCL9"],
        ["--extend-select", "XYZ001"],
    ],
)
def test_unknown_selector_exits_2_with_one_line(project: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", *args, "bad.py")
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and "unknown rule selector" in err


def test_bad_arguments_exit_2_without_traceback(project: Path) -> None:
    result = subprocess_cli("--format", "xml", ".", cwd=project)
    assert result.returncode == 2
    assert "invalid choice" in result.stderr and "Traceback" not in result.stderr
    result = subprocess_cli("--jobs", "0", ".", cwd=project)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_missing_path_exits_2_and_other_files_are_checked(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", "--select", "TCL001", "missing.py", "bad.py")
    assert code == 2
    assert finding_lines(out) == [f"bad.py:3:5: TCL001 {MESSAGE}"]
    assert err == "missing.py: cannot check: no such file or directory\n"
    assert out.endswith("Found 1 finding. 1 file could not be checked.\n[*] 1 fixable with --fix.\n")


def test_findings_are_sorted_by_path_line_column(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    two = "import torch\nfor p in ps:\n    p.data.add_(1)\n    q.data.mul_(2); r.data.zero_()\n"
    for name in ("b.py", "a.py", "sub/c.py", "a_b.py"):
        write(project / name, two)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "sub", "b.py", ".")
    assert code == 1
    keys = [(m["path"], int(m["line"]), int(m["column"])) for m in map(LINE.match, finding_lines(out))]
    assert keys == sorted(keys)
    assert [key[1:] for key in keys if key[0] == "a.py"] == [(3, 5), (4, 5), (4, 21)]
    assert {key[0] for key in keys} == {"a.py", "a_b.py", "b.py", "sub/c.py"}  # each file once
    assert len(keys) == 12


def test_multi_line_code_in_a_message_stays_on_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "m.py", "import torch\n(a +\n   b).data.add_(1)\n")
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "m.py")
    assert code == 1
    assert finding_lines(out) == ['m.py:2:1: TCL001 in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): (a + b).add_(...)"']


def test_json_format(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", "--select", "TCL001", "--format", "json", "bad.py")
    assert code == 1 and err == ""
    data = json.loads(out)  # nothing but the JSON document (no summary line)
    assert data == [
        {
            "path": "bad.py",
            "line": 3,
            "column": 5,
            "end_line": 3,
            "end_column": 19,
            "code": "TCL001",
            "name": "data-mutation",
            "message": MESSAGE,
            "fix": "safe",
            "cell": None,
            "url": "https://github.com/torchcopy-lint/torchcopy-lint/blob/main/rules/TCL001-data-mutation.md",
        }
    ]


def test_json_format_clean_is_an_empty_list(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "good.py", GOOD)
    code, out, _ = run(capsys, "--no-cache", "--format", "json", "good.py")
    assert code == 0 and json.loads(out) == []


def test_github_format_escapes_properties_and_data(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "we%ird,na:me.py"
    write(project / name, "import torch\n(a % b).data.add_(1)\n")
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "--format", "github", name)
    assert code == 1
    assert out.splitlines() == [
        "::warning file=we%25ird%2Cna%3Ame.py,line=2,col=1,endLine=2,endColumn=21,title=TCL001 data-mutation::"
        'TCL001 in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): (a %25 b).add_(...)"'
    ]


def test_github_format_escapes_newlines_in_the_message() -> None:
    from torchcopy_lint.diagnostics import Finding
    from torchcopy_lint.output import Report, render

    finding = Finding("a,b:c.py", 1, 1, 2, 3, "TCL001", "data-mutation", "50% done\r\nnext: a, b")
    assert render("github", Report([finding])) == (
        "::warning file=a%2Cb%3Ac.py,line=1,col=1,endLine=2,endColumn=3,title=TCL001 data-mutation::TCL001 50%25 done%0D%0Anext: a, b\n"
    )


def test_statistics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "a.py", BAD)
    write(project / "b.py", BAD + "q.data.zero_()\n")
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "--statistics", ".")
    assert code == 1
    assert out.splitlines() == ["    3  TCL001  data-mutation", "Found 3 findings.", "[*] 3 fixable with --fix."]


def test_quiet_prints_findings_only(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    write(project / "good.py", GOOD)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "bad.py")
    assert (code, out) == (1, f"bad.py:3:5: TCL001 {MESSAGE}\n")
    code, out, _ = run(capsys, "--no-cache", "--quiet", "good.py")
    assert (code, out) == (0, "")


# -- selection ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "reported"),
    [
        ([], True),
        (["--select", "TCL001"], True),
        (["--select", "TCL0"], True),
        (["--select", "tcl001"], True),  # codes are case-insensitive on the command line
        (["--select", "ALL"], True),
        (["--select", "TCL001,TCL0"], True),
        (["--ignore", "TCL001"], False),
        (["--ignore", "TCL0"], False),
        (["--ignore", "ALL"], False),
        (["--select", "ALL", "--ignore", "TCL001"], False),
        (["--select", "TCL001", "--ignore", "TCL0"], True),  # the longer prefix wins
        (["--select", "TCL0", "--ignore", "TCL001"], False),
        (["--select", "TCL00", "--ignore", "TCL00"], False),  # a tie: ignore wins
        (["--select", "TCL001", "--ignore", "TCL001"], False),
        (["--extend-select", "TCL001", "--ignore", "TCL0"], True),
        (["--ignore", "TCL0", "--extend-select", "TCL00"], True),
        (["--select", "TCL001", "--select", "TCL0", "--ignore", "TCL001"], False),
    ],
)
def test_select_ignore(project: Path, capsys: pytest.CaptureFixture[str], args: list[str], reported: bool) -> None:
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--no-cache", *args, "bad.py")
    assert ("TCL001" in out) is reported
    if not reported:
        assert "TCL001" not in out


def test_selection_semantics_with_opt_in_rules() -> None:
    """Opt-in (default off) rules run only when a selector names them; ignore wins ties."""
    defaults = {"TCL001": True, "TCL004": True, "TCL101": False, "TCL102": False}
    assert enabled_codes(defaults) == {"TCL001", "TCL004"}
    assert enabled_codes(defaults, extend_select=["TCL101"]) == {"TCL001", "TCL004", "TCL101"}
    assert enabled_codes(defaults, extend_select=["TCL1"]) == {"TCL001", "TCL004", "TCL101", "TCL102"}
    assert enabled_codes(defaults, select=["ALL"]) == set(defaults)
    assert enabled_codes(defaults, select=["TCL1"]) == {"TCL101", "TCL102"}
    assert enabled_codes(defaults, select=["ALL"], ignore=["TCL1"]) == {"TCL001", "TCL004"}
    assert enabled_codes(defaults, select=["TCL101"], ignore=["TCL1"]) == {"TCL101"}
    assert enabled_codes(defaults, select=["TCL1"], ignore=["TCL1"]) == set()
    assert enabled_codes(defaults, ignore=["ALL"], extend_select=["TCL001"]) == {"TCL001"}
    assert enabled_codes(defaults, ignore=["TCL0"]) == set()
    assert enabled_codes(defaults, ignore=["TCL004"], extend_select=["TCL0"]) == {"TCL001"}


def test_opt_in_rules_of_the_catalogue_are_off_unless_selected(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    opt_in = sorted(code for code, rule in all_rules().items() if not rule.spec.default)
    if not opt_in:
        pytest.skip("the catalogue has no opt-in rule yet")
    code = opt_in[0]
    flagged = all_rules()[code].spec.examples_of("flagged")[0].source
    write(project / "x.py", flagged)
    _, out, _ = run(capsys, "--no-cache", "x.py")
    assert code not in out
    _, out, _ = run(capsys, "--no-cache", "--extend-select", code, "x.py")
    assert code in out


# -- noqa ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("# noqa", True),
        ("# NOQA", True),
        ("#noqa:TCL001", True),
        ("# noqa: TCL001", True),
        ("# noqa: TCL001,TCL004", True),
        ("# noqa: TCL004, TCL001", True),
        ("# noqa: TCL004 TCL001", True),
        ("# noqa: TCL0", True),
        ("# noqa: TCL004", False),
        ("# noqa: E501", False),
        ("# noqa: TCL0011", False),
        ("# some comment", False),
    ],
)
def test_noqa(project: Path, capsys: pytest.CaptureFixture[str], comment: str, suppressed: bool) -> None:
    write(project / "n.py", f"import torch\np.data.add_(1)  {comment}\nq.data.add_(1)\n")
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "n.py")
    lines = finding_lines(out)
    expected = ["n.py:3:1"] if suppressed else ["n.py:2:1", "n.py:3:1"]
    assert [line.split(": TCL001")[0] for line in lines] == expected
    assert code == 1


def test_noqa_applies_to_its_own_line_only_after_form_feeds_and_odd_separators(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """str.splitlines() would split at \\f, \\x1c, \\u2028 and shift every later noqa."""
    source = 'import torch\n\x0c\ns = "a\u2028b\x1cc"\np.data.add_(1)  # noqa: TCL001\nq.data.add_(1)\n'
    write(project / "n.py", source)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "n.py")
    assert [line.split(": TCL001")[0] for line in finding_lines(out)] == ["n.py:5:1"]


def test_carriage_return_only_line_endings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "cr.py").write_bytes(BAD.replace("\n", "\r").encode())
    (project / "crlf.py").write_bytes(BAD.replace("\n", "\r\n").encode())
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "cr.py", "crlf.py")
    assert [line.split(": TCL001")[0] for line in finding_lines(out)] == ["cr.py:3:5", "crlf.py:3:5"]


# -- configuration ----------------------------------------------------------------


def configure(directory: Path, body: str) -> None:
    write(directory / "pyproject.toml", f"[project]\nname = 'x'\n\n[tool.torchcopy-lint]\n{body}\n")


def test_config_ignore(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    configure(project, 'ignore = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "bad.py")
    assert (code, out) == (0, "All checks passed!\n")


def test_config_select_and_extend_select(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    configure(project, 'select = ["TCL0"]\nignore = ["TCL00"]\nextend-select = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "bad.py")
    assert code == 1 and "TCL001" in out


def test_cli_select_wins_over_config_ignore(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ruff: the highest-priority select (the command line's) starts the resolution."""
    write(project / "bad.py", BAD)
    configure(project, 'ignore = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "bad.py")
    assert code == 1 and "TCL001" in out


def test_cli_ignore_adds_to_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    configure(project, 'select = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "--ignore", "TCL001", "bad.py")
    assert (code, out) == (0, "All checks passed!\n")
    configure(project, 'ignore = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "--extend-select", "TCL001", "bad.py")
    assert (code, out) == (0, "All checks passed!\n")  # extend-select does not beat an equal ignore


def test_isolated_ignores_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    configure(project, 'ignore = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "--isolated", "bad.py")
    assert code == 1 and "TCL001" in out


def test_explicit_config_file(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    other = tmp_path / "elsewhere"
    configure(other, 'ignore = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "--config", str(other / "pyproject.toml"), "bad.py")
    assert (code, out) == (0, "All checks passed!\n")


def test_nearest_pyproject_with_our_table_is_used(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'ignore = ["TCL001"]')
    write(project / "lib" / "pyproject.toml", "[project]\nname = 'lib'\n")  # no table: skipped
    write(project / "lib" / "bad.py", BAD)
    write(project / "app" / "bad.py", BAD)
    configure(project / "app", 'select = ["TCL001"]')
    code, out, _ = run(capsys, "--no-cache", "lib")
    assert (code, out) == (0, "All checks passed!\n")
    code, out, _ = run(capsys, "--no-cache", "app")
    assert code == 1 and "app/bad.py:3:5: TCL001" in out


def test_config_exclude_and_extend_exclude(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'exclude = ["generated/*"]\nextend-exclude = ["legacy/", "skip_me.py"]')
    for name in ("generated/g.py", "legacy/deep/l.py", "skip_me.py", "src/s.py"):
        write(project / name, BAD)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", ".")
    assert code == 1
    assert [line.split(":")[0] for line in finding_lines(out)] == ["src/s.py"]
    # A file named explicitly is checked anyway, unless --force-exclude (pre-commit).
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "skip_me.py", "legacy/deep/l.py")
    assert [line.split(":")[0] for line in finding_lines(out)] == ["legacy/deep/l.py", "skip_me.py"]
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "--force-exclude", "skip_me.py", "legacy/deep/l.py", "src/s.py")
    assert [line.split(":")[0] for line in finding_lines(out)] == ["src/s.py"]


def test_cli_exclude_flags(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a/x.py", "b/y.py", "c/z.py"):
        write(project / name, BAD)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "--exclude", "a", "--extend-exclude", "b/*", ".")
    assert [line.split(":")[0] for line in finding_lines(out)] == ["c/z.py"]


def test_per_file_ignores(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'per-file-ignores = { "tests/*" = ["TCL001"], "legacy.py" = ["TCL0"] }')
    for name in ("tests/test_x.py", "legacy.py", "src/s.py"):
        write(project / name, BAD)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", ".")
    assert [line.split(":")[0] for line in finding_lines(out)] == ["src/s.py"]
    # Relative to the configuration's directory, wherever the command runs from.
    os.chdir(project / "tests")
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "test_x.py")
    assert (code, out) == (0, "")


def test_per_file_ignores_with_unknown_code_is_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'per-file-ignores = { "tests/*" = ["XX1"] }')
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", "bad.py")
    assert code == 2 and out == "" and "XX1" in err


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('selct = ["TCL001"]', "unknown option(s) in [tool.torchcopy-lint]: selct"),
        ('ignore = [1]', "ignore must be a list of strings"),
        ('per-file-ignores = ["x"]', "per-file-ignores must be a table"),
        ('select = ["NOPE"]', "unknown rule selector 'NOPE'"),
    ],
)
def test_bad_config_exits_2_with_one_clear_line(project: Path, capsys: pytest.CaptureFixture[str], body: str, needle: str) -> None:
    configure(project, body)
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", "bad.py")
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert needle in err


def test_invalid_toml_in_our_config_is_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "pyproject.toml", "[tool.torchcopy-lint\nselect = [\n")
    write(project / "bad.py", BAD)
    code, out, err = run(capsys, "--no-cache", "bad.py")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "invalid TOML" in err


def test_unknown_config_key_subprocess_has_no_traceback(project: Path) -> None:
    configure(project, "colour = true")
    write(project / "bad.py", BAD)
    result = subprocess_cli("--no-cache", "bad.py", cwd=project)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().endswith("unknown option(s) in [tool.torchcopy-lint]: colour")
    assert len(result.stderr.splitlines()) == 1


# -- stdin -------------------------------------------------------------------------


def test_stdin_with_stdin_filename(project: Path) -> None:
    result = subprocess_cli("--no-cache", "--select", "TCL001", "-", "--stdin-filename", "pkg/mod.py", cwd=project, stdin=BAD.encode())
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0] == f"pkg/mod.py:3:5: TCL001 {MESSAGE}"


def test_stdin_without_a_name_is_reported_as_dash(project: Path) -> None:
    result = subprocess_cli("--no-cache", "--select", "TCL001", "-", cwd=project, stdin=BAD.encode())
    assert result.returncode == 1
    assert result.stdout.startswith("-:3:5: TCL001 ")


def test_stdin_filename_alone_reads_stdin(project: Path) -> None:
    write(project / "other.py", BAD)  # must not be checked instead of stdin
    result = subprocess_cli("--no-cache", "--select", "TCL001", "--stdin-filename", "x.py", cwd=project, stdin=BAD.encode())
    assert result.returncode == 1
    assert [line.split(":")[0] for line in finding_lines(result.stdout)] == ["x.py"]


def test_stdin_uses_config_and_per_file_ignores_for_its_name(project: Path) -> None:
    configure(project, 'per-file-ignores = { "tests/*" = ["TCL001"] }\nextend-exclude = ["gen/"]')
    result = subprocess_cli("--no-cache", "-", "--stdin-filename", "tests/t.py", cwd=project, stdin=BAD.encode())
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n")
    result = subprocess_cli("--no-cache", "-", "--stdin-filename", "src/t.py", cwd=project, stdin=BAD.encode())
    assert result.returncode == 1
    result = subprocess_cli("--no-cache", "--force-exclude", "-", "--stdin-filename", "gen/t.py", cwd=project, stdin=BAD.encode())
    assert (result.returncode, result.stdout) == (0, "All checks passed!\n")


def test_stdin_syntax_error(project: Path) -> None:
    result = subprocess_cli("--no-cache", "-", "--stdin-filename", "s.py", cwd=project, stdin=b"import torch\nx.data.add_(1\n")
    assert result.returncode == 2
    assert result.stderr.startswith("s.py: cannot check: syntax error")
    assert "Traceback" not in result.stderr


UNFIXABLE = "    if p.grad is None: p.data.add_(1)\n"


def test_fix_of_stdin_prints_the_fixed_source_and_reports_what_remains(project: Path) -> None:
    """`--fix -` dropped stdin's findings and exited 0 (issue 9, item 6); ruff prints the fixed source."""
    result = subprocess_cli("--no-cache", "--fix", "-", cwd=project, stdin=(BAD + UNFIXABLE).encode())
    assert result.stdout == "import torch\nfor p in model.parameters():\n    with torch.no_grad():\n        p.add_(1)\n" + UNFIXABLE
    assert [line.split(": TCL")[0] for line in result.stderr.splitlines()] == ["-:5:24"]
    assert result.returncode == 1


def test_diff_of_stdin_prints_a_diff_under_the_stdin_filename(project: Path) -> None:
    result = subprocess_cli("--no-cache", "--diff", "--stdin-filename", "x.py", cwd=project, stdin=BAD.encode())
    assert result.stdout.startswith("--- x.py\n+++ x.py\n") and "+    with torch.no_grad():" in result.stdout
    assert result.returncode == 1


def test_fix_of_stdin_that_cannot_be_fixed_gives_the_source_back(project: Path) -> None:
    result = subprocess_cli("--no-cache", "--fix", "-", cwd=project, stdin=b"def f(:\n")
    assert result.stdout == "def f(:\n"  # a pipeline never loses its text
    assert result.stderr.splitlines() == ["-: cannot check: syntax error at line 1, column 7: invalid syntax"]
    assert result.returncode == 2


def test_fix_of_stdin_with_other_paths_is_refused(project: Path) -> None:
    write(project / "f.py", BAD)
    result = subprocess_cli("--no-cache", "--fix", "-", "f.py", cwd=project, stdin=BAD.encode())
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == ["torchcopy-lint: error: --fix/--diff of standard input ('-') prints the fixed source, so it cannot be combined with other paths"]
    assert (project / "f.py").read_text() == BAD


@pytest.mark.parametrize("args", [["-"], ["--fix", "-"], ["-", "f.py"]])
def test_closed_stdin_is_one_line(project: Path, args: list[str]) -> None:
    write(project / "f.py", BAD)
    result = subprocess.run(
        [PYTHON, "-m", "torchcopy_lint", "--no-cache", "-q", *args], cwd=project, env=cli_env(), stdin=None, capture_output=True, text=True, timeout=120,
        pass_fds=(), preexec_fn=lambda: os.close(0),
    )
    assert "-: cannot check: standard input is closed" in result.stderr.splitlines()
    assert "internal error" not in result.stderr and result.returncode == 2
    if "f.py" in args:
        assert result.stdout.startswith("f.py:3:5: TCL001")  # the other files are still checked


# -- rules / explain / version -------------------------------------------------------


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0
    lines = out.splitlines()
    rules = all_rules()
    assert [line.split()[0] for line in lines] == list(rules)
    for line, rule in zip(lines, rules.values()):
        assert rule.spec.name in line
        assert (" on " in line) is rule.spec.default


def test_rules_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [item["code"] for item in data] == list(all_rules())
    assert {"code", "name", "default", "fix", "summary"} <= set(data[0])


@pytest.mark.parametrize("argv", [["explain", "TCL001"], ["explain", "tcl001"], ["--explain", "TCL001"]])
def test_explain(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.startswith("TCL001 (data-mutation): on by default")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert section in out
    assert "## Test cases" not in out
    assert "---\ncode:" not in out  # no front matter


def test_explain_unknown_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explain", "TCL999"])
    _, err = capsys.readouterr()
    assert code == 2 and "unknown rule 'TCL999'" in err


def test_version_and_console_module(project: Path) -> None:
    from torchcopy_lint import __version__

    result = subprocess_cli("--version", cwd=project)
    assert result.returncode == 0
    assert result.stdout.strip() == f"torchcopy-lint {__version__}"


# -- discovery ------------------------------------------------------------------------


def test_directory_recursion_skips_vcs_venvs_build_and_caches(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skipped = [
        ".git/hooks/x.py",
        ".hg/x.py",
        "__pycache__/x.py",
        "build/lib/x.py",
        "dist/x.py",
        ".venv/lib/x.py",
        "venv/x.py",
        "my-env/lib/python3.11/site-packages/x.py",  # any folder with a pyvenv.cfg
        ".tox/py/x.py",
        "node_modules/x.py",
        "pkg.egg-info/x.py",
        "src/__pycache__/y.py",
    ]
    for name in skipped:
        write(project / name, BAD)
    write(project / "my-env" / "pyvenv.cfg", "home = /usr/bin\n")
    checked = ["main.py", "src/pkg/mod.py", "src/build_utils.py", "tests/test_a.py"]
    for name in checked:
        write(project / name, BAD)
    write(project / "notes.txt", BAD)
    write(project / "script.pyw", BAD)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q")  # default path: .
    assert code == 1
    assert [line.split(":")[0] for line in finding_lines(out)] == sorted(checked)


def test_explicit_files_are_checked_whatever_their_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "build" / "gen.py", BAD)
    write(project / "script", BAD)  # no .py suffix, named explicitly
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "build/gen.py", "script")
    assert [line.split(":")[0] for line in finding_lines(out)] == ["build/gen.py", "script"]


def test_a_file_named_twice_is_reported_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    code, out, _ = run(capsys, "--no-cache", "--select", "TCL001", "-q", "bad.py", "./bad.py", ".")
    assert len(finding_lines(out)) == 1


def test_many_files_in_worker_processes(project: Path) -> None:
    for index in range(24):
        write(project / f"m{index:02}.py", BAD)
    result = subprocess_cli("--no-cache", "--select", "TCL001", "-q", "-j", "2", ".", cwd=project)
    assert result.returncode == 1
    assert [line.split(":")[0] for line in finding_lines(result.stdout)] == [f"m{index:02}.py" for index in range(24)]


# -- cache ------------------------------------------------------------------------


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Paths actually read and checked (not served from the cache)."""
    checked: list[Path] = []
    real = parallel.check_file

    def spy(path: Path, codes, *rest):  # type: ignore[no-untyped-def]
        checked.append(path)
        return real(path, codes, *rest)

    monkeypatch.setattr(parallel, "check_file", spy)
    return checked


def test_cache_reuses_results_and_notices_changes(project: Path, capsys: pytest.CaptureFixture[str], counted: list[Path]) -> None:
    bad = write(project / "bad.py", BAD)
    write(project / "good.py", GOOD)
    cache_dir = project / "cachedir"
    first = run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", ".")
    assert sorted(path.name for path in counted) == ["bad.py", "good.py"]
    assert first[0] == 1
    assert (cache_dir / ".gitignore").is_file()

    counted.clear()
    second = run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", ".")
    assert counted == []  # nothing read again
    assert second == first

    bad.write_text(BAD + "q.data.zero_()\n", encoding="utf-8")
    counted.clear()
    code, out, _ = run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", "-q", ".")
    assert [path.name for path in counted] == ["bad.py"]
    assert [line.split(": TCL001")[0] for line in finding_lines(out)] == ["bad.py:3:5", "bad.py:4:1"]

    bad.write_text(GOOD, encoding="utf-8")
    counted.clear()
    code, out, _ = run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", ".")
    assert [path.name for path in counted] == ["bad.py"]
    assert (code, out) == (0, "All checks passed!\n")


def test_cache_is_keyed_by_settings(project: Path, capsys: pytest.CaptureFixture[str], counted: list[Path]) -> None:
    write(project / "bad.py", BAD)
    cache_dir = project / "cachedir"
    run(capsys, "--cache-dir", str(cache_dir), "bad.py")
    counted.clear()
    code, out, _ = run(capsys, "--cache-dir", str(cache_dir), "--ignore", "TCL001", "bad.py")
    assert counted  # a different selection is not served from the other's entries
    assert "TCL001" not in out


def test_no_cache_neither_reads_nor_writes(project: Path, capsys: pytest.CaptureFixture[str], counted: list[Path]) -> None:
    write(project / "bad.py", BAD)
    cache_dir = project / "cachedir"
    run(capsys, "--cache-dir", str(cache_dir), "bad.py")
    counted.clear()
    run(capsys, "--no-cache", "--cache-dir", str(cache_dir), "bad.py")
    assert [path.name for path in counted] == ["bad.py"]
    fresh = project / "fresh-cache"
    run(capsys, "--no-cache", "--cache-dir", str(fresh), "bad.py")
    assert not fresh.exists()


def test_default_cache_lives_next_to_the_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, "")
    write(project / "src" / "bad.py", BAD)
    os.chdir(project / "src")
    run(capsys, "bad.py")
    assert (project / ".torchcopy_lint_cache" / ".gitignore").is_file()


def test_corrupt_cache_is_ignored(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "bad.py", BAD)
    cache_dir = project / "cachedir"
    run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", "bad.py")
    for entry in cache_dir.glob("*.json"):
        entry.write_text("{not json", encoding="utf-8")
    code, out, err = run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", "bad.py")
    assert code == 1 and "bad.py:3:5: TCL001" in out and err == ""


@pytest.mark.parametrize(
    "entry",
    [
        5, "x", None, [], [1, 2], {"a": 1}, ["SIZE", "MTIME", 7], ["SIZE", "MTIME", [{"bad": 1}]],
        ["SIZE", "MTIME", [{"path": "bad.py", "line": "x", "column": 1, "end_line": 1, "end_column": 2, "code": "TCL001", "name": "n", "message": "m", "fix": None}]],
    ],
    ids=["number", "string", "null", "empty", "short", "object", "findings-not-a-list", "finding-of-wrong-keys", "finding-of-wrong-types"],
)
def test_wrong_shaped_cache_entry_is_ignored(project: Path, capsys: pytest.CaptureFixture[str], entry: object) -> None:
    """Valid JSON of the wrong structure made every run an internal error (issue 9, item 8)."""
    bad = write(project / "bad.py", BAD)
    cache_dir = project / "cachedir"
    first = run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", "bad.py")
    info = bad.stat()
    if isinstance(entry, list) and len(entry) == 3:
        entry = [info.st_size, info.st_mtime_ns, entry[2]]
    for cache_file in cache_dir.glob("*.json"):
        cache_file.write_text(json.dumps({str(bad.resolve()): entry}), encoding="utf-8")
    assert run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", "bad.py") == first
    assert run(capsys, "--cache-dir", str(cache_dir), "--select", "TCL001", "bad.py") == first  # and it was rewritten


def test_files_with_errors_are_not_cached(project: Path, capsys: pytest.CaptureFixture[str], counted: list[Path]) -> None:
    write(project / "broken.py", "import torch\nx.data.add_(1\n")
    cache_dir = project / "cachedir"
    assert run(capsys, "--cache-dir", str(cache_dir), "broken.py")[0] == 2
    counted.clear()
    code, _, err = run(capsys, "--cache-dir", str(cache_dir), "broken.py")
    assert code == 2 and "cannot check" in err
    assert counted


def test_console_script_entry_point_is_main() -> None:
    if sys.version_info >= (3, 10):
        from importlib.metadata import entry_points

        scripts = [ep for ep in entry_points(group="console_scripts") if ep.name == "torchcopy-lint"]
        if not scripts:
            pytest.skip("torchcopy-lint is not installed in this environment")
        assert scripts[0].value == "torchcopy_lint.cli:main"
