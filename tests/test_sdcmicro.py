"""sdcMicro's outputs read as sdcMicro means them (issue 61, item 3), from fixtures made with sdcMicro 5.8.1
(tests/data/sdcmicro/make.R; the suite runs without R).

Local suppression to 3-anonymity writes NA in single cells. sdcMicro counts a suppressed cell as matching any
value: every record's f_k here is sdcMicro's own, the release signs the smallest (3) beside the k of identical
published cells (1, what the intruder who knows how the tool chose its cells reads), the audit recomputes both,
and a subject whose age was suppressed is among the candidates of everyone who shares her other values.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from publisher.cli import main as publisher
from verifier.attacks.classes import read_published
from verifier.attacks.suppression import matching_counts
from verifier.cli import main as verifier
from verifier.data.schema import Schema

DATA = Path(__file__).resolve().parent / "data" / "sdcmicro"
QI = ("age", "sex", "race", "marital_status")


def _published(frame: pd.DataFrame, schema: Schema):
    return read_published(schema, list(frame.columns), [frame[c].tolist() for c in frame.columns])


def test_every_records_f_k_is_sdcmicros():
    schema = Schema.from_dict(json.loads((DATA / "schema.json").read_text()))
    frame = pd.read_csv(DATA / "local_suppression_k3.csv", dtype=str, keep_default_na=False).replace("NA", "*")
    theirs = json.loads((DATA / "local_suppression_k3.json").read_text())
    ours = matching_counts(_published(frame, schema))
    assert ours.tolist() == theirs["fk"] and int((ours < 3).sum()) == theirs["violating_3"] == 0
    assert int(ours.min()) == 3
    assert sum(theirs["suppressed_cells"].values()) == int((frame[list(QI)] == "*").sum().sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matching_counts_are_the_plain_count_over_every_pair(seed):
    """The count over distinct patterns is the plain one, row against row, on random tables with many ties, stars
    in some cells and whole rows of stars."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 120))
    schema = Schema.from_dict({"attributes": [
        {"name": c, "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c"]} for c in "xyz"]
        + [{"name": "s", "kind": "nominal", "role": "sensitive", "categories": ["u", "v"]}]})
    cells = rng.choice(["a", "b", "c"], size=(n, 3), p=[0.6, 0.3, 0.1]).astype(object)
    cells[rng.random((n, 3)) < 0.15] = "*"
    cells[rng.random(n) < 0.05] = "*"
    frame = pd.DataFrame(cells, columns=list("xyz")).assign(s=rng.choice(["u", "v"], n))
    plain = [sum(all(a == b or "*" in (a, b) for a, b in zip(cells[i], cells[j])) for j in range(n))
             for i in range(n)]
    assert matching_counts(_published(frame, schema)).tolist() == plain


def test_the_release_signs_sdcmicros_k_beside_the_classes_and_the_audit_recomputes_it(tmp_path, capsys):
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    capsys.readouterr()
    assert publisher(["release", "--input", str(DATA / "input.csv"), "--schema", str(DATA / "schema.json"),
                      "--anonymized", str(DATA / "local_suppression_k3.csv"), "--produced-by", "sdcMicro 5.8.1",
                      "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "ls", "--seed", "1",
                      "--out", str(tmp_path / "ls")]) == 0
    out = capsys.readouterr().out
    claims = json.loads((tmp_path / "ls" / "manifest.json").read_text())["predicate"]["claims"]
    assert claims["k"] == 1 and claims["suppression"]["smallest_matching"] == 3
    assert claims["suppression"]["suppressed_cells"] == 74 and claims["suppression"]["suppressed_records"] == 0
    assert ("as sdcMicro counts, a suppressed cell matching any value (74 suppressed cells): every record matches at "
            "least 3 released records, so it is 3-anonymous; the k above counts identical published cells") in out
    assert verifier(["audit", str(tmp_path / "ls"), "--key", str(tmp_path / "keys" / "public.pem"), "--original",
                     str(DATA / "input.csv"), "--json"]) == 0
    checks = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["suppression.smallest_matching"]["ok"] and checks["suppression.smallest_matching"]["computed"] == 3
    # a subject whose age was suppressed is among the candidates of everyone who shares her other values
    rows = list(csv.DictReader((DATA / "input.csv").open()))
    released = list(csv.DictReader((DATA / "local_suppression_k3.csv").open()))
    hers = next(i for i, r in enumerate(released) if r["age"] == "NA" and "NA" not in (r["sex"], r["race"],
                                                                                          r["marital_status"]))
    others = [r for i, r in enumerate(rows) if i != hers and all(r[c] == rows[hers][c] for c in QI[1:])]
    assert others
    from verifier import api

    published = list(csv.DictReader((tmp_path / "ls" / "release.csv").open()))  # the rows shuffled by the seed
    suppressed = {i + 1 for i, r in enumerate(published)
                  if r["age"] == "*" and all(r[c] == rows[hers][c] for c in QI[1:])}
    release = api.open_release(tmp_path / "ls", tmp_path / "keys" / "public.pem")
    for record in others[:5]:
        check = api.check_record(release, record=record, random_match_test=False)
        assert suppressed and suppressed <= set(check.check.rows)


@pytest.mark.parametrize("output", ["mdav_3.csv", "noise_50.csv"])
def test_microaggregated_and_noised_numbers_keep_their_rank_based_judgement(tmp_path, capsys, output):
    """sdcMicro's microaggregation(method = "mdav", aggr = 3) and addNoise(noise = 50) of three numbers: plain values,
    judged by their ranks (the permutation model, D and the intruder), and the audit recomputes the claims."""
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    capsys.readouterr()
    assert publisher(["release", "--input", str(DATA / "numbers.csv"), "--schema", str(DATA / "numbers.json"),
                      "--anonymized", str(DATA / output), "--produced-by", "sdcMicro 5.8.1", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "num", "--seed", "1", "--samples", "200",
                      "--out", str(tmp_path / "r")]) == 0
    claims = json.loads((tmp_path / "r" / "manifest.json").read_text())["predicate"]["claims"]
    assert claims["model"] == "permutation" and "suppression" not in claims
    assert claims["attribute_disclosure"]["salary_class"]["mode"] == "permutation"
    assert claims["k"] == (3 if output == "mdav_3.csv" else 1)  # MDAV's groups of three, noise's distinct rows
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "r"), "--key", str(tmp_path / "keys" / "public.pem"), "--original",
                     str(DATA / "numbers.csv")]) == 0
