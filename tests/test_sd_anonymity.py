"""SD k-anonymization (paper 001; spec/methods.md section 1.6: SD-1 to SD-6)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from publisher.methods import make_method
from publisher.methods.sd_scan import _pairwise_sum
from publisher.methods.sd_anonymity import SDModel, recoded_cells, discernibility, ncp, sd_classes, value_distances
from publisher.methods.sd_model import sd_classes_exhaustive
from verifier.errors import InvalidInputError
from verifier.data.schema import Schema
from verifier.data.tables import number_label


def _fig1(k):
    rows = ([("Male", "Japan")] * 5 + [("Male", "Korea")] * 5 + [("Male", "China")]
            + [("Female", "Japan")] * 3 + [("Female", "China")] * 6)
    cols = [np.array([r[j] for r in rows]) for j in range(2)]
    return SDModel(["gender", "nationality"], [False, False], cols, k)


def test_sd_1_and_sd_2_context_and_back_off():
    for k, korea, china in ((3, 1 / 4, 1 / 2), (12, 1 / 2, 1 / 4)):
        model = _fig1(k)
        assert model.chain == [0, 1] and model.minimum == {0: 1.0, 1: 1.0}
        table = model.attribute_table(1, {0: "Male", 1: "Japan"}, np.arange(20))
        assert table["Japan"]["Korea"] == pytest.approx(korea) and table["Japan"]["China"] == pytest.approx(china)
        assert model.attribute_table(0, {}, np.arange(20))["Male"]["Female"] == 1.0


def test_sd_3_chain_of_three():
    nat = value_distances("Japan", {"Japan": 1 / 2, "Korea": 3 / 10, "China": 1 / 5}, 1.0)
    assert nat["China"] == pytest.approx(1 / 2) and nat["Korea"] == pytest.approx(1 / 4)
    m_edu = 1.0 / (3 - 1) ** (3 - 1)  # min_Nat
    edu = value_distances("HS", {"HS": 9 / 23, "Bachelor": 4 / 23, "Master": 8 / 23, "PhD": 2 / 23}, m_edu)
    assert edu["PhD"] == pytest.approx(1 / 12) and edu["Bachelor"] == pytest.approx(1 / 36)
    assert edu["Master"] == pytest.approx(1 / 108)
    assert 1 + nat["China"] + edu["PhD"] == pytest.approx(19 / 12)
    # the chain's minimum distances, from a table with those cardinalities
    cols = [np.array(["M", "F"] * 6), np.array(["J", "K", "C"] * 4), np.array(["H", "B", "Ma", "P"] * 3)]
    model = SDModel(["g", "n", "e"], [False] * 3, cols, 2)
    assert model.minimum == {0: 1.0, 1: 1.0, 2: pytest.approx(1 / 4)}


SD4 = [(25, "M", "Japan", "Flu"), (27, "M", "Korea", "HIV"), (30, "F", "China", "Cold"), (41, "F", "China", "Flu"),
       (45, "M", "Japan", "Asthma"), (52, "F", "Korea", "Cold"), (28, "M", "Japan", "Flu"), (47, "F", "China", "HIV")]
SCHEMA = Schema.from_dict({"attributes": [
    {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "gender", "kind": "nominal", "role": "quasi_identifier"},
    {"name": "nat", "kind": "nominal", "role": "quasi_identifier"},
    {"name": "disease", "kind": "nominal", "role": "sensitive"}]})


def _model(rows, k):
    cols = [np.array([r[0] for r in rows], dtype=float), np.array([r[1] for r in rows]), np.array([r[2] for r in rows])]
    return SDModel(["age", "gender", "nat"], [True, False, False], cols, k)


@pytest.mark.parametrize("k, classes, ncp_total, dm", [
    (3, [[0, 6, 1, 4], [2, 3, 7, 5]], Fraction(13, 27), 32),
    (2, [[0, 6], [1, 4], [2, 3], [7, 5]], Fraction(73, 324), 16),
])
def test_sd_4_full_run(k, classes, ncp_total, dm):
    model = _model(SD4, k)
    got = sd_classes(model)
    assert got == classes
    assert ncp(model, got) == pytest.approx(float(ncp_total))
    assert discernibility([len(c) for c in got], k, 8) == dm


def test_sd_4_through_the_method():
    frame = pd.DataFrame(SD4, columns=["age", "gender", "nat", "disease"])
    result = make_method("sd_k_anonymity", {"k": "3"}).apply(frame, SCHEMA, random_state=0)
    rows = list(result.table.itertuples(index=False, name=None))
    assert rows[0] == ("[25,45]", "M", "{Japan,Korea}", "Flu")
    assert rows[2] == ("[30,52]", "F", "{China,Korea}", "Cold")
    m = result.metrics
    assert m["classes"] == 2 and m["k_anonymous"] and m["min_class_size"] == 4
    assert m["data_utility"] == pytest.approx(14 / 27) and m["discernibility"] == 32
    assert m["attribute_disclosure"]["disease"]["max"] == pytest.approx(0.5)


def test_sd_5_the_loop_builds_the_last_full_class():
    model = _model(SD4[:6], 3)
    assert sd_classes(model) == [[0, 1, 4], [2, 3, 5]]


def test_sd_6_dm_with_suppression():
    assert discernibility([3, 3, 2], 3, 8) == 34


def test_bad_k():
    with pytest.raises(InvalidInputError):
        make_method("sd_k_anonymity", {"k": "1"})
    frame = pd.DataFrame(SD4, columns=["age", "gender", "nat", "disease"])
    with pytest.raises(InvalidInputError, match="larger than the number of records"):
        make_method("sd_k_anonymity", {"k": "9"}).apply(frame, SCHEMA, random_state=0)


from conftest import ADULT, adult_schema  # noqa: E402


def test_adult_end_to_end(tmp_path, capsys):
    import csv
    import json

    from publisher.cli import main as publisher

    schema = adult_schema(tmp_path)
    capsys.readouterr()
    y = tmp_path / "y.csv"
    assert publisher(["anonymize", "--input", str(ADULT), "--schema", str(schema), "--method", "sd_k_anonymity",
                      "--param", "k=5", "--seed", "1", "--out", str(y), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert m["k_anonymous"] and m["min_class_size"] >= 5 and m["max_class_size"] <= 9
    assert 0 < m["data_utility"] < 1 and m["discernibility"] >= 2000 * 5
    with y.open() as handle:
        rows = list(csv.DictReader(handle))
    qi = ("age", "marital-status", "race", "sex")
    classes = {}
    for r in rows:
        classes[tuple(r[c] for c in qi)] = classes.get(tuple(r[c] for c in qi), 0) + 1
    assert min(classes.values()) >= 5  # k-anonymous on the published values themselves
    # the plain assessment refuses generalized cells with a hint; --generalized assesses them
    assert publisher(["assess", "--original", str(ADULT), "--anonymized", str(y), "--schema", str(schema)]) == 3
    assert "add --generalized" in capsys.readouterr().err
    assert publisher(["assess", "--original", str(ADULT), "--anonymized", str(y), "--schema", str(schema),
                      "--generalized", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert a["k"] >= 5 and a["data_utility"] == pytest.approx(m["data_utility"])
    assert a["attribute_disclosure"]["salary-class"]["mode"] == "group"


# ----------------------------------------------------------------------------- the fast clustering (issue 15, item 4)


def _random_model(rng: np.random.Generator, trial: int) -> SDModel:
    n, k, q = int(rng.integers(2, 150)), int(rng.integers(2, 6)), int(rng.integers(1, 5))
    k = min(k, n)
    cols, numeric = [], []
    for _ in range(q):
        if rng.random() < 0.4:  # numeric: continuous, or few values (ties), or constant
            kind = trial % 3
            col = (np.round(rng.normal(size=n), 1) if kind == 0 else
                   rng.integers(0, int(rng.integers(1, 8)), n).astype(float))
            cols.append(col)
            numeric.append(True)
        else:
            cols.append(np.array([f"v{v}" for v in rng.integers(0, int(rng.integers(1, 7)), n)]))
            numeric.append(False)
    return SDModel([f"a{j}" for j in range(q)], numeric, cols, k)


def test_the_fast_clustering_gives_the_plain_classes_on_random_tables():
    rng = np.random.default_rng(2026)
    for trial in range(150):
        model = _random_model(rng, trial)
        assert sd_classes(model) == sd_classes_exhaustive(model), trial


@pytest.mark.parametrize("model", [_model(SD4, 3), _model(SD4, 2), _model(SD4[:6], 3), _fig1(3), _fig1(12)])
def test_the_fast_clustering_gives_the_plain_classes_on_the_spec_tables(model):
    assert sd_classes(model) == sd_classes_exhaustive(model)


@pytest.mark.parametrize("k", [2, 5])
def test_the_fast_clustering_gives_the_plain_classes_on_adult(k):
    names = ["age", "marital-status", "race", "sex", "workclass"]
    frame = pd.read_csv(ADULT).dropna(subset=names)
    numeric = [True, False, False, False, False]
    cols = [frame[c].to_numpy(dtype=float) if num else frame[c].astype(str).to_numpy() for c, num in zip(names, numeric)]
    model = SDModel(names, numeric, cols, k)
    assert sd_classes(model) == sd_classes_exhaustive(model)


def _mixed_model(rng: np.random.Generator) -> SDModel:
    """Several numeric quasi-identifiers beside categorical ones, records repeated (tuples hold several records),
    k up to 20 (numpy's 8-way sums of a centre's mean), sometimes a categorical one the most varied (the scan
    order then follows its text while the search walks a numeric one)."""
    n = int(rng.integers(20, 160))
    k = min(int(rng.integers(2, 21)), n)
    distinct = int(rng.integers(2, n + 1))
    cols, numeric = [], []
    for _ in range(int(rng.integers(1, 4))):
        cols.append(rng.choice(np.round(rng.normal(size=distinct) * 10, int(rng.integers(0, 3))), n))
        numeric.append(True)
    for _ in range(int(rng.integers(0, 4))):
        cols.append(np.array([f"c{v}" for v in rng.integers(0, int(rng.integers(1, 9)), n)]))
        numeric.append(False)
    if rng.random() < 0.3:
        cols.append(np.array([f"id{v:03d}" for v in rng.integers(0, min(n, 40), n)]))
        numeric.append(False)
    order = rng.permutation(len(cols))
    return SDModel([f"a{j}" for j in range(len(cols))], [numeric[j] for j in order], [cols[j] for j in order], k)


def test_the_compiled_loop_gives_the_plain_classes_on_mixed_tables():
    """The search by tuple, walking a numeric attribute, against the plain Fig. 3 (issue 41, item 1)."""
    rng = np.random.default_rng(41)
    for trial in range(80):
        model = _mixed_model(rng)
        assert sd_classes(model) == sd_classes_exhaustive(model), trial


def test_a_quasi_identifier_of_150_values_is_clustered_as_the_plain_version_does():
    """(c - 1)^j passes a float's range from c = 144: Def. 2's distances are then rounded once from exact values."""
    rng = np.random.default_rng(150)
    cols = [np.array([f"v{v:03d}" for v in rng.permutation(np.arange(300) % 150)]), rng.integers(0, 9, 300) * 1.0]
    model = SDModel(["place", "age"], [False, True], cols, 10)
    assert model.minimum == {0: 1.0}
    assert sd_classes(model) == sd_classes_exhaustive(model)


def _plain_cell(values: np.ndarray, numeric: bool) -> str:
    if numeric:
        lo, hi = values.min(), values.max()
        return number_label(lo) if lo == hi else f"[{number_label(lo)},{number_label(hi)}]"
    distinct = sorted(set(values.tolist()), key=str)
    return distinct[0] if len(distinct) == 1 else "{" + ",".join(distinct) + "}"


def _plain_ncp(model: SDModel, classes: list[list[int]]) -> float:
    total = 0.0
    for members in classes:
        cost = 0.0
        for j, num in enumerate(model.numeric):
            values = model.columns[j][members]
            if num:
                part = (values.max() - values.min()) / model.range[j] if model.range[j] > 0 else 0.0
            else:
                distinct = len(set(values.tolist()))
                part = 0.0 if distinct == 1 else distinct / len(model.domain[j])
            cost += part
        total += len(members) * cost
    return total / (sum(map(len, classes)) * len(model.names))


def test_the_cells_and_ncp_are_the_plain_class_by_class_figures():
    """The recoding and NCP work column by column over all classes at once: the same text and the same float
    as a loop over the classes."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        model = _mixed_model(rng) if trial % 2 else _random_model(rng, trial)
        classes = sd_classes(model)
        cells = recoded_cells(model, classes)
        for j, num in enumerate(model.numeric):
            assert cells[j].tolist() == [_plain_cell(model.columns[j][c], num) for c in classes], trial
        assert ncp(model, classes) == _plain_ncp(model, classes), trial


