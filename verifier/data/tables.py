"""Loading tables strictly, and writing outputs atomically.

Every bad input of SPEC section 1 and ``spec/reliability.md`` cases 28-32 is
refused with an :class:`~verifier.errors.InvalidInputError` whose message names
the file, the column and the first offending rows (records numbered from 1, the
header excluded); nothing is written.

The rules, for CSV:

- UTF-8 only (a byte-order mark is accepted and dropped); no NUL byte;
- comma-separated, RFC 4180 quoting; every row has as many cells as the header;
  blank lines are refused except at the very end;
- header names are unique and neither blank nor padded with spaces;
- a numeric cell is an ASCII decimal number (``-1.5``, ``2e3``); refused are
  empty cells and missing-value sentinels (``NA``, ``null``...), ``nan``,
  ``inf``, digit separators (``1_000``), non-ASCII digits, decimal commas,
  numbers that overflow (``1e309``) or underflow to zero (``1e-400``), and
  integers beyond 2**53 that a float cannot hold exactly;
- an ordinal or nominal cell must be one of the schema's categories, matched
  exactly (case and spaces count).

Parquet files follow the same rules on their typed columns; nested, decimal,
float16, boolean and timestamp columns, and nulls, are refused.
"""

from __future__ import annotations

import csv
import math
import io
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence, TextIO

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made, not when a command starts
    import pandas as pd

from verifier.data.bounded_files import read_bounded, require_regular
from verifier.data.magnitudes import out_of_range, range_words
from verifier.data.parts import part_files
from verifier.errors import InputIOError, InvalidInputError
from verifier.text import note_normalized, same_name
from verifier.data.fast_csv import arrow_categories, arrow_columns, arrow_number_columns, arrow_positions, plain
from verifier.data.schema import Attribute, Schema, nominal_order

__all__ = [
    "Table", "read_table", "table_from_frame", "read_table_bytes", "read_csv_cells", "write_atomic", "write_atomic_bytes", "write_csv_atomic",
    "csv_text", "current_umask", "decimal_cell", "format_rows", "number_label", "number_labels", "distinct_numbers", "read_text_cells", "column_names",
]

MISSING_SENTINELS = frozenset(
    {"", "NA", "N/A", "n/a", "na", "NaN", "nan", "NAN", "null", "NULL", "Null", "None", "none", "-", "?", "."}
)
_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER_RE = re.compile(_NUMBER)
_COLUMN_RE = re.compile(rf"(?:{_NUMBER}\n)*")
_EXACT_INT_LIMIT = 2**53
_MAX_LISTED_ROWS = 5
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True, eq=False)
class Table:
    """A validated table: one row per subject, columns in schema order.

    Attributes
    ----------
    path
        Where it was read from (for messages).
    schema
        The schema, with the category order of every nominal column filled in.
    values
        ``(n_records, n_attributes)`` float64 rank keys: the value of a numeric
        cell, the position in ``categories`` of an ordinal or nominal cell.
    text
        ``(n_records, n_attributes)`` array of the cells as written in a CSV
        file, or ``None`` for Parquet; lets outputs reuse the input's exact
        spelling (``96.60`` stays ``96.60``).
    """

    path: str
    schema: Schema
    values: np.ndarray
    text: np.ndarray | None = None
    text_columns: list | None = None
    """The cells as Arrow string arrays (the fast CSV reader's), turned into ``text`` only when asked."""

    @property
    def n_records(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.values.shape[1])

    @property
    def names(self) -> list[str]:
        return self.schema.names

    @property
    def kinds(self) -> list[str]:
        return self.schema.kinds

    def cell_text(self) -> np.ndarray:
        """The cells as text: the input's spelling where known, else ``repr`` of floats."""
        if self.text is not None:
            return self.text
        out = np.empty(self.values.shape, dtype=object)
        for j in range(self.values.shape[1]):
            out[:, j] = self.column_text(j)
        return out

    def to_frame(self) -> pd.DataFrame:
        """A pandas DataFrame: floats for numeric columns, strings for categorical ones."""
        import pandas as pd  # only here: the commands start without pandas (0.4 s)

        strings = pd.Series([""]).dtype  # what pandas makes of strings: held by pyarrow from pandas 3 on
        by_arrow = isinstance(strings, pd.StringDtype) and strings.storage == "pyarrow"
        data = {}
        for j, attr in enumerate(self.schema.attributes):
            if attr.categories is None:
                data[attr.name] = self.values[:, j].copy()
            elif by_arrow:  # the categories at the positions, gathered by pyarrow: 0.02 s a column, not 0.34 s
                import pyarrow as pa

                cells = pa.array(list(attr.categories), pa.string()).take(pa.array(self.values[:, j].astype(np.int64)))
                data[attr.name] = pd.array(cells, dtype=strings)
            else:
                data[attr.name] = self.column_text(j).astype(str)
        return pd.DataFrame(data)

    def column_text(self, j: int) -> np.ndarray:
        """Column ``j`` of :meth:`cell_text`, without writing out the others (a frame needs the categorical
        columns' text alone). A categorical cell is read by its exact text, so its text is its category: the
        categories at the column's positions, not the input's strings converted one by one (1e6 census records,
        9 of 15 columns: 3.4 s to about 0.2 s)."""
        attr = self.schema.attributes[j]
        if attr.categories is not None:
            return np.array(attr.categories, dtype=object)[self.values[:, j].astype(np.int64)]
        if self.text is not None:
            return self.text[:, j]
        if self.text_columns is not None:
            return np.asarray(self.text_columns[j].to_numpy(zero_copy_only=False), dtype=object)
        return np.array([repr(float(v)) for v in self.values[:, j]], dtype=object)


