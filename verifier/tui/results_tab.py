"""F4, the results tab: her distance, the matching records and their deviations, the spreads against the
claimed (D, v) and her own thresholds, attribute disclosure, and the verdict in words."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Input, Static

from verifier.attacks.intruder import SubjectReport
from verifier.releases.record import parse_number
from verifier.attacks.classes import mask_probability
from verifier.releases.group_check import GroupCheck, masked_line
from verifier.releases.joint import JointCheck
from verifier.releases.subject import SubjectCheck
from verifier.releases.policy import Policy
from verifier.releases.plain_words import POLICY_WORDS, plain_parts
from verifier.releases.verdict import NO_PROOF
from verifier.text import figure, literal, plural
from verifier.tui.picture import VerdictPicture

__all__ = ["ResultsTab", "fill_table"]

MATCHES_HEADING = "Released records that match you, and their rank deviations:"
#: what a heading adds when its table is wider than the window
SIDEWAYS = " (wider than the window: scroll it sideways with the arrow keys, Home and End, or shift+wheel)"

#: the headline's colour for each verdict level
LEVEL_STYLES = {"protected": "green", "at_risk": "yellow", "exposed": "red", "not_verifiable": "red"}

#: matching records listed before the rest are summed up in one row
SHOWN_MATCHES = 200


class ResultsTab(VerticalScroll):
    """Shows one :class:`SubjectCheck`; her thresholds are read and checked live as she types."""

    def __init__(self, policy: Policy, **kwargs) -> None:
        super().__init__(**kwargs)
        self._check: SubjectCheck | None = None
        self._policy = policy
        self.unwitnessed: str | None = NO_PROOF
        """Her verdict's unwitnessed notice for the release open (None: a quorum of witnesses cosigned it)."""

    def compose(self) -> ComposeResult:
        yield VerdictPicture("", id="picture", markup=False)
        yield Static("", id="verdict", markup=False)
        together = Static("", id="together", markup=False)
        together.display = False
        yield together
        yield Static(MATCHES_HEADING, id="matches-heading", classes="heading", markup=False)
        yield DataTable(id="deviations", cursor_type="row", zebra_stripes=True)
        yield Static("Spread around your record:", classes="heading ranks-only", markup=False)
        yield DataTable(id="variances", cursor_type="row", classes="ranks-only")
        with Horizontal(classes="row ranks-only"):
            yield Static("Your threshold d", classes="name", markup=False)
            yield Input(id="my-d", compact=True, placeholder="an integer, 0 or more")
        with Horizontal(classes="row ranks-only"):
            yield Static("Your threshold v", classes="name", markup=False)
            yield Input(id="my-v", compact=True, placeholder="one number, or one per attribute, comma-separated")
        yield Static("", id="threshold-status", classes="ranks-only", markup=False)
        yield Static("Attribute disclosure:", classes="heading", markup=False)
        yield DataTable(id="disclosure", cursor_type="row")

    def clear(self) -> None:
        """Forget her results and thresholds."""
        self._check = None
        self.show_together(None)
        for selector in ("#verdict", "#threshold-status"):
            self.query_one(selector, Static).update("")
        self.query_one("#picture", VerdictPicture).show(None)
        for selector in ("#deviations", "#variances", "#disclosure"):
            self.query_one(selector, DataTable).clear(columns=True)
        for selector in ("#my-d", "#my-v"):
            self.query_one(selector, Input).value = ""

    def show(self, check: SubjectCheck | GroupCheck, *, checking: bool = False) -> None:
        """Her results; with ``checking``, no level until the random-match test that decides it has run."""
        for widget in self.query(".ranks-only"):
            widget.display = check.ranks_apply
        if not check.ranks_apply:
            self._show_group(check)
            return
        self.query_one("#matches-heading", Static).update(MATCHES_HEADING)
        self._check = check
        if checking:
            self.query_one("#picture", VerdictPicture).show(None)
            self.query_one("#verdict", Static).update(Text.assemble(
                ("CHECKING: ", "bold"), "the random-match test is running (F5 shows how far it is); your level "
                "is shown here when it ends, as `verifier check` gives it. Escape cancels it."))
        else:
            self.show_verdict(None)
        names = check.names
        rows = [[str(int(m) + 1), *[str(int(t)) for t in dev]]
                for m, dev in zip(check.result.matches[:SHOWN_MATCHES], check.result.deviations[:SHOWN_MATCHES])]
        if check.result.matches.size > SHOWN_MATCHES:
            rows.append([f"+{check.result.matches.size - SHOWN_MATCHES}", *["" for _ in names]])
        fill_table(self.query_one("#deviations", DataTable), ["match", *names], rows)
        self.call_after_refresh(self._say_sideways)
        my_d = self.query_one("#my-d", Input)
        if not my_d.value:
            my_d.value = str(check.claimed_distance if check.claimed_distance is not None else check.distance)
        # setting a d it already holds fires no change, so the spreads are shown here too
        self.show_thresholds()
        self._show_disclosure(check.disclosure)

    def _show_group(self, check: GroupCheck) -> None:
        """A generalized release: her group's published cells, and her risks; no ranks, no spreads."""
        self._check = None
        people = plural(check.class_size, "person", plural_form="people")
        fakes = f", {check.counterfeits} of them counterfeit: {people} behind them" if check.counterfeits else ""
        q = mask_probability(check.prepared.release.methods)
        masks = [said for name in check.disclosure
                 if (said := masked_line(name, check.rows, check.prepared.published.cells[name], q,
                                         check.disclosure[name].get("masks")))]
        self._write_verdict(check.to_json(policy=self._policy, unwitnessed=self.unwitnessed),
                            f"Released records consistent with your values: {len(check.rows)}{fakes}, in "
                            f"{plural(check.classes, 'published group')}; the publisher claims k = "
                            f"{check.claimed_k}." + "".join(f"\n\n{said}" for said in masks))
        self.query_one("#matches-heading", Static).update("Released records consistent with your values, as published:")
        qi = [a.name for a in check.prepared.published.quasi_identifiers]
        text = check.prepared.published.text
        rows = [[str(r), *[text[n][r - 1] for n in qi]] for r in check.rows[:SHOWN_MATCHES]]
        if len(check.rows) > SHOWN_MATCHES:
            rows.append([f"+{len(check.rows) - SHOWN_MATCHES}", *["" for _ in qi]])
        fill_table(self.query_one("#deviations", DataTable), ["row", *qi], rows)
        self._show_disclosure(check.disclosure, best_guess=True)
        self.call_after_refresh(self._say_sideways)

    def _say_sideways(self) -> None:
        """The heading of her matches or group says so when the table is wider than the window."""
        table = self.query_one("#deviations", DataTable)
        heading = self.query_one("#matches-heading", Static)
        text = str(heading.render()).removesuffix(SIDEWAYS)
        # a table on a tab not shown yet has no size: the window's width stands for it
        wide = table.virtual_size.width > (table.size.width or self.app.size.width - 2)
        heading.update(text + (SIDEWAYS if wide else ""))

    def _show_disclosure(self, disclosure: dict, *, best_guess: bool = False) -> None:
        header = ["sensitive attribute", "risk", "base rate", "beta", "candidates",
                  *(["best guess"] if best_guess else []), "how"]
        rows = [[name, figure(r["risk"]), figure(r["prior"]), figure(r["beta"]), str(r["candidates"]),
                 *([str(r["best_guess"])] if best_guess else []), r["mode"]] for name, r in disclosure.items()]
        fill_table(self.query_one("#disclosure", DataTable), header,
                   rows or [["(the schema marks no sensitive attribute)", *[""] * (len(header) - 1)]])

    def show_together(self, joint: JointCheck | None) -> None:
        """With other releases of her (``verifier tui --with``), her joint verdict as ``verifier joint`` gives it,
        and each release's level alone; hidden without them."""
        widget = self.query_one("#together", Static)
        widget.display = joint is not None
        if joint is None:
            widget.update("")
            return
        out = joint.to_json()
        own = [r["level_alone"] for r in out["releases"]]
        text = Text()
        text.append(f"TOGETHER WITH {plural(len(own) - 1, 'OTHER RELEASE')}: ", style="bold")
        _plain_block(text, out)
        text.append("\n\nEach release alone: " + "; ".join(
            f"{literal(c.prepared.release.path)} {level.replace('_', ' ')}" for c, level in zip(joint.checks, own)))
        widget.update(text)

    def _write_verdict(self, out: dict, closing: str) -> None:
        """Her verdict (:func:`_plain_block`), then ``closing``; her pictures above it."""
        text = Text()
        _plain_block(text, out)
        text.append("\n\n" + closing)
        self.query_one("#verdict", Static).update(text)
        self.query_one("#picture", VerdictPicture).show(out)

    def show_verdict(self, random: SubjectReport | None) -> None:
        """The verdict in words, with the random-match test's result once she has run it."""
        assert self._check is not None
        self._write_verdict(self._check.to_json(random, self._policy, unwitnessed=self.unwitnessed),
                            f"Permutation distance {self._check.distance}; "
                            f"{plural(self._check.result.matches.size, 'released record')} "
                            f"{'matches' if self._check.result.matches.size == 1 else 'match'}.")

    @on(Input.Changed, "#my-d, #my-v")
    def _thresholds_typed(self) -> None:
        self.show_thresholds()

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

    def show_thresholds(self) -> None:
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
        fill_table(self.query_one("#variances", DataTable), header, rows)


def _plain_block(text: Text, out: dict) -> None:
    """Append her check's (or joint check's) plain words to ``text``: the level coloured (bold, then green, yellow
    or red) with the summary, what she can do, the details (:func:`verifier.releases.plain_words.plain_parts`),
    then the verdict policy's own sentences."""
    verdict, words = out["verdict"], out["plain"]
    text.append(f"{verdict['level'].replace('_', ' ').upper()}: ", style=f"bold {LEVEL_STYLES[verdict['level']]}")
    text.append(words["summary"][0], style="bold")
    text.append(" " + " ".join(words["summary"][1:]))
    rest = "\n\n".join(plain_parts(out)[1:]).split("\n")
    text.append("\n\n" + "\n".join(map(literal, [*rest, "", POLICY_WORDS, *verdict["lines"]])))


def fill_table(table: DataTable, header: list[str], rows: list[list[str]]) -> None:
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
