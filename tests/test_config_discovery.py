"""Configuration per file (nearest pyproject.toml), .gitignore, gitignore-style patterns, --show-settings/--show-files,
and paths from the cache (issue 12: bugs 2 and 4, the discovery items)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchcopy_lint import cache as cache_module
from torchcopy_lint.cache import ResultCache
from test_cli import BAD, configure, write
from torchcopy_lint.cli import main

def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    code = main(["-j", "1", "-q", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def reported(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    """``path:line:column`` of every finding."""
    return [line.split(": TCL")[0] for line in run(capsys, "--no-cache", *args)[1]]


# -- bug 2: the paths of this run ----------------------------------------------------------


def test_cached_findings_carry_this_run_s_path(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    configure(project, "")  # the cache lives at the project root
    write(project / "src" / "bad.py", BAD)
    assert run(capsys, "src/bad.py")[1][0].startswith("src/bad.py:3:5:")
    monkeypatch.chdir(project / "src")
    assert run(capsys, "bad.py")[1][0].startswith("bad.py:3:5:")  # was src/bad.py:3:5
    absolute = str(project / "src" / "bad.py")
    assert run(capsys, absolute)[1][0].startswith(f"{absolute}:3:5:")


def test_the_cache_key_includes_the_libcst_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = ResultCache(tmp_path, ["TCL001"]).path
    monkeypatch.setattr(cache_module, "_libcst_version", lambda: "0.0.1")
    assert ResultCache(tmp_path, ["TCL001"]).path != before


# -- bug 4: the nearest configuration, per file ----------------------------------------------


def test_each_path_uses_its_own_nearest_configuration(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project / "a", 'ignore = ["TCL001"]')
    write(project / "a" / "x.py", BAD)
    write(project / "b" / "x.py", BAD)
    assert reported(capsys, "a", "b") == ["b/x.py:3:5"]  # a's ignore was applied to b
    assert reported(capsys, "b", "a") == ["b/x.py:3:5"]


def test_configuration_is_hierarchical_inside_one_walk(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'ignore = ["TCL001"]')
    configure(project / "pkg", 'per-file-ignores = { "skip/*" = ["TCL001"] }')
    write(project / "top.py", BAD)
    write(project / "pkg" / "x.py", BAD)
    write(project / "pkg" / "skip" / "y.py", BAD)
    assert reported(capsys, ".") == ["pkg/x.py:3:5"]  # pkg/ has its own settings; its patterns start at pkg/


def test_command_line_overrides_every_configuration(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project / "a", 'ignore = ["TCL001"]')
    write(project / "a" / "x.py", BAD)
    write(project / "b" / "x.py", BAD)
    assert reported(capsys, "--ignore", "TCL001", "a", "b") == []
    assert reported(capsys, "--select", "TCL001", "a", "b") == ["a/x.py:3:5", "b/x.py:3:5"]
    assert reported(capsys, "--isolated", "a") == ["a/x.py:3:5"]


def test_a_config_below_with_an_unknown_code_is_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project / "deep" / "er", 'ignore = ["TCL999"]')
    write(project / "deep" / "er" / "x.py", BAD)
    code, out, err = run(capsys, "--no-cache", ".")
    assert code == 2 and out == []
    assert err == ["torchcopy-lint: error: unknown rule selector 'TCL999' (see `torchcopy-lint rules`)"]


def test_the_underscore_table_is_ignored_with_a_warning(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "pyproject.toml", '[tool.torchcopy_lint]\nignore = ["TCL001"]\n')
    write(project / "x.py", BAD)
    code, out, err = run(capsys, "--no-cache", "x.py")
    assert [line.split(": TCL")[0] for line in out] == ["x.py:3:5"] and code == 1
    assert err == [f"torchcopy-lint: warning: {project / 'pyproject.toml'}: [tool.torchcopy_lint] is ignored: the table is [tool.torchcopy-lint] (with a hyphen)"]


# -- --show-settings / --show-files ------------------------------------------------------------


def test_show_settings_says_where_each_setting_comes_from(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'ignore = ["TCL003"]\nper-file-ignores = { "tests/**" = ["TCL004"] }\nmax-file-size = "1MB"')
    write(project / "tests" / "t.py", BAD)
    code, out, err = run(capsys, "--show-settings", "--extend-select", "TCL101", "--ignore", "TCL002", "tests/t.py")
    source = project / "pyproject.toml"
    assert code == 0 and err == []
    assert out[:3] == ["# Settings for tests/t.py", f"# configuration: {source}", f"# patterns are relative to: {project}"]
    assert "select = (default rules)  # from default" in out
    assert 'extend-select = ["TCL101"]  # from command line' in out
    assert f'ignore = ["TCL003", "TCL002"]  # from {source}, command line' in out
    assert f'per-file-ignores = {{ "tests/**" = ["TCL004"] }}  # from {source}' in out
    assert f"max-file-size = 1048576  # 1.0 MB, from {source}" in out
    assert "respect-gitignore = true  # from default" in out
    assert out[-1].startswith("# rules for this file: TCL001, ") and "TCL101" in out[-1] and "TCL004" not in out[-1].split(" (")[0]
    assert out[-1].endswith("(per-file-ignores: TCL004)")


def test_show_files_lists_what_would_be_checked(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "a.py", "")
    write(project / "sub" / "b.py", "")
    write(project / "build" / "c.py", "")
    write(project / "notes.txt", "")
    code, out, err = run(capsys, "--show-files", ".")
    assert (code, out, err) == (0, ["a.py", "sub/b.py"], [])


# -- what a walk skips ---------------------------------------------------------------------------


def make_repository(root: Path) -> None:
    (root / ".git" / "info").mkdir(parents=True)


def test_gitignore_is_respected_inside_a_repository(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repository(project)
    write(project / ".gitignore", "generated/\n*_pb2.py\n/top_only.py\n")
    write(project / ".git" / "info" / "exclude", "scratch.py\n")
    write(project / "pkg" / ".gitignore", "!keep_pb2.py\n")
    for name in ("ok.py", "generated/g.py", "a_pb2.py", "top_only.py", "pkg/top_only.py", "pkg/x_pb2.py", "pkg/keep_pb2.py", "scratch.py"):
        write(project / name, "")
    assert run(capsys, "--show-files", ".")[1] == ["ok.py", "pkg/keep_pb2.py", "pkg/top_only.py"]
    everything = ["a_pb2.py", "generated/g.py", "ok.py", "pkg/keep_pb2.py", "pkg/top_only.py", "pkg/x_pb2.py", "scratch.py", "top_only.py"]
    assert run(capsys, "--show-files", "--no-respect-gitignore", ".")[1] == everything
    configure(project, "respect-gitignore = false")
    assert run(capsys, "--show-files", ".")[1] == everything


def test_gitignore_above_the_walked_folder_applies(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repository(project)
    write(project / ".gitignore", "src/gen/\n")
    write(project / "src" / "gen" / "g.py", "")
    write(project / "src" / "ok.py", "")
    assert run(capsys, "--show-files", "src")[1] == ["src/ok.py"]


def test_a_folder_named_explicitly_is_walked_though_a_gitignore_above_excludes_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pyenv's checkout ignores /versions: `torchcopy-lint ~/.pyenv/versions/.../torch` checked nothing."""
    make_repository(project)
    write(project / ".gitignore", "/versions\n")
    write(project / "versions" / "lib" / ".gitignore", "skip.py\n")
    for name in ("a.py", "sub/b.py", "skip.py"):
        write(project / "versions" / "lib" / name, "")
    assert run(capsys, "--show-files", "versions/lib")[1] == ["versions/lib/a.py", "versions/lib/sub/b.py"]
    assert run(capsys, "--show-files", ".")[1] == []


