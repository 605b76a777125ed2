"""Stopping a run on SIGTERM like Ctrl-C (kept apart so the CLI can install it without importing the checker)."""

from __future__ import annotations


class Stopped(BaseException):
    """The run was told to stop (SIGTERM): unwinds like KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def raise_stopped(signum: int, frame: object) -> None:
    """A signal handler for the main process: SIGTERM ends the run as Ctrl-C does."""
    raise Stopped(signum)
