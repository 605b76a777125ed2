"""What each name is bound to, scope by scope, as the walk reaches it.

The walk is in source order, so a lookup returns the binding that is in force at
the point being visited (the last assignment before it in the same scope, else
the enclosing function's, else the module's). That is a cheap, flow-insensitive
approximation of Python's scoping, good enough for "what was ``w`` assigned
from" questions, and far cheaper than LibCST's full ScopeProvider.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


@dataclass
class Binding:
    """One binding of a name.

    ``kind`` is one of: assign, augassign, annassign, param, for, with, import,
    def, class, comprehension, walrus, except, unpack.
    ``value`` is the bound expression (for ``for``/``comprehension`` bindings the
    iterable; for ``unpack`` the whole right-hand side, with ``index`` saying which
    element of the target tuple this name is).
    """

    name: str
    kind: str
    node: cst.CSTNode
    value: cst.BaseExpression | None = None
    annotation: cst.BaseExpression | None = None
    qualname: str | None = None  # for imports: the fully qualified name bound
    index: int | None = None
    grad_disabled: bool = False  # bound inside a no_grad / inference_mode region
    scope_kind: str = "module"


@dataclass
class Scope:
    kind: str  # module, class, function, lambda, comprehension
    node: cst.CSTNode
    bindings: dict[str, Binding] = field(default_factory=dict)
    # Names rebound anywhere in this scope after their first binding (e.g. the
    # snapshot name re-assigned each epoch); filled as the walk goes.
    rebinds: dict[str, int] = field(default_factory=dict)


def target_names(target: cst.BaseExpression) -> list[tuple[str, int | None]]:
    """Names bound by an assignment target, with their index in a flat tuple target."""
    if isinstance(target, cst.Name):
        return [(target.value, None)]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[tuple[str, int | None]] = []
        for position, element in enumerate(target.elements):
            inner = element.value
            if isinstance(inner, cst.Name):
                names.append((inner.value, position))
            else:
                names.extend((name, None) for name, _ in target_names(inner))
        return names
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


class ScopeTracker:
    """Walk participant that maintains the scope stack and the bindings in it."""

    def __init__(self, grad_mode: "GradModeLike") -> None:
        self.scopes: list[Scope] = []
        self._grad = grad_mode
        self._branches: dict[int, _Branch] = {}  # by id of the If, and of its orelse

    # -- queries -------------------------------------------------------------
    @property
    def current(self) -> Scope:
        return self.scopes[-1]

    def lookup(self, name: str) -> Binding | None:
        """The binding of ``name`` visible here, following Python's LEGB order."""
        innermost = True
        for scope in reversed(self.scopes):
            if scope.kind == "class" and not innermost:
                continue
            binding = scope.bindings.get(name)
            if binding is not None:
                return binding
            innermost = False
        return None

    def enclosing_function(self) -> cst.CSTNode | None:
        for scope in reversed(self.scopes):
            if scope.kind in ("function", "lambda"):
                return scope.node
        return None

    def in_class_body(self) -> bool:
        return bool(self.scopes) and self.current.kind == "class"

    # -- binding helpers -----------------------------------------------------
    def bind(self, name: str, kind: str, node: cst.CSTNode, **extra: object) -> None:
        scope = self.current
        if name in scope.bindings:
            scope.rebinds[name] = scope.rebinds.get(name, 0) + 1
        scope.bindings[name] = Binding(
            name=name,
            kind=kind,
            node=node,
            grad_disabled=self._grad.disabled,
            scope_kind=scope.kind,
            **extra,  # type: ignore[arg-type]
        )

    def bind_target(self, target: cst.BaseExpression, kind: str, node: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self.bind(target.value, kind, node, value=value)
            return
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements) and kind == "assign":
            for left, right in zip(target.elements, value.elements):
                self.bind_target(left.value, kind, node, right.value)
            return
        for name, index in target_names(target):
            self.bind(name, "unpack" if kind == "assign" else kind, node, value=value, index=index)

    def bind_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.bind(alias.asname.name.value, "import", node, qualname=dotted)
                else:
                    root = dotted.split(".")[0]
                    self.bind(root, "import", node, qualname=root)
            return
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = _dotted(node.module)
        for alias in node.names:
            imported = _dotted(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bind(local, "import", node, qualname=f"{module}.{imported}")

    # -- walk participant ----------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(Scope("module", node))
        # Imports anywhere at module level are visible in every function body,
        # even when the function is defined above the import.
        for statement in _top_level_imports(node.body):
            self.bind_import(statement)

    def leave_Module(self, node: cst.Module) -> None:
        self.scopes.pop()

    def visit_Import(self, node: cst.Import) -> None:
        self.bind_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.bind_import(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bind(node.name.value, "class", node)
        self.scopes.append(Scope("class", node))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bind(node.name.value, "def", node)
        self.scopes.append(Scope("function", node))
        self._bind_params(node.params)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.append(Scope("lambda", node))
        self._bind_params(node.params)

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.pop()

    def _bind_params(self, params: cst.Parameters) -> None:
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                every.append(extra)
        for param in every:
            annotation = param.annotation.annotation if param.annotation else None
            self.bind(param.name.value, "param", param, value=param.default, annotation=annotation)

    def _visit_comprehension(self, node: cst.CSTNode) -> None:
        self.scopes.append(Scope("comprehension", node))
        # The element (``elt`` / ``key`` / ``value``) is walked before the ``for``
        # clauses: bind their targets now so that ``[p.clone() for p in ...]`` sees ``p``.
        clause = getattr(node, "for_in", None)
        while isinstance(clause, cst.CompFor):
            self.bind_target(clause.target, "comprehension", clause, clause.iter)
            clause = clause.inner_for_in

    def _leave_comprehension(self, node: cst.CSTNode) -> None:
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    # -- if / elif / else: a branch does not see the bindings of its sibling --
    def visit_If(self, node: cst.If) -> None:
        self._enter_orelse(node)
        branch = _Branch(self.current, dict(self.current.bindings), node_body=node.body)
        self._branches[id(node)] = branch
        if node.orelse is not None:
            self._branches[id(node.orelse)] = branch

    def visit_Else(self, node: cst.Else) -> None:
        self._enter_orelse(node)

    def _enter_orelse(self, node: cst.CSTNode) -> None:
        """Entering an ``else`` / ``elif``: undo what the ``if`` body bound."""
        branch = self._branches.pop(id(node), None)
        if branch is None or branch.scope is not self.current:
            return
        body = branch.body = dict(branch.scope.bindings)
        branch.body_ends = _ends_flow(branch.node_body)
        _restore(branch.scope.bindings, body, branch.before)

    def leave_If(self, node: cst.If) -> None:
        branch = self._branches.pop(id(node), None)
        if branch is None or branch.scope is not self.current:
            return
        bindings = branch.scope.bindings
        if branch.body is None:  # no else: a body that returns binds nothing after the if
            if _ends_flow(node.body):
                _restore(bindings, dict(bindings), branch.before)
            return
        if branch.body_ends:
            return  # only the else branch reaches the code after the if
        if node.orelse is not None and _ends_flow(node.orelse.body):
            _restore(bindings, dict(bindings), branch.body)  # only the if body does
            return
        for name, binding in branch.body.items():  # both do: the else wins where both bind
            if binding is not branch.before.get(name) and bindings.get(name) is branch.before.get(name):
                bindings[name] = binding

    def visit_For(self, node: cst.For) -> None:
        self.bind_target(node.target, "for", node, node.iter)

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.bind_target(target.target, "assign", node, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.bind(node.target.value, "annassign", node, value=node.value, annotation=node.annotation.annotation)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        # ``x += y`` keeps x's kind (tensor stays tensor); remember that it happened.
        if isinstance(node.target, cst.Name):
            scope = self.current
            scope.rebinds[node.target.value] = scope.rebinds.get(node.target.value, 0) + 1

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.bind(node.target.value, "walrus", node, value=node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind_target(node.asname.name, "with", node, node.item)  # type: ignore[arg-type]

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.bind(node.name.name.value, "except", node)


@dataclass
class _Branch:
    """Bindings around one ``if`` statement (see ScopeTracker.visit_If)."""

    scope: Scope
    before: dict[str, Binding]
    body: dict[str, Binding] | None = None
    body_ends: bool = False
    node_body: cst.BaseSuite | None = None


def _restore(bindings: dict[str, Binding], current: dict[str, Binding], wanted: dict[str, Binding]) -> None:
    """Make ``bindings`` agree with ``wanted`` for every name that differs in ``current``."""
    for name in current.keys() | wanted.keys():
        if wanted.get(name) is not current.get(name):
            if name in wanted:
                bindings[name] = wanted[name]
            else:
                bindings.pop(name, None)


def _ends_flow(suite: cst.BaseSuite | None) -> bool:
    """Whether a block always leaves through return / raise / continue / break."""
    if suite is None:
        return False
    body = suite.body
    if isinstance(suite, cst.IndentedBlock):
        if not body:
            return False
        last = body[-1]
        if not isinstance(last, cst.SimpleStatementLine):
            return False
        body = last.body
    return bool(body) and isinstance(body[-1], (cst.Return, cst.Raise, cst.Continue, cst.Break))


class GradModeLike:  # pragma: no cover - a typing stand-in, see grad_mode.GradModeTracker
    disabled: bool


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _top_level_imports(body: object) -> list[cst.Import | cst.ImportFrom]:
    """Import statements at module level, including inside top-level if/try blocks."""
    found: list[cst.Import | cst.ImportFrom] = []
    pending = list(body)  # type: ignore[call-overload]
    while pending:
        statement = pending.pop(0)
        if isinstance(statement, cst.SimpleStatementLine):
            found.extend(small for small in statement.body if isinstance(small, (cst.Import, cst.ImportFrom)))
        elif isinstance(statement, (cst.If, cst.Try, cst.Else, cst.ExceptHandler, cst.Finally)):
            block = statement.body
            if isinstance(block, cst.IndentedBlock):
                pending.extend(block.body)
            for extra in ("orelse", "handlers", "finalbody"):
                value = getattr(statement, extra, None)
                if isinstance(value, (list, tuple)):
                    pending.extend(value)
                elif value is not None:
                    pending.append(value)
    return found
