"""F1: the help screen, what each tab shows and every key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

__all__ = ["HELP", "HelpScreen"]

HELP = """\
# Check your record in a release

A publisher released an anonymized table and signed it. You know your own
record. This tool tells you how well the release hides it; nothing you type
leaves this window unless you export your report.

| key | what it does |
| --- | --- |
| F1 | this help (Esc closes it) |
| F2 | **Release**: open a release folder with a public key you got from the publisher, not from the release |
| F3 | **Your record**: type your values, or load a JSON / one-row CSV record file |
| F4 | **Results**: your distance, the records that match you, spreads, disclosure risk, verdict |
| F5 | **Random match**: could an intruder tell your match from chance? |
| Ctrl+R | run the random-match test (where the release has ranks) |
| Esc | cancel the running test |
| Ctrl+E | export your report (JSON or Markdown; Enter in the file name writes it) |
| Tab / Shift+Tab | move between fields and buttons; Enter presses a button |
| Ctrl+Q | quit |

**Permutation distance.** Sort every column of the release. Your value on an
attribute has a rank among them; the distance is how far, in ranks, the
closest released record is from yours on its farthest attribute. 0 means a
released record sits exactly where yours would: your values were not mixed
with anyone else's.

**Spread.** Around your rank, the released values within that distance vary
by this much (variance for numbers). The publisher claims every record has a
distance of at least D and spreads above v.

**Random-match test.** An intruder who knows everything links you to your
closest released record. If records built at random from the release's own
columns match as closely most of the time, that link is no better than
chance.
"""


class HelpScreen(ModalScreen[None]):
    """F1: what each tab shows and every key."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close help")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; height: 90%; border: round $accent; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP)

    def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
