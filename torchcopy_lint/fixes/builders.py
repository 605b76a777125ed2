"""Helpers checkers use to build fixes: shared CST rewrites live here, once."""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.bindings import BindingKind
from torchcopy_lint.context import FileContext


def module_expr(ctx: FileContext, module: str) -> tuple[cst.BaseExpression, tuple[str, ...]]:
    """An expression for a top-level ``module`` (``torch``, ``copy``), and the imports it needs.

    Reuses the file's own alias (``import copy as cp`` gives ``cp``); otherwise
    ``module``, which then needs ``import module``.
    """
    for name, bindings in ctx.model.module_scope.reaching.items():
        if bindings and all(binding.kind is BindingKind.IMPORT and binding.qualname == module for binding in bindings):
            return cst.Name(name), ()
    return cst.Name(module), (module,)


def torch_module_expr(ctx: FileContext) -> tuple[cst.BaseExpression, tuple[str, ...]]:
    """An expression for the ``torch`` module at module level, and the imports it needs
    (the file's own alias, ``import torch as th`` gives ``th``)."""
    return module_expr(ctx, "torch")


def deepcopy_call(ctx: FileContext, value: cst.BaseExpression) -> tuple[cst.Call, tuple[str, ...]]:
    """``copy.deepcopy(value)`` through the file's ``copy`` alias, and the imports it needs."""
    copy_expr, imports = module_expr(ctx, "copy")
    return cst.Call(func=cst.Attribute(value=copy_expr, attr=cst.Name("deepcopy")), args=[cst.Arg(value=value)]), imports


def no_grad_call(ctx: FileContext) -> tuple[cst.Call, tuple[str, ...]]:
    torch_expr, imports = torch_module_expr(ctx)
    return cst.Call(func=cst.Attribute(value=torch_expr, attr=cst.Name("no_grad"))), imports


def current_statement(ctx: FileContext, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
    """The statement line holding ``node`` when ``node`` is that line's only statement
    (or that statement's expression) and the line sits in an indented block or at
    module level: the only shape a statement-level fix can safely wrap."""
    parents = ctx.parents
    chain = [*parents, node]
    for index in range(len(chain) - 1, 0, -1):
        candidate = chain[index]
        if isinstance(candidate, cst.SimpleStatementLine):
            container = chain[index - 1]
            below = chain[index + 1] if index + 1 < len(chain) else None
            if len(candidate.body) != 1 or not isinstance(container, (cst.IndentedBlock, cst.Module)):
                return None
            small = candidate.body[0]
            if below is not small:
                return None
            if small is node or (isinstance(small, cst.Expr) and small.value is node):
                return candidate
            return None
    return None


def wrap_in_no_grad(ctx: FileContext, line: cst.SimpleStatementLine, new_statement: cst.BaseSmallStatement) -> tuple[cst.With, tuple[str, ...]]:
    """``with torch.no_grad():`` around one statement, keeping its comments and blank lines."""
    call, imports = no_grad_call(ctx)
    inner = line.with_changes(body=[new_statement], leading_lines=[])
    return cst.With(items=[cst.WithItem(item=call)], body=cst.IndentedBlock(body=[inner]), leading_lines=line.leading_lines), imports


def method_call(receiver: cst.BaseExpression, method: str, args: tuple[cst.Arg, ...] = ()) -> cst.Call:
    """``receiver.method(*args)``."""
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=list(args))


# -- expressions ----------------------------------------------------------------
def _atomic_receivers() -> tuple[type, ...]:
    """Expressions that need no parentheses before ``.method()`` (a function: LibCST loads on first use)."""
    return (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp)


def as_receiver(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` fit to be the receiver of ``.method()``: parenthesised unless it is atomic
    (``a * 2`` -> ``(a * 2)``; ``x``, ``m.w``, ``f(x)``, ``x[0]`` stay as they are)."""
    if getattr(expr, "lpar", None) or isinstance(expr, _atomic_receivers()):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def keep_parens(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    """``new`` with the parentheses written around ``old`` (a replaced node keeps them)."""
    if getattr(old, "lpar", None) and not getattr(new, "lpar", None):
        return new.with_changes(lpar=old.lpar, rpar=old.rpar)  # type: ignore[attr-defined]
    return new


def detach_clone(source: cst.BaseExpression) -> cst.Call:
    """``source.detach().clone()``: an independent copy without autograd history."""
    return method_call(method_call(as_receiver(source), "detach"), "clone")


def torch_attr(ctx: FileContext, *path: str) -> tuple[cst.BaseExpression, tuple[str, ...]]:
    """``torch.<path>`` (``torch.empty``, ``torch.int64``) through the file's torch alias."""
    expr, imports = torch_module_expr(ctx)
    for part in path:
        expr = cst.Attribute(value=expr, attr=cst.Name(part))
    return expr, imports


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    """``name=value`` as a call argument (no spaces around ``=``)."""
    no_space = cst.SimpleWhitespace("")
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space))


def append_args(args: tuple[cst.Arg, ...] | list[cst.Arg], extra: list[cst.Arg]) -> list[cst.Arg]:
    """``args`` followed by ``extra``; a trailing comma (``f(\\n    3, 4,\\n)``) moves to the new last argument."""
    args = list(args)
    if not extra:
        return args
    if not args:
        return list(extra)
    last = args[-1]
    trailing = last.comma
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    extra = list(extra)
    extra[-1] = extra[-1].with_changes(comma=trailing)
    return args + extra


def detach_then_clone(clone: cst.Call, source: cst.BaseExpression, function_form: bool) -> cst.Call:
    """``x.clone(args)`` or ``torch.clone(x, args)`` as ``x.detach().clone(args)``
    (``source`` is ``x``; ``function_form`` says the call is ``torch.clone``)."""
    arguments = list(clone.args)
    if function_form:
        del arguments[next(index for index, argument in enumerate(arguments) if argument.value is source)]
        if arguments:
            arguments[-1] = arguments[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    detached = method_call(as_receiver(source), "detach")
    return cst.Call(func=cst.Attribute(value=detached, attr=cst.Name("clone")), args=arguments)
