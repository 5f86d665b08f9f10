"""What the TUI leaves on the terminal when it stops on an unexpected error: one FAIL line, never her values."""

from __future__ import annotations

import traceback

from rich.text import Text
from textual.worker import WorkerFailed

__all__ = ["INTERNAL_ERROR_EXIT", "failure_lines"]

INTERNAL_ERROR_EXIT = 4
"""The exit code when the app stops on an unexpected error (documented in ``verifier tui --help``)."""


def failure_lines(error: BaseException, *, verbose: bool) -> list[Text]:
    """The FAIL line naming the error's type; with ``verbose`` the traceback, without its frames' locals.

    Textual's own handler renders ``rich.traceback.Traceback(show_locals=True)``,
    which would print her values from the computation's frames.
    """
    cause = error.error if isinstance(error, WorkerFailed) else error
    lines = [Text(f"FAIL: -: INTERNAL_ERROR: the TUI stopped on an unexpected {type(cause).__name__}; nothing of "
                  "your record was shown or written. `verifier check` gives the same report on the command line.")]
    if verbose:  # for a bug report: where it happened, never the frames' local variables
        lines.append(Text("".join(traceback.format_exception(cause))))
    return lines
