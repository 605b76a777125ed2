"""What names say: heuristics on identifiers, kept in one place.

Where the file does not show what a value is, its name often does: ``best_state`` is
kept for later, ``criterion(...)`` computes a loss, ``self.encoder`` is a module,
``d_optimizer`` an optimizer. Every such guess used by an analysis or a checker lives
here, so that its words are listed once and tested once.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

# Words that say "a value kept for later": as the whole name or a part of it
# (``best_state``, ``prevWeights``, ``init_params``, ``history``).
SNAPSHOT_WORDS = frozenset(
    """
    prev previous old best saved snapshot snapshots snap init initial orig original copy backup history
    hist last before stored checkpoint ckpt start starting restore frozen ema slow anchor shadow star prior
    """.split()
)
# Callables whose result is a loss: ``criterion(out, y)``, ``loss_fn(...)``.
LOSS_CALLEES = frozenset({"criterion", "loss_fn", "loss_func", "loss_function", "compute_loss", "lossfn", "loss_fcn", "criterion_fn"})
# Names of things that are modules (calling one runs a forward pass).
MODULE_WORDS = frozenset(
    """
    model net module network encoder decoder backbone generator discriminator policy critic actor
    classifier head layer layers mlp qnet q_net target_net policy_net value_net student teacher
    """.split()
)
# Words that make a name describe something else (``model_name``, ``optimizer_cfg``).
_NOT_AN_OBJECT_WORDS = frozenset(
    """
    name names type types cls class config cfg args kwargs state dict path dir file fn func factory
    kind id ids str params param options option sched scheduler scaler lr
    """.split()
)
# Names that start with a verb name an action, not a module (``build_model``, ``train_net``).
_VERBS = frozenset(
    """
    get build make create load save train init initialize update run eval evaluate compute set reset
    apply copy clone freeze unfreeze prepare wrap unwrap export print log plot test fit predict
    serialize deserialize convert compile quantize dequantize trace script register replace swap fuse
    prune sync broadcast gather scatter reduce check validate summarize describe count find select
    to from is has as parse dump restore store
    """.split()
)
# Leading words that make a name a quantity (``max_position_embeddings``, ``num_layers``, ``n_heads``).
_QUANTITY_WORDS = frozenset({"max", "min", "num", "n", "number", "count", "total", "size", "dim", "len", "length"})
# English words that end in "net" but name no network.
_NOT_NETWORKS = frozenset({"planet", "cabinet", "magnet", "internet", "bonnet", "sonnet", "hornet", "garnet", "subnet"})
_OPTIMIZER_WORDS = frozenset({"optim", "optims", "optimizer", "optimizers", "opt", "optimiser"})  # not "opts": options
# ``train(...)``, ``train_one_epoch(...)``, ``trainer.fit(...)``, ``run_training(...)``.
_TRAINING_CALL = re.compile(
    r"(?:do_|run_)?(?:train|fit|finetune|fine_tune|learn)"
    r"(?:_(?:one_)?(?:epoch|epochs|step|steps|batch|batches|loop|model|models|iter|iteration|on_batch|for_epoch|one_cycle|network|networks|policy|agent|params|parameters))?"
    r"|run_training|training_loop|training_step|train_step|run_epoch|optimize_model|update_model|update_policy|update_parameters"
)
# Receivers whose ``.train()`` is the mode switch ``nn.Module.train(mode)``, not training.
_MODE_SWITCH_RECEIVER = re.compile(r"self|.*(?:model|net|module|layer|encoder|decoder|backbone|policy|actor|critic)s?", re.I)


# Every predicate here is a pure function of a name, asked again and again for the same few
# thousand names of a run (each file asks about its own names many times).
_remembered = lru_cache(maxsize=1 << 14)


def words(name: str) -> list[str]:
    """``prevWeights`` -> ``["prev", "Weights"]``; ``best_state`` -> ``["best", "state"]``."""
    return _WORD.findall(name)


# Short forms of a class's last word in variable names: ``train_ds`` of a ``...Dataset``.
_ABBREVIATIONS = {"ds": "dataset", "dset": "dataset", "mem": "memory", "buf": "buffer", "rb": "buffer"}


@_remembered
def class_word(name: str) -> str | None:
    """The word of a variable's name that may name its class's last word: ``buffer`` for
    ``replay_buffer`` and ``rb``, ``dataset`` for ``train_ds``."""
    parts = words(name)
    if not parts:
        return None
    last = parts[-1].lower()
    return _ABBREVIATIONS.get(last, last)


# Method names of Python's own containers, strings and objects: a call of one says nothing
# about which class of the file a receiver is (``cache.update(d)`` may be a dict's).
_BUILTIN_METHOD_NAMES = frozenset(name for kind in (dict, list, set, str, bytes, tuple, object, int, float) for name in dir(kind))


@lru_cache(maxsize=4096)
def is_distinctive_method(name: str) -> bool:
    """``snapshot_student``, ``train_step``, ``_sync_target``: a method name of two or more
    words, not one of Python's own types' methods nor a dunder. Defined by one class of the
    file only, its call on a receiver the file does not type names that class (duck typing),
    where a one-word name (``update``, ``step``, ``reset``) is too common to tell."""
    if name.startswith("__") or name in _BUILTIN_METHOD_NAMES:
        return False
    return len(_lower_words(name)) >= 2


@_remembered
def is_snapshot_name(name: str) -> bool:
    """``prev_w``, ``bestState``, ``w_init``, ``snapshot``: a name that says "kept for later"."""
    return any(part.lower() in SNAPSHOT_WORDS for part in words(name))


# A helper named for what it makes: a copy kept for later (``snapshot_params(model)``,
# ``backup_weights(net)``, ``copy_params(m)``): its first word, or ``snapshot``/``backup`` anywhere.
_SNAPSHOT_MAKER_VERBS = frozenset({"snapshot", "backup", "copy", "clone", "save", "stash", "store", "freeze"})
_SNAPSHOT_NOUNS = frozenset({"snapshot", "snapshots", "backup", "backups"})


@_remembered
def is_snapshot_maker_name(name: str) -> bool:
    """``snapshot_params``, ``take_snapshot``, ``copy_weights``: a function whose name says its
    result is a copy kept for later (not ``init_weights`` or ``get_last_hidden``, which
    :func:`is_snapshot_name` accepts for a variable)."""
    parts = _lower_words(name)
    return bool(parts) and (parts[0] in _SNAPSHOT_MAKER_VERBS or not _SNAPSHOT_NOUNS.isdisjoint(parts))


# Words for a second copy of a model kept beside it (a DQN target network, an EMA teacher),
# not for a reference a wrapper keeps on purpose (``self._orig_mod = mod``, ``wrapped_module``).
_MODEL_COPY_WORDS = frozenset(
    """
    best prev previous old last init initial snapshot backup saved frozen target teacher ema
    momentum avg averaged swa slow anchor fixed
    """.split()
)


# Words for the same model under another name on purpose: ``model_without_ddp``, the unwrapped
# module of a DistributedDataParallel or compiled wrapper (``teacher_without_ddp = teacher``).
_SAME_MODEL_WORDS = frozenset({"without", "unwrapped", "ddp", "dp", "orig", "wrapped", "raw", "inner", "base"})


@_remembered
def is_model_copy_name(name: str) -> bool:
    """``target_net``, ``teacher``, ``ema_model``, ``best_model``: a name for a copy of a model
    (not ``teacher_without_ddp``, the same model unwrapped)."""
    parts = [part.lower() for part in words(name)]
    return any(part in _MODEL_COPY_WORDS for part in parts) and _SAME_MODEL_WORDS.isdisjoint(parts)


# Methods of a model that return tensors (``model.encode(x)``, ``vae.decode(z)``).
_TENSOR_METHODS = frozenset({"encode", "decode", "embed", "features", "extract_features", "forward_features", "project", "classify", "reconstruct", "get_features", "get_embedding", "logits"})


# The verbs of such methods with an object (``encode_image``, ``decode_latents``, ``embed_tokens``),
# and the nouns of getters (CLIP's ``get_image_features``).
_TENSOR_METHOD_VERBS = frozenset({"encode", "decode", "embed"})
_TENSOR_GETTER_NOUNS = frozenset({"features", "logits"})  # not ``get_input_embeddings``: a module


@_remembered
def is_model_method(name: str) -> bool:
    """``encode``, ``decode``, ``forward_features``, ``encode_image``, ``get_text_features``:
    a model method that returns a tensor (not ``encode_plus``, a tokenizer's dict)."""
    if name in _TENSOR_METHODS:
        return True
    words = _lower_words(name)
    if len(words) < 2 or words[-1] == "plus":
        return False
    return words[0] in _TENSOR_METHOD_VERBS or (words[0] == "get" and words[-1] in _TENSOR_GETTER_NOUNS)


@_remembered
def is_loader_name(name: str) -> bool:
    """``loader``, ``train_loader``, ``val_dataloader``: a DataLoader (batches of tensors)."""
    parts = _lower_words(name)
    return bool(parts) and parts[-1] in ("loader", "dataloader") and not any(part in _NOT_AN_OBJECT_WORDS for part in parts)


@_remembered
def is_loss_name(name: str) -> bool:
    """``loss``, ``d_loss``, ``loss_g``: a variable that holds a loss."""
    lower = name.lower()
    return lower == "loss" or lower.endswith("_loss") or lower.startswith("loss_") or lower in ("errd", "errg", "err_d", "err_g")


@_remembered
def is_loss_callee(name: str) -> bool:
    """``criterion``, ``loss_fn``, ``self.criterion``: calling it computes a loss."""
    lower = name.lower()
    return lower in LOSS_CALLEES or lower.startswith("criterion") or lower.endswith("_criterion") or lower.endswith("_loss_fn")


def _lower_words(name: str) -> list[str]:
    return [part.lower() for part in words(name)]


@_remembered
def is_module_name(name: str) -> bool:
    """``model``, ``encoder``, ``netG``, ``policy_net``, ``resnet``, ``teacher``: a name for an
    nn.Module (not ``model_name``, ``model_cfg``, ``model_dim`` or the count
    ``max_decoder_position_embeddings``)."""
    parts = _lower_words(name)
    if not parts or parts[0] in _VERBS or any(part in _QUANTITY_WORDS or part in _NOT_AN_OBJECT_WORDS for part in parts):
        return False
    return name.lower() in MODULE_WORDS or any(part in MODULE_WORDS or (part.endswith("net") and len(part) <= 9 and part not in _NOT_NETWORKS) for part in parts)


# Plurals of module words: a collection of modules (``models``, ``critics``, ``teachers``);
# not ``layers`` or ``heads`` (a ModuleList is a module; ``heads`` is often a count).
_MODULES_WORDS = frozenset(
    """
    models nets networks encoders decoders generators discriminators critics actors policies
    classifiers students teachers
    """.split()
)


@_remembered
def is_modules_name(name: str) -> bool:
    """``models``, ``teacher_models``, ``critics``: a name for a collection of nn.Modules (not
    ``models_dir`` or ``num_models``)."""
    parts = _lower_words(name)
    if not parts or parts[0] in _VERBS or any(part in _QUANTITY_WORDS or part in _NOT_AN_OBJECT_WORDS for part in parts):
        return False
    return parts[-1] in _MODULES_WORDS


@_remembered
def is_optimizer_name(name: str) -> bool:
    """``optimizer``, ``opt``, ``d_optim``, ``optimizerG``: an optimizer (not a scheduler,
    not ``optimizer_cfg``)."""
    parts = _lower_words(name)
    if not parts or any(part in _NOT_AN_OBJECT_WORDS or part.startswith("sched") for part in parts):
        return False
    return any(part in _OPTIMIZER_WORDS for part in parts)


_EVALUATION_WORDS = frozenset({"eval", "evaluate", "evaluation", "validate", "validation", "val", "valid", "test", "predict", "prediction", "infer", "inference", "score"})


@_remembered
def is_evaluation_name(name: str) -> bool:
    """``evaluate``, ``validate_epoch``, ``test_model``, ``run_inference``: a function that
    evaluates a model (and should run under ``torch.no_grad()``)."""
    return any(part in _EVALUATION_WORDS for part in _lower_words(name))


_STEP_FUNCTION = re.compile(r"(?:_*)(?:train|training|fit|learn|optimi[sz]e|update)(?:_.*)?|.*_(?:train_step|training_step|update|learn|optimize|step)")


@_remembered
def is_training_step_name(name: str) -> bool:
    """``training_step``, ``train_batch``, ``optimize``, ``update_policy``, ``learn``: a
    function that runs once per training step (not ``validation_step``)."""
    return bool(_STEP_FUNCTION.fullmatch(name)) and not is_evaluation_name(name)


@_remembered
def is_training_call(name: str, receiver: str | None = None) -> bool:
    """Whether calling ``name`` (a function, or a method of ``receiver``) runs training:
    ``train_one_epoch(...)``, ``agent.learn()``, ``trainer.fit(...)``; not ``model.train()``."""
    if not _TRAINING_CALL.fullmatch(name):
        return False
    if receiver is not None and name == "train" and _MODE_SWITCH_RECEIVER.fullmatch(receiver):
        return False
    return True
