"""Rows of blocks told apart by a hash of each whole row, checked exactly.

:func:`~verifier.core.match_sets.distinct_queries` labels a million rows of
query blocks (or a table's records) by distinct row. Hashing each row whole
and factorizing the hashes takes one pass and one hash table, where folding
the columns in one at a time took one per column. A hash is not a proof: every
row is then compared with the first row given its label, and where two
different rows hashed alike the caller labels them the slow way.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["labels_by_hash", "row_hashes"]


@nb.njit(cache=True)
def row_hashes(qlo, qhi):
    """A 64-bit hash of each row's blocks (splitmix64's finalizer over each start and end in turn)."""
    n, m = qlo.shape
    out = np.empty(n, np.int64)
    for i in range(n):
        h = np.uint64(0x9E3779B97F4A7C15)
        for j in range(2 * m):
            v = np.uint64(qlo[i, j // 2] if j % 2 == 0 else qhi[i, j // 2])
            h = (h ^ v) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h ^= h >> np.uint64(31)
        out[i] = np.int64(h)
    return out


@nb.njit(cache=True)
def _same_as_first(qlo, qhi, labels):
    """Whether every row equals the first row of its label."""
    first = np.full(labels.size, -1, np.int64)
    for i in range(labels.size):
        f = first[labels[i]]
        if f < 0:
            first[labels[i]] = i
            continue
        for j in range(qlo.shape[1]):
            if qlo[i, j] != qlo[f, j] or qhi[i, j] != qhi[f, j]:
                return False
    return True


def labels_by_hash(qlo: np.ndarray, qhi: np.ndarray, hashes: np.ndarray) -> np.ndarray | None:
    """Each row's label from its hash, numbered by first appearance, or None where two different rows share one."""
    import pandas as pd

    labels = pd.factorize(hashes)[0].astype(np.int64)
    return labels if _same_as_first(qlo, qhi, labels) else None
