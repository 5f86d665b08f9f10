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


PRAMED = ("marital_status", "salary_class")


def _pram_release(tmp_path: Path, capsys, *extra: str, output: Path = DATA / "pram.csv") -> int:
    if not (tmp_path / "keys").exists():
        assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    capsys.readouterr()
    matrices = [a for v in PRAMED for a in ("--transition-matrix", f"{v}={DATA / f'pram_{v}.csv'}")]
    return publisher(["release", "--input", str(DATA / "input.csv"), "--schema", str(DATA / "schema.json"),
                      "--anonymized", str(output), "--produced-by", "sdcMicro 5.8.1", *matrices, *extra,
                      "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "pram", "--seed", "1",
                      "--samples", "200", "--out", str(tmp_path / "pram")])


def test_pram_output_is_judged_under_randomized_response_with_sdcmicros_matrices(tmp_path, capsys):
    """sdcMicro's pram of marital_status and salary_class: the release publishes each Rs in the schema's order, its
    claims are randomized response's closed form under them, the audit recomputes them, and her check reads them."""
    theirs = json.loads((DATA / "pram.json").read_text())
    original = pd.read_csv(DATA / "input.csv", dtype=str)
    pramed = pd.read_csv(DATA / "pram.csv", dtype=str)
    assert [int((original[v] != pramed[v]).sum()) for v in PRAMED] == [s["nrChanges"] for s in theirs["summary"]]
    assert _pram_release(tmp_path, capsys) == 0
    manifest = json.loads((tmp_path / "pram" / "manifest.json").read_text())["predicate"]
    step = manifest["methods"][0]["parameters"]
    schema = Schema.from_dict(json.loads((DATA / "schema.json").read_text()))
    for v in PRAMED:
        rs = pd.read_csv(DATA / f"pram_{v}.csv", index_col=0)
        categories = list(schema[v].categories)
        want = rs.reindex(index=categories, columns=categories).fillna(0.0).to_numpy()
        want[[i for i, c in enumerate(categories) if c not in rs.index]] = np.eye(len(categories))[
            [i for i, c in enumerate(categories) if c not in rs.index]]
        np.testing.assert_array_equal(np.array(step["transition_matrices"][v]), want)
    assert step["model"] == "randomized_response" and step["kept_as_is"] == ["age", "sex", "race"]
    claims = manifest["claims"]
    entry = claims["attribute_disclosure"]["salary_class"]
    assert claims["model"] == "randomized_response" and entry["mode"] == "randomized_response"
    assert entry["conditioned_on"] == ["age", "sex", "race", "marital_status"]
    assert entry["marginal"] == original["salary_class"].value_counts().to_dict()
    # the closed form under the matrices, recomputed here from the original's frequencies
    from verifier.attacks.disclosure import rr_risk
    from verifier.attacks.distortion import Transition

    cols = ["age", "sex", "race", "marital_status", "salary_class"]
    dims = [len(schema[c].categories) for c in cols]
    index = np.ravel_multi_index([original[c].map({x: i for i, x in enumerate(schema[c].categories)}).to_numpy()
                                  for c in cols], dims)
    pi = np.bincount(index, minlength=int(np.prod(dims))).reshape(dims) / len(original)
    ps = [1.0, 1.0, 1.0, Transition.of(step["transition_matrices"]["marital_status"]),
          Transition.of(step["transition_matrices"]["salary_class"])]
    risk = rr_risk(pi, ps[:-1], ps[-1])
    assert entry["max"] == pytest.approx(float(risk.max()), abs=1e-12)
    assert entry["mean"] == pytest.approx(float(np.sum(pi * risk)), abs=1e-12)
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "pram"), "--key", str(tmp_path / "keys" / "public.pem"), "--original",
                     str(DATA / "input.csv"), "--json"]) == 0
    checks = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["attribute_disclosure.salary_class.max"]["ok"]
    from verifier import api

    release = api.open_release(tmp_path / "pram", tmp_path / "keys" / "public.pem")
    record = original.iloc[0].to_dict()
    mine = api.check_record(release, record=record, random_match_test=False).check.disclosure["salary_class"]
    assert mine["mode"] == "randomized_response" and mine["risk"] >= mine["paper_risk"]
    assert mine["prior"] == pytest.approx(entry["marginal"][record["salary_class"]] / len(original))


