"""Joins the catalogue (rules/*.md) with the checkers (torchcopy_lint/checkers/).

Checkers are discovered: every module in ``torchcopy_lint.checkers`` that
defines a :class:`Checker` subclass with a ``code`` is registered. There is no
hand-kept list; the tests fail when a spec has no checker or a checker no spec.
Whether a rule is on by default is the spec's ``default:`` field (TCL0xx on,
TCL1xx opt-in by convention).

A checker module is named after its code (``tcl004_aliased_snapshot.py`` holds
TCL004's checker) and imported only when :attr:`Rule.checker` is first asked
for: a run answered from the cache, or ``rules``/``explain``, never loads the
checkers and the analysis they import (see tests/test_lazy_imports.py).
"""

from __future__ import annotations

import importlib
import pkgutil
import types
from dataclasses import dataclass
from functools import lru_cache

from typing import TYPE_CHECKING

from torchcopy_lint import checkers as checkers_package
from torchcopy_lint.catalogue import RuleSpec, load_catalogue

if TYPE_CHECKING:
    from torchcopy_lint.checkers.base import Checker


@dataclass(frozen=True)
class Rule:
    spec: RuleSpec
    module: str  # the checker's module (``tcl004_aliased_snapshot``), imported on first use

    @property
    def code(self) -> str:
        return self.spec.code

    @property
    def checker(self) -> type[Checker]:
        return _checker_in(self.module, self.code)


class RegistryError(RuntimeError):
    pass


def _checkers_of(module_name: str) -> dict[str, type[Checker]]:
    """The checker classes a module of ``torchcopy_lint.checkers`` defines, by code."""
    from torchcopy_lint.checkers.base import Checker

    module = importlib.import_module(f"{checkers_package.__name__}.{module_name}")
    found: dict[str, type[Checker]] = {}
    for value in vars(module).values():
        if isinstance(value, types.ModuleType):
            continue  # ``cst``: asking a lazily loaded module for its class would load it
        if isinstance(value, type) and issubclass(value, Checker) and value is not Checker and value.__module__ == module.__name__:
            code = getattr(value, "code", None)
            if code:
                found[code] = value
    return found


@lru_cache(maxsize=None)
def _checker_in(module_name: str, code: str) -> type[Checker]:
    checker = _checkers_of(module_name).get(code)
    if checker is None:
        raise RegistryError(f"{checkers_package.__name__}.{module_name} defines no checker for {code}")
    return checker


@lru_cache(maxsize=None)
def checker_modules() -> dict[str, str]:
    """Code -> checker module, from the module names alone (nothing imported)."""
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(checkers_package.__path__):
        code = info.name.split("_", 1)[0].upper()
        if info.name == "base" or not code.startswith("TCL"):
            continue
        if code in found:
            raise RegistryError(f"two checker modules for {code}: {found[code]} and {info.name}")
        found[code] = info.name
    return found


@lru_cache(maxsize=None)
def discover_checkers() -> dict[str, type[Checker]]:
    """Every checker class of the package, by code (imports every checker module)."""
    found: dict[str, type[Checker]] = {}
    for info in pkgutil.iter_modules(checkers_package.__path__):
        if info.name == "base":
            continue
        for code, checker in _checkers_of(info.name).items():
            if code in found:
                raise RegistryError(f"two checkers claim {code}: {found[code].__module__} and {checker.__module__}")
            found[code] = checker
    return found


@lru_cache(maxsize=None)
def all_rules() -> dict[str, Rule]:
    """Every rule with both a spec and a checker module, by code."""
    specs = load_catalogue()
    modules = checker_modules()
    return {code: Rule(spec, modules[code]) for code, spec in specs.items() if code in modules}


def consistency_problems() -> list[str]:
    """Specs without checkers, checkers without specs, and checker modules not named after
    the code their checker claims (the tests assert none)."""
    specs = load_catalogue()
    checkers = discover_checkers()
    problems = [f"{code}: catalogue file has no checker" for code in specs if code not in checkers]
    problems += [f"{code}: checker has no catalogue file" for code in checkers if code not in specs]
    modules = checker_modules()
    problems += [
        f"{code}: its checker is in {checker.__module__}, not in a module named {code.lower()}_*"
        for code, checker in checkers.items()
        if checker.__module__.rsplit(".", 1)[-1] != modules.get(code)
    ]
    return problems
