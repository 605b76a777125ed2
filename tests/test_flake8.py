"""The flake8 plugin ``TCL``: the real flake8, with the plugin registered by the installed package.

The package must be installed (``pip install -e .``) for flake8 to find the
``flake8.extension`` entry point; the integration tests skip otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import PYTHON, cli_env
from torchcopy_lint import engine
from torchcopy_lint.flake8_plugin import TorchCopyLintPlugin
from torchcopy_lint.registry import all_rules

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
OPT_IN = sorted(code for code, rule in all_rules().items() if not rule.spec.default)


def _registered() -> bool:
    return any(ep.name == "TCL" and ep.value == "torchcopy_lint.flake8_plugin:TorchCopyLintPlugin" for ep in entry_points(group="flake8.extension"))


needs_plugin = pytest.mark.skipif(not _registered(), reason="torchcopy-lint is not installed (pip install -e .): flake8 cannot find the plugin")


def flake8(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "flake8", *args],
        cwd=cwd,
        env=cli_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def codes_in(out: str, prefix: str = "TCL") -> list[str]:
    return [line for line in out.splitlines() if f": {prefix}" in line]


def ours(cwd: Path, *args: str) -> list[str]:
    result = subprocess.run([PYTHON, "-m", "torchcopy_lint", "--no-cache", "-q", *args], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=300)
    return result.stdout.splitlines()


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    """A directory with no flake8 configuration in it (flake8 looks in the current directory)."""
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


# -- the real flake8 -------------------------------------------------------------------


@pytest.mark.integration
@needs_plugin
def test_flake8_lists_the_plugin(work: Path) -> None:
    result = flake8(work, "--version")
    assert result.returncode == 0
    assert "torchcopy-lint" in result.stdout.replace("\n", " ")


@pytest.mark.integration
@needs_plugin
def test_select_tcl_reports_what_the_cli_reports_at_the_same_columns(work: Path) -> None:
    source = (
        "import torch\n"
        "for p in model.parameters():\n"
        "    p.data.add_(1)\n"
        "x = 1; w.data.zero_()\n"
        "\u00e9\u00e8 = 1; \u00e9.data.mul_(2)\n"  # non-ASCII before the finding: columns count characters
        "if x:\n"
        "\tq.data.copy_(x)\n"  # a tab: flake8 and the CLI both count it as one column
    )
    (work / "bad.py").write_text(source, encoding="utf-8")
    result = flake8(work, "--select", "TCL001", "bad.py")
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert [line.split(": TCL001")[0] for line in lines] == ["bad.py:3:5", "bad.py:4:8", "bad.py:5:9", "bad.py:7:2"]
    assert lines == ours(work, "--select", "TCL001", "bad.py")  # same text, same 1-based columns


@pytest.mark.integration
@needs_plugin
def test_without_select_tcl_appears_next_to_pyflakes(work: Path) -> None:
    (work / "bad.py").write_text(BAD, encoding="utf-8")
    result = flake8(work, "bad.py")
    assert result.returncode == 1
    assert any(": F821 undefined name 'model'" in line for line in result.stdout.splitlines())
    assert [line.split(" in-place")[0] for line in codes_in(result.stdout, "TCL001")] == ["bad.py:3:5: TCL001"]
    expected = 'bad.py:3:5: TCL001 in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): p.add_(...)"'
    assert expected in result.stdout.splitlines()


@pytest.mark.integration
@needs_plugin
def test_noqa(work: Path) -> None:
    (work / "n.py").write_text(
        "import torch\n"
        "a.data.add_(1)  # noqa: TCL001\n"
        "b.data.add_(1)  # noqa: E501,TCL001\n"
        "c.data.add_(1)  # noqa: TCL0\n"
        "d.data.add_(1)  # noqa\n"
        "e.data.add_(1)  # noqa: E501\n"
        "f.data.add_(1)\n",
        encoding="utf-8",
    )
    result = flake8(work, "--select", "TCL001", "n.py")
    assert [line.split(": TCL001")[0] for line in result.stdout.splitlines()] == ["n.py:6:1", "n.py:7:1"]
    # flake8 applies noqa itself: with --disable-noqa every finding shows (the plugin does not filter).
    result = flake8(work, "--select", "TCL001", "--disable-noqa", "n.py")
    assert len(codes_in(result.stdout, "TCL001")) == 6


@pytest.mark.integration
@needs_plugin
@pytest.mark.parametrize(
    ("config_file", "section"),
    [(".flake8", "flake8"), ("setup.cfg", "flake8"), ("tox.ini", "flake8")],
)
def test_extend_ignore_in_config(work: Path, config_file: str, section: str) -> None:
    (work / "bad.py").write_text(BAD, encoding="utf-8")
    (work / config_file).write_text(f"[{section}]\nextend-ignore = TCL001\n", encoding="utf-8")
    result = flake8(work, "bad.py")
    assert codes_in(result.stdout, "TCL001") == []
    assert "F821" in result.stdout  # the rest of flake8 still runs


@pytest.mark.integration
@needs_plugin
def test_longer_explicit_select_beats_config_ignore(work: Path) -> None:
    (work / "bad.py").write_text(BAD, encoding="utf-8")
    (work / ".flake8").write_text("[flake8]\nextend-ignore = TCL0\n", encoding="utf-8")
    result = flake8(work, "--extend-select", "TCL001", "bad.py")
    assert len(codes_in(result.stdout, "TCL001")) == 1


@pytest.mark.integration
@needs_plugin
def test_syntax_error_is_e999_only(work: Path) -> None:
    (work / "broken.py").write_text(BAD + "def f(:\n", encoding="utf-8")
    (work / "bad.py").write_text(BAD, encoding="utf-8")
    result = flake8(work, "--select", "E999,TCL", "broken.py", "bad.py")
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 1
    assert [line.split(":")[0] + ":" + line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["bad.py:TCL001", "broken.py:E999"]


@pytest.mark.integration
@needs_plugin
def test_stdin(work: Path) -> None:
    result = flake8(work, "--select", "TCL001", "--stdin-display-name", "pkg/mod.py", "-", stdin=BAD)
    assert result.returncode == 1
    assert [line.split(": TCL001")[0] for line in result.stdout.splitlines()] == ["pkg/mod.py:3:5"]


@pytest.mark.integration
@needs_plugin
def test_bom_crlf_and_parallel_jobs(work: Path) -> None:
    (work / "bom.py").write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    (work / "crlf.py").write_bytes(BAD.replace("\n", "\r\n").encode())
    for index in range(6):
        (work / f"m{index}.py").write_text(BAD, encoding="utf-8")
    result = flake8(work, "--select", "TCL001", "-j", "2", ".")
    assert result.returncode == 1, result.stderr
    assert sorted(line.split(": TCL001")[0] for line in result.stdout.splitlines()) == sorted(
        ["./bom.py:3:5", "./crlf.py:3:5", *(f"./m{index}.py:3:5" for index in range(6))]
    )


@pytest.mark.integration
@needs_plugin
@pytest.mark.skipif(not OPT_IN, reason="the catalogue has no opt-in rule yet")
def test_opt_in_codes_are_off_unless_named(work: Path) -> None:
    for code in OPT_IN:
        example = all_rules()[code].spec.examples_of("flagged")[0].source
        (work / f"{code}.py").write_text(example, encoding="utf-8")
    (work / "default.py").write_text(BAD, encoding="utf-8")
    result = flake8(work, ".")
    assert not any(f": {code}" in result.stdout for code in OPT_IN), result.stdout
    result = flake8(work, "--extend-select", ",".join(OPT_IN), ".")
    for code in OPT_IN:
        assert f": {code} " in result.stdout, code
    result = flake8(work, "--extend-select", "TCL1", ".")
    for code in OPT_IN:
        assert f": {code} " in result.stdout, code
    # `select = TCL` names the plugin, not its opt-in rules: the default rules only.
    result = flake8(work, "--select", "TCL", ".")
    assert ": TCL0" in result.stdout
    assert not any(f": {code}" in result.stdout for code in OPT_IN), result.stdout
    result = flake8(work, "--select", f"TCL,{OPT_IN[0]}", ".")
    assert [code for code in OPT_IN if f": {code} " in result.stdout] == [OPT_IN[0]]
    # flake8's pitfall, closed: a plain `ignore =` replaces flake8's default-ignore list,
    # but the plugin still runs opt-in rules only when a selector names them.
    (work / ".flake8").write_text("[flake8]\nignore = E501\n", encoding="utf-8")
    result = flake8(work, ".")
    assert ": TCL0" in result.stdout
    assert not any(f": {code}" in result.stdout for code in OPT_IN), result.stdout
    (work / ".flake8").write_text("[flake8]\nselect = TCL\nextend-select = TCL1\n", encoding="utf-8")
    result = flake8(work, ".")
    for code in OPT_IN:
        assert f": {code} " in result.stdout, code


INJECT_PARSE_FAILURE = """
import torchcopy_lint.engine as engine