def test_a_pram_output_that_its_matrices_cannot_make_is_refused(tmp_path, capsys):
    """A published value its matrix gives probability 0, a change in a column no matrix covers, sdcMicro's
    suppressed cells beside a matrix, a matrix naming a category the schema lacks: each refused naming the file,
    the column and the row (never a value), and nothing written."""
    pramed = pd.read_csv(DATA / "pram.csv", dtype=str, keep_default_na=False)
    rs = pd.read_csv(DATA / "pram_marital_status.csv", index_col=0)
    changed = pramed.copy()
    changed.loc[4, "sex"] = "Male" if changed.loc[4, "sex"] == "Female" else "Female"
    changed.to_csv(tmp_path / "changed.csv", index=False)
    assert _pram_release(tmp_path, capsys, output=tmp_path / "changed.csv") == 3
    err = capsys.readouterr().err
    assert "CELL_INVALID: column 'sex', row 5: changed, and no --transition-matrix says how" in err
    assert not (tmp_path / "pram").exists()
    assert _pram_release(tmp_path, capsys, output=DATA / "local_suppression_k3.csv") == 3
    assert "holds generalized or suppressed cells" in capsys.readouterr().err
    two = json.loads((DATA / "schema.json").read_text())
    next(a for a in two["attributes"] if a["name"] == "sex")["role"] = "sensitive"
    (tmp_path / "two.json").write_text(json.dumps(two))
    assert publisher(["release", "--input", str(DATA / "input.csv"), "--schema", str(tmp_path / "two.json"),
                      "--anonymized", str(DATA / "pram.csv"), "--produced-by", "sdcMicro 5.8.1",
                      "--transition-matrix", f"salary_class={DATA / 'pram_salary_class.csv'}", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "pram", "--out",
                      str(tmp_path / "pram")]) == 3
    assert "METHOD_NOT_APPLICABLE: randomized response models one categorical sensitive attribute" in \
        capsys.readouterr().err
    bad = (DATA / "pram_salary_class.csv").read_text().replace('">50K"', '"rich"')
    (tmp_path / "bad.csv").write_text(bad)
    assert publisher(["release", "--input", str(DATA / "input.csv"), "--schema", str(DATA / "schema.json"),
                      "--anonymized", str(DATA / "pram.csv"), "--produced-by", "sdcMicro 5.8.1",
                      "--transition-matrix", f"salary_class={tmp_path / 'bad.csv'}", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "pram", "--out",
                      str(tmp_path / "pram")]) == 3
    assert "TRANSITION_MATRIX_INVALID: 'rich' is not a category of 'salary_class'" in capsys.readouterr().err
    # a cell the matrix cannot reach from the original's value: only its row is named
    rows = rs.copy()
    true = pd.read_csv(DATA / "input.csv", dtype=str)["marital_status"]
    i = next(i for i in range(len(true)) if true[i] != pramed["marital_status"][i])
    rows.loc[true[i]] = 0.0
    rows.loc[true[i], true[i]] = 1.0
    rows.to_csv(tmp_path / "ms.csv")
    assert publisher(["release", "--input", str(DATA / "input.csv"), "--schema", str(DATA / "schema.json"),
                      "--anonymized", str(DATA / "pram.csv"), "--produced-by", "sdcMicro 5.8.1",
                      "--transition-matrix", f"marital_status={tmp_path / 'ms.csv'}", "--transition-matrix",
                      f"salary_class={DATA / 'pram_salary_class.csv'}", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "pram", "--out",
                      str(tmp_path / "pram")]) == 3
    err = capsys.readouterr().err
    assert f"column 'marital_status', row {i + 1}: published a value its transition matrix gives probability 0" \
           in err and true[i] not in err


def test_a_signed_matrix_that_is_no_transition_matrix_is_refused_by_the_verifier():
    from verifier.releases.manifest_schema import transition_problem

    attrs = json.loads((DATA / "schema.json").read_text())["attributes"]
    ok = {"model": "randomized_response", "transition_matrices": {"salary_class": [[0.9, 0.1], [0.2, 0.8]]},
          "kept_as_is": ["age"]}
    assert transition_problem(ok, attrs) is None
    for params, said in (
            ({**ok, "transition_matrices": {"salary_class": [[0.9, 0.2], [0.2, 0.8]]}}, "a row does not sum to 1"),
            ({**ok, "transition_matrices": {"salary_class": [[1.0]]}}, "not 2 rows of 2 probabilities"),
            ({**ok, "transition_matrices": {"salary_class": [[1, 0], [0, 1]]}}, "nothing is randomized"),
            ({**ok, "transition_matrices": {"nobody": [[1.0]]}}, "not a categorical quasi-identifier"),
            ({**ok, "transition_matrices": {}}, "publishes the matrix of each column"),
            ({**ok, "kept_as_is": ["salary_class"]}, "kept_as_is"),
            ({**ok, "model": "permutation"}, "only a post-randomized output")):
        assert said in transition_problem(params, attrs)


def test_a_matrix_re_signed_milder_is_caught_by_the_audit(tmp_path, capsys):
    """A dishonest publisher signs another transition matrix for salary_class (keeping the claims): verify passes
    (the signature is real and the matrix a matrix), and the audit, recomputing the claims under the signed matrix,
    fails on them."""
    from conftest import resign_statement

    assert _pram_release(tmp_path, capsys) == 0
    step = lambda s: s["predicate"]["methods"][0]["parameters"]  # noqa: E731
    resign_statement(tmp_path / "pram", tmp_path / "keys" / "private.pem",
                     lambda s: step(s)["transition_matrices"].update(salary_class=[[0.6, 0.4], [0.4, 0.6]]))
    key = str(tmp_path / "keys" / "public.pem")
    capsys.readouterr()
    assert verifier(["verify", str(tmp_path / "pram"), "--key", key]) == 0
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "pram"), "--key", key, "--original", str(DATA / "input.csv"),
                     "--json"]) != 0
    checks = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    for claim in ("attribute_disclosure.salary_class.mean", "attribute_disclosure.salary_class.estimated.mean",
                  "policy_levels.exposed"):
        assert not checks[claim]["ok"], claim
