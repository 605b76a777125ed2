"""Per-file context handed to every checker: the semantic model, where the walk is, reporting.

Checking a file takes two walks. The first (pass 1, :class:`~torchcopy_lint.analysis.binder.Binder`)
records every binding, class attribute, return, hook and call site; the
:class:`~torchcopy_lint.analysis.semantic.SemanticModel` is built from them, complete
before any rule runs. The second walk drives the checkers, with small trackers for
"where are we" (scope, grad mode, loops and statements); a checker asks the model about
an expression with :meth:`FileContext.value` and never re-derives facts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.binder import Binder
from torchcopy_lint.analysis.bindings import Binding, ClassInfo, Scope, ScopeKind
from torchcopy_lint.analysis.flow import FlowTracker
from torchcopy_lint.analysis.grad_mode import GradModeTracker, RequiresGradSwitches
from torchcopy_lint.analysis.semantic import SemanticModel
from torchcopy_lint.analysis.tensors import TensorFacts
from torchcopy_lint.analysis.torch_names import TorchNames
from torchcopy_lint.analysis.values import Value
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


def build_model(module: cst.Module) -> SemanticModel:
    """Pass 1: walk ``module`` once with the binder and build its semantic model."""
    grad = GradModeTracker()
    walker = Walker([])
    binder = Binder(grad, walker.parents)
    grad.names = TorchNames(lambda name: binder.lookup(name.value))
    grad.functions = binder.function_named
    grad.records = binder.records
    Walker([grad, binder], walker.parents).walk(module)
    return SemanticModel(binder.records)


class ScopeStack:
    """Pass-2 participant: the scope the walk is in (the model's scopes, entered again)."""

    def __init__(self, model: SemanticModel) -> None:
        self._model = model
        self.scopes: list[Scope] = []

    def _enter(self, node: cst.CSTNode) -> None:
        scope = self._model.scope_of(node)
        if scope is not None:
            self.scopes.append(scope)

    def _leave(self, node: cst.CSTNode) -> None:
        if self.scopes and self.scopes[-1].node is node:
            self.scopes.pop()

    visit_Module = visit_ClassDef = visit_FunctionDef = visit_Lambda = _enter
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter
    leave_Module = leave_ClassDef = leave_FunctionDef = leave_Lambda = _leave
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave

    @property
    def current(self) -> Scope:
        return self.scopes[-1]

    def enclosing_function(self) -> cst.CSTNode | None:
        """The innermost function or lambda around the walk's point."""
        for scope in reversed(self.scopes):
            if scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                return scope.node
        return None

    def enclosing_class(self) -> ClassInfo | None:
        for scope in reversed(self.scopes):
            if scope.kind is ScopeKind.CLASS:
                return self._model.class_info(scope.node)
        return None

    def in_class_body(self) -> bool:
        return bool(self.scopes) and self.current.kind is ScopeKind.CLASS


class FileContext:
    """Shared facts about the file being checked, valid at the walk's current point."""

    def __init__(self, filename: str, module: cst.Module, model: SemanticModel | None = None) -> None:
        self.filename = filename
        self.module = module
        self.model = model if model is not None else build_model(module)
        self.names = self.model.names
        self.grad = GradModeTracker()
        self.grad.names = self.names
        self.grad.model = self.model
        self.scopes = ScopeStack(self.model)
        self.switches = RequiresGradSwitches(self.model.bindings_of)
        self.tensors = TensorFacts(self)
        self.flow = FlowTracker()
        self.flow.is_optimizer = self.model.is_optimizer
        self.findings: list[RawFinding] = []
        self.deferred: list[Callable[[], None]] = []  # checks that need the whole module (Checker.defer)
        self.walker: Walker | None = None

    def close(self) -> None:
        """Drop everything this context holds once its findings have been read: the model,
        the trackers and the checkers refer back to it, and those reference cycles would keep
        the file's whole LibCST tree alive until the garbage collector finds them (see
        :mod:`torchcopy_lint.heap`). The context is unusable afterwards."""
        model = self.__dict__.get("model")
        if model is not None:
            model.close()
        self.__dict__.clear()

    @property
    def participants(self) -> list[object]:
        """Trackers in the order they must see each node (before any checker)."""
        return [self.scopes, self.grad, self.switches, self.flow]

    # -- questions to the model, at the walk's point ------------------------------------
    def value(self, expr: cst.BaseExpression) -> Value:
        """What ``expr`` may be, evaluated where the walk is (grad mode included)."""
        return self.model.value(expr, self.grad.disabled)

    def bindings_of(self, name: cst.Name) -> tuple[Binding, ...]:
        return self.model.bindings_of(name)

    # -- the walk -------------------------------------------------------------------------
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

    def run_deferred(self) -> None:
        """The deferred checks, once the walk is complete (the engine calls this)."""
        for check in self.deferred:
            check()
        self.deferred.clear()

    def report(self, node: cst.CSTNode, code: str, message: str, fix: "Fix | None" = None, *, top: cst.CSTNode | None = None) -> None:
        """Report ``node``. A decision deferred past the node (to a later use, the end of a
        loop) passes ``top``: the :attr:`top_statement` recorded when the node was walked."""
        if top is None:
            parents = self.parents
            top = parents[1] if len(parents) > 1 else node
        index = _index_of(self.module.body, top)
        self.findings.append(RawFinding(code, message, node, index, fix))


def _index_of(body: object, statement: cst.CSTNode) -> int:
    for index, candidate in enumerate(body):  # type: ignore[call-overload]
        if candidate is statement:
            return index
    return -1
