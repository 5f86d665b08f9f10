"""The subject's TUI (issue 7; SPEC section 10.1; spec/reliability.md cases 33-35).

Every test drives the real app with Textual's pilot on releases signed in
the test (or the frozen golden release, for byte-stable snapshots), and
compares what the app shows with what ``verifier check --json`` prints.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import DataTable, Input, Select, Static, TabbedContent, TabPane

from conftest import PAPER, write
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.releases.plain_words import POLICY_WORDS
from verifier.releases.verification import load_public_key
from verifier.tui import INTERNAL_ERROR_EXIT, SubjectApp, histogram_lines
from verifier.text import number

GOLDEN = Path(__file__).parent / "data" / "golden"
RECORD = {"x1": 100.87, "x2": 902.21, "x3": 5108.54}
HOSTILE_NAMES = ["age [years]", "[/]", "[link=https://evil.example]Verified[/link]"]
HOSTILE_CATEGORIES = ["\rOK", "[b]bold[/b]", "\x1b[31mred", "plain"]
SENSITIVE = "grade [red]x[/red]"  # markup, shown as it is (a control character in a name is refused: issue 37)


# ----------------------------------------------------------------------------- releases signed here


def _release(tmp: Path, source: Path, *extra: str, dataset: str = "tui-test") -> tuple[Path, Path]:
    assert publisher(["keygen", "--out", str(tmp / "keys"), "--unencrypted"]) == 0
    out = tmp / "release"
    assert publisher(["release", "--input", str(source), *extra, "--key", str(tmp / "keys" / "private.pem"),
                      "--public-key", str(tmp / "keys" / "public.pem"), "--dataset-id", dataset, "--seed", "5",
                      "--out", str(out)]) == 0
    return out, tmp / "keys" / "public.pem"


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    """The paper example, noise-added and reverse-mapped, signed with a key made here."""
    return _release(tmp_path_factory.mktemp("paper"), PAPER / "original.csv", "--method", "additive_noise",
                    "--param", "relative_sd=0.8", "--then", "reverse_mapping")


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """3000 records: a Monte Carlo test long enough to watch and to cancel."""
    tmp = tmp_path_factory.mktemp("large")
    rng = np.random.default_rng(3)
    rows = "\n".join(",".join(f"{v:.4f}" for v in r) for r in rng.normal(size=(3000, 3)) * [1, 10, 100])
    source = write(tmp / "x.csv", "a,b,c\n" + rows + "\n")
    return _release(tmp, source, "--method", "rank_swapping", "--param", "p=5")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Column names, categories and a dataset id written to attack a terminal (case 35)."""
    tmp = tmp_path_factory.mktemp("hostile")

    def q(s: str) -> str:
        return '"' + s.replace('"', '""') + '"'

    rng = np.random.default_rng(4)
    lines = [",".join(q(n) for n in [*HOSTILE_NAMES[:3], SENSITIVE])]
    for i in range(40):
        lines.append(",".join([str(20 + i), f"{rng.uniform(0, 100):.2f}", f"{rng.uniform(0, 10):.3f}",
                               q(HOSTILE_CATEGORIES[i % 4])]))
    source = write(tmp / "x.csv", "\n".join(lines) + "\n")
    schema = {"attributes": [{"name": n, "kind": "numeric", "role": "quasi_identifier"} for n in HOSTILE_NAMES[:3]]
              + [{"name": SENSITIVE, "kind": "ordinal", "categories": HOSTILE_CATEGORIES, "role": "sensitive"}]}
    schema_path = write(tmp / "schema.json", json.dumps(schema))
    return _release(tmp, source, "--schema", str(schema_path), "--method", "rank_swapping", "--param", "p=20",
                    "--allow-formula-cells", dataset="[b]evil[/b] [/] [link=https://evil.example]x[/link]")


# ----------------------------------------------------------------------------- helpers


@contextlib.asynccontextmanager
async def opened(release: Path, key: Path | None, *, size: tuple[int, int] = (80, 24), **options):
    """The app on ``release`` with ``key``, its verification finished."""
    app = SubjectApp(str(release), None if key is None else str(key), **options)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        yield app, pilot


