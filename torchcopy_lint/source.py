"""Reading Python source safely: bytes -> text -> Python's own syntax check -> one LibCST tree.

Every refusal is a :class:`CannotCheck` with a one-line reason; a syntax error
carries Python's own line and column. The stages are separate functions so that
:class:`torchcopy_lint.engine.FileRun` can run each of them once, in order.

Why Python's parser runs first (``compile(..., PyCF_ONLY_AST)``, about 8-10% of
LibCST's parse time on torch's source):

- every file that is not valid Python is reported, even one that contains no
  rule's trigger and is therefore never handed to LibCST;
- syntax errors get Python's position and message, not LibCST's;
- it refuses code nested deeper than Python itself accepts before LibCST sees
  it: LibCST's native parser overflows its stack (a segmentation fault that
  kills the process and, in a worker, the whole run) on such code. Python's
  ``ast`` compile refuses exactly what ``symtable`` (the guard it replaces)
  refused, measured over 19 nesting shapes at depths 100 to 50,000;
- the ``ast`` tree is kept for later structural checks (and flake8 hands one in).

LibCST's grammar is the newest Python's: a file that the running Python rejects
but LibCST parses (PEP 695 generics on Python 3.11, 3.12 f-strings) is syntax
newer than the running interpreter and is still linted, without an ``ast`` tree.
"""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from torchcopy_lint.lazy import cst

DEFAULT_MAX_FILE_SIZE = 4 * 2**20  # 4 MiB: three times torch's largest source file (1.4 MB)

_PYTHON_RECURSION_LIMIT = 1000  # the interpreter's default: what `python file.py` accepts
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too complex", "parser stack overflow")

# LibCST nests ``a or b or c ...`` one level per operand (Python's ast keeps one flat
# list), and its native parser overflows an 8 MiB stack at about 8,000 operands
# (measured with LibCST 1.9). Python's own parser does not refuse such a chain.
MAX_BOOLEAN_OPERANDS = 2_000
_BOOLEAN_OPERATOR = re.compile(r"(?<![A-Za-z_])(?:and|or)(?![A-Za-z0-9_])")
_MAX_BRACKET_DEPTH = 200  # Python's tokenizer refuses deeper brackets ("too many nested parentheses")


class CannotCheck(Exception):
    """Raised with a one-line reason (and a position, for syntax errors) when a source cannot be checked."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


def format_size(size: int) -> str:
    if size >= 2**20:
        return f"{size / 2**20:.1f} MB"
    if size >= 2**10:
        return f"{size / 2**10:.1f} KB"
    return f"{size} bytes"


def parse_size(value: str | int) -> int:
    """``4194304``, ``"4MB"``, ``"512 KB"`` -> bytes (KB, MB, GB are powers of 1024); 0 means no limit."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"not a size: {value!r}")
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?\s*", value, re.I)
    if not match:
        raise ValueError(f"not a size: {value!r} (use bytes, or a number with KB, MB or GB)")
    number, unit = match.groups()
    return int(float(number) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[unit.upper()])


def check_size(size: int, limit: int | None) -> None:
    """Refuse files larger than ``limit`` bytes (None or 0: no limit).

    LibCST needs about 19 s and 1.4 GB per MB of dense code (a one-line list
    literal), so a huge generated file would hold a worker for minutes.
    """
    if limit and size > limit:
        raise CannotCheck(f"file too large ({format_size(size)}; the limit is {format_size(limit)}, see max-file-size)")


def _undecodable(encoding: str, data: bytes, error: UnicodeDecodeError) -> str:
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    return f"cannot decode as {encoding}: invalid byte 0x{data[error.start]:02x} at line {line}, column {column}"


