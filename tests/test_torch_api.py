"""The torch knowledge in analysis/torch_api.py, checked against the installed torch.

Every name the tables list must exist where they say, and do what they say: view
methods return views, maybe-alias methods alias in one case and copy in another,
module methods exist on nn.Module and the self-returning ones return the module,
classes are modules, optimizers or parameters.
"""

from __future__ import annotations

import importlib
import inspect
import warnings

import pytest

torch = pytest.importorskip("torch")

from torchcopy_lint.analysis import torch_api as api  # noqa: E402


def resolve(qualname: str) -> object:
    """The object a dotted name refers to (``torch.nn.Linear`` ...)."""
    parts = qualname.split(".")
    for split in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            target = getattr(target, part)
        return target
    raise LookupError(qualname)


def sample() -> "torch.Tensor":
    return torch.randn(4, 6)


# Arguments for calling each view method on a 4x6 tensor.
VIEW_CALLS = {
    "view": (24,), "view_as": (torch.empty(24),), "narrow": (0, 0, 2), "select": (0, 1), "t": (),
    "transpose": (0, 1), "swapaxes": (0, 1), "swapdims": (0, 1), "permute": (1, 0), "squeeze": (),
    "unsqueeze": (0,), "expand": (4, 6), "expand_as": (torch.empty(4, 6),), "diagonal": (),
    "unflatten": (1, (2, 3)), "movedim": (0, 1), "moveaxis": (0, 1), "unfold": (0, 2, 1),
    "as_strided": ((2, 2), (1, 1)),
}
SEQUENCE_CALLS = {"split": (2,), "chunk": (2,), "unbind": (), "tensor_split": (2,), "hsplit": (2,), "vsplit": (2,), "dsplit": (2,)}


def test_every_view_method_has_a_sample_call() -> None:
    assert set(VIEW_CALLS) == set(api.VIEW_METHODS)


@pytest.mark.parametrize("method", sorted(api.VIEW_METHODS))
def test_view_methods_return_views(method: str) -> None:
    x = sample()
    result = getattr(x, method)(*VIEW_CALLS[method])
    assert result._base is x, f"Tensor.{method} does not return a view"


@pytest.mark.parametrize("method", sorted(api.VIEW_SEQUENCE_METHODS))
def test_view_sequence_methods_return_views(method: str) -> None:
    x = torch.randn(4, 6, 2) if method == "dsplit" else sample()
    parts = getattr(x, method)(*SEQUENCE_CALLS[method])
    assert parts and all(part._base is x for part in parts)


@pytest.mark.parametrize("attribute", sorted(api.VIEW_ATTRIBUTES))
def test_view_attributes_are_views(attribute: str) -> None:
    x = torch.randn(4, 6, dtype=torch.cfloat)
    assert getattr(x, attribute)._base is x


@pytest.mark.parametrize("method", sorted(api.MAYBE_ALIAS_METHODS))
def test_maybe_alias_methods_alias_in_one_case_and_copy_in_another(method: str) -> None:
    """Each such method returns the receiver's own memory for some inputs and a copy for others."""
    same = {"float": torch.float32, "double": torch.float64, "half": torch.float16, "bfloat16": torch.bfloat16, "long": torch.int64, "int": torch.int32, "short": torch.int16, "bool": torch.bool, "byte": torch.uint8, "char": torch.int8, "cfloat": torch.cfloat, "cdouble": torch.cdouble}
    if method in same:
        aliasing, copying = torch.zeros(3, dtype=same[method]), torch.zeros(3, dtype=torch.float64 if method != "double" else torch.float32)
        calls: tuple = ()
    elif method in ("to", "type"):
        aliasing, copying = torch.zeros(3), torch.zeros(3)
        calls = (torch.float32,) if method == "to" else ("torch.FloatTensor",)
    elif method == "cuda":
        pytest.skip("needs CUDA") if not torch.cuda.is_available() else None
        aliasing = torch.zeros(3, device="cuda")
        copying = torch.zeros(3)
        calls = ()
    elif method in ("reshape", "flatten", "ravel", "contiguous", "reshape_as"):
        aliasing, copying = torch.zeros(4, 6), torch.zeros(6, 4).t()
        calls = {"reshape": (-1,), "reshape_as": (torch.empty(24),)}.get(method, ())
    else:  # cpu, numpy
        aliasing = torch.zeros(3)
        copying = torch.zeros(3, device="cuda") if torch.cuda.is_available() else None
        calls = ()
    result = getattr(aliasing, method)(*calls)
    memory = result.ctypes.data if method == "numpy" else result.data_ptr()
    assert memory == aliasing.data_ptr(), f"Tensor.{method} never aliases"
    if copying is not None and method != "numpy":
        other = getattr(copying, method)(*calls) if method not in ("to", "type") else copying.to(torch.float64)
        assert other.data_ptr() != copying.data_ptr(), f"Tensor.{method} never copies"


