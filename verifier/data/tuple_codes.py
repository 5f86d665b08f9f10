"""Rows of integer codes, one code per distinct row: a table's classes, its distinct records, a release's cells."""

from __future__ import annotations

from typing import Iterable

import numpy as np

__all__ = ["first_seen", "label_members", "tuple_codes"]


def tuple_codes(columns: Iterable[np.ndarray], n: int) -> np.ndarray:
    """Each of the ``n`` rows' tuple of codes (one array of non-negative integers per column) as one code: the
    distinct tuples numbered 0, 1, ... in lexicographic order. The code is renumbered after each column, so no
    product of the columns' sizes can overflow; with no column every row has code 0."""
    key = np.zeros(n, np.int64)
    for column in columns:
        key = np.unique(key * (int(column.max(initial=0)) + 1) + column, return_inverse=True)[1].ravel()
    return key


def first_seen(code: np.ndarray) -> np.ndarray:
    """``code`` renumbered 0, 1, ... in the order each code first appears (a table's classes as they come)."""
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    by_first = np.empty(first.size, np.int64)
    by_first[np.argsort(first, kind="stable")] = np.arange(first.size)
    return by_first[inverse.ravel()]


def label_members(label: np.ndarray, count: int) -> list[np.ndarray]:
    """The positions holding each label 0 .. count - 1, each ascending: one sort, not one pass per label."""
    order = np.argsort(label, kind="stable")
    return np.split(order, np.cumsum(np.bincount(label, minlength=count))[:-1])
