"""The subject's TUI (SPEC section 10.1): verify a release, enter her record, see her protection.

Started by ``verifier tui [DIR] --key public.pem``. Four tabs, in the order
she needs them:

1. **Release** (F2): the verification result first (key fingerprint, dataset,
   version, date, method and every parameter); if verification fails, its
   reason and nothing else.
2. **Your record** (F3): a form generated from the signed schema (numbers
   checked as she types, categories from a list), or a JSON / one-row CSV
   record file.
3. **Results** (F4): permutation distance, the matching released records and
   their rank deviations, the spreads around her record against the claimed
   (D, v) and against her own thresholds, attribute disclosure per sensitive
   attribute, and a verdict in plain words.
4. **Random match** (F5): the random-match test in a worker thread with a
   progress bar and a cancel key, a histogram with her distance marked, and
   her p-value in words.

Her report is written (JSON or Markdown, mode 0600, atomically) only when
she asks (Ctrl+E). Her record stays in memory: it is not logged, and an
unexpected error ends the app with one line that names the error's type,
never Textual's traceback with local variables. Every publisher-supplied
string (column names, categories, manifest values) is shown literally:
Static widgets have markup off and control characters are escaped.
"""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Markdown,
    ProgressBar,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import WorkerFailed, get_current_worker

from verifier.text import figure, literal
from verifier.errors import VerifierError
from verifier.attacks.hierarchy import number_label
from verifier.attacks.intruder import SubjectReport
from verifier.data.tables import write_atomic
from verifier.releases.record import parse_number, parse_record, read_record
from verifier.data.schema import Attribute
from verifier.releases.subject import (
    Prepared,
    SubjectCheck,
    check_record,
    open_release,
    p_value_words,
    prepare,
    random_match,
    release_facts,
)

__all__ = ["SubjectApp", "histogram_lines", "INTERNAL_ERROR_EXIT"]

INTERNAL_ERROR_EXIT = 4
"""The exit code when the app stops on an unexpected error (documented in ``verifier tui --help``)."""

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
| Ctrl+R | run the random-match test |
| Esc | cancel the running test |
| Ctrl+E | export your report (JSON or Markdown) |
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


class _Cancelled(Exception):
    """Raised inside the random-match worker when she cancels."""


def _plain(text: object) -> Text:
    """Untrusted text as a renderable that is never parsed as markup, control characters escaped."""
    return Text(literal(text))


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
        lines.append(f"{label:>{pad}}  {bar:<{width}} {100 * share:5.1f}%{mark}")
    return lines


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