def test_detach_shares_storage_without_history() -> None:
    w = torch.ones(3, requires_grad=True)
    for method in api.DETACHING_METHODS:
        d = getattr(w, method)()
        assert d.data_ptr() == w.data_ptr() and not d.requires_grad


@pytest.mark.parametrize(
    "table",
    ["METADATA_INPLACE_METHODS", "NON_TENSOR_METHODS", "NEW_TENSOR_METHODS", "TENSOR_ONLY_METHODS", "COMPUTING_METHODS", "INTEGER_RESULT_METHODS", "GRAD_CUTTING_METHODS", "CONVERSION_METHODS"],
)
def test_tensor_method_tables_name_real_methods(table: str) -> None:
    missing = sorted(name for name in getattr(api, table) if not hasattr(torch.Tensor, name))
    assert missing == [], f"{table}: not methods of torch.Tensor"


def test_scalar_builtins_give_no_tensor_even_of_a_tensor() -> None:
    """The screen cuts what ``len(t)``, ``int(t)`` ... are made from: on a tensor they give a plain
    number, string or flag (Evaluator._builtin_call says the same)."""
    import builtins

    one = torch.ones(1)
    arguments = {"isinstance": (one, torch.Tensor), "issubclass": (torch.Tensor, object), "hasattr": (one, "grad"), "ord": ("a",), "chr": (97,), "format": (one.item(),)}
    for name in sorted(api.SCALAR_BUILTINS):
        result = getattr(builtins, name)(*arguments.get(name, (one,) if name not in ("bin", "hex", "oct") else (3,)))
        assert not isinstance(result, torch.Tensor), name
        assert isinstance(result, (int, float, bool, str)), f"{name}: {type(result).__name__}"


def test_metadata_inplace_methods_are_in_place_and_values_untouched() -> None:
    for name in api.METADATA_INPLACE_METHODS:
        assert api.is_inplace_method(name) and not api.writes_values(name)


@pytest.mark.parametrize("method", sorted(api.LAYOUT_MAYBE_ALIAS_METHODS))
def test_layout_methods_keep_dtype_and_alias_a_tensor_made_from_a_contiguous_array(method: str) -> None:
    """Of the maybe-alias methods, these keep dtype and device: on ``torch.from_numpy`` of a
    contiguous array they return the array's own memory (a write to the array changes them)."""
    import numpy as np

    assert api.LAYOUT_MAYBE_ALIAS_METHODS <= api.MAYBE_ALIAS_METHODS
    array = np.zeros((4, 6), dtype=np.float32)
    made = torch.from_numpy(array)
    calls = {"reshape": (-1,), "reshape_as": (torch.empty(24),)}.get(method, ())
    result = getattr(made, method)(*calls)
    assert result.dtype == made.dtype and result.device == made.device
    array[0, 0] = 7.0
    assert result.reshape(-1)[0].item() == 7.0, f"Tensor.{method} of a contiguous array's tensor copied it"


def test_module_use_methods_are_module_methods_not_tensor_methods() -> None:
    """What a name is used as: each of these is a method of nn.Module that a tensor lacks."""
    assert sorted(name for name in api.MODULE_USE_METHODS if not hasattr(torch.nn.Module, name)) == []
    assert sorted(name for name in api.MODULE_USE_METHODS if hasattr(torch.Tensor, name)) == []


def test_tensor_only_methods_are_not_module_methods() -> None:
    assert sorted(name for name in api.TENSOR_ONLY_METHODS if hasattr(torch.nn.Module, name)) == []


def test_conversion_methods_are_missing_on_numbers_and_arrays() -> None:
    """``(a == b).float()``: only a tensor's comparison or arithmetic has these methods."""
    numpy = pytest.importorskip("numpy")
    for name in api.CONVERSION_METHODS:
        for other in (True, 1, 1.0, numpy.arange(3) == 1, numpy.arange(3) * 2.0):
            assert not hasattr(other, name), f"{type(other).__name__}.{name}"
        assert callable(getattr(torch.arange(3) == 1, name))
        if name != "cuda":  # needs a GPU to run
            assert isinstance(getattr(torch.arange(3) == 1, name)(), torch.Tensor)