def pilot_test(test):
    """Run an ``async`` test (it drives the app with ``App.run_test()``) in its own event loop."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return run


async def settle(pilot) -> None:
    """Let messages run and every worker finish (a worker starts one message after its trigger)."""
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def shown(app, selector: str) -> str:
    """The plain text a Static shows."""
    return str(app.query_one(selector, Static).render())


def cells(app, selector: str) -> list[list[str]]:
    table = app.query_one(selector, DataTable)
    return [[str(c) for c in table.get_row_at(r)] for r in range(table.row_count)]


def everything_shown(app) -> str:
    """All text of the current screen, as the SVG screenshot has it."""
    return app.export_screenshot()


async def fill(pilot, values: list[str]) -> None:
    await pilot.press("f3")
    await pilot.pause()
    for j, v in enumerate(values):
        pilot.app.query_one(f"#field-{j}", Input).value = v
    await pilot.pause()


async def press_button(pilot, selector: str) -> None:
    """Keyboard only: focus the button and press Enter."""
    pilot.app.screen.query_one(selector).focus()
    await pilot.press("enter")
    await settle(pilot)


def cli_report(release: Path, key: Path, record: Path, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert verifier(["check", str(release), "--key", str(key), "--record", str(record), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


# ----------------------------------------------------------------------------- 1. verification


@pilot_test
async def test_verified_release_shows_who_signed_what_first(paper):
    release, key = paper
    async with opened(release, key, size=(80, 24)) as (app, pilot):
        text = shown(app, "#verification")
        fingerprint = load_public_key(key).fingerprint
        assert text.startswith("VERIFIED")
        for fact in (fingerprint, '"tui-test"', "version        1", "additive_noise", "relative_sd  0.8",
                     "reverse_mapping", "the random seed only"):
            assert fact in text
        # the claims are the publisher's word, not facts the TUI checked (issue 59, item 9)
        assert "as the publisher signed them, not recomputed here" in " ".join(text.split())
        assert app.query_one("#verification").region.y < app.query_one("#release-dir").region.y
        assert not app.query_one("#record", TabPane).disabled
        assert app.return_code is None
        await pilot.press("ctrl+q")
    assert app.return_code == 0


@pilot_test
async def test_failed_verification_shows_its_reason_and_no_metric(paper, tmp_path):
    release, key = paper
    broken = tmp_path / "broken"
    import shutil

    shutil.copytree(release, broken)
    data = broken / "release.csv"
    data.write_bytes(data.read_bytes().replace(b"1", b"2", 1))
    async with opened(broken, key, size=(80, 24)) as (app, pilot):
        text = shown(app, "#verification")
        assert text.startswith("NOT VERIFIED") and "DIGEST_MISMATCH" in text and "Nothing from this release" in text
        for pane in ("record", "results", "random"):
            assert app.query_one(f"#{pane}", TabPane).disabled
        assert not app.query("#field-0") and app._prepared is None
        await pilot.press("f3", "f4", "f5")
        assert app.query_one(TabbedContent).active == "release"
        # the real key of the unbroken release then verifies in the same session
        app.query_one("#release-dir", Input).value = str(release)
        await press_button(pilot, "#verify")
        assert shown(app, "#verification").startswith("VERIFIED")
        await fill(pilot, [str(RECORD[n]) for n in ("x1", "x2", "x3")])
        await press_button(pilot, "#check")
        assert app._check is not None and app.query_one("#deviations", DataTable).row_count == 1
        # opening another release forgets her results: nothing of the first one stays on any tab
        app.query_one("#release-dir", Input).value = str(broken)
        await press_button(pilot, "#verify")
        assert app.query_one("#record", TabPane).disabled and not app.query("#field-0")
        assert app._check is None and shown(app, "#verdict") == "" and shown(app, "#histogram") == ""
        assert all(app.query_one(t, DataTable).row_count == 0 for t in ("#deviations", "#variances", "#disclosure"))
        await pilot.press("ctrl+q")
    assert app.return_code == 1


@pilot_test
async def test_a_pinned_fingerprint_that_differs_refuses_the_key(paper):
    release, key = paper
    async with opened(release, key, fingerprint="00" * 32) as (app, pilot):
        assert "KEY_MISMATCH" in shown(app, "#verification") and app.query_one("#record", TabPane).disabled


@pilot_test
async def test_no_key_given_asks_for_one_and_verifies_nothing(paper):
    release, _ = paper
    app = SubjectApp(str(release), None)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.focused is app.query_one("#key-path")
        assert "VERIFIED" not in shown(app, "#verification")
        await press_button(pilot, "#verify")
        assert shown(app, "#verification").startswith("NOT VERIFIED")


# ----------------------------------------------------------------------------- 2-3. record and results


@pilot_test
async def test_results_equal_the_command_line_report(paper, tmp_path, capsys):
    release, key = paper
    record = write(tmp_path / "me.json", json.dumps(RECORD))
    expected = cli_report(release, key, record, capsys)
    async with opened(release, key, size=(120, 40)) as (app, pilot):
        await fill(pilot, [str(RECORD[n]) for n in ("x1", "x2", "x3")])
        await press_button(pilot, "#check")  # her check, then the random-match test her level needs, on its own
        assert app.query_one(TabbedContent).active == "results"
        assert f"Permutation distance {expected['distance']};" in shown(app, "#verdict")
        assert expected["verdict"]["level"] == "protected"  # the level `verifier check` gives, and no other
        # her verdict in plain words first, as `verifier check` prints it, then the policy's own sentences
        verdict = shown(app, "#verdict")
        assert verdict.startswith("PROTECTED: " + " ".join(expected["plain"]["summary"])), verdict
        assert f"{POLICY_WORDS}\n{expected['verdict']['headline']}" in verdict
        assert app.report_json() == expected
        rows = cells(app, "#deviations")
        assert [int(r[0]) for r in rows] == expected["matches"]
        assert [[int(t) for t in r[1:]] for r in rows] == expected["deviations"]
        spread = cells(app, "#variances")
        assert [r[0] for r in spread] == expected["attributes"]
        for row, own, at_claimed, claimed in zip(spread, expected["variances"],
                                                 expected["variances_at_claimed_distance"],
                                                 expected["claimed"]["variances"]):
            assert [float(row[2]), float(row[3]), float(row[4])] == pytest.approx([own, at_claimed, claimed], rel=1e-3)
        await pilot.press("ctrl+r")  # run again: the same test, the same report
        await settle(pilot)
        report = app.report_json()
        assert report["p_value"] == expected["p_value"] and report["random_distribution"] == expected["random_distribution"]
        assert {k: v for k, v in report.items()} == expected
        status = shown(app, "#random-status")
        assert f"F_rand({expected['distance']}) = {expected['p_value']:.4f}" in status
        assert status.startswith(f"A random record matches as closely {number(expected['p_value'], share=True)} of the time")
        assert f"<- you ({expected['distance']})" in shown(app, "#histogram")
        assert expected["verdict"]["level"] == "protected"
        assert shown(app, "#verdict").startswith("PROTECTED: " + " ".join(expected["plain"]["summary"]))


@pilot_test
async def test_a_record_file_fills_the_form_and_checks(paper, tmp_path, capsys):
    release, key = paper
    record = write(tmp_path / "me.csv", "x3,x1,x2\n5108.54,100.87,902.21\n")
    expected = cli_report(release, key, record, capsys)
    async with opened(release, key, record_path=str(record)) as (app, pilot):
        await settle(pilot)
        assert [app.query_one(f"#field-{j}", Input).value for j in range(3)] == ["100.87", "902.21", "5108.54"]
        assert app.report_json() == expected


@pilot_test
async def test_her_thresholds_are_checked_as_she_types(paper):
    release, key = paper
    async with opened(release, key, size=(120, 40)) as (app, pilot):
        await fill(pilot, [str(RECORD[n]) for n in ("x1", "x2", "x3")])
        await press_button(pilot, "#check")
        d = app._check.distance
        spread = app._check.spread_at(d)
        app.query_one("#my-d", Input).value = str(d)
        app.query_one("#my-v", Input).value = ", ".join(f"{s / 2:.6g}" for s in spread)
        await pilot.pause()
        assert shown(app, "#threshold-status").startswith(f"Your ({d}, v): holds")
        assert [float(r[5]) for r in cells(app, "#variances")] == pytest.approx(spread, rel=1e-3)
        app.query_one("#my-v", Input).value = f"{spread.max() * 2:.6g}"
        await pilot.pause()
        assert "does NOT hold" in shown(app, "#threshold-status")
        app.query_one("#my-d", Input).value = str(d + 1)
        app.query_one("#my-v", Input).value = ""
        await pilot.pause()
        assert "does NOT hold" in shown(app, "#threshold-status") and f"< {d + 1}" in shown(app, "#threshold-status")
        for bad, why in [("-1", "whole number"), ("x", "whole number"), ("99999", "below the number")]:
            app.query_one("#my-d", Input).value = bad
            await pilot.pause()
            assert why in shown(app, "#threshold-status")
        app.query_one("#my-d", Input).value = "1"
        app.query_one("#my-v", Input).value = "1, 2"
        await pilot.pause()
        assert "one per attribute" in shown(app, "#threshold-status")


# case 33: every entry is refused beside its field, and the values never reach a message
BAD_ENTRIES = ["1_000", "１２３", "٣", "nan", "infinity", "1e999", "−5", "5,5"]


@pilot_test
async def test_case_33_form_validation_inline(paper):
    release, key = paper
    async with opened(release, key, size=(80, 24)) as (app, pilot):
        await pilot.press("f3")
        field = app.query_one("#field-0", Input)
        field.focus()
        await pilot.press(*"1_000")  # typed key by key: refused while she types
        assert field.value == "1_000" and field.has_class("-invalid")
        assert "not a decimal number" in shown(app, "#error-0")
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        assert field.value == "1" and not field.has_class("-invalid") and shown(app, "#error-0") == ""
        for bad in BAD_ENTRIES:
            field.value = bad
            await pilot.pause()
            assert field.has_class("-invalid"), bad
            message = shown(app, "#error-0")
            assert message.startswith("this value is ") and bad not in message, bad
        app.query_one("#field-1", Input).value = "902.21"
        await press_button(pilot, "#check")  # x3 empty, x1 invalid
        assert shown(app, "#record-status") == "2 fields need your attention."
        assert shown(app, "#error-2") == "this value is required"
        assert app._check is None and app.query_one("#results", TabPane).disabled


@pytest.mark.parametrize("content, name, reason", [
    ("x1,x2,x3\n1,2,3\n4,5,6\n", "two.csv", "RECORD_INVALID"),
    ("x1,x2,x3\n1,2\n", "short.csv", "CSV_MALFORMED"),
    ("x1,x2,x9\n1,2,3\n", "unknown.csv", "RECORD_FIELD_UNKNOWN"),
    ('{"x1": 1, "x2": 2, "x3": 3, "age": 4}', "unknown.json", "RECORD_FIELD_UNKNOWN"),
    ('{"x1": 1, "x2": 2}', "missing.json", "RECORD_FIELD_MISSING"),
    ('{"x1": "8765.4321x", "x2": 2, "x3": 3}', "bad.json", "RECORD_VALUE_INVALID"),
])
@pilot_test
async def test_case_33_record_files_refused_inline(paper, tmp_path, content, name, reason):
    release, key = paper
    path = write(tmp_path / name, content)
    async with opened(release, key) as (app, pilot):
        await pilot.press("f3")
        app.query_one("#record-file", Input).value = str(path)
        await press_button(pilot, "#load")
        status = shown(app, "#record-status")
        assert reason in status and status.startswith(f"FAIL: {path}:")
        assert "8765" not in status and app._check is None


def test_case_33_record_on_the_command_line_exit_2(paper, tmp_path, capsys):
    release, key = paper
    record = write(tmp_path / "me.json", json.dumps(RECORD))
    for argv in (["check", str(release), "--key", str(key), "--record", '{"x1": 8765.4321, "x2": 1, "x3": 2}'],
                 ["check", str(release), "--key", str(key), "--record", "8765.4321"],
                 ["check", str(release), "--key", str(key), "--record", str(record), "--x1", "8765.4321"],
                 ["check", str(release), "--key", str(key), "--record", str(record), "8765.4321"],
                 ["tui", str(release), "--key", str(key), "8765.4321", "902.21"],
                 ["tui", str(release), "--key", str(key), "--record", "x1=8765.4321"],
                 ["check", str(release), "--key", str(key), "--record", '{"x1": 8765.4321, "pad": "' + "x" * 300 + '"}'],
                 ["check", str(release), "--key", str(key), "--record", "8765.4321\x00"],
                 ["check", str(release), "--key", str(key), "--record", "8765.4321,902.21,5108.54"],
                 ["check", str(release), "--key", str(key), "--record", "1e3"],
                 ["intruder", "--anonymized", str(release / "release.csv"), "--subject-record", "8765.4321,1,2"]):
        assert verifier(argv) == 2, argv
        err = capsys.readouterr().err
        assert "RECORD_ON_COMMAND_LINE" in err and "8765" not in err, argv


def test_a_missing_record_file_with_a_plain_name_is_named(paper, tmp_path, capsys):
    release, key = paper
    missing = tmp_path / "my_record.json"
    assert verifier(["check", str(release), "--key", str(key), "--record", str(missing)]) == 3
    assert f"FAIL: {missing}: FILE_NOT_FOUND" in capsys.readouterr().err


def test_tui_needs_a_terminal(paper, capsys):
    release, key = paper
    assert verifier(["tui", str(release), "--key", str(key)]) == 2
    assert "NO_TERMINAL" in capsys.readouterr().err


# ----------------------------------------------------------------------------- 4. random-match worker


@pilot_test
async def test_random_match_progress_and_cancel(large):
    release, key = large
    async with opened(release, key, samples=10_000_000) as (app, pilot):  # the most a test draws: long enough to cancel
        await fill(pilot, ["0.1", "1.5", "-20"])
        app.screen.query_one("#check").focus()
        await pilot.press("enter")  # her check starts the random-match test her level needs, on its own
        for _ in range(400):  # the worker reports progress while the UI stays live
            await pilot.pause(0.02)
            if app.progress_seen:
                break
        assert app.progress_seen and 0 < app.progress_seen[-1][0] < app.progress_seen[-1][1] == 10_000_000
        assert not app.query_one("#cancel").disabled
        # no level before the test that decides it has run
        checking = shown(app, "#verdict")
        assert checking.startswith("CHECKING: the random-match test is running")
        assert not any(level in checking for level in ("PROTECTED", "AT RISK", "EXPOSED"))
        await pilot.press("escape")
        await settle(pilot)
        seen = len(app.progress_seen)
        assert shown(app, "#random-status").startswith("Cancelled")
        assert app._random is None and app.query_one("#cancel").disabled and not app.query_one("#run").disabled
        assert not list(app.workers) and len(app.progress_seen) == seen
        assert app.report_json()["p_value"] is None
        # cancelled: her level is the command line's without the test, and says why
        assert shown(app, "#verdict").startswith("AT RISK: Your record is at risk. The test of whether your record "
                                                 "stands out was not run")
        assert f"{POLICY_WORDS}\nThe random-match test was not run" in shown(app, "#verdict")
        # a smaller run then completes, with progress to 100%
        app.query_one("#samples", Input).value = "50000"
        await press_button(pilot, "#run")
        assert app.progress_seen[-1] == (50_000, 50_000)
        assert app.report_json()["random_records"] == 50_000 and app.report_json()["random_method"] == "monte_carlo"
        assert "Monte Carlo, 95% interval" in shown(app, "#random-status")


@pilot_test
async def test_random_match_options_are_validated(paper):
    release, key = paper
    async with opened(release, key) as (app, pilot):
        await fill(pilot, [str(RECORD[n]) for n in ("x1", "x2", "x3")])
        await press_button(pilot, "#check")
        await pilot.press("f5")
        first = app._random  # the run her check started with the default options
        assert first is not None
        for field, value, why in [("#alpha", "1.5", "alpha"), ("#alpha", "nan", "alpha"), ("#samples", "0", "samples"),
                                  ("#samples", "1e3", "samples"), ("#samples", "10000001", "samples")]:
            app.query_one("#alpha", Input).value = "0.01"
            app.query_one("#samples", Input).value = "1000"
            app.query_one(field, Input).value = value
            await press_button(pilot, "#run")
            assert why in shown(app, "#random-status") and app._random is first  # refused: nothing run


def test_histogram_marks_her_distance():
    lines = histogram_lines(np.array([0.1, 0.2, 0.7]), 1, width=10)
    assert lines == ["distance  random records", "       0  █              10%",
                     "       1  ███            20%  <- you (1)", "       2  ██████████     70%"]
    # the one number format of the command line and the page (0.25% was 0.2% here and 0.3% in the page)
    assert histogram_lines(np.array([0.0025, 0.9975]), 0, width=4)[1].endswith(" 0.25%  <- you (0)")
    binned = histogram_lines(np.full(100, 0.01), 57, rows=10)
    assert len(binned) == 11 and binned[6].startswith("   50-59") and binned[6].endswith("<- you (57)")
    assert sum("<- you" in line for line in binned) == 1


# ----------------------------------------------------------------------------- 5. export


@pilot_test
async def test_export_only_on_request_json_and_markdown(paper, tmp_path, capsys, monkeypatch):
    release, key = paper
    monkeypatch.chdir(tmp_path)
    record = write(tmp_path / "me.json", json.dumps(RECORD))
    expected = cli_report(release, key, record, capsys)
    before = sorted(p.name for p in tmp_path.iterdir())
    async with opened(release, key, size=(80, 24)) as (app, pilot):
        await pilot.press("ctrl+e")  # nothing to export yet
        assert len(app.screen_stack) == 1
        await fill(pilot, [str(RECORD[n]) for n in ("x1", "x2", "x3")])
        await press_button(pilot, "#check")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written unasked
        await pilot.press("ctrl+e")
        await pilot.pause()
        await press_button(pilot, "#export-json")
        await pilot.press("ctrl+e")
        await pilot.pause()
        await press_button(pilot, "#export-md")
        await pilot.press("ctrl+e")
        await pilot.pause()
        await press_button(pilot, "#export-json")  # exists: refused, not overwritten
        await pilot.press("ctrl+e")
        await pilot.pause()
        await pilot.press("escape")
        assert len(app.screen_stack) == 1
        # Enter takes the file name shown, in the format its ending names (issue 60, item 8)
        await pilot.press("ctrl+e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = "entered.md"
        await pilot.press("enter")
        await pilot.pause()
        assert len(app.screen_stack) == 1
    assert (tmp_path / "entered.md").read_text() == (tmp_path / "my_report.md").read_text()
    (tmp_path / "entered.md").unlink()
    exported = json.loads((tmp_path / "my_report.json").read_text())
    assert exported == expected
    assert (tmp_path / "my_report.json").stat().st_mode & 0o777 == 0o600
    markdown = (tmp_path / "my_report.md").read_text()
    assert f"## Permutation distance: {expected['distance']}" in markdown
    assert f"p-value F_rand({expected['distance']}) = {expected['p_value']:.4f}" in markdown
    assert "902.21" not in markdown and "5108.54" not in markdown
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "my_report.json", "my_report.md"])


# ----------------------------------------------------------------------------- 6. help, keys, safety


@pilot_test
async def test_help_screen_and_keyboard_only(paper):
    release, key = paper
    async with opened(release, key, size=(80, 24)) as (app, pilot):
        await pilot.press("f1")
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        assert type(app.screen).__name__ == "Screen"
        # Tab order reaches every field and the Check button; Enter presses it
        await pilot.press("f3")
        await pilot.pause()
        for v in ("100.87", "902.21", "5108.54"):
            await pilot.press(*v, "tab")
        while app.focused is not None and app.focused.id != "check":
            await pilot.press("tab")
        await pilot.press("enter")
        await settle(pilot)
        assert app._check is not None and app.query_one(TabbedContent).active == "results"


@pilot_test
async def test_case_35_untrusted_strings_are_shown_literally(hostile, tmp_path, capsys):
    release, key = hostile
    expected = []  # the command line's report for each category (the app captures stdout while it runs)
    for k, category in enumerate(HOSTILE_CATEGORIES):
        record = write(tmp_path / f"me{k}.json", json.dumps({HOSTILE_NAMES[0]: 25, HOSTILE_NAMES[1]: 50,
                                                             HOSTILE_NAMES[2]: 5, SENSITIVE: category}))
        expected.append(cli_report(release, key, record, capsys))
    async with opened(release, key, size=(120, 40)) as (app, pilot):
        verification = shown(app, "#verification")
        assert verification.startswith("VERIFIED")
        assert '"[b]evil[/b] [/] [link=https://evil.example]x[/link]"' in verification  # markup shown, not acted on
        assert "10 text cells of release.csv start with =, +, -, @, a tab or a carriage return" in verification
        await pilot.press("f3")
        await pilot.pause()
        labels = [str(s.render()) for s in app.query(".row > .name")]
        for name in HOSTILE_NAMES[:3]:
            assert f"{name} (QI)" in labels
        select = app.query_one("#field-3", Select)
        prompts = [str(prompt) for prompt, value in select._options if isinstance(value, int)]
        assert prompts == ["\\x0dOK", "[b]bold[/b]", "\\x1b[31mred", "plain"]
        for j, v in enumerate(["25", "50", "5"]):
            app.query_one(f"#field-{j}", Input).value = v
        await press_button(pilot, "#check")
        assert shown(app, "#error-3") == "choose one of the categories" and app._check is None
        select.focus()
        await pilot.press("enter", "down", "down", "enter")  # the list, keyboard only
        chosen = select.value
        assert isinstance(chosen, int) and 0 <= chosen < 4
        await press_button(pilot, "#check")
        assert app._check is not None and shown(app, "#error-3") == ""
        assert app.report_json() == expected[chosen]
        assert [r[0] for r in cells(app, "#disclosure")] == [SENSITIVE]
        header = [str(c.label) for c in app.query_one("#deviations", DataTable).columns.values()]
        assert header == ["match", *HOSTILE_NAMES[:3], SENSITIVE]
        assert [r[0] for r in cells(app, "#variances")] == [*HOSTILE_NAMES[:3], SENSITIVE]
        assert f"Your {SENSITIVE} is guessed right" in shown(app, "#verdict")
        screen = everything_shown(app)
        assert "\x1b" not in screen and "\r" not in screen
        assert "[link=https://evil.example]Verified[/link]" in screen


def test_case_35_cli_output_literal(hostile, tmp_path, capsys):
    release, key = hostile
    record = write(tmp_path / "me.json", json.dumps({HOSTILE_NAMES[0]: 25, HOSTILE_NAMES[1]: 50,
                                                     HOSTILE_NAMES[2]: 5, SENSITIVE: "[b]bold[/b]"}))
    assert verifier(["check", str(release), "--key", str(key), "--record", str(record), "--no-random-match"]) == 0
    assert verifier(["verify", str(release), "--key", str(key)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "[link=https://evil.example]Verified[/link]" in out
    assert f"Your {SENSITIVE} is guessed right" in out  # the verdict names the column as it is, markup inert
    # an error about the record names the field escaped too
    bad = write(tmp_path / "bad.json", json.dumps({HOSTILE_NAMES[0]: 25, HOSTILE_NAMES[1]: 50,
                                                  HOSTILE_NAMES[2]: 5, SENSITIVE: "no such category"}))
    assert verifier(["check", str(release), "--key", str(key), "--record", str(bad)]) == 3
    err = capsys.readouterr().err
    assert "RECORD_VALUE_INVALID" in err and "\x1b" not in err


CRASH_SCRIPT = textwrap.dedent('''
    import asyncio
    import sys
    import verifier.releases.exposure as exposure
    from textual.app import App
    from verifier.tui import SubjectApp

    def boom(y, schema, record, **options):
        raise RuntimeError(f"injected mid-metric for {record!r}")

    if sys.argv[3] != "normal":
        exposure.record_disclosure = boom
    if sys.argv[3] == "textual-default":
        SubjectApp._handle_exception = App._handle_exception
    app = SubjectApp(sys.argv[1], sys.argv[2])

    async def drive(pilot):
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        await pilot.press("f3")
        await pilot.pause()
        for j, v in enumerate(["7391.123456", "902.21", "5108.54"]):
            app.query_one(f"#field-{j}").value = v
        app.query_one("#check").press()  # not pilot.press: that waits for a screen the crash takes away
        for _ in range(200):  # the app ends itself; the pilot must not touch it after that
            if not app.is_running or app._check is not None:
                break
            await asyncio.sleep(0.05)
        if app.is_running:  # the normal session: her results, the random-match test, then quit
            await pilot.press("ctrl+r")
            for _ in range(3):
                await pilot.pause()
                await app.workers.wait_for_complete()
            assert app._random is not None
            await pilot.press("ctrl+q")

    app.run(headless=True, size=(80, 24), auto_pilot=drive)
    sys.exit(app.return_code)
''')


def _crash(paper, tmp_path, mode: str) -> tuple[subprocess.CompletedProcess, list[Path]]:
    release, key = paper
    homes = [tmp_path / mode / d for d in ("home", "tmp", "cache")]
    for d in homes:
        d.mkdir(parents=True)
    env = {**os.environ, "HOME": str(homes[0]), "TMPDIR": str(homes[1]), "XDG_CACHE_HOME": str(homes[2])}
    env.pop("TEXTUAL", None)
    proc = subprocess.run([sys.executable, "-c", CRASH_SCRIPT, str(release), str(key), mode], env=env,
                          capture_output=True, text=True, timeout=120)
    return proc, homes


def test_case_34_an_exception_mid_metric_exits_cleanly_without_her_record(paper, tmp_path):
    proc, homes = _crash(paper, tmp_path, "ours")
    output = proc.stdout + proc.stderr
    assert proc.returncode == INTERNAL_ERROR_EXIT, output
    assert "INTERNAL_ERROR" in output and "RuntimeError" in output
    assert "7391" not in output and "Traceback" not in output
    for folder in homes:
        for path in folder.rglob("*"):
            assert not path.is_file() or b"7391" not in path.read_bytes(), path
    # the same crash under Textual's own handler prints her value: the test can fail
    leaked, _ = _crash(paper, tmp_path, "textual-default")
    assert "7391" in leaked.stdout + leaked.stderr


def test_case_34_a_whole_session_leaves_no_trace_of_her_record(paper, tmp_path):
    """Check and random-match test, then quit: exit 0, and nothing printed or written holds her value."""
    proc, homes = _crash(paper, tmp_path, "normal")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "7391" not in proc.stdout + proc.stderr
    for folder in homes:
        for path in folder.rglob("*"):
            assert not path.is_file() or b"7391" not in path.read_bytes(), path


def test_help_of_the_tui_command(capsys):
    with pytest.raises(SystemExit) as info:
        verifier(["tui", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "--key" in out and "--record" in out and "Exit codes" in out


# ----------------------------------------------------------------------------- snapshots (80x24 and 120x40)


def _golden(monkeypatch) -> SubjectApp:
    monkeypatch.chdir(GOLDEN)  # relative paths: the screen does not depend on where the repository is
    return SubjectApp("release", "public.pem")


async def _verified(pilot) -> None:
    await settle(pilot)


async def _form_errors(pilot) -> None:
    await settle(pilot)
    await fill(pilot, ["1_000", "", "5,5"])
    await press_button(pilot, "#check")


async def _results(pilot) -> None:
    await settle(pilot)
    await fill(pilot, [str(RECORD[n]) for n in ("x1", "x2", "x3")])
    await press_button(pilot, "#check")


async def _random_done(pilot) -> None:
    await _results(pilot)
    await pilot.press("ctrl+r")
    await settle(pilot)


async def _help(pilot) -> None:
    await settle(pilot)
    await pilot.press("f1")
    await pilot.pause()


def steady(step):
    """``step``, then a cursor that does not blink: a screenshot must not depend on when it is taken."""

    async def run(pilot) -> None:
        await step(pilot)
        for widget in pilot.app.screen.query(Input):
            widget.cursor_blink = False
        await pilot.pause()

    run.__name__ = step.__name__
    return run


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("step", [_verified, _form_errors, _results, _random_done, _help],
                         ids=["verified", "form-errors", "results", "random-match", "help"])
def test_snapshot(snap_compare, monkeypatch, step, size):
    assert snap_compare(_golden(monkeypatch), terminal_size=size, run_before=steady(step))


def test_snapshot_failed_verification(snap_compare, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    assert snap_compare(SubjectApp("release", "README.md"), terminal_size=(80, 24),
                        run_before=steady(_verified))


@pytest.mark.parametrize("doc, snapshot", [("tui-release.svg", "test_snapshot[verified-80x24]"),
                                           ("tui-results.svg", "test_snapshot[results-80x24]"),
                                           ("tui-random-match.svg", "test_snapshot[random-match-80x24]"),
                                           ("tui-k-anonymous.svg", "test_snapshot_k_anonymous_release")])
def test_screens_in_the_docs_are_the_current_snapshots(doc, snapshot):
    """docs/subject.md shows these screens; they must be what the app shows today."""
    docs = Path(__file__).parent.parent / "docs" / "img" / doc
    snap = Path(__file__).parent / "__snapshots__" / "test_tui" / f"{snapshot}.svg"
    assert docs.read_bytes() == snap.read_bytes(), f"copy {snap.name} to docs/img/{doc}"


def test_the_docs_pictures_of_her_verdict_are_the_tui_at_80x24(tmp_path):
    """docs/subject.md shows her verdict drawn (issue 53, item 4) as benchmarks.tui_screens exports it with
    Textual's SVG export; taken again, each screen holds her badge, her words and her picture, as the docs' copy."""
    from benchmarks.tui_screens import main as screens

    assert screens([str(tmp_path)]) == 0
    docs = Path(__file__).parent.parent / "docs" / "img"
    text = (Path(__file__).parent.parent / "docs" / "subject.md").read_text()
    for name, level, drawn in (("ward", "EXPOSED", ("guessed right:", "from this release", "without it",
                                                     "records in your group share your disease")),
                               ("paper", "PROTECTED", ("Random records by distance", "^ you: "))):
        assert f"img/tui-{name}-80x24.svg" in text
        for svg in (tmp_path / f"tui-{name}-80x24.svg", docs / f"tui-{name}-80x24.svg"):
            shown = svg.read_text().replace("&#160;", " ")
            assert f" {level} " in shown and f"Your record is {level.lower()}." in shown, svg
            assert all(words in shown for words in drawn), svg


def test_her_report_is_never_written_through_a_link_onto_a_device_or_into_a_release(paper, tmp_path):
    from verifier.tui.export import write_report

    release, _ = paper
    link = tmp_path / "report.md"
    link.symlink_to(tmp_path / "elsewhere.md")
    ok, said = write_report(str(link), "text")
    assert not ok and "OUTPUT_UNSAFE" in said and not (tmp_path / "elsewhere.md").exists()
    ok, said = write_report("/dev/null", "text")
    assert not ok and "OUTPUT_UNSAFE" in said and Path("/dev/null").is_char_device()
    ok, said = write_report(str(release / "my_report.md"), "text")
    assert not ok and "OUTPUT_INSIDE_RELEASE" in said and not (release / "my_report.md").exists()
    for name in (tmp_path / ("a" * 300) / "mine.md", tmp_path / ("a" * 300)):  # names the file system refuses
        ok, said = write_report(str(name), "text")  # said, and her session goes on
        assert not ok and "File name too long" in said and "\n" not in said, said
    ok, said = write_report(str(tmp_path / "mine.md"), "text")
    assert ok and (tmp_path / "mine.md").read_text() == "text"


# ----------------------------------------------------------------------------- a subject in a k-anonymous release

GOLDEN_KANON = Path(__file__).parent / "data" / "golden-kanon"


def _k_anonymous(monkeypatch) -> SubjectApp:
    monkeypatch.chdir(GOLDEN_KANON)
    return SubjectApp("release", "public.pem", record_path="me.json")


def test_snapshot_k_anonymous_release(snap_compare, monkeypatch):
    """Her group in a k-anonymous release at 80x24: its size, her risk, and why distance does not apply."""
    assert snap_compare(_k_anonymous(monkeypatch), terminal_size=(80, 24), run_before=steady(_verified))


def test_k_anonymous_release_results_equal_the_cli(monkeypatch, capsys):
    app = _k_anonymous(monkeypatch)
    report = asyncio.run(_k_anonymous_session(app))
    cli = cli_report(GOLDEN_KANON / "release", GOLDEN_KANON / "public.pem", GOLDEN_KANON / "me.json", capsys)
    cli["release"] = report["release"] = None  # relative in the app, absolute on the command line
    assert report == cli and cli["class_size"] == 3
    # her candidates are one published class: her figure is exact (issue 50), the same as the weaker intruder's
    weaker = {"risk": pytest.approx(1 / 3), "best_guess": "flu", "beta": pytest.approx(1 / 3),
              "delta": pytest.approx(math.log(4 / 3))}
    assert cli["attribute_disclosure"]["disease"] == {
        "mode": "group", "risk": pytest.approx(1 / 3), "candidates": 3, "best_guess": "flu", "prior": 0.25,
        "beta": pytest.approx(1 / 3), "delta": pytest.approx(math.log(4 / 3)), "bound": "own_class", "classes": 1,
        "worst_class_rows": 3, "candidate_set": weaker}


async def _k_anonymous_session(app: SubjectApp) -> dict:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.query_one("#results", TabPane).disabled is False
        assert app.query_one("#random", TabPane).disabled is True  # no ranks, no random-match test
        assert [r[0] for r in cells(app, "#deviations")] == ["9", "10", "11"]
        assert "3 released records are consistent" in shown(app, "#verdict")
        assert not app.query_one("#variances", DataTable).display
        report = app.report_json()
        # Ctrl+R is not offered where the test does not apply (issue 60, item 8): not in the footer, and pressed,
        # nothing runs
        assert app.check_action("run_random", ()) is False
        assert not any(b.binding.action == "run_random" for b in app.active_bindings.values())
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app._random is None
    return report


def test_a_group_wider_than_the_window_scrolls_sideways_and_says_so(tmp_path, monkeypatch):
    """issue 28, item 2: an SD k-anonymous Adult release of seven categorical QIs has published sets wider than
    80 columns; the table scrolls sideways to its last column, and its heading says how."""
    import csv

    from publisher.cli import main as publisher

    sample = Path(__file__).resolve().parents[1] / "experiments" / "data" / "adult_sample_3000.csv"
    qi = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex"]
    first = next(csv.DictReader(sample.open()))
    rows = list(csv.DictReader(sample.open()))
    schema = {"attributes": [{"name": n, "kind": "nominal", "role": "quasi_identifier",
                              "categories": sorted({r[n] for r in rows})} for n in qi]
              + [{"name": "salary-class", "kind": "nominal", "role": "sensitive", "categories": ["<=50K", ">50K"]}]}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    (tmp_path / "me.json").write_text(json.dumps({n: first[n] for n in [*qi, "salary-class"]}))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(sample), "--schema", str(tmp_path / "s.json"), "--method",
                      "sd_k_anonymity", "--param", "k=5", "--key", str(tmp_path / "keys" / "private.pem"),
                      "--dataset-id", "a7", "--out", str(tmp_path / "release"), "--allow-degenerate"]) == 0
    monkeypatch.chdir(tmp_path)

    async def session() -> tuple[int, int, str, str]:
        app = SubjectApp("release", "keys/public.pem", record_path="me.json")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            table = app.query_one("#deviations", DataTable)
            widest = table.max_scroll_x
            table.focus()
            await pilot.press("right", "right", "end")  # the arrows scroll a row cursor's table; End goes to its end
            await settle(pilot)
            return widest, round(table.scroll_x), shown(app, "#matches-heading"), str(table.get_row_at(0)[-1])

    widest, scrolled, heading, last = asyncio.run(session())
    assert widest > 0 and scrolled == widest  # the last column is in view (End; the arrows step by one column)
    assert heading.endswith("scroll it sideways with the arrow keys, Home and End, or shift+wheel)")
    assert last.startswith(("{", "F", "M"))  # the sex column's published cell, reached


@pilot_test
@pytest.mark.parametrize("case", ["a signed schema name that is layout", "an unassessed column appended",
                                  "reverse_mapping first", "a data cell '0x10'"])
async def test_the_hostile_corpus_is_refused_in_the_tui_with_the_command_lines_reason(paper, tmp_path, case):
    """The corpus of tests/hostile_corpus.py (shared by the command line and the page) in the TUI: NOT VERIFIED, or
    for a signed table whose cells cannot be read its reason, with the same code, and no metric."""
    import shutil

    from hostile_corpus import CASES

    release, key = paper
    _, reason, change = next(c for c in CASES if c[0] == case)
    copy = shutil.copytree(release, tmp_path / "hostile")
    change(copy, key.parent / "private.pem")
    async with opened(copy, key, size=(100, 30)) as (app, pilot):
        text = shown(app, "#verification")
        assert reason in text and "\x1b" not in text, text
        assert not any(line.startswith("PROTECTED") for line in text.splitlines())  # a name never makes a line
        assert app._prepared is None and not app.query("#field-0")


@pilot_test
async def test_a_release_made_with_arx_is_checked_in_the_tui_as_on_the_command_line(tmp_path, capsys):
    """Issue 38: ARX's local recoding of the Adult sample, published as an external release; the subject ARX
    suppressed (line 502 of its input) sees what suppression means for her, and her report is the command line's."""
    import csv

    from publisher.cli import main as publisher

    from conftest import arx_folder

    arx = arx_folder()  # ARX's outputs and their input, from what the repository ships
    rows = list(csv.DictReader((arx / "input.csv").open()))
    attrs = [{"name": "age", "kind": "numeric", "role": "quasi_identifier"}] + [
        {"name": n, "kind": "nominal", "role": "sensitive" if n == "salary-class" else "quasi_identifier",
         "categories": sorted({r[n] for r in rows})} for n in list(rows[0])[1:]]
    (tmp_path / "s.json").write_text(json.dumps({"attributes": attrs}))
    (tmp_path / "me.json").write_text(json.dumps({**rows[500], "age": int(rows[500]["age"])}))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    trees = [a for c in ("age", "education", "marital-status", "race", "sex")
             for a in ("--hierarchy", f"{c}={arx / 'hierarchies' / f'adult_hierarchy_{c}.csv'}")]
    assert publisher(["release", "--input", str(arx / "input.csv"), "--schema", str(tmp_path / "s.json"),
                      "--anonymized", str(arx / "arx_local_recoding.csv"), "--produced-by", "ARX 3.9.2", *trees,
                      "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "arx", "--out",
                      str(tmp_path / "release")]) == 0
    key, record = tmp_path / "keys" / "public.pem", tmp_path / "me.json"
    expected = cli_report(tmp_path / "release", key, record, capsys)
    async with opened(tmp_path / "release", key, size=(100, 40), record_path=str(record)) as (app, pilot):
        await settle(pilot)
        assert app.query_one("#random", TabPane).disabled is True  # generalized cells: no random-match test
        assert "the tool suppressed" in " ".join(shown(app, "#verdict").split())
        assert shown(app, "#verdict").startswith("EXPOSED")
        report = app.report_json()
    report["release"] = expected["release"] = None
    assert report == expected and expected["class_size"] == 2


