"""Assessing generalized releases (SPEC sections 6 and 8 for k-anonymous and masked tables)."""

from __future__ import annotations

import pandas as pd
import pytest

from publisher.methods import make_method
from verifier.attacks.generalized import Cell, assess_generalized, parse_cell
from verifier.data.schema import Schema

from test_sd_anonymity import SCHEMA, SD4  # the paper 001 running example


def test_parse_cells():
    assert parse_cell("[25,45]", True) == Cell(lo=25, hi=45)
    assert parse_cell("[20,40)", True).contains(39.9) and not parse_cell("[20,40)", True).contains(40)
    assert parse_cell("33", True).contains(33)
    assert parse_cell("{Japan,Korea}", False).contains("Korea") and not parse_cell("Japan", False).contains("Korea")


def test_sd_release_assessed_like_the_method_reports_it():
    frame = pd.DataFrame(SD4, columns=["age", "gender", "nat", "disease"])
    result = make_method("sd_k_anonymity", {"k": "3"}).apply(frame, SCHEMA, random_state=0)
    published = {c: [str(v) for v in result.table[c]] for c in frame.columns}
    original = {c: frame[c].tolist() for c in frame.columns}
    a = assess_generalized(original, published, SCHEMA)
    assert a["k"] == 4 and a["classes"] == 2 and a["discernibility"] == 32
    assert a["data_utility"] == pytest.approx(result.metrics["data_utility"])  # 14/27
    # the group risk: candidates are the released records whose published QIs contain hers
    assert a["attribute_disclosure"]["disease"]["max"] == pytest.approx(result.metrics["attribute_disclosure"]["disease"]["max"])
    assert a["attribute_disclosure"]["disease"]["mean_candidates"] == 4.0
    assert a["permuted_privacy"] is None and "do not apply" in a["note"]


def test_masked_sensitive_values_count_per_leaf():
    schema = Schema.from_dict({"attributes": [
        {"name": "g", "kind": "nominal", "role": "quasi_identifier"},
        {"name": "d", "kind": "nominal", "role": "sensitive"}]})
    tree = {"d": {"type": "categorical", "tree": {"*": [{"Resp": ["Asthma", "Cold"]}, "Flu"]}}}
    original = {"g": ["a", "a", "a", "a"], "d": ["Asthma", "Cold", "Flu", "Flu"]}
    published = {"g": ["a", "a", "a", "a"], "d": ["Resp", "Resp", "Flu", "Flu"]}
    a = assess_generalized(original, published, schema, hierarchies=tree)
    # Asthma: two "Resp" cells give 1/2 each, over 4 candidates -> 1/4; Flu -> 2/4
    assert a["attribute_disclosure"]["d"]["max"] == pytest.approx(0.5)
    assert a["attribute_disclosure"]["d"]["mean"] == pytest.approx((0.25 + 0.25 + 0.5 + 0.5) / 4)
    assert a["sa_distortion_ratio"] == pytest.approx((1 / 3 + 1 / 3) / 4)


# ----------------------------------------------------------------------------- information loss (issue 36, item 5)


def test_information_loss_counts_exact_cells_suppressed_records_and_classes():
    """Cells read by hand: exact, partial and root cells of a numeric and a categorical quasi-identifier."""
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "hiv"]}]})
    original = {"age": [20, 30, 40, 50], "sex": ["F", "M", "F", "M"], "disease": ["flu", "hiv", "flu", "flu"]}
    published = {"age": ["[20,30]", "[20,30]", "40", "[20,50]"], "sex": ["*", "*", "F", "*"],
                 "disease": ["flu", "hiv", "flu", "flu"]}
    out = assess_generalized(original, published, schema)
    # 8 QI cells: exact are 40 and F (2); root are the two * of sex on rows 1-2 and both cells of row 4 (its age
    # interval covers the whole range)
    assert out["exact_cell_share"] == 2 / 8
    assert out["suppressed_records"] == 1  # row 4: * and *
    assert out["classes"] == 3 and out["average_class_size"] == 4 / 3
    assert out["sensitive_at_root"] == []
    hidden = assess_generalized(original, {**published, "disease": ["*"] * 4}, schema)
    assert hidden["sensitive_at_root"] == ["disease"]


