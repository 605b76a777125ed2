"""``# noqa`` and ``# noqa: TCL001,TCL004`` suppression on the reported line.

Codes may be prefixes (``# noqa: TCL0``), like flake8. A ``noqa`` whose code
list does not parse is treated as a blanket ``noqa``, as flake8 does.
"""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z][0-9A-Z]*(?:[,\s]+[A-Z][0-9A-Z]*)*))?", re.I)
_SEPARATOR = re.compile(r"[,\s]+")


def suppressions(lines: list[str]) -> dict[int, frozenset[str] | None]:
    """Map 1-based line -> suppressed code prefixes (None = everything)."""
    found: dict[int, frozenset[str] | None] = {}
    for number, text in enumerate(lines, start=1):
        if "noqa" not in text.lower():
            continue
        match = _NOQA.search(text)
        if match is None:
            continue
        codes = match.group("codes")
        found[number] = None if not codes else frozenset(code.upper() for code in _SEPARATOR.split(codes.strip()) if code)
    return found


def is_suppressed(code: str, line: int, table: dict[int, frozenset[str] | None]) -> bool:
    if line not in table:
        return False
    codes = table[line]
    return codes is None or any(code.startswith(prefix) for prefix in codes)
