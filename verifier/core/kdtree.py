"""An exact nearest-neighbour search in rank space under the block-gap metric.

The data-set level of SPEC section 4 asks, for every original record x, for

    d(x) = min_i max_j gap(Q_j(x), B_j(Y_i))

where ``Q_j(x)`` is x's query block on attribute j and ``B_j(Y_i)`` the block of
anonymized record i (``verifier.core.ranks``). Without ties this is an L-infinity
nearest-neighbour search over integer ranks. With ties it is not a metric on
points (a tied block in the middle stretches the gap across it, so the triangle
inequality fails) and no point embedding is exact, which rules out scipy's
trees. So this module is a small KD-tree of its own:

- every anonymized record is a point of its block starts, and nodes are
  split at the median of the axis of widest reach (the largest block gap
  between two of its records; tied records fall on either side, which only
  balances the tree);
- each node keeps, per axis, the lowest block start and the highest block
  end among its records;
- the lower bound of a node for a query is the block gap between the query
  block and that interval. Block starts and ends grow with the position, so
  the bound is attained at the box edge and never overestimates: the search
  is exact, ties or not, and collects the whole match set as it goes.

Searches run in parallel over queries with numba. Each public function has a
plain numpy counterpart in :mod:`verifier.core.permutation` that the tests compare
against on random tables with and without ties.

The tree keeps its blocks as 32-bit integers, each row padded with zeros to a
multiple of :data:`LANES` columns, and measures every gap over the whole row
without stopping early: the loop then compiles to vector instructions, and a
zero column adds a gap of 0; the gaps are computed in 32 bits, eight to a
vector (every position lies in [0, :data:`MAX_RECORDS` + 1]). On 1e6
census records of 15 columns one search took 6.0 s against 13.8 s for 64-bit
rows of 15 columns that stop as soon as the gap passes the best so far, and
9.4 s against 12.7 s with every numeric column noised (5 tied columns: 1.0 s
against 1.4 s).
"""

from __future__ import annotations

import types
from typing import Callable

import numba as nb
import numpy as np

from verifier.core.interrupts import QUERY_CHUNK, held_signals
from verifier.errors import InvalidInputError

__all__ = ["KERNELS", "LANES", "MAX_RECORDS", "SERIAL_QUERIES", "WARMED", "RankTree", "heap_layout", "padded",
           "padded_width", "plain_heap_layout", "search_kernel"]

_LEAF_SIZE = 16
#: the level (2 ** ORDER_LEVEL subtrees) down to which a batch's queries are ordered (16-bit keys)
ORDER_LEVEL = 14

Progress = Callable[[int, int], None]
_BIG = np.int64(2**62)
#: a block row's width is a multiple of this many columns (eight 32-bit lanes of a 256-bit vector)
LANES = 8


