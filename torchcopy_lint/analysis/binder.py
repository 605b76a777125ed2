"""Pass 1: walk the module once and record what the semantic model needs.

For every name load, the bindings that may reach it (flow-sensitive inside a scope:
branches join, a loop body also sees its own later bindings from the previous
iteration, a function sees the final bindings of the scopes around it); for every
class, its attributes from all of its methods (``self.x = ...`` in ``__init__`` is
``self.x`` in ``reset()``); for every function, its returns and yields; values put
into containers after they were made (``xs.append(v)``, ``d[k] = v``); hook
registrations; calls of local functions and classes. Nothing is evaluated here: the
:class:`~torchcopy_lint.analysis.semantic.SemanticModel` evaluates on demand, when
the records are complete.
"""

from __future__ import annotations

from functools import lru_cache

from dataclasses import dataclass, field, replace

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.bindings import (
    Addition,
    AttributeSite,
    Binding,
    BindingKind,
    ClassInfo,
    FunctionInfo,
    Scope,
    ScopeKind,
)
from torchcopy_lint.analysis.cst_helpers import bool_literal, dotted_name, is_false, keyword_arg, positional_args, string_value
from torchcopy_lint.analysis.grad_mode import GradModeTracker
from torchcopy_lint.analysis.torch_api import DTYPE_CONVERSION_METHODS, ELEMENTWISE_MASKS, MODULE_HOOKS, MODULE_ITERATORS, MODULE_SELF_METHODS, MODULE_USE_METHODS, TENSOR_HOOKS, TENSOR_ONLY_KEYWORDS, TENSOR_ONLY_METHODS, writes_values

# Container methods that put a value in: method -> (index of the value argument, spread).
_ADDERS: dict[str, tuple[int, bool]] = {
    "append": (0, False),
    "appendleft": (0, False),
    "add": (0, False),
    "put": (0, False),
    "insert": (1, False),
    "extend": (0, True),
    "extendleft": (0, True),
    "update": (0, True),
    "setdefault": (1, False),
}


@dataclass
class _Branch:
    """Reaching bindings around one ``if`` (see :meth:`Binder.visit_If`)."""

    scope: Scope
    before: dict[str, tuple[Binding, ...]]
    body_end: dict[str, tuple[Binding, ...]] | None = None


@dataclass
class _Loop:
    """A loop being walked: loads in it may also see bindings made later in its body."""

    scope: Scope
    before: dict[str, tuple[Binding, ...]]
    start: int  # binding order when the loop was entered
    loads: list[tuple[cst.Name, int]] = field(default_factory=list)  # (node, order)
    bound: dict[str, list[Binding]] = field(default_factory=dict)


@dataclass
class HookRegistration:
    """``m.register_forward_hook(fn)``: ``fn`` receives ``roles``."""

    roles: tuple[str, ...]
    callback: cst.BaseExpression
    call: cst.Call
    scope: "Scope | None" = None  # where the registration is (a function that may remove it again)


@dataclass
class RawCall:
    """A call whose callee may be a local function or class (resolved at the end)."""

    call: cst.Call
    grad_disabled: bool
    scope: Scope


