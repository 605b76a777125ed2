"""Everything torchcopy-lint knows about PyTorch's API, in one place.

Which methods return views, which write in place, which classes are modules,
optimizers or parameters, which functions make tensors, which hooks pass what.
Analyses and checkers import these tables; none keeps its own copy. A test
(``tests/test_torch_api.py``) checks every name here against the installed torch:
the methods exist on ``torch.Tensor`` / ``torch.nn.Module``, each view method
really returns a view, each class is what it is said to be.

Nothing here imports torch: linting never needs it.
"""

from __future__ import annotations

from collections.abc import Iterable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _qualified(prefixes: Iterable[str], names: Iterable[str]) -> frozenset[str]:
    names = tuple(names)
    return frozenset(f"{prefix}{name}" for prefix in prefixes for name in names)


# -- classes -----------------------------------------------------------------------

PARAMETER_CLASSES = frozenset(
    {
        "torch.nn.Parameter",
        "torch.nn.parameter.Parameter",
        "torch.nn.UninitializedParameter",
        "torch.nn.parameter.UninitializedParameter",
    }
)
BUFFER_CLASSES = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer"})
TENSOR_CLASSES = frozenset({"torch.Tensor"}) | PARAMETER_CLASSES
MODULE_BASE_CLASSES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
OPTIMIZER_BASE_CLASSES = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})
# Legacy typed constructors: ``torch.FloatTensor(3)`` (uninitialized), ``torch.LongTensor(data)``.
LEGACY_DTYPES = {
    "Float": "torch.float32",
    "Double": "torch.float64",
    "Half": "torch.float16",
    "BFloat16": "torch.bfloat16",
    "Long": "torch.int64",
    "Int": "torch.int32",
    "Short": "torch.int16",
    "Char": "torch.int8",
    "Byte": "torch.uint8",
    "Bool": "torch.bool",
}
# Floating dtypes: converting integers or booleans to one (``.to(torch.float32)``) always copies.
FLOATING_DTYPES = frozenset({"torch.float", "torch.float32", "torch.double", "torch.float64", "torch.half", "torch.float16", "torch.bfloat16"})
LEGACY_TENSOR_TYPES = _qualified(("torch.", "torch.cuda."), (f"{kind}Tensor" for kind in LEGACY_DTYPES))
LEGACY_CONSTRUCTORS = LEGACY_TENSOR_TYPES | {"torch.Tensor"}
GRAD_SCALER_CLASSES = frozenset({"torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"})
# ``torch.optim.swa_utils.AveragedModel`` is a module; the LR schedulers are not optimizers.
EXTRA_MODULE_CLASSES = frozenset({"torch.optim.swa_utils.AveragedModel"})
# torch.nn members that are capitalised but are not module classes (besides ``*Options``).
NOT_MODULE_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.UninitializedParameter", "torch.nn.UninitializedBuffer"})
# torch classes whose subclasses are plain objects (no module, optimizer or tensor): a
# dataset of the file is an object whose ``__getitem__`` the model follows.
PLAIN_BASE_CLASSES = frozenset({"torch.utils.data.Dataset", "torch.utils.data.IterableDataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset"})
# What makes a PackedSequence (a named tuple: its ``.data`` is a field, not ``Tensor.data``).
PACKED_SEQUENCE = "torch.nn.utils.rnn.PackedSequence"
PACKED_SEQUENCE_MAKERS = frozenset({PACKED_SEQUENCE, "torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"})
DATA_LOADER = "torch.utils.data.DataLoader"  # what the model calls any loader's value (see Evaluator)
DATA_LOADER_CLASSES = frozenset({DATA_LOADER, "torch.utils.data.dataloader.DataLoader"})
# PyTorch Geometric's loaders yield a Batch of graphs: its standard attributes are tensors
# (``data.x``, ``data.edge_index``, ``data.y``), and ``data.to(device)`` returns the batch.
GRAPH_LOADER_CLASSES = frozenset({"torch_geometric.loader.DataLoader", "torch_geometric.data.DataLoader"})
GRAPH_BATCH = "torch_geometric.data.Batch"
GRAPH_TENSOR_ATTRIBUTES = _words("x edge_index edge_attr edge_weight y pos batch ptr train_mask val_mask test_mask")
# Modules that hold parameters as items: ``plist[i]``, ``for p in plist``, ``pdict["k"]``,
# ``pdict.values()`` are parameters (iterating a ParameterDict gives its keys).
PARAMETER_LIST_CLASSES = frozenset({"torch.nn.ParameterList", "torch.nn.modules.container.ParameterList"})
PARAMETER_DICT_CLASSES = frozenset({"torch.nn.ParameterDict", "torch.nn.modules.container.ParameterDict"})