@nb.njit(cache=True)
def _select(keys, idx, s, e, mid):
    """Reorder ``keys[s:e]`` and ``idx[s:e]`` alike so that the records before ``mid`` have the lowest keys.

    ``keys[t]`` is record ``idx[t]``'s position on the split axis, gathered
    once per node: the partition then reads a contiguous array instead of
    one row of the records' table per comparison (1e7 x 5 records: the
    whole build 5.7 s -> 4.5 s). Quickselect (median-of-three
    pivot, Hoare partition): O(e - s) on average where a sort costs
    O((e - s) log(e - s)). Tied positions stop both scans and are swapped,
    so a column of few distinct values still splits in half.
    """
    lo, hi = s, e - 1
    while lo < hi:
        a, b, c = keys[lo], keys[(lo + hi) // 2], keys[hi]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while keys[i] < pivot:
                i += 1
            while keys[j] > pivot:
                j -= 1
            if i <= j:
                keys[i], keys[j] = keys[j], keys[i]
                idx[i], idx[j] = idx[j], idx[i]
                i += 1
                j -= 1
        if mid <= j:
            hi = j
        elif mid >= i:
            lo = i
        else:
            break


def plain_heap_layout(n, leaf_size):
    """The empty frame of a median-split tree over ``n`` records, nodes numbered as a heap.

    Returns ``(idx, start, end, depth)``: the records in their initial order,
    each node's slice of it (only the root's filled in), and the number of
    levels above the leaves, so that the tree has ``2 ** (depth + 1) - 1``
    nodes and its first leaf is node ``2 ** depth - 1``. Leaves hold at most
    ``leaf_size`` records.
    """
    depth = 0
    while (n >> depth) > leaf_size:
        depth += 1
    n_nodes = (1 << (depth + 1)) - 1
    start = np.zeros(n_nodes, np.int64)
    end = np.zeros(n_nodes, np.int64)
    end[0] = n
    return np.arange(n, dtype=np.int64), start, end, depth


#: :func:`plain_heap_layout` compiled, for compiled builders (the publisher's point index); the tree's own
#: build is Python between its kernels, and calls the plain one (nothing to compile for it)
heap_layout = nb.njit(cache=True)(plain_heap_layout)


@nb.njit(cache=True, inline="always")
def _split(node, idx, start, end, pos, pos_hi, keys, weight):
    """Split ``node`` at its median along the axis of widest weighted reach, into its two children.

    An axis's reach is the largest block gap two of the node's records can
    have on it: the highest block start less the lowest block end. Without
    ties it is the spread of positions; an axis of a few large blocks (a sex
    column) reaches little however far its positions spread, and a split on
    it would never prune. An axis with one heaped block and a few small ones
    at both ends (a capital gain of mostly 0, a native country of mostly one)
    reaches far, yet its median falls in the heap, both children hold it, and
    the split prunes nothing for the many queries in it: the reach is weighted
    by ``weight``, the axis's :func:`split_weights`. The reach is judged on at
    most about 256 of the node's records (any axis keeps the search exact; a
    sample keeps the build near one select per level).
    """
    s = start[node]
    e = end[node]
    step = max(1, (e - s) // 256)
    best_axis = 0
    best_reach = -np.inf
    for j in range(pos.shape[1]):
        highest_start = pos[idx[s], j]
        lowest_end = pos_hi[idx[s], j]
        for t in range(s, e, step):
            r = idx[t]
            if pos[r, j] > highest_start:
                highest_start = pos[r, j]
            if pos_hi[r, j] < lowest_end:
                lowest_end = pos_hi[r, j]
        reach = (highest_start - lowest_end) * weight[j]
        if reach > best_reach:
            best_reach = reach
            best_axis = j
    mid = (s + e) // 2
    for t in range(s, e):
        keys[t] = pos[idx[t], best_axis]
    _select(keys, idx, s, e, mid)
    left = 2 * node + 1
    start[left] = s
    end[left] = mid
    start[left + 1] = mid
    end[left + 1] = e


def _build(pos, rec_lo, rec_hi, leaf_size):
    """Median-split KD-tree over integer positions; heap-ordered nodes.

    Returns the tree order of the records, each node's slice of it, each
    node's box in block space (lowest block start, highest block end per axis)
    and the records' blocks in tree order. The nodes of one level own
    disjoint slices, so each level is split in parallel; the tree is the same
    as a sequential build's. Each level is one kernel call under
    :func:`held_signals`, so that an interrupt waits for one level (one select
    over the records), not for the whole build.
    """
    idx, start, end, depth = plain_heap_layout(pos.shape[0], leaf_size)
    keys = np.empty(pos.shape[0], np.int64)  # each node's split positions, in its own slice
    weight = split_weights(rec_lo, rec_hi)
    for level in range(depth):
        with held_signals():
            _split_level(level, idx, start, end, pos, rec_hi, keys, weight)
    del keys
    n, m = rec_lo.shape
    n_nodes = start.size
    first_leaf = (1 << depth) - 1
    blk_lo = np.empty((n_nodes, m), np.int64)
    blk_hi = np.empty((n_nodes, m), np.int64)
    leaf_lo = np.zeros((n, padded_width(m)), np.int32)
    leaf_hi = np.zeros((n, padded_width(m)), np.int32)
    per_call = max(1, (QUERY_CHUNK << 3) // leaf_size)  # about a million records per call
    for first in range(first_leaf, n_nodes, per_call):
        with held_signals():
            _leaf_boxes(first, min(first + per_call, n_nodes), idx, start, end, rec_lo, rec_hi, blk_lo, blk_hi,
                        leaf_lo, leaf_hi)
    with held_signals():
        _inner_boxes(depth, blk_lo, blk_hi)
    # a box without records (a tree of none) holds the sentinels: brought into the positions' range, it only widens
    boxes = [padded(np.clip(b, 0, MAX_RECORDS + 1)) for b in (blk_lo, blk_hi)]
    return idx, start, end, *boxes, first_leaf, leaf_lo, leaf_hi


#: the most records of a table whose ranks a tree indexes (a tree may hold a slab of them, at their positions in
#: the whole table): its blocks are 32-bit, and a gap is computed in 32 bits; every position lies in
#: [0, MAX_RECORDS + 1], so every difference fits
MAX_RECORDS = 1 << 30


def padded_width(m: int) -> int:
    """``m`` columns rounded up to a multiple of :data:`LANES` (at least one lane's worth)."""
    return max(LANES, -(-m // LANES) * LANES)


def padded(blocks: np.ndarray) -> np.ndarray:
    """``blocks`` (rows of positions, each in [0, :data:`MAX_RECORDS` + 1]) as a tree keeps them: 32-bit, each row
    padded with zeros to :func:`padded_width` (a zero column adds a gap of 0)."""
    out = np.zeros((blocks.shape[0], padded_width(blocks.shape[1])), np.int32)
    out[:, :blocks.shape[1]] = blocks
    return out


def split_weights(rec_lo: np.ndarray, rec_hi: np.ndarray) -> np.ndarray:
    """Per axis, the weight of its reach when a node is split: the chance that two records drawn at random lie in
    different blocks of it (one less the sum over blocks of their squared shares, the sum of every record's block
    size over n squared), cubed. A near-distinct column weighs about 1, a column of one value held by nine records
    in ten about 0.007. On 1e6 census records of 15 columns (docs/performance.md) the searches took 14 s against a
    randomized-response release and 17 s against additive noise, where the reach alone took 32 s and 47 s; the
    square did less and the fourth power no better."""
    n, m = rec_lo.shape
    out = np.empty(m, np.float64)
    for j in range(m):
        together = float(np.sum(rec_hi[:, j] - rec_lo[:, j] + 1)) / float(n) / float(n) if n else 1.0
        out[j] = (1.0 - together) ** 3
    return out


@nb.njit(cache=True, parallel=True)
def _split_level(level, idx, start, end, pos, pos_hi, keys, weight):
    """Split every node of ``level`` at its median, in parallel (the nodes own disjoint slices)."""
    for c in nb.prange(1 << level):
        _split((1 << level) - 1 + c, idx, start, end, pos, pos_hi, keys, weight)


@nb.njit(cache=True, parallel=True)
def _leaf_boxes(first, last, idx, start, end, rec_lo, rec_hi, blk_lo, blk_hi, leaf_lo, leaf_hi):
    """The box in block space of leaves ``first`` to ``last - 1``, and their records' blocks in tree order."""
    m = rec_lo.shape[1]
    for c in nb.prange(last - first):
        node = first + c
        for j in range(m):
            blk_lo[node, j] = _BIG
            blk_hi[node, j] = -_BIG
        for t in range(start[node], end[node]):
            r = idx[t]
            for j in range(m):
                lo = rec_lo[r, j]
                hi = rec_hi[r, j]
                leaf_lo[t, j] = lo
                leaf_hi[t, j] = hi
                if lo < blk_lo[node, j]:
                    blk_lo[node, j] = lo
                if hi > blk_hi[node, j]:
                    blk_hi[node, j] = hi


@nb.njit(cache=True, parallel=True)
def _inner_boxes(depth, blk_lo, blk_hi):
    """Each inner node's box, from its children's, level by level up to the root."""
    m = blk_lo.shape[1]
    for level in range(depth - 1, -1, -1):
        for c in nb.prange(1 << level):
            node = (1 << level) - 1 + c
            a = 2 * node + 1
            for j in range(m):
                blk_lo[node, j] = min(blk_lo[a, j], blk_lo[a + 1, j])
                blk_hi[node, j] = max(blk_hi[a, j], blk_hi[a + 1, j])


@nb.njit(cache=True, inline="always")
def _node_bound(node, q, qlo, qhi, blk_lo, blk_hi, m):
    """Smallest block gap any point of ``node`` can have to query ``q``.

    ``blk_lo``/``blk_hi`` hold, per node and axis, the lowest block start and
    the highest block end among the node's points. Block starts and ends grow
    with the position, so the gap between the query block and that interval
    is attained at the box edge and never exceeds any point's gap. Every axis
    is measured (no early exit), so that the loop vectorizes.
    """
    bound = np.int32(0)
    for j in range(m):
        bound = max(bound, max(np.int32(blk_lo[node, j] - qhi[q, j]), np.int32(qlo[q, j] - blk_hi[node, j])))
    return np.int64(bound)


@nb.njit(cache=True, inline="always")
def _point_gap(t, q, qlo, qhi, leaf_lo, leaf_hi, m):
    """Block-gap distance of the record stored at slot ``t``, every axis measured (the loop vectorizes)."""
    d = np.int32(0)
    for j in range(m):
        d = max(d, max(np.int32(leaf_lo[t, j] - qhi[q, j]), np.int32(qlo[q, j] - leaf_hi[t, j])))
    return np.int64(d)


@nb.njit(cache=True, parallel=True)
def _nearest(qlo, qhi, cap, ties, start, end, blk_lo, blk_hi, leaf_lo, leaf_hi, idx, first_leaf):
    """Distance of every query, and up to ``cap`` of its matches.

    ``counts[q]`` is the size of the whole match set; where it exceeds
    ``cap`` the buffer is incomplete and the caller lists the matches again.
    With ``ties`` false only the distance is wanted: nodes that can at best
    tie the distance found so far are skipped, and ``counts`` is meaningless.
    """
    nq, m = qlo.shape
    dist = np.empty(nq, np.int64)
    counts = np.zeros(nq, np.int64)
    found = np.empty((nq, cap), np.int64)
    n_chunks = max(1, min(nq, 64))
    for c in nb.prange(n_chunks):
        stack = np.empty(256, np.int64)
        bounds = np.empty(256, np.int64)
        for q in range(c * nq // n_chunks, (c + 1) * nq // n_chunks):
            best = _BIG
            # the largest bound still worth a visit: ``best`` when the whole
            # match set is wanted, ``best - 1`` when only the distance is
            keep = best
            k = 0
            sp = 1
            stack[0] = 0
            bounds[0] = 0
            while sp > 0:
                sp -= 1
                node = stack[sp]
                if bounds[sp] > keep:
                    continue
                if node >= first_leaf:
                    for t in range(start[node], end[node]):
                        d = _point_gap(t, q, qlo, qhi, leaf_lo, leaf_hi, m)
                        if d < best:
                            best = d
                            keep = best if ties else best - 1
                            k = 0
                        if d == best:
                            if k < cap:
                                found[q, k] = idx[t]
                            k += 1
                else:
                    a = 2 * node + 1
                    ba = _node_bound(a, q, qlo, qhi, blk_lo, blk_hi, m)
                    bb = _node_bound(a + 1, q, qlo, qhi, blk_lo, blk_hi, m)
                    # push the farther child first so the nearer one is searched first
                    if ba <= bb:
                        if bb <= keep:
                            stack[sp] = a + 1
                            bounds[sp] = bb
                            sp += 1
                        if ba <= keep:
                            stack[sp] = a
                            bounds[sp] = ba
                            sp += 1
                    else:
                        if ba <= keep:
                            stack[sp] = a
                            bounds[sp] = ba
                            sp += 1
                        if bb <= keep:
                            stack[sp] = a + 1
                            bounds[sp] = bb
                            sp += 1
            dist[q] = best
            counts[q] = k
            if ties and k <= cap:
                found[q, :k].sort()
    return dist, counts, found


@nb.njit(cache=True, parallel=True)
def _within(qlo, qhi, radius, offsets, out, start, end, blk_lo, blk_hi, leaf_lo, leaf_hi, idx, first_leaf):
    """List into ``out[offsets[q]:]`` every record within ``radius[q]`` of query q."""
    nq, m = qlo.shape
    n_chunks = max(1, min(nq, 64))
    for c in nb.prange(n_chunks):
        stack = np.empty(256, np.int64)
        for q in range(c * nq // n_chunks, (c + 1) * nq // n_chunks):
            r = radius[q]
            k = offsets[q]
            sp = 1
            stack[0] = 0
            while sp > 0:
                sp -= 1
                node = stack[sp]
                if node >= first_leaf:
                    for t in range(start[node], end[node]):
                        if _point_gap(t, q, qlo, qhi, leaf_lo, leaf_hi, m) <= r:
                            out[k] = idx[t]
                            k += 1
                else:
                    a = 2 * node + 1
                    if _node_bound(a, q, qlo, qhi, blk_lo, blk_hi, m) <= r:
                        stack[sp] = a
                        sp += 1
                    if _node_bound(a + 1, q, qlo, qhi, blk_lo, blk_hi, m) <= r:
                        stack[sp] = a + 1
                        sp += 1
            out[offsets[q]:k].sort()


class RankTree:
    """Exact block-gap nearest neighbours among the records of an anonymized table.

    Parameters
    ----------
    record_lo, record_hi
        ``(n, m)`` 1-based block of each record on each attribute. Nodes are
        split on the block starts; any split keeps the search exact, since a
        node's bound comes from the blocks of the records it holds.
    """

    #: matches kept per query during the search; larger match sets are listed again
    buffer = 8

    def __init__(self, record_lo: np.ndarray, record_hi: np.ndarray):
        if record_lo.size and (record_lo.min() < 0 or record_hi.max() > MAX_RECORDS):
            raise InvalidInputError(f"the search index takes tables of at most {MAX_RECORDS:,} records; this one "
                                    f"ranks records up to position {int(record_hi.max()):,}", reason="TABLE_TOO_LARGE")
        record_lo = np.ascontiguousarray(record_lo, dtype=np.int64)
        record_hi = np.ascontiguousarray(record_hi, dtype=np.int64)
        # record blocks are stored in tree order, so that each leaf is contiguous
        idx, start, end, blk_lo, blk_hi, first_leaf, self._leaf_lo, self._leaf_hi = _build(
            record_lo, record_lo, record_hi, _LEAF_SIZE)
        self._tree = (start, end, blk_lo, blk_hi, self._leaf_lo, self._leaf_hi, idx, int(first_leaf))

    def nearest(self, qlo: np.ndarray, qhi: np.ndarray, progress: Progress | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distance and match set of every query block row.

        Returns ``(distances, offsets, records)``: the match set of query q is
        ``records[offsets[q]:offsets[q + 1]]``, 0-based record numbers in
        ascending order. ``progress(done, total)`` is called after each piece.
        """
        qlo = np.ascontiguousarray(qlo, dtype=np.int64)
        qhi = np.ascontiguousarray(qhi, dtype=np.int64)
        nq = qlo.shape[0]
        dist = np.empty(nq, np.int64)
        counts = np.empty(nq, np.int64)
        order = self._search_order(qlo, qhi)
        listed = []  # each piece's match sets, one after another, in the order the pieces were searched
        for rows, piece_lo, piece_hi, (d, c, found) in self._pieces(qlo, qhi, self.buffer, True, order, progress):
            dist[rows], counts[rows] = d, c
            listed.append(self._match_lists(piece_lo, piece_hi, d, c, found))
        offsets = np.zeros(nq + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        searched = np.concatenate(listed) if listed else np.empty(0, np.int64)
        if order is None:  # searched in the callers' order
            return dist, offsets, searched
        # query order[p] was searched p-th: its matches start at ``at[p]`` of ``searched``
        at = np.zeros(nq, np.int64)
        np.cumsum(counts[order][:-1], out=at[1:])
        shift = np.empty(nq, np.int64)
        shift[order] = at
        shift -= offsets[:-1]
        return dist, offsets, searched[np.repeat(shift, counts) + np.arange(offsets[-1])]

    def _match_lists(self, qlo: np.ndarray, qhi: np.ndarray, dist: np.ndarray, counts: np.ndarray,
                     found: np.ndarray) -> np.ndarray:
        """The match sets of one piece (its query blocks ``qlo``, ``qhi``) end to end: from the search's buffer,
        or listed again where it overflowed."""
        starts = np.zeros(counts.size, np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        out = np.empty(int(counts.sum()), np.int64)
        small = counts <= self.buffer
        kept = np.arange(self.buffer)[None, :] < np.minimum(counts, self.buffer)[:, None]
        out[np.repeat(small, counts)] = found[kept & small[:, None]]
        big = np.flatnonzero(~small)
        if big.size:
            with held_signals():
                _within(qlo[big], qhi[big], dist[big], starts[big], out, *self._tree)
        return out

    def distances(self, qlo: np.ndarray, qhi: np.ndarray) -> np.ndarray:
        """Distance of every query block row, without its match set.

        Faster than :meth:`nearest` where matches are not wanted (the random
        records of the intruder's test): subtrees that could only tie the
        best distance found so far are skipped.
        """
        qlo = np.ascontiguousarray(qlo, dtype=np.int64)
        qhi = np.ascontiguousarray(qhi, dtype=np.int64)
        dist = np.empty(qlo.shape[0], np.int64)
        for rows, _, _, (d, _, _) in self._pieces(qlo, qhi, 0, False, self._search_order(qlo, qhi), None):
            dist[rows] = d
        return dist

    def _search_order(self, qlo: np.ndarray, qhi: np.ndarray) -> np.ndarray | None:
        """The order to search a batch in: ``None`` (as given) up to :data:`SERIAL_QUERIES` queries, else tree order.

        Tree order sorts the queries by the subtree each one's nearest-first
        descent reaches, so that the queries a thread takes in turn walk the
        same nodes and leaves while they are in cache (2e5 census records of
        15 attributes: 2.6x against a randomized response release, 1.1x
        against additive noise). The whole batch is ordered at once: ordered
        only within pieces of 65,536, 1e7 x 5 tied records took 44 s
        against 28 s. The descent stops at level :data:`ORDER_LEVEL` (16,384
        subtrees): the leaves' order bought nothing more at 1e6 or 1e7, and
        stopping there cut the ordering from 6.9 s to 1.3 s at 1e7 (a
        shorter descent, and a radix sort of 16-bit keys).
        """
        nq = qlo.shape[0]
        if nq <= SERIAL_QUERIES:
            return None
        first_leaf = self._tree[-1]
        level = min((first_leaf + 1).bit_length() - 1, ORDER_LEVEL)
        first = (1 << level) - 1  # the first node of that level
        nodes = np.empty(nq, np.uint16 if level <= 16 else np.int64)
        for a in range(0, nq, QUERY_CHUNK):
            with held_signals():
                reached = _query_leaves(padded(qlo[a:a + QUERY_CHUNK]), padded(qhi[a:a + QUERY_CHUNK]), *self._tree[2:4],
                                        first)
            nodes[a:a + QUERY_CHUNK] = reached - first
        return np.argsort(nodes, kind="stable")

    def _pieces(self, qlo: np.ndarray, qhi: np.ndarray, cap: int, ties: bool, order: np.ndarray | None,
                progress: Progress | None):
        """:func:`_nearest` on pieces of :data:`QUERY_CHUNK` queries taken in ``order``, signals held in each (an
        interrupt is honoured between pieces): yields each piece's queries (``rows``), their query blocks and
        ``(dist, counts, found)``.

        Without an order the serial kernel searches the queries as given;
        with one each piece gathers its queries, so no reordered copy of the
        whole batch is made.
        """
        nq = qlo.shape[0]
        kernel = _nearest_serial if order is None else _nearest
        for a in range(0, nq, QUERY_CHUNK):
            rows = slice(a, a + QUERY_CHUNK) if order is None else order[a:a + QUERY_CHUNK]
            piece_lo, piece_hi = padded(qlo[rows]), padded(qhi[rows])  # as the kernels take them
            with held_signals():
                found = kernel(piece_lo, piece_hi, cap, ties, *self._tree)
            yield rows, piece_lo, piece_hi, found
            if progress is not None:
                progress(min(nq, a + QUERY_CHUNK), nq)


@nb.njit(cache=True, parallel=True)
def _query_leaves(qlo, qhi, blk_lo, blk_hi, first):
    """The node each query reaches by descending into the child of the smaller bound (the left one on a tie),
    down to the level whose first node is ``first`` (the leaves', or one above)."""
    nq, m = qlo.shape
    out = np.empty(nq, np.int64)
    for q in nb.prange(nq):
        node = 0
        while node < first:
            a = 2 * node + 1
            ba = _node_bound(a, q, qlo, qhi, blk_lo, blk_hi, m)
            bb = _node_bound(a + 1, q, qlo, qhi, blk_lo, blk_hi, m)
            node = a if ba <= bb else a + 1
        out[q] = node
    return out


def twin(fn, name: str):
    """``fn`` under another name, to be compiled with other options: numba names a kernel's cache files after
    its function's name and first line, not its options, so a twin of the same name would share them, and the
    one compiled first would be loaded for both (a parallel search running the serial code)."""
    out = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    out.__qualname__ = name
    out.__doc__ = fn.__doc__
    return out


#: the search without parfors, for batches of at most :data:`SERIAL_QUERIES` queries (a subject's check and its
#: random records): the same code and results, compiled in half the time of the parallel one (1.5 s against
#: 3.2 s on a fresh install), which a batch that small does not earn back
_nearest_serial = nb.njit(cache=True, nogil=True)(twin(_nearest.py_func, "_nearest_serial"))
SERIAL_QUERIES = 1 << 15

#: the compiled kernels a tree's build and search call
KERNELS = (_split_level, _leaf_boxes, _inner_boxes, _nearest_serial, _nearest, _within, _query_leaves)
#: those a command loads before its first search; the parallel search (a batch of many queries) and the listing
#: of large match sets (``_within``) compile where they are first needed
WARMED = (_split_level, _leaf_boxes, _inner_boxes, _nearest_serial)
#: the search kernel a check uses, for the warm-up to call on a tree it makes by hand
search_kernel = _nearest_serial