class Binder:
    """Pass-1 walk participant. Fills a :class:`Records`."""

    def __init__(self, grad: GradModeTracker, parents: list[cst.CSTNode] | None = None) -> None:
        self.grad = grad
        self._parents = parents if parents is not None else []  # the walker's ancestor stack
        self.records = Records()
        self._scope: Scope | None = None
        self._order = 0
        self._functions: list[FunctionInfo] = []
        self._branches: dict[int, _Branch] = {}
        self._tests: list[tuple[cst.BaseExpression, Scope]] = []  # the if / conditional tests around the walk's point
        self._tested_dtypes: dict[int, set[str]] = {}  # id(test) -> names whose dtype it reads
        self._loops: list[_Loop] = []
        self._tries: dict[int, dict[str, tuple[Binding, ...]]] = {}
        self._deferred: list[tuple[cst.Name, Scope]] = []
        self._narrowing: list[tuple[str, object]] = []
        self._pending_narrowing: dict[int, tuple[str, object]] = {}
        self._guards: list[list[tuple[str, object]]] = []  # per open block: narrowings after ``if isinstance(x, T): return``
        self._method_names: set[str] = set()

    # -- lookups during the walk (pass 1 only) ------------------------------------
    @property
    def scope(self) -> Scope:
        assert self._scope is not None
        return self._scope

    def lookup(self, name: str) -> tuple[Binding, ...]:
        """The bindings of ``name`` reaching the current point, by Python's LEGB order
        (class bodies are not seen from functions inside them)."""
        scope: Scope | None = self._scope
        innermost = True
        while scope is not None:
            if not (scope.kind is ScopeKind.CLASS and not innermost):
                found = scope.reaching.get(name)
                if found:
                    return found
            innermost = False
            scope = scope.parent
        return ()

    def _next_order(self) -> int:
        self._order += 1
        return self._order

    # -- binding -----------------------------------------------------------------------
    def _target_scope(self, name: str) -> Scope:
        scope = self.scope
        if name in scope.declared_global:
            while scope.parent is not None:
                scope = scope.parent
        elif name in scope.declared_nonlocal:
            outer = scope.parent
            while outer is not None and not (outer.kind is ScopeKind.FUNCTION and name in outer.every):
                outer = outer.parent
            scope = outer or scope
        return scope

    def bind(self, name: str, kind: BindingKind, node: cst.CSTNode, **extra: object) -> Binding:
        scope = self._target_scope(name)
        binding = Binding(name, kind, node, scope, self._next_order(), grad_disabled=self.grad.disabled, **extra)  # type: ignore[arg-type]
        scope.every.setdefault(name, []).append(binding)
        scope.reaching[name] = (binding,)
        self._end_guards(name)
        for loop in self._loops:
            if loop.scope is scope:
                loop.bound.setdefault(name, []).append(binding)
        self.records.bindings.append(binding)
        return binding

    def bind_target(self, target: cst.BaseExpression, kind: BindingKind, node: cst.CSTNode, value: cst.BaseExpression | None, path: tuple[int | None, ...] = ()) -> None:
        if isinstance(target, cst.Name):
            self.records.targets[id(target)] = self.bind(target.value, kind, node, value=value, path=path)
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = False
            for position, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement):
                    starred = True
                    self.bind_target(element.value, kind, node, value, (*path, None))
                else:
                    # After a starred element, positions count from the end: unknown here.
                    self.bind_target(element.value, kind, node, value, (*path, None if starred else position))
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, kind, node, value, (*path, None))

    # -- scopes --------------------------------------------------------------------------
    def _push(self, kind: ScopeKind, node: cst.CSTNode) -> Scope:
        scope = Scope(kind, node, self._scope)
        self._scope = scope
        self.records.scopes[id(node)] = scope
        return scope

    def _pop(self) -> None:
        self._scope = self.scope.parent

    def visit_Module(self, node: cst.Module) -> None:
        self.records.module_scope = self._push(ScopeKind.MODULE, node)
        self._method_names = _method_names(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._resolve_deferred()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bind(node.name.value, BindingKind.CLASS, node)
        scope = self._push(ScopeKind.CLASS, node)
        self.records.classes[id(node)] = ClassInfo(node, scope)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        info = self.records.classes[id(node)]
        for name, bindings in info.scope.every.items():
            for binding in bindings:
                if binding.kind is BindingKind.FUNCTION and isinstance(binding.node, cst.FunctionDef):
                    info.methods[name] = binding.node
                elif binding.kind in (BindingKind.ASSIGNMENT, BindingKind.ANNOTATION, BindingKind.AUGMENTED) and not binding.path:
                    info.attributes.setdefault(name, []).append(AttributeSite(binding.value, binding.grad_disabled, binding.kind.value, annotation=binding.annotation))
        self._pop()

    def _enter_function(self, node: cst.FunctionDef | cst.Lambda) -> None:
        cls = self.records.classes.get(id(self.scope.node)) if self.scope.kind is ScopeKind.CLASS else None
        decorators: tuple[str, ...] = ()
        if isinstance(node, cst.FunctionDef):
            self.bind(node.name.value, BindingKind.FUNCTION, node)
            decorators = tuple(filter(None, (dotted_name(_callee(d.decorator)) for d in node.decorators)))
        self.records.tops[id(node)] = self._parents[1] if len(self._parents) > 1 else node
        scope = self._push(ScopeKind.FUNCTION if isinstance(node, cst.FunctionDef) else ScopeKind.LAMBDA, node)
        info = FunctionInfo(node, scope, cls, decorators=decorators)
        if isinstance(node, cst.Lambda):
            info.returns.append((node.body, self.grad.disabled))
            info.made_without_grad = self.grad.outer_disabled
        self.records.functions[id(node)] = info
        self._functions.append(info)
        params = node.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        every += [extra for extra in (params.star_arg, params.star_kwarg) if isinstance(extra, cst.Param)]
        for param in every:
            annotation = param.annotation.annotation if param.annotation is not None else None
            self.bind(param.name.value, BindingKind.PARAMETER, param, value=param.default, annotation=annotation)

    def _leave_function(self, node: cst.FunctionDef | cst.Lambda) -> None:
        self._functions.pop()
        self._pop()

    visit_FunctionDef = visit_Lambda = _enter_function
    leave_FunctionDef = leave_Lambda = _leave_function

    def _enter_comprehension(self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp) -> None:
        self._push(ScopeKind.COMPREHENSION, node)
        # The element is walked before the ``for`` clauses: bind their targets first.
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            self.bind_target(clause.target, BindingKind.COMPREHENSION_TARGET, clause, clause.iter)
            clause = clause.inner_for_in
        self._narrow_comprehension(node)

    def _leave_comprehension(self, node: cst.CSTNode) -> None:
        self._pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.declared_global.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.declared_nonlocal.update(item.name.value for item in node.names)

    # -- loads -------------------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        name = node.value
        for narrowed, kind in reversed(self._narrowing):
            if narrowed == name:
                self.records.narrowed[id(node)] = kind  # type: ignore[assignment]
                break
        scope: Scope | None = self._scope
        innermost = True
        while scope is not None:
            if scope.kind is ScopeKind.CLASS and not innermost:
                scope = scope.parent
                continue
            found = scope.reaching.get(name)
            if found:
                self.records.resolution[id(node)] = found
                self._note_loop_load(node, scope)
                return
            if scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                # Not bound here yet: bound later in a loop (see leave_For), or free (then
                # the enclosing scopes' final bindings reach it when the function runs).
                self._deferred.append((node, scope))
                self._note_loop_load(node, scope)
                return
            innermost = False
            scope = scope.parent

    def _note_loop_load(self, node: cst.Name, scope: Scope) -> None:
        for loop in self._loops:
            if loop.scope is scope:
                loop.loads.append((node, self._order))

    def _resolve_deferred(self) -> None:
        for node, scope in self._deferred:
            if id(node) in self.records.resolution:
                continue  # a later binding in the same loop reached it
            name = node.value
            if name in scope.every:
                self.records.resolution[id(node)] = tuple(scope.every[name])
                continue
            outer = scope.parent
            while outer is not None:
                if outer.kind is not ScopeKind.CLASS and outer.reaching.get(name):
                    self.records.resolution[id(node)] = outer.reaching[name]
                    break
                outer = outer.parent

    # -- statements that bind ----------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bind(alias.asname.name.value, BindingKind.IMPORT, node, qualname=dotted)
            else:
                root = dotted.split(".")[0]
                self.bind(root, BindingKind.IMPORT, node, qualname=root)
            if dotted.split(".")[0] == "torch":
                self.records.imports_torch = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module) or ""
        if module.split(".")[0] == "torch":
            self.records.imports_torch = True
        for alias in node.names:
            imported = dotted_name(alias.name) or ""
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bind(local, BindingKind.IMPORT, node, qualname=f"{module}.{imported}")

    def visit_For(self, node: cst.For) -> None:
        self._loops.append(_Loop(self.scope, dict(self.scope.reaching), self._order))
        self.bind_target(node.target, BindingKind.LOOP_TARGET, node, node.iter)

    def visit_While(self, node: cst.While) -> None:
        self._loops.append(_Loop(self.scope, dict(self.scope.reaching), self._order))

    def _leave_loop(self, node: cst.For | cst.While) -> None:
        loop = self._loops.pop()
        # The next iteration: a load that the loop's entry reaches (no binding of the body
        # surely comes first) also sees what reaches the end of the body, from the
        # previous iteration: ``best = None`` ... ``if best is None: best = x else: use(best)``.
        end = loop.scope.reaching
        cyclic = False
        for name_node, _order in loop.loads:
            name = name_node.value
            if name not in loop.bound:
                continue
            known = self.records.resolution.get(id(name_node), ())
            if known and all(binding.order > loop.start for binding in known):
                continue  # bound earlier in the same iteration: that binding comes first
            carried = [binding for binding in end.get(name, ()) if binding.order > loop.start and binding not in known]
            if carried:
                self.records.resolution[id(name_node)] = (*known, *carried)
                cyclic = True
        if cyclic:
            self.records.cyclic_scopes.append(loop.scope)
        # After the loop: it may have run zero times, except for the state the loop carries.
        _union_into(loop.scope.reaching, _without(loop.before, _carried_state(loop, self.records)))

    leave_For = leave_While = _leave_loop

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._store(target.target, node.value, node, BindingKind.ASSIGNMENT)
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "requires_grad":
                self._switch_parameters_of(target.target.value, not is_false(node.value))
                self._switch_attribute(target.target.value, bool_literal(node.value))

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        annotation = node.annotation.annotation
        if isinstance(node.target, cst.Name):
            self.records.targets[id(node.target)] = self.bind(node.target.value, BindingKind.ANNOTATION, node, value=node.value, annotation=annotation)
        else:
            self._store(node.target, node.value, node, BindingKind.ANNOTATION)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if isinstance(target, cst.Name):
            previous = self.lookup(target.value)
            self.bind(target.value, BindingKind.AUGMENTED, node, value=node.value, previous=previous)
        else:
            self._store(target, node.value, node, BindingKind.AUGMENTED)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.records.targets[id(node.target)] = self.bind(node.target.value, BindingKind.WALRUS, node, value=node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind_target(node.asname.name, BindingKind.WITH_TARGET, node, node.item)  # type: ignore[arg-type]

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.bind(node.name.name.value, BindingKind.EXCEPTION, node)

    def _store_elements(self, target: cst.Tuple | cst.List, value: cst.BaseExpression | None, node: cst.CSTNode, kind: BindingKind, path: tuple[int | None, ...]) -> None:
        """``self.a, self.b = x, y`` / ``= pair``: the attribute and item targets of a tuple."""
        paired = isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements) and not any(isinstance(e, cst.StarredElement) for e in value.elements)
        for position, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                continue
            inner = element.value
            if paired:
                if isinstance(inner, (cst.Attribute, cst.Subscript, cst.Tuple, cst.List)):
                    self._store(inner, value.elements[position].value, node, kind)  # type: ignore[union-attr]
            elif isinstance(inner, cst.Attribute):
                self._store(inner, value, node, kind, (*path, position))
            elif isinstance(inner, (cst.Tuple, cst.List)):
                self._store_elements(inner, value, node, kind, (*path, position))

    def _store(self, target: cst.BaseExpression, value: cst.BaseExpression | None, node: cst.CSTNode, kind: BindingKind, path: tuple[int | None, ...] = ()) -> None:
        """A store to a name, a tuple of targets, ``self.attr`` or ``container[key]``."""
        if isinstance(target, (cst.Name, cst.Tuple, cst.List, cst.StarredElement)):
            if kind is not BindingKind.AUGMENTED:
                self.bind_target(target, kind, node, value)
            if isinstance(target, (cst.Tuple, cst.List)):
                self._store_elements(target, value, node, kind, path)
            return
        if isinstance(target, cst.Attribute):
            info = self._self_class(target.value)
            if info is not None:
                how = "augmented" if kind is BindingKind.AUGMENTED else "annotation" if kind is BindingKind.ANNOTATION else "assignment"
                info.attributes.setdefault(target.attr.value, []).append(AttributeSite(value, self.grad.disabled, how, path))
            elif kind is not BindingKind.AUGMENTED:  # ``self.buffer.advantages = adv``: an instance of some class, found later
                self.records.foreign_stores.append((target.value, target.attr.value, AttributeSite(value, self.grad.disabled, "assignment", path)))
            return
        if isinstance(target, cst.Subscript) and value is not None:
            key = _constant_key(target)
            self._add_to(target.value, Addition(value, self.grad.disabled, key=key, item=True, augmented=kind is BindingKind.AUGMENTED))

    # -- branches ---------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._enter_orelse(node)
        branch = _Branch(self.scope, dict(self.scope.reaching))
        self._branches[id(node)] = branch
        if node.orelse is not None:
            self._branches[id(node.orelse)] = branch
        self._push_test(node)
        narrowed = _isinstance_test(node.test)
        if narrowed is not None:
            name, body_kind, else_kind = narrowed
            if body_kind is not None:
                self._pending_narrowing[id(node.body)] = (name, body_kind)
            if else_kind is not None and isinstance(node.orelse, cst.Else):
                self._pending_narrowing[id(node.orelse.body)] = (name, else_kind)

    def _note_dtype_conversion(self, node: cst.Call) -> None:
        """Record ``x.float()`` (any dtype conversion of a name) when a test around it, in the
        same function, reads ``x``'s dtype (``x if x.is_floating_point() else x.float()``, or a
        name bound to such a read: ``need_cast = x.dtype not in (torch.float32, torch.float64)``):
        the code converts where the dtype differs, so the conversion copies there (see
        Evaluator). Asked per conversion, not per test: most tests guard none."""
        receiver = node.func.value  # type: ignore[attr-defined]
        if not isinstance(receiver, cst.Name):
            return
        home = self._defining_scope()
        for test, scope in self._tests:
            if scope is not home:
                continue
            tested = self._tested_dtypes.get(id(test))
            if tested is None:
                tested = self._tested_dtypes[id(test)] = self._dtype_tested(test, 3)
            if tested and (receiver.value in tested or self._renames(receiver.value, tested)):
                self.records.dtype_guarded.add(id(node))
                return

    def _defining_scope(self) -> Scope:
        """The innermost module, class or function scope (not a comprehension's)."""
        scope = self._scope
        while scope.kind is ScopeKind.COMPREHENSION and scope.parent is not None:
            scope = scope.parent
        return scope

    def _push_test(self, node: cst.If | cst.IfExp) -> None:
        self._tests.append((node.test, self._defining_scope()))

    def _pop_test(self, node: cst.If | cst.IfExp) -> None:
        self._tests.pop()

    def _renames(self, name: str, tested: set[str]) -> bool:
        """Whether ``name`` is bound only to one of ``tested`` (``p_fp32 = p`` before
        ``if p.dtype in {torch.float16, torch.bfloat16}: p_fp32 = p_fp32.float()``)."""
        bindings = self.lookup(name)
        return bool(bindings) and all(isinstance(binding.value, cst.Name) and binding.value.value in tested and not binding.path for binding in bindings)

    def _dtype_tested(self, expr: cst.CSTNode, depth: int) -> set[str]:
        """The names whose dtype ``expr`` reads, through names bound to such reads."""
        from torchcopy_lint.walker import iter_children

        found: set[str] = set()
        pending = [expr]
        while pending:
            current = pending.pop()
            if isinstance(current, cst.Attribute) and isinstance(current.value, cst.Name) and current.attr.value in _DTYPE_READS:
                found.add(current.value.value)  # ``x.dtype``, ``x.is_floating_point``
            elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value == "is_floating_point" and current.args and isinstance(current.args[0].value, cst.Name):
                found.add(current.args[0].value.value)  # ``torch.is_floating_point(x)``
            elif isinstance(current, cst.Name) and depth > 0:
                for binding in self.lookup(current.value):
                    if binding.kind in (BindingKind.ASSIGNMENT, BindingKind.ANNOTATION) and binding.value is not None and not binding.path:
                        found |= self._dtype_tested(binding.value, depth - 1)
            pending.extend(iter_children(current))
        return found

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._push_test(node)
        narrowed = _isinstance_test(node.test)
        if narrowed is None:
            return
        name, body_kind, else_kind = narrowed
        for branch, kind in ((node.body, body_kind), (node.orelse, else_kind)):
            for reference in _names_in(branch, name):
                self.records.narrowed[id(reference)] = kind

    def _narrow_comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> None:
        """``[m for m in layers if isinstance(m, ActNorm)]``: in what the comprehension makes
        (and in the conditions and loops after the test), ``m`` is an ``ActNorm``."""
        made: list[cst.CSTNode] = [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        level: cst.CompFor | None = node.for_in
        while level is not None:
            for position, condition in enumerate(level.ifs):
                narrowed = _isinstance_test(condition.test)
                if narrowed is None or narrowed[1] is None:
                    continue
                name, kind = narrowed[0], narrowed[1]
                later: list[cst.CSTNode] = [*made, *(later_if.test for later_if in level.ifs[position + 1:])]
                if level.inner_for_in is not None:
                    later.append(level.inner_for_in)
                for part in later:
                    for reference in _names_in(part, name):
                        self.records.narrowed[id(reference)] = kind
            level = level.inner_for_in


    def visit_Else(self, node: cst.Else) -> None:
        self._enter_orelse(node)

    def _enter_orelse(self, node: cst.CSTNode) -> None:
        """Entering an ``else`` / ``elif``: it does not see what the ``if`` body bound."""
        branch = self._branches.pop(id(node), None)
        if branch is None or branch.scope is not self._scope:
            return
        branch.body_end = dict(branch.scope.reaching)
        branch.scope.reaching.clear()
        branch.scope.reaching.update(branch.before)

    leave_IfExp = _pop_test

    def leave_If(self, node: cst.If) -> None:
        self._pop_test(node)
        self._guard(node)
        branch = self._branches.pop(id(node), None)
        if branch is None or branch.scope is not self._scope:
            return
        reaching = branch.scope.reaching
        if branch.body_end is None:  # no else: the code after sees the body's end or the start
            if _ends_flow(node.body):
                reaching.clear()
                reaching.update(branch.before)
            else:
                rebound = self._rebound_under_test(node, branch.before, reaching)
                _union_into(reaching, branch.before)
                if rebound is not None and self._guards:
                    self._narrowing.append(rebound)
                    self._guards[-1].append(rebound)
            return
        orelse_leaves = isinstance(node.orelse, cst.Else) and _ends_flow(node.orelse.body)
        if _ends_flow(node.body):
            return  # only the else branch reaches the code after the if
        if orelse_leaves:
            reaching.clear()
            reaching.update(branch.body_end)
            return
        _union_into(reaching, branch.body_end)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        narrowing = self._pending_narrowing.pop(id(node), None)
        if narrowing is not None:
            self._narrowing.append(narrowing)
            self._pending_narrowing[-id(node)] = narrowing
        self._guards.append([])

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        for guard in self._guards.pop():
            self._drop_narrowing(guard)
        if self._pending_narrowing.pop(-id(node), None) is not None:
            self._narrowing.pop()

    def _guard(self, node: cst.If) -> None:
        """``if isinstance(x, T): return ...`` with no else: the rest of the block sees the
        else branch's narrowing (``x`` is no ``T``), until ``x`` is bound again."""
        if node.orelse is not None or not self._guards or not _ends_flow(node.body):
            return
        narrowed = _isinstance_test(node.test)
        if narrowed is None or narrowed[2] is None:
            return
        guard = (narrowed[0], narrowed[2])
        self._narrowing.append(guard)
        self._guards[-1].append(guard)

    @staticmethod
    def _rebound_under_test(node: cst.If, before: dict[str, tuple[Binding, ...]], after_body: dict[str, tuple[Binding, ...]]) -> tuple[str, object] | None:
        """``if torch.is_tensor(val): val = val.item()`` (no else): after the ``if``, the
        bindings of ``val`` from before it arrive only through the skipped body, where the
        test was false; a narrowing for those bindings only (``AFTER_SKIPPED``, see
        SemanticModel.narrowing_of_bindings), until ``val`` is bound again."""
        narrowed = _isinstance_test(node.test)
        if narrowed is None or narrowed[2] is None or ELEMENT in narrowed[2]:  # type: ignore[operator]
            return None
        name = narrowed[0]
        earlier = before.get(name, ())
        if not earlier or any(binding in after_body.get(name, ()) for binding in earlier):
            return None  # not rebound on every path through the body
        return (name, (AFTER_SKIPPED, frozenset(id(binding) for binding in earlier), narrowed[2]))

    def _end_guards(self, name: str) -> None:
        for guards in self._guards:
            for guard in [g for g in guards if g[0] == name]:
                guards.remove(guard)
                self._drop_narrowing(guard)

    def _drop_narrowing(self, narrowing: tuple[str, object]) -> None:
        for index in range(len(self._narrowing) - 1, -1, -1):
            if self._narrowing[index] is narrowing:
                del self._narrowing[index]
                return

    def visit_Try(self, node: cst.Try | cst.TryStar) -> None:
        self._tries[id(node)] = dict(self.scope.reaching)

    def leave_Try(self, node: cst.Try | cst.TryStar) -> None:
        before = self._tries.pop(id(node), None)
        if before is not None:
            _union_into(self.scope.reaching, before)

    visit_TryStar = visit_Try
    leave_TryStar = leave_Try

    # -- what functions give back -------------------------------------------------------------
    def visit_Return(self, node: cst.Return) -> None:
        if self._functions and node.value is not None and isinstance(self._functions[-1].node, cst.FunctionDef):
            self._functions[-1].returns.append((node.value, self.grad.disabled))

    def _visit_yield(self, node: cst.Yield) -> None:
        if self._functions:
            self._functions[-1].yield_modes.append(self.grad.disabled)
        if self._functions and isinstance(node.value, cst.BaseExpression):
            self._functions[-1].yields.append((node.value, self.grad.disabled))

    visit_Yield = _visit_yield

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "grad" and isinstance(node.value, cst.Name):
            self.records.grad_owners.append(node.value)  # only a leaf that requires grad gets a ``.grad``

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name) and _array_index(node):
            self.records.tensor_receivers.append(node.value)  # ``x[:, 0]``, ``x[x == unk] = pad``

    # -- calls: container additions, registrations, hooks, call sites -----------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._tests and isinstance(func, cst.Attribute) and func.attr.value in DTYPE_CONVERSION_METHODS:
            self._note_dtype_conversion(node)
        if isinstance(func, (cst.Name, cst.Subscript)) or by_name(func) is not None:
            # a name, ``handlers[mode](...)``, or ``getattr(obj, name)(...)``
            self.records.calls.append(RawCall(node, self.grad.disabled, self.scope))
            if isinstance(func, cst.Name) and func.value in ("isinstance", "type") and node.args and isinstance(node.args[0].value, cst.Name):
                self.records.type_tested.append(node.args[0].value)  # ``type(scales) is list``: a value of several types
            return
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if isinstance(func.value, cst.Attribute) and method in MODULE_ITERATORS:
            self.records.module_attributes.add(func.value.attr.value)  # ``renderer.fine.parameters()``: ``fine`` holds a module
        if isinstance(func.value, cst.Name) and (method in TENSOR_ONLY_METHODS or writes_values(method) or any(argument.keyword is not None and argument.keyword.value in TENSOR_ONLY_KEYWORDS for argument in node.args)):
            # ``x.detach()``, ``x.sub_(m)``, ``x.sum(dim=1)``: only a tensor has such a method.
            self.records.tensor_receivers.append(func.value)
            if method == "backward":
                self.records.differentiated.append(func.value)  # ``loss.backward()``: a tensor with history
        elif isinstance(func.value, cst.Name) and method in MODULE_USE_METHODS and not (method == "eval" and node.args):
            self.records.module_receivers.append(func.value)  # ``m.eval()``, ``m.parameters()``: only a module has such a method
        positional = positional_args(node)
        if positional and isinstance(positional[0].value, cst.Name) and not positional[0].star:
            self.records.first_arguments.append((func, positional[0].value))  # ``F.one_hot(targets, n)``: see SemanticModel.used_as_tensor
        adder = _ADDERS.get(method)
        if adder is not None and len(positional) > adder[0]:
            key = string_value(positional[0].value) if method == "setdefault" else None
            self._add_to(func.value, Addition(positional[adder[0]].value, self.grad.disabled, spread=adder[1], key=key))
        if method in ("register_buffer", "register_parameter") and len(positional) >= 2:
            info = self._self_class(func.value)
            name = string_value(positional[0].value)
            if info is not None and name is not None:
                how = "buffer" if method == "register_buffer" else "parameter"
                info.attributes.setdefault(name, []).append(AttributeSite(positional[1].value, self.grad.disabled, how))
        roles = MODULE_HOOKS.get(method) or TENSOR_HOOKS.get(method)
        if roles is not None and positional:
            if method == "register_forward_hook" and any(a.keyword is not None and a.keyword.value == "with_kwargs" for a in node.args):
                roles = ("module", "inputs", "kwargs", "output")
            self.records.hooks.append(HookRegistration(roles, positional[0].value, node, self.scope))
        if method == "requires_grad_":
            flag = keyword_arg(node, "requires_grad") or (node.args[0] if node.args else None)
            enabled = not is_false(flag.value if flag is not None else None)
            self.records.grad_switches.append((_module_of(func.value), enabled))
            self._switch_parameters_of(func.value, enabled)
            self._switch_attribute(func.value, True if flag is None else bool_literal(flag.value))
        if method in self._method_names:
            self.records.calls.append(RawCall(node, self.grad.disabled, self.scope))
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            self.records.self_calls.setdefault(method, []).append(RawCall(node, self.grad.disabled, self.scope))

    def _switch_attribute(self, target: cst.BaseExpression, enabled: bool | None) -> None:
        """``self.W.requires_grad_()`` (or ``self.W.requires_grad = True``) in a method: the
        attribute holds a tensor whose flag it switched, for every method that reads it
        (``enabled`` None: a flag the file does not show, which says nothing)."""
        if enabled is not None and isinstance(target, cst.Attribute):
            info = self._self_class(target.value)
            if info is not None:
                how = "grad-on" if enabled else "grad-off"
                info.attributes.setdefault(target.attr.value, []).append(AttributeSite(None, self.grad.disabled, how))

    def _switch_parameters_of(self, parameter: cst.BaseExpression, enabled: bool) -> None:
        """``for p in backbone.parameters(): p.requires_grad = False`` (or
        ``p.requires_grad_(False)``): the loop switches the whole module, ``backbone``."""
        if not isinstance(parameter, cst.Name):
            return
        for binding in self.lookup(parameter.value):
            iterable = binding.value if binding.kind is BindingKind.LOOP_TARGET else None
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("parameters", "named_parameters"):
                self.records.grad_switches.append((_module_of(iterable.func.value), enabled))

    def _add_to(self, container: cst.BaseExpression, addition: Addition) -> None:
        """Record ``addition`` on the binding(s) or class attribute ``container`` names; on
        the container an item belongs to for ``d[k].append(v)`` and ``d.setdefault(k, []).append(v)``
        (a dict of lists)."""
        owner = _owner_of_item(container)
        if owner is not None:
            outer, key = owner
            self._add_to(outer, replace(addition, key=key, nested=addition.nested + 1))  # ``item``: the innermost store is an item store
            return
        if isinstance(container, cst.Name):
            for binding in self.lookup(container.value):
                binding.additions.append(addition)
        elif isinstance(container, cst.Attribute):
            info = self._self_class(container.value)
            if info is not None:
                info.additions.setdefault(container.attr.value, []).append(addition)
            else:  # ``buffer.log_probs.append(v)``: an instance of some class, found later
                self.records.foreign_additions.append((container.value, container.attr.value, addition))

    def function_named(self, func: cst.BaseExpression) -> FunctionInfo | None:
        """The function of the file ``func`` names at this point of the walk, if already
        walked: ``f`` (a ``def`` reaching here) or ``self.m`` (a method of the class)."""
        if isinstance(func, cst.Name):
            for binding in self.lookup(func.value):
                if binding.kind is BindingKind.FUNCTION:
                    return self.records.functions.get(id(binding.node))
        elif isinstance(func, cst.Attribute):
            info = self._self_class(func.value)
            method = info.methods.get(func.attr.value) if info is not None else None
            if method is not None:
                return self.records.functions.get(id(method))
        return None

    def _self_class(self, expr: cst.BaseExpression) -> ClassInfo | None:
        """The class whose instance ``expr`` is, when ``expr`` is a method's first parameter."""
        if not isinstance(expr, cst.Name):
            return None
        for info in reversed(self._functions):
            if isinstance(info.node, cst.Lambda):
                continue
            if info.is_method and info.params and info.params[0].name.value == expr.value:
                return info.cls
            # A nested function sees its method's ``self`` through the closure.
        return None


