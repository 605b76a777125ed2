"""Checking one file: :class:`FileRun`, the one per-file pipeline that check, fix, flake8 and editors share.

decode -> Python's own syntax check (``ast``) -> the structural screen on that tree
(:mod:`torchcopy_lint.screen`: which rules may fire here) -> one LibCST parse, only
when some rule may -> those rules in one walk (:func:`analyse`) -> findings with their fixes, noqa
applied or not. Each stage runs at most once per run and only when needed; a
stage that cannot go on raises :class:`CannotCheck` with a one-line reason.

``lint_source`` is the simple entry point (tests, ``verify``, the flake8
plugin); :mod:`torchcopy_lint.parallel` spreads files over worker processes.
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from torchcopy_lint.lazy import cst

from torchcopy_lint.diagnostics import FileError, FileResult, Finding
from torchcopy_lint.noqa import exempt_prefixes, is_suppressed, noqa_warnings, suppressions
from torchcopy_lint.registry import Rule, all_rules
from torchcopy_lint.selection import without
from torchcopy_lint.source import (
    DEFAULT_MAX_FILE_SIZE,
    CannotCheck,
    check_size,
    decode,
    parse_cst,
    python_ast,
    refuse_what_crashes_libcst,
    syntax_error,
)

if TYPE_CHECKING:  # the model and the checkers load when a file is analysed, not for a cache hit
    from torchcopy_lint.context import FileContext, RawFinding

__all__ = ["CannotCheck", "FileRun", "analyse", "check_bytes", "decode", "lint_source", "rules_for"]

_RECURSION_LIMIT = 20_000
# Set in torchcopy-lint's own processes (the CLI and its workers), never by a library call
# (flake8's process, an editor's server): see freeze_heap_after_imports.
_freeze_pending = False


def freeze_heap_after_imports() -> None:
    """Take the garbage collector over in this process (:mod:`torchcopy_lint.heap`): now,
    and again at the first :func:`analyse`, once the checkers and analyses are imported,
    so that their modules are frozen too. Only for processes this tool owns."""
    global _freeze_pending
    from torchcopy_lint import heap

    heap.own_process()
    _freeze_pending = True


def _freeze_once(rules: Sequence[Rule]) -> None:
    global _freeze_pending
    if _freeze_pending:
        _freeze_pending = False
        from torchcopy_lint import heap

        heap.own_process(rule.checker for rule in rules)  # imports each checker's module first


def rules_for(codes: Iterable[str]) -> list[Rule]:
    """The registered rules for ``codes``, in code order (unknown codes are skipped)."""
    rules = all_rules()
    return [rules[code] for code in sorted(codes) if code in rules]


def analyse(module: cst.Module, path: str, rules: Sequence[Rule]) -> FileContext:
    """Build the semantic model (one walk), then run the rules' checkers (a second walk)."""
    from torchcopy_lint.context import FileContext
    from torchcopy_lint.walker import Walker

    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    _freeze_once(rules)
    try:
        ctx = FileContext(path, module)  # pass 1: the semantic model
        checkers = [rule.checker(ctx, rule.spec) for rule in rules]
        walker = Walker([*ctx.participants, *checkers])
        ctx.walker = walker
        walker.walk(module)  # pass 2: the checkers
        ctx.run_deferred()
    except RecursionError:
        raise CannotCheck("too deeply nested to analyse") from None
    return ctx


