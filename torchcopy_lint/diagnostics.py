"""What checking produces: findings, and files that could not be checked."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from functools import total_ordering


@total_ordering
@dataclass(frozen=True)
class Finding:
    """One reported problem. Lines and columns are 1-based (as printed).

    In a notebook, ``cell`` is the 1-based cell (counting every cell) and
    ``line`` / ``end_line`` count within that cell.
    """

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    fix: str | None = None  # "safe" / "unsafe" when --fix (/ --unsafe-fixes) can fix it
    cell: int | None = None

    def sort_key(self) -> tuple[object, ...]:
        """Path, then position (a notebook's cells in order), then the rest."""
        return (self.path, self.cell or 0, self.line, self.column, self.end_line, self.end_column, self.code, self.name, self.message, self.fix or "")

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Finding):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> "Finding":
        """The inverse of :meth:`to_dict`; raises ValueError for anything else (a cache written by someone else)."""
        kinds = _field_kinds(cls)
        if not isinstance(data, dict) or set(data) != set(kinds):
            raise ValueError(f"not a finding: {data!r:.80}")
        for name, (kind, optional) in kinds.items():
            value = data[name]
            if not (isinstance(value, kind) and not isinstance(value, bool)) and not (optional and value is None):
                raise ValueError(f"not a finding: {name}={value!r:.40}")
        return cls(**data)


def _field_kinds(cls: type) -> dict[str, tuple[type, bool]]:
    """Each field's type and whether it may be None, from the annotations (``"int | None"``)."""
    kinds = {}
    for item in fields(cls):
        annotation = str(item.type)
        kinds[item.name] = ({"str": str, "int": int}[annotation.split("|")[0].strip()], "None" in annotation)
    return kinds


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
    warnings: list[str] = field(default_factory=list)  # e.g. an unknown code in a noqa comment
