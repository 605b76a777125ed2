"""Files that cannot be checked: one line each, the rest still checked, no traceback, nothing written.

Every bad input must give exactly one ``path: cannot check: <reason>`` line on
stderr (or be checked normally), the other files' findings must still be
printed, the exit status is 2 when anything could not be checked, and no file
is ever modified.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, cli_env
from unprivileged import run_cli_unprivileged
from torchcopy_lint.cli import main

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
FINDING = "3:5: TCL001 in-place write through `.data`"


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under ``root`` (links not followed): kind, content or target, mtime."""
    state: dict[str, tuple[str, bytes | str, int]] = {}
    for directory, subdirs, names in os.walk(root):
        for name in subdirs + names:
            path = Path(directory, name)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                state[str(path)] = ("link", os.readlink(path), info.st_mtime_ns)
            elif stat.S_ISREG(info.st_mode):
                state[str(path)] = ("file", path.read_bytes() if os.access(path, os.R_OK) else b"?", info.st_mtime_ns)
            else:
                state[str(path)] = ("other", "", info.st_mtime_ns)
    return state


def make_tree(root: Path) -> None:
    (root / "bad.py").write_text(BAD, encoding="utf-8")
    (root / "syntax.py").write_text(BAD + "def broken(:\n", encoding="utf-8")
    (root / "latin1.py").write_bytes(b"import torch\n# caf\xe9\n" + BAD.encode())
    (root / "nul.py").write_bytes(BAD.encode() + b"x = 1\x00\n")
    (root / "cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\n" + BAD.encode())
    (root / "deep.py").write_text("import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\np.data.add_(1)\n", encoding="utf-8")
    (root / "empty.py").write_bytes(b"")
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "dangling.py").symlink_to("nowhere.py")
    sub = root / "sub"
    sub.mkdir()
    (sub / "inner.py").write_text(BAD, encoding="utf-8")
    (sub / "up").symlink_to("..")  # a directory link loop: never followed
    (sub / "self").symlink_to(".")
    os.mkfifo(root / "fifo.py")


# path -> reason, for `torchcopy-lint . missing.py loop_a.py` run in the tree
EXPECTED_ERRORS = {
    "cookie.py": "bad encoding declaration: unknown encoding: no-such-codec",
    "dangling.py": "no such file or directory",
    "deep.py": "syntax error at line 2, column 205: too many nested parentheses",
    "fifo.py": "not a regular file",
    "latin1.py": "cannot decode as utf-8: invalid byte 0xe9 at line 2, column 6",
    "loop_a.py": "symbolic link loop",
    "loop_b.py": "symbolic link loop",
    "missing.py": "no such file or directory",
    "nul.py": "file contains NUL bytes (binary file?)",
    "syntax.py": "syntax error at line 4",
}


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    make_tree(root)
    monkeypatch.chdir(root)
    return root


