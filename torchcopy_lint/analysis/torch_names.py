"""Resolve expressions to torch's qualified names through the file's imports.

``th.tensor``, ``tensor`` (after ``from torch import tensor``) and
``torch.tensor`` all resolve to ``"torch.tensor"``; ``nn.Parameter`` after
``import torch.nn as nn`` resolves to ``"torch.nn.Parameter"``. A local name that
shadows an import (a parameter called ``torch``, say) resolves to nothing,
because lookups go through the same scope bindings as everything else.
"""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.analysis.scopes import ScopeTracker

_MAX_ALIAS_DEPTH = 4


class TorchNames:
    """Qualified-name resolution for the current point of the walk."""

    def __init__(self, scopes: ScopeTracker) -> None:
        self._scopes = scopes
        self.imports_torch = False

    def visit_Module(self, node: cst.Module) -> None:
        # Runs after ScopeTracker.visit_Module has bound the top-level imports.
        self.imports_torch = any(
            binding.kind == "import" and (binding.qualname or "").split(".")[0] == "torch"
            for binding in self._scopes.current.bindings.values()
        )

    def visit_Import(self, node: cst.Import) -> None:
        self.imports_torch = self.imports_torch or any(
            _root(alias.name) == "torch" for alias in node.names
        )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None and not node.relative and _root(node.module) == "torch":
            self.imports_torch = True

    def qualname(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """The dotted name ``expr`` refers to, when it is rooted at an import."""
        if isinstance(expr, cst.Name):
            binding = self._scopes.lookup(expr.value)
            if binding is None:
                return None
            if binding.kind == "import":
                return binding.qualname
            # Follow simple aliases such as ``tensor_fn = torch.tensor``.
            if binding.kind == "assign" and isinstance(binding.value, (cst.Name, cst.Attribute)) and _depth < _MAX_ALIAS_DEPTH:
                return self.qualname(binding.value, _depth + 1)
            return None
        if isinstance(expr, cst.Attribute):
            base = self.qualname(expr.value, _depth)
            return f"{base}.{expr.attr.value}" if base else None
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
        ``Tensor`` gives ``{"torch.cuda.FloatTensor", "torch.FloatTensor"}``. Either
        branch may be a non-torch name; only the torch ones are returned.
        """
        return frozenset(name for name in self._candidates(expr, 0) if name == "torch" or name.startswith("torch."))

    def _candidates(self, expr: cst.BaseExpression, depth: int) -> frozenset[str]:
        if depth > _MAX_ALIAS_DEPTH:
            return frozenset()
        if isinstance(expr, cst.IfExp):
            return self._candidates(expr.body, depth + 1) | self._candidates(expr.orelse, depth + 1)
        if isinstance(expr, cst.Name):
            binding = self._scopes.lookup(expr.value)
            if binding is not None and binding.kind == "assign" and isinstance(binding.value, (cst.IfExp, cst.Name, cst.Attribute)):
                return self._candidates(binding.value, depth + 1)
        if isinstance(expr, cst.Attribute):
            return frozenset(f"{base}.{expr.attr.value}" for base in self._candidates(expr.value, depth))
        name = self.qualname(expr)
        return frozenset((name,)) if name is not None else frozenset()

    def is_torch(self, expr: cst.BaseExpression, *names: str) -> bool:
        """Whether ``expr`` is one of the given torch names (``"torch.no_grad"``, ...)."""
        return self.torch_qualname(expr) in names

    def callee(self, call: cst.Call) -> str | None:
        """The torch qualified name of a call's function, if any."""
        return self.torch_qualname(call.func)


def _root(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""
