"""Tables as rank keys and as release cells: the conversions every method and the release share."""

from __future__ import annotations

import numpy as np
import pandas as pd

from publisher.methods.base import fail
from verifier.attacks.classes import PublishedCells, read_published
from verifier.data.csv_columns import CodedColumn, number_column
from verifier.data.fast_csv import arrow_categories, arrow_positions
from verifier.data.tables import number_label
from verifier.data.schema import Schema

__all__ = ["category_positions", "frame_coded_columns", "frame_columns", "frame_rows", "frame_to_keys", "keys_to_frame",
           "published_cells"]


def category_positions(column: pd.Series, categories, name: str) -> np.ndarray:
    """Each cell's position among ``categories`` (int64); a cell that is none of them is refused (CATEGORY_UNKNOWN),
    naming column ``name``.

    One pass through pandas's hash table instead of a dictionary lookup per
    cell: a 1e6-row column of strings in 0.15 s against 0.75 s. A column
    pyarrow holds (pandas's strings) is looked up by pyarrow's own hash table
    of the categories, without a pandas index: 0.02 s.
    """
    categories = list(categories)
    if isinstance(column.array, pd.arrays.ArrowStringArray) and all(type(c) is str for c in categories) \
            and len(set(categories)) == len(categories):
        import pyarrow as pa

        found = arrow_positions(pa.array(column.array), categories)  # None: a cell is none of them
        if found is not None:
            return found.astype(np.int64)
    # -1 for a cell that is none of them (a Categorical of such cells is to raise in pandas 4)
    positions = pd.Index(categories, dtype=object).get_indexer(column.to_numpy(dtype=object)).astype(np.int64)
    unknown = np.flatnonzero(positions < 0)
    if unknown.size:
        raise fail(f"column {name!r}: {column.iloc[unknown[0]]!r} is not one of its categories", "CATEGORY_UNKNOWN")
    return positions


def frame_to_keys(frame: pd.DataFrame, schema: Schema) -> np.ndarray:
    """``(n, m)`` rank keys: numeric values, or category positions."""
    out = np.empty((len(frame), len(schema)), dtype=np.float64)
    for j, attr in enumerate(schema.attributes):
        col = frame[attr.name]
        if attr.kind == "numeric":
            out[:, j] = col.to_numpy(dtype=np.float64)
        else:
            out[:, j] = category_positions(col, attr.categories or (), attr.name)
    return out


def frame_coded_columns(frame: pd.DataFrame, schema: Schema, keys: np.ndarray | None = None) -> list[CodedColumn]:
    """The columns of a table as CSV cells, exactly as a release file holds them, each as its distinct texts and
    their positions where it repeats (:class:`~verifier.data.csv_columns.CodedColumn`). ``keys``: the table's
    :func:`frame_to_keys`, when already made; a categorical column's cells are then its categories at its positions
    (the same texts: a position is found by the cell's exact text), without reading the frame's strings one by one
    (1e6 census records of 9 categorical columns: 5 s to under 1 s)."""
    cols = []
    for j, attr in enumerate(schema.attributes):
        col = frame[attr.name]
        if attr.kind != "numeric" and keys is not None:
            cols.append(CodedColumn(list(attr.categories or ()), keys[:, j].astype(np.int64)))
        elif isinstance(col.array, pd.arrays.ArrowStringArray) and not col.hasnans:  # text cells, held by pyarrow
            cols.append(_distinct_texts(col))
        elif attr.kind != "numeric":
            cols.append(CodedColumn([v if type(v) is str else str(v) for v in col.tolist()]))
        elif pd.api.types.is_numeric_dtype(col.dtype):
            cols.append(number_column(col.to_numpy()))
        else:  # a generalized numeric cell ("[25,45]") is already text
            cols.append(CodedColumn([v if isinstance(v, str) else number_label(float(v)) for v in col.tolist()]))
    return cols


def _distinct_texts(column: pd.Series) -> CodedColumn:
    """A column of text cells that pyarrow holds, as its distinct texts and each cell's position among them (by
    pyarrow's hash table: a generalized release's cells repeat)."""
    import pyarrow as pa

    cells = pa.array(column.array)
    texts, _ = arrow_categories(cells)
    return CodedColumn(texts, arrow_positions(cells, texts).astype(np.int64))


def frame_columns(frame: pd.DataFrame, schema: Schema, keys: np.ndarray | None = None) -> list[list[str]]:
    """:func:`frame_coded_columns`, every row's cell written out."""
    return [column.cells() for column in frame_coded_columns(frame, schema, keys)]


def frame_rows(frame: pd.DataFrame, schema: Schema, keys: np.ndarray | None = None) -> list[tuple[str, ...]]:
    """The rows of a table as CSV cells, exactly as a release file holds them (``keys``: :func:`frame_columns`)."""
    return list(zip(*frame_columns(frame, schema, keys)))


def keys_to_frame(keys: np.ndarray, schema: Schema) -> pd.DataFrame:
    """The inverse of :func:`frame_to_keys`."""
    data = {}
    for j, attr in enumerate(schema.attributes):
        if attr.kind == "numeric":
            data[attr.name] = keys[:, j].astype(np.float64)
        else:
            cats = np.array(attr.categories, dtype=object)
            data[attr.name] = cats[keys[:, j].astype(np.int64)]
    return pd.DataFrame(data)


def published_cells(frame: pd.DataFrame, schema: Schema,
                    hierarchies=None) -> tuple[list[CodedColumn], PublishedCells]:
    """A generalized table's columns as a release file holds them, and its cells parsed as a reader parses them."""
    coded = frame_coded_columns(frame, schema)
    published = read_published(schema, schema.names, coded, hierarchies=hierarchies, path="the release")
    return coded, published