@dataclass
class Records:
    """What pass 1 found; the semantic model's raw material."""

    module_scope: Scope | None = None
    scopes: dict[int, Scope] = field(default_factory=dict)  # id(node) -> scope it opens
    bindings: list[Binding] = field(default_factory=list)
    resolution: dict[int, tuple[Binding, ...]] = field(default_factory=dict)  # id(Name) -> bindings
    targets: dict[int, Binding] = field(default_factory=dict)  # id(target Name) -> the binding it makes
    tops: dict[int, cst.CSTNode] = field(default_factory=dict)  # id(function) -> its top-level statement
    foreign_additions: list[tuple[cst.BaseExpression, str, Addition]] = field(default_factory=list)  # obj.attr.append(v)
    foreign_stores: list[tuple[cst.BaseExpression, str, AttributeSite]] = field(default_factory=list)  # obj.attr = v outside obj's class
    narrowed: dict[int, object] = field(default_factory=dict)  # id(Name) -> Kind by isinstance
    classes: dict[int, ClassInfo] = field(default_factory=dict)
    functions: dict[int, FunctionInfo] = field(default_factory=dict)
    hooks: list[HookRegistration] = field(default_factory=list)
    calls: list[RawCall] = field(default_factory=list)
    self_calls: dict[str, list[RawCall]] = field(default_factory=dict)  # ``self.head(h)``, by attribute: a submodule called (see SemanticModel.hooked_inputs)
    grad_switches: list[tuple[cst.BaseExpression, bool]] = field(default_factory=list)  # ``m.requires_grad_(flag)`` and ``p.requires_grad = flag`` over ``m.parameters()``: (m, flag)
    cyclic_scopes: list[Scope] = field(default_factory=list)  # scopes with a loop whose next iteration sees its own bindings
    module_attributes: set[str] = field(default_factory=set)  # attribute names a module-only iterator is called on (``self.fine.parameters()``)
    tensor_receivers: list[cst.Name] = field(default_factory=list)  # names a tensor-only method is called on (``x.detach()``, ``x.sum(dim=1)``)
    module_receivers: list[cst.Name] = field(default_factory=list)  # names a module-only method is called on (``m.eval()``, ``m.parameters()``)
    dtype_guarded: set[int] = field(default_factory=set)  # ids of ``x.float()`` ... under a test of ``x``'s dtype (see Binder._note_dtype_conversion)
    differentiated: list[cst.Name] = field(default_factory=list)  # names ``backward()`` is called on (``loss.backward()``): tensors with autograd history
    first_arguments: list[tuple[cst.Attribute, cst.Name]] = field(default_factory=list)  # ``F.relu(x)``: (``F.relu``, ``x``) of calls of attributes
    grad_owners: list[cst.Name] = field(default_factory=list)  # names whose ``.grad`` is read or set (``p.grad``): leaves that require grad
    type_tested: list[cst.Name] = field(default_factory=list)  # names given to ``isinstance`` or ``type``: their uses do not type them
    imports_torch: bool = False


