"""Helpers checkers use to build fixes: shared CST rewrites live here, once."""

from __future__ import annotations

import libcst as cst

from torchcopy_lint.context import FileContext


def torch_module_expr(ctx: FileContext) -> tuple[cst.BaseExpression, tuple[str, ...]]:
    """An expression for the ``torch`` module at module level, and the imports it needs.

    Reuses the file's own alias (``import torch as th`` gives ``th``); otherwise
    ``torch``, which then needs ``import torch``.
    """
    for name, binding in ctx.scopes.scopes[0].bindings.items():
        if binding.kind == "import" and binding.qualname == "torch":
            return cst.Name(name), ()
    return cst.Name("torch"), ("torch",)


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