def noqa_table(text: str) -> dict[int, frozenset[str] | None]:
    # Python's own line breaks only: str.splitlines() also splits at \f, \v, \x1c-\x1e,
    # \x85 and \u2028/9, which would shift every later noqa comment by a line.
    return suppressions(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _one_line(message: str) -> str:
    """Messages quote code, which can span lines (``(a +\n b).data``); a finding is one line."""
    return " ".join(part.strip() for part in message.splitlines()) if "\n" in message or "\r" in message else message


class FileRun:
    """One file's way through the checker; each stage runs at most once, when first needed.

    Build it from the file's bytes (:meth:`from_bytes`: the size guard and the
    file's own encoding apply) or from text already decoded (:meth:`from_text`:
    an editor buffer, flake8's lines, a test snippet; flake8 also hands in its
    ``ast`` tree). Then ask for :meth:`findings`, :meth:`located` (each finding
    with the raw finding that holds its fix), :meth:`fixable` or :meth:`result`.
    The fixer re-analyses its edited tree through :meth:`edited`.

    The stages, in order: :attr:`text` (decode), :meth:`check_syntax`
    (Python's parser; fills :attr:`tree`), :attr:`candidates` (the rules whose
    screen admits the file), :attr:`context` (the analysis: of a tree built from
    ``ast`` first, then, only if that reports, of :attr:`module`, one LibCST parse).
    ``screen=False`` runs every rule asked for on LibCST's tree (the screen's own test).
    """

    def __init__(
        self,
        path: str,
        rules: Sequence[Rule],
        *,
        data: bytes | None = None,
        text: str | None = None,
        tree: ast.Module | None = None,
        module: cst.Module | None = None,
        max_file_size: int | None = DEFAULT_MAX_FILE_SIZE,
        keep_bytes: bool = False,
        file_noqa: bool = True,
        screen: bool = True,
    ) -> None:
        if data is None and text is None and module is None:
            raise ValueError("FileRun needs the file's bytes, text or tree")
        self.path = path
        self.rules = list(rules)
        self.data = data
        self.max_file_size = max_file_size
        self.keep_bytes = keep_bytes and data is not None
        self.file_noqa = file_noqa  # honour ``# torchcopy-lint: noqa`` (off: flake8's --disable-noqa)
        self.screen = screen
        self._text = text
        self._tree = tree
        self._module = module
        self._syntax_checked = module is not None  # an edited tree: the fixer checks its final text itself
        self.newer_syntax = False  # Python rejected the file, LibCST parsed it: syntax newer than this interpreter

    @classmethod
    def from_bytes(cls, data: bytes, path: str, codes: Iterable[str], *, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE, keep_bytes: bool = False) -> "FileRun":
        """``keep_bytes``: LibCST parses the bytes themselves, so that the tree prints
        back in the file's own encoding and newlines (the fixer needs that; positions
        are then counted on ``\n`` only, so checking parses the decoded text)."""
        return cls(path, rules_for(codes), data=data, max_file_size=max_file_size, keep_bytes=keep_bytes)

    @classmethod
    def from_text(cls, text: str, path: str, codes: Iterable[str], *, tree: ast.Module | None = None, file_noqa: bool = True, screen: bool = True) -> "FileRun":
        return cls(path, rules_for(codes), text=text, tree=tree, max_file_size=None, file_noqa=file_noqa, screen=screen)

    def edited(self, module: cst.Module) -> "FileRun":
        """The same file after edits to its tree (the fixer's next pass): analysed afresh, not re-parsed."""
        return FileRun(self.path, self.rules, module=module, file_noqa=self.file_noqa, screen=self.screen)

    # -- the stages -------------------------------------------------------------

    @cached_property
    def text(self) -> str:
        if self._text is not None:
            return self._text
        if self.data is not None:
            check_size(len(self.data), self.max_file_size)
            return decode(self.data)
        assert self._module is not None
        return self._module.code

    def check_syntax(self) -> None:
        """Python's own parser, once: Python's message and position for invalid code.

        Code the running Python rejects but LibCST parses is newer syntax
        (:attr:`newer_syntax`) and is checked all the same, without a tree.
        """
        if self._syntax_checked:
            return
        text = self.text
        if self._tree is None:
            try:
                self._tree = python_ast(text, self.path)
            except SyntaxError as error:
                refuse_what_crashes_libcst(text, None)
                try:
                    self._module = self._parse()
                except CannotCheck:
                    raise syntax_error(error) from None
                self.newer_syntax = True
        if self._tree is not None:
            refuse_what_crashes_libcst(text, self._tree)
        self._syntax_checked = True

    @property
    def tree(self) -> ast.Module | None:
        """Python's ``ast`` of the file (None for syntax newer than the running Python, or an edited tree)."""
        self.check_syntax()
        return self._tree

    @cached_property
    def reported_rules(self) -> list[Rule]:
        """The rules asked for, less those the file exempts itself from (``# torchcopy-lint: noqa``)."""
        exempt = exempt_prefixes(self.text) if self.file_noqa else ()
        if not exempt:
            return self.rules
        kept = without(frozenset(rule.code for rule in self.rules), exempt)
        return [rule for rule in self.rules if rule.code in kept]

    @cached_property
    def _analysed_rules(self) -> list[Rule]:
        """The rules reported; every rule when TCL100 is, since whether a ``# noqa`` code
        is used depends on what any rule reports on its line (see checkers/tcl100_unused_noqa.py)."""
        from torchcopy_lint.checkers.tcl100_unused_noqa import CODE as UNUSED_NOQA

        if any(rule.code == UNUSED_NOQA for rule in self.reported_rules):
            return list(all_rules().values())
        return self.reported_rules

    @cached_property
    def candidates(self) -> list[Rule]:
        """The rules to run: those analysed whose screen admits this file (all of them
        without a screen, or without Python's tree: newer syntax, an edited tree)."""
        rules = self._analysed_rules if self.reported_rules else []
        tree = self.tree
        if not self.screen or tree is None or not rules:
            return rules
        from torchcopy_lint.screen import facts_of

        facts = facts_of(tree, self.text)
        return [rule for rule in rules if rule.checker.applies(facts)]

    @property
    def might_fire(self) -> bool:
        """Whether any rule may report here (else LibCST never parses the file)."""
        return bool(self.candidates)

    def _parse(self) -> cst.Module:
        return parse_cst(self.data if self.keep_bytes and self.data is not None else self.text)

    @property
    def module(self) -> cst.Module:
        """The one LibCST tree (parsed after the syntax check)."""
        if self._module is None:
            self.check_syntax()
            if self._module is None:
                self._module = self._parse()
        return self._module

    @cached_property
    def context(self) -> FileContext:
        """The analysis of the file: first of a tree built from Python's ``ast``
        (:mod:`torchcopy_lint.cst_from_ast`), which costs a fraction of LibCST's parse; only
        when that reports something is the file parsed with LibCST and analysed again, by the
        rules that reported, so that every finding's message, position and fix come from the
        file's own tree."""
        rules = self.candidates
        if self._module is None:
            quick = self._context_without_parse()
            if isinstance(quick, frozenset):
                rules = [rule for rule in rules if rule.code in quick]
            elif quick is not None:
                return quick
        return analyse(self.module, self.path, rules)

    def _context_without_parse(self) -> FileContext | frozenset[str] | None:
        """The analysis of the tree built from ``ast`` if it reports nothing, else the codes it
        reports (each rule decides alone: the others' findings never change its own); None
        where that tree cannot stand for the file's."""
        tree = self.tree
        if not self.screen or tree is None or any(rule.checker.reads_source_layout for rule in self._analysed_rules):
            return None  # no screen: the screen's own test compares the two ways
        from torchcopy_lint.cst_from_ast import Unsupported, module_from_ast

        try:
            ctx = analyse(module_from_ast(tree, self.text), self.path, self.candidates)
        except (Unsupported, CannotCheck):
            return None  # LibCST's tree decides (too deeply nested ...)
        if not ctx.findings:
            return ctx
        codes = frozenset(raw.code for raw in ctx.findings)
        ctx.close()
        return codes

    def release(self) -> None:
        """Free the analysis once the results are read (:meth:`FileContext.close`): without its
        reference cycles the file's trees are freed at once, by reference counting."""
        context = self.__dict__.pop("context", None)
        if context is not None:
            context.close()
        self.__dict__.pop("_spans", None)

    # -- results ----------------------------------------------------------------

    @cached_property
    def _spans(self) -> dict[int, tuple[int, int, int, int]]:
        ctx = self.context
        if not ctx.findings:
            return {}
        from torchcopy_lint.positions import ast_lines_up, locate  # code generation: only for files with findings

        tree = self.tree if ast_lines_up(self.text) else None
        return locate(ctx.module, [(raw.node, raw.statement_index) for raw in ctx.findings], tree)

    @cached_property
    def _noqa(self) -> dict[int, frozenset[str] | None]:
        return noqa_table(self.text)

    def _suppressed(self, raw: RawFinding) -> bool:
        return is_suppressed(raw.code, self._spans[id(raw.node)][0], self._noqa)

    def located(self, *, apply_noqa: bool = True) -> list[tuple[Finding, RawFinding]]:
        """Each finding, positioned and sorted, with the raw finding that carries its fix.

        ``apply_noqa=False`` keeps findings on ``# noqa`` lines (flake8 applies
        noqa itself and honours ``--disable-noqa``).
        """
        self.check_syntax()
        if not self.might_fire:
            return []
        ctx = self.context
        names = {rule.code: rule.spec.name for rule in self.reported_rules}
        pairs: dict[Finding, RawFinding] = dict(self._unused_noqa)
        for raw in ctx.findings:
            if raw.code not in names or (apply_noqa and self._suppressed(raw)):
                continue
            line, column, end_line, end_column = self._spans[id(raw.node)]
            fix = raw.fix.applicability if raw.fix is not None else None
            finding = Finding(self.path, line, column + 1, end_line, end_column + 1, raw.code, names[raw.code], _one_line(raw.message), fix)
            pairs.setdefault(finding, raw)
        return sorted(pairs.items(), key=lambda pair: pair[0])

    def findings(self, *, apply_noqa: bool = True) -> list[Finding]:
        """All findings, sorted by position. Raises CannotCheck."""
        return [finding for finding, _ in self.located(apply_noqa=apply_noqa)]

    def fixable(self, unsafe: bool) -> list[RawFinding]:
        """Raw findings whose fix may be applied (allowed class, not on a ``# noqa`` line), in report order."""
        self.check_syntax()
        if self._module is None and not self.might_fire:
            return []
        codes = {rule.code for rule in self.reported_rules}
        candidates = [raw for raw in self.context.findings if raw.code in codes and not self._suppressed(raw)] + [raw for _, raw in self._unused_noqa]
        return [raw for raw in candidates if raw.fix is not None and raw.fix.allowed(unsafe)]

    @cached_property
    def _unused_noqa(self) -> list[tuple[Finding, RawFinding]]:
        """TCL100's findings, when reported: ``# noqa`` codes no rule's finding on their line uses."""
        from torchcopy_lint.checkers.tcl100_unused_noqa import CODE, unused_noqa
        from torchcopy_lint.context import RawFinding

        rule = next((rule for rule in self.reported_rules if rule.code == CODE), None)
        if rule is None:
            return []
        ctx = self.context
        reported = [(self._spans[id(raw.node)][0], raw.code) for raw in ctx.findings]
        pairs = []
        for directive in unused_noqa(ctx.module, self.text, reported):
            message = rule.spec.message.format(**directive.details())
            finding = Finding(self.path, directive.line, directive.column + 1, directive.line, directive.end_column + 1, CODE, rule.spec.name, message, directive.fix.applicability)
            pairs.append((finding, RawFinding(CODE, message, directive.node, -1, directive.fix)))
        return pairs

    @property
    def warnings(self) -> list[str]:
        """Unknown rule codes in ``# noqa`` comments, one line each."""
        return noqa_warnings(self.text, self.path, all_rules()) if "noqa" in self.text.lower() else []

    def result(self) -> FileResult:
        """Findings, or the one-line reason this file cannot be checked; never raises."""
        try:
            return FileResult(self.path, self.findings(), warnings=self.warnings)
        except CannotCheck as error:
            return FileResult(self.path, [], file_error(self.path, error))
        except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
            if os.environ.get("TORCHCOPY_LINT_DEBUG"):
                raise
            return FileResult(self.path, [], FileError(self.path, f"internal error ({type(error).__name__}: {error}); please report it"))


def file_error(path: str, error: CannotCheck) -> FileError:
    return FileError(path, error.reason, error.line, error.column)


def lint_source(
    text: str, path: str, codes: Iterable[str], *, apply_noqa: bool = True, tree: ast.Module | None = None, file_noqa: bool = True, screen: bool = True
) -> list[Finding]:
    """All findings for ``text`` (already decoded), sorted by position.

    ``tree``: Python's ``ast`` of ``text`` when the caller has one (flake8).
    ``file_noqa=False`` ignores ``# torchcopy-lint: noqa`` (flake8's ``--disable-noqa``).
    Raises CannotCheck for a syntax error or a file that cannot be checked.
    """
    return FileRun.from_text(text, path, codes, tree=tree, file_noqa=file_noqa, screen=screen).findings(apply_noqa=apply_noqa)


def check_bytes(data: bytes, path: str, codes: Iterable[str], *, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> FileResult:
    """Check one file's bytes; every failure becomes a FileError, never an exception."""
    from torchcopy_lint.notebook import check_notebook, is_notebook

    if is_notebook(path):
        return check_notebook(data, path, codes, max_file_size)
    return FileRun.from_bytes(data, path, codes, max_file_size=max_file_size).result()


def default_jobs() -> int:
    """Worker processes by default (lives in :mod:`torchcopy_lint.parallel`; kept here for older imports)."""
    from torchcopy_lint.parallel import default_jobs as parallel_default_jobs

    return parallel_default_jobs()