def test_floating_dtypes_are_floating_and_integers_converted_to_them_are_copies() -> None:
    for qualname in api.FLOATING_DTYPES:
        dtype = getattr(torch, qualname.split(".", 1)[1])
        assert isinstance(dtype, torch.dtype) and dtype.is_floating_point, qualname
        for source in (torch.arange(4), torch.arange(4) > 1):
            assert source.to(dtype).data_ptr() != source.data_ptr()
    for method in ("float", "double", "half", "bfloat16"):
        integers = torch.arange(4)
        assert getattr(integers, method)().data_ptr() != integers.data_ptr()


def test_tensor_only_keywords_are_tensor_reductions_keywords_not_numpy_ones() -> None:
    """``x.sum(dim=1)``: numpy's and pandas' methods say ``axis``/``keepdims``."""
    numpy = pytest.importorskip("numpy")
    x = torch.randn(2, 3)
    for keyword in api.TENSOR_ONLY_KEYWORDS:
        arguments = {"dim": 1} if keyword == "dim" else {"dim": 1, keyword: True}
        assert isinstance(x.sum(**arguments), torch.Tensor)
        with pytest.raises(TypeError):
            numpy.ones((2, 3)).sum(**arguments)


def test_integer_results_do_not_require_grad() -> None:
    x = torch.randn(4, 6, requires_grad=True)
    for name in api.INTEGER_RESULT_METHODS:
        method = getattr(x, name)
        try:
            result = method() if name not in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or") else method(x)
        except RuntimeError:
            continue  # e.g. nonzero on an unsupported dtype: nothing to check
        assert not result.requires_grad, name


def test_integer_result_functions_do_not_require_grad() -> None:
    x = torch.randn(4, 6, requires_grad=True)
    arguments = {
        "multinomial": (x.softmax(-1), 1),
        "searchsorted": (torch.arange(6.0), x),
        "bucketize": (x, torch.tensor([0.0, 0.5])),
    }
    for name in api.INTEGER_RESULT_FUNCTIONS:
        function = getattr(torch, name)
        result = function(*arguments.get(name, (x, x) if name in ("eq", "ne", "gt", "ge", "lt", "le", "isclose", "logical_and", "logical_or", "logical_xor") else (x,)))
        assert not result.requires_grad and not result.is_floating_point(), name


def test_elementwise_masks_are_boolean_masks_of_the_input_as_functions_and_methods() -> None:
    x = torch.tensor([[0.5, float("nan"), float("inf")], [-float("inf"), -1.0, 0.0]])
    for name in api.ELEMENTWISE_MASKS:
        for result in (getattr(torch, name)(x), getattr(x, name)()):
            assert result.dtype is torch.bool and result.shape == x.shape, name
        x[getattr(torch, name)(x)] = 0.0  # what the binder takes as a tensor's (an array's) index


@pytest.mark.parametrize("qualname", sorted(api.GRAD_NORM_FUNCTIONS))
def test_grad_norm_functions_return_a_tensor_without_history(qualname: str) -> None:
    model = torch.nn.Linear(3, 2)
    model(torch.randn(4, 3)).sum().backward()
    function = resolve(qualname)
    norm = function([p.grad for p in model.parameters()]) if qualname.endswith("get_total_norm") else function(model.parameters(), 1.0)
    assert isinstance(norm, torch.Tensor) and norm.dim() == 0 and not norm.requires_grad


def test_return_type_fields_are_fields_of_torch_return_types() -> None:
    fields = {name for kind in vars(torch.return_types).values() if isinstance(kind, type) for name in getattr(kind, "__match_args__", ())}
    assert sorted(api.RETURN_TYPE_FIELDS - fields) == []
    x = torch.randn(4, 6, requires_grad=True)
    assert x.max(1).values.requires_grad and x.sort().values.requires_grad and torch.linalg.svd(x).S.requires_grad
    assert not x.max(1).indices.requires_grad and not x.topk(2).indices.is_floating_point()
    assert not torch.linalg.matrix_rank(x.detach()).is_floating_point() and not torch.frexp(x.detach()).exponent.is_floating_point()
    assert api.INTEGER_RETURN_FIELDS <= api.RETURN_TYPE_FIELDS