_parse = engine.parse_cst


def parse_cst(source):
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    if "LIBCST_REJECTS_THIS" in text:
        raise engine.CannotCheck("syntax error at line 2, column 1: rejected by LibCST")
    return _parse(source)


engine.parse_cst = parse_cst
"""


@pytest.mark.integration
@needs_plugin
def test_a_file_the_plugin_cannot_check_is_reported_as_tcl000(work: Path, tmp_path: Path) -> None:
    """flake8 only hands over files ``ast`` accepts, and no such file that LibCST rejects is
    known (code nested deeply enough for the linter to refuse also crashes pyflakes and
    flake8's own ast step), so a sitecustomize makes LibCST's parse fail for one file."""
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(INJECT_PARSE_FAILURE, encoding="utf-8")
    (work / "rejected.py").write_text(BAD + "# LIBCST_REJECTS_THIS\n", encoding="utf-8")
    (work / "bad.py").write_text(BAD, encoding="utf-8")
    env = cli_env()
    env["PYTHONPATH"] = str(inject) + os.pathsep + env["PYTHONPATH"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "flake8", *args], cwd=work, env=env, capture_output=True, text=True, timeout=300)

    result = run("--select", "TCL", "-j", "2", "rejected.py", "bad.py")
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        'bad.py:3:5: TCL001 in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): p.add_(...)"',
        "rejected.py:1:1: TCL000 cannot check: syntax error at line 2, column 1: rejected by LibCST",
    ]
    result = run("--select", "TCL", "--extend-ignore", "TCL000", "rejected.py")
    assert (result.returncode, result.stdout) == (0, "")
    result = run("--select", "TCL001", "rejected.py")  # TCL000 not selected: not shown
    assert (result.returncode, result.stdout) == (0, "")


@pytest.mark.integration
@needs_plugin
def test_file_level_noqa(work: Path) -> None:
    (work / "all.py").write_text("# torchcopy-lint: noqa\n" + BAD, encoding="utf-8")
    (work / "some.py").write_text("# torchcopy-lint: noqa: TCL001\n" + BAD + "x = torch.Tensor(3)\n", encoding="utf-8")
    result = flake8(work, "--select", "TCL", "all.py", "some.py")
    assert [line.split(" ")[0:2] for line in result.stdout.splitlines()] == [["some.py:5:5:", "TCL006"]]
    result = flake8(work, "--select", "TCL", "--disable-noqa", "all.py")
    assert codes_in(result.stdout, "TCL001")


# -- the adapter, in-process ----------------------------------------------------------


def run_plugin(source: str, filename: str = "x.py") -> list[tuple[int, int, str]]:
    lines = source.splitlines(keepends=True)
    return [(line, column, text) for line, column, text, _type in TorchCopyLintPlugin(None, lines, filename).run()]


def test_plugin_columns_are_zero_based() -> None:
    found = [item for item in run_plugin(BAD) if item[2].startswith("TCL001 ")]
    assert [(line, column) for line, column, _ in found] == [(3, 4)]
    assert found[0][2].startswith("TCL001 in-place write through `.data`")


def test_plugin_reports_noqa_lines_for_flake8_to_filter() -> None:
    assert [item[:2] for item in run_plugin("import torch\np.data.add_(1)  # noqa: TCL001\n") if item[2].startswith("TCL001")] == [(2, 0)]


@pytest.fixture()
def flake8_options(monkeypatch: pytest.MonkeyPatch, work: Path) -> Callable[..., frozenset[str]]:
    """Parse a flake8 command line with flake8's own option parsing (which calls the
    plugin's parse_options) in a directory without configuration; the plugin's class
    state is restored afterwards."""
    from flake8.options.parse_args import parse_args

    monkeypatch.chdir(work)
    for name in ("codes", "report_cannot_check", "apply_file_noqa"):
        monkeypatch.setattr(TorchCopyLintPlugin, name, getattr(TorchCopyLintPlugin, name))

    def parse(*argv: str) -> frozenset[str]:
        parse_args([*argv, "x.py"])
        assert TorchCopyLintPlugin.codes is not None
        return TorchCopyLintPlugin.codes

    return parse


DEFAULT = frozenset(code for code, rule in all_rules().items() if rule.spec.default)


@needs_plugin
def test_the_plugin_runs_only_what_flake8_will_report(flake8_options: Callable[..., frozenset[str]]) -> None:
    assert flake8_options() == DEFAULT
    assert flake8_options("--select", "TCL") == DEFAULT
    assert flake8_options("--select", "E,F") == frozenset()
    assert flake8_options("--select", "TCL001") == {"TCL001"}
    assert flake8_options("--extend-ignore", "TCL00") == {code for code in DEFAULT if not code.startswith("TCL00")}
    assert flake8_options("--extend-select", "TCL1") == DEFAULT | set(OPT_IN)
    assert flake8_options("--ignore", "E501") == DEFAULT  # the default-ignore list replaced: still no opt-in rule
    assert flake8_options("--select", "TCL1") == set(OPT_IN)


@needs_plugin
def test_plugin_runs_opt_in_rules_once_selected(flake8_options: Callable[..., frozenset[str]]) -> None:
    flake8_options("--extend-select", "TCL1")
    for code in OPT_IN:
        example = all_rules()[code].spec.examples_of("flagged")[0]
        found = {line for line, _, text in run_plugin(example.source) if text.startswith(code + " ")}
        assert found == set(example.marked_lines(code)), code


def test_outside_flake8_the_plugin_runs_the_default_rules() -> None:
    example = all_rules()[OPT_IN[0]].spec.examples_of("flagged")[0] if OPT_IN else None
    assert run_plugin(BAD)[0][2].startswith("TCL001 ")
    if example is not None:
        assert not [text for _, _, text in run_plugin(example.source) if text.startswith(OPT_IN[0])]


def test_plugin_reports_an_internal_error_as_tcl000(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> list[object]:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "lint_source", explode)
    assert run_plugin(BAD) == [(1, 0, "TCL000 cannot check: internal error (RuntimeError: boom); please report it")]


def test_plugin_reports_what_libcst_cannot_parse_as_tcl000(monkeypatch: pytest.MonkeyPatch) -> None:
    # (flake8 itself never passes a file ast rejects: it reports E999 instead.)
    ((line, column, text),) = run_plugin("import torch\np.data.add_(1\n")
    assert (line, column) == (1, 0) and text.startswith("TCL000 cannot check: syntax error")

    def rejects(source: object) -> object:
        raise engine.CannotCheck("syntax error at line 2, column 1: rejected by LibCST")

    monkeypatch.setattr(engine, "parse_cst", rejects)
    assert run_plugin(BAD) == [(1, 0, "TCL000 cannot check: syntax error at line 2, column 1: rejected by LibCST")]


def test_plugin_parameters_make_it_a_tree_plugin() -> None:
    import inspect

    parameters = list(inspect.signature(TorchCopyLintPlugin.__init__).parameters)
    assert parameters[:4] == ["self", "tree", "lines", "filename"]


class _OptionManager:
    def __init__(self) -> None:
        self.ignored: list[str] = []

    def extend_default_ignore(self, codes: list[str]) -> None:
        self.ignored.extend(codes)


def test_add_options_puts_exactly_the_opt_in_codes_on_the_default_ignore_list() -> None:
    manager = _OptionManager()
    TorchCopyLintPlugin.add_options(manager)
    assert manager.ignored == OPT_IN
    assert all(all_rules()[code].spec.default is False for code in manager.ignored)


def test_importing_and_running_the_plugin_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "from torchcopy_lint.flake8_plugin import TorchCopyLintPlugin\n"
        "TorchCopyLintPlugin.add_options(type('M', (), {'extend_default_ignore': lambda self, codes: None})())\n"
        f"found = list(TorchCopyLintPlugin(None, {BAD.splitlines(keepends=True)!r}, 'x.py').run())\n"
        "assert found, found\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
