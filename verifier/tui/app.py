"""The subject's app: composes the four tabs and the two screens, owns the workers and what she has computed."""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, TabbedContent, TabPane

from verifier.attacks.intruder import SubjectReport
from verifier.errors import VerifierError
from verifier.releases.facts import open_release, release_facts
from verifier.releases.joint import JointCheck, check_jointly, open_together
from verifier.releases.policy import Policy, default_policy
from verifier.releases.subject import Prepared, SubjectCheck, check_record, prepare
from verifier.tui.export import ExportScreen, report_json, report_text, write_report
from verifier.tui.failure import INTERNAL_ERROR_EXIT, failure_lines
from verifier.tui.help import HelpScreen
from verifier.tui.random_run import RandomMatchActions
from verifier.tui.random_tab import RandomMatchTab
from verifier.tui.record_tab import RecordTab
from verifier.tui.release_tab import ReleaseTab
from verifier.transparency.standing import Standing, log_standing, read_policy
from verifier.tui.results_tab import ResultsTab

__all__ = ["INTERNAL_ERROR_EXIT", "SubjectApp"]



class SubjectApp(RandomMatchActions, App[None]):
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
    #verification, #verdict, #together, #random-status, #record-status, #threshold-status {
        height: auto; margin-bottom: 1;
    }
    .heading { text-style: bold; margin-top: 1; }
    .buttons { height: auto; margin-top: 1; }
    .buttons Button { margin-right: 1; }
    DataTable { height: auto; max-height: 12; }
    #progress { margin: 1 0; }
    #histogram { height: auto; }
    """
    # where the focus goes on each tab: the record's first field and the Run button invite the next step;
    # the release and results tabs focus their scroll area, which keeps their first lines in view
    _FOCUS = {"release": "#release-scroll", "record": "#field-0", "results": "#results-scroll", "random": "#run"}

    def __init__(self, release_dir: str | None = None, key_path: str | None = None, *,
                 fingerprint: str | None = None, record_path: str | None = None,
                 alpha: float = 0.01, samples: int = 10_000, seed: int = 0, verbose: bool = False,
                 policy: Policy | None = None, proof: str | None = None, log_policy: str | None = None,
                 others: Sequence[str] = ()) -> None:
        super().__init__()
        self._others = tuple(others)
        """Other releases of the same people, checked with hers together (``verifier tui --with DIR``)."""
        self._other_prepared: tuple[Prepared, ...] = ()
        self._joint: JointCheck | None = None
        self._verbose = verbose
        self.policy = policy or default_policy()
        """The verdict policy her level is decided by, as ``verifier check --policy`` takes it."""
        self._start = (release_dir or "", key_path or "", fingerprint or "", proof or "", log_policy or "")
        self._standing = Standing()
        self._record_path = record_path
        self._alpha, self._samples, self._seed = alpha, samples, seed
        self._prepared: Prepared | None = None
        self._check: SubjectCheck | None = None
        self._random: SubjectReport | None = None
        self._verification_failed = False
        self._generation = 0
        self._random_worker = None
        self.progress_seen: list[tuple[int, int]] = []
        """(done, total) of every progress update shown: the tests read it."""

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial="release", id="tabs"):
            with TabPane("F2 Release", id="release"):
                yield ReleaseTab(*self._start, id="release-scroll")
            with TabPane("F3 Your record", id="record", disabled=True):
                yield RecordTab(id="record-scroll")
            with TabPane("F4 Results", id="results", disabled=True):
                yield ResultsTab(self.policy, id="results-scroll")
            with TabPane("F5 Random match", id="random", disabled=True):
                yield RandomMatchTab(self._alpha, self._samples, id="random-scroll")
        yield Footer()

    def on_mount(self) -> None:
        directory, key, *_ = self._start
        if directory and key:
            self._open()
        else:
            self.query_one(ReleaseTab).focus_first_empty()

    # ------------------------------------------------------------------ actions

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_show(self, tab: str) -> None:
        if not self.query_one(f"#{tab}", TabPane).disabled:
            self._goto(tab)

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

    # ------------------------------------------------------------------ release

    @on(ReleaseTab.Open)
    def _open(self) -> None:
        tab = self.query_one(ReleaseTab)
        directory, key, fingerprint, proof, log_policy = tab.values()
        self._reset()
        if not directory or not key:
            self._show_verification_failure("give the release folder and the publisher's public key file")
            return
        if (proof is None) != (log_policy is None):
            self._show_verification_failure("a log proof is checked under your log policy: give both, or neither")
            return
        tab.show_verifying()
        self._open_worker(directory, key, fingerprint, (proof, log_policy), self._generation)

    @work(thread=True, exclusive=True, group="open")
    def _open_worker(self, directory: str, key: str, fingerprint: str | None, log: tuple[str | None, str | None],
                     generation: int) -> None:
        try:
            release = open_release(directory, key, fingerprint=fingerprint)
            standing = Standing() if log[0] is None else log_standing(release, log[0], read_policy(log[1], None))
            prepared = prepare(release)
            others = tuple(open_together(prepared, other, key, fingerprint) for other in self._others)
        except VerifierError as exc:
            self.call_from_thread(self._show_verification_failure, exc.diagnostic(), generation)
            return
        self.call_from_thread(self._show_verified, prepared, standing, generation, others)

    def _reset(self) -> None:
        """Forget the release and everything computed from it; results still on their way are dropped."""
        self._generation += 1
        self._cancel_random()
        self.workers.cancel_group(self, "check")
        self._prepared = self._check = self._random = self._joint = None
        self._other_prepared = ()
        for pane in ("record", "results", "random"):
            self.query_one(f"#{pane}", TabPane).disabled = True
        self.query_one(RecordTab).clear()
        self.query_one(ResultsTab).clear()
        self.query_one(RandomMatchTab).clear()

    def _show_verification_failure(self, line: str, generation: int | None = None) -> None:
        if generation is not None and generation != self._generation:
            return  # an older attempt, overtaken by a newer one
        self._verification_failed = True
        self.query_one(ReleaseTab).show_failure(line)
        self._goto("release")

    async def _show_verified(self, prepared: Prepared, standing: Standing, generation: int,
                             others: tuple[Prepared, ...] = ()) -> None:
        if generation != self._generation:
            return
        self._verification_failed = False
        self._prepared, self._standing, self._other_prepared = prepared, standing, others
        self.refresh_bindings()  # Ctrl+R is offered where the release has ranks (check_action)
        self.query_one(ResultsTab).unwitnessed = standing.unwitnessed
        facts = release_facts(prepared.release, prepared.formula_cells)
        together = [("together with", f"{o.release.path}: dataset {json.dumps(o.release.dataset_id)} version "
                                      f"{o.release.release_version}, verified with the same key") for o in others]
        self.query_one(ReleaseTab).show_verified([*facts, ("log", standing.words()), *together])
        self._goto("release")
        record = self.query_one(RecordTab)
        await record.build_form(prepared.schema)
        self.query_one("#record", TabPane).disabled = False
        if self._record_path:
            path, self._record_path = self._record_path, None
            record.load_file(path)

    # ------------------------------------------------------------------ her record and results

    @on(RecordTab.Checked)
    def _run_check(self, message: RecordTab.Checked) -> None:
        self._cancel_random()
        self._random = None
        self.query_one(RecordTab).status("Checking ...")
        assert self._prepared is not None
        self._check_worker(self._prepared, self._other_prepared, message.keys)

    @work(thread=True, exclusive=True, group="check")
    def _check_worker(self, prepared: Prepared, others: tuple[Prepared, ...], keys: np.ndarray) -> None:
        check = check_record(prepared, keys)
        joint = None if not others else check_jointly(
            [check_record(p, keys, whole_space=p.ranks_apply) for p in (prepared, *others)], policy=self.policy,
            samples=self._samples, seed=self._seed)
        self.call_from_thread(self._show_results, check, joint)

    def _show_results(self, check: SubjectCheck, joint: JointCheck | None = None) -> None:
        if check.prepared is not self._prepared:
            return  # computed for a release that has since been closed
        self._check, self._joint = check, joint
        self.query_one(ResultsTab).show_together(joint)
        self.query_one(RecordTab).status("Checked: see your results (F4).")
        self.query_one("#results", TabPane).disabled = False
        self.query_one("#random", TabPane).disabled = not check.ranks_apply  # generalized cells have no ranks
        self.query_one(RandomMatchTab).ready(check.prepared.n_records ** len(check.prepared.kinds))
        # her level needs the random-match test where ranks apply, as `verifier check` runs it: it starts at
        # once, and her results say "checking" until it ends (Escape cancels it, and her level then says so)
        testing = check.ranks_apply and self.query_one(RandomMatchTab).options() is not None
        self.query_one(ResultsTab).show(check, checking=testing)
        self._goto("results")
        if testing:
            self._start_random()

    # ------------------------------------------------------------------ random-match test

    @on(RandomMatchTab.Run)
    def _run_pressed(self) -> None:
        self.action_run_random()

    @on(RandomMatchTab.Cancel)
    def _cancel_pressed(self) -> None:
        self._cancel_random()

    # ------------------------------------------------------------------ export

    def report_json(self) -> dict[str, Any]:
        """Her report as ``verifier check --json`` gives it."""
        assert self._check is not None
        return report_json(self._check, self._random, self.policy, self._standing, self._joint)

    def _export(self, choice: tuple[str, str] | None) -> None:
        if choice is None or self._check is None:
            return
        fmt, path = choice
        written, sentence = write_report(path, report_text(self._check, self._random, self.policy, fmt, self._standing,
                                                           self._joint))
        self.notify(sentence, severity="information" if written else "error", markup=False)

    # ------------------------------------------------------------------ failures

    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error: forget her record and exit with one line, never a traceback with locals."""
        self._return_code = INTERNAL_ERROR_EXIT
        self._prepared = self._check = self._random = None
        self._exit_renderables.extend(failure_lines(error, verbose=self._verbose))
        self._close_messages_no_wait()
