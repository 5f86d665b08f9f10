"""m-invariance's assignment phase, round by round (Xiao and Tao, SIGMOD 2007; :mod:`publisher.methods.m_invariance`).

The new people left after balancing form buckets of m distinct values, one record of each value per round: the m
values with the most people left, ties going to the values with a record nearest the round's *anchor* (the
first record, in the grouping order, of the values left most often), then to the value's text; each value gives its
record nearest the anchor (the earlier one on a tie).

:func:`plain_rounds` is that rule as written, on Python lists. A census asks for half a million rounds (1e6 people,
m = 2), each popping a record out of the middle of a list: 56 s of a 1e6 release. :func:`assign` plays the same
rounds in a compiled loop: each value's records sit once in a sorted array, and a record taken is skipped by two
path-compressed pointers (the next record left at or after a position, the last one at or before it), so that a
round costs a binary search per value in contention. The two give the same buckets and the same people left, which
tests/test_m_invariance.py holds on random tables with ties in the grouping order.
"""

from __future__ import annotations

import bisect
from typing import Hashable

import numba as nb
import numpy as np

from verifier.compiling import compiling_pays

__all__ = ["KERNELS", "assign", "plain_rounds"]


def nearest_at(ranks: list[int], anchor: int) -> int:
    """The position in ``ranks`` (ascending) of the one nearest to ``anchor``, the lower on a tie."""
    at = bisect.bisect_left(ranks, anchor)
    if at == len(ranks) or (at > 0 and anchor - ranks[at - 1] <= ranks[at] - anchor):
        return at - 1
    return at


def plain_rounds(pool: dict[Hashable, list[int]], buckets: dict, m: int, rank: np.ndarray) -> dict[Hashable, list[int]]:
    """The rounds as written: each adds its m records to the bucket of their values (made where there is none, or
    joined, which stays balanced). Returns the people of the last fewer than m values."""
    left = {v: list(rows) for v, rows in pool.items() if rows}
    ranks = {v: rank[rows].tolist() for v, rows in left.items()}  # each value's ranks, ascending, kept beside it
    while len(left) >= m:
        most = max(len(rows) for rows in left.values())
        anchor = min(ranks[v][0] for v, rows in left.items() if len(rows) == most)
        nearest = {v: nearest_at(ranks[v], anchor) for v in left}
        top = sorted(left, key=lambda v: (-len(left[v]), abs(ranks[v][nearest[v]] - anchor), str(v)))[:m]
        s = frozenset(top)
        bucket = buckets.setdefault(s, {u: [] for u in s})
        for v in top:
            bucket[v].append(left[v].pop(nearest[v]))
            ranks[v].pop(nearest[v])
            if not left[v]:
                del left[v], ranks[v]
    return left


def assign(pool: dict[Hashable, list[int]], buckets: dict, m: int, rank: np.ndarray) -> dict[Hashable, list[int]]:
    """:func:`plain_rounds`, the rounds played by the compiled loop where the pool is large enough for it."""
    left = {v: rows for v, rows in pool.items() if rows}
    values = sorted(left, key=str)  # a value's code is its place in the rounds' last tie-break
    if not compiling_pays(sum(map(len, left.values()))) or len(set(map(str, values))) < len(values):
        return plain_rounds(pool, buckets, m, rank)
    starts = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([len(left[v]) for v in values], out=starts[1:])
    rows = np.concatenate([np.asarray(left[v], dtype=np.int64) for v in values])
    codes, taken, alive = _rounds(np.asarray(rank, dtype=np.int64)[rows], starts, m)
    if codes.shape[0]:
        _add_rounds(codes, rows[taken], values, buckets)
    kept = {values[c]: rows[starts[c]:starts[c + 1]][alive[starts[c]:starts[c + 1]]].tolist()
            for c in range(len(values))}
    return {v: kept[v] for v in left if kept[v]}


