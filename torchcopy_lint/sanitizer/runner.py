"""``python -m torchcopy_lint.sanitize [options] script.py args...``: a script under the sanitizer.

The script runs as ``__main__`` with ``sys.argv`` set to ``[script.py, args...]``, inside one
session; the report is written when it ends (to stderr, or ``-o FILE``), in text or JSON.
The exit status is the script's own.

``TORCHCOPY_SANITIZE`` is honoured: ``0``/``off``/``false`` runs the script without the
sanitizer, ``1``/``on``/``true`` with it, ``warn``/``raise``/``collect`` also picks the mode
(``--mode`` wins over it).
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from collections.abc import Sequence

from torchcopy_lint.sanitizer.report import Report

ENVIRONMENT = "TORCHCOPY_SANITIZE"
MODES = ("warn", "raise", "collect")
_OFF = ("0", "off", "false", "no")
_ON = ("1", "on", "true", "yes", "")


def environment_mode(value: str | None) -> str | None:
    """The mode ``TORCHCOPY_SANITIZE`` asks for: None for off, ``"warn"`` for a plain yes."""
    if value is None:
        return "warn"
    value = value.strip().lower()
    if value in _OFF:
        return None
    if value in _ON:
        return "warn"
    if value in MODES:
        return value
    raise ValueError(f"{ENVIRONMENT}={value!r}: use 0, 1, {', '.join(MODES)}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m torchcopy_lint.sanitize",
        description="Run a Python script under torchcopy-lint's runtime sanitizer and report the hazards it hit.",
        epilog=f"{ENVIRONMENT}=0 runs the script without the sanitizer; {ENVIRONMENT}=raise picks the mode.",
    )
    parser.add_argument("--mode", choices=MODES, default=None, help="warn (default): a warning per hazard; raise: stop at the first; collect: only the report")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="the report written at exit (default: text)")
    parser.add_argument("-o", "--output", metavar="FILE", default=None, help="write the report to FILE (default: stderr)")
    parser.add_argument("-m", dest="module", metavar="MODULE", default=None, help="run a module (like python -m) instead of a script")
    parser.add_argument("script", nargs="?", help="the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return parser


def _write(report: Report, form: str, output: str | None) -> None:
    text = report.to_json() if form == "json" else report.render_text()
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stderr.write(text)
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.module is None and args.script is None:
        parser.error("a script (or -m MODULE) is required")
    if args.module is not None and args.script is not None:
        args.args = [args.script, *args.args]
    try:
        mode = environment_mode(os.environ.get(ENVIRONMENT))
    except ValueError as error:
        parser.error(str(error))
    if args.mode is not None:
        mode = args.mode

    target = args.module or args.script
    sys.argv = [target, *args.args]
    if args.module is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))

    def run() -> None:
        if args.module is not None:
            runpy.run_module(args.module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(args.script, run_name="__main__")

    if mode is None:
        return _status(run)
    from torchcopy_lint.sanitizer.session import Sanitizer

    sanitizer = Sanitizer(mode)
    try:
        with sanitizer:
            status = _status(run)
    finally:
        _write(sanitizer.report, args.format, args.output)
    return status


def _status(run: object) -> int:
    """The script's exit status: 0, its ``sys.exit`` code, or 1 for an uncaught exception
    (whose traceback is printed as Python would)."""
    try:
        run()  # type: ignore[operator]
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0