class ExportScreen(ModalScreen["tuple[str, str] | None"]):
    """Ctrl+E: where and in which format to write her report."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical { width: 70; height: auto; border: round $accent; background: $surface; padding: 0 1; }
    ExportScreen Horizontal { height: auto; }
    ExportScreen Button { margin-right: 1; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Export your report. It holds figures about your record, not the record; the file is "
                         "readable by you only. An existing file is never overwritten.", markup=False)
            yield Input("my_report.json", id="export-path", compact=True)
            with Horizontal():
                yield Button("JSON", id="export-json", compact=True)
                yield Button("Markdown", id="export-md", compact=True)
                yield Button("Cancel", id="export-cancel", compact=True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "export-cancel":
            self.dismiss(None)
            return
        fmt = "json" if event.button.id == "export-json" else "md"
        path = self.query_one("#export-path", Input).value.strip()
        if fmt == "md" and path.endswith(".json"):
            path = path[: -len(".json")] + ".md"
        self.dismiss((fmt, path))

    def action_cancel(self) -> None:
        self.dismiss(None)


class SubjectApp(App[None]):
    """Verify a release, enter a record, see its protection (SPEC section 10.1)."""

    TITLE = "permuted-privacy: check your record"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "show('release')", "Release", show=False),
        Binding("f3", "show('record')", "Record", show=False),
        Binding("f4", "show('results')", "Results", show=False),
        Binding("f5", "show('random')", "Random", show=False),
        Binding("ctrl+r", "run_random", "Run random-match test"),
        Binding("escape", "cancel_random", "Cancel", show=False),
        # priority: a focused Input would take Ctrl+E as "end of line"
        Binding("ctrl+e", "export", "Export report", priority=True),
        Binding("ctrl+q", "quit", "Quit"),
    ]
    CSS = """
    #fields, .row { height: auto; }
    .row > .name { width: 22; padding-right: 1; }
    .row > Input, .row > Select { width: 1fr; }
    .error { color: $error; padding-left: 23; height: auto; }
    .error.-empty { display: none; }
    #verification, #verdict, #random-status, #record-status, #threshold-status { height: auto; margin-bottom: 1; }
    .heading { text-style: bold; margin-top: 1; }
    .buttons { height: auto; margin-top: 1; }
    .buttons Button { margin-right: 1; }
    DataTable { height: auto; max-height: 12; }
    #progress { margin: 1 0; }
    #histogram { height: auto; }
    """

    def __init__(self, release_dir: str | None = None, key_path: str | None = None, *,
                 fingerprint: str | None = None, record_path: str | None = None,
                 alpha: float = 0.01, samples: int = 10_000, seed: int = 0, verbose: bool = False) -> None:
        super().__init__()
        self._verbose = verbose
        self._start = (release_dir or "", key_path or "", fingerprint or "", record_path)
        self._alpha, self._samples, self._seed = alpha, samples, seed
        self._prepared: Prepared | None = None
        self._check: SubjectCheck | None = None
        self._random: SubjectReport | None = None
        self._verification_failed = False
        self._generation = 0
        self._random_worker = None
        self.progress_seen: list[tuple[int, int]] = []
        """(done, total) of every progress update shown: the tests read it."""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        directory, key, fingerprint, _ = self._start
        yield Header()
        with TabbedContent(initial="release", id="tabs"):
            with TabPane("F2 Release", id="release"):
                with VerticalScroll(id="release-scroll"):
                    yield Static("Open a release with the publisher's public key, obtained from the publisher "
                                 "(never from inside the release).", id="verification", markup=False)
                    with Horizontal(classes="row"):
                        yield Static("Release folder", classes="name", markup=False)
                        yield Input(directory, id="release-dir", compact=True)
                    with Horizontal(classes="row"):
                        yield Static("Trusted public key", classes="name", markup=False)
                        yield Input(key, id="key-path", compact=True)
                    with Horizontal(classes="row"):
                        yield Static("Pin fingerprint", classes="name", markup=False)
                        yield Input(fingerprint, id="fingerprint", compact=True, placeholder="optional SHA-256")
                    with Horizontal(classes="buttons"):
                        yield Button("Verify", id="verify", compact=True)
            with TabPane("F3 Your record", id="record", disabled=True):
                with VerticalScroll(id="record-scroll"):
                    yield Static("Type your own values; they stay in this window.", markup=False)
                    yield Vertical(id="fields")
                    with Horizontal(classes="row"):
                        yield Static("Or a record file", classes="name", markup=False)
                        yield Input(id="record-file", compact=True, placeholder="my_record.json or .csv")
                    with Horizontal(classes="buttons"):
                        yield Button("Load file", id="load", compact=True)
                        yield Button("Check my record", id="check", compact=True)
                    yield Static("", id="record-status", markup=False)
            with TabPane("F4 Results", id="results", disabled=True):
                with VerticalScroll(id="results-scroll"):
                    yield Static("", id="verdict", markup=False)
                    yield Static("Released records that match you, and their rank deviations:", classes="heading",
                                 markup=False)
                    yield DataTable(id="deviations", cursor_type="row", zebra_stripes=True)
                    yield Static("Spread around your record:", classes="heading", markup=False)
                    yield DataTable(id="variances", cursor_type="row")
                    with Horizontal(classes="row"):
                        yield Static("Your threshold d", classes="name", markup=False)
                        yield Input(id="my-d", compact=True, placeholder="an integer, 0 or more")
                    with Horizontal(classes="row"):
                        yield Static("Your threshold v", classes="name", markup=False)
                        yield Input(id="my-v", compact=True, placeholder="one number, or one per attribute, comma-separated")
                    yield Static("", id="threshold-status", markup=False)
                    yield Static("Attribute disclosure:", classes="heading", markup=False)
                    yield DataTable(id="disclosure", cursor_type="row")
            with TabPane("F5 Random match", id="random", disabled=True):
                with VerticalScroll(id="random-scroll"):
                    yield Static("Random records are built from the release's own columns. If they match as "
                                 "closely as your closest record does, an intruder cannot tell your match from "
                                 "chance.", markup=False)
                    with Horizontal(classes="row"):
                        yield Static("alpha", classes="name", markup=False)
                        yield Input(str(self._alpha), id="alpha", compact=True)
                    with Horizontal(classes="row"):
                        yield Static("Monte Carlo samples", classes="name", markup=False)
                        yield Input(str(self._samples), id="samples", compact=True)
                    with Horizontal(classes="buttons"):
                        yield Button("Run test", id="run", compact=True)
                        yield Button("Cancel", id="cancel", compact=True, disabled=True)
                    yield ProgressBar(id="progress", show_eta=False)
                    yield Static("", id="random-status", markup=False)
                    yield Static("", id="histogram", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        directory, key, _, _ = self._start
        if directory and key:
            self._open()
        else:
            self.query_one("#release-dir" if not directory else "#key-path", Input).focus()

    # ------------------------------------------------------------------ actions

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_show(self, tab: str) -> None:
        pane = self.query_one(f"#{tab}", TabPane)
        if not pane.disabled:
            self._goto(tab)

    # where the focus goes on each tab: the record's first field and the Run button invite the next step;
    # the release and results tabs focus their scroll area, which keeps their first lines in view
    _FOCUS = {"release": "#release-scroll", "record": "#field-0", "results": "#results-scroll", "random": "#run"}

    def _goto(self, tab: str) -> None:
        """Show ``tab`` from its top and move the focus into it (a focused widget pulls its tab to the front)."""

        def switch() -> None:
            self.query_one(TabbedContent).active = tab
            self.query_one(f"#{tab}-scroll", VerticalScroll).scroll_home(animate=False)
            target = self.query(self._FOCUS[tab])
            if target and target.first().focusable:
                target.first().focus(scroll_visible=False)

        self.call_after_refresh(switch)

    def action_quit(self) -> None:  # type: ignore[override]
        self._cancel_random()
        self.exit(return_code=1 if self._verification_failed else 0)

    def action_export(self) -> None:
        if len(self.screen_stack) > 1:  # help or export already open
            return
        if self._check is None:
            self.notify("Check your record first (F3).", severity="warning", markup=False)
            return
        self.push_screen(ExportScreen(), self._export)

    def action_run_random(self) -> None:
        if self._check is None:
            self.notify("Check your record first (F3).", severity="warning", markup=False)
            return
        self._goto("random")
        self._start_random()

    def action_cancel_random(self) -> None:
        self._cancel_random()

    # ------------------------------------------------------------------ release

    @on(Button.Pressed, "#verify")
    @on(Input.Submitted, "#release-dir, #key-path, #fingerprint")
    def _verify_pressed(self) -> None:
        self._open()

    def _open(self) -> None:
        directory = self.query_one("#release-dir", Input).value.strip()
        key = self.query_one("#key-path", Input).value.strip()
        fingerprint = self.query_one("#fingerprint", Input).value.strip() or None
        self._reset()
        if not directory or not key:
            self._show_verification_failure("give the release folder and the publisher's public key file")
            return
        self.query_one("#verification", Static).update("Verifying ...")
        self._open_worker(directory, key, fingerprint, self._generation)

    @work(thread=True, exclusive=True, group="open")
    def _open_worker(self, directory: str, key: str, fingerprint: str | None, generation: int) -> None:
        try:
            prepared = prepare(open_release(directory, key, fingerprint=fingerprint))
        except VerifierError as exc:
            self.call_from_thread(self._show_verification_failure, exc.diagnostic(), generation)
            return
        self.call_from_thread(self._show_verified, prepared, generation)

    def _reset(self) -> None:
        """Forget the release and everything computed from it; results still on their way are dropped."""
        self._generation += 1
        self._cancel_random()
        self.workers.cancel_group(self, "check")
        self._prepared = self._check = self._random = None
        for pane in ("record", "results", "random"):
            self.query_one(f"#{pane}", TabPane).disabled = True
        self.query_one("#fields", Vertical).remove_children()
        for selector in ("#verdict", "#threshold-status", "#record-status", "#random-status", "#histogram"):
            self.query_one(selector, Static).update("")
        for selector in ("#deviations", "#variances", "#disclosure"):
            self.query_one(selector, DataTable).clear(columns=True)
        for selector in ("#my-d", "#my-v", "#record-file"):
            self.query_one(selector, Input).value = ""

    def _show_verification_failure(self, line: str, generation: int | None = None) -> None:
        if generation is not None and generation != self._generation:
            return  # an older attempt, overtaken by a newer one
        self._verification_failed = True
        text = Text()
        text.append("NOT VERIFIED\n", style="bold reverse")
        text.append(literal(line))
        text.append("\n\nNothing from this release is shown. Check the folder and the key, then Verify again.")
        self.query_one("#verification", Static).update(text)
        self._goto("release")

    async def _show_verified(self, prepared: Prepared, generation: int) -> None:
        if generation != self._generation:
            return
        self._verification_failed = False
        self._prepared = prepared
        facts = release_facts(prepared.release)
        pad = max(len(k) for k, _ in facts)
        text = Text()
        text.append("VERIFIED", style="bold reverse")
        text.append(" with the key you trust: the manifest and the data are exactly what its holder signed.\n")
        for k, v in facts:
            text.append(f"{k:<{pad}}  {literal(v)}\n")
        text.append("\nNext: F3 to enter your record.")
        self.query_one("#verification", Static).update(text)
        self._goto("release")
        await self._build_form(prepared)
        self.query_one("#record", TabPane).disabled = False
        record_path = self._start[3]
        if record_path:
            self._start = (*self._start[:3], None)
            self.query_one("#record-file", Input).value = record_path
            self._load_file()

    # ------------------------------------------------------------------ record form

    async def _build_form(self, prepared: Prepared) -> None:
        fields = self.query_one("#fields", Vertical)
        await fields.remove_children()
        rows = []
        for j, attr in enumerate(prepared.schema.attributes):
            role = {"quasi_identifier": " (QI)", "sensitive": " (sensitive)"}.get(attr.role or "", "")
            label = literal(attr.name) + role
            if attr.kind == "numeric":
                field: Input | Select = Input(id=f"field-{j}", compact=True, placeholder="a number")
            else:
                options = [(_plain(c), k) for k, c in enumerate(attr.categories or ())]
                field = Select(options, id=f"field-{j}", compact=True, prompt="choose ...")
            rows.append(Horizontal(Static(label, classes="name", markup=False), field, classes="row"))
            rows.append(Static("", id=f"error-{j}", classes="error -empty", markup=False))
        await fields.mount_all(rows)

    def _field_error(self, j: int, message: str) -> None:
        error = self.query_one(f"#error-{j}", Static)
        error.update(message)
        error.set_class(not message, "-empty")
        field = self.query_one(f"#field-{j}")
        field.set_class(bool(message), "-invalid")

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        wid = event.input.id or ""
        if wid.startswith("field-"):
            value = event.value
            why = parse_number(value)[1] if value.strip() else None
            self._field_error(int(wid.split("-")[1]), f"this value {why}" if why else "")
        elif wid in ("my-d", "my-v"):
            self._show_thresholds()

    @on(Input.Submitted, "#record-file")
    @on(Button.Pressed, "#load")
    def _load_pressed(self) -> None:
        self._load_file()

    def _load_file(self) -> None:
        assert self._prepared is not None
        path = self.query_one("#record-file", Input).value.strip()
        if not path:
            self._record_status("Type the path of your record file first.")
            return
        try:
            keys = read_record(path, self._prepared.schema)
        except VerifierError as exc:
            self._record_status(exc.diagnostic())
            return
        for j, attr in enumerate(self._prepared.schema.attributes):
            widget = self.query_one(f"#field-{j}")
            if isinstance(widget, Input):
                widget.value = number_label(float(keys[j]))
            else:
                widget.value = int(keys[j])
        self._record_status(f"Loaded {literal(path)}.")
        self._run_check(keys)

    @on(Button.Pressed, "#check")
    @on(Input.Submitted, ".row > Input")
    def _check_pressed(self, event: Input.Submitted | Button.Pressed) -> None:
        if isinstance(event, Input.Submitted) and not (event.input.id or "").startswith("field-"):
            return
        keys = self._form_record()
        if keys is not None:
            self._run_check(keys)

    def _form_record(self) -> np.ndarray | None:
        """Her record from the form, or None with every field's problem shown beside it."""
        assert self._prepared is not None
        fields: dict[str, Any] = {}
        problems = 0
        for j, attr in enumerate(self._prepared.schema.attributes):
            widget = self.query_one(f"#field-{j}")
            if isinstance(widget, Input):
                value = widget.value
                why = "is required" if not value.strip() else parse_number(value)[1]
                self._field_error(j, f"this value {why}" if why else "")
                problems += why is not None
                fields[attr.name] = value
            else:
                chosen = widget.value
                if isinstance(chosen, bool) or not isinstance(chosen, int):  # Select.NULL: nothing chosen
                    self._field_error(j, "choose one of the categories")
                    problems += 1
                    continue
                self._field_error(j, "")
                fields[attr.name] = _category(attr, chosen)
        if problems:
            self._record_status(f"{problems} field(s) need your attention.")
            return None
        try:
            return parse_record(fields, self._prepared.schema, source="the form")
        except VerifierError as exc:  # every field was checked above; kept for a schema the form cannot express
            self._record_status(exc.diagnostic())
            return None

    def _record_status(self, message: str) -> None:
        self.query_one("#record-status", Static).update(literal(message))

    # ------------------------------------------------------------------ results

    def _run_check(self, keys: np.ndarray) -> None:
        self._cancel_random()
        self._random = None
        self._record_status("Checking ...")
        assert self._prepared is not None
        self._check_worker(self._prepared, keys)

    @work(thread=True, exclusive=True, group="check")
    def _check_worker(self, prepared: Prepared, keys: np.ndarray) -> None:
        check = check_record(prepared, keys)
        self.call_from_thread(self._show_results, check)

    def _show_results(self, check: SubjectCheck) -> None:
        if check.prepared is not self._prepared:
            return  # computed for a release that has since been closed
        self._check = check
        self._record_status("Checked: see your results (F4).")
        for pane in ("results", "random"):
            self.query_one(f"#{pane}", TabPane).disabled = False
        self._show_verdict()
        names = check.names
        shown = 200
        rows = [[str(int(m) + 1), *[str(int(t)) for t in dev]]
                for m, dev in zip(check.result.matches[:shown], check.result.deviations[:shown])]
        if check.result.matches.size > shown:
            rows.append([f"+{check.result.matches.size - shown}", *["" for _ in names]])
        _fill(self.query_one("#deviations", DataTable), ["match", *names], rows)
        my_d = self.query_one("#my-d", Input)
        if not my_d.value:
            my_d.value = str(check.claimed_distance if check.claimed_distance is not None else check.distance)
        self._show_thresholds()
        rows = [[name, figure(r["risk"]), str(r["candidates"]), r["mode"]] for name, r in check.disclosure.items()]
        _fill(self.query_one("#disclosure", DataTable), ["sensitive attribute", "risk", "candidates", "how"],
              rows or [["(the schema marks no sensitive attribute)", "", "", ""]])
        self.query_one("#histogram", Static).update("")
        self.query_one("#random-status", Static).update("Press Ctrl+R (or Run test) to run the random-match test.")
        self._goto("results")

    def _show_verdict(self) -> None:
        assert self._check is not None
        lines = self._check.verdict(self._random)
        text = Text()
        text.append(literal(lines[0]), style="bold")
        for line in lines[1:]:
            text.append("\n" + literal(line))
        text.append(f"\n\nPermutation distance {self._check.distance}; {self._check.result.matches.size} "
                    "released record(s) match.")
        self.query_one("#verdict", Static).update(text)

    def _thresholds(self) -> tuple[int | None, list[float] | None, str]:
        """Her (d, v) from the two inputs, or the reason they cannot be read."""
        assert self._check is not None
        m = len(self._check.names)
        raw_d = self.query_one("#my-d", Input).value.strip()
        raw_v = self.query_one("#my-v", Input).value.strip()
        if not raw_d.isascii() or not raw_d.isdigit():
            return None, None, "Your d must be a whole number, 0 or more." if raw_d else ""
        d = int(raw_d)
        n = self._check.prepared.n_records
        if d >= n:
            return None, None, f"Your d must be below the number of released records ({n})."
        if not raw_v:
            return d, [-np.inf] * m, ""
        parts = [p.strip() for p in raw_v.split(",")]
        values = [parse_number(p) for p in parts]
        bad = next((why for _, why in values if why), None)
        if bad or len(parts) not in (1, m):
            return None, None, (f"Your v: a value {bad}." if bad else
                                f"Your v: give one number, or {m} (one per attribute).")
        v = [float(x) for x, _ in values]  # type: ignore[arg-type]
        return d, v * m if len(v) == 1 else v, ""

    def _show_thresholds(self) -> None:
        if self._check is None:
            return
        check = self._check
        d, v, why = self._thresholds()
        status = self.query_one("#threshold-status", Static)
        spread = None
        if d is not None and v is not None:
            holds, spread = check.thresholds_hold(d, v)
            status.update(Text(f"Your ({d}, v): {'holds' if holds else 'does NOT hold'} for your record "
                               f"(distance {check.distance} {'>=' if check.distance >= d else '<'} {d}"
                               + ("" if all(np.isneginf(v)) else ", every spread above your v" if holds else
                                  ", or a spread is not above your v") + ")."))
        else:
            status.update(why)
        claimed_d = check.claimed_distance
        header = ["attribute", "kind", f"at your {check.distance}",
                  f"at claimed D={claimed_d if claimed_d is not None else '-'}", "claimed v",
                  f"at d={d if d is not None else '-'}", "your v"]
        rows = []
        kinds = check.prepared.spread_kinds
        for j, name in enumerate(check.names):
            claimed_v = check.claimed_v[j] if check.claimed_v and j < len(check.claimed_v) else None
            at_claimed = check.spread_at_claimed[j] if check.spread_at_claimed is not None else None
            mine = "-" if v is None or np.isneginf(v[j]) else figure(v[j])
            rows.append([name, kinds[j], figure(check.spread_at_own[j]), figure(at_claimed), figure(claimed_v),
                         "-" if spread is None else figure(spread[j]), mine])
        _fill(self.query_one("#variances", DataTable), header, rows)

    # ------------------------------------------------------------------ random-match test

    def _start_random(self) -> None:
        assert self._check is not None
        alpha, why_a = parse_number(self.query_one("#alpha", Input).value)
        samples_text = self.query_one("#samples", Input).value.strip()
        status = self.query_one("#random-status", Static)
        if why_a or not 0 < float(alpha) < 1:  # type: ignore[arg-type]
            status.update("alpha must be a number strictly between 0 and 1.")
            return
        if not (samples_text.isascii() and samples_text.isdigit()) or not 0 < int(samples_text) <= 10**9:
            status.update("Monte Carlo samples must be a whole number from 1 to 1000000000.")
            return
        self._cancel_random()
        self._random = None
        self.progress_seen = []
        self.query_one("#progress", ProgressBar).update(total=None, progress=0)
        self.query_one("#histogram", Static).update("")
        status.update("Running ... (Esc cancels)")
        self.query_one("#cancel", Button).disabled = False
        self.query_one("#run", Button).disabled = True
        self._random_worker = self._random_thread(float(alpha), int(samples_text))  # type: ignore[arg-type]

    @work(thread=True, exclusive=True, group="random")
    def _random_thread(self, alpha: float, samples: int) -> None:
        worker = get_current_worker()
        prepared, check = self._prepared, self._check
        assert prepared is not None and check is not None
        last = [0.0]

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:
                raise _Cancelled
            now = time.monotonic()
            if done >= total or now - last[0] >= 0.05:
                last[0] = now
                self.call_from_thread(self._show_progress, done, total)

        try:
            report = random_match(prepared, check, alpha=alpha, samples=samples, seed=self._seed, progress=progress)
        except _Cancelled:
            return  # _cancel_random has already said so
        self.call_from_thread(self._random_finished, report, worker)

    def _show_progress(self, done: int, total: int) -> None:
        self.progress_seen.append((done, total))
        self.query_one("#progress", ProgressBar).update(total=total, progress=done)

    def _random_finished(self, report: SubjectReport, worker: Any) -> None:
        if worker is not self._random_worker:
            return  # a cancelled run that finished after a newer one started
        self._random_worker = None
        self._random_idle()
        status = self.query_one("#random-status", Static)
        self._random = report
        assert self._check is not None
        how = ("exact, over every combination" if report.random.exact
               else f"Monte Carlo, 95% interval {report.p_value_low:.4f}-{report.p_value_high:.4f}")
        text = Text()
        text.append(p_value_words(report.p_value, report.alpha).capitalize() + ".", style="bold")
        text.append(f"\nYour p-value F_rand({self._check.distance}) = {report.p_value:.4f} at alpha {report.alpha} "
                    f"({how}; {report.random.total} random records).")
        status.update(text)
        self.query_one("#histogram", Static).update(
            "\n".join(histogram_lines(report.random.pmf, self._check.distance)))
        self._show_verdict()

    def _cancel_random(self) -> None:
        worker, self._random_worker = self._random_worker, None
        if worker is not None:
            worker.cancel()
            try:
                self._random_idle()
                self.query_one("#random-status", Static).update(
                    "Cancelled. Nothing was computed; press Ctrl+R to run it again.")
            except Exception:  # noqa: BLE001 - the app may be closing
                pass

    def _random_idle(self) -> None:
        """No test running: Run is available, Cancel is not."""
        self.query_one("#cancel", Button).disabled = True
        self.query_one("#run", Button).disabled = False

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.action_run_random()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self._cancel_random()

    # ------------------------------------------------------------------ export

    def report_json(self) -> dict[str, Any]:
        """Her report as ``verifier check --json`` gives it."""
        assert self._check is not None
        return self._check.to_json(self._random)

    def _export(self, choice: tuple[str, str] | None) -> None:
        if choice is None or self._check is None:
            return
        fmt, path = choice
        if not path:
            self.notify("Give a file name.", severity="error", markup=False)
            return
        target = Path(path).expanduser()
        if target.exists():
            self.notify(f"{literal(path)} exists; it was not overwritten. Choose another name.", severity="error",
                        markup=False)
            return
        text = (json.dumps(self.report_json(), indent=2, allow_nan=False) + "\n" if fmt == "json"
                else self._check.to_markdown(self._random))
        try:
            write_atomic(target, lambda handle: handle.write(text), mode=0o600)
        except VerifierError as exc:
            self.notify(literal(exc.diagnostic()), severity="error", markup=False)
            return
        self.notify(f"Your report is in {literal(path)}.", markup=False)

    # ------------------------------------------------------------------ failures

    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error: forget her record and exit with one line, never a traceback with locals.

        Textual's own handler renders ``rich.traceback.Traceback(show_locals=True)``,
        which would print her values from the computation's frames.
        """
        self._return_code = INTERNAL_ERROR_EXIT
        self._prepared = self._check = self._random = None
        cause = error.error if isinstance(error, WorkerFailed) else error
        self._exit_renderables.append(Text(
            f"FAIL: -: INTERNAL_ERROR: the TUI stopped on an unexpected {type(cause).__name__}; nothing of your "
            "record was shown or written. `verifier check` gives the same report on the command line."))
        if self._verbose:
            # for a bug report: where it happened, never the frames' local variables
            self._exit_renderables.append(Text("".join(traceback.format_exception(cause))))
        self._close_messages_no_wait()


def _fill(table: DataTable, header: list[str], rows: list[list[str]]) -> None:
    """Replace a table's columns and rows; every cell literal, every column as wide as its widest cell.

    Explicit widths: a table refilled while its tab is hidden can keep the
    widths of its header alone and cut the figures.
    """
    table.clear(columns=True)
    cells = [[literal(c) for c in row] for row in rows]
    labels = [literal(h) for h in header]
    for k, label in enumerate(labels):
        width = max([len(label), *(len(row[k]) for row in cells)])
        table.add_column(Text(label), width=width)
    for row in cells:
        table.add_row(*[Text(c) for c in row])


def _category(attr: Attribute, index: int) -> str:
    assert attr.categories is not None
    return attr.categories[index]
