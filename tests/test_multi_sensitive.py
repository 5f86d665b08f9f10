"""Two-step generalization for several sensitive attributes (paper 002; spec/methods.md 2.3-2.6: MSA-3 to MSA-6)."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from publisher.methods import make_method
from publisher.methods.multi_sensitive import (Infeasible, _violations, build_hierarchy, mask_class, two_step,
                                              two_step_exhaustive)
from verifier.attacks.diversity import multi_diversity
from verifier.errors import InvalidInputError
from verifier.data.schema import Schema

DISEASE_TREE = {"type": "categorical", "tree": {"*": [
    {"Genetic": ["Albinism", "Haemophilia"]},
    {"Respiratory": ["Asthma", "Pneumonia", "Cold"]},
    {"Other": ["Liver cancer", "Hepatitis", "No"]}]}}
WORKCLASS = {"type": "categorical", "tree": {"*": [
    "Private", {"Self-employed": ["Self-emp-not-inc", "Self-emp-inc"]},
    {"Government": ["Federal-gov", "State-gov", "Local-gov"]}, {"Unemployed": ["Without-pay", "Never-worked"]}]}}
LEAVES = ["Albinism", "Haemophilia", "Asthma", "Pneumonia", "Cold", "Liver cancer", "Hepatitis", "No"]


def test_msa_3_info_loss():
    h = build_hierarchy(WORKCLASS, ["Private", "Local-gov"], False)
    assert h.info_loss("Government") == pytest.approx(1 / 4) and h.info_loss("Self-employed") == pytest.approx(1 / 8)
    assert h.info_loss("*") == pytest.approx(7 / 8) and h.info_loss("Local-gov") == 0.0
    with pytest.raises(InvalidInputError, match="not a leaf"):
        build_hierarchy(WORKCLASS, ["Retired"], False)


def test_remembered_leaves_follow_a_tree_that_grows():
    h = build_hierarchy(DISEASE_TREE, LEAVES, False)
    assert h.leaves("Genetic") == ("Albinism", "Haemophilia") and h.leaf_count("*") == 8
    h.add("Rare", "Genetic")
    assert h.leaves("Genetic") == ("Albinism", "Haemophilia", "Rare") and h.leaf_count("*") == 9
    assert h.info_loss("Genetic") == pytest.approx(2 / 9)


def test_msa_4_numeric_hierarchies():
    h = build_hierarchy(None, [23, 25, 25, 31, 38, 44, 52, 52, 60], True)
    assert h.root == "[23,60]"
    assert h.children["[23,60]"] == ["[23,31]", "[38,60]"]
    assert h.children["[23,31]"] == ["23", "[25,31]"] and h.children["[25,31]"] == ["25", "31"]
    assert h.children["[38,60]"] == ["[38,44]", "[52,60]"]
    cuts = build_hierarchy({"type": "numeric", "bounds": [20, 60], "cuts": [[40], [30, 50]]},
                           [23, 27, 31, 35, 42, 46, 51, 58], True)
    assert cuts.root == "[20,60)" and cuts.children["[20,60)"] == ["[20,40)", "[40,60)"]
    assert cuts.children["[20,40)"] == ["[20,30)", "[30,40)"] and cuts.children["[20,30)"] == ["23", "27"]


def test_msa_5_mask_class():
    h = build_hierarchy(DISEASE_TREE, LEAVES, False)
    rows = [["Albinism", "Albinism"], ["Albinism", "No"], ["Albinism", "No"], ["Asthma", "Asthma"],
            ["Pneumonia", "Asthma"], ["Pneumonia", "Asthma"]]
    log = mask_class(rows, [h, h], 0.5)
    assert [(e["attribute"], e["value"], e["parent"], e["tuples"]) for e in log] == [
        (0, "Albinism", "Genetic", 3), (1, "Asthma", "Respiratory", 3), (0, "Pneumonia", "Respiratory", 2),
        (1, "No", "Other", 2), (0, "Asthma", "Respiratory", 1)]
    assert [e["confidence"] for e in log] == pytest.approx([1, 1, 2 / 3, 2 / 3, 5 / 9])
    assert rows == [["Genetic", "Albinism"], ["Genetic", "Other"], ["Genetic", "Other"],
                    ["Respiratory", "Respiratory"], ["Respiratory", "Respiratory"], ["Respiratory", "Respiratory"]]
    sa_dr = sum(h.info_loss(v) for r in rows for v in r) / (6 * 2)
    assert sa_dr == pytest.approx(19 / 96)


MSA6 = [(23, "M", "Albinism", "No"), (27, "M", "Asthma", "Asthma"), (31, "M", "Pneumonia", "Asthma"),
        (35, "M", "Albinism", "Albinism"), (42, "F", "Cold", "No"), (46, "F", "Liver cancer", "Hepatitis"),
        (51, "F", "Haemophilia", "Hepatitis"), (58, "F", "Cold", "Pneumonia")]
MSA6_SCHEMA = Schema.from_dict({"attributes": [
    {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "sex", "kind": "nominal", "role": "quasi_identifier"},
    {"name": "disease", "kind": "nominal", "role": "sensitive"},
    {"name": "household", "kind": "nominal", "role": "sensitive"}]})
AGE = {"type": "numeric", "bounds": [20, 60], "cuts": [[40], [30, 50]]}
SEX = {"type": "categorical", "tree": {"*": ["M", "F"]}}


def _msa6(alpha_sa):
    qh = [build_hierarchy(AGE, [r[0] for r in MSA6], True), build_hierarchy(SEX, [r[1] for r in MSA6], False)]
    dh = build_hierarchy(DISEASE_TREE, LEAVES, False)
    raw_qi = [[qh[0].leaf_of[str(r[0])], r[1]] for r in MSA6]
    raw_sa = [[r[2], r[3]] for r in MSA6]
    return two_step(raw_qi, raw_sa, qh, [dh, dh], 0.5, alpha_sa)


def test_msa_6_full_two_step():
    result = _msa6(0.5)
    assert result.rounds == pytest.approx([107 / 128, 35 / 64, 19 / 64, 37 / 128, 9 / 32])
    assert result.cuts == [["[20,30)", "[30,40)", "[40,50)", "[50,60)"], ["M", "F"]]
    assert result.qi_dr == pytest.approx(1 / 16) and result.sa_dr == pytest.approx(7 / 32)
    assert result.dr == pytest.approx(9 / 32)
    release = [[*q, *s] for q, s in zip(result.qi, result.sa)]
    assert release == [
        ["[20,30)", "M", "Genetic", "Other"], ["[20,30)", "M", "Respiratory", "Respiratory"],
        ["[30,40)", "M", "Respiratory", "Respiratory"], ["[30,40)", "M", "Genetic", "Genetic"],
        ["[40,50)", "F", "Respiratory", "Other"], ["[40,50)", "F", "Other", "Other"],
        ["[50,60)", "F", "Genetic", "Other"], ["[50,60)", "F", "Respiratory", "Respiratory"]]


def test_msa_6_stricter_alpha_sa():
    result = _msa6(1 / 3)
    assert result.cuts == [["[20,30)", "[30,40)", "[40,50)", "[50,60)"], ["M", "F"]]
    assert [r[0] for r in result.sa][0] == "*" and result.sa[3] == ["*", "*"] and result.sa[6][0] == "*"
    assert result.sa_dr == pytest.approx(13 / 32) and result.dr == pytest.approx(15 / 32)


def test_method_end_to_end_with_a_hierarchy_file(tmp_path):
    hierarchy = tmp_path / "hierarchies.json"
    hierarchy.write_text(json.dumps({"age": AGE, "sex": SEX, "disease": DISEASE_TREE, "household": DISEASE_TREE}))
    frame = pd.DataFrame(MSA6, columns=["age", "sex", "disease", "household"])
    schema = MSA6_SCHEMA
    method = make_method("multi_sensitive_generalization", {"alpha_qi": "0.5", "alpha_sa": "0.5",
                                                           "hierarchies": str(hierarchy)})
    result = method.apply(frame, schema, random_state=0)
    assert result.metrics["distortion_ratio"] == pytest.approx(9 / 32)
    assert method.parameters()["hierarchies"]["age"] == AGE  # the hierarchies are published parameters
    assert result.table["age"].tolist()[0] == "[20,30)"
    # alpha-SA holds on the release: no Q&S group of any class gives a leaf more than 1/2
    h = build_hierarchy(DISEASE_TREE, LEAVES, False)
    for key, cls in result.table.groupby(["age", "sex"], dropna=False):
        assert _violations(cls[["disease", "household"]].values.tolist(), [h, h], 0.5) == []
    # and alpha-QI: in every class no raw disease or household value is more than half
    raw = frame.assign(age_class=result.table["age"], sex_class=result.table["sex"])
    table = {c: raw[c].tolist() for c in raw.columns}
    assert multi_diversity(table, ["age_class", "sex_class"], ["disease"], 0.5).passed


@pytest.mark.parametrize("params", [{"alpha_qi": "1.5"}, {"alpha_sa": "0"}, {"k": "1"}])
def test_bad_parameters(params):
    with pytest.raises(InvalidInputError):
        make_method("multi_sensitive_generalization", params)


def test_infeasible_target():
    frame = pd.DataFrame(MSA6, columns=["age", "sex", "disease", "household"])
    schema = MSA6_SCHEMA
    with pytest.raises(InvalidInputError) as info:
        make_method("multi_sensitive_generalization", {"alpha_qi": "0.1"}).apply(frame, schema, random_state=0)
    assert info.value.reason == "TARGET_INFEASIBLE"


from conftest import ADULT, ADULT_OTHERS, adult_schema  # noqa: E402


def test_adult_end_to_end(tmp_path, capsys):
    from publisher.cli import main as publisher

    others = tuple(c for c in ADULT_OTHERS if c != "relationship") + ("marital-status", "race")
    schema = adult_schema(tmp_path, sensitive=("salary-class", "relationship"), others=others)
    capsys.readouterr()
    y = tmp_path / "y.csv"
    assert publisher(["anonymize", "--input", str(ADULT), "--schema", str(schema), "--method",
                      "multi_sensitive_generalization", "--param", "alpha_qi=0.95", "--param", "alpha_sa=0.7",
                      "--seed", "1", "--out", str(y), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert m["rounds"] == sorted(m["rounds"], reverse=True) and len(m["rounds"]) > 2
    # step one reads the quasi-identifiers alone (issue 58): its rounds are the QI distortion ratio's
    assert m["qi_distortion_ratio"] == pytest.approx(m["rounds"][-1]) and m["distortion_ratio"] < 0.5
    assert m["distortion_ratio"] == pytest.approx(m["qi_distortion_ratio"] + m["sa_distortion_ratio"])
    assert set(m["cuts"]) == {"age", "sex"}
    assert publisher(["assess", "--original", str(ADULT), "--anonymized", str(y), "--schema", str(schema),
                      "--generalized", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert set(a["attribute_disclosure"]) == {"salary-class", "relationship"}
    # the release keeps alpha-SA = 0.7 at the leaf level for every record's candidates
    assert all(r["max"] <= 0.7 + 1e-9 for r in a["attribute_disclosure"].values())


def _outcome(run, *args):
    """A search's whole result, or the refusal it raised (its kind and message)."""
    try:
        r = run(*args)
    except Infeasible as exc:
        return type(exc).__name__, str(exc)
    return r.qi, r.sa, r.cuts, r.qi_dr, r.sa_dr, r.rounds, r.log