def test_a_release_that_tells_nothing_is_refused_and_the_loss_is_signed_and_audited(tmp_path, capsys):
    """The two-step example the issue found publishing one class of 3,000 records: refused, then allowed; an
    informative release signs its information loss, the audit recomputes it, and a re-signed lie is caught."""
    import json
    from pathlib import Path

    from conftest import resign_statement
    from publisher.cli import main as publisher
    from verifier.cli import main as verifier

    root = Path(__file__).resolve().parents[1]
    sample = root / "experiments" / "data" / "adult_sample_3000.csv"
    two = root / "docs" / "examples" / "adult-two-sensitive.json"
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0

    def release(name: str, alpha_qi: str, *extra: str) -> int:
        return publisher(["release", "--input", str(sample), "--schema", str(two), "--method",
                          "multi_sensitive_generalization", "--param", f"alpha_qi={alpha_qi}", "--param",
                          "alpha_sa=0.5" if alpha_qi == "0.8" else "alpha_sa=0.7", "--seed", "1", "--key",
                          str(tmp_path / "keys" / "private.pem"), "--dataset-id", "md", "--out",
                          str(tmp_path / name), *extra])

    capsys.readouterr()
    assert release("one", "0.8", "--param", "k=1000") == 3  # no class of 1,000 below the root
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "OUTPUT_UNINFORMATIVE: this release tells nothing: all 3000 records fall in " \
        "one class; every quasi-identifier of every record is generalized to the root or suppressed." in err
    assert not (tmp_path / "one").exists()
    assert release("one", "0.8", "--param", "k=1000", "--allow-uninformative") == 0
    capsys.readouterr()
    assert release("five", "0.9", "--param", "k=300") == 0
    out = capsys.readouterr().out
    utility = json.loads((tmp_path / "five" / "manifest.json").read_text())["predicate"]["utility"]
    assert utility["average_class_size"] == 1500 and utility["suppressed_records"] == 0
    assert utility["sensitive_at_root"] == ["salary-class"]
    assert f"quasi-identifier cells published exactly: {utility['exact_cell_share'] * 100:.4g}%" in out
    assert "salary-class is generalized to the root on every record: the release tells nothing of it" in out
    # ...but its base rate is the signed count of the people, the prior the masks' model reads (issue 58)
    assert ("base rate: 74.77% of the people in this release are <=50K (the publisher's signed count), so anyone "
            "guesses that right for them knowing nothing") in out
    key = str(tmp_path / "keys" / "public.pem")
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "five"), "--key", key, "--original", str(sample), "--json"]) == 0
    checks = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    for name in ("average_class_size", "exact_cell_share", "suppressed_records", "sensitive_at_root"):
        assert checks[f"utility.{name}"]["ok"] is True
    resign_statement(tmp_path / "five", tmp_path / "keys" / "private.pem",
                     lambda s: s["predicate"]["utility"].update(exact_cell_share=0.99))
    assert verifier(["audit", str(tmp_path / "five"), "--key", key, "--original", str(sample), "--json"]) == 1
    failed = [c["claim"] for c in json.loads(capsys.readouterr().out)["checks"] if not c["ok"]]
    assert failed == ["utility.exact_cell_share"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_her_class_by_distinct_cells_is_the_plain_scan_of_every_row(seed):
    """subject_class tests each distinct published cell once and spreads the answer to its rows; on random
    published tables (intervals, single numbers, sets, single categories, ``*``; many rows sharing a cell, and
    cells of one meaning written twice) her class is the rows whose every cell contains hers, row by row."""
    import numpy as np

    from verifier.attacks.classes import read_published, subject_class

    rng = np.random.default_rng(seed)
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "city", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c", "d"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "hiv"]}]})
    ages = ["30", "30.0", "[30,39]", "[30,40)", "[20,29]", "35", "*", "[0,100]", "40"]
    cities = ["a", "b", "{a,b}", "{a,c,d}", "*", "{b,d}", "c"]
    n = 300
    columns = [[ages[i] for i in rng.integers(0, len(ages), n)], [cities[i] for i in rng.integers(0, len(cities), n)],
               [["flu", "hiv"][i] for i in rng.integers(0, 2, n)]]
    published = read_published(schema, ["age", "city", "disease"], columns)
    for age in (30.0, 35.0, 39.5, 40.0, 25.0, 99.0):
        for city in range(4):
            mine = np.array([age, city, 0.0])
            plain = [i + 1 for i in range(n) if published.cells["age"][i].contains(age)
                     and published.cells["city"][i].contains(["a", "b", "c", "d"][city])]
            found = subject_class(published, mine)
            assert found["rows"] == plain and found["class_size"] == len(plain), (age, city)


def test_ncp_and_cell_extents_by_distinct_cells_are_the_row_by_row_figures():
    """NCP and the cells' extents are computed once per distinct cell and summed in row order: bit for bit the
    row-by-row figures, on a random published table whose cells repeat."""
    import numpy as np

    from verifier.attacks import generalized as g

    rng = np.random.default_rng(3)
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "city", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c", "d"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "hiv"]}]})
    n = 400
    original = {"age": [str(v) for v in rng.integers(20, 60, n)], "city": [["a", "b", "c", "d"][i] for i in rng.integers(0, 4, n)],
                "disease": [["flu", "hiv"][i] for i in rng.integers(0, 2, n)]}
    published = {"age": [["[20,39]", "[40,59]", "*", "30", "[20,59]"][i] for i in rng.integers(0, 5, n)],
                 "city": [["{a,b}", "c", "*", "{a,b,c,d}", "d"][i] for i in rng.integers(0, 5, n)],
                 "disease": original["disease"]}
    found = assess_generalized(original, published, schema)
    attrs = list(schema.attributes)
    qi = [a for a in attrs if a.role == "quasi_identifier"]
    hier = g._column_hierarchies(attrs, original, None)
    total = 0.0
    for a in qi:  # the plain sum: every row's cell, its size computed afresh
        numeric = a.kind == "numeric"
        col = np.array([float(v) for v in original[a.name]]) if numeric else np.array(original[a.name])
        domain = len(set(map(str, col))) if not numeric else 0
        for text in published[a.name]:
            frac, count = g._size(g.parse_cell(text, numeric, hier.get(a.name)), col, numeric)
            total += frac if numeric else (0.0 if count <= 1 else count / domain)
    assert found["ncp"] == total / (n * len(qi))
    exact = sum(g._extent(g.parse_cell(t, a.kind == "numeric", hier.get(a.name)),
                          np.array([float(v) for v in original[a.name]]) if a.kind == "numeric" else np.array(original[a.name]),
                          a.kind == "numeric", 0 if a.kind == "numeric" else len(set(original[a.name]))) == "exact"
                for a in qi for t in published[a.name])
    assert found["exact_cell_share"] == exact / (n * len(qi))


@pytest.mark.parametrize("seed", range(8))
def test_group_disclosure_by_distinct_tuples_is_the_record_by_record_figure(seed):
    """The group risk found once per distinct tuple of quasi-identifier values, each class's share of a value added
    by one weighted count, against the plain twin that walks every record and every row: the same max, mean and mean
    candidates, to the bit, on random generalized tables whose cells repeat and overlap, with a generalized
    sensitive column beside a plain one, and original values no cell covers."""
    import numpy as np

    from verifier.attacks import generalized as g

    rng = np.random.default_rng(seed)
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "city", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c", "d"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "hiv", "tb"]},
        {"name": "job", "kind": "nominal", "role": "sensitive", "categories": ["x", "y", "z"]}]})
    n = int(rng.integers(1, 500))
    original = {"age": [str(v) for v in rng.integers(18, 62, n)],
                "city": [["a", "b", "c", "d"][i] for i in rng.integers(0, 4, n)],
                "disease": [["flu", "hiv", "tb"][i] for i in rng.integers(0, 3, n)],
                "job": [["x", "y", "z"][i] for i in rng.integers(0, 3, n)]}
    published = {"age": [["[20,39]", "[40,59]", "*", "30", "[20,59]", "[18,29]"][i] for i in rng.integers(0, 6, n)],
                 "city": [["{a,b}", "c", "*", "{a,b,c,d}", "d", "{b,c}"][i] for i in rng.integers(0, 6, n)],
                 "disease": original["disease"],
                 "job": [["x", "{x,y}", "*", "{y,z}", "z"][i] for i in rng.integers(0, 5, n)]}
    attrs = list(schema.attributes)
    qi = [a for a in attrs if a.role == "quasi_identifier"]
    sens = [a for a in attrs if a.role == "sensitive"]
    hier = g._column_hierarchies(attrs, original, None)
    coded = {a.name: g._parsed_column(published[a.name], a.kind == "numeric", hier.get(a.name)) for a in attrs}
    cells = {name: [distinct[c] for c in codes.tolist()] for name, (distinct, codes) in coded.items()}
    klass = g._classes_of(published, qi, n)
    sizes = np.bincount(klass)
    plain = g.plain_group_disclosure(qi, sens, original, cells, klass, sizes, int(klass.max()) + 1, n)
    assert g._group_disclosure(qi, sens, original, coded, klass, sizes, int(klass.max()) + 1, n) == plain
    assert assess_generalized(original, published, schema)["attribute_disclosure"] == plain
    assert 0 < plain["job"]["max"] <= 1 and plain["disease"]["mean_candidates"] > 0