# -- helpers -----------------------------------------------------------------------------

def _module_of(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``backbone`` for ``backbone.eval().to(device)``: the module a chain of its
    self-returning methods is called on."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in MODULE_SELF_METHODS:
        expr = expr.func.value
    return expr


def _owner_of_item(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, str | None] | None:
    """``(d, k)`` for ``d[k]`` and ``d.setdefault(k, default)`` (``k`` a constant string, or
    None): the container an item belongs to."""
    if isinstance(expr, cst.Subscript):
        return expr.value, _constant_key(expr)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "setdefault":
        positional = positional_args(expr)
        return expr.func.value, string_value(positional[0].value) if positional else None
    return None


def _carried_state(loop: _Loop, records: "Records") -> frozenset[str]:
    """Names whose value before the loop only seeds it: read in the body, then rebound on
    every path through it (``h = torch.zeros(n)`` ... ``for x in xs: h = cell(x, h)``).
    After the loop they are what the body made, as a ``None`` seed already is: the seed
    reaches only a loop that never ran, which is not what the code after it is written for."""
    end = loop.scope.reaching
    carried: set[str] = set()
    for name_node, _order in loop.loads:
        name = name_node.value
        if name in carried or name not in loop.bound or name not in loop.before:
            continue
        target = records.targets.get(id(name_node))
        if target is not None and target.kind is not BindingKind.AUGMENTED:
            continue  # a store (the walk visits targets too), not a read
        if not all(binding.order > loop.start for binding in end.get(name, ())):
            continue  # some path through the body keeps the seed
        seeds = loop.before[name]
        if any(binding in seeds for binding in records.resolution.get(id(name_node), ())):
            carried.add(name)
    return frozenset(carried)


def _without(reaching: dict[str, tuple[Binding, ...]], names: frozenset[str]) -> dict[str, tuple[Binding, ...]]:
    return {name: bindings for name, bindings in reaching.items() if name not in names} if names else reaching


def _union_into(reaching: dict[str, tuple[Binding, ...]], other: dict[str, tuple[Binding, ...]]) -> None:
    for name, bindings in other.items():
        current = reaching.get(name)
        if current is None:
            reaching[name] = bindings
        elif current != bindings:
            reaching[name] = (*current, *(b for b in bindings if b not in current))


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


def _callee(decorator: cst.BaseExpression) -> cst.BaseExpression:
    return decorator.func if isinstance(decorator, cst.Call) else decorator


def by_name(func: cst.BaseExpression) -> tuple[cst.BaseExpression | None, cst.BaseExpression] | None:
    """``(obj, name)`` for ``getattr(obj, name)`` (and ``getattr(obj, name, default)``),
    ``(None, name)`` for ``globals()[name]``: a callee looked up by a string; else None."""
    if isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "getattr":
        positional = [argument for argument in func.args if argument.keyword is None and not argument.star]
        if len(positional) in (2, 3) and len(positional) == len(func.args):
            return positional[0].value, positional[1].value
    globals_call = isinstance(func, cst.Subscript) and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and func.value.func.value == "globals" and not func.value.args
    if globals_call and len(func.slice) == 1 and isinstance(func.slice[0].slice, cst.Index):  # type: ignore[union-attr]
        return None, func.slice[0].slice.value  # type: ignore[union-attr]
    return None


def _constant_key(subscript: cst.Subscript) -> str | None:
    if len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index):
        return string_value(subscript.slice[0].slice.value)
    return None