def number_label(v: float) -> str:
    """How a number is written, in a CSV file or as a hierarchy label: integers a float holds exactly
    without ``.0``, other values in the shortest form that reads back to the same float."""
    v = float(v)
    if math.isfinite(v) and v == int(v) and abs(v) < 2**53:
        return str(int(v))
    return repr(v)


def number_labels(values) -> list[str]:
    """:func:`number_label` of every value of an array, at C speed: ``repr`` of each float, then the
    integers a float holds exactly rewritten without ``.0``. A column of repeated values (a census's ages, hours,
    heaped zeros) is written once per distinct value (1e6 cells: 0.75 s to about 0.1 s)."""
    distinct, codes = distinct_numbers(values)
    texts = _number_labels(distinct)
    return texts if codes is None else np.array(texts, dtype=object)[codes].tolist()


def distinct_numbers(values) -> tuple[np.ndarray, np.ndarray | None]:
    """The values to write a column's labels from: each distinct value once and, per value, its position among
    them (a column of many repeats: -0.0 goes with 0.0 and NaN with NaN, each pair written alike); or every
    value and ``None``."""
    v = np.asarray(values, dtype=np.float64)
    if v.size > 4096:
        distinct, where = np.unique(v, return_inverse=True)
        if 2 * distinct.size <= v.size:
            return distinct, where.ravel()
    return v, None


def _number_labels(v: np.ndarray) -> list[str]:
    out = list(map(repr, v.tolist()))
    with np.errstate(invalid="ignore"):  # trunc of an infinity or NaN, which isfinite leaves out
        whole = np.flatnonzero(np.isfinite(v) & (v == np.trunc(v)) & (np.abs(v) < 2**53))
    for i, text in zip(whole.tolist(), v[whole].astype(np.int64).astype(str).tolist()):
        out[i] = text
    return out


def format_rows(rows: Sequence[int] | np.ndarray) -> str:
    """``rows 3, 7, 9 (and 12 more)`` from 1-based record numbers."""
    rows = [int(r) for r in rows]
    shown = ", ".join(str(r) for r in rows[:_MAX_LISTED_ROWS])
    more = len(rows) - _MAX_LISTED_ROWS
    word = "row" if len(rows) == 1 else "rows"
    return f"{word} {shown}" + (f" (and {more} more)" if more > 0 else "")


def _fail(path: str, reason: str, message: str) -> InvalidInputError:
    return InvalidInputError(message, path=path, reason=reason)


def _read_bytes(p: Path) -> bytes:
    """A table file's bytes: a regular file only (:mod:`verifier.data.bounded_files`)."""
    return read_bounded(p, "table", reasons={"FILE_NOT_REGULAR": "FILE_UNREADABLE"})


