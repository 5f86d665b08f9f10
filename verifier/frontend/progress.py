"""Progress of long work on stderr, drawn by rich and only on a terminal: bars, and the phases of a command."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, TextIO

from verifier.core.interrupts import raise_if_interrupted

__all__ = ["PIPED_AFTER", "ProgressBar", "Phases"]

#: off a terminal, a phase that runs longer than this many seconds says so
PIPED_AFTER = 10.0


class ProgressBar:
    """Call with ``(done, total)``: a rich progress bar labelled ``label`` on stderr.

    Silent when the stream is not a terminal (pipes, CI logs), so that
    machine-read output stays clean; ``force=True`` draws anyway (tests).
    rich is imported on the first drawn update only, so a command that shows
    no bar does not load it. Redraws are throttled to ten a second and the bar
    is closed when ``done`` reaches ``total``.
    """

    def __init__(self, label: str, stream: TextIO | None = None, *, force: bool = False):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self._force = force
        self._progress = None
        self._task = None
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if self._progress is not None and done < total and now - self._last < 0.1:
            return
        self._last = now
        if self._progress is None:
            self._start(total)
        self._progress.update(self._task, completed=done, total=total)
        self._progress.refresh()
        if done >= total:
            self.close()

    def _start(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        console = Console(file=self.stream, force_terminal=True if self._force else None, width=80 if self._force else None)
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                  TimeRemainingColumn(), console=console, auto_refresh=False, transient=False)
        self._task = self._progress.add_task(self.label, total=total)
        self._progress.start()

    def close(self) -> None:
        """Stop drawing (also when the work ended early); idempotent."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class Phases:
    """The phases of a command on stderr: a spinner while each runs, and its time once it took over a second.

    Use as ``with phases("reading X.csv"): ...``. Drawn only when stderr is a
    terminal (``force=True`` draws anyway); rich is imported on the first
    phase drawn. Off a terminal a phase is silent unless it runs longer than
    ``piped_after`` seconds (:meth:`_plain`). A phase that fails prints
    nothing more: the FAIL line says what happened.
    """

    def __init__(self, stream: TextIO | None = None, *, force: bool = False, min_seconds: float = 1.0,
                 piped_after: float = PIPED_AFTER):
        self.piped_after = piped_after
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self._force = force
        self.min_seconds = min_seconds
        self._console = None
        self.seconds: dict[str, float] = {}

    @contextmanager
    def _plain(self, label: str, start: float) -> Iterator[None]:
        """Off a terminal (a pipe, a log), a phase is silent unless it runs past ``piped_after`` seconds: then one
        line says it is still running, and one more how long it took (a piped 70 s release said nothing)."""
        said = threading.Event()

        def still_running() -> None:
            said.set()
            self._line(f"{label}: still running after {self.piped_after:g} s")

        timer = threading.Timer(self.piped_after, still_running)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
        if said.is_set():
            self._line(f"{label}: done in {time.monotonic() - start:.1f} s")

    def _line(self, text: str) -> None:
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed log is no reason to stop the work
            pass

    def _console_for(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, force_terminal=True if self._force else None,
                                    width=80 if self._force else None, highlight=False)
        return self._console

    @contextmanager
    def __call__(self, label: str) -> Iterator[None]:
        raise_if_interrupted()  # a signal swallowed in the last phase ends the command before the next
        start = time.monotonic()
        if not self.enabled:
            with self._plain(label, start):
                yield
            self.seconds[label] = time.monotonic() - start
            return
        console = self._console_for()
        with console.status(label, spinner="dots"):
            yield
        took = time.monotonic() - start
        self.seconds[label] = took
        if took >= self.min_seconds:
            console.print(f"{label}: {took:.1f} s", markup=False)
