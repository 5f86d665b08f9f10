"""Her random-match test inside a worker thread: progress shown at most every 50 ms, and a cancel that stops it;
:class:`RandomMatchActions`, the app's actions that start, follow and cancel it."""

from __future__ import annotations

import time
from typing import Any, Callable

from textual import work
from textual.worker import Worker, get_current_worker

from verifier.attacks.intruder import SubjectReport
from verifier.releases.family import NO_RANKS
from verifier.releases.subject import Prepared, SubjectCheck, random_match
from verifier.tui.random_tab import RandomMatchTab
from verifier.tui.results_tab import ResultsTab

__all__ = ["run_random_match", "RandomMatchActions"]

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


class RandomMatchActions:
    """The subject app's random-match test (Ctrl+R, Escape, the Run and Cancel buttons): started at once where her
    level needs it, run in a worker, its progress and result shown, cancelled when she asks or leaves. The app
    holds ``_check``, ``_prepared``, ``_random``, ``_random_worker``, ``_seed`` and ``progress_seen``."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Ctrl+R is not offered for a release without ranks (generalized cells): the random-match test does not
        apply there (issue 60, item 8)."""
        if action == "run_random":
            prepared = getattr(self, "_prepared", None)
            return prepared is None or prepared.ranks_apply
        return True

    def action_run_random(self) -> None:
        if self._check is None:
            self.notify("Check your record first (F3).", severity="warning", markup=False)
            return
        if not self._check.ranks_apply:
            self.notify(NO_RANKS, severity="warning", markup=False)
            return
        self._goto("random")
        self._start_random()

    def action_cancel_random(self) -> None:
        self._cancel_random()

    def _start_random(self) -> None:
        assert self._check is not None
        tab = self.query_one(RandomMatchTab)
        options = tab.options()
        if options is None:
            return
        self._cancel_random()
        self._random = None
        self.progress_seen = []
        tab.running()
        self._random_worker = self._random_thread(*options)

    @work(thread=True, exclusive=True, group="random")
    def _random_thread(self, alpha: float, samples: int) -> None:
        worker = get_current_worker()
        assert self._prepared is not None and self._check is not None
        report = run_random_match(worker, self._prepared, self._check, alpha=alpha, samples=samples, seed=self._seed,
                                  report_progress=lambda done, total: self.call_from_thread(self._show_progress,
                                                                                            done, total))
        if report is not None:  # a cancelled run: _cancel_random has already said so
            self.call_from_thread(self._random_finished, report, worker)

    def _show_progress(self, done: int, total: int) -> None:
        self.progress_seen.append((done, total))
        self.query_one(RandomMatchTab).show_progress(done, total)

    def _random_finished(self, report: SubjectReport, worker: Any) -> None:
        if worker is not self._random_worker:
            return  # a cancelled run that finished after a newer one started
        self._random_worker = None
        self._random = report
        assert self._check is not None
        self.query_one(RandomMatchTab).show_result(report, self._check.distance)
        self.query_one(ResultsTab).show_verdict(report)

    def _cancel_random(self) -> None:
        worker, self._random_worker = self._random_worker, None
        if worker is not None:
            worker.cancel()
            try:
                self.query_one(RandomMatchTab).cancelled()
                if self._check is not None and self._random is None:
                    self.query_one(ResultsTab).show_verdict(None)  # her level without the test: as --no-random-match
            except Exception:  # noqa: BLE001 - the app may be closing
                pass
