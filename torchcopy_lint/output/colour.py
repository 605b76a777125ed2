"""Colour for the human formats: on at a terminal, off when piped or written to a file.

``NO_COLOR`` (any non-empty value, https://no-color.org) turns it off;
``FORCE_COLOR`` (non-empty, https://force-color.org) turns it on even when
piped; ``NO_COLOR`` wins when both are set. ``TERM=dumb`` means no colour.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

_RESET = "\033[0m"


def colour_enabled(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


@dataclass(frozen=True)
class Style:
    """Wraps text in ANSI colours when ``enabled``, else returns it unchanged."""

    enabled: bool = False

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}{_RESET}" if self.enabled and text else text

    def path(self, text: str) -> str:
        return self._wrap("1", text)

    def code(self, text: str) -> str:
        return self._wrap("1;31", text)

    def fixable(self, text: str) -> str:
        return self._wrap("36", text)

    def gutter(self, text: str) -> str:
        return self._wrap("34", text)

    def caret(self, text: str) -> str:
        return self._wrap("1;31", text)

    def summary(self, text: str) -> str:
        return self._wrap("1", text)


PLAIN = Style(False)
