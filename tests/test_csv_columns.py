"""The column writer of release.csv (verifier.data.csv_columns) gives the bytes of the row-by-row writer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.data.csv_columns import CodedColumn, columns_csv, number_column, plain_columns_csv
from verifier.data.tables import number_labels

#: cells of every kind a category can hold: the characters that force quotes, a bare carriage return, spaces,
#: accents and emoji, and the empty cell
CELLS = st.text(alphabet=st.sampled_from(list('ab ,"\n\r\té€😀0.-')), max_size=6)


@st.composite
def coded_columns(draw):
    n_columns = draw(st.integers(1, 5))
    n = draw(st.integers(0, 40))
    header = draw(st.lists(CELLS.filter(bool), min_size=n_columns, max_size=n_columns))
    columns = []
    for _ in range(n_columns):
        if draw(st.booleans()):  # distinct texts and positions
            texts = draw(st.lists(CELLS, min_size=1, max_size=6))
            codes = np.array(draw(st.lists(st.integers(0, len(texts) - 1), min_size=n, max_size=n)), np.int64)
            columns.append(CodedColumn(texts, codes))
        else:  # every cell written out
            columns.append(CodedColumn(draw(st.lists(CELLS, min_size=n, max_size=n))))
    return header, columns


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(coded_columns())
def test_the_column_writer_gives_the_row_writers_bytes(case):
    header, columns = case
    assert columns_csv(header, columns) == plain_columns_csv(header, columns)


def test_quoting_follows_rfc_4180_on_a_table_of_many_rows():
    """A table large enough for the gathered columns (and a numeric column of repeated labels): the quoted cells
    are those holding a comma, a quote or a line break, each quote doubled, and rows end in a line feed."""
    rng = np.random.default_rng(3)
    n = 10_000
    ages = rng.integers(17, 91, n).astype(np.float64)
    ages[::7] += 0.5
    ages_column = number_column(ages)
    texts, codes = ages_column.texts, ages_column.codes
    assert codes is not None and len(texts) < n  # repeated numbers are written once each
    categories = ["plain", "with, comma", 'say "hi"', "two\nlines", "cr\ronly", ""]
    kinds = rng.integers(0, len(categories), n)
    columns = [ages_column, CodedColumn(categories, kinds), CodedColumn([str(i) for i in range(n)])]
    out = columns_csv(["age", "note", "id"], columns)
    assert out == plain_columns_csv(["age", "note", "id"], columns)
    quoted = ["plain", '"with, comma"', '"say ""hi"""', '"two\nlines"', '"cr\ronly"', ""]
    expected = "age,note,id\n" + "".join(f"{a},{quoted[k]},{i}\n" for i, (a, k) in
                                         enumerate(zip(number_labels(ages), kinds)))
    assert out == expected.encode("utf-8")


@pytest.mark.parametrize("cells", [[""], ["", "x"], ["a,b", ""]])
def test_a_table_of_one_column_keeps_the_row_rule(cells):
    """A row of one empty cell is written "" (a blank line would end the table): a table of one column goes to
    the row writer."""
    out = columns_csv(["only"], [CodedColumn(cells)])
    assert out == plain_columns_csv(["only"], [CodedColumn(cells)])
    assert out.split(b"\n")[1 + cells.index("")] == b'""'


def _floats(rng: np.random.Generator, n: int) -> np.ndarray:
    """Floats of every kind: any bit pattern (subnormals, NaN, infinities, -0.0), noise at every scale from 1e-7
    to 1e18, money rounded to cents, integers and halves, and the edges of pyarrow's range."""
    bits = rng.integers(0, 2**63, n, dtype=np.uint64) | (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
    scaled = rng.normal(0, 1, n) * 10.0 ** rng.integers(-7, 19, n)
    edges = [1e-4, np.nextafter(1e-4, 0), 1e10, np.nextafter(1e10, 0), 9999999999.5, 0.1, 0.30000000000000004,
             -0.0, 0.0, np.nan, np.inf, -np.inf, 2.0**53, 2.0**53 + 2, 1e16, 5e-324]
    return np.concatenate([bits.view(np.float64), scaled, np.round(rng.normal(0, 1e4, n), 2),
                           np.round(rng.normal(0, 50, n)) / 2, edges])


@pytest.mark.parametrize("repeats", [False, True])
def test_numbers_written_by_pyarrow_are_number_labels(repeats):
    """pyarrow's labels are number_labels' (repr's shortest digits, integers without .0), value for value, on
    floats of every kind; with repeats each distinct value is written once."""
    rng = np.random.default_rng(17)
    values = _floats(rng, 50_000)
    if repeats:
        values = rng.choice(values[:3000], 20_000)
    column = number_column(values)
    assert (column.codes is not None) == repeats
    assert column.cells() == number_labels(values)
    header = ["x", "y"]
    columns = [column, CodedColumn(["a"], np.zeros(values.size, np.int64))]
    assert columns_csv(header, columns) == plain_columns_csv(header, columns)
