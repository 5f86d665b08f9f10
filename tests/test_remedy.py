"""The protector's way from a refused release to a published one, held to the named intruder (issue 58, item 4).

docs/methods.md's walk ends on SD k-anonymity of the Adult sample (k = 20) whose salary-class cells are masked
with probability 0.5 whatever their value: it meets ``--target max_exposed=0``. That family is sound against the
exact oracle on tiny tables (tests/test_exact_oracle.py); here a sample of this release's own subjects is held to
the oracle on the released table itself.

At 3,000 records the oracle's enumeration cannot run, but for this release its posterior has a closed form. The
classes are SD's on the quasi-identifiers alone, which the intruder knows and reruns, so he knows her class; its
rows look alike, so she is any of them; a mask drawn whatever the value tells nothing of it, and each person's
value is drawn apart from the others' with the table's shares pi. Her posterior of v is therefore
(s + m pi(v)) / g, for a class of g people, s of them shown with v and m masked.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from publisher.cli import main as publisher
from publisher.methods import make_method
from verifier.data.schema import Schema
from verifier.releases.exposure import with_base_rate
from verifier.releases.policy import default_policy
from verifier.releases.verdict import HerFigures, policy_verdict
from verifier.releases.verification import MANIFEST

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
SCHEMA = ROOT / "docs" / "examples" / "arx" / "adult-arx.json"
LEVEL = {"protected": 0, "at_risk": 1, "exposed": 2}
#: the walk's last release, as docs/methods.md runs it
WALK = ["--method", "sd_k_anonymity", "--param", "k=20", "--param", "mask_probability=0.5", "--seed", "1",
        "--target", "max_exposed=0"]


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("remedy")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    return root


def _release(root: Path, name: str, *argv: str) -> int:
    return publisher(["release", "--input", str(SAMPLE), "--schema", str(SCHEMA), *argv, "--samples", "200",
                      "--key", str(root / "keys" / "private.pem"), "--dataset-id", name, "--out", str(root / name)])


def test_without_masks_sd_misses_the_target(walk, capsys):
    assert _release(walk, "sd", "--method", "sd_k_anonymity", "--param", "k=20", "--seed", "1", "--target",
                    "max_exposed=0") == 3
    assert "TARGET_MISSED" in capsys.readouterr().err and not (walk / "sd").exists()


def _oracle_levels(table: pd.DataFrame, released: pd.DataFrame) -> list[str]:
    """Each person's level by the policy on the exact posterior of her value (the module's closed form)."""
    schema = Schema.from_dict(json.loads(SCHEMA.read_text()))
    qi = [a.name for a in schema.attributes if a.role == "quasi_identifier"]
    recoded = make_method("sd_k_anonymity", {"k": 20}).apply(table, schema, random_state=None).table
    pi = table["salary-class"].value_counts(normalize=True).to_dict()
    classes = released.groupby([released[q].astype(str) for q in qi])["salary-class"]
    counts = {key: group.value_counts().to_dict() for key, group in classes}
    out = []
    for i in range(len(table)):
        key = tuple(str(recoded[q].iloc[i]) for q in qi)
        mine, held = table["salary-class"].iloc[i], counts[key]
        g = sum(held.values())
        posterior = (held.get(mine, 0) + held.get("*", 0) * pi[mine]) / g
        figures = {"salary-class": with_base_rate({"risk": posterior}, pi[mine])}
        out.append(policy_verdict(default_policy(), HerFigures(figures, class_size=g)).level)
    return out


def test_masks_drawn_at_random_meet_the_target_and_no_sampled_subject_is_milder_than_the_oracle(walk):
    assert _release(walk, "masked", *WALK) == 0
    predicate = json.loads((walk / "masked" / MANIFEST).read_bytes())["predicate"]
    assert predicate["claims"]["policy_levels"]["exposed"] == 0
    assert predicate["methods"][0]["parameters"]["mask_probability"] == 0.5
    table = pd.read_csv(SAMPLE)
    released = pd.read_csv(walk / "masked" / "release.csv", dtype=str)
    assert 0.4 < (released["salary-class"] == "*").mean() < 0.6
    oracle = _oracle_levels(table, released)
    from verifier.data.tables import table_from_frame
    from verifier.releases.facts import open_release
    from verifier.releases.level_arrays import LEVEL_CODES
    from verifier.releases.levels import every_level
    from verifier.releases.subject import prepare

    prepared = prepare(open_release(str(walk / "masked"), str(walk / "keys" / "public.pem")))
    sample = np.sort(np.random.default_rng(58).choice(len(table), 300, replace=False))
    level, _ = every_level(prepared, table_from_frame(table.iloc[sample], prepared.schema).values, default_policy(),
                           samples=200)
    verdict = [LEVEL_CODES[c] for c in level.tolist()]
    truth = [oracle[i] for i in sample]
    milder = [(int(i), v, o) for i, v, o in zip(sample, verdict, truth) if LEVEL[v] < LEVEL[o]]
    assert not milder, milder[:5]
    # with the marginal signed, her risk in her class is the closed form itself, (s + m pi) / g: her level is the
    # oracle's, but where her values fall in several published classes (SD's intervals overlap) and she cannot tell
    # which is hers, so her check reads the worst of them
    assert predicate["claims"]["attribute_disclosure"]["salary-class"]["marginal"] == \
        table["salary-class"].value_counts().to_dict()
    from verifier.releases.subject import check_record as check

    harsher = [i for i, v, o in zip(sample, verdict, truth) if v != o]
    assert len(harsher) < 30 and all(check(prepared, r).classes > 1 for r in
                                     table_from_frame(table.iloc[harsher], prepared.schema).values)
    # the oracle is not idle: it puts sampled subjects at risk, and nobody is exposed under it either
    assert "at_risk" in truth and "exposed" not in truth
    # the signed counts read the same levels as each subject's own check (the bulk figures are hers)
    from verifier.releases.subject import check_record

    records = table_from_frame(table.iloc[sample[:25]], prepared.schema).values
    assert [check_record(prepared, r).verdict().level for r in records] == verdict[:25]
