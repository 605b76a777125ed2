"""``torchcopy_lint.sanitize``: the runtime sanitizer's front door, importable without torch.

- ``with torchcopy_lint.sanitize(mode="warn"): ...`` (or as a decorator) starts a session
  (``torchcopy_lint.sanitizer.session``; torch is imported then, not before);
- ``python -m torchcopy_lint.sanitize [--mode M] [--format json] script.py args...`` runs a
  script under it (``torchcopy_lint.sanitizer.runner``).

This module is callable (its class is swapped for one with ``__call__``): ``-m`` needs a
module named ``torchcopy_lint.sanitize``, and importing it sets the package attribute of the
same name, which must stay the function users call.
"""

from __future__ import annotations

import sys
import types
from typing import Any


def sanitize(mode: str = "warn") -> Any:
    """A sanitizer session: ``with sanitize(): ...`` gives its report; ``@sanitize()`` decorates.

    ``mode``: ``"warn"`` (default), ``"raise"`` or ``"collect"``. See docs/sanitizer.md.
    """
    from torchcopy_lint.sanitizer.session import Sanitizer

    return Sanitizer(mode)


class _CallableModule(types.ModuleType):
    def __call__(self, mode: str = "warn") -> Any:
        return sanitize(mode)


def main(argv: list[str] | None = None) -> int:
    from torchcopy_lint.sanitizer.runner import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
else:
    sys.modules[__name__].__class__ = _CallableModule
