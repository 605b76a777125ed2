"""What checking produces: findings, and files that could not be checked."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, order=True)
class Finding:
    """One reported problem. Lines and columns are 1-based (as printed)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    fix: str | None = None  # "safe" / "unsafe" when --fix (/ --unsafe-fixes) can fix it

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> "Finding":
        """The inverse of :meth:`to_dict`; raises ValueError for anything else (a cache written by someone else)."""
        if not isinstance(data, dict) or set(data) != _FINDING_FIELDS:
            raise ValueError(f"not a finding: {data!r:.80}")
        for name, kind in _FINDING_TYPES.items():
            value = data[name]
            if not (isinstance(value, kind) and not isinstance(value, bool)) and not (name == "fix" and value is None):
                raise ValueError(f"not a finding: {name}={value!r:.40}")
        return cls(**data)


_FINDING_TYPES: dict[str, type] = {
    "path": str, "line": int, "column": int, "end_line": int, "end_column": int, "code": str, "name": str, "message": str, "fix": str,
}
_FINDING_FIELDS = set(_FINDING_TYPES)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked, with a one-line reason.

    ``line`` and ``column`` (1-based) locate a syntax error where the parser
    gave a position; machine-readable outputs can place the error there.
    """

    path: str
    reason: str
    line: int | None = None
    column: int | None = None
    action: str = "check"  # "fix": the file was checked, but its fixes were not written

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.path}: cannot {self.action}: {self.reason}"


@dataclass
class FileResult:
    path: str
    findings: list[Finding]
    error: FileError | None = None
    cached: bool = False
