"""Is this expression a tensor, and does it require grad?

Answers are evidence-based and local: an expression is ``YES`` a tensor when the
file shows where it came from (a torch factory, a tensor method on a tensor, a
parameter annotated ``torch.Tensor``, an element of ``.parameters()``, ``.weight``
of a module in a torch file ...), ``NO`` when it is plainly something else (a
literal, a numpy call, ``len(...)``), and ``MAYBE`` otherwise. Rules that would
be noisy on unknowns only fire on ``YES``.

``grad_evidence`` returns a short human phrase ("an nn.Parameter", "a module
output", ...) when the expression has evidence of requiring grad, else None.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst

from torchcopy_lint.analysis.cst_helpers import dotted_name
from torchcopy_lint.analysis.scopes import Binding, ScopeTracker
from torchcopy_lint.analysis.torch_names import TorchNames


class Tensorness(enum.Enum):
    NO = 0
    MAYBE = 1
    YES = 2


YES, MAYBE, NO = Tensorness.YES, Tensorness.MAYBE, Tensorness.NO
_MAX_DEPTH = 8

# torch.* functions that return a tensor.
TENSOR_FACTORIES = frozenset(
    """
    tensor as_tensor asarray from_numpy frombuffer zeros ones empty full rand randn randint randperm
    arange linspace logspace eye zeros_like ones_like empty_like full_like rand_like randn_like
    randint_like stack cat concat concatenate hstack vstack dstack where matmul mm bmm einsum
    clone abs exp log sqrt sigmoid tanh relu softmax log_softmax sum mean max min argmax argmin
    cumsum prod norm outer diag tril triu flatten reshape squeeze unsqueeze transpose permute
    gather index_select masked_select nonzero sort topk chunk split bernoulli multinomial normal
    complex polar real imag view_as_real view_as_complex cdist baddbmm addmm add sub mul div
    """.split()
)
# Methods that, called on a tensor, return a tensor.
TENSOR_METHODS = frozenset(
    """
    clone detach view view_as reshape reshape_as flatten contiguous to cpu cuda float double half
    bfloat16 long int short bool byte char type t transpose permute squeeze unsqueeze expand
    expand_as repeat narrow select index_select masked_fill where add sub mul div matmul mm bmm pow
    exp log sqrt abs neg sum mean std var max min norm softmax log_softmax sigmoid tanh relu clamp
    clamp_ sub_ add_ mul_ div_ copy_ zero_ fill_ normal_ uniform_ requires_grad_ new_tensor
    new_zeros new_ones new_empty new_full masked_fill_ index_add index_fill unflatten movedim
    chunk split roll flip cumsum prod addcmul addcdiv lerp sign floor ceil round
    """.split()
)
# Methods that exist (almost) only on tensors: a receiver calling them is a tensor
# in a file that imports torch.
TENSOR_ONLY_METHODS = frozenset(
    """
    detach detach_ requires_grad_ new_tensor new_zeros new_ones new_empty new_full contiguous
    cuda numel untyped_storage data_ptr is_leaf grad_fn register_hook retain_grad backward
    """.split()
)
# Methods whose result is cut off from autograd (no grad evidence survives them).
GRAD_CUTTING_METHODS = frozenset({"detach", "item", "tolist", "numpy", "data_ptr", "numel", "size", "dim"})
# Methods that always return a view of their receiver (an in-place write to the
# result writes to the receiver).
VIEW_METHODS = frozenset(
    "view view_as narrow select t transpose permute squeeze unsqueeze expand expand_as diagonal unflatten movedim as_strided unfold".split()
)
PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})
MODULE_LIKE_NAMES = frozenset({"model", "net", "module", "network", "encoder", "decoder", "backbone", "generator", "discriminator", "policy", "critic", "actor"})
NOT_TENSOR_BUILTINS = frozenset({"len", "int", "float", "str", "bool", "list", "dict", "set", "tuple", "range", "enumerate", "zip", "sorted", "repr", "type", "id", "hash", "isinstance", "getattr", "print", "open", "round", "sum", "min", "max", "abs"})
LOSS_CALLEES = frozenset({"criterion", "loss_fn", "loss_func", "loss_function", "compute_loss", "lossfn"})



def _buffer_names(class_node: cst.ClassDef) -> frozenset[str]:
    """Attribute names a class registers as buffers (``self.register_buffer("w", ...)``,
    ``self.w = nn.Buffer(...)``), found by a scan of its body."""
    from torchcopy_lint.walker import iter_children

    names: set[str] = set()
    pending: list[cst.CSTNode] = [class_node.body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "register_buffer" and node.args:
            first = node.args[0].value
            if isinstance(first, cst.SimpleString) and isinstance(first.evaluated_value, str):
                names.add(first.evaluated_value)
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and dotted_name(node.value.func) in ("nn.Buffer", "torch.nn.Buffer", "Buffer"):
            for target in node.targets:
                if isinstance(target.target, cst.Attribute):
                    names.add(target.target.attr.value)
        pending.extend(iter_children(node))
    return frozenset(names)


_PLAIN_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset", "str", "bytes", "int", "float", "bool", "complex"})


def _is_loss_name(name: str) -> bool:
    return name == "loss" or name.endswith("_loss") or name.startswith("loss_")


@dataclass
class Narrowing:
    """``isinstance(name, torch.Tensor)`` decides the branch it guards."""

    name: str
    kind: Tensorness


class TensorInference:
    """Queries about tensors at the current point of the walk.

    Also a walk participant: it applies ``isinstance`` narrowing to the body and
    ``else`` branch of an ``if``.
    """

    def __init__(self, scopes: ScopeTracker, names: TorchNames) -> None:
        self._scopes = scopes
        self._names = names
        self._pending: dict[int, Narrowing] = {}
        self._active: list[Narrowing] = []
        self._narrowed_names: dict[int, Tensorness] = {}  # id(Name node) -> kind, from ``a if isinstance(x, T) else b``
        # Per function: dotted names whose ``requires_grad`` was switched off
        # (``w.requires_grad = False`` / ``w.requires_grad_(False)``) and not back on.
        self._grad_frozen: list[set[str]] = [set()]
        self._buffers: dict[int, frozenset[str]] = {}

    # -- walk participant: requires_grad switched off -------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._grad_frozen.append(set())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._grad_frozen.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "requires_grad":
                owner = dotted_name(target.target.value)
                if owner is not None:
                    self._set_frozen(owner, frozen=_is_false(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_":
            owner = dotted_name(node.func.value)
            if owner is not None:
                self._set_frozen(owner, frozen=bool(node.args) and _is_false(node.args[0].value))

    def _set_frozen(self, owner: str, frozen: bool) -> None:
        if frozen:
            self._grad_frozen[-1].add(owner)
        else:
            self._grad_frozen[-1].discard(owner)

    def grad_switched_off(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr``'s ``requires_grad`` was set to False earlier in this function."""
        dotted = dotted_name(expr)
        return dotted is not None and dotted in self._grad_frozen[-1]

    def _buffer_attribute(self, expr: cst.Attribute) -> bool:
        """``x.weight`` where ``x`` is (an instance of) a class of this file that makes
        ``weight`` a buffer (``register_buffer("weight", ...)`` / ``nn.Buffer``), not a parameter."""
        receiver = expr.value
        class_node: cst.CSTNode | None = None
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            class_node = next((scope.node for scope in reversed(self._scopes.scopes) if scope.kind == "class"), None)
        elif isinstance(receiver, cst.Name):
            binding = self._scopes.lookup(receiver.value)
            if binding is not None and binding.kind == "assign" and isinstance(binding.value, cst.Call) and isinstance(binding.value.func, cst.Name):
                class_binding = self._scopes.lookup(binding.value.func.value)
                if class_binding is not None and class_binding.kind == "class":
                    class_node = class_binding.node
        if not isinstance(class_node, cst.ClassDef):
            return False
        names = self._buffers.get(id(class_node))  # per file: nodes live as long as this object
        if names is None:
            names = self._buffers[id(class_node)] = _buffer_names(class_node)
        return expr.attr.value in names

    # -- walk participant: isinstance narrowing -----------------------------
    def visit_IfExp(self, node: cst.IfExp) -> None:
        narrowed = self._isinstance_test(node.test)
        if narrowed is None:
            return
        name, kind, else_kind = narrowed
        for branch, branch_kind in ((node.body, kind), (node.orelse, else_kind)):
            if branch_kind is None:
                continue
            for reference in _names_in(branch, name):
                self._narrowed_names[id(reference)] = branch_kind

    def visit_If(self, node: cst.If) -> None:
        narrowed = self._isinstance_test(node.test)
        if narrowed is None:
            return
        name, kind, else_kind = narrowed
        if kind is not None:
            self._pending[id(node.body)] = Narrowing(name, kind)
        if else_kind is not None and node.orelse is not None and isinstance(node.orelse, cst.Else):
            self._pending[id(node.orelse)] = Narrowing(name, else_kind)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        narrowing = self._pending.pop(id(node), None)
        if narrowing is not None:
            self._active.append(narrowing)
            self._pending[-id(node)] = narrowing  # remember to pop on leave

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self._pending.pop(-id(node), None) is not None:
            self._active.pop()

    visit_Else = visit_IndentedBlock
    leave_Else = leave_IndentedBlock

    def _isinstance_test(self, test: cst.BaseExpression) -> tuple[str, Tensorness | None, Tensorness | None] | None:
        """``(name, kind in the body, kind in the else branch)`` for an isinstance test.

        ``isinstance(x, torch.Tensor)`` decides both branches; ``isinstance(x, list)``
        (any builtin or numpy class) only says the body's ``x`` is no tensor.
        """
        negated = False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negated, test = True, test.expression
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2):
            return None
        subject, classes = test.args[0].value, test.args[1].value
        if not isinstance(subject, cst.Name):
            return None
        candidates = [element.value for element in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        tensor_classes = [self._names.torch_qualname(c) in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter") for c in candidates]
        # ``isinstance(x, (torch.Tensor, PackedSequence))`` does not make ``x`` a tensor: narrow
        # only when every class is a tensor class.
        if tensor_classes and all(tensor_classes):
            return (subject.value, NO, YES) if negated else (subject.value, YES, NO)
        if candidates and all(self._is_plain_type(c) for c in candidates):
            return (subject.value, None, NO) if negated else (subject.value, NO, None)
        return None

    def _is_plain_type(self, expr: cst.BaseExpression) -> bool:
        """A builtin container/scalar class or a numpy array class: never a torch tensor."""
        if isinstance(expr, cst.Name) and expr.value in _PLAIN_TYPES and self._scopes.lookup(expr.value) is None:
            return True
        name = self._names.qualname(expr)
        return name in ("numpy.ndarray", "numpy.generic", "numbers.Number")

    # -- queries --------------------------------------------------------------
    def kind(self, expr: cst.BaseExpression, _depth: int = 0) -> Tensorness:
        """YES / MAYBE / NO: is ``expr`` a torch tensor?"""
        if _depth > _MAX_DEPTH:
            return MAYBE
        depth = _depth + 1
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Comparison, cst.Lambda)):
            return NO
        if isinstance(expr, cst.Name):
            narrowed = self._narrowed_names.get(id(expr)) if self._narrowed_names else None
            return narrowed if narrowed is not None else self._name_kind(expr.value, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute_kind(expr, depth)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, depth)
        if isinstance(expr, cst.Subscript):
            return YES if self.kind(expr.value, depth) is YES else MAYBE
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.kind(expr.left, depth), self.kind(expr.right, depth)
            if YES in (left, right):
                return YES
            return NO if left is NO and right is NO else MAYBE
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return NO
            return self.kind(expr.expression, depth)
        return MAYBE

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) is YES

    def _name_kind(self, name: str, depth: int) -> Tensorness:
        for narrowing in reversed(self._active):
            if narrowing.name == name:
                return narrowing.kind
        binding = self._scopes.lookup(name)
        if binding is None:
            return MAYBE
        return self.binding_kind(binding, depth)

    def binding_kind(self, binding: Binding, depth: int = 0) -> Tensorness:
        if binding.kind in ("import", "def", "class", "except"):
            return NO
        if binding.kind == "param":
            if binding.annotation is not None:
                return self._annotation_kind(binding.annotation)
            return MAYBE
        if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
            if binding.annotation is not None and self._annotation_kind(binding.annotation) is YES:
                return YES
            return self.kind(binding.value, depth)
        if binding.kind in ("for", "comprehension") and binding.value is not None:
            return self._element_kind(binding.value, binding.index, depth)
        return MAYBE

    def _annotation_kind(self, annotation: cst.BaseExpression) -> Tensorness:
        if isinstance(annotation, cst.SimpleString):
            text = annotation.evaluated_value if isinstance(annotation.evaluated_value, str) else ""
            return YES if text in ("torch.Tensor", "Tensor", "nn.Parameter", "torch.nn.Parameter") else MAYBE
        name = self._names.torch_qualname(annotation)
        if name in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.FloatTensor", "torch.LongTensor"):
            return YES
        if name is None and isinstance(annotation, (cst.Name, cst.Attribute)):
            return NO if isinstance(annotation, cst.Name) and annotation.value in ("int", "float", "str", "bool", "list", "dict") else MAYBE
        return MAYBE

    def _element_kind(self, iterable: cst.BaseExpression, index: int | None, depth: int = 0) -> Tensorness:
        """Kind of one element of a ``for`` iterable."""
        method = _method_name(iterable)
        if method in ("parameters", "buffers") and index is None:
            return YES
        if method in ("named_parameters", "named_buffers") and index == 1:
            return YES
        if isinstance(iterable, (cst.List, cst.Tuple)) and iterable.elements and index is None:
            kinds = {self.kind(element.value, depth) for element in iterable.elements}
            return YES if kinds == {YES} else MAYBE
        return MAYBE

    def _attribute_kind(self, expr: cst.Attribute, depth: int) -> Tensorness:
        attr = expr.attr.value
        if self._names.torch_qualname(expr) is not None:
            return NO  # torch.float32, torch.nn, ...: a module member, not a tensor
        if attr in ("data", "T", "mT", "H", "mH", "real", "imag"):
            receiver = self.kind(expr.value, depth)
            return YES if receiver is YES else MAYBE
        if attr == "grad":
            receiver = self.kind(expr.value, depth)
            return YES if receiver is YES or (self._names.imports_torch and receiver is MAYBE and self._is_parameter_like(expr.value, depth)) else MAYBE
        if attr in PARAMETER_ATTRIBUTES and self._names.imports_torch:
            return YES
        return MAYBE

    def _plain_class(self, node: cst.CSTNode, depth: int) -> bool:
        """Whether a class defined in this file surely is not a tensor: its bases are
        builtins (``object``, ``dict``, ``Exception`` ...) or plain classes of this file."""
        if not isinstance(node, cst.ClassDef) or depth > _MAX_DEPTH:
            return False
        for base in node.bases:
            if base.keyword is not None:
                continue  # ``metaclass=...``
            value = base.value
            if not isinstance(value, cst.Name):
                return False  # ``nn.Module``, ``typing.NamedTuple`` ...: not known to be plain
            binding = self._scopes.lookup(value.value)
            if binding is None:
                continue  # a builtin
            if binding.kind != "class" or not self._plain_class(binding.node, depth + 1):
                return False
        return True

    def _is_parameter_like(self, expr: cst.BaseExpression, depth: int) -> bool:
        return self.grad_evidence(expr, depth) is not None

    def _call_kind(self, call: cst.Call, depth: int) -> Tensorness:
        callee = self._names.torch_qualname(call.func)
        if callee is not None:
            short = callee.rsplit(".", 1)[-1]
            if callee in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.Tensor"):
                return YES
            if callee.count(".") == 1 and short in TENSOR_FACTORIES:
                return YES
            if callee.startswith("torch.nn.functional.") and short[:1].islower():
                return YES
            return MAYBE
        func = call.func
        if isinstance(func, cst.Name):
            if func.value in NOT_TENSOR_BUILTINS and self._scopes.lookup(func.value) is None:
                return NO
            binding = self._scopes.lookup(func.value)
            if binding is not None and binding.kind == "import" and binding.qualname and not binding.qualname.startswith("torch"):
                return NO if binding.qualname.split(".")[0] in ("numpy", "pandas", "math", "random") else MAYBE
            if binding is not None and binding.kind == "class" and self._plain_class(binding.node, depth):
                return NO  # an instance of a class of this file that is no tensor subclass
            return MAYBE
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            owner = self._names.qualname(func.value)
            if owner is not None and owner.split(".")[0] in ("numpy", "pandas", "math", "random"):
                return NO
            if method in ("item", "tolist", "numel", "dim", "size", "data_ptr", "is_contiguous", "numpy", "keys", "items", "values"):
                return NO
            if method in TENSOR_METHODS:
                receiver = self.kind(func.value, depth)
                if receiver is YES:
                    return YES
                if method in TENSOR_ONLY_METHODS and self._names.imports_torch and receiver is MAYBE:
                    return YES
                return receiver if receiver is NO else MAYBE
        return MAYBE

    # -- requires grad ------------------------------------------------------
    def grad_evidence(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """Why ``expr`` (probably) requires grad, or None without evidence."""
        if _depth > _MAX_DEPTH:
            return None
        depth = _depth + 1
        if isinstance(expr, cst.Name):
            return self._name_grad(expr.value, depth)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            if attr in ("data", "grad"):
                return None
            if attr in PARAMETER_ATTRIBUTES and self._names.imports_torch:
                return f"a parameter (.{attr})"
            return None
        if isinstance(expr, cst.Call):
            return self._call_grad(expr, depth)
        if isinstance(expr, cst.Subscript):
            return self.grad_evidence(expr.value, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self.grad_evidence(expr.left, depth) or self.grad_evidence(expr.right, depth)
        if isinstance(expr, cst.UnaryOperation):
            return self.grad_evidence(expr.expression, depth)
        return None

    def _name_grad(self, name: str, depth: int) -> str | None:
        binding = self._scopes.lookup(name)
        if binding is None:
            return None
        if binding.kind == "param":
            if binding.annotation is not None and self._names.torch_qualname(binding.annotation) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return "an nn.Parameter"
            return None
        if binding.kind in ("for", "comprehension") and binding.value is not None:
            method = _method_name(binding.value)
            if (method == "parameters" and binding.index is None) or (method == "named_parameters" and binding.index == 1):
                return f"an element of .{method}()"
            return None
        if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
            if binding.grad_disabled and not self._is_parameter_constructor(binding.value):
                return None
            evidence = self.grad_evidence(binding.value, depth)
            if evidence is None and _is_loss_name(name) and isinstance(binding.value, cst.Call) and _method_name(binding.value) not in GRAD_CUTTING_METHODS:
                return "a loss"
            return evidence
        return None

    def leaf_grad_evidence(self, expr: cst.BaseExpression, _depth: int = 0) -> str | None:
        """Why ``expr`` is a leaf that requires grad (or a view of one), or None.

        Only leaves count: an nn.Parameter, a torch call with ``requires_grad=True``,
        ``x.requires_grad_()``, an element of ``.parameters()`` / ``named_parameters()``,
        ``.weight`` / ``.bias`` (in a torch file). Results of arithmetic, of tensor
        methods that copy, of module calls and losses are not leaves; ``.data`` and
        ``.grad`` are not the leaf. Subscripts and view methods (``w[0]``, ``w.view(-1)``)
        of a leaf keep its evidence: writing to them in place fails the same way.
        """
        if _depth > _MAX_DEPTH:
            return None
        depth = _depth + 1
        if isinstance(expr, cst.Name):
            binding = self._scopes.lookup(expr.value)
            if binding is None:
                return None
            if binding.kind == "param":
                annotated = binding.annotation is not None and self._names.torch_qualname(binding.annotation) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
                return "an nn.Parameter" if annotated else None
            if binding.kind in ("for", "comprehension") and binding.value is not None:
                iterable, index = binding.value, binding.index
                if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate" and iterable.args and index == 1:
                    iterable, index = iterable.args[0].value, None
                method = _method_name(iterable)
                if (method == "parameters" and index is None) or (method == "named_parameters" and index == 1):
                    return f"an element of .{method}()"
                return None
            if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
                return self.leaf_grad_evidence(binding.value, depth)
            return None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in PARAMETER_ATTRIBUTES and self._names.imports_torch and not self._buffer_attribute(expr) and not self.grad_switched_off(expr):
                return f"a parameter (.{expr.attr.value})"
            return None
        if isinstance(expr, cst.Subscript):
            # Advanced indexing (a tensor or list index) copies: the result is no view.
            if any(isinstance(element.slice, cst.Index) and (isinstance(element.slice.value, cst.List) or self.kind(element.slice.value) is YES) for element in expr.slice):
                return None
            return self.leaf_grad_evidence(expr.value, depth)
        if isinstance(expr, cst.Call):
            callee = self._names.torch_qualname(expr.func)
            if callee in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return self._call_grad(expr, depth)
            if callee is not None:
                return "requires_grad=True" if _is_true(_keyword(expr, "requires_grad")) else None
            method = _method_name(expr)
            if method == "requires_grad_":
                return None if expr.args and _is_false(expr.args[0].value) else "requires_grad_()"
            if method in VIEW_METHODS:
                return self.leaf_grad_evidence(expr.func.value, depth)  # type: ignore[attr-defined]
        return None

    def _is_parameter_constructor(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and self._names.torch_qualname(expr.func) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")

    def _call_grad(self, call: cst.Call, depth: int) -> str | None:
        callee = self._names.torch_qualname(call.func)
        if callee in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            flag = _keyword(call, "requires_grad")
            if flag is None and len(call.args) > 1 and call.args[1].keyword is None:
                flag = call.args[1].value
            return None if _is_false(flag) else "an nn.Parameter"
        if callee is not None:
            if _is_true(_keyword(call, "requires_grad")):
                return "requires_grad=True"
            if callee.startswith("torch.nn.functional.") and "loss" in callee:
                return "a loss"
            if callee.count(".") == 1 and callee.rsplit(".", 1)[-1] in TENSOR_FACTORIES and callee not in ("torch.tensor", "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn", "torch.arange", "torch.linspace", "torch.eye", "torch.as_tensor", "torch.from_numpy"):
                for argument in call.args:
                    evidence = self.grad_evidence(argument.value, depth)
                    if evidence:
                        return evidence
            return None
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in GRAD_CUTTING_METHODS:
                return None
            if method == "requires_grad_":
                return None if call.args and _is_false(call.args[0].value) else "requires_grad_()"
            if method in TENSOR_METHODS:
                return self.grad_evidence(func.value, depth)
            if self._is_module(func, depth):
                return "a module output"
            return None
        if isinstance(func, cst.Name):
            if func.value in LOSS_CALLEES:
                return "a loss"
            if self._is_module(func, depth):
                return "a module output"
        return None

    def _is_module(self, func: cst.BaseExpression, depth: int) -> bool:
        """Whether calling ``func`` runs an ``nn.Module`` forward pass."""
        if isinstance(func, cst.Name):
            if func.value in MODULE_LIKE_NAMES and self._names.imports_torch:
                return True
            binding = self._scopes.lookup(func.value)
            if binding is not None and binding.kind == "assign" and isinstance(binding.value, cst.Call):
                callee = self._names.torch_qualname(binding.value.func) or ""
                return callee.startswith("torch.nn.") and callee.rsplit(".", 1)[-1][:1].isupper()
            return False
        if isinstance(func, cst.Attribute):
            return func.attr.value in MODULE_LIKE_NAMES and self._names.imports_torch
        return False


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


def _method_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value
    return None


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value == name:
            return argument.value
    return None


def _is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _is_false(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"
