"""Bad input is refused with one clear line naming file, column and rows
(SPEC section 1; spec/reliability.md cases 28-32), exit code 3, nothing written."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import write
from verifier import RankSpace, compute_permuted_privacy
from verifier.cli import main
from verifier.errors import InvalidInputError
from verifier.data.tables import read_table
from verifier.data.schema import Schema
from verifier.data.schema_file import load_schema

GOOD_Y = "a,b\n1,2\n2,3\n3,1\n"


def run_reverse_map(tmp_path, x_content, *, capsys, y_content=GOOD_Y, suffix=".csv"):
    """Run the CLI on a bad X; return (exit code, stderr), asserting nothing was written."""
    x = tmp_path / f"x{suffix}"
    if isinstance(x_content, pa.Table):
        pq.write_table(x_content, x)
    else:
        write(x, x_content)
    y = write(tmp_path / "y.csv", y_content)
    out = tmp_path / "z.csv"
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main(["reverse-map", "--original", str(x), "--anonymized", str(y), "--out", str(out)])
    err = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "something was written"
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return code, err


CSV_CASES = [
    # case 28: structure
    ("", "TABLE_EMPTY", "empty"),
    ("a,b\n", "TABLE_EMPTY", "no rows"),
    ("a;b\n1;2\n", "CSV_MALFORMED", "';'-separated"),
    ("a,b\n1,\xe9\n".encode("latin-1"), "ENCODING", "line 2"),
    ('a,b\n1,"2\n', "CSV_MALFORMED", "line"),
    ("a,b\n1,2\n3\n", "CSV_MALFORMED", "row 2 (line 3) has 1 cells"),
    ("a,b\n1,2\n3,4,5\n", "CSV_MALFORMED", "row 2 (line 3) has 3 cells"),
    ("a,a\n1,2\n", "COLUMN_DUPLICATE", "'a' appears twice"),
    ("a, \n1,2\n", "HEADER_INVALID", "column 2 of the header is blank"),
    ("a, b\n1,2\n", "HEADER_INVALID", "' b'"),
    ("a,b\n1,2\x00\n", "CSV_MALFORMED", "NUL byte on line 2"),
    ("a,b\n1,2\n\n3,4\n", "CSV_MALFORMED", "row 2 (line 3) is blank"),
    # case 29: values
    ("a,b\n1,2\n2,x\n3,y\n", "VALUE_NOT_NUMERIC", "column 'b', rows 2, 3"),
    ("a,b\n1,NA\n2,3\n", "VALUE_MISSING", "column 'b', row 1"),
    ("a,b\n1,None\n2,3\n", "VALUE_MISSING", "column 'b', row 1"),
    ("a,b\n1,\n2,3\n", "VALUE_MISSING", "column 'b', row 1"),
    ("a,b\n1,nan\n", "VALUE_MISSING", "column 'b', row 1"),
    ("a,b\n1,inf\n", "VALUE_NOT_NUMERIC", "column 'b', row 1"),
    ("a,b\n1,1e309\n", "VALUE_OUT_OF_RANGE", "too large"),
    ("a,b\n1,1e-400\n", "VALUE_OUT_OF_RANGE", "too small"),
    ("a,b\n1,9007199254740993\n", "VALUE_IMPRECISE", "'9007199254740993'"),
    ("a,b\n1,12345678901234567890\n", "VALUE_IMPRECISE", "column 'b', row 1"),
    ('a,b\n1,"5,5"\n', "VALUE_NOT_NUMERIC", "'5,5'"),
    ("a,b\n1,1_000\n", "VALUE_NOT_NUMERIC", "'1_000'"),
    ("a,b\n1,\uff11\uff12\uff13\n", "VALUE_NOT_NUMERIC", "column 'b'"),
    ("a,b\n1,\u2212" "5\n", "VALUE_NOT_NUMERIC", "column 'b'"),
    # the schema's column missing (with the default schema: Y's columns differ)
    ("a,c\n1,2\n", "COLUMN_MISSING", "'b'"),
]


@pytest.mark.parametrize(("content", "reason", "phrase"), CSV_CASES)
def test_bad_csv_is_refused(tmp_path, capsys, content, reason, phrase):
    if reason == "COLUMN_MISSING":
        # X is read first with its own columns; Y must then hold them
        code, err = run_reverse_map(tmp_path, GOOD_Y, y_content=content, capsys=capsys)
        assert str(tmp_path / "y.csv") in err
    else:
        code, err = run_reverse_map(tmp_path, content, capsys=capsys)
        assert str(tmp_path / "x.csv") in err
    assert code == 3
    assert f": {reason}: " in err and err.startswith("FAIL: ")
    assert phrase in err


def test_missing_file(tmp_path, capsys):
    code = main(["reverse-map", "--original", str(tmp_path / "nope.csv"), "--anonymized", str(tmp_path / "y.csv"),
                 "--out", str(tmp_path / "z.csv")])
    err = capsys.readouterr().err
    assert code == 3 and "FILE_NOT_FOUND" in err and "nope.csv" in err
    assert list(tmp_path.iterdir()) == []


def test_bom_is_accepted(tmp_path):
    table = read_table(write(tmp_path / "x.csv", "\ufeffa,b\n1,2\n"))
    assert table.names == ["a", "b"] and table.values.tolist() == [[1.0, 2.0]]


def test_accepted_number_spellings(tmp_path):
    table = read_table(write(tmp_path / "x.csv", "a\n-1.5\n+2\n3.\n.5\n1e3\n-0.0\n9007199254740992\n"))
    assert table.values.ravel().tolist() == [-1.5, 2.0, 3.0, 0.5, 1000.0, -0.0, 2.0**53]


PARQUET_CASES = [
    (pa.table({"a": pa.array([1, None], pa.int64()), "b": [1.0, 2.0]}), "VALUE_MISSING", "column 'a', row 2"),
    (pa.table({"a": pa.array([2**53 + 1, 1], pa.int64()), "b": [1.0, 2.0]}), "VALUE_IMPRECISE", "column 'a', row 1"),
    (pa.table({"a": pa.array([1, 2], pa.decimal128(5, 2)), "b": [1.0, 2.0]}), "COLUMN_TYPE", "decimal"),
    (pa.table({"a": pa.array(["x", "y"]).dictionary_encode(), "b": [1.0, 2.0]}), "COLUMN_TYPE", "dictionary"),
    (pa.table({"a": pa.array([[1], [2]]), "b": [1.0, 2.0]}), "COLUMN_TYPE", "list"),
    (pa.table({"a": pa.array(np.array([1, 2], np.float16)), "b": [1.0, 2.0]}), "COLUMN_TYPE", "halffloat"),
    (pa.table({"a": pa.array([0, 1], pa.timestamp("s", tz="UTC")), "b": [1.0, 2.0]}), "COLUMN_TYPE", "timestamp"),
    (pa.table({"a": pa.array([], pa.float64()), "b": pa.array([], pa.float64())}), "TABLE_EMPTY", "no rows"),
    (pa.table({"a": [1.0, float("nan")], "b": [1.0, 2.0]}), "VALUE_OUT_OF_RANGE", "column 'a', row 2"),
    (pa.Table.from_arrays([pa.array([1.0]), pa.array([2.0])], names=["a", "a"]), "COLUMN_DUPLICATE", "'a'"),
]


@pytest.mark.parametrize(("table", "reason", "phrase"), PARQUET_CASES)
def test_bad_parquet_is_refused(tmp_path, capsys, table, reason, phrase):
    code, err = run_reverse_map(tmp_path, table, suffix=".parquet", capsys=capsys)
    assert code == 3 and f": {reason}: " in err and phrase in err


def test_parquet_round_trip_equals_csv(tmp_path):
    x = np.array([[1.5, -0.0], [2.25, 3.0]])
    pq.write_table(pa.table({"a": x[:, 0], "b": x[:, 1]}), tmp_path / "x.parquet")
    write(tmp_path / "x.csv", "a,b\n1.5,-0.0\n2.25,3.0\n")
    a = read_table(tmp_path / "x.parquet").values
    b = read_table(tmp_path / "x.csv").values
    assert a.tobytes() == b.tobytes() == x.tobytes()


def test_category_not_in_schema(tmp_path):
    schema = Schema.from_dict({"attributes": [
        {"name": "edu", "kind": "ordinal", "categories": ["primary", "secondary"]}]})
    with pytest.raises(InvalidInputError, match=r"column 'edu', rows 2, 3: 'Primary' is not one") as info:
        read_table(write(tmp_path / "x.csv", "edu\nprimary\nPrimary\nPrimary\n"), schema)
    assert info.value.reason == "CATEGORY_UNKNOWN"


def test_nominal_order_is_written_into_the_schema(tmp_path):
    schema = Schema.from_dict({"attributes": [{"name": "c", "kind": "nominal"}]})
    table = read_table(write(tmp_path / "x.csv", "c\nb\na\nc\na\nb\n"), schema)
    assert table.schema["c"].categories == ("a", "b", "c")
    assert table.values.ravel().tolist() == [1, 0, 2, 0, 1]


@pytest.mark.parametrize(("text", "phrase"), [
    ('{"attributes": [{"name": "a"}, {"name": "a"}]}', "listed twice"),
    ('{"attributes": [{"name": "a", "kind": "nominal", "kind": "numeric"}]}', "duplicate key 'kind'"),
    ('{"attributes": [{"name": "a", "kind": "ordinal"}]}', "needs its ordered categories"),
    ('{"attributes": [{"name": "a", "role": "secret"}]}', "role must be one of"),
    ('{"attributes": [{"name": "a", "weight": NaN}]}', "NaN is not allowed"),
    ('{"attributes": []}', "at least one attribute"),
])
def test_bad_schema_is_refused(tmp_path, text, phrase):
    with pytest.raises(InvalidInputError, match=phrase) as info:
        load_schema(write(tmp_path / "s.json", text))
    assert info.value.reason == "SCHEMA_INVALID" and info.value.path.endswith("s.json")


# ---- case 31: degenerate tables give defined figures, never NaN or an exception

@pytest.mark.parametrize("content", [
    "a,b\n1,2\n",  # a single row
    "a,b\n1,5\n2,5\n3,5\n",  # a constant column
    "a\n0.1\n0.1\n0.1\n",  # np.var of this is 1.9e-34, not 0
    "a\n1e150\n1e150\n",  # at the largest magnitude a cell may hold (beyond it: VALUE_OUT_OF_RANGE)
])
def test_degenerate_tables(tmp_path, capsys, content):
    x = write(tmp_path / "x.csv", content)
    code = main(["distance", "--original", str(x), "--anonymized", str(x), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["dataset"]["distance"] == 0
    assert all(v == 0.0 for v in out["dataset"]["variances"])
    code = main(["reverse-map", "--original", str(x), "--anonymized", str(x), "--out", str(tmp_path / "z.csv"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    # a constant column has no rank correlation: reported as null, never NaN
    assert all(a["rank_correlation"] is None for a in out["attributes"] if a["name"] == "b" or content.count("\n") <= 2)


# ---- case 32: heavy ties give the same figures under any row order; 0.0 and -0.0 tie

def test_heavy_ties_identical_under_shuffles():
    rng = np.random.default_rng(32)
    x = rng.integers(0, 3, size=(200, 3)).astype(float)
    y = np.clip(x + rng.integers(-1, 2, size=x.shape), 0, 3).astype(float)
    base = compute_permuted_privacy(RankSpace(y), x)
    for _ in range(100):
        perm = rng.permutation(len(y))
        other = compute_permuted_privacy(RankSpace(y[perm]), x)
        assert other.distances.tolist() == base.distances.tolist()
        assert other.dataset_distance == base.dataset_distance
        np.testing.assert_array_equal(other.dataset_spread, base.dataset_spread)


def test_zero_and_negative_zero_tie():
    y = np.array([[0.0], [-0.0], [1.0]])
    space = RankSpace(y)
    assert space.record_lo.ravel().tolist() == [1, 1, 3] and space.record_hi.ravel().tolist() == [2, 2, 3]


def test_record_count_mismatch_names_the_file(tmp_path, capsys):
    code, err = run_reverse_map(tmp_path, "a,b\n1,2\n2,3\n", capsys=capsys)
    assert code == 3 and f"FAIL: {tmp_path / 'y.csv'}: SHAPE_MISMATCH: has 3 records" in err


@pytest.mark.parametrize("cells", [["\rOK", "a,b"], ["", 'say "hi"'], ["x\r\ny", "plain"], ["tab\there", "\r"]])
def test_written_csv_reads_back_cell_for_cell(tmp_path, cells):
    """A carriage return in a cell is quoted (the csv module's minimal quoting alone would not)."""
    from verifier.data.tables import csv_text, read_csv_cells

    path = tmp_path / "t.csv"
    path.write_bytes(csv_text(["c1", "c2"], [cells, ["1", "2"]]).encode())
    header, columns = read_csv_cells(path)
    assert header == ["c1", "c2"] and [col[0] for col in columns] == cells and [col[1] for col in columns] == ["1", "2"]
