"""``torchcopy-lint server``: the real server process, driven over stdio by pygls' LSP client.

Each test starts the server (``python -m torchcopy_lint server``), initializes it
as an editor would, and talks to it with real LSP messages.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from conftest import cli_env
from torchcopy_lint.fixes.apply import fix_bytes
from torchcopy_lint.fixes.text_edits import TextEdit, apply_edits
from torchcopy_lint.registry import all_rules

BAD = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n"
TIMEOUT = 60


class Editor:
    """An LSP client that records every publishDiagnostics it is sent."""

    def __init__(self) -> None:
        self.client = LanguageClient("test-editor", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.arrived = asyncio.Condition()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def published(params: types.PublishDiagnosticsParams) -> None:
            async with self.arrived:
                self.published.setdefault(params.uri, []).append(params)
                self.arrived.notify_all()

    async def start(self, root: Path, debounce: float | None = None, encodings: list[str] | None = None) -> types.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "torchcopy_lint", "server", env=cli_env(), cwd=str(root))
        capabilities = types.ClientCapabilities(general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None)
        result = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(capabilities=capabilities, root_uri=from_fs_path(str(root)), initialization_options={"debounce": debounce} if debounce is not None else None)
            ),
            TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await self.client.stop()

    async def diagnostics(self, uri: str, count: int = 1) -> types.PublishDiagnosticsParams:
        """Wait for the ``count``-th publication for ``uri``; return it."""
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: len(self.published.get(uri, [])) >= count), TIMEOUT)
            return self.published[uri][count - 1]

    def open(self, path: Path, text: str) -> str:
        uri = from_fs_path(str(path))
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return uri


def session(test: Callable[[Editor], Awaitable[None]], root: Path, **options: Any) -> None:
    async def body() -> None:
        editor = Editor()
        await editor.start(root, **options)
        try:
            await test(editor)
        finally:
            await editor.stop()

    asyncio.run(body())


def as_edits(edits: list[types.TextEdit]) -> list[TextEdit]:
    """LSP edits (0-based, UTF-16) back to 1-based character edits, for ASCII test text."""
    return [TextEdit(e.range.start.line + 1, e.range.start.character + 1, e.range.end.line + 1, e.range.end.character + 1, e.new_text) for e in edits]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


# -- diagnostics ------------------------------------------------------------------------------


def test_diagnostics_on_open_with_code_link_and_utf16_positions(project: Path) -> None:
    prefix = 's = "\U0001f525"; \u00e9 = 2; '  # an astral character counts 2 UTF-16 units, \u00e9 one
    text = f"import torch\n{prefix}w.data.zero_()\n"
    assert len(prefix) == 16 and len(prefix.encode("utf-16-le")) // 2 == 17

    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", text)
        published = await editor.diagnostics(uri)
        (diagnostic,) = published.diagnostics
        assert (diagnostic.code, diagnostic.source, diagnostic.severity) == ("TCL001", "torchcopy-lint", types.DiagnosticSeverity.Warning)
        assert diagnostic.code_description.href.endswith("/rules/TCL001-data-mutation.md")
        assert (diagnostic.range.start.line, diagnostic.range.start.character) == (1, 17)
        assert (diagnostic.range.end.line, diagnostic.range.end.character) == (1, 17 + len("w.data.zero_()"))
        assert published.version == 1

    session(test, project)


def test_utf8_positions_when_the_client_prefers_them(project: Path) -> None:
    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", "import torch\n\u00e9 = 1; w.data.zero_()\n")
        (diagnostic,) = (await editor.diagnostics(uri)).diagnostics
        assert diagnostic.range.start.character == len("\u00e9 = 1; ".encode())

    session(test, project, encodings=["utf-8", "utf-16"])


def test_changes_are_debounced_and_saves_lint_at_once(project: Path) -> None:
    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", "import torch\n")
        assert not (await editor.diagnostics(uri)).diagnostics
        text = "import torch\n"
        for version, line in enumerate(["a.data.add_(1)\n", "b.data.add_(1)\n", "c.data.add_(1)\n"], start=2):
            end = types.Position(line=text.count("\n"), character=0)
            text += line
            editor.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=end, end=end), text=line)],
                )
            )
        published = await editor.diagnostics(uri, 2)
        assert published.version == 4  # one publication, for the text after the last change
        assert [d.range.start.line for d in published.diagnostics] == [1, 2, 3]
        editor.client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        assert len((await editor.diagnostics(uri, 3)).diagnostics) == 3
        assert len(editor.published[uri]) == 3

    session(test, project, debounce=1.0)


def test_nearest_configuration_and_per_file_ignores(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.torchcopy-lint]\nper-file-ignores = { "tests/*" = ["TCL001"] }\n', encoding="utf-8")
    (project / "tests").mkdir()
    (project / "strict").mkdir()
    (project / "strict" / "pyproject.toml").write_text('[tool.torchcopy-lint]\nextend-select = ["TCL101"]\n', encoding="utf-8")
    source = "import torch\n\ndef f(x: torch.Tensor):\n    y = x.data\n    x.data.zero_()\n"

    async def test(editor: Editor) -> None:
        plain = editor.open(project / "m.py", source)
        ignored = editor.open(project / "tests" / "test_m.py", source)
        strict = editor.open(project / "strict" / "m.py", source)
        assert [d.code for d in (await editor.diagnostics(plain)).diagnostics] == ["TCL001"]
        assert [d.code for d in (await editor.diagnostics(ignored)).diagnostics] == []
        assert sorted(d.code for d in (await editor.diagnostics(strict)).diagnostics) == ["TCL001", "TCL101"]

    session(test, project)


def test_a_syntax_error_is_one_error_diagnostic(project: Path) -> None:
    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", "import torch\ndef f(:\n")
        (diagnostic,) = (await editor.diagnostics(uri)).diagnostics
        assert diagnostic.severity == types.DiagnosticSeverity.Error and diagnostic.message.startswith("cannot check: syntax error")
        assert diagnostic.range.start.line == 1

    session(test, project)


# -- code actions and hover ------------------------------------------------------------------


def test_quick_fixes_carry_each_findings_edit_and_its_safety(project: Path) -> None:
    text = "import torch\n\ndef f(model, t: torch.Tensor):\n    for p in model.parameters():\n        p.data.add_(1)\n    return torch.Tensor(t)\n"

    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", text)
        diagnostics = (await editor.diagnostics(uri)).diagnostics
        assert [d.code for d in diagnostics] == ["TCL001", "TCL002"]
        whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=6, character=0))
        actions = await asyncio.wait_for(
            editor.client.text_document_code_action_async(
                types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri), range=whole, context=types.CodeActionContext(diagnostics=diagnostics, only=[types.CodeActionKind.QuickFix]))
            ),
            TIMEOUT,
        )
        titles = [action.title for action in actions]
        assert titles == ["Fix TCL001 (data-mutation): safe fix", "Fix TCL002 (tensor-copy-construct): unsafe fix, review it: it may change what correct code does"]
        assert [action.is_preferred for action in actions] == [True, False]
        for action, code in zip(actions, ("TCL001", "TCL002")):
            fixed = apply_edits(text, as_edits(action.edit.changes[uri]))
            assert fixed == fix_bytes(text.encode(), "a.py", {code}, unsafe=True).fixed.decode()
            assert action.diagnostics[0].code == code

    session(test, project)


def test_fix_all_applies_every_safe_fix_like_fix(project: Path) -> None:
    text = "import torch\nfor p in model.parameters():\n    p.data.add_(1)\n    p.data.mul_(2)\nt = torch.zeros(2)\nx = torch.Tensor(t)\n"

    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", text)
        await editor.diagnostics(uri)
        nowhere = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
        actions = await asyncio.wait_for(
            editor.client.text_document_code_action_async(
                types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri), range=nowhere, context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"]))
            ),
            TIMEOUT,
        )
        (action,) = actions
        assert action.kind == "source.fixAll.torchcopy-lint"
        fixed = apply_edits(text, as_edits(action.edit.changes[uri]))
        default = {code for code, rule in all_rules().items() if rule.spec.default}
        assert fixed == fix_bytes(text.encode(), "a.py", default, unsafe=False).fixed.decode()
        assert "with torch.no_grad():" in fixed and "x = torch.Tensor(t)" in fixed  # the unsafe TCL002 fix is left to the user

    session(test, project)


def test_server_advertises_its_capabilities(project: Path) -> None:
    async def test(editor: Editor) -> None:
        pass

    async def body() -> None:
        editor = Editor()
        result = await editor.start(project)
        try:
            capabilities = result.capabilities
            assert result.server_info.name == "torchcopy-lint"
            assert capabilities.hover_provider
            assert set(capabilities.code_action_provider.code_action_kinds) == {"quickfix", "source.fixAll.torchcopy-lint"}
            sync = capabilities.text_document_sync
            assert sync.open_close and sync.change == types.TextDocumentSyncKind.Incremental and sync.save
            assert capabilities.position_encoding == types.PositionEncodingKind.Utf16
        finally:
            await editor.stop()

    asyncio.run(body())


def test_hover_shows_the_rules_page(project: Path) -> None:
    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", BAD)
        (diagnostic,) = (await editor.diagnostics(uri)).diagnostics
        hover = await asyncio.wait_for(
            editor.client.text_document_hover_async(types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=8))), TIMEOUT
        )
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert hover.contents.value.startswith("**TCL001** `data-mutation`")
        assert all_rules()["TCL001"].spec.body in hover.contents.value
        assert hover.range == diagnostic.range
        outside = await asyncio.wait_for(
            editor.client.text_document_hover_async(types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))), TIMEOUT
        )
        assert outside is None

    session(test, project)


def test_close_clears_the_diagnostics(project: Path) -> None:
    async def test(editor: Editor) -> None:
        uri = editor.open(project / "a.py", BAD)
        assert (await editor.diagnostics(uri)).diagnostics
        editor.client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        assert not (await editor.diagnostics(uri, 2)).diagnostics

    session(test, project)


def test_without_pygls_the_server_names_the_extra_to_install(project: Path) -> None:
    import subprocess

    code = "import sys; sys.modules['pygls'] = None\nfrom torchcopy_lint.cli import main\nsys.exit(main(['server']))\n"
    result = subprocess.run([sys.executable, "-c", code], cwd=project, env=cli_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2
    assert result.stderr.strip() == "torchcopy-lint server: needs pygls (pygls is missing): pip install 'torchcopy-lint[server]'"
