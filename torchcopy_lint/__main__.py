"""`python -m torchcopy_lint` is the same as the `torchcopy-lint` command."""

import sys

from torchcopy_lint.cli import main

sys.exit(main())
