"""Facts about a file that every rule shares, computed once during the one walk.

- ``scopes``: what each name is bound to (:mod:`.scopes`)
- ``torch_names``: which names are torch and its members, through any import alias
- ``grad_mode``: whether autograd is recording here (``no_grad`` regions)
- ``tensors``: is an expression a tensor (yes / maybe / no), does it require grad
- ``flow``: loops, statements and the events (uses, in-place writes, optimizer
  steps) that rules about "later" need
- ``cst_helpers``: small pattern helpers over LibCST nodes
"""
