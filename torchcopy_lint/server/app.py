"""The Language Server: pygls wiring around :mod:`torchcopy_lint.server.linting`.

- Diagnostics are published when a document is opened or saved, and after a
  pause in typing (``DEFAULT_DEBOUNCE`` seconds after the last change; the
  client may set ``initializationOptions.debounce``). Linting runs in a worker
  thread so that the server keeps answering while it works.
- Each finding with a fix offers it as a quick fix (its text edits; the title
  says whether the fix is safe or unsafe), and ``source.fixAll.torchcopy-lint``
  applies every safe fix at once, as ``--fix`` would.
- Hovering a finding shows its rule's catalogue page.
- Positions: findings count characters (code points); the client gets the
  position encoding it negotiated (UTF-16 unless it offers another).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from torchcopy_lint import __version__
from torchcopy_lint.diagnostics import Finding
from torchcopy_lint.fixes.text_edits import TextEdit
from torchcopy_lint.links import rule_url
from torchcopy_lint.registry import all_rules
from torchcopy_lint.server.linting import DocumentReport, Item, fix_all_safe, lint_document

NAME = "torchcopy-lint"
FIX_ALL = "source.fixAll.torchcopy-lint"
DEFAULT_DEBOUNCE = 0.3  # seconds of quiet after the last change before linting


class TorchCopyLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.debounce = DEFAULT_DEBOUNCE
        self.reports: dict[str, tuple[int | None, str, DocumentReport]] = {}  # uri -> (version, text, report)
        self.pending: dict[str, asyncio.Task[None]] = {}

    # -- linting ---------------------------------------------------------------------

    async def lint(self, uri: str) -> tuple[int | None, str, DocumentReport]:
        """Lint the document as it is now (in a worker thread) and publish the result."""
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        report = await asyncio.get_running_loop().run_in_executor(None, lint_document, _path(uri), text)
        self.reports[uri] = (version, text, report)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=self.diagnostics(text, report)))
        return version, text, report

    def schedule(self, uri: str, delay: float) -> None:
        """Lint after ``delay`` seconds unless another change comes first (debounce)."""
        self.cancel(uri)

        async def later() -> None:
            await asyncio.sleep(delay)
            self.pending.pop(uri, None)
            await self.lint(uri)

        self.pending[uri] = asyncio.get_running_loop().create_task(later())

    def cancel(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()

    async def current(self, uri: str) -> tuple[str, DocumentReport]:
        """The report for the document's current text (linting again if it changed since)."""
        document = self.workspace.get_text_document(uri)
        known = self.reports.get(uri)
        if known is None or known[0] != document.version or known[1] != document.source:
            self.cancel(uri)
            known = await self.lint(uri)
        return known[1], known[2]

    # -- positions ---------------------------------------------------------------------

    def position(self, lines: list[str], line: int, column: int) -> types.Position:
        """1-based line and character column -> the client's position encoding."""
        return self.workspace.position_codec.position_to_client_units(lines, types.Position(line=max(line - 1, 0), character=max(column - 1, 0)))

    def span(self, lines: list[str], line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(start=self.position(lines, line, column), end=self.position(lines, end_line, end_column))

    def text_edit(self, lines: list[str], edit: TextEdit) -> types.TextEdit:
        return types.TextEdit(range=self.span(lines, edit.line, edit.column, edit.end_line, edit.end_column), new_text=edit.text)

    # -- what the client sees ------------------------------------------------------------

    def diagnostic(self, lines: list[str], finding: Finding) -> types.Diagnostic:
        rule = all_rules().get(finding.code)
        return types.Diagnostic(
            range=self.span(lines, finding.line, finding.column, finding.end_line, finding.end_column),
            severity=types.DiagnosticSeverity.Warning,
            code=finding.code,
            code_description=types.CodeDescription(href=rule_url(rule.spec.path.name)) if rule else None,
            source=NAME,
            message=finding.message,
            data={"fix": finding.fix},
        )

    def diagnostics(self, text: str, report: DocumentReport) -> list[types.Diagnostic]:
        lines = text.split("\n")
        found = [self.diagnostic(lines, item.finding) for item in report.items]
        if report.error is not None:
            line, column = report.error.line or 1, report.error.column or 1
            found.append(
                types.Diagnostic(range=self.span(lines, line, column, line, column), severity=types.DiagnosticSeverity.Error, source=NAME, code="cannot-check", message=f"cannot check: {report.error.reason}")
            )
        if report.config_error is not None:
            found.append(types.Diagnostic(range=self.span(lines, 1, 1, 1, 1), severity=types.DiagnosticSeverity.Error, source=NAME, code="config", message=f"configuration ignored: {report.config_error}"))
        return found

    def quick_fix(self, uri: str, lines: list[str], item: Item) -> types.CodeAction:
        finding = item.finding
        title = f"Fix {finding.code} ({finding.name}): {finding.fix} fix"
        if finding.fix == "unsafe":
            title += ", review it: it may change what correct code does"
        return types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[self.diagnostic(lines, finding)],
            edit=types.WorkspaceEdit(changes={uri: [self.text_edit(lines, edit) for edit in item.edits]}),
            is_preferred=finding.fix == "safe",
        )

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        text, report = await self.current(uri)
        lines = text.split("\n")
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            for item in report.items:
                if item.edits and _overlaps(self.span(lines, item.finding.line, item.finding.column, item.finding.end_line, item.finding.end_column), params.range):
                    actions.append(self.quick_fix(uri, lines, item))
        if _wants(wanted, FIX_ALL) and any(item.finding.fix == "safe" for item in report.items):
            edits = await asyncio.get_running_loop().run_in_executor(None, fix_all_safe, _path(uri), text)
            if edits:
                actions.append(types.CodeAction(title="torchcopy-lint: fix all safely fixable findings", kind=FIX_ALL, edit=types.WorkspaceEdit(changes={uri: [self.text_edit(lines, edit) for edit in edits]})))
        return actions

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        text, report = await self.current(params.text_document.uri)
        lines = text.split("\n")
        for item in report.items:
            finding = item.finding
            span = self.span(lines, finding.line, finding.column, finding.end_line, finding.end_column)
            if _contains(span, params.position):
                rule = all_rules()[finding.code]
                state = "on by default" if rule.spec.default else "opt-in"
                header = f"**{finding.code}** `{rule.spec.name}` ({state}; fix: {rule.spec.fix})\n\n{finding.message}\n\n---\n\n"
                return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=header + rule.spec.body), range=span)
        return None


def _path(uri: str) -> Path | None:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _wants(only: list[str] | None, kind: str) -> bool:
    """Whether a code action of ``kind`` is asked for (``only`` lists kinds or their parents)."""
    return only is None or any(kind == asked or kind.startswith(asked + ".") for asked in only)


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def _overlaps(span: types.Range, asked: types.Range) -> bool:
    return not _before(span.end, asked.start) and not _before(asked.end, span.start)


def _contains(span: types.Range, position: types.Position) -> bool:
    return not _before(position, span.start) and not _before(span.end, position)


def build_server() -> TorchCopyLintServer:
    server = TorchCopyLintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchCopyLintServer, params: types.InitializeParams) -> None:
        options: Any = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)) and options["debounce"] >= 0:
            ls.debounce = float(options["debounce"])

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: TorchCopyLintServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.lint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchCopyLintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: TorchCopyLintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.cancel(params.text_document.uri)
        await ls.lint(params.text_document.uri)  # the saved file's configuration may have changed too

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchCopyLintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel(uri)
        ls.reports.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    async def code_action(ls: TorchCopyLintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TorchCopyLintServer, params: types.HoverParams) -> types.Hover | None:
        return await ls.hover(params)

    return server