def _random_search(rng: np.random.Generator) -> tuple:
    """Rows repeated (few values), a numeric quasi-identifier beside categorical ones, one to three sensitive
    attributes over the disease tree or a flat one, alphas and k from lenient to infeasible."""
    n = int(rng.integers(4, 90))
    ages = rng.integers(20, 60, int(rng.integers(1, 12)))
    age = rng.choice(ages, n)
    sex = rng.choice(["M", "F"], n)
    qh = [build_hierarchy(None, age.tolist(), True), build_hierarchy(SEX, sex.tolist(), False)]
    raw_qi = [[qh[0].leaf_of[str(a)], s] for a, s in zip(age, sex)]
    flat = {"type": "categorical", "tree": {"*": ["a", "b", "c"]}}
    trees = [(DISEASE_TREE, LEAVES[: int(rng.integers(2, 9))]) if rng.random() < 0.7 else (flat, ["a", "b", "c"])
             for _ in range(int(rng.integers(1, 4)))]
    sh = [build_hierarchy(tree, leaves, False) for tree, leaves in trees]
    raw_sa = [[str(rng.choice(leaves)) for _, leaves in trees] for _ in range(n)]
    k = int(rng.integers(2, 6)) if rng.random() < 0.3 else None
    return raw_qi, raw_sa, qh, sh, float(rng.uniform(0.3, 1.0)), float(rng.uniform(0.2, 0.9)), k


