"""The runtime sanitizer: the catalogue's hazards, caught where they happen in a running program.

``with torchcopy_lint.sanitize(): train()`` (or ``@torchcopy_lint.sanitize()``), the pytest
plugin (``pytest --torchcopy-sanitize``) and ``python -m torchcopy_lint.sanitize script.py``.
This package imports torch; nothing on the linter's import path imports it
(``torchcopy_lint.sanitize`` loads it on first use). One job per module:

- ``session``        the context manager / decorator: installs and removes everything below
- ``function_mode``  a ``TorchFunctionMode``: calls as the user wrote them (``calls`` does the work)
- ``calls``          aliases, snapshots, clones, maybe-alias results, ``torch.tensor(t)``, backward, totals
- ``dispatch_mode``  a ``TorchDispatchMode``: writes to storage, from the operators' schemas
- ``saved``          ``saved_tensors_hooks``: what backward will read; autograd's version check redone
- ``legacy``         the legacy type constructors, which no mode sees
- ``state``          the session's weak tables and its hazard sink (warn / raise / collect)
- ``locations``      the user's frame (first outside torch and torchcopy-lint) and torch's worker
- ``messages``       each rule's catalogue summary; the rules that cannot be observed and why
- ``report``         ``Hazard`` and ``Report`` (no torch)
- ``runner``         ``python -m torchcopy_lint.sanitize script.py args...``
- ``pytest_plugin``  ``--torchcopy-sanitize`` (registered under the ``pytest11`` entry point)
- ``claims``         each claim and fixed program (scenario, then the shared check) run under the
                     sanitizer through ``runtime.harness.run`` (tests, ``verify``'s sanitizer column)
"""

from torchcopy_lint.sanitizer.report import Hazard, Report, TorchCopyHazard, TorchCopyHazardWarning

__all__ = ["Hazard", "Report", "TorchCopyHazard", "TorchCopyHazardWarning"]