def is_module_class(qualname: str) -> bool:
    """``torch.nn.Linear``, ``torch.nn.modules.conv.Conv2d``, ``torch.nn.Sequential`` ..."""
    if qualname in EXTRA_MODULE_CLASSES or qualname in MODULE_BASE_CLASSES:
        return True
    if not qualname.startswith("torch.nn.") or qualname in NOT_MODULE_CLASSES:
        return False
    parts = qualname.split(".")
    if any(part in ("functional", "init", "utils", "parameter", "grad", "attention") for part in parts[2:-1]):
        return False
    return parts[-1][:1].isupper() and not parts[-1].endswith("Options")


# torch.nn modules without parameters: their output has the history of their input only.
PARAMETER_FREE_MODULES = _words(
    """
    ReLU ReLU6 LeakyReLU GELU SiLU Mish ELU SELU CELU Sigmoid Tanh Softmax LogSoftmax Softplus
    Hardtanh Hardswish Hardsigmoid Dropout Dropout1d Dropout2d Dropout3d AlphaDropout Identity Flatten
    Unflatten MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d
    AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d Upsample
    PixelShuffle PixelUnshuffle ZeroPad2d ConstantPad2d ReflectionPad2d ReplicationPad2d
    """
)


def is_loss_module_class(qualname: str) -> bool:
    """``torch.nn.CrossEntropyLoss``, ``torch.nn.MSELoss`` ..."""
    return is_module_class(qualname) and qualname.endswith("Loss")


def is_optimizer_class(qualname: str) -> bool:
    """``torch.optim.SGD``, ``torch.optim.adamw.AdamW`` (not the LR schedulers, not swa_utils)."""
    if qualname in OPTIMIZER_BASE_CLASSES:
        return True
    if not qualname.startswith("torch.optim.") or ".lr_scheduler." in qualname or ".swa_utils." in qualname:
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last[:1].isupper() and "Scheduler" not in last and "LR" not in last


# -- functions that make tensors -----------------------------------------------------