def test_the_search_on_distinct_records_is_the_search_on_rows():
    """Issue 41, item 1: the two-step generalization on the distinct records, weighted, gives the plain row by row
    version's cuts, published rows, ratios, rounds and masking log, or its refusal, on random tables."""
    rng = np.random.default_rng(41)
    outcomes = Counter()
    for trial in range(100):
        args = _random_search(rng)
        fast, plain = _outcome(two_step, *args), _outcome(two_step_exhaustive, *args)
        assert fast == plain, trial
        outcomes[plain[0] if isinstance(plain[0], str) else "published"] += 1
    assert outcomes["published"] >= 40 and outcomes["Infeasible"] + outcomes["RootInfeasible"] >= 8, outcomes


def test_the_search_on_distinct_records_is_the_search_on_rows_on_adult():
    frame = pd.read_csv(ADULT).dropna(subset=["age", "sex", "race", "salary-class", "relationship"]).head(600)
    qh = [build_hierarchy(None, frame["age"].tolist(), True), build_hierarchy(None, frame["sex"].tolist(), False),
          build_hierarchy(None, frame["race"].tolist(), False)]
    sh = [build_hierarchy(None, frame[c].astype(str).tolist(), False) for c in ("salary-class", "relationship")]
    raw_qi = [[qh[0].leaf_of[str(a)], s, r] for a, s, r in zip(frame["age"], frame["sex"], frame["race"])]
    raw_sa = frame[["salary-class", "relationship"]].astype(str).values.tolist()
    args = (raw_qi, raw_sa, qh, sh, 0.95, 0.7)
    assert _outcome(two_step, *args) == _outcome(two_step_exhaustive, *args)


def test_the_search_on_the_quasi_identifiers_alone_on_distinct_records_is_the_search_on_rows():
    """Issue 58: step one on the quasi-identifiers alone (the released method), on the distinct records and row by
    row, gives the same cuts, published rows, ratios, rounds and masking log, or the same refusal; its rounds are
    the QI distortion ratio's, and its classes hold at least k and 1/alpha_qi rows."""
    import math

    rng = np.random.default_rng(58)
    outcomes = Counter()
    for trial in range(60):
        args = _random_search(rng)
        fast = _outcome(lambda *a: two_step(*a, step_one="quasi_identifiers"), *args)
        plain = _outcome(lambda *a: two_step_exhaustive(*a, step_one="quasi_identifiers"), *args)
        assert fast == plain, trial
        if isinstance(plain[0], str):
            outcomes[plain[0]] += 1
            continue
        outcomes["published"] += 1
        qi, _, _, qi_dr, _, rounds, _ = plain
        least = max(args[6] or 1, math.ceil(1 / args[4] - 1e-12))
        assert min(Counter(map(tuple, qi)).values()) >= least and rounds[-1] == pytest.approx(qi_dr)
    assert outcomes["published"] >= 40, outcomes