def _line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def _parse_csv(path: str, raw: bytes) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV file, with every structural error refused."""
    if not raw.strip():
        raise _fail(path, "TABLE_EMPTY", "the file is empty")
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise _fail(path, "CSV_MALFORMED", f"NUL byte on line {_line_of(raw, nul)}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(
            path, "ENCODING", f"not UTF-8: byte 0x{raw[exc.start]:02x} on line {_line_of(raw, exc.start)}"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for row in reader:
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise _fail(path, "CSV_MALFORMED", f"line {reader.line_num + 1}: {exc}") from None
    while rows and not rows[-1]:
        rows.pop()
        lines.pop()
    if not rows:  # nothing but a byte-order mark or blank lines
        raise _fail(path, "TABLE_EMPTY", "the file holds no header and no rows")
    header, body = rows[0], rows[1:]
    _check_header(path, header)
    if not body:
        raise _fail(path, "TABLE_EMPTY", "the table has a header but no rows")
    width = len(header)
    lengths = np.fromiter((len(r) for r in body), dtype=np.int64, count=len(body))
    bad = np.flatnonzero(lengths != width)
    if bad.size:
        first = int(bad[0])
        if lengths[first] == 0:
            what = "is blank"
        else:
            what = f"has {lengths[first]} cells, the header has {width}"
        raise _fail(path, "CSV_MALFORMED", f"row {first + 1} (line {lines[first + 1]}) {what}")
    return header, body


def _check_header(path: str, header: Sequence[str]) -> None:
    """Blank, padded or repeated column names, and a header that is one column of another separator."""
    for k, name in enumerate(header, start=1):
        if not name.strip():
            raise _fail(path, "HEADER_INVALID", f"column {k} of the header is blank")
        if name != name.strip():
            raise _fail(path, "HEADER_INVALID", f"column name {name!r} has leading or trailing spaces")
    seen: dict[str, int] = {}
    for k, name in enumerate(header, start=1):
        if same_name(name) in seen:  # two spellings of one name (NFC) are one column twice
            raise _fail(path, "COLUMN_DUPLICATE",
                        f"column {name!r} appears twice (columns {seen[same_name(name)]} and {k})")
        seen[same_name(name)] = k
    if len(header) == 1 and any(sep in header[0] for sep in ";\t|"):
        sep = next(s for s in ";\t|" if s in header[0])
        raise _fail(path, "CSV_MALFORMED", f"the header is one column {header[0]!r}: the file looks {sep!r}-separated; use commas")


def _plain_header(path: str, raw: bytes) -> list[str]:
    """The header of a :func:`~verifier.data.fast_csv.plain` file (no quotes to undo), checked as the strict reader
    checks it."""
    header = raw[3 if raw.startswith(b"\xef\xbb\xbf") else 0 : raw.find(b"\n")].decode("utf-8").split(",")
    _check_header(path, header)
    return header


def _fast_table(path: str, raw: bytes, schema: Schema | None) -> Table | None:
    """A plain CSV file through pyarrow's parser (:mod:`verifier.data.fast_csv`); None for the strict reader."""
    if not plain(raw):
        return None
    header = _plain_header(path, raw)
    schema, positions = _select(path, header, schema)
    columns = arrow_columns(raw, positions)
    if columns is None:
        return None
    values = np.empty((len(columns[0]), len(schema)), dtype=np.float64)
    attrs = list(schema.attributes)
    numeric = [j for j, attr in enumerate(attrs) if attr.kind == "numeric"]
    numbers = dict(zip(numeric, arrow_number_columns([columns[j] for j in numeric])))
    for j, (attr, column) in enumerate(zip(attrs, columns)):
        if attr.kind == "numeric":
            parsed = numbers[j]
        else:
            if attr.categories is None:
                cells, counts = arrow_categories(column)
                if any(c.strip() in MISSING_SENTINELS for c in cells):
                    return None
                attr = attrs[j] = Attribute(attr.name, attr.kind, attr.role,
                                            tuple(c for _, c in sorted(zip(-counts, cells))))
            parsed = arrow_positions(column, attr.categories)
        if parsed is None:
            return None
        values[:, j] = parsed
    return Table(path=path, schema=Schema(tuple(attrs)), values=values, text_columns=columns)


