"""What a fix is: node replacements, plus the imports the new code needs."""

from __future__ import annotations

from dataclasses import dataclass

from torchcopy_lint.lazy import cst

SAFE, UNSAFE = "safe", "unsafe"


@dataclass(frozen=True)
class Fix:
    """Replace each ``old`` node (by identity) with ``new``.

    ``applicability`` is ``"safe"`` (behaviour changes only where the original
    was the hazard; applied by ``--fix``) or ``"unsafe"`` (applied only with
    ``--unsafe-fixes``). ``imports`` names modules the new code uses that must be
    imported at module level (``"torch"``, ``"copy"``).
    """

    applicability: str
    edits: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]
    imports: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.applicability not in (SAFE, UNSAFE):
            raise ValueError(f"bad fix applicability {self.applicability!r}")

    def allowed(self, unsafe: bool) -> bool:
        return self.applicability == SAFE or unsafe
