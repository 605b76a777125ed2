"""Jupyter notebooks, linted natively: real notebooks written by nbformat, checked and fixed
through the command line; IPython syntax neutralised in place; the JSON kept as it was."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import nbformat
import pytest

from conftest import REPO, run_main
from torchcopy_lint.notebook import Notebook, NotebookError

SCHEMA = json.loads((REPO / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def code(source: str, **extra: object) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, **extra)


def markdown(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(source)


def write_notebook(path: Path, *cells: nbformat.NotebookNode, language: str = "python") -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "k", "display_name": "K", "language": language}
    notebook.cells = list(cells)
    nbformat.write(notebook, str(path))
    return path


TRAIN = (
    markdown("# Training"),
    code("import torch\nmodel = torch.nn.Linear(2, 2)", execution_count=1),
    code(
        "for p in model.parameters():\n    p.data.add_(1)\n    p.data.mul_(2)",
        execution_count=2,
        outputs=[nbformat.v4.new_output("stream", name="stdout", text="done\n")],
    ),
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_main(capsys, "--no-cache", "-j", "1", *args)


# -- checking ----------------------------------------------------------------------------------


def test_a_notebook_with_data_writes_is_not_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 12 bug 1: the notebook's JSON once parsed as a Python dict literal and passed."""
    write_notebook(project / "train.ipynb", *TRAIN)
    status, out, err = run(capsys, "train.ipynb")
    assert (status, err) == (1, "")
    assert out.splitlines()[:2] == [
        'train.ipynb:cell 3:2:5: TCL001 in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): p.add_(...)"',
        'train.ipynb:cell 3:3:5: TCL001 in-place write through `.data` is invisible to autograd; use "with torch.no_grad(): p.mul_(...)"',
    ]


def test_directories_include_notebooks(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "nbs").mkdir()
    write_notebook(project / "nbs" / "a.ipynb", *TRAIN)
    (project / "nbs" / "b.py").write_text("import torch\nq.data.zero_()\n", encoding="utf-8")
    (project / "nbs" / ".ipynb_checkpoints").mkdir()
    write_notebook(project / "nbs" / ".ipynb_checkpoints" / "a-checkpoint.ipynb", *TRAIN)  # Jupyter's autosave copy: skipped
    status, out, _ = run(capsys, "--select", "TCL001", ".")
    assert status == 1
    assert [line.split(": ")[0] for line in out.splitlines() if ": TCL001" in line] == ["nbs/a.ipynb:cell 3:2:5", "nbs/a.ipynb:cell 3:3:5", "nbs/b.py:2:1"]


def test_ipython_syntax_is_neutralised_without_moving_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(
        project / "magic.ipynb",
        code("import torch\n%matplotlib inline\n!pip install foo\nfiles = !ls\nt = %time torch.zeros(2)\ntorch.tensor?\n??torch.zeros\nw.data.zero_()"),
        code("%%time\nfor p in ps:\n    %time p.data.add_(1)\n    p.data.mul_(2)"),
        code("%%bash\nx.data.add_(1)\necho done"),  # not Python: nothing in it is reported
        code("%%capture out\nq.data.sub_(1)"),
        code("for x in xs:\n    !echo {x}\n    x.data.zero_()  # after an indented shell escape"),
    )
    status, out, err = run(capsys, "--select", "TCL001", "magic.ipynb")
    assert (status, err) == (1, "")
    assert [line.split(": TCL001")[0] for line in out.splitlines() if ": TCL001" in line] == [
        "magic.ipynb:cell 1:8:1",
        "magic.ipynb:cell 2:4:5",
        "magic.ipynb:cell 4:2:1",
        "magic.ipynb:cell 5:3:5",
    ]


def test_the_neutralised_source_keeps_every_line_and_column() -> None:
    cells = ["import torch\n  %time f()\nx = !ls\nobj?", "%%bash\nls -l", "a.data.add_(1)"]
    notebook = Notebook(nbformat.writes(nbformat.v4.new_notebook(cells=[code(c) for c in cells])).encode())
    assert notebook.source == "import torch\n  pass\nx = ...\npass\n\n\na.data.add_(1)\n"
    assert [notebook.locate(line) for line in (1, 4, 5, 6, 7)] == [(1, 1), (1, 4), (2, 1), (2, 2), (3, 1)]


def test_machine_formats_carry_the_cell(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(project / "train.ipynb", *TRAIN)
    _, out, _ = run(capsys, "--select", "TCL001", "--output-format", "json", "train.ipynb")
    assert [(r["path"], r["cell"], r["line"], r["column"]) for r in json.loads(out)] == [("train.ipynb", 3, 2, 5), ("train.ipynb", 3, 3, 5)]
    _, out, _ = run(capsys, "--select", "TCL001", "--output-format", "sarif", "train.ipynb")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]
    assert location["properties"] == {"cell": 3}
    assert location["physicalLocation"]["region"]["startLine"] == 2
    _, out, _ = run(capsys, "--select", "TCL001", "--output-format", "full", "train.ipynb")
    assert "2 |     p.data.add_(1)" in out.splitlines()


