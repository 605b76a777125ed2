"""Per-file context handed to every checker: the shared analyses plus reporting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from torchcopy_lint.analysis.flow import FlowTracker
from torchcopy_lint.analysis.grad_mode import GradModeTracker
from torchcopy_lint.analysis.scopes import ScopeTracker
from torchcopy_lint.analysis.tensors import TensorInference
from torchcopy_lint.analysis.torch_names import TorchNames
from torchcopy_lint.walker import Walker

if TYPE_CHECKING:
    from torchcopy_lint.fixes.model import Fix


@dataclass
class RawFinding:
    """A finding before positions are resolved: the node and its top-level statement."""

    code: str
    message: str
    node: cst.CSTNode
    statement_index: int
    fix: "Fix | None" = None


class FileContext:
    """Shared facts about the file being checked, valid at the walk's current point."""

    def __init__(self, filename: str, module: cst.Module) -> None:
        self.filename = filename
        self.module = module
        self.grad = GradModeTracker()
        self.scopes = ScopeTracker(self.grad)
        self.names = TorchNames(self.scopes)
        self.grad.names = self.names
        self.tensors = TensorInference(self.scopes, self.names)
        self.flow = FlowTracker()
        self.findings: list[RawFinding] = []
        self.walker: Walker | None = None

    @property
    def participants(self) -> list[object]:
        """Analyses in the order they must see each node (before any checker)."""
        return [self.scopes, self.grad, self.names, self.tensors, self.flow]

    @property
    def parents(self) -> list[cst.CSTNode]:
        """Ancestors of the node being visited, outermost first."""
        assert self.walker is not None
        return self.walker.parents

    @property
    def parent(self) -> cst.CSTNode | None:
        assert self.walker is not None
        return self.walker.parent

    @property
    def top_statement(self) -> cst.CSTNode | None:
        """The top-level statement being walked (None at module level itself)."""
        parents = self.parents
        return parents[1] if len(parents) > 1 else None

    def report(self, node: cst.CSTNode, code: str, message: str, fix: "Fix | None" = None, *, top: cst.CSTNode | None = None) -> None:
        """Report ``node``. A decision deferred past the node (to a later use, the end of a
        loop) passes ``top``: the :attr:`top_statement` recorded when the node was walked."""
        parents = self.parents
        if top is None:
            top = parents[1] if len(parents) > 1 else node
        index = _index_of(self.module.body, top)
        self.findings.append(RawFinding(code, message, node, index, fix))


def _index_of(body: object, statement: cst.CSTNode) -> int:
    for index, candidate in enumerate(body):  # type: ignore[call-overload]
        if candidate is statement:
            return index
    return -1
