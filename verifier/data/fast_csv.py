"""The fast path of the strict CSV reader: pyarrow's multi-threaded parser, for the files it reads exactly alike.

The strict reader (:mod:`verifier.data.tables`) parses with Python's csv
module and checks every cell; on a census file that takes tens of seconds.
pyarrow parses in C++ on every core. It is used only where it cannot read a
file differently: valid UTF-8 without NUL bytes, no quote character, no blank
line, every cell read as text (no type inference), every row as wide as the
header. Numbers are checked against the same decimal pattern (compiled,
:mod:`verifier.data.decimal_cells`) and converted by Arrow's correctly
rounded parser, which gives the same float64 as Python's ``float``. Whenever anything is unusual (a parse error, a
cell that is not a plain number, a value that overflows, a zero that could be
an underflow, an integer too long for a float, a category the schema does not
know) these functions return ``None`` and the strict reader reads the whole
file again, so every refusal is the same FAIL line, row numbers included.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import numpy as np

from verifier.data.magnitudes import out_of_range

__all__ = ["plain", "simply_quoted", "arrow_columns", "arrow_numbers", "arrow_number_columns", "arrow_categories",
           "arrow_positions"]

#: below this size the strict reader is fast enough, and the fast path is not worth its start-up
MIN_BYTES = 1 << 20


def plain(raw: bytes, *, quoted: bool = False) -> bool:
    """Whether the fast path reads this file exactly as the strict reader: large, UTF-8, no NUL, CR or blank line,
    and no quote character, or with ``quoted`` only :func:`simply_quoted` ones."""
    if len(raw) < MIN_BYTES or b"\x00" in raw or b"\r" in raw or b"\n\n" in raw or b"\n" not in raw:
        return False
    if b'"' in raw and not (quoted and simply_quoted(raw)):
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def simply_quoted(raw: bytes) -> bool:
    """Whether every quote of the file opens a whole field or closes it on the same line, as a generalized release
    writes its cells (``"{a,b}"``, ``"[20,29]"``): none in the header, no two side by side (an escaped quote or an
    empty quoted field), and on each line the first, third, ... quote at a field's start, the second, fourth, ...
    at a field's end. Then the csv module and pyarrow's parser (quotes on, no newline in a value) split every line
    alike; any other quoting is left to the strict reader. Array passes over the bytes (90 MB: about 0.3 s)."""
    body = np.frombuffer(raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw, dtype=np.uint8)
    quotes = np.flatnonzero(body == ord('"'))
    newlines = np.flatnonzero(body == ord("\n"))
    if not quotes.size:
        return True
    if quotes[0] < newlines[0] or np.any(np.diff(quotes) == 1):
        return False
    line = np.searchsorted(newlines, quotes)
    first = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
    nth = np.arange(quotes.size) - np.repeat(first, np.diff(np.r_[first, quotes.size]))
    before = body[quotes - 1]
    after = body[np.minimum(quotes + 1, body.size - 1)]
    after[quotes == body.size - 1] = ord("\n")
    opening = (before == ord(",")) | (before == ord("\n"))
    closing = (after == ord(",")) | (after == ord("\n"))
    last = np.r_[first[1:], quotes.size] - 1
    return bool(np.all(np.where(nth % 2 == 0, opening, closing)) and np.all(nth[last] % 2 == 1))


def arrow_columns(raw: bytes, wanted: Sequence[int], *, quoted: bool = False) -> list | None:
    """The ``wanted`` columns (by position) of a :func:`plain` CSV file as Arrow string arrays, or None; ``quoted``:
    its quotes (:func:`simply_quoted`) delimit fields."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    header = body[: body.find(b"\n")].decode("utf-8").split(",") if b"\n" in body else None
    if header is None:
        return None
    try:
        table = pcsv.read_csv(
            pa.BufferReader(body),
            read_options=pcsv.ReadOptions(column_names=[f"c{k}" for k in range(len(header))], skip_rows=1,
                                          use_threads=True),
            parse_options=pcsv.ParseOptions(quote_char='"' if quoted else False, double_quote=False,
                                            newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types={f"c{k}": pa.string() for k in range(len(header))},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    if table.num_rows == 0:
        return None
    # concat_arrays joins the parser's chunks as combine_chunks does, in half its time (1e7 rows: 0.5 s a file)
    return [pa.concat_arrays(table.column(f"c{k}").chunks) for k in wanted]


def arrow_numbers(column) -> np.ndarray | None:
    """The column as float64 when every cell is a plain decimal number the strict reader would take, else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from verifier.data.decimal_cells import first_bad_cell, long_integer_cells

    if first_bad_cell(column) >= 0:
        return None
    try:
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        return None
    if out_of_range(values).size:
        return None  # infinite, beyond 1e150 or subnormal: the strict reader says which row
    zeros = np.flatnonzero(values == 0.0)
    if zeros.size and pc.any(pc.match_substring_regex(column.take(pa.array(zeros)), "^[^eE]*[1-9]")).as_py():
        return None  # an underflow to 0: the strict reader says which row
    if long_integer_cells(column):
        return None  # a long integer may not fit a float exactly: the strict reader checks it
    return values


def arrow_number_columns(columns: Sequence) -> list[np.ndarray | None]:
    """:func:`arrow_numbers` of each column, in threads (Arrow's cast and the compiled check release the GIL)."""
    if len(columns) < 2:
        return [arrow_numbers(c) for c in columns]
    with ThreadPoolExecutor(max_workers=min(len(columns), os.cpu_count() or 1)) as pool:
        return list(pool.map(arrow_numbers, columns))


def arrow_categories(column) -> tuple[list[str], np.ndarray]:
    """The distinct cells of a column and how often each occurs."""
    import pyarrow.compute as pc

    counts = pc.value_counts(column)
    return counts.field("values").to_pylist(), counts.field("counts").to_numpy()


def arrow_positions(column, categories: Sequence[str]) -> np.ndarray | None:
    """Each cell's position in ``categories``, or None when a cell is not one of them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    index = pc.index_in(column, value_set=pa.array(list(categories), type=pa.string()))
    if index.null_count:
        return None
    return index.to_numpy(zero_copy_only=False).astype(np.float64)