@pytest.mark.parametrize("method", sorted(api.VALUES_INDICES_ALWAYS | api.VALUES_INDICES_WITH_DIM))
def test_values_and_indices_reductions(method: str) -> None:
    x = torch.randn(4, 6, requires_grad=True)
    arguments = (2, 1) if method in ("topk", "kthvalue") else (1,)
    pair = getattr(x, method)(*arguments)
    values, indices = pair  # unpacks, and has the fields the evaluator gives it
    assert pair.values is values and pair.indices is indices
    assert values.requires_grad and not indices.requires_grad and not indices.is_floating_point()
    assert getattr(torch, method)(x, *arguments).indices.dtype == torch.int64
    if method in api.VALUES_INDICES_WITH_DIM:
        assert isinstance(getattr(x, method)(), torch.Tensor)  # without a dimension: one tensor


def test_computing_methods_carry_history() -> None:
    x = torch.randn(4, 6, requires_grad=True)
    assert x.clone().requires_grad and x.sum().requires_grad and x.exp().requires_grad


@pytest.mark.parametrize("qualname", sorted(api.TENSOR_FUNCTIONS))
def test_tensor_functions_exist(qualname: str) -> None:
    assert callable(resolve(qualname))


def test_creation_functions_make_leaves_only_when_asked() -> None:
    made = torch.zeros(3)
    asked = torch.zeros(3, requires_grad=True)
    assert not made.requires_grad and asked.requires_grad and asked.is_leaf


@pytest.mark.parametrize("qualname", sorted(api.PARAMETER_CLASSES | api.BUFFER_CLASSES))
def test_parameter_and_buffer_classes(qualname: str) -> None:
    cls = resolve(qualname)
    assert inspect.isclass(cls) and issubclass(cls, torch.Tensor)


@pytest.mark.parametrize("qualname", sorted(api.LEGACY_CONSTRUCTORS))
def test_legacy_constructors_exist(qualname: str) -> None:
    assert resolve(qualname) is not None


@pytest.mark.parametrize("qualname", ["torch.Tensor", "torch.FloatTensor"])
def test_legacy_constructor_of_a_tensor_is_the_tensor_with_its_history(qualname: str) -> None:
    """Evaluator._qualified_call: ``torch.FloatTensor(t)`` is an alias of ``t`` that keeps its graph."""
    weight = torch.ones(3, requires_grad=True)
    computed = weight * 2
    made = resolve(qualname)(computed)
    assert made.data_ptr() == computed.data_ptr() and made.grad_fn is not None and made.requires_grad


def test_module_class_rule_against_torch_nn() -> None:
    """Every public nn.Module subclass in torch.nn is a module class; nothing else is."""
    wrong = []
    for name in dir(torch.nn):
        value = getattr(torch.nn, name)
        if name.startswith("_") or not inspect.isclass(value):
            continue
        is_module = issubclass(value, torch.nn.Module)
        if api.is_module_class(f"torch.nn.{name}") != is_module:
            wrong.append(name)
    assert wrong == []


@pytest.mark.parametrize("name", sorted(api.PARAMETER_FREE_MODULES))
def test_parameter_free_modules_have_no_parameters(name: str) -> None:
    """Their output has only its input's history (see Evaluator._module_output)."""
    cls = getattr(torch.nn, name)
    for arguments in ((), (2,), (1, 0.0), (1, (2, 2))):
        try:
            module = cls(*arguments)
            break
        except TypeError:
            continue
    else:
        pytest.fail(f"torch.nn.{name} could not be built")
    assert list(module.parameters()) == []
    assert api.is_module_class(f"torch.nn.{name}")


def test_loss_modules_are_losses() -> None:
    losses = [name for name in dir(torch.nn) if name.endswith("Loss") and inspect.isclass(getattr(torch.nn, name))]
    assert losses and all(api.is_loss_module_class(f"torch.nn.{name}") for name in losses)


def test_optimizer_rule_against_torch_optim() -> None:
    wrong = []
    for name in dir(torch.optim):
        value = getattr(torch.optim, name)
        if name.startswith("_") or not inspect.isclass(value):
            continue
        if api.is_optimizer_class(f"torch.optim.{name}") != issubclass(value, torch.optim.Optimizer):
            wrong.append(name)
    for name in dir(torch.optim.lr_scheduler):
        if inspect.isclass(getattr(torch.optim.lr_scheduler, name)) and api.is_optimizer_class(f"torch.optim.lr_scheduler.{name}"):
            wrong.append(f"lr_scheduler.{name}")
    assert wrong == []


def test_functional_losses_are_losses() -> None:
    functional = [name for name in dir(torch.nn.functional) if "loss" in name and callable(getattr(torch.nn.functional, name))]
    assert functional and all(api.is_loss_function(f"torch.nn.functional.{name}") for name in functional)
    assert all(hasattr(torch.nn.functional, name) for name in api.LOSS_FUNCTION_NAMES)


