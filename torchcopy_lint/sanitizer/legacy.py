"""The legacy type constructors (``torch.Tensor(3)``, ``torch.FloatTensor(data)``), which no
torch mode sees: they are classes whose construction runs in C without a torch function.

While a session is active, ``torch.Tensor.__new__`` is wrapped (``torch.Tensor`` is a Python
class; subclasses with a ``__new__`` of their own, like ``nn.Parameter``, are untouched), and
the typed classes ``torch.FloatTensor`` ... (immutable C types) are replaced in the ``torch``
namespace by stand-ins that record the call and build the real thing. A stand-in answers
``isinstance`` and attribute reads as the real class does, and is swapped back for the real
class where torch needs it (``x.type(torch.FloatTensor)``, ``torch.set_default_tensor_type``).
Code that took ``from torch import FloatTensor`` before the session keeps the real class, and
its calls are not seen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torchcopy_lint.analysis.torch_api import LEGACY_DTYPES
from torchcopy_lint.sanitizer.locations import caller_is_user, user_location
from torchcopy_lint.sanitizer.state import Tracker, describe, storage_key

_listeners: list[Tracker] = []
_undo: list[Callable[[], None]] = []


class _StandIn(type):
    """The metaclass of a stand-in for one legacy typed class."""

    _real: Any

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        result = cls._real(*args, **kwargs)
        _seen(f"torch.{cls._real.__name__}", args, result)
        return result

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls._real)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return issubclass(subclass, cls._real)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real, name)

    def __repr__(cls) -> str:
        return repr(cls._real)


def real(value: Any) -> Any:
    """The real class behind a stand-in (anything else unchanged)."""
    return value._real if isinstance(value, _StandIn) else value


def _seen(callee: str, args: tuple[Any, ...], result: Any) -> None:
    if not _listeners or not args or not caller_is_user(2):
        return
    tracker = _listeners[-1]
    if tracker.busy:
        return
    location = user_location(2)
    tracker.busy = True
    try:
        message = _classify(callee, args, result)
    finally:
        tracker.busy = False
    if message is not None:
        tracker.emit(*message[:1], location, message[1])  # type: ignore[arg-type]


def _classify(callee: str, args: tuple[Any, ...], result: Any) -> tuple[str, str] | None:
    made = describe(result) if isinstance(result, torch.Tensor) else type(result).__name__
    default = torch.get_default_device()
    moved = ""
    if isinstance(result, torch.Tensor) and result.device != default:
        moved = f"; it ignored the default device {default} and allocated on {result.device}"
    if len(args) == 1 and isinstance(args[0], torch.Tensor):
        source = args[0]
        shares = bool(storage_key(source)) and storage_key(source) == storage_key(result)
        effect = "shares its memory (a write to one changes the other)" if shares else "copies it without its history"
        return "TCL002", f"{callee}() got a {describe(source)}: the result {effect}"
    if all(isinstance(arg, int) and not isinstance(arg, bool) for arg in args) or (len(args) == 1 and isinstance(args[0], torch.Size)):
        sizes = ", ".join(repr(arg) for arg in args)
        return "TCL006", f"{callee}({sizes}) allocated an uninitialized {made} (sizes, not values){moved}"
    return "TCL006", f"{callee}() converted its data to {made} whatever the data's own type{_truncation(args, result)}{moved}"


def _truncation(args: tuple[Any, ...], result: Any) -> str:
    data = args[0] if len(args) == 1 else None
    if not isinstance(data, (list, tuple)) or not isinstance(result, torch.Tensor) or result.is_floating_point() or result.device.type == "meta":
        return ""
    floats = [value for value in data if isinstance(value, float)]
    if floats and floats != [float(int(value)) for value in floats]:
        return f": {list(data)[:4]} became {result.tolist()[:4]}"
    return ""


def _tensor_new(cls: Any, *args: Any, **kwargs: Any) -> Any:
    result = torch._C.TensorBase.__new__(cls, *args, **kwargs)
    if cls is torch.Tensor:
        _seen("torch.Tensor", args, result)
    return result


def _install() -> Callable[[], None]:
    """Wrap the constructors; return what undoes it."""
    restores: list[Callable[[], None]] = []
    # torch's modes import torch._dynamo on first use, which checks torch.Tensor.__new__'s
    # signature against its own substitute: let it see the real one.
    import torch._dynamo  # noqa: F401

    if "__new__" not in torch.Tensor.__dict__:
        torch.Tensor.__new__ = staticmethod(_tensor_new)  # type: ignore[assignment]
        restores.append(lambda: delattr(torch.Tensor, "__new__"))
    for namespace in (torch, getattr(torch, "cuda", None)):
        if namespace is None:
            continue
        for kind in LEGACY_DTYPES:
            name = f"{kind}Tensor"
            original = namespace.__dict__.get(name)
            if original is None or isinstance(original, _StandIn):
                continue
            stand_in = _StandIn(name, (), {"_real": original, "__module__": getattr(original, "__module__", "torch")})
            setattr(namespace, name, stand_in)
            restores.append(lambda namespace=namespace, name=name, original=original: setattr(namespace, name, original))
    setter = torch.set_default_tensor_type
    torch.set_default_tensor_type = lambda t: setter(real(t))  # type: ignore[assignment]
    restores.append(lambda: setattr(torch, "set_default_tensor_type", setter))

    def undo() -> None:
        for restore in reversed(restores):
            restore()

    return undo


def listen(tracker: Tracker) -> Callable[[], None]:
    """Start reporting legacy constructor calls to ``tracker``; return what stops it."""
    if not _listeners:
        _undo.append(_install())
    _listeners.append(tracker)

    def stop() -> None:
        _listeners.remove(tracker)
        if not _listeners and _undo:
            _undo.pop()()

    return stop
