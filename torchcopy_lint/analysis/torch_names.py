"""Resolve expressions to qualified names through the file's imports.

``th.tensor``, ``tensor`` (after ``from torch import tensor``) and ``torch.tensor`` all
resolve to ``"torch.tensor"``; ``nn.Parameter`` after ``import torch.nn as nn`` resolves
to ``"torch.nn.Parameter"``. Names are resolved through their bindings (see
:mod:`.bindings`), so a local name that shadows an import (a parameter called
``torch``) resolves to nothing, and simple aliases (``fn = torch.tensor``) are followed.
"""

from __future__ import annotations

from collections.abc import Callable

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.bindings import Binding, BindingKind

_MAX_ALIAS_DEPTH = 4
Lookup = Callable[["cst.Name"], "tuple[Binding, ...]"]


class TorchNames:
    """Qualified-name resolution; ``lookup`` gives the bindings that reach a Name node."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup
        self.imports_torch = False

    def qualname(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """The dotted name ``expr`` refers to, when it is rooted at an import."""
        form = type(expr)  # not isinstance: LibCST's classes are final, and ABCMeta makes misses slow
        if form is cst.Name:
            found = {self._binding_qualname(binding, _depth) for binding in self._lookup(expr)}
            return found.pop() if len(found) == 1 else None
        if form is cst.Attribute:
            base = self.qualname(expr.value, _depth)
            return f"{base}.{expr.attr.value}" if base else None
        return None

    def _binding_qualname(self, binding: Binding, depth: int) -> str | None:
        if binding.kind is BindingKind.IMPORT:
            return binding.qualname
        # Follow simple aliases such as ``tensor_fn = torch.tensor``.
        if binding.kind is BindingKind.ASSIGNMENT and not binding.path and isinstance(binding.value, (cst.Name, cst.Attribute)) and depth < _MAX_ALIAS_DEPTH:
            return self.qualname(binding.value, depth + 1)
        return None

    def torch_qualname(self, expr: cst.BaseExpression) -> str | None:
        """Like :meth:`qualname`, but only for names inside the torch package."""
        name = self.qualname(expr)
        if name is not None and (name == "torch" or name.startswith("torch.")):
            return name
        return None

    def torch_qualname_candidates(self, expr: cst.BaseExpression) -> frozenset[str]:
        """Every torch name ``expr`` may refer to.

        Like :meth:`torch_qualname`, but a conditional alias contributes both branches:
        after ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``,
        ``Tensor`` gives ``{"torch.cuda.FloatTensor", "torch.FloatTensor"}``, and so does a
        name bound to different torch names in different branches.
        """
        return frozenset(name for name in self._candidates(expr, 0) if name == "torch" or name.startswith("torch."))

    def _candidates(self, expr: cst.BaseExpression, depth: int) -> frozenset[str]:
        if depth > _MAX_ALIAS_DEPTH:
            return frozenset()
        if isinstance(expr, cst.IfExp):
            return self._candidates(expr.body, depth + 1) | self._candidates(expr.orelse, depth + 1)
        if isinstance(expr, cst.Name):
            found: set[str] = set()
            for binding in self._lookup(expr):
                if binding.kind is BindingKind.IMPORT and binding.qualname:
                    found.add(binding.qualname)
                elif binding.kind is BindingKind.ASSIGNMENT and not binding.path and isinstance(binding.value, (cst.IfExp, cst.Name, cst.Attribute)):
                    found |= self._candidates(binding.value, depth + 1)
            return frozenset(found)
        if isinstance(expr, cst.Attribute):
            return frozenset(f"{base}.{expr.attr.value}" for base in self._candidates(expr.value, depth))
        return frozenset()

    def is_torch(self, expr: cst.BaseExpression, *names: str) -> bool:
        """Whether ``expr`` is one of the given torch names (``"torch.no_grad"``, ...)."""
        return self.torch_qualname(expr) in names

    def callee(self, call: cst.Call) -> str | None:
        """The torch qualified name of a call's function, if any."""
        return self.torch_qualname(call.func)
