"""Compiled kernels and signals: an interrupt waits for the kernel it lands in (SPEC section 14).

A SIGINT or SIGTERM whose Python handler raised ``KeyboardInterrupt`` while
a numba kernel ran (or while numba loaded a cached kernel, through a ctypes
callback) crashed the process with a segmentation fault, or made numba
report a ``SystemError`` around the interrupt. While the main thread runs a
kernel, both signals are therefore only *recorded*: the kernel finishes, the
command's own handlers come back, and the recorded signal is raised as the
interrupt it is, so the command ends with its one ``INTERRUPTED`` line. The
trees answer their queries in pieces of :data:`QUERY_CHUNK`, so the wait
stays short.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["QUERY_CHUNK", "held_signals", "interrupt", "raise_if_interrupted", "start_watching"]

#: queries a tree answers in one kernel call: an interrupt waits at most for one such call
QUERY_CHUNK = 1 << 17
_HELD = (signal.SIGINT, signal.SIGTERM)
#: the signals a command received, kept even where the interrupt they raised was swallowed
_RECEIVED: list[int] = []


def interrupt(signum, frame) -> None:
    """A command's handler of SIGINT and SIGTERM: remember the signal, then raise ``KeyboardInterrupt``.

    Python drops an exception raised where it cannot propagate: a weak reference's callback (importlib's
    module locks), a ``__del__``. A signal landing there was lost, and a release ran on to exit 0 after
    Ctrl-C. Remembered, it is raised again at the next :func:`raise_if_interrupted`: each phase of a
    command, before a release is moved into place, and when the command returns.
    """
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def raise_if_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` if the command received a signal its interrupt did not end it on."""
    if _RECEIVED:
        raise KeyboardInterrupt


def start_watching() -> None:
    """Forget the signals of an earlier command run in this process (a test, the API)."""
    _RECEIVED.clear()


@contextmanager
def held_signals() -> Iterator[None]:
    """Record SIGINT and SIGTERM during the block; after it, act on the first one as its own handler would."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []

    def record(signum, frame) -> None:
        got.append(signum)

    previous = {s: signal.signal(s, record) for s in _HELD}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if got:
            handler = previous[got[0]]
            if callable(handler):
                handler(got[0], None)
            elif handler == signal.SIG_DFL or got[0] == signal.SIGINT:
                raise KeyboardInterrupt
