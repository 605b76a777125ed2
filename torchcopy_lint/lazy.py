"""LibCST, loaded on first use: ``from torchcopy_lint.lazy import cst``.

``import libcst`` costs about 0.25 s, more than the rest of a single-file run: ``--version``,
``rules``, ``explain``, a run answered from the cache and files the structural pre-screen
rules out never need it. The standard library's LazyLoader gives a module object whose
first attribute access runs the real import. Every module of this package takes LibCST
from here (a plain ``import libcst`` would load it at once: the import statement reads the
module's ``__spec__``), and module-level code never touches ``cst.<name>``; a test checks
that importing the package, its checkers and its analyses leaves LibCST unloaded.
"""

from __future__ import annotations

import importlib.util
import sys
import types


def _lazy(name: str) -> types.ModuleType:
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name} is not installed")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


cst = _lazy("libcst")


def is_loaded(module: types.ModuleType = cst) -> bool:
    """Whether the real import has run (for tests and measurements)."""
    return type(module).__name__ != "_LazyModule"
