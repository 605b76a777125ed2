"""What the sanitizer found: hazards (one per rule and source location) and the report.

This module does not import torch: the pytest plugin and the module runner render
reports without it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Hazard:
    """One hazard: the rule, its catalogue summary, the user's line, what was observed."""

    code: str
    name: str
    message: str
    file: str
    line: int
    function: str
    observation: str

    @property
    def where(self) -> str:
        path = self.file
        if os.path.isabs(path):
            try:
                relative = os.path.relpath(path)
            except ValueError:
                relative = path
            if not relative.startswith(".."):
                path = relative
        return f"{path}:{self.line}"

    def __str__(self) -> str:
        return f"{self.where}: {self.code} {self.message}: {self.observation}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "observation": self.observation,
        }


@dataclass
class Report:
    """Every hazard seen, in the order seen; a rule is reported once per source location."""

    hazards: list[Hazard] = field(default_factory=list)

    def add(self, hazard: Hazard) -> bool:
        """Record ``hazard`` unless its rule was already reported at its line; True if new."""
        key = (hazard.code, hazard.file, hazard.line)
        if any((h.code, h.file, h.line) == key for h in self.hazards):
            return False
        self.hazards.append(hazard)
        return True

    def seen(self, code: str, file: str, line: int) -> bool:
        return any((h.code, h.file, h.line) == (code, file, line) for h in self.hazards)

    @property
    def codes(self) -> set[str]:
        return {hazard.code for hazard in self.hazards}

    def by_code(self, code: str) -> list[Hazard]:
        return [hazard for hazard in self.hazards if hazard.code == code]

    def __iter__(self) -> Iterator[Hazard]:
        return iter(self.hazards)

    def __len__(self) -> int:
        return len(self.hazards)

    def as_dict(self) -> dict[str, Any]:
        return {"hazards": [hazard.as_dict() for hazard in self.hazards], "count": len(self.hazards)}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    def render_text(self) -> str:
        if not self.hazards:
            return "torchcopy-lint sanitizer: no hazard observed\n"
        lines = [str(hazard) for hazard in self.hazards]
        lines.append(f"torchcopy-lint sanitizer: {len(self.hazards)} hazard(s) observed")
        return "\n".join(lines) + "\n"


class TorchCopyHazard(Exception):
    """Raised in ``mode="raise"``: a hazard happened. Not a RuntimeError, so that a program's
    own ``except RuntimeError`` does not swallow it."""

    def __init__(self, hazard: Hazard) -> None:
        super().__init__(str(hazard))
        self.hazard = hazard


class TorchCopyHazardWarning(UserWarning):
    """Emitted in ``mode="warn"`` (the default), once per rule and source line."""