# torch.* functions that create a new tensor from sizes or values: a leaf that requires
# grad only with ``requires_grad=True``.
CREATION_FUNCTIONS = _words(
    """
    tensor zeros ones empty full rand randn randint randperm arange linspace logspace eye
    zeros_like ones_like empty_like full_like rand_like randn_like randint_like empty_strided
    """
)
# Functions that share memory with their argument: ``as_tensor``/``asarray``/``from_numpy``
# alias a numpy array (or an existing tensor) instead of copying it.
ALIASING_CONSTRUCTORS = frozenset({"torch.as_tensor", "torch.asarray", "torch.from_numpy", "torch.frombuffer"})
# numpy array methods that write the array in place (no trailing underscore): through an
# array shared with a tensor (``t.numpy()``, ``torch.from_numpy(a)``) they change the tensor.
NUMPY_INPLACE_METHODS = frozenset({"fill", "sort", "put", "partition", "itemset"})
# torch.* functions that compute a tensor from tensors (results carry their inputs' history).
COMPUTING_FUNCTIONS = _words(
    """
    stack cat concat concatenate hstack vstack dstack where matmul mm bmm einsum clone abs exp log
    sqrt sigmoid tanh relu softmax log_softmax sum mean max min argmax argmin cumsum prod norm outer
    diag tril triu flatten reshape squeeze unsqueeze transpose permute gather index_select
    masked_select nonzero sort topk chunk split bernoulli multinomial normal complex polar real imag
    view_as_real view_as_complex cdist baddbmm addmm add sub mul div pow neg clamp clip maximum
    minimum lerp addcmul addcdiv logsumexp var std square erf sin cos cross dot tensordot kron
    flip roll repeat_interleave tile broadcast_to movedim narrow select take diagonal trace lgamma
    logit sign floor ceil round trunc frac rsqrt reciprocal matrix_exp inverse det cholesky cumprod
    bincount histc unique unique_consecutive searchsorted bucketize diff count_nonzero quantile
    nanquantile median nanmedian mode kthvalue amax amin aminmax any all log2 log10 log1p expm1 exp2
    atan2 atan asin acos sinh cosh tan hypot fmod remainder floor_divide true_divide mv dist cov
    corrcoef take_along_dim scatter scatter_add scatter_reduce index_add index_fill index_copy
    masked_fill masked_scatter nan_to_num isclose eq ne gt ge lt le logical_and logical_or logical_not
    logical_xor cartesian_prod combinations argsort msort rot90 fliplr flipud nansum nanmean
    logcumsumexp cummax cummin std_mean var_mean cosine_similarity pairwise_distance heaviside xlogy
    rad2deg deg2rad isnan isinf isfinite sgn sinc logaddexp trapezoid dropout conv1d conv2d conv3d
    embedding layer_norm group_norm batch_norm instance_norm bilinear celu selu rrelu threshold pdist
    pixel_shuffle block_diag renorm column_stack row_stack vander addmv addbmm addr digamma polygamma
    meshgrid broadcast_tensors atleast_1d atleast_2d atleast_3d
    erfc erfinv logdet matrix_power pinverse
    """
)
TENSOR_FUNCTIONS = _qualified(("torch.",), CREATION_FUNCTIONS | COMPUTING_FUNCTIONS) | ALIASING_CONSTRUCTORS
# torch.* functions that alias their first argument only sometimes (a view for some layouts).
MAYBE_ALIAS_FUNCTIONS = frozenset({"torch.reshape", "torch.flatten", "torch.ravel", "torch.as_tensor", "torch.asarray"})
# torch.nn.functional losses whose names do not say "loss".
LOSS_FUNCTION_NAMES = _words("cross_entropy binary_cross_entropy binary_cross_entropy_with_logits kl_div nll_loss")
LOADING_FUNCTIONS = frozenset({"torch.load", "torch.hub.load_state_dict_from_url"})
# Functions returning a tuple of gradients (tensors; with history only under ``create_graph=True``).
GRADIENT_FUNCTIONS = frozenset({"torch.autograd.grad"})
DEEP_COPY_FUNCTIONS = frozenset({"copy.deepcopy"})
SHALLOW_COPY_FUNCTIONS = frozenset({"copy.copy"})

