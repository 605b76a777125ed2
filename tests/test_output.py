"""Every ``--output-format``, ``-o``, and colour: real runs of the command, outputs parsed
back with the consumers' own rules (the SARIF 2.1.0 JSON schema, an XML parser, JSON)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from conftest import PYTHON, REPO, cli_env, run_main
from torchcopy_lint import __version__
from torchcopy_lint.cli import main
from torchcopy_lint.registry import all_rules

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
SCHEMA = json.loads((REPO / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
ANSI = "\033["


@pytest.fixture()
def project(project: Path) -> Path:
    """conftest's empty current directory, with three files in it."""
    root = project
    (root / "bad.py").write_text(BAD, encoding="utf-8")
    (root / "two.py").write_text("import torch\n\ndef f(w):\n\tw.data.zero_()\n\tw.data.mul_(2)\n", encoding="utf-8")
    (root / "broken.py").write_text("import torch\nx.data.add_(1)\ndef f(:\n", encoding="utf-8")
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_main(capsys, "--no-cache", "-j", "1", "--select", "TCL001", *args)


def validate_sarif(log: object) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


# -- SARIF -----------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--output-format", "sarif", "bad.py", "two.py", "broken.py", "missing.py")
    assert code == 2  # two files could not be checked
    log = json.loads(out)
    validate_sarif(log)
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("torchcopy-lint", __version__)
    assert [rule["id"] for rule in driver["rules"]] == list(all_rules())
    for rule, spec in zip(driver["rules"], (r.spec for r in all_rules().values())):
        assert rule["name"] == spec.name
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] == spec.sections["What it does"]
        assert rule["help"]["markdown"] == spec.body and rule["helpUri"].endswith(spec.path.name)
        assert rule["defaultConfiguration"]["enabled"] is spec.default
    results = run_["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("TCL001", "bad.py", 3),
        ("TCL001", "two.py", 4),
        ("TCL001", "two.py", 5),
    ]
    for result in results:
        region = result["locations"][0]["physicalLocation"]["region"]
        assert min(region.values()) >= 1  # 1-based, never a 0 column
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]["primaryLocationLineHash"]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 19}
    assert results[1]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 2  # after a tab: columns count characters
    invocation = run_["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = {n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: n["message"]["text"] for n in invocation["toolExecutionNotifications"]}
    assert set(notes) == {"broken.py", "missing.py"}
    assert notes["missing.py"] == "cannot check: no such file or directory"
    assert "missing.py: cannot check" in err  # and still on stderr


def test_sarif_fingerprints_survive_lines_inserted_above(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = json.loads(run(capsys, "--output-format", "sarif", "bad.py")[1])["runs"][0]["results"][0]
    (project / "bad.py").write_text("# a comment\n\n" + BAD, encoding="utf-8")
    after = json.loads(run(capsys, "--output-format", "sarif", "bad.py")[1])["runs"][0]["results"][0]
    assert after["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert after["partialFingerprints"] == before["partialFingerprints"]


def test_sarif_of_a_clean_run_is_valid_and_successful(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "good.py").write_text("import torch\n", encoding="utf-8")
    code, out, _ = run(capsys, "--output-format", "sarif", "good.py")
    log = json.loads(out)
    validate_sarif(log)
    assert code == 0 and log["runs"][0]["results"] == [] and log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_sarif_paths_with_spaces_are_uri_references(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "dir with space").mkdir()
    (project / "dir with space" / "b%d.py").write_text(BAD, encoding="utf-8")
    log = json.loads(run(capsys, "--output-format", "sarif", "dir with space")[1])
    validate_sarif(log)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "dir%20with%20space/b%25d.py"


# -- JSON, JSON lines --------------------------------------------------------------------


def test_json_lists_unreadable_files_with_a_null_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--output-format", "json", "bad.py", "missing.py")
    records = json.loads(out)
    assert code == 2
    assert [(r["path"], r["code"], r["name"]) for r in records] == [("bad.py", "TCL001", "data-mutation"), ("missing.py", None, "cannot-check")]
    assert records[1]["message"] == "cannot check: no such file or directory"
    assert records[0]["url"].endswith("/rules/TCL001-data-mutation.md")


def test_json_lines_is_the_json_records_one_per_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, as_json, _ = run(capsys, "--output-format", "json", "bad.py", "two.py", "missing.py")
    code, out, _ = run(capsys, "--output-format", "json-lines", "bad.py", "two.py", "missing.py")
    assert code == 2
    assert [json.loads(line) for line in out.splitlines()] == json.loads(as_json)
    assert len(out.splitlines()) == 4


# -- CI formats ----------------------------------------------------------------------------


def test_gitlab_code_quality(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI_PROJECT_DIR", str(project.parent))
    code, out, _ = run(capsys, "--output-format", "gitlab", "bad.py", "two.py", "missing.py")
    issues = json.loads(out)
    assert code == 2
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
    assert len({issue["fingerprint"] for issue in issues}) == len(issues) == 4
    assert [issue["location"]["path"] for issue in issues] == ["project/bad.py", "project/two.py", "project/two.py", "project/missing.py"]
    assert issues[0]["location"]["positions"]["begin"] == {"line": 3, "column": 5}
    assert issues[-1]["check_name"] == "cannot-check"


def test_junit_is_xml_with_a_failure_per_finding_and_an_error_per_unreadable_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--output-format", "junit", "bad.py", "two.py", "missing.py")
    root = ElementTree.fromstring(out)
    assert code == 2
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "3", "1")
    suites = {suite.get("name"): suite for suite in root}
    assert set(suites) == {"bad.py", "two.py", "missing.py"}
    assert len(suites["two.py"].findall("testcase/failure")) == 2
    assert suites["missing.py"].find("testcase/error").get("message") == "cannot check: no such file or directory"


def test_junit_of_a_clean_run_has_one_passing_case(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "good.py").write_text("import torch\n", encoding="utf-8")
    code, out, _ = run(capsys, "--output-format", "junit", "good.py")
    root = ElementTree.fromstring(out)
    assert code == 0 and (root.get("tests"), root.get("failures")) == ("1", "0")


def test_github_reports_unreadable_files_as_error_annotations(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--output-format", "github", "bad.py", "missing.py")
    assert code == 2
    assert out.splitlines()[0].startswith("::warning file=bad.py,line=3,col=5,endLine=3,endColumn=19,title=TCL001 data-mutation::TCL001 ")
    assert out.splitlines()[1] == "::error file=missing.py,title=torchcopy-lint%3A cannot check::cannot check: no such file or directory"


def test_pylint(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--output-format", "pylint", "bad.py")
    assert code == 1
    assert out.splitlines() == ["bad.py:3: [TCL001] in-place write through `.data` is invisible to autograd; use \"with torch.no_grad(): p.add_(...)\""]


# -- human formats --------------------------------------------------------------------------


def test_full_shows_the_line_a_caret_and_the_fix_mark(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--output-format", "full", "bad.py", "two.py")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("bad.py:3:5: TCL001 [*] in-place write")
    assert lines[1:7] == [
        "  |",
        "1 | import torch",
        "2 | for p in model.parameters():",
        "3 |     p.data.add_(1)",
        "  |     ^^^^^^^^^^^^^^ TCL001",
        "  |",
    ]
    assert "  | \t^^^^^^^^^^^^^^ TCL001" in lines  # under a tab-indented line the caret keeps the tab
    assert lines[-2:] == ["Found 3 findings.", "[*] 3 fixable with --fix."]


def test_concise_is_the_default_and_text_and_format_are_aliases(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = {args: run(capsys, *args, "bad.py")[1] for args in [(), ("--output-format", "concise"), ("--format", "text"), ("--format", "concise"), ("--output-format", "text")]}
    assert len(set(outputs.values())) == 1
    assert next(iter(outputs.values())).splitlines()[0].startswith("bad.py:3:5: TCL001 in-place")


# -- -o / --output-file -----------------------------------------------------------------------


def test_output_file_gets_the_report_and_stdout_stays_empty(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--output-format", "sarif", "-o", "reports/out.sarif", "bad.py", "missing.py")
    assert code == 2 and out == ""
    assert err == "missing.py: cannot check: no such file or directory\n"
    validate_sarif(json.loads((project / "reports" / "out.sarif").read_text(encoding="utf-8")))
    code, out, _ = run(capsys, "--output-file", "report.txt", "bad.py")
    assert code == 1 and out == ""
    assert (project / "report.txt").read_text(encoding="utf-8").endswith("Found 1 finding.\n[*] 1 fixable with --fix.\n")


def test_unwritable_output_file_is_one_line_and_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "a_file").write_text("", encoding="utf-8")
    code, out, err = run(capsys, "-o", "a_file/report.json", "--output-format", "json", "bad.py")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("torchcopy-lint: error: cannot write a_file/report.json")


# -- colour -------------------------------------------------------------------------------------


def cli(project: Path, env: dict[str, str], *args: str) -> str:
    environment = cli_env()
    for key in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        environment.pop(key, None)
    environment.update(env)
    result = subprocess.run([PYTHON, "-m", "torchcopy_lint", "--no-cache", *args, "bad.py"], cwd=project, env=environment, capture_output=True, text=True, timeout=120)
    return result.stdout


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False), ({"FORCE_COLOR": ""}, False)],
)
def test_colour_when_piped_follows_force_color_and_no_color(project: Path, env: dict[str, str], coloured: bool) -> None:
    out = cli(project, env)
    assert (ANSI in out) is coloured
    assert "TCL001" in out


def test_machine_formats_and_output_files_are_never_coloured(project: Path) -> None:
    assert ANSI not in cli(project, {"FORCE_COLOR": "1"}, "--output-format", "json")
    cli(project, {"FORCE_COLOR": "1"}, "-o", "report.txt")
    assert ANSI not in (project / "report.txt").read_text(encoding="utf-8")


def run_on_a_terminal(project: Path, env: dict[str, str]) -> str:
    """The command with its stdout on a pseudo-terminal, as a user at a shell sees it."""
    environment = cli_env()
    for key in ("NO_COLOR", "FORCE_COLOR"):
        environment.pop(key, None)
    environment.update({"TERM": "xterm", **env})
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([PYTHON, "-m", "torchcopy_lint", "--no-cache", "bad.py"], cwd=project, env=environment, stdout=follower, stderr=subprocess.DEVNULL)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    finally:
        os.close(leader)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_unless_no_color(project: Path) -> None:
    assert ANSI in run_on_a_terminal(project, {})
    plain = run_on_a_terminal(project, {"NO_COLOR": "1"})
    assert "TCL001" in plain and ANSI not in plain


def test_sarif_fixes_are_the_edits_fix_makes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from torchcopy_lint.fixes.text_edits import TextEdit, apply_edits

    source = "import torch\n\nmodel = torch.nn.Linear(2, 2)\nbest = model.state_dict()\nfor p in model.parameters():\n    p.data.mul_(0.9)\nprint(best)\n"
    (project / "snap.py").write_text(source, encoding="utf-8")
    log = json.loads(main_output(capsys, "--select", "TCL001,TCL004", "--output-format", "sarif", "snap.py"))
    validate_sarif(log)
    results = {result["ruleId"]: result for result in log["runs"][0]["results"]}
    assert set(results) == {"TCL001", "TCL004"}
    for code, result in results.items():
        (fix,) = result["fixes"]
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"]["uri"] == "snap.py"
        edits = [TextEdit(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"], r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"], r["insertedContent"]["text"]) for r in change["replacements"]]
        alone = project / f"{code}.py"
        alone.write_text(source, encoding="utf-8")
        assert main(["--no-cache", "-j", "1", "--select", code, "--fix", str(alone)]) == 0
        capsys.readouterr()
        assert apply_edits(source, edits) == alone.read_text(encoding="utf-8"), code
    assert len(results["TCL004"]["fixes"][0]["artifactChanges"][0]["replacements"]) == 2  # the import, then the snapshot


def main_output(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    return run_main(capsys, "--no-cache", "-j", "1", *args)[1]
