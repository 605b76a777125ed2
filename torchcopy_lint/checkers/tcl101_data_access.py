"""TCL101 data-access: any read of a tensor's ``.data`` (see rules/TCL101-data-access.md).

Writes through ``.data`` (an assignment target, an augmented assignment, the
receiver of an in-place ``*_`` method, directly or through ``[...]``) are
TCL001's and are skipped here, so no line is reported twice.
"""

from __future__ import annotations

from torchcopy_lint.lazy import cst

from torchcopy_lint.analysis.cst_helpers import code_of as _code_of, short_code as code_of, is_inplace_method
from torchcopy_lint.analysis.bindings import BindingKind
from torchcopy_lint.analysis.tensors import MAYBE, YES
from torchcopy_lint.analysis.torch_api import TENSOR_ONLY_METHODS
from torchcopy_lint.catalogue import RuleSpec
from torchcopy_lint.checkers.base import Checker
from torchcopy_lint.screen import ScreenFacts
from torchcopy_lint.context import FileContext
from torchcopy_lint.fixes.builders import keep_parens, method_call
from torchcopy_lint.fixes.model import SAFE, UNSAFE, Fix

# In-place methods that change flags, not values: TCL001 does not treat them as
# writes, so a ``.data`` receiving them is a plain read.
_FLAG_ONLY_INPLACE = frozenset({"requires_grad_", "share_memory_", "retain_grad_"})
# Called on ``X.data``, these say that ``X.data`` is a tensor (in a file that imports torch):
# methods that numpy arrays, memoryviews and other containers do not have. Generic names
# (``to``, ``view``, ``reshape``, ``min``, ``sum`` ...) say nothing.
_TENSOR_USE_METHODS = TENSOR_ONLY_METHODS | frozenset(
    """
    clone cpu cuda requires_grad_ numpy type_as new size dim numel storage untyped_storage float double half
    bfloat16 long int bool byte norm masked_fill masked_select index_select unsqueeze permute
    view_as expand expand_as element_size is_contiguous pin_memory record_stream t mul add sub div
    """.split()
)
# Read from ``X.data``, these attributes say that it is a tensor.
_TENSOR_USE_ATTRIBUTES = frozenset({"device", "is_cuda", "grad", "requires_grad", "grad_fn", "is_leaf"})
# Owners that are datasets/containers by convention: ``train_set.data`` is a dataset's storage.
_CONTAINER_HINTS = ("dataset", "data_set", "loader", "batch")


def _is_dataset_like(owner: cst.BaseExpression) -> bool:
    text = _code_of(owner).lower()
    last = text.rsplit(".", 1)[-1]
    return any(hint in last for hint in _CONTAINER_HINTS) or last.endswith(("_set", "_ds")) or last in ("ds", "trainset", "testset", "valset")



