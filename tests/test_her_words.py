"""Her words where the method's own behaviour decides her level (issue 58, item 5).

A two-step release masks salary-class where a value is too frequent in a group: her check says so in plain words,
the same sentence on the command line, in the Python API and in the TUI (the page's twin is held to the command line
by tests/test_page.py). Under randomized response with a signed marginal, where the named intruder's bound decides
her risk, her report says whose figure it is and gives no estimate's interval beside it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from publisher.cli import main as publisher
from verifier import api
from verifier.cli import main as verifier

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
SCHEMA = ROOT / "docs" / "examples" / "arx" / "adult-arx.json"
MASKS = "show salary-class masked (several values, not one). The method masks a value where it is too frequent"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("words")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    for name, method in (("two-step", ["multi_sensitive_generalization", "--param", "alpha_qi=0.95", "--param",
                                       "alpha_sa=0.7"]),
                         ("rr", ["randomized_response", "--param", "keep_probabilities=salary-class:0.8"])):
        assert publisher(["release", "--input", str(SAMPLE), "--schema", str(SCHEMA), "--method", *method, "--seed",
                          "1", "--samples", "100", "--key", str(root / "keys" / "private.pem"), "--dataset-id", name,
                          "--out", str(root / name)]) == 0
    names = [a["name"] for a in json.loads(SCHEMA.read_text())["attributes"]]
    with SAMPLE.open() as f:
        rows = [{n: r[n] for n in names} for r in csv.DictReader(f)]
    (root / "me.json").write_text(json.dumps(rows[0]))
    # a subject among whose candidates the two-step release masked salary-class (the first one, in file order)
    release = api.open_release(root / "two-step", root / "keys" / "public.pem")
    said = {i: any(MASKS in line for line in api.check_record(release, record=r, random_match_test=False)
                   .verdict["lines"]) for i, r in enumerate(rows[:200])}
    (root / "masked.json").write_text(json.dumps(rows[next(i for i, m in said.items() if m)]))
    (root / "unmasked.json").write_text(json.dumps(rows[next(i for i, m in said.items() if not m)]))
    # a subject of the randomized-response release whose risk is the named intruder's bound, not the paper's
    release = api.open_release(root / "rr", root / "keys" / "public.pem")

    def decided(r: dict) -> bool:
        entry = api.check_record(release, record=r, random_match_test=False).check.disclosure["salary-class"]
        return entry["value_bound"] > entry["paper_risk"]

    (root / "bound.json").write_text(json.dumps(next(r for r in rows[:200] if decided(r))))
    return root


def _cli(made: Path, name: str, capsys, record: str = "me.json") -> dict:
    capsys.readouterr()
    assert verifier(["check", str(made / name), "--key", str(made / "keys" / "public.pem"), "--record",
                     str(made / record), "--json", "--no-random-match"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_masks_are_said_alike_on_the_command_line_and_in_the_api(made, capsys):
    out = _cli(made, "two-step", capsys, "masked.json")
    said = [line for line in out["verdict"]["lines"] if MASKS in line]
    assert len(said) == 1 and said[0].split(" of the ")[1].startswith(f"{len(out['class_rows'])} released records")
    assert 0 < int(said[0].split(" ")[0]) <= len(out["class_rows"])
    mine = api.check_record(made / "two-step", made / "keys" / "public.pem",
                            json.loads((made / "masked.json").read_text()), random_match_test=False)
    assert mine.verdict["lines"] == out["verdict"]["lines"]
    # the masks read as the intruder who reruns MaskClass reads them, under the signed marginal (issue 58)
    assert "every way the masked cells could hide values weighed by how likely it is" in said[0]
    assert out["attribute_disclosure"]["salary-class"]["masks"] == "exact"
    # a subject whose candidates hold no masked cell is told nothing of masks
    assert not any(MASKS in line for line in _cli(made, "two-step", capsys, "unmasked.json")["verdict"]["lines"])


def test_the_masks_are_said_in_the_tui(made):
    from test_tui import opened, pilot_test, shown

    @pilot_test
    async def run():
        async with opened(made / "two-step", made / "keys" / "public.pem", size=(120, 60),
                          record_path=str(made / "masked.json")) as (app, pilot):
            text = " ".join(shown(app, "#verdict").split())
            assert MASKS in text, text

    run()


def test_where_the_named_intruder_s_bound_decides_her_report_says_so(made, capsys):
    out = _cli(made, "rr", capsys, "bound.json")
    entry, lines = out["attribute_disclosure"]["salary-class"], out["verdict"]["lines"]
    said = next(line for line in lines if line.startswith("Your salary-class is guessed right with probability"))
    assert entry["risk"] == entry["value_bound"] > entry["paper_risk"]
    assert "at the most, by someone who knows the method, its parameters and how common each value is" in said
    assert "interval" not in said and "of the people in this release hold your value (the publisher's signed count)" \
        in said
