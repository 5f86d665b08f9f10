"""Randomized response read with its signed marginal (issue 58, items 2 and 3; SPEC section 16).

The named intruder holds the population's shares of the sensitive values. A randomized-response release signs
each category's count (``claims.attribute_disclosure.<S>.marginal``): her base rate is her value's signed share,
and her posterior the higher of the paper's estimate and Bayes' rule on a record showing her value, the most the
intruder's exact posterior can be whichever record is hers. The audit recomputes the marginal with the original;
a marginal no run writes is refused by the command line and the page alike (``coherence.js``).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import resign_statement
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.releases.verification import MANIFEST

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
ONE_SENSITIVE = ROOT / "docs" / "examples" / "adult-one-sensitive.json"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("marginal")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(SAMPLE), "--schema", str(ONE_SENSITIVE), "--method",
                      "randomized_response", "--param", "l=2", "--seed", "7", "--samples", "100", "--key",
                      str(root / "keys" / "private.pem"), "--dataset-id", "rr", "--out", str(root / "rr")]) == 0
    return root


def _copy(root: Path, name: str) -> Path:
    import shutil

    shutil.copytree(root / "rr", root / name)
    return root / name


def test_the_marginal_is_the_original_s_counts_and_the_audit_recomputes_it(release, capsys):
    with SAMPLE.open() as f:
        counts = Counter(row["salary-class"] for row in csv.DictReader(f))
    claims = json.loads((release / "rr" / MANIFEST).read_bytes())["predicate"]["claims"]
    assert claims["attribute_disclosure"]["salary-class"]["marginal"] == dict(counts)
    capsys.readouterr()
    key = str(release / "keys" / "public.pem")
    assert verifier(["audit", str(release / "rr"), "--key", key, "--original", str(SAMPLE), "--json"]) == 0
    checked = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    leaves = [c for name, c in checked.items() if name.startswith("attribute_disclosure.salary-class.marginal")]
    assert len(leaves) == len(counts) and all(c["ok"] for c in leaves)

    moved = _copy(release, "moved")  # two counts swapped: the sum holds, the audit with the original does not

    def swap(statement):
        marginal = statement["predicate"]["claims"]["attribute_disclosure"]["salary-class"]["marginal"]
        a, b = sorted(marginal)
        marginal[a], marginal[b] = marginal[b], marginal[a]

    resign_statement(moved, release / "keys" / "private.pem", swap)
    assert verifier(["verify", str(moved), "--key", key]) == 0
    capsys.readouterr()
    assert verifier(["audit", str(moved), "--key", key, "--original", str(SAMPLE)]) == 1
    assert "FALSE: attribute_disclosure.salary-class.marginal" in capsys.readouterr().out


def test_her_base_rate_is_her_signed_share_and_her_risk_the_higher_figure(release, capsys, tmp_path):
    statement = json.loads((release / "rr" / MANIFEST).read_bytes())["predicate"]
    marginal = statement["claims"]["attribute_disclosure"]["salary-class"]["marginal"]
    p = statement["methods"][0]["parameters"]["keep_probabilities"]["salary-class"]
    key = str(release / "keys" / "public.pem")
    for value in sorted(marginal):
        me = tmp_path / f"{value}.json"
        me.write_text(json.dumps({"marital-status": "Never-married", "race": "White", "sex": "Female",
                                  "salary-class": value}))
        capsys.readouterr()
        assert verifier(["check", str(release / "rr"), "--key", key, "--record", str(me), "--json",
                         "--no-random-match"]) == 0
        entry = json.loads(capsys.readouterr().out)["attribute_disclosure"]["salary-class"]
        pi = marginal[value] / sum(marginal.values())
        bound = pi * p / (pi * p + (1 - pi) * (1 - p))  # two categories: a move goes to the other one
        assert entry["prior"] == pytest.approx(pi, rel=1e-12) and entry["value_bound"] == pytest.approx(bound, rel=1e-12)
        assert entry["risk"] == max(entry["paper_risk"], entry["value_bound"])


@pytest.mark.parametrize("change, said", [
    (lambda m: m.update({next(iter(m)): m[next(iter(m))] + 1}), "adds up to 3001 records, not the 3000 released"),
    (lambda m: m.update({"unknown": 0}), "counts a category the schema does not list"),
])
def test_a_marginal_no_run_writes_is_refused(release, capsys, change, said):
    wrong = _copy(release, f"wrong-{said[:5]}")

    def mutate(statement):
        change(statement["predicate"]["claims"]["attribute_disclosure"]["salary-class"]["marginal"])

    resign_statement(wrong, release / "keys" / "private.pem", mutate)
    capsys.readouterr()
    assert verifier(["verify", str(wrong), "--key", str(release / "keys" / "public.pem")]) == 1
    err = capsys.readouterr().err
    assert "MANIFEST_INCOHERENT" in err and f"the marginal of 'salary-class' {said}" in err