def decimal_cell(text: str) -> float:
    """One numeric cell by the rule every numeric column is read with (:func:`_numeric_from_text`): a generalized
    release's interval bounds, read as a table's cells are. InvalidInputError otherwise."""
    try:
        return float(_numeric_from_text("cell", "cell", [text])[0])
    except InvalidInputError as exc:  # said of the cell alone: its caller names the real column and row
        raise InvalidInputError(exc.message.removeprefix("column 'cell', row 1: "), reason=exc.reason) from None


def _numeric_from_text(path: str, name: str, cells: Sequence[str]) -> np.ndarray:
    """Parse a column of ASCII decimal numbers, refusing everything else."""
    joined = "\n".join(cells) + "\n"
    if _COLUMN_RE.fullmatch(joined) is None:
        missing = [i + 1 for i, c in enumerate(cells) if c.strip() in MISSING_SENTINELS]
        if missing:
            shown = cells[missing[0] - 1]
            raise _fail(
                path, "VALUE_MISSING",
                f"column {name!r}, {format_rows(missing)}: missing value {shown!r}; numeric columns may not have missing values",
            )
        bad = [i + 1 for i, c in enumerate(cells) if _NUMBER_RE.fullmatch(c) is None]
        shown = cells[bad[0] - 1]
        raise _fail(
            path, "VALUE_NOT_NUMERIC",
            f"column {name!r}, {format_rows(bad)}: {shown!r} is not a decimal number (ASCII digits, optional sign, '.' and exponent)",
        )
    values = np.array([float(c) for c in cells], dtype=np.float64)
    overflow = np.flatnonzero(~np.isfinite(values))
    if overflow.size:
        raise _fail(
            path, "VALUE_OUT_OF_RANGE",
            f"column {name!r}, {format_rows(overflow + 1)}: {cells[overflow[0]]!r} is too large for a 64-bit float",
        )
    zeros = np.flatnonzero(values == 0.0)
    if zeros.size:
        under = [int(i) + 1 for i in zeros if re.search(r"[1-9]", re.split(r"[eE]", cells[i])[0])]
        if under:
            raise _fail(
                path, "VALUE_OUT_OF_RANGE",
                f"column {name!r}, {format_rows(under)}: {cells[under[0] - 1]!r} is too small for a 64-bit float (it would become 0)",
            )
    beyond = out_of_range(values)
    if beyond.size:
        raise _fail(path, "VALUE_OUT_OF_RANGE", f"column {name!r}, {format_rows(beyond + 1)}: {cells[beyond[0]]!r} "
                    f"{range_words(values[beyond[0]])}")
    long_ints = [
        i + 1
        for i, c in enumerate(cells)
        if len(c) > 15 and "." not in c and "e" not in c and "E" not in c and abs(int(c)) > _EXACT_INT_LIMIT
        and int(float(c)) != int(c)
    ]
    if long_ints:
        raise _fail(
            path, "VALUE_IMPRECISE",
            f"column {name!r}, {format_rows(long_ints)}: {cells[long_ints[0] - 1]!r} cannot be held exactly by a 64-bit float",
        )
    return values


def _categorical_positions(path: str, attr: Attribute, cells: Sequence[str]) -> np.ndarray:
    assert attr.categories is not None
    index = {c: k for k, c in enumerate(attr.categories)}
    try:
        return np.array([index[c] for c in cells], dtype=np.float64)
    except KeyError:
        pass
    bad = [i + 1 for i, c in enumerate(cells) if c not in index]
    shown = cells[bad[0] - 1]
    if shown.strip() in MISSING_SENTINELS:
        raise _fail(
            path, "VALUE_MISSING",
            f"column {attr.name!r}, {format_rows(bad)}: missing value {shown!r}; this column may not have missing values",
        )
    raise _fail(
        path, "CATEGORY_UNKNOWN",
        f"column {attr.name!r}, {format_rows(bad)}: {shown!r} is not one of the schema's categories",
    )


