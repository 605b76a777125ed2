"""``torchcopy-lint server``: a Language Server (LSP) for editors, over stdio.

Needs the ``server`` extra (pygls): ``pip install 'torchcopy-lint[server]'``.
The LSP wiring is in app.py; what a document's findings and fixes are is in
linting.py, on the engine's per-file run (FileRun) like the command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

INSTALL_HINT = "pip install 'torchcopy-lint[server]'"


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(prog="torchcopy-lint server", description="Run the torchcopy-lint Language Server over stdin/stdout (for editors).")
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")
    parser.parse_args(list(argv))
    try:
        from torchcopy_lint.server.app import build_server
    except ImportError as error:
        missing = (error.name or "pygls").split(".")[0]
        print(f"torchcopy-lint server: needs pygls ({missing} is missing): {INSTALL_HINT}", file=sys.stderr)
        return 2
    build_server().start_io()
    return 0
