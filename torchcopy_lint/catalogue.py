"""Read the rule catalogue: one Markdown file per rule under ``rules/``.

Each file is the single source of truth for its rule. It starts with a small
front matter block (``key: value`` lines between ``---`` fences) and then reads
like a ruff rule page. Fenced code blocks tagged after the language carry the
rule's executable examples::

    ```python flagged        the rule must report exactly the lines marked "# TCL00x"
    ```python fixed          the corrected form of the flagged block: no finding
    ```python ok             a near miss: no finding
    ```python claim          the hazard's scenario, run with real torch by `verify` (also flagged at its markers)
    ```python claim-fixed    the same scenario with the marked lines fixed: clean
    ```python claim-check    the one observation run after both (and after the autofixed claim):
                             it calls ``observed(hazard, evidence)``, the scenarios cannot
    ```python autofixed      exactly what ``--fix`` makes of the first ``flagged`` block

The tests, ``--explain``, the generated docs and ``verify`` all read these files.

A rule about the linter itself rather than about torch (TCL100, unused ``noqa``)
has no runtime claim: its front matter says ``claim: none (why)``, it carries no
``claim`` / ``claim-fixed`` blocks, and ``verify`` reports it as n/a.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

EXAMPLE_KINDS = ("flagged", "fixed", "ok", "claim", "claim-fixed", "claim-check", "autofixed")
# none: no mechanical fix; safe: --fix applies it; unsafe: only with --unsafe-fixes.
FIX_CLASSES = ("none", "safe", "unsafe")
REQUIRED_KEYS = ("code", "name", "default", "summary", "message")
REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Claim")
# The last section of a rule file: more flagged/ok blocks (surface forms and near
# misses) that the tests run but ``--explain`` does not print.
TEST_CASES_SECTION = "Test cases"

_FENCE = re.compile(r"^```python[ \t]+(?P<kind>[a-z-]+)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"#\s*(TCL\d{3})\b")
_SECTION = re.compile(r"^## (?P<title>.+?)\s*$", re.M)
_NO_CLAIM = re.compile(r"^none\s*\((?P<why>.+)\)$")


class CatalogueError(ValueError):
    """A rule file is malformed; the message names the file and the problem."""


@dataclass(frozen=True)
class Example:
    """One tagged code block of a rule file."""

    kind: str
    source: str
    line: int  # 1-based line of the block's first code line inside the rule file

    def marked_lines(self, code: str) -> list[int]:
        """1-based lines (within the block) carrying a ``# <code>`` marker."""
        return [
            number
            for number, text in enumerate(self.source.splitlines(), start=1)
            if code in _MARKER.findall(text)
        ]


@dataclass(frozen=True)
class RuleSpec:
    """Everything the catalogue says about one rule."""

    code: str
    name: str
    default: bool
    summary: str
    message: str
    fix: str
    path: Path
    text: str
    no_claim: str | None = None  # ``claim: none (why)``: why the rule has no runtime claim

    # The page's sections and examples are read when first asked for (the tests, ``--explain``,
    # ``verify``, SARIF), not by every lint run, which needs the front matter only.
    @cached_property
    def sections(self) -> dict[str, str]:
        """Each ``## Title`` section's text, by title."""
        body = _split_front_matter(self.text, self.path)[1]
        titles = [(match.group("title"), match.start(), match.end()) for match in _SECTION.finditer(body)]
        return {
            title: body[end : (titles[i + 1][1] if i + 1 < len(titles) else len(body))].strip()
            for i, (title, _start, end) in enumerate(titles)
        }

    @cached_property
    def examples(self) -> tuple[Example, ...]:
        """The tagged code blocks, in page order (CatalogueError for an unknown tag, or claim
        blocks in a rule whose front matter says ``claim: none``)."""
        text, path = self.text, self.path
        body = _split_front_matter(text, path)[1]
        line = text.count("\n", 0, len(text) - len(body)) + 1  # the body's first line in the file
        counted = 0  # lines are counted from where the last example's were (not from the top: pages are long)
        examples = []
        for match in _FENCE.finditer(body):
            kind = match.group("kind")
            if kind not in EXAMPLE_KINDS:
                raise CatalogueError(f"{path}: unknown example tag 'python {kind}'")
            line += body.count("\n", counted, match.start("body"))
            counted = match.start("body")
            examples.append(Example(kind=kind, source=match.group("body"), line=line))
        if self.no_claim is not None and any(example.kind in ("claim", "claim-fixed", "claim-check") for example in examples):
            raise CatalogueError(f"{path}: 'claim: none' but the file has claim blocks")
        return tuple(examples)

    @property
    def has_claim(self) -> bool:
        return self.no_claim is None

    @property
    def placeholders(self) -> frozenset[str]:
        """The ``{names}`` the message needs (checked by :meth:`format_message`)."""
        return message_placeholders(self.message, self.path)

    def format_message(self, details: dict[str, str]) -> str:
        """The message with its placeholders filled; a missing or unknown one is a bug in
        the checker, not something to print to a user."""
        wanted = self.placeholders
        missing, unknown = wanted - details.keys(), details.keys() - wanted
        if missing or unknown:
            raise CatalogueError(
                f"{self.code}: report() got {sorted(details)}; the message in {self.path.name} needs {sorted(wanted)}"
                + (f" (missing {sorted(missing)})" if missing else "") + (f" (unknown {sorted(unknown)})" if unknown else "")
            )
        return self.message.format_map(details)

    def examples_of(self, kind: str) -> list[Example]:
        return [example for example in self.examples if example.kind == kind]

    @property
    def body(self) -> str:
        """The page without its front matter and test cases (what ``--explain`` prints)."""
        page = _split_front_matter(self.text, self.path)[1]
        page = page.split(f"\n## {TEST_CASES_SECTION}", 1)[0]
        return page.strip() + "\n"


