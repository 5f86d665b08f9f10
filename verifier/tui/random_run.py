"""Her random-match test inside a worker thread: progress shown at most every 50 ms, and a cancel that stops it."""

from __future__ import annotations

import time
from typing import Callable

from textual.worker import Worker

from verifier.attacks.intruder import SubjectReport
from verifier.releases.subject import Prepared, SubjectCheck, random_match

__all__ = ["run_random_match"]

#: the least time between two progress updates on the screen, in seconds
PROGRESS_EVERY = 0.05


class _Cancelled(Exception):
    """Raised inside the test's progress callback once she has cancelled."""


def run_random_match(worker: Worker, prepared: Prepared, check: SubjectCheck, *, alpha: float, samples: int,
                     seed: int, report_progress: Callable[[int, int], None]) -> SubjectReport | None:
    """Her test, run in ``worker``'s thread; None when the worker was cancelled (nothing of it is shown).

    ``report_progress(done, total)`` is called at most every :data:`PROGRESS_EVERY` seconds, and at the end.
    """
    last = [0.0]

    def progress(done: int, total: int) -> None:
        if worker.is_cancelled:
            raise _Cancelled
        now = time.monotonic()
        if done >= total or now - last[0] >= PROGRESS_EVERY:
            last[0] = now
            report_progress(done, total)

    try:
        return random_match(prepared, check, alpha=alpha, samples=samples, seed=seed, progress=progress)
    except _Cancelled:
        return None
