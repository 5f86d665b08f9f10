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

A weight is published exactly, beside its record, whatever masking the
record's values went through: a weight no other record has names its record
to anyone who knows the original's weights (an intruder with the sample
frame), and with it her released sensitive values. So weights are held to
what they reveal before anything else (:func:`identifying_weights`): every
weight must be shared by at least two records, or the publisher refuses
(``WEIGHT_IDENTIFYING``, saying to how many significant digits rounding
them makes none unique) and a verifier refuses the release.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verifier.data.schema import Schema
from verifier.data.tables import format_rows, read_table, read_table_bytes
from verifier.errors import InvalidInputError
from verifier.text import plural

__all__ = ["WEIGHTS", "WEIGHT_COLUMN", "check_weights", "identifying_weights", "parse_weights", "read_weight_column",
           "weights_csv"]

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
                                f"not {float(values[bad[0]])!r} ({format_rows(bad + 1)})", path=where,
                                reason="WEIGHT_INVALID")
    return values


def _unique_count(values: np.ndarray) -> int:
    _, counts = np.unique(values, return_counts=True)
    return int(np.count_nonzero(counts == 1))


def identifying_weights(values: np.ndarray) -> str | None:
    """Why the weights name records (some weight is held by one record alone), or None when every weight is shared.

    The message says how many are unique and the most significant digits at which rounding leaves none unique."""
    values = np.asarray(values, dtype=np.float64)
    unique = _unique_count(values)
    if unique == 0:
        return None
    fix = next((d for d in range(6, 0, -1)
                if _unique_count(np.array([float(f"{v:.{d - 1}e}") for v in values])) == 0), None)
    advice = (f"rounded to {plural(fix, 'significant digit')} none is unique" if fix is not None
              else "no rounding to 1 to 6 significant digits leaves none unique; group them")
    return (f"{unique} of {values.size} records have a sampling weight no other record has: published beside its "
            "record, a unique weight names the record to anyone who knows the original's weights, whatever the "
            f"masking ({advice}; or publish without weights)")


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