def _add_rounds(codes: np.ndarray, taken: np.ndarray, values: list, buckets: dict) -> None:
    """Each round's records (``taken``, rows, as ``codes`` gives their values' codes) added to the bucket of its
    values, each value's records in the order of their rounds."""
    m = codes.shape[1]
    signature = np.sort(codes, axis=1)
    kinds, which = np.unique(signature, axis=0, return_inverse=True)
    flat_kind, flat_code = np.repeat(which.ravel(), m), codes.ravel()
    by = np.lexsort((flat_code, flat_kind))  # stable: each value's records in the order of their rounds
    flat_rows = taken.ravel()[by]
    bounds = np.flatnonzero(np.diff(flat_kind[by] * len(values) + flat_code[by])) + 1
    for part, at in zip(np.split(flat_rows, bounds), [0, *bounds.tolist()]):
        s = frozenset(values[c] for c in kinds[flat_kind[by][at]])
        buckets.setdefault(s, {u: [] for u in s})[values[flat_code[by][at]]].extend(part.tolist())


@nb.njit(cache=True, inline="always")
def _root(parent, i):
    """The root of ``i`` under ``parent``, the path to it compressed."""
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        parent[i], i = root, parent[i]
    return root


@nb.njit(cache=True)
def _rounds(ranks, starts, m):
    """The rounds over values ``0..V-1`` whose records' grouping ranks are ``ranks[starts[c]:starts[c + 1]]``,
    ascending. Returns each round's values (in the order taken) and the positions of their records, and which
    records are left."""
    n, n_values = ranks.size, starts.size - 1
    after = np.arange(n + 1)  # after[i]: i itself while left, else the way to the next one left (n: none)
    before = np.arange(n + 1)  # before[i + 1]: the same towards the last one left at or before i (0: none)
    count = starts[1:] - starts[:-1]
    live = int(np.sum(count > 0))
    codes = np.empty((n // m + 1, m), np.int64)
    taken = np.empty((n // m + 1, m), np.int64)
    pos = np.empty(n_values, np.int64)
    gap = np.empty(n_values, np.int64)
    r = 0
    while live >= m:
        # the m-th largest count: values below it cannot be taken this round
        floor = _mth_largest(count, m)
        most = count.max()
        anchor = np.int64(2**62)
        for c in range(n_values):
            if count[c] == most:
                anchor = min(anchor, ranks[_root(after, starts[c])])
        for c in range(n_values):
            if count[c] >= floor and count[c] > 0:
                p = starts[c] + np.searchsorted(ranks[starts[c]:starts[c + 1]], anchor)
                hi = _root(after, p)
                lo = _root(before, p) - 1  # the last left at or before p - 1
                if hi >= starts[c + 1] or (lo >= starts[c] and anchor - ranks[lo] <= ranks[hi] - anchor):
                    hi = lo
                pos[c] = hi
                gap[c] = abs(ranks[hi] - anchor)
        for k in range(m):
            best = -1
            for c in range(n_values):
                if count[c] >= floor and count[c] > 0 and pos[c] >= 0:
                    if best < 0 or (count[c], -gap[c], -c) > (count[best], -gap[best], -best):
                        best = c
            codes[r, k], taken[r, k] = best, pos[best]
            pos[best] = -1
        for k in range(m):
            c, p = codes[r, k], taken[r, k]
            after[p] = p + 1
            before[p + 1] = p
            count[c] -= 1
            if count[c] == 0:
                live -= 1
        pos[:] = 0
        r += 1
    alive = np.empty(n, np.bool_)
    for i in range(n):
        alive[i] = after[i] == i
    return codes[:r], taken[:r], alive


@nb.njit(cache=True)
def _mth_largest(count, m):
    """The m-th largest of ``count`` (counted with repeats)."""
    top = np.full(m, -1, np.int64)
    for c in count:
        if c > top[m - 1]:
            k = m - 1
            while k > 0 and top[k - 1] < c:
                top[k] = top[k - 1]
                k -= 1
            top[k] = c
    return top[m - 1]


#: the compiled loop the method calls, for the release to say when a fresh install compiles it
KERNELS = (_rounds,)