@pilot_test
async def test_several_releases_of_her_are_checked_together_in_the_tui_as_by_verifier_joint(tmp_path, capsys):
    """Issue 40: ``verifier tui RELEASE --with OTHER``: the hospital's two waves, each of which rates her at risk;
    her results say what they tell together, as ``verifier joint --json`` does, and her exported report holds it.
    A release of other attributes is refused at verification, with its reason."""
    ward = Path(__file__).resolve().parents[1] / "docs" / "examples" / "ward"
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    for year in ("2025", "2026"):
        assert publisher(["release", "--input", str(ward / f"{year}.csv"), "--schema", str(ward / "schema.json"),
                          "--anonymized", str(ward / f"{year}-generalized.csv"), "--produced-by", "a tool 1.0",
                          "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "ward",
                          "--release-version", year, "--out", str(tmp_path / year)]) == 0
    record = write(tmp_path / "me.json", json.dumps({"age": 34, "sex": "F", "disease": "HIV"}))
    key = tmp_path / "keys" / "public.pem"
    capsys.readouterr()
    assert verifier(["joint", str(tmp_path / "2026"), str(tmp_path / "2025"), "--key", str(key), "--record",
                     str(record), "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    async with opened(tmp_path / "2026", key, size=(100, 40), record_path=str(record),
                      others=[str(tmp_path / "2025")]) as (app, pilot):
        await settle(pilot)
        assert '"ward" version 2025, verified with the same key' in " ".join(shown(app, "#verification").split())
        together = " ".join(shown(app, "#together").split())
        assert together.startswith("TOGETHER WITH 1 OTHER RELEASE: EXPOSED: " + " ".join(expected["plain"]["summary"]))
        assert f"{POLICY_WORDS} {expected['verdict']['headline']}" in " ".join(together.split())
        assert together.endswith(f"Each release alone: {tmp_path / '2026'} at risk; {tmp_path / '2025'} at risk")
        assert shown(app, "#verdict").startswith("AT RISK")  # the release open alone
        report = app.report_json()
    assert report["joint"] == expected
    schema = json.loads((ward / "schema.json").read_text())
    schema["attributes"][2]["categories"].append("other")
    write(tmp_path / "other.json", json.dumps(schema))
    assert publisher(["release", "--input", str(ward / "2025.csv"), "--schema", str(tmp_path / "other.json"),
                      "--anonymized", str(ward / "2025-generalized.csv"), "--produced-by", "a tool 1.0", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "ward", "--out",
                      str(tmp_path / "other")]) == 0
    async with opened(tmp_path / "2026", key, others=[str(tmp_path / "other")]) as (app, pilot):
        assert "SCHEMA_MISMATCH" in shown(app, "#verification")
        assert app.query_one("#record", TabPane).disabled


@pilot_test
async def test_an_m_invariant_release_s_counterfeits_are_told_in_the_tui(tmp_path):
    """Issue 40: Bob's group in the second m-invariant wave is his record and a counterfeit; the TUI shows both
    released records, says one is counterfeit and one person is behind them, with the command line's verdict."""
    from conftest import ward_folder
    from publisher.cli import main as publisher

    ward_folder(tmp_path, ["bronchitis", "dyspepsia", "flu", "gastritis"])
    waves = {"r1": "bob,30,M,flu\nalice,31,M,dyspepsia\ndan,55,M,bronchitis\nfay,56,M,gastritis\n",
             "r2": "bob,30,M,flu\ncarol,33,M,gastritis\ndan,55,M,bronchitis\nfay,56,M,gastritis\ngil,57,M,flu\n"}
    for name, rows in waves.items():
        (tmp_path / f"{name}.csv").write_text("pid,age,sex,disease\n" + rows)
        assert publisher(["release", "--input", str(tmp_path / f"{name}.csv"), "--schema",
                          str(tmp_path / "schema.json"), "--method", "m_invariant", "--param", "m=2", "--key",
                          str(tmp_path / "keys" / "private.pem"), "--dataset-id", "ward", "--release-version",
                          name[-1], "--link-column", "pid", "--out", str(tmp_path / name), "--seed", "1",
                          *(["--previous", str(tmp_path / "r1")] if name == "r2" else [])]) == 0
    (tmp_path / "bob.json").write_text(json.dumps({"age": 30, "sex": "M", "disease": "flu"}))
    async with opened(tmp_path / "r2", tmp_path / "keys" / "public.pem", size=(120, 40),
                      record_path=str(tmp_path / "bob.json")) as (app, pilot):
        text = " ".join(shown(app, "#verdict").split())
        assert text.startswith("EXPOSED: Your record is exposed. You are the only record exposed among the 5 in "
                               "this release. Someone who knows a few facts about you could find your record: no "
                               "one else's record fits them."), text
        # the counterfeit may carry the other value, so her own value is certain (issue 58): that rule decides first
        assert POLICY_WORDS in text and "value_near_certain" not in text
        # "your group" is the picture's alone: here, the records consistent with her values (issue 60, item 2)
        assert ("Released records consistent with your values: 2, 1 of them counterfeit: 1 person behind them, in 1 "
                "published group;") in text and "Your group:" not in text
        assert len(cells(app, "#deviations")) == 2


@pytest.mark.parametrize("method", [["sd_k_anonymity", "--param", "k=5"],
                                    ["randomized_response", "--param", "l=2"],
                                    ["random_attribute_replacement", "--param", "k=1"]])
def test_her_figures_under_the_named_intruder_in_the_tui_equal_the_cli(tmp_path, capsys, method):
    """Issue 50: the worst group she could be in (SD), the sampling error of an estimate (randomized
    response) and the replacement posterior: the TUI's report is verifier check --json's, field for field."""
    root = Path(__file__).resolve().parents[1]
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    release = tmp_path / "release"
    assert publisher(["release", "--input", str(root / "experiments" / "data" / "adult_sample_3000.csv"), "--schema",
                      str(root / "docs" / "examples" / "adult-one-sensitive.json"), "--method", *method, "--seed", "1",
                      "--samples", "100", "--allow-degenerate", "--key", str(tmp_path / "keys" / "private.pem"),
                      "--dataset-id", "adult", "--out", str(release)]) == 0
    record = write(tmp_path / "me.json", json.dumps({"marital-status": "Separated", "race": "White", "sex": "Female",
                                                     "salary-class": "<=50K"}))
    key = tmp_path / "keys" / "public.pem"

    async def session() -> dict:
        app = SubjectApp(str(release), str(key), record_path=str(record))
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            if app._random is None and not app.query_one("#random", TabPane).disabled:
                await pilot.press("ctrl+r")  # her level needs the random-match test where the release has ranks
                await settle(pilot)
            return app.report_json()

    report = asyncio.run(session())
    cli = cli_report(release, key, record, capsys)
    assert report == cli
    entry = cli["attribute_disclosure"]["salary-class"]
    if method[0] == "sd_k_anonymity":
        assert entry["bound"] == "worst_class" and entry["risk"] >= entry["candidate_set"]["risk"]
    if method[0] == "randomized_response":
        assert entry["sampling_error"] > 0 and entry["confidence"] == 0.99
