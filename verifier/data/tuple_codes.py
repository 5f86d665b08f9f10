"""Rows of integer codes, one code per distinct row: a table's classes, its distinct records, a release's cells."""

from __future__ import annotations

from typing import Iterable

import numpy as np

__all__ = ["tuple_codes"]


def tuple_codes(columns: Iterable[np.ndarray], n: int) -> np.ndarray:
    """Each of the ``n`` rows' tuple of codes (one array of non-negative integers per column) as one code: the
    distinct tuples numbered 0, 1, ... in lexicographic order. The code is renumbered after each column, so no
    product of the columns' sizes can overflow; with no column every row has code 0."""
    key = np.zeros(n, np.int64)
    for column in columns:
        key = np.unique(key * (int(column.max(initial=0)) + 1) + column, return_inverse=True)[1].ravel()
    return key
