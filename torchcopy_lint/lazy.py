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


_ORIGINS: dict[str, str | None] = {}  # module name -> the file it is (to be) loaded from


def _lazy(name: str) -> types.ModuleType:
    loaded = sys.modules.get(name)
    if loaded is not None:
        if type(loaded).__name__ != "_LazyModule":  # imported for real already (by whoever came first)
            _ORIGINS[name] = getattr(getattr(loaded, "__spec__", None), "origin", None)
        return loaded
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"{name} is not installed")
    _ORIGINS[name] = spec.origin
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    # The import system marks a spec ``_initializing`` while its module runs and clears the
    # mark after; LazyLoader never sets it. CPython then looks the attribute up on every
    # ``import libcst`` (LibCST's native parser imports the package for each node class it
    # builds) and raises and clears an AttributeError each time: 15-20% of the parse.
    spec._initializing = False  # type: ignore[attr-defined]
    sys.modules[name] = module
    loader.exec_module(module)
    return module


cst = _lazy("libcst")


def origin_of(name: str) -> str | None:
    """The file a module taken from here is loaded from, without loading it (asking the
    lazy module for its ``__spec__`` would run the import)."""
    return _ORIGINS.get(name)


def is_loaded(module: types.ModuleType = cst) -> bool:
    """Whether the real import has run (for tests and measurements)."""
    return type(module).__name__ != "_LazyModule"