@pytest.mark.parametrize(
    "table",
    ["PARAMETER_ITERATORS", "NAMED_PARAMETER_ITERATORS", "BUFFER_ITERATORS", "NAMED_BUFFER_ITERATORS", "SUBMODULE_ITERATORS", "NAMED_SUBMODULE_ITERATORS", "MODULE_SELF_METHODS", "STATE_DICT_METHODS", "LOAD_STATE_METHODS"],
)
def test_module_method_tables_name_real_methods(table: str) -> None:
    assert sorted(name for name in getattr(api, table) if not hasattr(torch.nn.Module, name)) == []


def test_module_self_methods_return_the_module() -> None:
    module = torch.nn.Linear(2, 2)
    arguments = {"to": (torch.float32,), "type": (torch.float32,), "apply": (lambda m: None,)}
    for name in api.MODULE_SELF_METHODS:
        if name == "cuda" and not torch.cuda.is_available():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert getattr(module, name)(*arguments.get(name, ())) is module, name


def test_parameter_attributes_and_iterators_give_parameters() -> None:
    module = torch.nn.Linear(2, 2)
    assert all(isinstance(getattr(module, name), torch.nn.Parameter) for name in api.PARAMETER_ATTRIBUTES)
    assert all(isinstance(p, torch.nn.Parameter) for p in module.parameters())
    state = module.state_dict()
    assert state["weight"].data_ptr() == module.weight.data_ptr()  # a state dict aliases the weights


@pytest.mark.parametrize("qualname", sorted(api.PLAIN_BASE_CLASSES))
def test_plain_base_classes_are_no_modules_tensors_or_optimizers(qualname: str) -> None:
    cls = resolve(qualname)
    assert inspect.isclass(cls) and not issubclass(cls, (torch.nn.Module, torch.Tensor, torch.optim.Optimizer))


@pytest.mark.parametrize("qualname", sorted(api.PARAMETER_LIST_CLASSES | api.PARAMETER_DICT_CLASSES))
def test_parameter_containers_hold_parameters(qualname: str) -> None:
    cls = resolve(qualname)
    assert issubclass(cls, torch.nn.Module)
    if qualname in api.PARAMETER_LIST_CLASSES:
        held = cls([torch.nn.Parameter(torch.zeros(1))])
        assert isinstance(held[0], torch.nn.Parameter) and all(isinstance(p, torch.nn.Parameter) for p in held)
    else:
        held = cls({"a": torch.nn.Parameter(torch.zeros(1))})
        assert list(held) == ["a"]  # iterating gives the keys
        assert isinstance(held["a"], torch.nn.Parameter) and all(isinstance(p, torch.nn.Parameter) for p in held.values())
        assert all(isinstance(p, torch.nn.Parameter) for _, p in held.items())


def test_hook_tables_name_real_registration_methods() -> None:
    assert sorted(name for name in api.MODULE_HOOKS if not hasattr(torch.nn.Module, name)) == []
    assert sorted(name for name in api.TENSOR_HOOKS if not hasattr(torch.Tensor, name)) == []


def test_forward_hook_output_carries_history() -> None:
    seen = []
    module = torch.nn.Linear(2, 2)
    module.register_forward_hook(lambda m, inputs, output: seen.append(output))
    module(torch.ones(1, 2))
    assert seen[0].grad_fn is not None


@pytest.mark.parametrize("qualname", sorted(api.GRAD_DISABLING | api.GRAD_ENABLING | api.GRAD_SETTING | api.DATA_LOADER_CLASSES | api.ALIASING_CONSTRUCTORS | api.MAYBE_ALIAS_FUNCTIONS | api.LOADING_FUNCTIONS | api.GRADIENT_FUNCTIONS))
def test_named_functions_and_classes_exist(qualname: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert resolve(qualname) is not None


@pytest.mark.parametrize("qualname", sorted(api.GRAD_SCALER_CLASSES))
def test_grad_scaler_classes_exist(qualname: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert inspect.isclass(resolve(qualname))


def test_optimizer_param_groups_hold_parameters() -> None:
    module = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    groups = getattr(optimizer, api.OPTIMIZER_PARAM_GROUPS)
    assert all(isinstance(p, torch.nn.Parameter) for group in groups for p in group["params"])
    assert all(hasattr(optimizer, name) for name in api.OPTIMIZER_STEP_METHODS)
