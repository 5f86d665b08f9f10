"""Rows of integer codes, one code per distinct row: a table's classes, its distinct records, a release's cells."""

from __future__ import annotations

from typing import Iterable

import numpy as np

__all__ = ["first_seen", "first_seen_plain", "label_members", "tuple_codes", "tuple_codes_plain"]


#: the mixed-radix key is renumbered before it could pass this
_KEY_LIMIT = 2**62


def tuple_codes(columns: Iterable[np.ndarray], n: int) -> np.ndarray:
    """Each of the ``n`` rows' tuple of codes (one array of non-negative integers per column) as one code: the
    distinct tuples numbered 0, 1, ... in lexicographic order; with no column every row has code 0.

    The columns are folded into one mixed-radix key (each column's radix its largest code + 1, which keeps the
    lexicographic order), renumbered densely only where the next column could make it overflow, and once at the
    end: one sort for a census's few small columns, not one a column (:func:`tuple_codes_plain`, the twin the tests
    hold it to, renumbers after each)."""
    key = np.zeros(n, np.int64)
    bound = 1  # every key is below it
    for column in columns:
        radix = int(column.max(initial=0)) + 1
        if bound * radix >= _KEY_LIMIT:
            key, bound = _dense(key, bound)
        key = key * radix + column
        bound *= radix
    return _dense(key, bound)[0]


def _dense(key: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """``key`` (each below ``bound``) renumbered 0, 1, ... in ascending order, and how many distinct keys: by a
    table of the keys present where ``bound`` is small beside the rows (no sort), else by ``np.unique``."""
    if bound <= 16 * key.size + 1024:  # at most 80 bytes a row, for the table and its running count
        present = np.zeros(bound, dtype=bool)
        present[key] = True
        rank = np.cumsum(present, dtype=np.int32 if bound < 2**31 else np.int64)
        return rank[key].astype(np.int64) - 1, int(rank[-1])
    inverse = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64, copy=False)
    return inverse, int(inverse.max(initial=-1)) + 1


def tuple_codes_plain(columns: Iterable[np.ndarray], n: int) -> np.ndarray:
    """:func:`tuple_codes`, the key renumbered after every column."""
    key = np.zeros(n, np.int64)
    for column in columns:
        key = np.unique(key * (int(column.max(initial=0)) + 1) + column, return_inverse=True)[1].ravel()
    return key


def first_seen(code: np.ndarray) -> np.ndarray:
    """``code`` renumbered 0, 1, ... in the order each code first appears (a table's classes as they come): its
    values hashed, not sorted (:func:`first_seen_plain`, the twin the tests hold it to, sorts them)."""
    import pandas as pd  # late: a command's --help loads no pandas

    return pd.factorize(np.asarray(code))[0].astype(np.int64, copy=False)


def first_seen_plain(code: np.ndarray) -> np.ndarray:
    """:func:`first_seen` by ``np.unique``'s sort."""
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    by_first = np.empty(first.size, np.int64)
    by_first[np.argsort(first, kind="stable")] = np.arange(first.size)
    return by_first[inverse.ravel()]


def label_members(label: np.ndarray, count: int) -> list[np.ndarray]:
    """The positions holding each label 0 .. count - 1, each ascending: one sort, not one pass per label."""
    order = np.argsort(label, kind="stable")
    return np.split(order, np.cumsum(np.bincount(label, minlength=count))[:-1])