def test_a_centre_s_mean_is_numpy_s_bit_for_bit():
    """The compiled loop sums a class's numeric values as numpy does (pairwise), so means agree exactly."""
    rng = np.random.default_rng(8)
    for n in [*range(1, 300), 1031, 9000]:
        values = rng.random(n) * 10.0 ** rng.integers(-3, 5, n)
        assert _pairwise_sum(values, 0, n) / n == values.mean(), n


def _categorical_model(rng: np.random.Generator) -> SDModel:
    """Categorical quasi-identifiers only (the combination index's case), few values so that combinations
    repeat; sometimes a constant or a numeric constant column (neither counts)."""
    n, q = int(rng.integers(2, 300)), int(rng.integers(1, 5))
    k = min(int(rng.integers(2, 7)), n)
    cols = [np.array([f"v{v}" for v in rng.integers(0, int(rng.integers(1, 6)), n)]) for _ in range(q)]
    numeric = [False] * q
    if rng.random() < 0.3:
        cols.append(np.full(n, 3.0))
        numeric.append(True)
    return SDModel([f"a{j}" for j in range(len(cols))], numeric, cols, k)


def test_the_combination_index_gives_the_plain_classes_on_categorical_tables():
    rng = np.random.default_rng(30)
    for trial in range(120):
        model = _categorical_model(rng)
        assert sd_classes(model) == sd_classes_exhaustive(model), trial


