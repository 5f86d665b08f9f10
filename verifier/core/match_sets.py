"""Match sets kept once per distinct query: every record's closest released records, without a copy per tie.

The match set of an original record is every released record at its
permutation distance (SPEC section 4). Two records with the same query blocks
have the same match set, and on a census of categorical columns most records
share theirs with thousands of others: the Adult training file resampled to
1e6 records has 9,908 distinct quasi-identifier rows, and its match sets listed
record by record hold 7.3e8 entries (5.8 GB for one copy). :class:`MatchSets`
keeps each distinct query's set once and the map from every query to it, and
answers what the checks ask of the sets (their sizes, whether a given record is
in one, the share of a set holding her value) from that, in memory that grows
with the distinct sets. :meth:`MatchSets.listed` writes them out record by
record for the records a caller asks for: an ``--out`` file asks a batch at a
time, so no caller holds every list at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["MatchSets", "distinct_queries"]

#: entries a piece of an expansion holds at most (32 MB of int64)
_PIECE = 1 << 22


def distinct_queries(qlo: np.ndarray, qhi: np.ndarray, *, hashed_from: int = 1 << 15) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, first)``: each query's distinct query block row, and the first query of each distinct row.

    Distinct rows are numbered in the order they first appear, so a table
    without repeated queries gets ``rows == first == arange(n)``. From
    ``hashed_from`` queries on, the rows are labelled a column at a time in
    pandas's hash tables (1e6 x 12 blocks: 0.3 s against 1.4 s for numpy's
    sort of whole rows, which smaller batches use without importing pandas);
    both number them alike. Before that, each row is hashed whole and the
    hashes factorized, every row then compared with the first of its label
    (1e6 x 15: about 0.2 s against 1.4 to 2 s); only where two different
    rows hash alike are the columns folded.
    """
    nq = qlo.shape[0]
    if nq == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if nq >= hashed_from:
        from verifier.core.row_hashes import labels_by_hash, row_hashes

        qlo, qhi = np.ascontiguousarray(qlo, dtype=np.int64), np.ascontiguousarray(qhi, dtype=np.int64)
        rows = labels_by_hash(qlo, qhi, row_hashes(qlo, qhi))
        if rows is None:  # two different rows hashed alike (about n^2 / 2^65): label them a column at a time
            rows = _hashed_labels(qlo, qhi)
        seen = np.maximum.accumulate(rows)
        new = np.ones(nq, dtype=bool)
        new[1:] = rows[1:] > seen[:-1]
        return rows, np.flatnonzero(new).astype(np.int64)
    both = np.ascontiguousarray(np.concatenate([qlo, qhi], axis=1), dtype=np.int64)
    keys = both.view(np.dtype((np.void, both.dtype.itemsize * both.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # number the distinct rows by first appearance
    renumber = np.empty(order.size, np.int64)
    renumber[order] = np.arange(order.size)
    return renumber[inverse.ravel()], first[order].astype(np.int64)


def _hashed_labels(qlo: np.ndarray, qhi: np.ndarray) -> np.ndarray:
    """Each row's label, numbered by first appearance: the columns folded in one at a time, each fold factorized
    (the labels stay below the rows, so ``label * size + code`` fits in 64 bits). A column's block is one key
    where its start and end fit in one integer together; once every row has a label of its own, the columns left
    cannot split any further and are not read (1e6 census queries of 15 columns: 2.9 s to about 1 s)."""
    import pandas as pd

    nq, m = qlo.shape
    label = np.zeros(nq, np.int64)
    for j in range(m):
        lo, hi = qlo[:, j], qhi[:, j]
        top = int(max(lo.max(), hi.max())) + 1 if nq else 1
        small = int(min(lo.min(), hi.min())) >= 0 and top < 1 << 31
        for column in ([lo * top + hi] if small else [lo, hi]):
            codes, uniques = pd.factorize(column)
            label, distinct = pd.factorize(label * len(uniques) + codes)
            label = label.astype(np.int64)
        if len(distinct) == nq:
            break
    return label


@dataclass(frozen=True, eq=False)
class MatchSets:
    """The match sets of ``n`` queries, each distinct one stored once.

    Query q's set is ``records[offsets[rows[q]]:offsets[rows[q] + 1]]``: 0-based
    released record numbers in ascending order.
    """

    rows: np.ndarray
    offsets: np.ndarray
    records: np.ndarray

    @classmethod
    def each(cls, offsets: np.ndarray, records: np.ndarray) -> "MatchSets":
        """Sets listed query by query (CSR), as a search that does not merge equal queries returns them."""
        return cls(np.arange(offsets.size - 1, dtype=np.int64), offsets, records)

    @property
    def n_queries(self) -> int:
        return int(self.rows.size)

    @cached_property
    def counts(self) -> np.ndarray:
        """The size of every query's match set."""
        return np.diff(self.offsets)[self.rows]

    def of(self, q: int) -> np.ndarray:
        """Query q's match set."""
        u = int(self.rows[q])
        return self.records[self.offsets[u]:self.offsets[u + 1]]

    def listed(self, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, records)`` of queries ``start..stop-1`` in CSR form, every query's set written out."""
        return self._gathered(self.rows[start:stop])

    def _gathered(self, distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, records)``: the sets of the given distinct rows, one after another, in CSR form."""
        counts = np.diff(self.offsets)[distinct]
        offsets = np.zeros(distinct.size + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        at = np.repeat(self.offsets[distinct] - offsets[:-1], counts) + np.arange(offsets[-1])
        return offsets, self.records[at]

    def contains(self, wanted: np.ndarray) -> np.ndarray:
        """Per query q: whether released record ``wanted[q]`` is in its match set."""
        wanted = np.asarray(wanted, dtype=np.int64)
        if self.records.size == 0:
            return np.zeros(self.n_queries, dtype=bool)
        width = int(max(self.records.max(), wanted.max(initial=0))) + 1
        # each distinct set's records ascend and the sets follow one another, so set * width + record ascends
        owner = np.repeat(np.arange(self.offsets.size - 1, dtype=np.int64), np.diff(self.offsets))
        keys = owner * width + self.records
        asked = self.rows * width + wanted
        at = np.minimum(np.searchsorted(keys, asked), keys.size - 1)
        return keys[at] == asked

    def value_hits(self, own: np.ndarray, released: np.ndarray, tolerance: float | None = None) -> np.ndarray:
        """Per query q: how many records of its set hold ``own[q]`` in ``released`` (within ``tolerance``,
        compared as ``|theirs - mine| <= tolerance``).

        Queries of one set and one value share the count: each distinct
        (set, value) pair is counted once, a piece at a time.
        """
        own = np.asarray(own)
        pair_set, pair_value, pair_of = _pairs(self.rows, own)
        sizes = np.diff(self.offsets)[pair_set]
        hits = np.zeros(pair_set.size, np.float64)
        ends = np.cumsum(sizes)
        start = 0
        while start < pair_set.size:
            base = ends[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(ends, base + _PIECE, side="right")))
            part = slice(start, stop)
            counts = sizes[part]
            owner = np.repeat(np.arange(counts.size), counts)
            theirs = released[self._gathered(pair_set[part])[1]]
            mine = pair_value[part][owner]
            hit = np.abs(theirs - mine) <= tolerance if tolerance is not None else theirs == mine
            hits[part] = np.bincount(owner, weights=hit.astype(float), minlength=counts.size)
            start = stop
        return hits[pair_of]


def _pairs(rows: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (set, value) pairs of the queries: ``(pair_set, pair_value, pair_of)`` with ``pair_of[q]`` the
    pair of query q. Values compare as ``==`` does (-0.0 and 0.0 are one value)."""
    if rows.size == 0:
        return np.zeros(0, np.int64), own[:0], np.zeros(0, np.int64)
    value = own + 0.0 if own.dtype.kind == "f" else own
    order = np.lexsort((value, rows))
    r, v = rows[order], value[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (r[1:] != r[:-1]) | (v[1:] != v[:-1])
    label = np.cumsum(new) - 1
    pair_of = np.empty(order.size, np.int64)
    pair_of[order] = label
    return r[new], own[order][new], pair_of
