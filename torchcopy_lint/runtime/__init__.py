"""``torchcopy-lint verify``: every rule's claim, run with real torch.

This package imports torch only inside functions (``environment.probe``) and in
the child processes that run the claims (``harness``), so ``import torchcopy_lint``
and the linter never need torch. (The runtime sanitizer, ``torchcopy_lint.sanitizer``,
imports torch when it is used.)

- ``claims``       the claim pairs of the catalogue, their static view (the rule fires at the markers),
                   and the rule's autofix applied to the flagged claim
- ``harness``      the child process: runs one claim program (scenario, then check) on one device,
                   prints one JSON line (the sanitizer's claims run through its ``run`` too)
- ``runner``       one subprocess per program and device (timeout, isolation), verdicts
- ``environment``  torch version, CUDA/driver, device names; which devices are available
- ``report``       text, json and markdown output
- ``cli``          the ``verify`` command line
"""

INSTALL_HINT = "pip install 'torchcopy-lint[runtime]'"