def _method_names(module: cst.Module) -> set[str]:
    """Names of every method defined in a class of the module, and of every attribute assigned
    an instance of one (``self.head = Head()``: ``self.head(z)`` calls its ``forward`` or
    ``__call__``): calls of these are kept."""
    from torchcopy_lint.walker import iter_children

    # Exact types, not isinstance: LibCST's node classes are ABCs (a slow check per node), and
    # these are final classes; the per-type answer for children is cached.
    descended = _descended_types()
    names: set[str] = set()
    classes: set[str] = set()
    instances: list[tuple[str, str]] = []  # (attribute, class name called)
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.ClassDef:
            classes.add(node.name.value)  # type: ignore[attr-defined]
            body = node.body.body if type(node.body) is cst.IndentedBlock else ()  # type: ignore[attr-defined]
            names.update(item.name.value for item in body if type(item) is cst.FunctionDef)
            pending.extend(body)
        elif kind is cst.SimpleStatementLine:
            for small in node.body:  # type: ignore[attr-defined]
                if type(small) is cst.Assign and type(small.value) is cst.Call and type(small.value.func) is cst.Name:
                    instances.extend((target.target.attr.value, small.value.func.value) for target in small.targets if type(target.target) is cst.Attribute)
        elif kind in descended:
            pending.extend(child for child in iter_children(node) if _statement_like(type(child)))
    names.update(attribute for attribute, called in instances if called in classes)
    return names


