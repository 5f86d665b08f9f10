"""The fast CSV path (pyarrow) reads every file exactly as the strict reader does, refusals included (issue 15).

Files of more than 1 MiB take the fast path; each case below is read by
``read_table_bytes`` and by the strict reader alone, on clean files and on
files with one defect planted in a random row: the same values, schema and
cell text, or the same FAIL line.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.data import decimal_cells, tables
from verifier.data.decimal_cells import first_bad_cell, long_integer_cells
from verifier.data.fast_csv import MIN_BYTES
from verifier.data.schema import Schema
from verifier.errors import InvalidInputError

N = 60_000
SCHEMA = Schema.from_dict({"attributes": [
    {"name": "tied", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "x", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "y", "kind": "numeric", "role": "other"},
    {"name": "job", "kind": "nominal", "role": "sensitive"},
]})


def _lines(seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    tied = rng.integers(0, 20, N)
    x = np.round(rng.normal(size=N) * 1000, 3)
    y = rng.lognormal(0, 3, N)
    job = rng.choice(["clerk", "nurse", "cook", "pilot"], N, p=[.4, .3, .2, .1])
    return ["tied,x,y,job"] + [f"{a},{b},{float(c)!r},{d}" for a, b, c, d in zip(tied, x, y, job)]


def _strict(raw: bytes, schema):
    header, body = tables._parse_csv("t.csv", raw)
    schema, positions = tables._select("t.csv", header, schema)
    return tables._build("t.csv", schema, [[row[k] for row in body] for k in positions], keep_text=True)


def _outcome(read, raw: bytes, schema):
    try:
        table = read(raw, schema)
    except InvalidInputError as exc:
        return ("FAIL", exc.reason, exc.message)
    return ("OK", table.values.tobytes(), table.schema, table.cell_text().tolist())


DEFECTS = {
    "clean": lambda cells: cells,
    "word": lambda cells: [cells[0], "abc", *cells[2:]],
    "missing": lambda cells: [cells[0], "NA", *cells[2:]],
    "short row": lambda cells: cells[:3],
    "quoted": lambda cells: [cells[0], '"1.5"', *cells[2:]],
    "overflow": lambda cells: [cells[0], "1e999", *cells[2:]],
    "underflow": lambda cells: [cells[0], "1e-400", *cells[2:]],
    "zero": lambda cells: [cells[0], "0.000", *cells[2:]],
    "long integer": lambda cells: [cells[0], "9007199254740993", *cells[2:]],
    "unknown category": lambda cells: [*cells[:3], "astronaut"],
    "missing category": lambda cells: [*cells[:3], "?"],
    "spaces": lambda cells: [cells[0], " 1.5", *cells[2:]],
    "bare point": lambda cells: [cells[0], ".", *cells[2:]],
    "bare exponent": lambda cells: [cells[0], "1e", *cells[2:]],
    "arabic digit": lambda cells: [cells[0], "\u0663", *cells[2:]],
    "odd but valid": lambda cells: [cells[0], "+1.e-3", *cells[2:]],
}


@pytest.mark.parametrize("defect", list(DEFECTS))
@pytest.mark.parametrize("with_categories", [False, True])
def test_fast_and_strict_readers_agree(defect, with_categories):
    lines = _lines(seed=len(defect))
    row = 1 + int(np.random.default_rng(len(defect)).integers(0, N))
    lines[row] = ",".join(DEFECTS[defect](lines[row].split(",")))
    raw = ("\n".join(lines) + "\n").encode()
    assert len(raw) > MIN_BYTES
    schema = SCHEMA
    if with_categories:
        attrs = list(SCHEMA.attributes)
        attrs[3] = type(attrs[3])("job", "nominal", "sensitive", ("cook", "clerk", "nurse", "pilot"))
        schema = Schema(tuple(attrs))
    fast = _outcome(lambda r, s: tables.read_table_bytes("t.csv", r, s), raw, schema)
    assert fast == _outcome(_strict, raw, schema)
    if defect == "clean":
        assert fast[0] == "OK" and tables._fast_table("t.csv", raw, schema) is not None  # the fast path was taken


def test_crlf_and_blank_lines_and_small_files_take_the_strict_reader():
    lines = _lines(seed=1)
    crlf = ("\r\n".join(lines) + "\r\n").encode()
    blank = ("\n".join(lines[:100] + [""] + lines[100:]) + "\n").encode()
    for raw in (crlf, blank, ("\n".join(lines[:50]) + "\n").encode()):
        assert tables._fast_table("t.csv", raw, SCHEMA) is None
        assert _outcome(lambda r, s: tables.read_table_bytes("t.csv", r, s), raw, SCHEMA) == _outcome(_strict, raw, SCHEMA)


def test_numbers_are_written_at_c_speed_exactly_as_one_by_one():
    from verifier.data.tables import number_label, number_labels

    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.normal(size=20_000) * 10.0 ** rng.integers(-8, 25, 20_000),  # every exponent range of repr
        np.round(rng.normal(size=5_000) * 1000),  # whole numbers: no ".0"
        [0.0, -0.0, np.nan, np.inf, -np.inf, 2.0**53, 2.0**53 + 2, -(2.0**53), 1e16, 123456789012345.0, 5e-324],
    ])
    assert number_labels(values) == [number_label(v) for v in values]
    tied = rng.choice(np.concatenate([values[:40], [0.0, -0.0, np.nan, -np.nan, np.inf, 7.0, 7.5]]), 50_000)
    assert number_labels(tied) == [number_label(v) for v in tied]  # written once per distinct value
    assert number_labels(np.array([3, -7, 2**60])) == ["3", "-7", number_label(float(2**60))]


NUMBER_LIKE = st.text(alphabet="0123456789+-.eE", max_size=12) | st.text(max_size=6) | st.sampled_from(
    ["1.", ".5", "+1", "-.5e-3", "1e5", "1E+05", ".", "1e", "e5", "-", "+", "1.2.3", "1e+-5", "--1", "1..2",
     "\u0663", "\uff11", " 1", "1 ", "1_000", "0x10", "inf", "nan", "", "12345678901234567", "+1234567890123456"])


@settings(max_examples=400, deadline=None)
@given(cells=st.lists(NUMBER_LIKE, min_size=1, max_size=12), cut=st.integers(0, 3), wide=st.booleans())
def test_compiled_decimal_rule_is_the_pattern(cells, cut, wide):
    """The automaton of ``decimal_cells`` accepts exactly the cells the strict reader's pattern accepts."""
    column = pa.array(["pad"] * cut + cells, type=pa.large_string() if wide else pa.string())[cut:]
    bad = [i for i, c in enumerate(cells) if tables._NUMBER_RE.fullmatch(c) is None]
    long = [c for c in cells if re.fullmatch(r"[+-]?[0-9]{16,}", c)]
    # a short column is checked by the pattern's twin, a long one by the automaton: both are the pattern
    assert first_bad_cell(column) == (bad[0] if bad else -1)
    assert decimal_cells._first_bad(*decimal_cells._buffers(column)) == (bad[0] if bad else -1)
    assert long_integer_cells(column) == bool(long)
    assert decimal_cells._long_integers(*decimal_cells._buffers(column), 16) == bool(long)