class DataAccess(Checker):
    code = "TCL101"

    @classmethod
    def applies(cls, facts: ScreenFacts) -> bool:
        """Every finding is a ``.data`` attribute."""
        return "data" in facts.identifiers

    def __init__(self, ctx: FileContext, spec: RuleSpec) -> None:
        super().__init__(ctx, spec)
        self._imports = 0
        self._packed = False

    # ``from pkg.data import x`` holds an Attribute ``pkg.data`` that is no read.
    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._imports += 1

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._imports -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data" or self._imports:
            return
        owner = node.value
        if isinstance(owner, cst.Name) and owner.value in ("self", "cls"):
            return  # ``self.data``: an attribute of an object, not Tensor.data
        parents = self.ctx.parents
        if self._is_write(node, parents):
            return
        parent = parents[-1] if parents else None
        grandparent = parents[-2] if len(parents) > 1 else None
        if self._owner_is_tensor(owner, node, parent, grandparent):
            # ``X.data`` -> ``X.detach()``: the same alias, cut off from the graph, but sharing
            # X's version counter. Safe for a known tensor (the difference shows only where a
            # later in-place write would have silently corrupted a gradient: backward raises
            # instead); unsafe when only the use suggests a tensor (an object without
            # ``detach()`` would now fail).
            applicability = SAFE if self.ctx.tensors.kind(owner) is YES else UNSAFE
            detached_next = isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "detach"
            # ``X.data.detach()`` is ``X.detach()`` already: drop ``.data``, do not detach twice.
            replacement = owner if detached_next else keep_parens(node, method_call(owner, "detach"))
            fix = Fix(applicability, ((node, replacement),))
            self.report(node, fix=fix, target=code_of(owner))

    @staticmethod
    def _is_write(node: cst.CSTNode, parents: list[cst.CSTNode]) -> bool:
        """Whether ``node`` (an ``X.data``) is written through: TCL001's territory."""
        child: cst.CSTNode = node
        index = len(parents) - 1
        # Items of ``.data`` (``X.data[i]``) are written through just the same.
        while index >= 0 and isinstance(parents[index], cst.Subscript) and parents[index].value is child:  # type: ignore[attr-defined]
            child = parents[index]
            index -= 1
        if index < 0:
            return False
        parent = parents[index]
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is child:
            return True
        if isinstance(parent, cst.Del):
            return True
        if isinstance(parent, cst.Element) and index > 0 and isinstance(parents[index - 1], (cst.Tuple, cst.List)):
            # ``a.data, b.data = ...``: an element of a tuple that is itself a target.
            outer = index - 1
            while outer > 0 and isinstance(parents[outer - 1], (cst.Element, cst.Tuple, cst.List)):
                outer -= 1
            holder = parents[outer - 1] if outer > 0 else None
            return isinstance(holder, (cst.AssignTarget, cst.For)) and getattr(holder, "target", None) is parents[outer]
        if isinstance(parent, cst.Attribute) and parent.value is child and index > 0:
            call = parents[index - 1]
            method = parent.attr.value
            if isinstance(call, cst.Call) and call.func is parent and is_inplace_method(method) and method not in _FLAG_ONLY_INPLACE:
                return True
        return False

    # -- is the owner a tensor? ---------------------------------------------------
    def _owner_is_tensor(self, owner: cst.BaseExpression, node: cst.Attribute, parent: cst.CSTNode | None, grandparent: cst.CSTNode | None) -> bool:
        tensors = self.ctx.tensors
        kind = tensors.kind(owner)
        if kind is YES:
            return True
        if kind is not MAYBE or not self.ctx.names.imports_torch or _is_dataset_like(owner):
            return False
        if isinstance(owner, cst.Attribute) and owner.attr.value == "grad":
            return True  # ``p.grad.data``: a gradient, in a file that uses torch
        if tensors.grad_evidence(owner) is not None:
            return True  # a loss, a module output, a parameter
        if isinstance(owner, cst.Call) or self._handles_packed_sequences():
            # ``decoder.get_frames(...).data``, ``seq.data`` next to PackedSequence: an
            # object's ``data`` field that holds a tensor, not ``Tensor.data``.
            return False
        return self._clear_tensor_use(node, parent, grandparent)

    def _handles_packed_sequences(self) -> bool:
        """Whether the file uses ``PackedSequence``, whose ``.data`` field is a plain tensor."""
        if not self._packed:  # cache only a yes: the class may be defined further down
            bindings = [binding for found in self.ctx.model.module_scope.every.values() for binding in found]
            self._packed = any(
                binding.name == "PackedSequence" or (binding.kind is BindingKind.IMPORT and (binding.qualname or "").startswith("torch.nn.utils.rnn"))
                for binding in bindings
            )
        return self._packed

    def _clear_tensor_use(self, node: cst.Attribute, parent: cst.CSTNode | None, grandparent: cst.CSTNode | None) -> bool:
        """``X.data.clone()``, ``X.data.device``, ``torch.f(X.data)``: the use is a tensor's."""
        if isinstance(parent, cst.Attribute) and parent.value is node:
            name = parent.attr.value
            if isinstance(grandparent, cst.Call) and grandparent.func is parent:
                return name in _TENSOR_USE_METHODS
            return name in _TENSOR_USE_ATTRIBUTES
        if isinstance(parent, cst.Arg) and parent.value is node and isinstance(grandparent, cst.Call):
            return self.ctx.names.callee(grandparent) is not None
        return False