def message_placeholders(message: str, path: Path | None = None) -> frozenset[str]:
    """The named fields of a message template; positional or formatted fields are refused."""
    names = set()
    try:
        parsed = list(string.Formatter().parse(message))
    except ValueError as error:
        raise CatalogueError(f"{path}: message is not a valid template: {error}") from None
    for _text, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise CatalogueError(f"{path}: message placeholder {{{name}}} must be a plain name")
        names.add(name)
    return frozenset(names)


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise CatalogueError(f"{path}: the file must start with a '---' front matter block")
    meta: dict[str, str] = {}
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "".join(lines[index + 1 :])
        key, sep, value = line.partition(":")
        if not sep:
            raise CatalogueError(f"{path}:{index + 1}: expected 'key: value' in front matter")
        meta[key.strip()] = value.strip()
    raise CatalogueError(f"{path}: front matter is not closed by '---'")


def parse_rule_file(path: Path) -> RuleSpec:
    """Parse one rule file's front matter, raising CatalogueError on anything malformed in
    it; its sections and examples are parsed (and checked) when first read."""
    text = path.read_text(encoding="utf-8")
    meta, _body = _split_front_matter(text, path)
    missing = [key for key in REQUIRED_KEYS if not meta.get(key)]
    if missing:
        raise CatalogueError(f"{path}: front matter lacks {', '.join(missing)}")
    if meta["default"] not in ("on", "off"):
        raise CatalogueError(f"{path}: 'default' must be 'on' or 'off'")
    meta["fix"] = (meta.get("fix") or "none").split()[0]  # "none yet" reads as "none"
    if meta["fix"] not in FIX_CLASSES:
        raise CatalogueError(f"{path}: 'fix' must be one of {', '.join(FIX_CLASSES)}")
    message_placeholders(meta["message"], path)  # a malformed template is refused when the catalogue loads
    no_claim = None
    if "claim" in meta:
        match = _NO_CLAIM.match(meta["claim"])
        if match is None:
            raise CatalogueError(f"{path}: 'claim' may only be 'none (why there is no runtime claim)'")
        no_claim = match.group("why").strip()
    expected_name = f"{meta['code']}-{meta['name']}.md"
    if path.name != expected_name:
        raise CatalogueError(f"{path}: file name must be {expected_name}")

    return RuleSpec(
        code=meta["code"],
        name=meta["name"],
        default=meta["default"] == "on",
        summary=meta["summary"],
        message=meta["message"],
        fix=meta.get("fix", "none"),
        path=path,
        text=text,
        no_claim=no_claim,
    )


def catalogue_dir() -> Path:
    """Where the rule files are: inside the installed wheel, or the source checkout."""
    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir / "rules", package_dir.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise CatalogueError(f"rule catalogue not found next to {package_dir}")


@lru_cache(maxsize=None)
def load_catalogue(directory: Path | None = None) -> dict[str, RuleSpec]:
    """All rule specs by code, in code order."""
    directory = directory or catalogue_dir()
    specs = [parse_rule_file(path) for path in sorted(directory.glob("TCL*.md"))]
    by_code: dict[str, RuleSpec] = {}
    for spec in specs:
        if spec.code in by_code:
            raise CatalogueError(f"{spec.path}: duplicate rule code {spec.code}")
        by_code[spec.code] = spec
    return by_code