def _text_outcomes(raw: bytes) -> tuple[tuple, tuple]:
    """A file's text cells as ``read_csv_cells`` reads them (the fast path where it takes the file) and as the csv
    module alone reads them: ``("OK", header, columns)`` or ``("FAIL", reason, message)`` each."""

    def outcome(read):
        try:
            return ("OK", *read())
        except InvalidInputError as exc:
            return ("FAIL", exc.reason, exc.message)

    def strict():
        header, body = tables._parse_csv("t.csv", raw)
        return header, [[r[k] for r in body] for k in range(len(header))]

    return outcome(lambda: tables.read_csv_cells("t.csv", raw)), outcome(strict)


@pytest.mark.parametrize("defect", ["clean", "short row", "quoted", "spaces", "missing", "arabic digit",
                                    "no trailing newline", "bad header"])
def test_text_cells_fast_and_strict_agree(defect):
    """A generalized release's cells as text: pyarrow's parse of a plain file and the csv module's give the same
    header and columns, and the same refusal, whatever the defect."""
    lines = _lines(seed=3)
    lines = [",".join(c if k != 1 or r % 7 else "*" for k, c in enumerate(line.split(","))) for r, line in
             enumerate(lines)]  # masked cells among the numbers
    row = 1 + int(np.random.default_rng(3).integers(0, N))
    if defect in DEFECTS:
        lines[row] = ",".join(DEFECTS[defect](lines[row].split(",")))
    if defect == "bad header":
        lines[0] = "tied,tied,y,job"
    raw = ("\n".join(lines) + ("" if defect == "no trailing newline" else "\n")).encode()

    fast, strict = _text_outcomes(raw)
    assert fast == strict
    if defect in ("clean", "no trailing newline"):
        assert fast[0] == "OK" and tables._fast_cells("t.csv", raw) is not None  # the fast path was taken