# -- other libraries' calls that return torch tensors -----------------------------------
# Not checked against the libraries (they are not installed with torchcopy-lint); each is
# documented to return a ``torch.Tensor`` made from plain data (no autograd history).
LIBRARY_TENSOR_FUNCTIONS = frozenset(
    {
        "torchvision.transforms.functional.to_tensor",
        "torchvision.transforms.functional.pil_to_tensor",
        "torchvision.io.read_image",
        "torchvision.io.decode_image",
        "torch_geometric.utils.degree",
        "torch_geometric.utils.to_dense_adj",
    }
)
# torch.nn.utils functions that return the gradients' total norm: a tensor computed without grad
# (``gn = clip_grad_norm_(model.parameters(), 1.0)``; ``torch.tensor(gn)`` copy-constructs it).
GRAD_NORM_FUNCTIONS = frozenset(
    {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_", "torch.nn.utils.get_total_norm"}
)
# ``waveform, sample_rate = torchaudio.load(path)``: a tensor and a number.
LIBRARY_TENSOR_AND_NUMBER_FUNCTIONS = frozenset({"torchaudio.load"})
# Transforms whose call returns a tensor made from their input (with its history): every
# torchaudio transform (parameter-free nn.Modules on tensors), and torchvision's conversions
# to tensors (its other transforms also take and return PIL images).
_TORCHVISION_TENSOR_TRANSFORMS = frozenset({"ToTensor", "PILToTensor", "ConvertImageDtype", "Normalize", "ToImage", "ToDtype", "ToPureTensor"})


# ``transforms.Compose([..., transforms.ToTensor()])``: calling it calls its last transform.
COMPOSED_TRANSFORMS = frozenset({"torchvision.transforms.Compose", "torchvision.transforms.v2.Compose"})


# ``torchvision.transforms.functional``: each function returns what it was given (a tensor for
# a tensor, a PIL image for a PIL image) but for these, which convert or measure.
_IMAGE_FUNCTION_NAMESPACES = ("torchvision.transforms.functional.", "torchvision.transforms.v2.functional.")
_IMAGE_FUNCTIONS_OF_OTHER_TYPES = frozenset({"to_pil_image", "to_grayscale", "get_dimensions", "get_image_size", "get_image_num_channels", "get_size", "get_num_channels", "get_num_frames"})


def is_same_type_image_function(qualname: str) -> bool:
    """``TF.normalize``, ``TF.resize``, ``TF.hflip`` ...: a tensor given, a tensor returned."""
    for namespace in _IMAGE_FUNCTION_NAMESPACES:
        if qualname.startswith(namespace):
            last = qualname[len(namespace):]
            return "." not in last and last[:1].islower() and last not in _IMAGE_FUNCTIONS_OF_OTHER_TYPES
    return False


def is_library_transform(qualname: str) -> bool:
    """``torchaudio.transforms.MelSpectrogram``, ``torchvision.transforms.ToTensor`` ..."""
    last = qualname.rsplit(".", 1)[-1]
    if qualname.startswith("torchaudio.transforms."):
        return last[:1].isupper()
    return qualname.startswith("torchvision.transforms.") and last in _TORCHVISION_TENSOR_TRANSFORMS


# ``tokenizer(texts, return_tensors="pt")``: Hugging Face tokenizers, processors and feature
# extractors given this keyword return a BatchEncoding / BatchFeature, a dict of tensors
# whose items are also attributes (``enc["input_ids"]``, ``enc.input_ids``).
TENSOR_MAPPING_KEYWORD = ("return_tensors", "pt")
TENSOR_MAPPING = "transformers.BatchEncoding"  # the qualname such a result is given


# Every function here takes a tensor as its first argument (its input).
FUNCTIONAL_NAMESPACE = "torch.nn.functional."


def is_tensor_function(qualname: str) -> bool:
    """``torch.zeros``, ``torch.nn.functional.relu``, ``torch.linalg.norm`` ...: returns a tensor."""
    if qualname in TENSOR_FUNCTIONS:
        return True
    for namespace in (FUNCTIONAL_NAMESPACE, "torch.linalg.", "torch.fft.", "torch.special."):
        if qualname.startswith(namespace):
            last = qualname[len(namespace):]
            return "." not in last and last[:1].islower()
    return False


def is_loss_function(qualname: str) -> bool:
    """``torch.nn.functional.mse_loss``, ``F.cross_entropy`` ..."""
    if not qualname.startswith(FUNCTIONAL_NAMESPACE):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return "loss" in last or last in LOSS_FUNCTION_NAMES


# -- libraries that build modules -------------------------------------------------------

# torchvision's helpers that are no model builders.
_TORCHVISION_NOT_BUILDERS = frozenset({"get_weight", "get_model_weights", "list_models", "get_model_builder"})


def library_model(qualname: str) -> str | None:
    """Whether calling ``qualname`` builds an ``nn.Module`` of a library of the ecosystem:
    "known" for torchvision's model builders and classes (``torchvision.models.resnet50``,
    ``models.detection.fasterrcnn_resnet50_fpn``, ``models.ResNet``) and ``timm.create_model``;
    "guessed" for what gives a module whose call gives something else than a tensor
    (a ``transformers`` model's ``from_pretrained``: an output object) or what usually is a
    model (``torch.hub.load``); None otherwise."""
    if qualname.startswith("torchvision.models."):
        last = qualname.rsplit(".", 1)[-1]
        if last in _TORCHVISION_NOT_BUILDERS or last.endswith(("Weights", "_Weights")) or last.startswith("_"):
            return None
        return "known"
    if qualname in ("timm.create_model", "timm.models.create_model"):
        return "known"
    if qualname == "torch.hub.load":
        return "guessed"
    if qualname.startswith("transformers."):
        parts = qualname.split(".")
        if len(parts) >= 3 and parts[-1] in ("from_pretrained", "from_config") and "Model" in parts[-2]:
            return "guessed"
    return None


# -- torch.distributions -------------------------------------------------------------------

# Methods of a distribution whose result carries the history of its parameters
# (``Categorical(probs).log_prob(a)``); ``sample()`` draws without history.
DISTRIBUTION_COMPUTING_METHODS = _words("log_prob rsample entropy cdf icdf perplexity mean mode variance stddev")
DISTRIBUTION_SAMPLING_METHODS = _words("sample sample_n enumerate_support")


def is_distribution_class(qualname: str) -> bool:
    """``torch.distributions.Categorical``, ``torch.distributions.normal.Normal`` ..."""
    if not qualname.startswith("torch.distributions."):
        return False
    last = qualname.rsplit(".", 1)[-1]
    return last[:1].isupper() and last not in ("Distribution", "Transform", "Constraint")


# -- grad mode ---------------------------------------------------------------------

GRAD_DISABLING = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)
GRAD_ENABLING = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
GRAD_SETTING = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"})