def test_no_files_found_is_a_warning_not_all_clear(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "notes.txt", "")
    code, out, err = run(capsys, "--no-cache", ".")
    assert code == 0 and out == []
    assert err == ["torchcopy-lint: warning: no Python files found under the given paths (see --show-files; excluded and git-ignored files are skipped)"]


def test_gitignore_outside_a_repository_is_not_read_but_ignore_is(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / ".gitignore", "a.py\n")
    write(project / ".ignore", "b.py\n")
    for name in ("a.py", "b.py", "c.py"):
        write(project / name, "")
    assert run(capsys, "--show-files", ".")[1] == ["a.py", "c.py"]


def test_a_file_named_explicitly_is_checked_even_if_gitignored(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repository(project)
    write(project / ".gitignore", "bad.py\n")
    write(project / "bad.py", BAD)
    assert reported(capsys, "bad.py") == ["bad.py:3:5"]


def test_exclude_and_per_file_ignores_have_gitignore_semantics(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'extend-exclude = ["legacy/**/old_*.py", "/vendored"]\nper-file-ignores = { "**/tests/test_*.py" = ["TCL001"], "scripts/" = ["TCL001"] }')
    for name in ("legacy/a/b/old_x.py", "legacy/new.py", "vendored/v.py", "src/vendored/v.py", "src/tests/test_a.py", "src/tests/helper.py", "scripts/deep/s.py", "main.py"):
        write(project / name, BAD)
    assert reported(capsys, ".") == [f"{name}:3:5" for name in ("legacy/new.py", "main.py", "src/tests/helper.py", "src/vendored/v.py")]


def test_conda_environments_are_skipped(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project / "env" / "conda-meta" / "history", "")
    write(project / "env" / "lib" / "site.py", "")
    write(project / "ok.py", "")
    assert run(capsys, "--show-files", ".")[1] == ["ok.py"]


def test_force_exclude_applies_gitignore_style_patterns_to_named_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(project, 'extend-exclude = ["gen/**"]')
    write(project / "gen" / "deep" / "g.py", BAD)
    assert reported(capsys, "--force-exclude", "gen/deep/g.py") == []
    assert reported(capsys, "gen/deep/g.py") == ["gen/deep/g.py:3:5"]


def test_show_files_reports_unwalkable_paths(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--show-files", "missing")
    assert (code, out, err) == (2, [], ["missing: cannot check: no such file or directory"])