def test_the_combination_index_gives_the_plain_classes_on_adult_categorical_qis():
    """The census benchmark's quasi-identifiers (issue 30): education, marital status, race, sex, workclass."""
    names = ["education", "marital-status", "race", "sex", "workclass"]
    frame = pd.read_csv(ADULT).dropna(subset=names).head(700)
    model = SDModel(names, [False] * 5, [frame[c].astype(str).to_numpy() for c in names], 5)
    assert sd_classes(model) == sd_classes_exhaustive(model)


def _groups_by_hand(cols: list[np.ndarray], k: int) -> tuple[list[list[int]], list[int]]:
    """standing_groups written plainly: every record's value tuple, its rows, the tuples of k or more."""
    n = len(cols[0])
    rows: dict[tuple, list[int]] = {}
    for i in range(n):
        rows.setdefault(tuple(c[i] for c in cols), []).append(i)
    groups = sorted((r for r in rows.values() if len(r) >= k), key=lambda r: r[0])
    rest = sorted(i for r in rows.values() if len(r) < k for i in r)
    while 0 < len(rest) < k and groups:
        smallest = min(len(g) for g in groups)
        back = max(i for i, g in enumerate(groups) if len(g) == smallest)
        rest = sorted(rest + groups.pop(back))
    return groups, rest


