"""Cells a spreadsheet would run as formulas: refused by the publisher, counted by the verifier (issue 18, item 4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import write
from publisher.cli import main as publisher
from publisher.keys import keygen
from verifier.cli import main as verifier
from verifier.data.formula_cells import formula_cells_in_keys, formula_cells_in_text
from verifier.data.schema import Schema

SCHEMA = {"attributes": [
    {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "income", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "note", "kind": "nominal", "role": "sensitive"},
]}
#: tab and carriage return starts cannot sit in a strict CSV cell; the counting test covers them
HOSTILE = ["=HYPERLINK(A1)", "=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)"]


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    priv, pub, _, _ = keygen(d, None)
    return priv, pub


def _table(folder, notes, header="age,income,note"):
    rng = np.random.default_rng(3)
    rows = [f"{a},{b:.2f},{n}" for a, b, n in zip(rng.integers(18, 90, len(notes)), rng.normal(0, 1e4, len(notes)),
                                                  notes)]
    data = write(folder / "x.csv", header + "\n" + "\n".join(rows) + "\n")
    schema = dict(SCHEMA)
    schema["attributes"] = [dict(a) for a in SCHEMA["attributes"]]
    schema["attributes"][2]["name"] = header.split(",")[2]
    return data, write(folder / "schema.json", json.dumps(schema))


def _release(folder, keys, data, schema, *extra):
    return publisher(["release", "--input", str(data), "--schema", str(schema), "--method", "additive_noise",
                      "--param", "relative_sd=0.5", "--seed", "1", "--key", str(keys[0]), "--dataset-id", "t",
                      "--out", str(folder / "rel"), *extra])


@pytest.mark.parametrize("cell", HOSTILE)
def test_publisher_refuses_a_formula_like_category_naming_column_and_row(tmp_path, keys, capsys, cell):
    notes = ["fine", "ok", "plain"] * 20
    notes[13] = cell
    data, schema = _table(tmp_path, notes)
    assert _release(tmp_path, keys, data, schema) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"FAIL: {data}: FORMULA_LIKE_CELL: column 'note', row 14 ")
    assert cell not in err[0] and "HYPERLINK" not in err[0]  # the cell itself is never echoed
    assert not (tmp_path / "rel").exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".rel")] == []


def test_allowed_formula_cells_are_counted_by_verify_and_check(tmp_path, keys, capsys):
    notes = ["fine", "ok", "plain"] * 20
    notes[4] = notes[40] = "=1+1"
    notes[7] = "@x"
    data, schema = _table(tmp_path, notes)
    assert _release(tmp_path, keys, data, schema, "--allow-formula-cells") == 0
    capsys.readouterr()
    rel, pub = str(tmp_path / "rel"), str(keys[1])
    assert verifier(["verify", rel, "--key", pub, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["formula_like_cells"] == 3
    assert verifier(["verify", rel, "--key", pub]) == 0
    out = capsys.readouterr().out
    assert "WARNING: 3 text cells of release.csv start with =, +, -, @" in out and "column 'note', row " in out
    me = write(tmp_path / "me.json", json.dumps({"age": 40, "income": 100.5, "note": "fine"}))
    assert verifier(["check", rel, "--key", pub, "--record", str(me), "--json", "--no-random-match"]) == 0
    assert json.loads(capsys.readouterr().out)["formula_like_cells"] == 3
    assert verifier(["check", rel, "--key", pub, "--record", str(me), "--no-random-match"]) == 0
    assert "WARNING: 3 text cells" in capsys.readouterr().out


def test_negative_numbers_are_not_text_and_clean_releases_say_zero(tmp_path, keys, capsys):
    data, schema = _table(tmp_path, ["fine", "ok", "plain"] * 20)
    assert "-" in data.read_text()  # negative incomes are in the file
    assert _release(tmp_path, keys, data, schema) == 0
    capsys.readouterr()
    assert verifier(["verify", str(tmp_path / "rel"), "--key", str(keys[1]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["formula_like_cells"] == 0
    assert verifier(["verify", str(tmp_path / "rel"), "--key", str(keys[1])]) == 0
    assert "WARNING" not in capsys.readouterr().out


def test_a_formula_like_column_name_is_refused_too(tmp_path, keys, capsys):
    data, schema = _table(tmp_path, ["fine", "ok", "plain"] * 20, header="age,income,=note")
    assert _release(tmp_path, keys, data, schema) == 3
    assert "FORMULA_LIKE_CELL: the name of column '=note' starts with" in capsys.readouterr().err


def test_counting_rules_on_keys_and_text():
    schema = Schema.from_dict({"attributes": [
        {"name": "n", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "c", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "\tb", "=c", "d-"]},
        {"name": "o", "kind": "ordinal", "role": "sensitive", "categories": ["+", "x"]},
    ]})
    keys = np.array([[-1.0, 0, 1], [-2.0, 1, 1], [3.0, 3, 0], [4.0, 2, 1], [5.0, 0, 0]])
    found = formula_cells_in_keys(schema, keys)
    assert (found.count, found.first) == (4, ("c", 2))  # "\tb", "=c" and two "+"; "d-" and -1.0 are fine
    text = {"n": ["-1", "[-5,3]", "*"], "c": ["{=c,a}", "-x", "a"], "o": ["x", "x", "@y"]}
    found = formula_cells_in_text(schema, text)
    assert (found.count, found.first) == (2, ("c", 2))  # a set starting "{" is not a formula; "-x" and "@y" are
    assert formula_cells_in_keys(schema, keys[[0]]).count == 0