def _select(path: str, header: Sequence[str], schema: Schema | None) -> tuple[Schema, list[int]]:
    if schema is None:
        schema = Schema.all_numeric(header)
    where = {same_name(name): k for k, name in enumerate(header)}  # compared in NFC
    missing = [a.name for a in schema.attributes if same_name(a.name) not in where]
    if missing:
        raise _fail(
            path, "COLUMN_MISSING",
            f"column {missing[0]!r} of the schema is not in the file (its columns: {', '.join(map(repr, header))})",
        )
    for a in schema.attributes:
        note_normalized(header[where[same_name(a.name)]], a.name, path)
    return schema, [where[same_name(a.name)] for a in schema.attributes]


def _build(path: str, schema: Schema, columns: list[list[str]], keep_text: bool) -> Table:
    n = len(columns[0])
    values = np.empty((n, len(schema)), dtype=np.float64)
    attrs = list(schema.attributes)
    for j, (attr, cells) in enumerate(zip(attrs, columns)):
        if attr.kind == "numeric":
            values[:, j] = _numeric_from_text(path, attr.name, cells)
        else:
            if attr.categories is None:
                present = [c for c in cells if c.strip() not in MISSING_SENTINELS]
                attr = Attribute(attr.name, attr.kind, attr.role, nominal_order(present))
                attrs[j] = attr
            values[:, j] = _categorical_positions(path, attr, cells)
    text = None
    if keep_text:
        text = np.empty((n, len(schema)), dtype=object)
        for j, cells in enumerate(columns):
            text[:, j] = cells
    return Table(path=path, schema=Schema(tuple(attrs)), values=values, text=text)


def _read_parquet(path: str, p: Path | bytes, schema: Schema | None) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pfile = pq.ParquetFile(pa.BufferReader(p) if isinstance(p, bytes) else p)
        arrow_schema = pfile.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise _fail(path, "PARQUET_MALFORMED", f"not a readable Parquet file ({str(exc)[:120]})") from None
    names = list(arrow_schema.names)
    _refuse_duplicates(path, names)
    schema, positions = _select(path, names, schema)
    try:
        table = pfile.read(columns=[names[k] for k in positions])
    except (pa.ArrowException, OSError) as exc:
        raise _fail(path, "PARQUET_MALFORMED", f"cannot read the data ({str(exc)[:120]})") from None
    return _from_arrow(path, table, schema)


