"""A release's data holds exactly the columns its signed schema names, in its order (docs/release-format.md, section 4, step 5).

A column the schema does not name is a column nobody assessed: an ``ssn``
appended to ``release.csv`` and the manifest signed again would otherwise
pass every check, since the readers select the schema's columns and never
look at the rest. Verification reads the header (a CSV file's first record, a
Parquet file's footer) and refuses any difference with
``DATA_COLUMNS_MISMATCH``: a column more, a column less, another order, or a
name spelled otherwise (compared exactly, not after Unicode normalization).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Sequence

from verifier.text import literal

__all__ = ["CODECS", "DataShape", "codec_problem", "data_shape", "columns_problem"]

#: the compressions a release's Parquet data may use: what every reader decodes, the page's included
CODECS = ("UNCOMPRESSED", "SNAPPY")


def _shown(name: str) -> str:
    """A name from the release, quoted on one line, every control or direction change escaped (the page's twin)."""
    return f"'{literal(name)}'"


@dataclass(frozen=True)
class DataShape:
    """What a data file's header says: its column names, its rows (a Parquet footer's count; None for CSV, whose rows
    the table reader counts as it reads them), and each Parquet column's compression."""

    names: list[str]
    rows: int | None = None
    codecs: tuple[tuple[str, str], ...] = ()


def data_shape(name: str, raw: bytes) -> DataShape | None:
    """A data file's :class:`DataShape`, from its header alone (a CSV file's first record, a Parquet file's footer);
    None when it cannot be read (the table reader then says why, with its own reason)."""
    if name.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            metadata = pq.read_metadata(pa.BufferReader(raw))
        except (pa.ArrowException, OSError, ValueError):
            return None
        groups = [metadata.row_group(g) for g in range(metadata.num_row_groups)]
        codecs = tuple((str(group.column(c).path_in_schema), str(group.column(c).compression).upper())
                       for group in groups for c in range(group.num_columns))
        return DataShape([str(n) for n in metadata.schema.to_arrow_schema().names], int(metadata.num_rows), codecs)
    try:
        reader = csv.reader(io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8-sig", newline=""), strict=True)
        return DataShape(next(reader, []))
    except (UnicodeDecodeError, csv.Error):
        return None


def columns_problem(header: Sequence[str] | None, names: Sequence[str]) -> str | None:
    """Why a data file's ``header`` is not exactly the signed schema's column ``names``, or None when it is (or when
    it could not be read)."""
    if header is None or list(header) == list(names):
        return None
    extra = [h for h in header if h not in names]
    if extra:
        return (f"column {_shown(extra[0])} is in the data but not in the signed schema: a release publishes "
                f"exactly the columns its schema names")
    missing = [n for n in names if n not in header]
    if missing:
        return f"column {_shown(missing[0])} of the signed schema is not in the data"
    if len(set(header)) != len(header):
        duplicate = next(h for h in header if header.count(h) > 1)
        return f"column {_shown(duplicate)} appears twice in the data"
    return "the data's columns are not in the signed schema's order"


def codec_problem(shape: DataShape | None) -> str | None:
    """Why a Parquet data file's compression is not one every reader decodes (:data:`CODECS`), or None."""
    for column, codec in shape.codecs if shape is not None else ():
        if codec not in CODECS:
            return (f"column {_shown(column)} is compressed with {codec}; a release's Parquet data is uncompressed or "
                    "Snappy, which every reader decodes")
    return None