def test_stdin_with_a_notebook_name(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import sys

    text = nbformat.writes(nbformat.v4.new_notebook(cells=list(TRAIN)))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    status, out, _ = run(capsys, "--select", "TCL001", "--stdin-filename", "nb.ipynb", "-")
    assert status == 1 and out.startswith("nb.ipynb:cell 3:2:5: TCL001 ")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "nb.ipynb: cannot check: not a notebook: invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes"),
        ("[1, 2]", "nb.ipynb: cannot check: not a Jupyter notebook: no 'cells' list"),
        ('{"worksheets": [], "nbformat": 3}', "nb.ipynb: cannot check: not a Jupyter notebook: no 'cells' list (nbformat 3 notebooks are not supported)"),
        ('{"cells": [{"cell_type": "code", "source": 3}]}', "nb.ipynb: cannot check: not a Jupyter notebook: cell 1 has no text 'source'"),
        (b"\xff\xfe{}", "nb.ipynb: cannot check: not a notebook: not UTF-8 (invalid byte 0xff at offset 0)"),
    ],
)
def test_a_file_that_is_not_a_notebook_is_one_line_and_the_rest_is_checked(project: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, reason: str) -> None:
    (project / "nb.ipynb").write_bytes(content if isinstance(content, bytes) else content.encode())
    write_notebook(project / "train.ipynb", *TRAIN)
    status, out, err = run(capsys, "--select", "TCL001", "nb.ipynb", "train.ipynb")
    assert status == 2
    assert err == reason + "\n"
    assert out.count(": TCL001 ") == 2


def test_a_syntax_error_names_its_cell(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(project / "nb.ipynb", code("import torch"), markdown("text"), code("x = 1\ndef f(:\n    pass"))
    status, _, err = run(capsys, "nb.ipynb")
    assert status == 2
    assert err.startswith("nb.ipynb: cannot check: syntax error in cell 3 at line 2")


def test_a_notebook_for_another_language_is_not_python(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_notebook(project / "r.ipynb", code("x.data.add_(1)\nlibrary(torch)"), language="R")
    assert run(capsys, "r.ipynb")[0] == 0


# -- fixing ------------------------------------------------------------------------------------


def test_fix_rewrites_only_the_code_and_keeps_everything_else(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_notebook(project / "train.ipynb", *TRAIN, code("%time x = 1\n!ls"))
    before = path.read_text(encoding="utf-8")
    status, out, _ = run(capsys, "--fix", "train.ipynb")
    assert status == 0, out
    after = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(after, as_version=4)
    nbformat.validate(notebook)
    original = nbformat.reads(before, as_version=4)
    assert notebook.cells[2].source == "for p in model.parameters():\n    with torch.no_grad():\n        p.add_(1)\n        p.mul_(2)"
    for index in (0, 1, 3):
        assert notebook.cells[index] == original.cells[index]
    assert notebook.cells[2].outputs == original.cells[2].outputs and notebook.cells[2].execution_count == 2
    assert notebook.metadata == original.metadata
    # The JSON layout is nbformat's own: writing the fixed notebook with nbformat changes nothing.
    assert nbformat.writes(notebook) + "\n" == after
    assert run(capsys, "train.ipynb")[0] == 0


def test_fix_keeps_an_unusual_json_layout(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Indent 2, keys not sorted, ASCII escapes, no trailing newline, a source kept as one string."""
    data = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "cells": [
            {"source": "import torch\nfor p in ps:\n    p.data.add_(1)  # caf\u00e9", "cell_type": "code", "outputs": [], "metadata": {"z": 1, "a": 2}, "execution_count": None, "id": "c1"}
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
    }
    text = json.dumps(data, indent=2, ensure_ascii=True)
    (project / "odd.ipynb").write_text(text, encoding="utf-8")
    assert run(capsys, "--fix", "odd.ipynb")[0] == 0
    expected = dict(data)
    expected["cells"] = [dict(data["cells"][0], source="import torch\nfor p in ps:\n    with torch.no_grad():\n        p.add_(1)  # caf\u00e9")]
    assert (project / "odd.ipynb").read_text(encoding="utf-8") == json.dumps(expected, indent=2, ensure_ascii=True)


def test_an_added_import_joins_the_cell_above(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_notebook(
        project / "snap.ipynb",
        code("import torch"),
        code("model = torch.nn.Linear(2, 2)\nbest = model.state_dict()\nwith torch.no_grad():\n    for p in model.parameters():\n        p.mul_(0.9)\nprint(best)"),
    )
    status, out, _ = run(capsys, "--select", "TCL004", "--fix", "snap.ipynb")
    assert status == 0, out
    cells = nbformat.read(str(path), as_version=4).cells
    assert cells[0].source == "import torch\nimport copy"
    assert cells[1].source.splitlines()[1] == "best = copy.deepcopy(model.state_dict())"


def test_diff_shows_the_changed_cells(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_notebook(project / "train.ipynb", *TRAIN)
    before = path.read_bytes()
    status, out, _ = run(capsys, "--diff", "train.ipynb")
    assert status == 1 and path.read_bytes() == before
    assert out.splitlines()[:2] == ["--- train.ipynb:cell 3", "+++ train.ipynb:cell 3"]
    assert "+    with torch.no_grad():" in out.splitlines()


def test_a_fix_never_touches_a_magic_line() -> None:
    notebook = Notebook(nbformat.writes(nbformat.v4.new_notebook(cells=[code("a = 1\n%time b = 2\nc = 3")])).encode())
    with pytest.raises(NotebookError, match="IPython magic"):
        notebook.cell_texts(notebook.source.replace("pass\n", "d = 4\n"))
    assert notebook.cell_texts(notebook.source.replace("c = 3", "c = 4")) == {1: "a = 1\n%time b = 2\nc = 4"}