# -- tensor methods and attributes -----------------------------------------------------

# Methods that always return a view of the receiver: an in-place write to the result
# writes the receiver. (``detach`` also shares storage; see DETACHING_METHODS.)
VIEW_METHODS = _words(
    """
    view view_as narrow select t transpose swapaxes swapdims permute squeeze unsqueeze expand
    expand_as diagonal unflatten movedim moveaxis unfold as_strided
    """
)
# Methods that return a tuple of views.
VIEW_SEQUENCE_METHODS = _words("split chunk unbind tensor_split hsplit vsplit dsplit")
# Attributes that are views of the tensor they are read from.
VIEW_ATTRIBUTES = _words("T mT H mH real imag")
# Methods that return the receiver itself (or a view) in some cases and a copy in others:
# for some layouts, dtypes or devices.
# Methods of MAYBE_ALIAS_METHODS that convert the dtype: under a test of the receiver's dtype
# (``x if x.is_floating_point() else x.float()``) they run only where the dtype differs, and copy.
DTYPE_CONVERSION_METHODS = _words(
    """
    to type float double half bfloat16 long int short bool byte char cfloat cdouble
    """
)
MAYBE_ALIAS_METHODS = _words(
    """
    reshape reshape_as flatten ravel contiguous to cpu cuda type float double half bfloat16 long
    int short bool byte char cfloat cdouble numpy
    """
)
# Of those, the ones that keep dtype and device: a view whenever the layout allows, which for a
# tensor made from a contiguous array (``torch.from_numpy(frames).flatten()``) is always.
LAYOUT_MAYBE_ALIAS_METHODS = _words("reshape reshape_as flatten ravel contiguous")
# Methods whose result shares storage with the receiver but has no autograd history.
DETACHING_METHODS = _words("detach")
# Methods whose result is cut off from autograd (not a tensor, or detached).
GRAD_CUTTING_METHODS = _words("detach detach_ item tolist numpy data_ptr numel size dim")
# Methods whose result is no tensor (a number, a list, a size, a storage, a handle).
NON_TENSOR_METHODS = _words(
    """
    item tolist size dim ndimension numel nelement stride is_contiguous data_ptr storage_offset
    element_size get_device is_floating_point is_complex untyped_storage register_hook
    register_post_accumulate_grad_hook backward equal allclose storage dim_order record_stream
    retain_grad sparse_dim dense_dim q_scale q_zero_point apply_ map_ storage_type
    """
)
# Python builtins whose result is a number, a string or a flag, whatever they are given.
SCALAR_BUILTINS = _words("len int float bool str repr hash id isinstance issubclass hasattr callable ord chr format bin hex oct")
# Methods that make a new tensor of the receiver's dtype and device, sharing nothing.
NEW_TENSOR_METHODS = _words("new_tensor new_zeros new_ones new_empty new_full")
# Trailing-underscore methods that change flags, metadata or the tensor's own storage
# pointer rather than the values it shares with other tensors.
METADATA_INPLACE_METHODS = _words(
    """
    requires_grad_ share_memory_ detach_ resize_ resize_as_ set_ as_strided_ squeeze_ unsqueeze_ t_
    transpose_ swapaxes_ swapdims_
    """
)
# Methods that exist only on tensors (not on modules): a receiver that calls them is a tensor.
TENSOR_ONLY_METHODS = _words(
    """
    detach detach_ new_tensor new_zeros new_ones new_empty new_full contiguous numel numpy
    untyped_storage data_ptr register_hook retain_grad backward
    """
)
# Keywords only tensor methods take (numpy's and pandas' say ``axis``, ``keepdims``): an
# object whose method is called with one (``x.sum(dim=1)``) is a tensor.
TENSOR_ONLY_KEYWORDS = _words("dim keepdim")
# Methods that convert a tensor's dtype or device, which Python numbers and numpy arrays
# lack: called on the result of arithmetic or a comparison (which is never a module, where
# ``float()`` and ``cuda()`` exist too), they show a tensor: ``(pred == y).float()``.
CONVERSION_METHODS = _words("float double half bfloat16 long int short bool byte char cuda cpu")
# Tensor methods whose result holds integers or booleans: it cannot require grad.
INTEGER_RESULT_METHODS = _words(
    """
    argmax argmin argsort nonzero long int short bool byte char eq ne lt le gt ge isnan isinf
    isfinite logical_and logical_or logical_not count_nonzero signbit isreal isneginf isposinf
    """
)
# torch.* functions whose result holds integers or booleans (samples and indices too): it cannot
# require grad, whatever its inputs (``torch.multinomial(probs, 1)`` of a softmax).
INTEGER_RESULT_FUNCTIONS = _words(
    """
    argmax argmin argsort nonzero multinomial searchsorted bucketize count_nonzero eq ne gt ge lt le
    isnan isinf isfinite isclose logical_and logical_or logical_not logical_xor
    """
)
# Elementwise predicates of one tensor, each a torch function and a tensor method: the result is
# a boolean mask of the input's shape, so ``x[torch.isnan(x)] = 0`` indexes ``x`` by a mask of
# itself, which only an array takes (a dict's ``d[max(d)]`` is by a key).
ELEMENTWISE_MASKS = _words("isnan isinf isfinite isneginf isposinf isreal signbit logical_not")
# Tensor methods that return a tensor computed from the receiver (history carried along).
COMPUTING_METHODS = _words(
    """
    clone add sub mul div matmul mm bmm pow exp log sqrt abs neg sum mean std var max min norm
    softmax log_softmax sigmoid tanh relu clamp clip masked_fill index_select index_add index_fill
    gather roll flip cumsum prod addcmul addcdiv lerp sign floor ceil round repeat expand_as
    where squeeze unsqueeze logsumexp square rsqrt reciprocal exp2 log1p expm1 sin cos argmax argmin
    """
)
# Fields of the named tuples tensor methods and functions return (``torch.return_types``:
# ``x.max(dim).values``, ``x.sort().indices``, ``torch.linalg.eigh(a).eigenvectors``): each a
# tensor. Those holding integers (positions, ranks) carry no history.
RETURN_TYPE_FIELDS = _words(
    """
    values indices eigenvalues eigenvectors U S V Vh Q R L LD LU P pivots info solution residuals
    rank singular_values mantissa exponent hist bin_edges logabsdet tau
    """
)
INTEGER_RETURN_FIELDS = _words("indices pivots info rank exponent")
# Reductions that return ``(values, indices)`` (``torch.return_types``): always, or only
# when given a dimension (``x.max()`` is a tensor, ``x.max(1)`` a pair, ``torch.max(a, b)``
# elementwise).
VALUES_INDICES_ALWAYS = _words("sort topk kthvalue mode cummax cummin")
VALUES_INDICES_WITH_DIM = _words("max min median nanmedian")
# Attributes of a tensor that are no tensors (or no values of it).
TENSOR_META_ATTRIBUTES = _words(
    """
    shape dtype device ndim is_cuda is_sparse layout requires_grad grad_fn is_leaf names itemsize
    nbytes
    """
)