@pytest.mark.parametrize("cells", [
    ["[1,5]", " [1,5]", "*", "[1,5]", "{a,b}", "*"],
    [1, "1", 1.0, None, float("nan"), "None", "nan", " 1"],
    [],
    ["x"] * 5,
])
def test_texts_are_factorized_as_the_str_of_every_cell(cells):
    """The distinct texts are numbered as ``pd.factorize`` numbers ``str`` of every cell, even where only the
    distinct cells are made text (numbers, None and NaN among them: each cell's own text)."""
    import numpy as np

    from verifier.attacks import generalized as g

    codes, texts = g._factorized_texts(cells)
    plain_codes, plain = pd.factorize(pd.Series([str(t) for t in cells], dtype=object))
    assert codes.tolist() == plain_codes.tolist() and texts == plain.tolist()
    assert codes.dtype == np.int64


@pytest.mark.parametrize("seed", range(6))
def test_coded_columns_read_as_their_cells(seed):
    """The publisher hands read_published its columns coded (distinct texts, each row's position, unused texts
    too): the same texts and cells as the cells written out, and a bad cell named at the same first row."""
    import numpy as np

    from verifier.attacks.classes import read_published
    from verifier.data.csv_columns import CodedColumn
    from verifier.errors import InvalidInputError

    rng = np.random.default_rng(seed)
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "note", "kind": "nominal", "role": "other", "categories": ["x", "y"]},
        {"name": "s", "kind": "nominal", "role": "sensitive", "categories": ["a", "b", "c"]}]})
    texts = {"age": ["[20,30]", "[30,40)", "*", "35", " [20,30]", "[1,2]"], "sex": ["F", "M", "{F,M}", "*"],
             "note": ["x", "y"], "s": ["a", "b", "{a,c}", "*"]}
    if seed % 2:  # a cell that is no category, held by some rows only
        texts["s"].append("d")
    n = 50
    coded = [CodedColumn(texts[name], rng.integers(0, len(texts[name]) - (name == "age"), n))
             for name in schema.names]  # age's last text is held by no row
    plain = [c.cells() for c in coded]
    try:
        expected = read_published(schema, schema.names, plain, path="p")
    except InvalidInputError as exc:
        with pytest.raises(InvalidInputError) as caught:
            read_published(schema, schema.names, coded, path="p")
        assert caught.value.message == exc.message and caught.value.reason == exc.reason
        return
    got = read_published(schema, schema.names, coded, path="p")
    assert got.text == expected.text and got.cells == expected.cells
