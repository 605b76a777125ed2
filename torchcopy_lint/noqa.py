"""Suppression comments.

- ``# noqa`` and ``# noqa: TCL001,TCL004`` on the reported line. Codes may be
  prefixes (``# noqa: TCL0``) and are read as flake8 reads them (letters then
  digits, ``TCL001``); a ``noqa`` whose code list does not parse is a blanket
  ``noqa``, as in flake8.
- ``# torchcopy-lint: noqa`` on a line of its own exempts the whole file;
  ``# torchcopy-lint: noqa: TCL001,TCL1`` exempts those rules in the file.
- Codes that name no rule (``# noqa: TCL999``) are reported as warnings.

Which ``# noqa`` codes went unused is rule TCL100's business (checkers/tcl100_unused_noqa.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

CODE = r"[A-Z]+[0-9]+"
_NOQA = re.compile(rf"#\s*noqa(?::[\s]?(?P<codes>{CODE}(?:[,\s]+{CODE})*))?", re.I)
_FILE_NOQA = re.compile(r"^[ \t]*#[ \t]*torchcopy-lint[ \t]*:[ \t]*noqa(?P<rest>[^\n]*)$", re.I | re.M)
_FILE_CODES = re.compile(rf"^:[ \t]*(?P<codes>{CODE}(?:[,\s]+{CODE})*)[ \t]*$", re.I)
_SEPARATOR = re.compile(r"[,\s]+")
EVERYTHING = ("ALL",)  # what exempt_prefixes returns for a blanket file-level noqa
# Codes a noqa may name although no catalogue rule has them: the flake8 plugin's
# "cannot check" report (see flake8_plugin.py).
RESERVED_CODES = frozenset({"TCL000"})


@dataclass(frozen=True)
class Directive:
    """One ``# noqa`` comment found in a line of text: its span and its codes in order."""

    start: int
    end: int
    codes: tuple[str, ...]  # empty for a blanket noqa
    codes_start: int
    codes_end: int


def find_directive(text: str) -> Directive | None:
    match = _NOQA.search(text)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return Directive(match.start(), match.end(), (), match.end(), match.end())
    return Directive(match.start(), match.end(), tuple(code for code in _SEPARATOR.split(codes.strip()) if code), match.start("codes"), match.end("codes"))


def suppressions(lines: list[str]) -> dict[int, frozenset[str] | None]:
    """Map 1-based line -> suppressed code prefixes (None = everything)."""
    found: dict[int, frozenset[str] | None] = {}
    for number, text in enumerate(lines, start=1):
        if "noqa" not in text.lower():
            continue
        directive = find_directive(text)
        if directive is None:
            continue
        found[number] = frozenset(code.upper() for code in directive.codes) if directive.codes else None
    return found


def is_suppressed(code: str, line: int, table: dict[int, frozenset[str] | None]) -> bool:
    if line not in table:
        return False
    codes = table[line]
    return codes is None or any(code.startswith(prefix) for prefix in codes)


def _file_directives(text: str) -> Iterable[tuple[int, tuple[str, ...] | None]]:
    """(1-based line, codes) of each well-formed ``# torchcopy-lint: noqa[: CODES]`` line; None = all."""
    if "noqa" not in text.lower():
        return
    for match in _FILE_NOQA.finditer(text):
        rest = match.group("rest").rstrip()
        line = text.count("\n", 0, match.start()) + 1
        if not rest:
            yield line, None
            continue
        codes = _FILE_CODES.match(rest)
        if codes:
            yield line, tuple(code.upper() for code in _SEPARATOR.split(codes.group("codes").strip()) if code)


def exempt_prefixes(text: str) -> tuple[str, ...]:
    """Code prefixes the file exempts itself from (``EVERYTHING`` for all), for selection.without."""
    prefixes: list[str] = []
    for _line, codes in _file_directives(text):
        if codes is None:
            return EVERYTHING
        prefixes.extend(codes)
    return tuple(prefixes)


def unknown_codes(text: str, known: Collection[str]) -> list[tuple[int, str]]:
    """(line, code) of ``TCL`` codes in ``# noqa`` comments that match no rule."""
    known_codes = [*known, *RESERVED_CODES]
    found: list[tuple[int, str]] = []

    def check(line: int, codes: Iterable[str]) -> None:
        for code in codes:
            if code.startswith("TCL") and not any(rule.startswith(code) for rule in known_codes):
                found.append((line, code))

    for line, codes in suppressions(text.split("\n")).items():
        check(line, codes or ())
    for line, file_codes in _file_directives(text):
        check(line, file_codes or ())
    return sorted(set(found))


def noqa_warnings(text: str, path: str, known: Collection[str]) -> list[str]:
    """One line per unknown code, for stderr: ``path:3: warning: unknown rule code TCL999 in a noqa comment``."""
    return [f"{path}:{line}: warning: unknown rule code {code} in a noqa comment (see `torchcopy-lint rules`)" for line, code in unknown_codes(text, known)]


def without_codes(comment: str, unused: Collection[str]) -> str:
    """``comment`` with the ``unused`` codes taken out of its noqa directive.

    When no code is left the directive goes, and the comment is what remains
    of it ("" when nothing does): ``# noqa: TCL001, E501`` -> ``# noqa: E501``;
    ``# noqa: TCL001  # why`` -> ``# why``; ``# noqa: TCL001`` -> ``""``.
    """
    directive = find_directive(comment)
    if directive is None or not directive.codes:
        return comment
    kept = [code for code in directive.codes if code.upper() not in unused]
    if len(kept) == len(directive.codes):
        return comment
    if kept:
        separator = ", " if "," in comment[directive.codes_start : directive.codes_end] else " "
        return comment[: directive.codes_start] + separator.join(kept) + comment[directive.codes_end :]
    rest = (comment[: directive.start] + comment[directive.end :]).strip()
    if rest and not rest.startswith("#"):
        rest = "# " + rest
    return rest