def is_other_tensor_method(name: str) -> bool:
    """A method of a tensor that none of the tables names: most of ``torch.Tensor``'s
    methods return a tensor computed from the receiver (``bincount``, ``topk``, ``cumsum``,
    ``nan_to_num`` ...; a tuple of tensors unpacks to tensors); predicates (``is_*``,
    ``has_*``) and the methods of :data:`NON_TENSOR_METHODS` do not."""
    return (
        not name.startswith("_")
        and name[:1].islower()
        and not name.startswith(("is_", "has_"))
        and name not in NON_TENSOR_METHODS
        and name not in GRAD_CUTTING_METHODS
    )


def is_inplace_method(name: str) -> bool:
    """PyTorch's convention: a trailing underscore marks an in-place method."""
    return name.endswith("_") and not name.startswith("_") and name != "_"


def writes_values(method: str) -> bool:
    """Whether ``t.<method>(...)`` overwrites values of ``t`` in place (``add_``, ``copy_``,
    ``zero_`` ...; not ``requires_grad_`` or ``resize_``)."""
    return is_inplace_method(method) and method not in METADATA_INPLACE_METHODS


def returns_tensor(method: str) -> bool:
    """Whether ``t.<method>(...)`` on a tensor ``t`` returns a tensor."""
    return (
        method in VIEW_METHODS
        or method in MAYBE_ALIAS_METHODS
        or method in DETACHING_METHODS
        or method in COMPUTING_METHODS
        or method in NEW_TENSOR_METHODS
        or is_inplace_method(method)
    ) and method != "numpy"