@lru_cache(maxsize=None)
def _descended_types() -> frozenset[type]:
    """Statements whose bodies :func:`_method_names` looks into (built on first use: LibCST loads lazily)."""
    return frozenset({cst.FunctionDef, cst.If, cst.Try, cst.With, cst.For, cst.While, cst.IndentedBlock, cst.Else, cst.ExceptHandler, cst.Finally})


@lru_cache(maxsize=None)
def _statement_like(node_type: type) -> bool:
    return issubclass(node_type, (cst.BaseStatement, cst.BaseSuite, cst.ExceptHandler, cst.Else, cst.Finally))


def _names_in(node: cst.CSTNode, name: str) -> list[cst.Name]:
    """Every ``Name`` node spelling ``name`` inside ``node`` (not inside a lambda)."""
    from torchcopy_lint.walker import iter_children

    found, pending = [], [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Name):
            if current.value == name:
                found.append(current)
        elif not isinstance(current, cst.Lambda):
            pending.extend(iter_children(current))
    return found


def _isinstance_test(test: cst.BaseExpression) -> tuple[str, object, object] | None:
    """``(name, kind in the body, kind in the else branch)`` for ``isinstance(name, T)``;
    the kinds are resolved by the semantic model (see SemanticModel.narrowing_kind)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        for side in (test.left, test.right):  # ``x is not None and isinstance(x, T)``: the body only
            found = _isinstance_test(side)
            if found is not None and found[1] is not None:
                return found[0], found[1], None
        return None
    negated = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = True, test.expression
    if not isinstance(test, cst.Call) or not test.args:
        return None
    subject_node = test.args[0].value
    element = _constant_element_of(subject_node)
    if element is not None:
        subject_node = element  # ``isinstance(xs[0], T)``: what ``xs`` holds (its elements are joined)
    if not isinstance(subject_node, cst.Name):
        return None
    subject = subject_node.value
    func = test.func
    callee = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if callee == "isinstance" and len(test.args) == 2:
        classes: object = test.args[1].value
    elif callee in _TENSOR_PREDICATES and len(test.args) == 1:
        classes = TENSOR_PREDICATE  # ``torch.is_tensor(x)``, ``is_tensor_like(x)``
    else:
        return None
    body: tuple[object, ...] = ("is", classes)
    other: tuple[object, ...] = ("is not", classes)
    if element is not None:
        body, other = (*body, ELEMENT), (*other, ELEMENT)
    return (subject, other, body) if negated else (subject, body, other)


def _constant_element_of(node: cst.BaseExpression) -> cst.Name | None:
    """``xs`` for ``xs[0]`` or ``xs[-1]``: an element at a constant position of a named container."""
    if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name) or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    value = index.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return node.value if isinstance(value, cst.Integer) else None


def _array_index(node: cst.Subscript) -> bool:
    """An index only an array takes: several axes with a slice, ``...`` or ``None`` among them
    (``x[:, 0]``; a tuple key of a dict holds neither), or a mask computed from the indexed name
    itself (``x[x == unk]``, ``x[torch.isnan(x)]``). Lists, dicts and modules take neither; numpy arrays do, but what
    numpy makes is typed as such before this evidence is asked (see Evaluator)."""
    elements = node.slice
    if len(elements) > 1:
        return any(isinstance(element.slice, cst.Slice) or (isinstance(element.slice, cst.Index) and isinstance(element.slice.value, (cst.Ellipsis, cst.Name)) and _is_none_or_ellipsis(element.slice.value)) for element in elements)
    index = elements[0].slice
    if not isinstance(index, cst.Index):
        return False
    value = index.value
    if isinstance(value, cst.Ellipsis):
        return True
    if not isinstance(node.value, cst.Name):
        return False
    name = node.value.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.BitInvert):
        value = value.expression  # ``x[~torch.isfinite(x)]``
    if isinstance(value, cst.Comparison):
        return any(isinstance(part, cst.Name) and part.value == name for part in (value.left, *(target.comparator for target in value.comparisons)))
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ELEMENTWISE_MASKS:
        # ``x[torch.isnan(x)]``, ``x[x.isinf()]``: a boolean mask of ``x`` itself
        of = value.args[0].value if value.args else value.func.value
        return isinstance(of, cst.Name) and of.value == name
    return False


def _is_none_or_ellipsis(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None")


# Attributes and methods that read a tensor's dtype.
_DTYPE_READS = frozenset({"dtype", "is_floating_point", "is_complex"})


# Marks a narrowing of a container's elements (``isinstance(xs[0], T)``), not of the name.
ELEMENT = "element"
# Marks a narrowing of some of a name's bindings: those that skipped an ``if`` body that
# rebinds the name (see Binder._rebound_under_test).
AFTER_SKIPPED = "after a skipped body"


# Predicates that hold exactly for tensors (torch.is_tensor, torch.overrides.is_tensor_like).
_TENSOR_PREDICATES = frozenset({"is_tensor", "is_tensor_like"})
TENSOR_PREDICATE = "tensor predicate"
