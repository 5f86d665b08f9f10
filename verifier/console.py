"""The console entry points' frame: signals are handled from the first instant, and after the last.

Loading a command's libraries (numpy, numba, pyarrow) takes about a second.
A Ctrl-C or SIGTERM in that second ends the command with the same one line
as later (``FAIL: -: INTERRUPTED``, exit 130) instead of an import traceback
or a silent kill; during the command, :func:`verifier.frontend.run_parsed`
handles them; once the command is done, its result is printed and its exit
code fixed, so a late signal while the interpreter shuts down is ignored.
This module imports nothing heavy.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable

__all__ = ["guard_if_console", "guard_start", "run_console", "end_if_console"]

INTERRUPTED = 130
_console = False  # this process is a console command that run_console runs


def _before_start(signum, frame) -> None:
    """End at once: nothing has been written yet, and an exception raised here can be lost.

    A ``SystemExit`` raised in a signal handler is dropped wherever Python
    reports and swallows exceptions (a finalizer, a callback) that the signal
    happens to interrupt while the command loads: the command then went on
    and exited 0 after this FAIL line. Exiting the process from the handler
    cannot be dropped.
    """
    sys.stderr.write("FAIL: -: INTERRUPTED: stopped by Ctrl-C or SIGTERM before it started; nothing was written\n")
    sys.stderr.flush()
    os._exit(INTERRUPTED)


def guard_start() -> None:
    """From now until the command's own handlers take over, a Ctrl-C or SIGTERM ends with the one FAIL line.

    Called by the packages' ``__init__`` when the process is a console command, the first thing they do: the
    window in which Python's default handler prints a ``KeyboardInterrupt`` traceback is then the interpreter's
    own start alone."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _before_start)


def guard_if_console(argv: list[str]) -> None:
    """:func:`guard_start` when this process is the ``verifier`` or ``publisher`` console command, not a notebook
    or a test importing the package."""
    if argv and os.path.basename(argv[0]) in ("verifier", "publisher"):
        guard_start()


def _exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def end_if_console(code: int) -> None:
    """In a console command, end the process now with ``code``, its output flushed; elsewhere (a test or a
    notebook calling ``main``) return.

    An interrupted command has cleaned up by the time it says so, but the interrupted work's frames are still
    held by the exception: freeing them after a Ctrl-C that landed inside numba's compiler once aborted the
    process ("double free", exit -6) after its INTERRUPTED line, on a fresh clone whose kernels were compiling.
    Nothing of the command is left to run, so nothing is freed."""
    if _console:
        _exit_now(code)


class _Closed:
    """Standard output or error the process started without (its descriptor closed): every write fails as a closed
    file does, so a command says so in its one line instead of an ``AttributeError`` on None."""

    def write(self, text: str) -> int:
        raise OSError(9, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def run_console(load_main: Callable[[], Callable[[], int]]) -> None:
    """Load the command line (``load_main`` returns its ``main``), run it, and exit with its code."""
    global _console
    guard_start()
    _console = True
    if sys.stdout is None:
        sys.stdout = _Closed()
    if sys.stderr is None:
        sys.stderr = _Closed()
    main = load_main()
    code = main()  # the command line puts its own handlers in place while the command runs
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    # The command has done its work and closed what it wrote; the interpreter's own shutdown is left out, as it
    # can end the process with another code than the command's:
    # - under load, about one interrupted release in thirty died by SIGINT (exit -2) after its INTERRUPTED line,
    #   though the interrupt was handled and the signal ignored (its cause inside CPython is not found);
    # - pyarrow's thread pools, torn down by C++'s static destructors at exit with a worker still joinable, abort
    #   the process ("terminate called without an active exception", exit 134) in about one parquet release in
    #   eight on a busy machine, and in plain scripts that write and read a Parquet file (apache/arrow#34314;
    #   issue 59, item 8).
    _exit_now(code)