# -- modules ---------------------------------------------------------------------------

PARAMETER_ATTRIBUTES = _words("weight bias")
PARAMETER_ITERATORS = _words("parameters")  # elements are parameters
NAMED_PARAMETER_ITERATORS = _words("named_parameters")  # elements are (name, parameter)
BUFFER_ITERATORS = _words("buffers")
NAMED_BUFFER_ITERATORS = _words("named_buffers")
SUBMODULE_ITERATORS = _words("children modules")
NAMED_SUBMODULE_ITERATORS = _words("named_children named_modules")
# Module methods that return the module itself.
MODULE_SELF_METHODS = _words("to cuda cpu train eval float double half bfloat16 requires_grad_ apply type share_memory")
STATE_DICT_METHODS = _words("state_dict")
LOAD_STATE_METHODS = _words("load_state_dict")
# Methods only modules have: a receiver they are called on is a module. The iterators are a
# module's alone (an optimizer has state_dict() and load_state_dict() too).
MODULE_ITERATORS = (
    PARAMETER_ITERATORS | NAMED_PARAMETER_ITERATORS | BUFFER_ITERATORS | NAMED_BUFFER_ITERATORS
    | SUBMODULE_ITERATORS | NAMED_SUBMODULE_ITERATORS
)
MODULE_ONLY_METHODS = MODULE_ITERATORS | STATE_DICT_METHODS | LOAD_STATE_METHODS
# Called on a name the file does not type, these show a module: the methods only modules have,
# and ``eval()`` without arguments (``m.eval()`` of ``for m in members``; pandas' ``df.eval(expr)``
# takes one).
MODULE_USE_METHODS = MODULE_ONLY_METHODS | _words("eval")
# Hook registration methods and the roles of the hook's parameters, in order.
MODULE_HOOKS: dict[str, tuple[str, ...]] = {
    "register_forward_hook": ("module", "inputs", "output"),
    "register_forward_pre_hook": ("module", "inputs"),
    "register_full_backward_hook": ("module", "grad_inputs", "grad_outputs"),
    "register_backward_hook": ("module", "grad_inputs", "grad_outputs"),
    "register_full_backward_pre_hook": ("module", "grad_outputs"),
    "apply": ("module",),
}
TENSOR_HOOKS: dict[str, tuple[str, ...]] = {
    "register_hook": ("grad",),
    "register_post_accumulate_grad_hook": ("parameter",),
}