def _read_parquet_parts(path: str, parts: Sequence[Path], schema: Schema | None) -> Table:
    """The parts of a partitioned table as one table: each part must have the first part's columns; rows are
    numbered over the whole table, in the parts' order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pieces, names = [], None
    for part in parts:
        try:
            pfile = pq.ParquetFile(part)
            mine = list(pfile.schema_arrow.names)
        except (pa.ArrowException, OSError) as exc:
            raise _fail(str(part), "PARQUET_MALFORMED", f"not a readable Parquet file ({str(exc)[:120]})") from None
        if names is None:
            names = mine
            _refuse_duplicates(str(part), names)
            schema, positions = _select(str(part), names, schema)
        elif mine != names:
            raise _fail(str(part), "PARQUET_MALFORMED", f"its columns differ from the first part's ({parts[0].name})")
        try:
            pieces.append(pfile.read(columns=[names[k] for k in positions]))
        except (pa.ArrowException, OSError) as exc:
            raise _fail(str(part), "PARQUET_MALFORMED", f"cannot read the data ({str(exc)[:120]})") from None
    if any(a.is_categorical and a.categories is None for a in schema.attributes):
        # as the distributed engine does: the first part's categories, and a category another part adds is refused
        schema = _from_arrow(str(parts[0]), pieces[0], schema).schema
    try:
        table = pa.concat_tables(pieces, promote_options="permissive")
    except (pa.ArrowException, TypeError) as exc:
        raise _fail(path, "COLUMN_TYPE", f"the parts' columns are not of one type ({str(exc)[:120]})") from None
    return _from_arrow(path, table, schema)


def _refuse_duplicates(path: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise _fail(path, "COLUMN_DUPLICATE", f"column {name!r} appears twice")
        seen.add(name)


def table_from_frame(frame: pd.DataFrame, schema: Schema | None = None, *, name: str = "the DataFrame") -> Table:
    """A validated :class:`Table` from a pandas DataFrame, by the rules of a Parquet file.

    Numeric columns must be integer or float (no NaN, no infinity); ordinal
    and nominal ones strings or pandas categoricals. ``schema`` ``None``
    takes every column as numeric. ``name`` stands for the frame in messages.
    """
    import pandas as pd
    import pyarrow as pa

    names = [str(c) for c in frame.columns]
    _refuse_duplicates(name, names)
    given = schema is not None
    schema, positions = _select(name, names, schema)
    for attr, k in zip(schema.attributes, positions):  # in pandas' words: a DataFrame has no Parquet types
        column = frame.iloc[:, k]
        if attr.kind == "numeric" and not (pd.api.types.is_numeric_dtype(column) and
                                           not pd.api.types.is_bool_dtype(column)):
            hint = ("the schema says it is numeric" if given else
                    "without a schema every column is numeric: pass schema= (a file publisher schema drafts, or a "
                    "Schema) naming its kind")
            raise _fail(name, "COLUMN_TYPE", f"column {attr.name!r} has pandas dtype {column.dtype}, not a number; "
                        f"{hint}")
        try:
            pa.array(column, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError):
            kinds = sorted({type(v).__name__ for v in column.dropna()})
            raise _fail(name, "COLUMN_TYPE", f"column {attr.name!r} mixes values of types {', '.join(kinds)}; a "
                        "column holds one type") from None
    table = pa.Table.from_pandas(frame.iloc[:, positions], preserve_index=False)
    return _from_arrow(name, table, schema)


def _from_arrow(path: str, table, schema: Schema) -> Table:
    """The strict checks of a Parquet table, columns already in schema order."""
    import pyarrow as pa

    if table.num_rows == 0:
        raise _fail(path, "TABLE_EMPTY", "the table has no rows")
    columns: list[list[str]] = []
    numeric: dict[int, np.ndarray] = {}
    for j, attr in enumerate(schema.attributes):
        col = table.column(j)
        typ = col.type
        nulls = np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))
        if nulls.size:
            raise _fail(path, "VALUE_MISSING", f"column {attr.name!r}, {format_rows(nulls + 1)}: null value")
        if attr.kind == "numeric":
            if pa.types.is_integer(typ):
                ints = col.to_numpy()
                # compare as integers: 2**53 + 1 becomes 2**53 once it is a float
                big = np.flatnonzero((ints > _EXACT_INT_LIMIT) | (ints < -_EXACT_INT_LIMIT))
                if big.size:
                    raise _fail(
                        path, "VALUE_IMPRECISE",
                        f"column {attr.name!r}, {format_rows(big + 1)}: integer beyond 2**53 cannot be held exactly by a 64-bit float",
                    )
                vals = ints.astype(np.float64)
            elif pa.types.is_float32(typ) or pa.types.is_float64(typ):
                vals = col.to_numpy().astype(np.float64)
                bad = out_of_range(vals)
                if bad.size:
                    raise _fail(path, "VALUE_OUT_OF_RANGE", f"column {attr.name!r}, {format_rows(bad + 1)}: "
                                f"{vals[bad[0]]!r} {range_words(vals[bad[0]])}")
            else:
                raise _fail(
                    path, "COLUMN_TYPE",
                    f"column {attr.name!r} has Parquet type {typ}; a numeric column must be int8-64 or float32/64",
                )
            numeric[j] = vals
            columns.append([])
        else:
            if pa.types.is_dictionary(typ):
                col = col.cast(typ.value_type)
                typ = col.type
            if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
                raise _fail(path, "COLUMN_TYPE", f"column {attr.name!r} has Parquet type {typ}; a categorical column must hold strings")
            columns.append([str(v) for v in col.to_pylist()])
    n = table.num_rows
    values = np.empty((n, len(schema)), dtype=np.float64)
    attrs = list(schema.attributes)
    for j, attr in enumerate(attrs):
        if j in numeric:
            values[:, j] = numeric[j]
        else:
            if attr.categories is None:
                attr = Attribute(attr.name, attr.kind, attr.role, nominal_order(columns[j]))
                attrs[j] = attr
            values[:, j] = _categorical_positions(path, attr, columns[j])
    return Table(path=path, schema=Schema(tuple(attrs)), values=values, text=None)


def read_table(path: str | Path, schema: Schema | None = None) -> Table:
    """Read a CSV or Parquet file into a validated :class:`Table`.

    Parameters
    ----------
    path
        A ``.csv`` file, a ``.parquet`` / ``.pq`` file, or a directory of
        Parquet parts (:func:`verifier.data.parts.part_files`), read as one
        table in the parts' name order, as the distributed engine reads it.
    schema
        The columns to take, in order. ``None`` takes every column of the file
        as numeric and a quasi-identifier (the paper-level tools). Columns of
        the file that the schema does not name are ignored. A nominal column
        without categories gets the default order of
        :func:`verifier.data.schema.nominal_order`, written into the returned
        table's schema.

    Raises
    ------
    InvalidInputError
        For every refused input; the message names the file, the column and
        the first offending rows.
    """
    p = Path(path)
    name = str(path)
    if p.is_dir():
        return _read_parquet_parts(name, part_files(p), schema)
    if p.suffix.lower() in PARQUET_SUFFIXES:
        require_regular(p, "table", reasons={"FILE_NOT_REGULAR": "FILE_UNREADABLE"})
        return _read_parquet(name, p, schema)
    return read_table_bytes(name, _read_bytes(p), schema)


def column_names(path: str | Path) -> list[str]:
    """The column names of a CSV file (its header row) or a Parquet file, without reading the data."""
    p = Path(path)
    require_regular(p, "table", reasons={"FILE_NOT_REGULAR": "FILE_UNREADABLE"})
    if p.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        try:
            return list(pq.ParquetFile(p).schema_arrow.names)
        except (OSError, ValueError) as exc:
            raise _fail(str(path), "PARQUET_MALFORMED", f"not a readable Parquet file ({str(exc)[:120]})") from None
    try:
        with open(p, encoding="utf-8-sig", newline="") as handle:
            return next(csv.reader(handle), [])
    except FileNotFoundError:
        raise _fail(str(path), "FILE_NOT_FOUND", "no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _fail(str(path), "CSV_MALFORMED", f"cannot read the header ({str(exc)[:120]})") from None


def read_table_bytes(name: str, raw: bytes, schema: Schema | None = None) -> Table:
    """:func:`read_table` for bytes already in memory (a verified release's data).

    ``name`` is used in messages, and its suffix says whether the bytes are
    Parquet (``.parquet``, ``.pq``) or CSV.
    """
    if Path(name).suffix.lower() in PARQUET_SUFFIXES:
        return _read_parquet(name, raw, schema)
    fast = _fast_table(name, raw, schema)
    if fast is not None:
        return fast
    header, body = _parse_csv(name, raw)
    schema, positions = _select(name, header, schema)
    columns = [[row[k] for row in body] for k in positions]
    return _build(name, schema, columns, keep_text=True)


def read_csv_cells(path: str | Path, raw: bytes | None = None) -> tuple[list[str], list[list[str]]]:
    """The header and the columns of a CSV file as text, after the structural checks.

    For tools that decide the columns' kinds themselves (drafting a schema).
    ``raw``: the file's bytes, already read by the caller (``path`` then only
    names it in messages).
    """
    raw = _read_bytes(Path(path)) if raw is None else raw
    fast = _fast_cells(str(path), raw)
    if fast is not None:
        return fast
    header, body = _parse_csv(str(path), raw)
    return header, [[row[k] for row in body] for k in range(len(header))]


def _fast_cells(path: str, raw: bytes) -> tuple[list[str], list[list[str]]] | None:
    """:func:`read_csv_cells` of a plain CSV file, its generalized cells quoted as a release quotes them, through
    pyarrow's parser (a generalized census release's 1e6 rows: 0.7 s against 5.4 s), or None for the strict reader,
    which reads every other file and refuses alike."""
    if not plain(raw, quoted=True):
        return None
    header = _plain_header(path, raw)
    columns = arrow_columns(raw, range(len(header)), quoted=True)
    if columns is None:
        return None
    return header, [column.to_pylist() for column in columns]


def read_text_cells(name: str, raw: bytes) -> tuple[list[str], list[list[str]], dict[str, list[dict]]]:
    """Every column of a CSV or Parquet file as text, for releases whose cells are generalized.

    Returns the header, the columns as text (numbers written by
    :func:`number_label`), and for each Parquet struct column (the typed form
    of generalized cells, docs/release-format.md) its rows as dicts; the
    struct's ``text`` field is the cell's text.
    """
    if Path(name).suffix.lower() not in PARQUET_SUFFIXES:
        header, columns = read_csv_cells(name, raw)
        return header, columns, {}
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(raw))
    except (pa.ArrowException, OSError) as exc:
        raise _fail(name, "PARQUET_MALFORMED", f"not a readable Parquet file ({str(exc)[:120]})") from None
    header = [str(n) for n in table.column_names]
    _refuse_duplicates(name, header)
    columns: list[list[str]] = []
    typed: dict[str, list[dict]] = {}
    for col_name, col in zip(header, table.columns):
        typ = col.type
        nulls = np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))
        if nulls.size:
            raise _fail(name, "VALUE_MISSING", f"column {col_name!r}, {format_rows(nulls + 1)}: null value")
        if pa.types.is_struct(typ) and typ.get_field_index("text") >= 0:
            rows = col.to_pylist()
            typed[col_name] = rows
            columns.append([str(r["text"]) for r in rows])
        elif pa.types.is_integer(typ) or pa.types.is_floating(typ):
            columns.append(number_labels(col.to_numpy(zero_copy_only=False)))
        elif pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_dictionary(typ):
            columns.append([str(v) for v in col.to_pylist()])
        else:
            raise _fail(name, "COLUMN_TYPE", f"column {col_name!r} has Parquet type {typ}, which a release does not use")
    return header, columns, typed


def current_umask() -> int:
    """The process's umask (reading it means setting it; it is put back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _default_mode() -> int:
    """The permissions a plain ``open()`` would give: 0o666 less the umask."""
    return 0o666 & ~current_umask()


