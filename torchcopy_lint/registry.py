"""Joins the catalogue (rules/*.md) with the checkers (torchcopy_lint/checkers/).

Checkers are discovered: every module in ``torchcopy_lint.checkers`` that
defines a :class:`Checker` subclass with a ``code`` is registered. There is no
hand-kept list; the tests fail when a spec has no checker or a checker no spec.
Whether a rule is on by default is the spec's ``default:`` field (TCL0xx on,
TCL1xx opt-in by convention).
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from dataclasses import dataclass
from functools import lru_cache

from torchcopy_lint import checkers as checkers_package
from torchcopy_lint.catalogue import RuleSpec, load_catalogue
from torchcopy_lint.checkers.base import Checker


@dataclass(frozen=True)
class Rule:
    spec: RuleSpec
    checker: type[Checker]

    @property
    def code(self) -> str:
        return self.spec.code


class RegistryError(RuntimeError):
    pass


@lru_cache(maxsize=None)
def discover_checkers() -> dict[str, type[Checker]]:
    found: dict[str, type[Checker]] = {}
    for info in pkgutil.iter_modules(checkers_package.__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{checkers_package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, types.ModuleType):
                continue  # ``cst``: asking a lazily loaded module for its class would load it
            if isinstance(value, type) and issubclass(value, Checker) and value is not Checker and value.__module__ == module.__name__:
                code = getattr(value, "code", None)
                if code:
                    if code in found:
                        raise RegistryError(f"two checkers claim {code}: {found[code].__module__} and {module.__name__}")
                    found[code] = value
    return found


@lru_cache(maxsize=None)
def all_rules() -> dict[str, Rule]:
    """Every rule with both a spec and a checker, by code."""
    specs = load_catalogue()
    checkers = discover_checkers()
    return {code: Rule(spec, checkers[code]) for code, spec in specs.items() if code in checkers}


def consistency_problems() -> list[str]:
    """Specs without checkers and checkers without specs (the tests assert none)."""
    specs = load_catalogue()
    checkers = discover_checkers()
    problems = [f"{code}: catalogue file has no checker" for code in specs if code not in checkers]
    problems += [f"{code}: checker has no catalogue file" for code in checkers if code not in specs]
    return problems
