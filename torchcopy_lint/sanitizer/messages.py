"""The words of a hazard: each rule's catalogue summary, and the rules the sanitizer cannot see.

A hazard's ``message`` is the rule's ``summary`` from its catalogue page (read through
``torchcopy_lint.catalogue``). The catalogue's ``message`` template is not used: its
placeholders are source text (``{snapshot}``, ``{instead}``) that only the static checker
knows. What the sanitizer saw at run time is the hazard's ``observation``.
"""

from __future__ import annotations

from functools import lru_cache

from torchcopy_lint.catalogue import load_catalogue

# Rules whose hazard never reaches the sanitizer, and why (docs/sanitizer.md says the same).
NOT_OBSERVABLE = {
    "TCL007": "autograd itself raises at the in-place update of a leaf that requires grad "
    "(\"a leaf Variable that requires grad is being used in an in-place operation\"); the error "
    "surfaces unchanged under the sanitizer",
    "TCL100": "a rule about `# noqa` comments: nothing happens at run time",
    "TCL103": "`a is b` and `id(a) == id(b)` compare Python objects: no torch function or operator "
    "runs, so nothing reaches the sanitizer's modes",
}


@lru_cache(maxsize=None)
def rule_text(code: str) -> tuple[str, str]:
    """(name, summary) of a rule, from the catalogue."""
    spec = load_catalogue()[code]
    return spec.name, spec.summary
