"""The distinct values of one column, as ``np.unique`` finds them, by hashing instead of sorting (issue 61).

``np.unique`` sorts the whole column: 0.1 s for 1e6 ages or codes, and a
release's claims and every record's level ask it dozens of times. A census's
columns hold few distinct values, so :func:`distinct_values` hashes each value
once (``pd.factorize``, O(n)) and sorts only the distinct ones: about 0.01 s.
Codes numbered as they first appear give each one's first row from their
running maximum (:func:`first_appearances`), and codes that are already dense
their first row in one pass (:func:`first_rows`). The tests hold each to
``np.unique`` on random columns with ties, NaN and -0.0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct_values", "first_appearances", "first_rows"]


def distinct_values(values: np.ndarray, *, return_index: bool = False, return_inverse: bool = False,
                    return_counts: bool = False):
    """``np.unique(values, return_index=..., return_inverse=..., return_counts=...)`` of a 1-D numeric array: the
    distinct values ascending (one NaN, last; -0.0 and 0.0 one value, the first of them to appear), then what
    was asked for (each value's first row, every row's position among them, each value's rows)."""
    import pandas as pd  # late: a command's --help loads no pandas

    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iuf":
        raise ValueError(f"distinct_values takes a 1-D numeric array, not {values.dtype} of shape {values.shape}")
    codes, uniques = pd.factorize(values, use_na_sentinel=False)  # codes numbered as the values first appear
    uniques = np.asarray(uniques, dtype=values.dtype)
    order = np.argsort(uniques, kind="stable")  # NaN last, as np.unique puts it
    found = [uniques[order]]
    if return_index:
        found.append(first_appearances(codes)[order])
    if return_inverse:
        rank = np.empty(order.size, dtype=np.intp)
        rank[order] = np.arange(order.size)
        found.append(rank[codes])
    if return_counts:
        found.append(np.bincount(codes, minlength=order.size)[order])
    return found[0] if len(found) == 1 else tuple(found)


def first_appearances(codes: np.ndarray) -> np.ndarray:
    """Each code's first row, for codes 0, 1, ... numbered as they first appear (``pd.factorize``'s): a code
    appears first where the running maximum rises to it."""
    codes = np.asarray(codes)
    if not codes.size:
        return np.zeros(0, dtype=np.intp)
    most = np.maximum.accumulate(codes)
    rises = np.empty(codes.size, dtype=bool)
    rises[0] = True
    np.not_equal(most[1:], most[:-1], out=rises[1:])
    return np.flatnonzero(rises)


def first_rows(codes: np.ndarray, count: int) -> np.ndarray:
    """Each of the dense codes 0 .. ``count`` - 1's first row (every code present): the least row holding it."""
    codes = np.asarray(codes)
    first = np.full(count, codes.size, dtype=np.intp)
    np.minimum.at(first, codes, np.arange(codes.size, dtype=np.intp))
    return first
