"""F5, the random-match tab: could an intruder tell her match from chance? A histogram with her distance
marked, and her p-value in words. The test itself runs in the app's worker."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, ProgressBar, Static

from verifier.attacks.intruder import EXHAUSTIVE_LIMIT, MAX_SAMPLES, SubjectReport
from verifier.releases.record import parse_number
from verifier.releases.facts import p_value_words
from verifier.text import number

__all__ = ["RandomMatchTab", "histogram_lines"]


class RandomMatchTab(VerticalScroll):
    """The test's options, Run and Cancel, the progress bar and the result; posts Run and Cancel messages."""

    class Run(Message):
        """She asks for the test."""

    class Cancel(Message):
        """She cancels the running test."""

    def __init__(self, alpha: float, samples: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self._defaults = (alpha, samples)

    def compose(self) -> ComposeResult:
        alpha, samples = self._defaults
        yield Static("Random records are built from the release's own columns. If they match as closely as your "
                     "closest record does, an intruder cannot tell your match from chance.", markup=False)
        with Horizontal(classes="row"):
            yield Static("alpha", classes="name", markup=False)
            yield Input(str(alpha), id="alpha", compact=True)
        with Horizontal(classes="row"):
            yield Static("Samples", id="samples-label", classes="name", markup=False)
            yield Input(str(samples), id="samples", compact=True)
        with Horizontal(classes="buttons"):
            yield Button("Run test", id="run", compact=True)
            yield Button("Cancel", id="cancel", compact=True, disabled=True)
        yield ProgressBar(id="progress", show_eta=False)
        yield Static("", id="random-status", markup=False)
        yield Static("", id="histogram", markup=False)

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.post_message(self.Run())

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.post_message(self.Cancel())

    def options(self) -> tuple[float, int] | None:
        """Her alpha and number of samples, or None with the reason shown."""
        alpha, why_a = parse_number(self.query_one("#alpha", Input).value)
        samples_text = self.query_one("#samples", Input).value.strip()
        if why_a or not 0 < float(alpha) < 1:  # type: ignore[arg-type]
            self.status("alpha must be a number strictly between 0 and 1.")
            return None
        if not (samples_text.isascii() and samples_text.isdigit()) or not 0 < int(samples_text) <= MAX_SAMPLES:
            self.status(f"Monte Carlo samples must be a whole number from 1 to {MAX_SAMPLES}.")
            return None
        return float(alpha), int(samples_text)  # type: ignore[arg-type]

    def status(self, message: str | Text) -> None:
        self.query_one("#random-status", Static).update(message)

    def ready(self, combinations: int | None = None) -> None:
        """A fresh check: nothing run yet. ``combinations`` (n^m of the release) says whether the test will be
        exact, every combination tried, or sampled; the samples field says which."""
        self.query_one("#histogram", Static).update("")
        exact = combinations is not None and combinations <= EXHAUSTIVE_LIMIT
        self.query_one("#samples-label", Static).update("Samples (unused)" if exact else "Monte Carlo samples")
        how = (f" It is exact: every one of the {combinations:,} combinations of the release's values is tried."
               if exact else "")
        self.status(f"Press Ctrl+R (or Run test) to run the random-match test.{how}")

    def clear(self) -> None:
        self.query_one("#histogram", Static).update("")
        self.status("")

    def running(self) -> None:
        self.query_one("#progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#histogram", Static).update("")
        self.status("Running ... (Esc cancels)")
        self.query_one("#cancel", Button).disabled = False
        self.query_one("#run", Button).disabled = True

    def idle(self) -> None:
        """No test running: Run is available, Cancel is not."""
        self.query_one("#cancel", Button).disabled = True
        self.query_one("#run", Button).disabled = False

    def cancelled(self) -> None:
        self.idle()
        self.status("Cancelled. Nothing was computed; press Ctrl+R to run it again.")

    def show_progress(self, done: int, total: int) -> None:
        self.query_one("#progress", ProgressBar).update(total=total, progress=done)

    def show_result(self, report: SubjectReport, distance: int) -> None:
        self.idle()
        how = ("exact, over every combination" if report.random.exact
               else f"Monte Carlo, 95% interval {number(report.p_value_low)}-{number(report.p_value_high)}")
        text = Text()
        text.append(p_value_words(report.p_value, report.alpha).capitalize() + ".", style="bold")
        text.append(f"\nYour p-value F_rand({distance}) = {number(report.p_value)} at alpha {report.alpha:g} "
                    f"({how}; {report.random.total:,} random records).")
        self.status(text)
        self.query_one("#histogram", Static).update("\n".join(histogram_lines(report.random.pmf, distance)))


def histogram_lines(pmf: np.ndarray, distance: int, *, width: int = 30, rows: int = 10) -> list[str]:
    """The random-match distribution as text bars, at most ``rows`` lines, her bin marked ``<- you``."""
    pmf = np.asarray(pmf, dtype=np.float64)
    size = max(int(pmf.size), distance + 1)
    pmf = np.pad(pmf, (0, size - pmf.size))
    step = -(-size // rows)
    starts = list(range(0, size, step))
    sums = [float(pmf[a : a + step].sum()) for a in starts]
    top = max(sums) or 1.0
    labels = [str(a) if step == 1 else f"{a}-{min(size, a + step) - 1}" for a in starts]
    pad = max(len("distance"), *(len(x) for x in labels))
    lines = [f"{'distance':>{pad}}  random records"]
    for a, label, share in zip(starts, labels, sums):
        bar = "█" * round(width * share / top)
        mark = f"  <- you ({distance})" if a <= distance < a + step else ""
        lines.append(f"{label:>{pad}}  {bar:<{width}} {number(share, share=True):>7}{mark}")  # as the page's
    return lines