def test_standing_groups_are_the_tuples_of_k_or_more_and_sd_clusters_the_rest():
    """Issue 41, item 3: keep_groups lets each group of at least k identical records stand as its own class and
    SD cluster the rest as a table of its own, on random tables with and without ties; every class has k or more
    records, and the standing ones are published exactly."""
    from publisher.methods.sd_anonymity import SDKAnonymity, standing_groups

    rng = np.random.default_rng(41)
    for trial in range(80):
        model = _random_model(rng, trial)
        groups, rest = standing_groups(model.columns, model.k)
        assert (groups, rest.tolist()) == _groups_by_hand(model.columns, model.k), trial
        method = SDKAnonymity(k=model.k, keep_groups=True)
        classes = method._classes(model, model.numeric, model.columns)
        rest_model = SDModel(model.names, model.numeric, [c[rest] for c in model.columns], model.k)
        assert classes[:len(groups)] == groups
        assert classes[len(groups):] == ([[int(rest[i]) for i in c] for c in sd_classes_exhaustive(rest_model)]
                                         if rest.size else [])
        assert sorted(i for c in classes for i in c) == list(range(len(model.columns[0])))
        assert len(model.columns[0]) < model.k or min(map(len, classes)) >= model.k
    frame = pd.DataFrame({"age": [30.0] * 5 + [40.0, 41, 42, 43, 44], "sex": ["F"] * 5 + ["M"] * 5})
    schema = Schema.from_dict({"attributes": [{"name": "age", "kind": "numeric", "role": "quasi_identifier"},
                                              {"name": "sex", "kind": "nominal", "role": "quasi_identifier"}]})
    kept = make_method("sd_k_anonymity", {"k": "5", "keep_groups": "true"}).apply(frame, schema, random_state=None)
    plain = make_method("sd_k_anonymity", {"k": "5"}).apply(frame, schema, random_state=None)
    assert kept.table["age"].tolist()[:5] == ["30"] * 5 and kept.metrics["standing_groups"] == 1
    assert plain.metrics.get("standing_groups") is None
    # the Adult sample: less NCP (the standing groups' cells need no recoding), more discernibility (they are large)
    names = ["age", "education", "marital-status", "race", "sex"]
    sample = pd.read_csv(Path(__file__).resolve().parents[1] / "experiments" / "data" / "adult_sample_3000.csv",
                         dtype=str, keep_default_na=False)[names]
    sample = sample[(sample != "").all(axis=1)].reset_index(drop=True)
    sample["age"] = sample["age"].astype(float)
    schema = Schema.from_dict({"attributes": [{"name": n, "kind": "numeric" if n == "age" else "nominal",
                                               "role": "quasi_identifier"} for n in names]})
    runs = [make_method("sd_k_anonymity", {"k": "5", "keep_groups": keep}).apply(sample, schema, random_state=None)
            for keep in ("false", "true")]
    assert runs[1].metrics["ncp"] < runs[0].metrics["ncp"]
    assert runs[1].metrics["discernibility"] > runs[0].metrics["discernibility"]
    assert runs[1].metrics["min_class_size"] >= 5 and runs[1].metrics["standing_groups"] > 0