def decode(data: bytes) -> str:
    """Bytes to text the way Python would read the file (BOM, coding cookie)."""
    if b"\x00" in data:
        raise CannotCheck("file contains NUL bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # detect_encoding also fails when the first two lines are not UTF-8 and
        # carry no declaration: say which byte, not "missing declaration".
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise CannotCheck(_undecodable("utf-8", data, bad)) from None
        raise CannotCheck(f"bad encoding declaration: {error.msg}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise CannotCheck(_undecodable(encoding, data, error)) from None
    except LookupError:
        raise CannotCheck(f"unknown encoding {encoding!r}") from None
    # Universal newlines, as Python reads source: a lone "\r" ends a line too
    # (line numbers are counted on "\n").
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def syntax_error(error: SyntaxError) -> CannotCheck:
    """Python's own message and position, as one line."""
    message = (error.msg or "invalid syntax").splitlines()[0] if error.msg else "invalid syntax"
    line = error.lineno
    column = error.offset if error.offset and error.offset > 0 else None
    if line is None:
        return CannotCheck(f"syntax error: {message}")
    where = f"line {line}, column {column}" if column else f"line {line}"
    return CannotCheck(f"syntax error at {where}: {message}", line, column)


def python_ast(text: str, path: str) -> ast.Module:
    """``compile(text, path, "exec", PyCF_ONLY_AST)`` as ``python file.py`` would see it.

    Raises SyntaxError for code the running Python rejects, and CannotCheck for
    code nested deeper than Python accepts (which LibCST must never see).
    """
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(_PYTHON_RECURSION_LIMIT)  # the walker raises it; Python's own check scales with it
    except RecursionError:
        pass  # called from deeper than that already: keep the current limit
    try:
        return compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)  # type: ignore[no-any-return]
    except SyntaxError as error:
        if any(reason in str(error.msg) for reason in _TOO_DEEP):
            raise syntax_error(error) from None
        raise
    except (RecursionError, MemoryError):
        raise CannotCheck("too deeply nested to parse") from None
    except ValueError as error:  # e.g. NUL bytes (refused by decode already)
        raise CannotCheck(str(error)) from None
    finally:
        sys.setrecursionlimit(limit)


def _longest_boolean_chain(tree: ast.AST) -> int:
    return max((len(node.values) for node in ast.walk(tree) if isinstance(node, ast.BoolOp)), default=0)


def refuse_what_crashes_libcst(text: str, tree: ast.Module | None) -> None:
    """Refuse code Python accepts (or, without ``tree``, may accept) that LibCST's native parser cannot survive.

    Costs two substring counts per file; the regular expression runs only where
    they allow that many ``and``/``or`` words, the ``ast`` walk only where there are. Without a tree
    (Python rejected the file, which may be newer syntax) the text's bracket
    depth is bounded too, since Python did not get to check it.
    """
    # ``str.count`` of the two words' letters bounds the number of words from above, far cheaper than the regex
    operators = len(_BOOLEAN_OPERATOR.findall(text)) if text.count("and") + text.count("or") >= MAX_BOOLEAN_OPERANDS else 0
    if operators >= MAX_BOOLEAN_OPERANDS:
        longest = _longest_boolean_chain(tree) if tree is not None else operators + 1
        if longest > MAX_BOOLEAN_OPERANDS:
            raise CannotCheck(f"too deeply nested to parse (a chain of {longest} and/or operands; the limit is {MAX_BOOLEAN_OPERANDS})")
    if tree is None:
        depth = deepest = 0
        for character in text:
            if character in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif character in ")]}":
                depth -= 1
        if deepest > _MAX_BRACKET_DEPTH:
            raise CannotCheck("too deeply nested to parse (too many nested parentheses)")


def _first_line(message: str, limit: int = 160) -> str:
    line = next((part.strip() for part in message.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def parse_cst(source: str | bytes) -> cst.Module:
    """``libcst.parse_module`` (from bytes when given, to keep their encoding); every failure is a CannotCheck."""
    try:
        return _parse_unvalidated(source)
    except cst.ParserSyntaxError as error:
        message = error.message.removeprefix("parser error: ") if error.message else "invalid syntax"
        raise CannotCheck(f"LibCST cannot parse this: {_first_line(message)}", error.raw_line, error.raw_column + 1) from None
    except RecursionError:
        raise CannotCheck("too deeply nested to parse") from None
    except Exception as error:  # noqa: BLE001 - CSTValidationError and LibCST's own failures: the file's error, not the run's
        raise CannotCheck(f"LibCST cannot parse this ({type(error).__name__}: {_first_line(str(error))})") from None


def _parse_unvalidated(source: str | bytes) -> cst.Module:
    """``libcst.parse_module`` without LibCST's per-node validation (about 0.83x the parse's
    CPU on torch's source, benchmarks/README.md).

    LibCST validates every node it builds (``CSTNode.__post_init__`` calls ``_validate``):
    invariants for trees built by hand (a space after ``return`` ...). A tree parsed from a
    text Python's own parser already accepted needs none of them; the analysis reads the
    tree and a fix changes it through ``with_changes`` (validated, after the parse). The
    hook is switched off only while this parse runs, and only where it does nothing but
    validate (a LibCST that does more there is parsed as before).
    """
    node_class = cst.CSTNode
    post_init = node_class.__post_init__
    if getattr(post_init, "__code__", None) is None or post_init.__code__.co_names != ("_validate",):
        return cst.parse_module(source)
    node_class.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        node_class.__post_init__ = post_init  # type: ignore[method-assign]


def _no_validation(self: object) -> None:
    """Stands for ``CSTNode.__post_init__`` while :func:`_parse_unvalidated` parses."""


@dataclass(frozen=True)
class CompileLevel:
    """How far the running Python accepts a text: the fixer keeps a fixed file at its original's level."""

    ast: bool  # compile(..., PyCF_ONLY_AST) accepts it
    full: bool  # compile(..., "exec") accepts it too (no `return` outside a function ...)

    @classmethod
    def of(cls, text: str, path: str) -> "CompileLevel":
        try:
            compile(text, path, "exec", dont_inherit=True)
            return cls(True, True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        try:
            compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            return cls(True, False)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return cls(False, False)

    def at_least(self, other: "CompileLevel") -> bool:
        return (self.ast or not other.ast) and (self.full or not other.full)


def read_source(path: Path, max_file_size: int | None = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """A file's bytes, refusing (CannotCheck) what cannot be read and what is too large to check."""
    try:
        with open(path, "rb") as stream:
            check_size(os.fstat(stream.fileno()).st_size, max_file_size)
            return stream.read()
    except IsADirectoryError:
        raise CannotCheck("is a directory") from None
    except PermissionError:
        raise CannotCheck("permission denied") from None
    except OSError as error:
        raise CannotCheck(error.strerror or str(error)) from None


def read_stdin() -> bytes:
    """Standard input's bytes; a closed or unreadable stdin is a CannotCheck, not a crash."""
    stream = sys.stdin
    if stream is None:  # started with stdin closed (`<&-`)
        raise CannotCheck("standard input is closed")
    try:
        return stream.buffer.read()
    except (OSError, ValueError) as error:
        raise CannotCheck(f"cannot read standard input: {getattr(error, 'strerror', None) or error}") from None