QUOTED_DEFECTS = {
    "clean": lambda cells: cells,
    "quote inside a field": lambda cells: [cells[0], 'a"b', *cells[2:]],
    "text after the closing quote": lambda cells: [cells[0], '"{a,b}"c', *cells[2:]],
    "quote after a space": lambda cells: [cells[0], ' "{a,b}"', *cells[2:]],
    "escaped quote": lambda cells: [cells[0], '"{a,""b}"', *cells[2:]],
    "empty quoted field": lambda cells: [cells[0], '""', *cells[2:]],
    "unclosed quote": lambda cells: [cells[0], '"{a,b', *cells[2:]],
    "a field quoted across a line": lambda cells: [cells[0], '"{a,\nb}"', *cells[2:]],
    "closing quote alone": lambda cells: [cells[0], 'b}"', *cells[2:]],
    "short row": lambda cells: cells[:2],
    "long row": lambda cells: [*cells, '"{x,y}"'],
}


@pytest.mark.parametrize("defect", list(QUOTED_DEFECTS))
def test_quoted_generalized_cells_fast_and_strict_agree(defect):
    """A generalized release quotes its cells that hold commas ("[20,29]", "{a,b}"): pyarrow's parse with quotes and
    the csv module's give the same header and columns, or the same refusal, whatever the quoting defect; a file
    quoted as a release quotes it takes the fast path, any other quoting the strict reader."""
    rng = np.random.default_rng(61)
    ages = ['"[20,29]"', '"[30,39]"', "41", "*", '"[40,59]"']
    cities = ['"{a,b}"', "c", '"{a,b,c,d}"', "d"]
    rows = [[ages[a], cities[c], j] for a, c, j in
            zip(rng.integers(0, 5, 2 * N), rng.integers(0, 4, 2 * N), rng.choice(["clerk", "nurse"], 2 * N))]
    row = int(rng.integers(0, 2 * N))
    rows[row] = QUOTED_DEFECTS[defect](rows[row])
    raw = ("\n".join(["age,city,job"] + [",".join(r) for r in rows]) + "\n").encode()
    assert len(raw) > MIN_BYTES

    fast, strict = _text_outcomes(raw)
    assert fast == strict
    taken = tables._fast_cells("t.csv", raw) is not None
    assert taken == (defect == "clean")  # a row of the wrong width: pyarrow refuses, and the strict reader says where
    if defect == "clean":
        assert fast[0] == "OK" and {"[20,29]", "41", "*"} <= set(fast[2][0]) and "{a,b,c,d}" in fast[2][1]


def test_a_tables_frame_holds_its_categories_as_pandas_holds_strings():
    """Table.to_frame gathers a categorical column's categories by pyarrow where pandas holds strings in pyarrow:
    the frame is the one pandas makes of the columns' texts, dtypes included, awkward categories and all."""
    import pandas as pd

    categories = ["a", " a", "a ", "=1+1", "é", "{x,y}", "NA", "0", "😀", 'say "hi"', "x,y"]
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "city", "kind": "nominal", "role": "quasi_identifier", "categories": categories}]})
    rng = np.random.default_rng(5)
    rows = [(f"{rng.integers(17, 90)}.5", categories[i]) for i in rng.integers(0, len(categories), 3000)]
    raw = tables.csv_text(["age", "city"], rows).encode("utf-8")
    table = tables.read_table_bytes("t.csv", raw, schema)
    frame = table.to_frame()
    expected = pd.DataFrame({"age": table.values[:, 0].copy(), "city": table.column_text(1).astype(str)})
    pd.testing.assert_frame_equal(frame, expected)
    assert frame["city"].tolist() == [city for _, city in rows]