def test_everything_at_once_in_a_subprocess(tree: Path) -> None:
    before = snapshot(tree)
    result = subprocess.run(
        [PYTHON, "-m", "torchcopy_lint", "--select", "TCL001", "-j", "2", ".", "missing.py", "loop_a.py"],
        cwd=tree,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 2
    errors = result.stderr.splitlines()
    assert len(errors) == len(EXPECTED_ERRORS), result.stderr  # one line per bad input, however it was named
    got = {}
    for line in errors:
        path, sep, reason = line.partition(": cannot check: ")
        assert sep, line
        got[os.path.normpath(path)] = reason
    assert set(got) == set(EXPECTED_ERRORS)
    for path, reason in EXPECTED_ERRORS.items():
        assert got[path].startswith(reason), (path, got[path])
    findings = [line for line in result.stdout.splitlines() if ": TCL001 " in line]
    assert [line[: line.index("`.data`") + 7] for line in findings] == [f"bad.py:{FINDING}", f"sub/inner.py:{FINDING}"]
    assert result.stdout.endswith(f"Found 2 findings. {len(EXPECTED_ERRORS)} files could not be checked.\n[*] 2 fixable with --fix.\n")
    after = snapshot(tree)
    cache = str(tree / ".torchcopy_lint_cache")
    assert {path: value for path, value in after.items() if not path.startswith(cache)} == before


def test_second_run_with_warm_cache_reports_the_same(tree: Path) -> None:
    args = [PYTHON, "-m", "torchcopy_lint", "--select", "TCL001", "-j", "1", "."]
    first = subprocess.run(args, cwd=tree, env=cli_env(), capture_output=True, text=True, timeout=300)
    second = subprocess.run(args, cwd=tree, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert (second.returncode, second.stdout, second.stderr) == (first.returncode, first.stdout, first.stderr)
    assert first.returncode == 2


# -- one bad input next to a good file, in-process ------------------------------------


def check(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, list[str], list[str]]:
    code = main(["--no-cache", "--select", "TCL001", "-q", "-j", "1", *paths])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


@pytest.mark.parametrize("name", sorted(set(EXPECTED_ERRORS) - {"missing.py"}))
def test_each_bad_input_alone(tree: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    before = snapshot(tree)
    if name == "fifo.py":
        # Named explicitly a FIFO would be read (process substitution); found in a directory it is refused.
        only = tree / "only"
        only.mkdir()
        os.mkfifo(only / "fifo.py")
        (only / "ok.py").write_text(BAD, encoding="utf-8")
        code, out, err = check(capsys, "only")
        assert err == ["only/fifo.py: cannot check: not a regular file"]
        assert [line.split(":")[0] for line in out] == ["only/ok.py"]
        assert code == 2
        return
    code, out, err = check(capsys, name, "bad.py")
    assert len(err) == 1
    assert err[0].startswith(f"{name}: cannot check: {EXPECTED_ERRORS[name]}")
    assert [line.split(":")[0] for line in out] == ["bad.py"]
    assert code == 2
    assert snapshot(tree) == before


def test_missing_path(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, "bad.py", "no/such/dir", "missing.py")
    assert err == ["missing.py: cannot check: no such file or directory", "no/such/dir: cannot check: no such file or directory"]
    assert [line.split(":")[0] for line in out] == ["bad.py"]
    assert code == 2


def test_symlink_loop_inside_a_directory_only(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.py").symlink_to("b.py")
    (root / "b.py").symlink_to("a.py")
    (root / "loopdir").symlink_to(".")
    (root / "ok.py").write_text(BAD, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = check(capsys, "d")
    assert err == ["d/a.py: cannot check: symbolic link loop", "d/b.py: cannot check: symbolic link loop"]
    assert [line.split(":")[0] for line in out] == ["d/ok.py"]
    assert code == 2


def test_symlinked_file_is_checked_under_its_link_name(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "alias.py").symlink_to("bad.py")
    code, out, err = check(capsys, "alias.py")
    assert err == [] and [line.split(":")[0] for line in out] == ["alias.py"] and code == 1


def test_unreadable_file(tree: Path) -> None:
    secret = tree / "secret.py"
    secret.write_text(BAD, encoding="utf-8")
    secret.chmod(0)
    try:
        result = run_cli_unprivileged("--no-cache", "--select", "TCL001", "-q", "-j", "1", "secret.py", "bad.py", cwd=tree)
        assert result.stderr.splitlines() == ["secret.py: cannot check: permission denied"]
        assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["bad.py"]
        assert result.returncode == 2
    finally:
        secret.chmod(0o644)


def test_unreadable_directory(tree: Path) -> None:
    """A folder we may not list is one line; everything else is still checked (issue 9, item 1)."""
    locked = tree / "locked"
    locked.mkdir()
    (locked / "x.py").write_text(BAD, encoding="utf-8")
    locked.chmod(0)
    try:
        result = run_cli_unprivileged("--no-cache", "--select", "TCL001", "-q", "-j", "1", "locked", "bad.py", cwd=tree)
        assert result.stderr.splitlines() == ["locked: cannot check: permission denied"]
        assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["bad.py"]
        assert result.returncode == 2
    finally:
        locked.chmod(0o755)


def test_unreadable_directory_inside_a_walked_tree(tmp_path: Path) -> None:
    """`t/sub` at mode 000 inside `t`: the walk looked for `t/sub/pyvenv.cfg` and stopped the run."""
    root = tmp_path / "t"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text(BAD, encoding="utf-8")
    (root / "sub").chmod(0)
    try:
        for args in (["t"], ["t/sub", "t/a.py"]):  # inside a walk; and first on the command line (config search)
            result = run_cli_unprivileged("--no-cache", "--select", "TCL001", "-q", "-j", "1", *args, cwd=tmp_path)
            assert "internal error" not in result.stderr
            assert result.stderr.splitlines() == ["t/sub: cannot check: permission denied"], args
            assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["t/a.py"]
            assert result.returncode == 2
    finally:
        (root / "sub").chmod(0o755)


# -- inputs that are checked normally ---------------------------------------------------


def test_empty_file(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check(capsys, "empty.py") == (0, [], [])


def test_50000_line_file(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Statements and comments (all statements would take LibCST ~10 s on a busy machine).
    big = tree / "big.py"
    body = ("# filler\n" * 9 + "x = 1\n") * 2_500  # 25,000 lines
    big.write_text(BAD + body + "q.data.zero_()\n" + body + BAD, encoding="utf-8")
    assert big.read_text(encoding="utf-8").count("\n") == 50_007
    before = big.stat().st_mtime_ns, big.read_bytes()
    code, out, err = check(capsys, "big.py", "syntax.py")
    assert err == ["syntax.py: cannot check: syntax error at line 4" + err[0].split("line 4", 1)[1]]
    assert [line.split(": TCL001")[0] for line in out] == ["big.py:3:5", "big.py:25004:1", "big.py:50007:5"]
    assert code == 2
    assert (big.stat().st_mtime_ns, big.read_bytes()) == before


def test_a_file_over_the_size_limit_is_reported_not_checked(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 7 MB line took 121 s and 3.5 GB (issue 9, item 13): over the limit (default 4 MB) it is one line."""
    huge = tree / "huge.py"
    huge.write_text(BAD + "x = [" + "1, " * 1_700_000 + "]\n", encoding="utf-8")  # 5.1 MB, one line
    code, out, err = check(capsys, "huge.py", "bad.py")
    assert err == ["huge.py: cannot check: file too large (4.9 MB; the limit is 4.0 MB, see max-file-size)"]
    assert [line.split(":")[0] for line in out] == ["bad.py"] and code == 2


@pytest.mark.parametrize(
    ("args", "config", "refused"),
    [
        (["--max-file-size", "50"], "", True),
        (["--max-file-size", "1KB"], "", False),
        (["--max-file-size", "0"], 'max-file-size = "50"', False),  # 0: no limit; the flag wins
        ([], 'max-file-size = "50B"', True),
        ([], "max-file-size = 50", True),
    ],
)
def test_the_size_limit_is_configurable(tree: Path, capsys: pytest.CaptureFixture[str], args: list[str], config: str, refused: bool) -> None:
    (tree / "pyproject.toml").write_text(f"[tool.torchcopy-lint]\n{config}\n", encoding="utf-8")
    code, out, err = check(capsys, *args, "bad.py")
    assert (err == ["bad.py: cannot check: file too large (61 bytes; the limit is 50 bytes, see max-file-size)"]) is refused
    assert (out == []) is refused


def test_a_bad_size_limit_is_a_usage_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "pyproject.toml").write_text('[tool.torchcopy-lint]\nmax-file-size = "lots"\n', encoding="utf-8")
    code, out, err = check(capsys, "bad.py")
    assert code == 2 and len(err) == 1 and "max-file-size: not a size: 'lots'" in err[0]


@pytest.mark.parametrize(
    ("data", "position"),
    [
        (b"\xef\xbb\xbf" + BAD.encode(), "3:5"),  # UTF-8 BOM: stripped, columns unchanged
        (BAD.replace("\n", "\r\n").encode(), "3:5"),
        (BAD.replace("\n", "\r").encode(), "3:5"),
        (b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD.encode(), "5:5"),
        (b"#!/usr/bin/env python\n# vim: set fileencoding=utf-8 :\n" + BAD.encode(), "5:5"),
        (("# \u00e9\u00e8\U0001f600\n" + BAD.replace("p.data", "\u00e9.data").replace("for p", "for \u00e9")).encode(), "4:5"),
        (BAD.encode() + b"\\\n", None),  # backslash continuation at EOF: Python rejects it
        (BAD.rstrip("\n").encode(), "3:5"),  # no newline at the end
        (b"\n\n\n" + BAD.encode() + b"\n" * 1000, "6:5"),
        (b"\t\n" + BAD.replace("    ", "\t").encode(), "4:2"),
    ],
    ids=["bom", "crlf", "cr", "latin-1-cookie", "vim-cookie", "non-ascii", "continuation-at-eof", "no-final-newline", "blank-lines", "tabs"],
)
def test_unusual_but_valid_encodings_and_layouts(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, data: bytes, position: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.py").write_bytes(data)
    code, out, err = check(capsys, "f.py")
    assert not any("Traceback" in line for line in out + err)
    if position is None:
        assert code == 2 and len(err) == 1 and err[0].startswith("f.py: cannot check: ")
    else:
        assert err == []
        assert [line.split(": TCL001")[0] for line in out] == [f"f.py:{position}"]


def test_valid_code_that_python_rejects_only_when_run_is_still_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`return` outside a function parses (compile rejects it later): the file is linted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.py").write_text(BAD + "return 1\n", encoding="utf-8")
    code, out, err = check(capsys, "f.py")
    assert err == [] and [line.split(": TCL001")[0] for line in out] == ["f.py:3:5"]
