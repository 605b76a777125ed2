"""`--fix` and the file system: links, owners, read-only files, failed writes, odd syntax (issue 9 items 2, 3, 9, 10)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from conftest import cli_env
from unprivileged import run_cli_unprivileged

BAD = "import torch\nfor p in m.parameters():\n    p.data.zero_()\n"
FIXED = "import torch\nfor p in m.parameters():\n    with torch.no_grad():\n        p.zero_()\n"


def fix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torchcopy_lint", "--no-cache", "-j", "1", "--fix", *args], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=300)


def test_a_symlink_is_fixed_through_to_its_target(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "pkg").mkdir()
    real = tmp_path / "shared" / "util.py"
    real.write_text(BAD)
    link = tmp_path / "pkg" / "util.py"
    link.symlink_to("../shared/util.py")
    result = fix("pkg", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert link.is_symlink() and os.readlink(link) == "../shared/util.py"
    assert real.read_text() == FIXED
    assert sorted(p.name for p in (tmp_path / "shared").iterdir()) == ["util.py"]  # no temporary file left


def test_a_symlink_and_its_target_named_together_are_fixed_once(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text(BAD)
    (tmp_path / "alias.py").symlink_to("real.py")
    result = fix("real.py", "alias.py", cwd=tmp_path)
    assert result.returncode == 0 and "Fixed 1 finding in 1 file" in result.stdout
    assert (tmp_path / "real.py").read_text() == FIXED


def test_hard_links_are_kept(tmp_path: Path) -> None:
    first = tmp_path / "a.py"
    first.write_text(BAD)
    second = tmp_path / "b.py"
    os.link(first, second)
    assert fix("a.py", cwd=tmp_path).returncode == 0
    assert first.stat().st_ino == second.stat().st_ino and first.stat().st_nlink == 2
    assert second.read_text() == FIXED


def test_owner_group_and_mode_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text(BAD)
    target.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(target, 4321, 4322)  # another user's file, fixed by root
    before = target.stat()
    assert fix("a.py", cwd=tmp_path).returncode == 0
    after = target.stat()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (before.st_uid, before.st_gid, 0o640)
    assert target.read_text() == FIXED


def test_a_read_only_file_is_left_alone_with_a_clear_line(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text(BAD)
    target.chmod(0o444)
    result = fix("a.py", cwd=tmp_path)  # also as root, who could write it
    assert target.read_text() == BAD
    assert result.stderr.splitlines() == ["a.py: cannot fix: file is read-only; left unchanged (make it writable to fix it)"]
    assert result.stdout.splitlines()[0].startswith("a.py:3:5: TCL001")  # its finding is still reported
    assert result.stdout.splitlines()[-1] == "Fixed 0 findings in 0 files; 1 remaining."
    assert result.returncode == 2


def test_a_failed_write_is_not_reported_as_fixed(tmp_path: Path) -> None:
    """A read-only folder: the file cannot be replaced; the summary must not say it was fixed (item 3)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "a.py"
    target.write_text(BAD)
    folder.chmod(0o555)
    try:
        result = run_cli_unprivileged("--no-cache", "-j", "1", "--fix", "ro/a.py", cwd=tmp_path)
    finally:
        folder.chmod(0o755)
    assert target.read_text() == BAD
    assert result.stderr.splitlines() == ["ro/a.py: cannot fix: cannot write the fixed file: Permission denied; left unchanged"]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ro/a.py:3:5: TCL001") and lines[-1] == "Fixed 0 findings in 0 files; 1 remaining."
    assert result.returncode == 2
    assert sorted(p.name for p in folder.iterdir()) == ["a.py"]


def test_syntax_newer_than_this_python_is_fixed(tmp_path: Path) -> None:
    """PEP 758 `except A, B:` (Python 3.14) parsed by LibCST: fix it, never 'fixed code does not compile' (item 9)."""
    header = "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n"
    target = tmp_path / "new.py"
    target.write_text(header + BAD)
    result = fix("new.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == header + FIXED


def test_findings_are_reported_when_the_fix_fails(tmp_path: Path) -> None:
    """The fix is refused (LibCST would drop a form feed on line 4): the findings still show (item 9)."""
    target = tmp_path / "ff.py"
    source = "import torch\nfor p in m.parameters():\n    x = 1\n\f    p.data.zero_()\n"
    target.write_text(source)
    result = fix("ff.py", cwd=tmp_path)
    assert target.read_text() == source
    assert result.stderr.splitlines() == ["ff.py: cannot fix: LibCST would not write this file back unchanged (line 4), e.g. a form feed in indentation; file left unchanged"]
    assert result.stdout.splitlines()[0].startswith("ff.py:4:5: TCL001")  # as checking reports it
    assert result.returncode == 2


def test_a_form_feed_in_indentation_is_kept(tmp_path: Path) -> None:
    """`\\f    ` indents the block: new blocks must not repeat the form feed (Python resets the column there) (item 10)."""
    target = tmp_path / "ff.py"
    target.write_text("import torch\nfor p in m.parameters():\n\f    p.data.zero_()\nq = 1\n")
    result = fix("ff.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "import torch\nfor p in m.parameters():\n\f    with torch.no_grad():\n\f        p.zero_()\nq = 1\n"


def test_diff_keeps_form_feeds_inside_lines(tmp_path: Path) -> None:
    target = tmp_path / "ff.py"
    target.write_text("import torch\nfor p in m.parameters():\n\f    p.data.zero_()\n")
    result = subprocess.run([sys.executable, "-m", "torchcopy_lint", "--no-cache", "--diff", "ff.py"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert "-\f    p.data.zero_()\n+\f    with torch.no_grad():\n" in result.stdout
