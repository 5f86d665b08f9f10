"""The plain scan as an index: every query block against every record, for tables too small to compile for.

Compiling the tree's kernels takes seconds on a fresh install (numba caches
them afterwards); on a table below :data:`~verifier.compiling.PLAIN_BELOW` records the O(k n m)
scan answers first, in numpy, with the same results as
:class:`~verifier.core.kdtree.RankTree`: the distance of a query to a record
is the largest gap between their blocks over the attributes (0 where they
overlap), and a query's matches are the records at its least distance, in
ascending order. The tests hold the two to each other on random tables with
and without ties.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["PlainIndex"]

#: query x record cells of one piece of the scan: 256 KB of int32, which stays in a core's cache (a piece eight
#: times larger was twice as slow, docs/performance.md)
_CELLS = 1 << 16


class PlainIndex:
    """:class:`~verifier.core.kdtree.RankTree`'s answers by the plain scan; same arguments, same results."""

    def __init__(self, record_lo: np.ndarray, record_hi: np.ndarray):
        # ranks run from 1 to n: 32 bits hold them below 2**31 records, and halve the scan's memory traffic
        self._dtype = np.int32 if record_hi.size == 0 or int(np.max(record_hi)) < 2**31 - 1 else np.int64
        self._lo = np.ascontiguousarray(np.asarray(record_lo).T, dtype=self._dtype)  # one row per attribute
        self._hi = np.ascontiguousarray(np.asarray(record_hi).T, dtype=self._dtype)

    def _gaps(self, qlo: np.ndarray, qhi: np.ndarray):
        """``(first query, (k, n) distance of each query of a piece to each record)`` piece by piece; the piece is
        a buffer the next one overwrites, read before asking for the next."""
        m, n = self._lo.shape
        qlo, qhi = qlo.astype(self._dtype, copy=False), qhi.astype(self._dtype, copy=False)
        step = max(1, _CELLS // max(n, 1))
        worst = np.empty((min(step, qlo.shape[0]), n), dtype=self._dtype)
        gap = np.empty_like(worst)
        for a in range(0, qlo.shape[0], step):
            k = min(step, qlo.shape[0] - a)
            w, g = worst[:k], gap[:k]
            w.fill(0)
            for j in range(m):  # the gap between blocks, 0 where they overlap: max(lo - qhi, qlo - hi, 0)
                np.subtract(self._lo[j][None, :], qhi[a:a + k, j, None], out=g)
                np.maximum(w, g, out=w)
                np.subtract(qlo[a:a + k, j, None], self._hi[j][None, :], out=g)
                np.maximum(w, g, out=w)
            yield a, w

    def nearest(self, qlo: np.ndarray, qhi: np.ndarray, progress: Callable[[int, int], None] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(distances, offsets, records)`` as :meth:`RankTree.nearest <verifier.core.kdtree.RankTree.nearest>`;
        ``progress(done, total)`` after each piece."""
        qlo = np.ascontiguousarray(qlo, dtype=np.int64)
        qhi = np.ascontiguousarray(qhi, dtype=np.int64)
        distances = np.empty(qlo.shape[0], dtype=np.int64)
        counts = np.empty(qlo.shape[0], dtype=np.int64)
        found = []
        for a, worst in self._gaps(qlo, qhi):
            best = worst.min(axis=1)
            hit = worst == best[:, None]
            distances[a:a + best.size] = best
            counts[a:a + best.size] = hit.sum(axis=1)
            found.append(np.nonzero(hit)[1])  # row-major: each query's records in ascending order
            if progress is not None:
                progress(a + best.size, qlo.shape[0])
        offsets = np.zeros(qlo.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        records = np.concatenate(found).astype(np.int64) if found else np.empty(0, np.int64)
        return distances, offsets, records

    def distances(self, qlo: np.ndarray, qhi: np.ndarray) -> np.ndarray:
        """The distance of every query, as :meth:`RankTree.distances <verifier.core.kdtree.RankTree.distances>`."""
        qlo = np.ascontiguousarray(qlo, dtype=np.int64)
        qhi = np.ascontiguousarray(qhi, dtype=np.int64)
        out = np.empty(qlo.shape[0], dtype=np.int64)
        for a, worst in self._gaps(qlo, qhi):
            out[a:a + worst.shape[0]] = worst.min(axis=1)
        return out
