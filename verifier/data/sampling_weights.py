"""Sampling weights: how many people of the population each record stands for.

A survey's records carry design weights (the inverse of each record's
inclusion probability). With them the population frequency of a record's
quasi-identifier combination is estimated as the sum of the weights of the
sample records that share it, ``F = sum w`` (sdcMicro's and ARX's estimate,
:mod:`verifier.attacks.reidentification`).

A release made with ``publisher release --weight-column NAME`` carries the
weights in ``weights.csv``: one column ``weight``, one row per released
record, in the release's row order, as survey microdata ships them; the
manifest's ``sampling_weights`` names the input column. The weights are read
with the same strict rules as any numeric column, and each must be a finite
number above zero.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verifier.data.schema import Schema
from verifier.data.tables import format_rows, read_table, read_table_bytes
from verifier.errors import InvalidInputError

__all__ = ["WEIGHTS", "WEIGHT_COLUMN", "check_weights", "parse_weights", "read_weight_column", "weights_csv"]

#: the file of a release that holds its records' sampling weights
WEIGHTS = "weights.csv"
#: its one column
WEIGHT_COLUMN = "weight"


def check_weights(values: np.ndarray, where: str, column: str) -> np.ndarray:
    """``values`` as float64 when every weight is finite and above zero; else ``WEIGHT_INVALID`` naming the rows."""
    values = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if bad.size:
        raise InvalidInputError(f"column {column!r}: a sampling weight must be a number above zero, "
                                f"not {values[bad[0]]!r} (row {format_rows(bad + 1)})", path=where,
                                reason="WEIGHT_INVALID")
    return values


def read_weight_column(path: str | Path, column: str) -> np.ndarray:
    """The column ``column`` of a data file as sampling weights, read strictly (exit 3 on a bad cell)."""
    table = read_table(path, Schema.all_numeric([column]))
    return check_weights(table.values[:, 0], str(path), column)


def weights_csv(weights: np.ndarray) -> bytes:
    """``weights.csv``: the header ``weight`` and one shortest round-trip decimal per record."""
    values = check_weights(weights, WEIGHTS, WEIGHT_COLUMN)
    return ("".join([WEIGHT_COLUMN + "\n", *(f"{float(v)!r}\n" for v in values)])).encode("ascii")


def parse_weights(raw: bytes, shown: str, n_records: int) -> np.ndarray:
    """The weights of a release's ``weights.csv`` (``shown`` names it): one per released record, each above zero."""
    if raw.split(b"\n", 1)[0].rstrip(b"\r") != WEIGHT_COLUMN.encode():
        raise InvalidInputError(f"the weight file holds one column, {WEIGHT_COLUMN!r}", path=shown,
                                reason="DATA_MALFORMED")
    table = read_table_bytes(shown, raw, Schema.all_numeric([WEIGHT_COLUMN]))
    if table.n_records != n_records:
        raise InvalidInputError(f"{table.n_records} weights for {n_records} released records", path=shown,
                                reason="DATA_MALFORMED")
    return check_weights(table.values[:, 0], shown, WEIGHT_COLUMN)
