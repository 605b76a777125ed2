"""Where a hazard happens: the user's frame, and the torch frame that did the work.

A hazard is reported at the first stack frame outside torch and torchcopy-lint (the
user's line); an observation may also name the innermost torch function involved
(``torch/optim/sgd.py _single_tensor_sgd()``), which says *what* wrote, not where the
user should look.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import FrameType

import torch

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_TORCH_ROOT = os.path.dirname(_TORCH_DIR.rstrip(os.sep)) + os.sep
# torch's own mode machinery: never "the function that wrote".
_MACHINERY = tuple(
    _TORCH_DIR + name.replace("/", os.sep)
    for name in ("overrides.py", "utils/_python_dispatch.py", "_tensor.py", "autograd/graph.py", "_dynamo/", "_compile.py", "utils/_contextlib.py")
)


@dataclass(frozen=True)
class Location:
    """A source line: the file as Python knows it, 1-based line, function name."""

    file: str
    line: int
    function: str = ""

    @property
    def short(self) -> str:
        """The file relative to the working directory when it is below it."""
        path = self.file
        if os.path.isabs(path):
            try:
                relative = os.path.relpath(path)
            except ValueError:  # another drive (Windows)
                return f"{path}:{self.line}"
            if not relative.startswith(".."):
                path = relative
        return f"{path}:{self.line}"

    def __str__(self) -> str:
        return self.short

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "function": self.function}


UNKNOWN = Location("<unknown>", 0, "")


def is_library(filename: str) -> bool:
    """A file of torch or of torchcopy-lint (the sanitizer itself)."""
    path = filename if os.path.isabs(filename) else os.path.abspath(filename)
    return path.startswith(_TORCH_DIR) or path.startswith(_OWN_DIR)


_library_cache: dict[str, bool] = {}


def _is_library_cached(filename: str) -> bool:
    known = _library_cache.get(filename)
    if known is None:
        known = _library_cache[filename] = is_library(filename)
    return known


# A user's own TorchFunctionMode/TorchDispatchMode handler is mode machinery too: the
# hazard is at the line that called torch, not inside the handler that passed it on.
_HANDLERS = frozenset({"__torch_function__", "__torch_dispatch__"})


def user_frame(depth: int = 1) -> FrameType | None:
    """The first frame outside torch and torchcopy-lint (and outside any mode's handler),
    from the caller's caller up."""
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None and (_is_library_cached(frame.f_code.co_filename) or frame.f_code.co_name in _HANDLERS):
        frame = frame.f_back
    return frame


def location_of(frame: FrameType | None) -> Location:
    if frame is None:
        return UNKNOWN
    return Location(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def user_location(depth: int = 1) -> Location:
    return location_of(user_frame(depth + 1))


def caller_is_user(depth: int = 1) -> bool:
    """Whether the nearest frame outside torchcopy-lint is user code (not torch's own)."""
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
        frame = frame.f_back
    return frame is not None and not _is_library_cached(frame.f_code.co_filename)


def torch_worker(depth: int = 1) -> str | None:
    """The innermost torch function on the stack (``torch/optim/sgd.py _single_tensor_sgd()``),
    or None when the user's code did the work itself."""
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_OWN_DIR):
            if filename.startswith(_TORCH_DIR) and not filename.startswith(_MACHINERY):
                return f"{os.path.relpath(filename, _TORCH_ROOT)} {frame.f_code.co_name}()"
            if not filename.startswith(_TORCH_DIR):
                return None
        frame = frame.f_back
    return None


def frame_local(name: str, function: str, depth: int = 1) -> object:
    """A local variable of the nearest torch frame running ``function`` (``None`` if absent):
    how a ``state_dict()`` snapshot learns its key."""
    frame: FrameType | None = sys._getframe(depth)
    while frame is not None:
        if frame.f_code.co_name == function and frame.f_code.co_filename.startswith(_TORCH_DIR):
            return frame.f_locals.get(name)
        frame = frame.f_back
    return None