# -- optimizers ------------------------------------------------------------------------

OPTIMIZER_PARAM_GROUPS = "param_groups"  # a list of dicts whose "params" entry lists parameters
OPTIMIZER_STEP_METHODS = _words("step")


# -- frameworks built on torch --------------------------------------------------------
# Methods a framework calls with grad disabled, by the name of the base class they override:
# Lightning runs its evaluation and prediction loops under ``torch.no_grad()`` or
# ``torch.inference_mode()`` (``loops/utilities.py: _no_grad_context``), transformers'
# ``Pipeline.forward`` runs ``_forward`` inside ``self.get_inference_context()``.
NO_GRAD_OVERRIDES: dict[str, frozenset[str]] = {
    "LightningModule": _words(
        "validation_step test_step predict_step on_validation_batch_end on_test_batch_end on_predict_batch_end "
        "on_validation_epoch_end on_test_epoch_end"
    ),
    "Pipeline": _words("_forward"),
}

# Lightning 1.x hands ``*_epoch_end(self, outputs)`` the list of what each ``*_step`` of
# the epoch returned (by base class name, then method name: the step whose returns it gets).
EPOCH_END_OUTPUTS: dict[str, dict[str, str]] = {
    "LightningModule": {
        "training_epoch_end": "training_step",
        "validation_epoch_end": "validation_step",
        "test_epoch_end": "test_step",
    },
}
EPOCH_END_METHODS = frozenset(method for methods in EPOCH_END_OUTPUTS.values() for method in methods)

# -- what the structural pre-screen looks for (torchcopy_lint/screen.py) ---------------


def short_names(qualnames: Iterable[str]) -> frozenset[str]:
    """The last component of each qualified name: what a call site spells, whatever the import."""
    return frozenset(qualname.rsplit(".", 1)[-1] for qualname in qualnames)


REQUIRES_GRAD_TRUE = "requires_grad=True"  # how the screen spells a ``requires_grad=True`` keyword or attribute set
# Names of which one occurs wherever the semantic model can show a leaf that requires grad.
LEAF_EVIDENCE_NAMES = (
    PARAMETER_ATTRIBUTES
    | PARAMETER_ITERATORS
    | NAMED_PARAMETER_ITERATORS
    | short_names(PARAMETER_CLASSES)
    | {OPTIMIZER_PARAM_GROUPS, "requires_grad_", *(hook for hook, roles in TENSOR_HOOKS.items() if "parameter" in roles)}
    | {REQUIRES_GRAD_TRUE}
)
# Callables whose result aliases its input only sometimes (methods and functions).
MAYBE_ALIAS_FUNCTION_NAMES = short_names(MAYBE_ALIAS_FUNCTIONS | ALIASING_CONSTRUCTORS)
MAYBE_ALIAS_NAMES = MAYBE_ALIAS_METHODS | MAYBE_ALIAS_FUNCTION_NAMES
LEGACY_CONSTRUCTOR_NAMES = short_names(LEGACY_CONSTRUCTORS)
