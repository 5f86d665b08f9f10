"""A minimal progress bar on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Call with ``(done, total)``; draws ``label [#####.....] 50%`` on stderr.

    Silent when the stream is not a terminal (pipes, CI logs), so that
    machine-read output stays clean.
    """

    def __init__(self, label: str, stream: TextIO | None = None, *, force: bool = False):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = force or bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {100 * done // total:3d}%")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