def write_atomic(
    path: str | Path, fill: Callable[[TextIO], None], *, binary: bool = False, mode: int | None = None
) -> None:
    """Write a file so that it is either complete or absent.

    ``fill(handle)`` writes the content (UTF-8 text, or bytes with
    ``binary``) to a temporary file beside the target, which is flushed,
    synced and then renamed over it. On any failure the temporary file is
    removed and the target is left as it was; an OS error becomes
    :class:`~verifier.errors.InputIOError` (exit code 4). ``mode`` defaults
    to what ``open()`` would give (the temporary file starts at 0o600).
    """
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise InputIOError(f"cannot write here ({exc.strerror})", path=str(p), reason="WRITE_FAILED") from None
    try:
        os.fchmod(fd, _default_mode() if mode is None else mode)
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise InputIOError(f"cannot write ({exc.strerror})", path=str(p), reason="WRITE_FAILED") from None
        raise


def write_atomic_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` atomically (:func:`write_atomic`)."""
    write_atomic(path, lambda handle: handle.write(data), binary=True)


def _csv_cell(text: str) -> str:
    # RFC 4180: quote a cell holding a comma, a quote or a line break. The
    # csv module's minimal quoting looks only for the characters of its own
    # line terminator ("\n" here) and would leave a bare "\r" unquoted.
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """The one CSV formatting of the project's outputs: RFC 4180 quoting, ``\n`` line ends.

    The csv module's minimal quoting looks only for the characters of its own
    line terminator, so it leaves a bare ``\r`` in a cell unquoted and the
    file unreadable; such a table is written cell by cell instead.
    """
    rows = list(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    text = buffer.getvalue()
    if "\r" not in text:
        return text
    lines = []
    for row in (header, *rows):
        cells = [_csv_cell(str(c)) for c in row]
        lines.append('""' if cells == [""] else ",".join(cells))
    return "".join(line + "\n" for line in lines)


def write_csv_atomic(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Write a CSV file atomically (:func:`write_atomic`)."""
    text = csv_text(header, rows)
    write_atomic(path, lambda handle: handle.write(text))
