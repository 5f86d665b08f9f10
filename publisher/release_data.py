"""A release's data file: CSV text, or Parquet with a typed form for generalized cells (docs/release-format.md).

Generalized cells are written in one notation (``33``, ``[56,59]``,
``[20,40)``, ``{Black,White}``, a hierarchy node, ``*``). In CSV that text is
the cell. In Parquet a generalized column is a struct that carries the same
text and what it covers, typed: ``{text, lo, hi, hi_open}`` for a numeric
column, ``{text, values}`` for a categorical one. Other columns are float64
or string.
"""

from __future__ import annotations

import io
from typing import Sequence

import numpy as np

from verifier.attacks.classes import PublishedCells
from verifier.data.schema import Schema
from verifier.data.csv_columns import CodedColumn, columns_csv
from verifier.errors import InvalidInputError

__all__ = ["csv_bytes", "parquet_bytes", "generalized_parquet_bytes", "NOTATION_CHARACTERS"]

#: characters the set notation reserves: a category holding one cannot be published in a generalized column
NOTATION_CHARACTERS = ",{}"


def _refuse_ambiguous(schema: Schema, generalized: Sequence[str]) -> None:
    for attr in schema.attributes:
        if attr.name not in generalized or attr.kind == "numeric":
            continue
        for c in attr.categories or ():
            if c.strip() == "*" or any(ch in c for ch in NOTATION_CHARACTERS) or c != c.strip():
                raise InvalidInputError(
                    f"column {attr.name!r}: the category {c!r} cannot be written in a generalized cell, whose "
                    "notation reserves ',', '{', '}', '*' and surrounding spaces; rename it in the schema and data",
                    reason="CATEGORY_AMBIGUOUS")


def csv_bytes(columns: Sequence[CodedColumn], schema: Schema, *, generalized: Sequence[str] = ()) -> bytes:
    """The columns as ``release.csv``; categories that would read as generalized notation are refused."""
    _refuse_ambiguous(schema, generalized)
    return columns_csv(schema.names, columns)


def parquet_bytes(keys: np.ndarray, schema: Schema) -> bytes:
    """The released rows as Parquet: float64 numeric columns, string categorical ones, no pandas metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = []
    for j, attr in enumerate(schema.attributes):
        if attr.kind == "numeric":
            columns.append(pa.array(keys[:, j], type=pa.float64()))
        else:
            categories = np.asarray(attr.categories, dtype=object)
            columns.append(pa.array(categories[keys[:, j].astype(np.int64)].tolist(), type=pa.string()))
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns, names=schema.names), buffer)
    return buffer.getvalue()


def _numeric_struct(published: PublishedCells, name: str):
    import pyarrow as pa

    rows = []
    for text, cell in zip(published.text[name], published.cells[name]):
        if cell.values is not None:  # a numeric hierarchy node: the numbers it covers
            covered = [float(v) for v in cell.values]
            lo, hi, hi_open = min(covered), max(covered), False
        else:
            lo, hi, hi_open = cell.lo, cell.hi, cell.open_hi
        rows.append({"text": text.strip(), "lo": lo, "hi": hi, "hi_open": bool(hi_open)})
    typ = pa.struct([("text", pa.string()), ("lo", pa.float64()), ("hi", pa.float64()), ("hi_open", pa.bool_())])
    return pa.array(rows, type=typ)


def _categorical_struct(published: PublishedCells, name: str):
    import pyarrow as pa

    rows = [{"text": text.strip(), "values": sorted(cell.values or ())}
            for text, cell in zip(published.text[name], published.cells[name])]
    return pa.array(rows, type=pa.struct([("text", pa.string()), ("values", pa.list_(pa.string()))]))


def generalized_parquet_bytes(published: PublishedCells, generalized: Sequence[str]) -> bytes:
    """A generalized release as Parquet: typed structs for the generalized columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _refuse_ambiguous(published.schema, generalized)
    columns = []
    for attr in published.schema.attributes:
        if attr.name in generalized:
            columns.append(_numeric_struct(published, attr.name) if attr.kind == "numeric"
                           else _categorical_struct(published, attr.name))
        elif attr.kind == "numeric":
            columns.append(pa.array([float(t) for t in published.text[attr.name]], type=pa.float64()))
        else:
            columns.append(pa.array(published.text[attr.name], type=pa.string()))
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns, names=published.schema.names), buffer)
    return buffer.getvalue()
