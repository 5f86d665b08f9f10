"""A KD-tree over points that records can be deleted from, for MDAV.

MDAV repeatedly asks two questions of the records not yet grouped: which one
is farthest from a point, and which k-1 are nearest to a record. Answering
them by scanning every record costs O(n) each, O(n^2 / k) in all. This index
answers both by branch and bound over a median-split KD-tree whose boxes
shrink as records are deleted:

- a node's box is the bounding box of its *live* records, recomputed at the
  leaf and merged up the path on every deletion (O(leaf size + depth));
- the nearest search prunes a node whose box is farther than the k-th best
  so far; the farthest search prunes a node whose farthest corner is nearer
  than the best so far;
- both break ties exactly as the exhaustive scan does, by the record's slot
  (its position in the caller's list of live records), so a node at exactly
  the bound is still visited.

Squared distances are summed over the axes in the same order as the scan, and
floating-point subtraction is monotone, so a box's bound never crosses the
distance of a record inside it: pruning is exact and the answers are the
scan's, bit for bit. The tree is a tuple of arrays (see :func:`build`) that
the functions below take apart; everything is compiled with numba.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from verifier.core.kdtree import heap_layout

__all__ = ["build", "delete", "nearest", "farthest", "ranked", "farthest_ranked", "sq_dist"]

LEAF_SIZE = 16


@nb.njit(cache=True)
def _leaf_box(z, idx, start, end, dead, lo, hi, node):
    """Box of the live records of a leaf; returns their number."""
    d = z.shape[1]
    for j in range(d):
        lo[node, j] = np.inf
        hi[node, j] = -np.inf
    live = 0
    for t in range(start[node], end[node]):
        r = idx[t]
        if dead[r]:
            continue
        live += 1
        for j in range(d):
            v = z[r, j]
            if v < lo[node, j]:
                lo[node, j] = v
            if v > hi[node, j]:
                hi[node, j] = v
    return live


@nb.njit(cache=True)
def _merge_box(lo, hi, alive, node):
    a = 2 * node + 1
    for j in range(lo.shape[1]):
        lo_j = np.inf
        hi_j = -np.inf
        for c in (a, a + 1):
            if alive[c] > 0:
                lo_j = min(lo_j, lo[c, j])
                hi_j = max(hi_j, hi[c, j])
        lo[node, j] = lo_j
        hi[node, j] = hi_j


@nb.njit(cache=True)
def build(z, leaf_size=LEAF_SIZE):
    """Median-split KD-tree over the rows of ``z``, heap-ordered nodes.

    Returns ``(idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf)``:
    the tree order of the records, each node's slice of it, each node's box of
    live records and their number, each record's leaf and whether it is
    deleted, and the first leaf's node number.
    """
    n, d = z.shape
    idx, start, end, depth = heap_layout(n, leaf_size)
    n_nodes = start.size
    first_leaf = (1 << depth) - 1
    for node in range(first_leaf):
        s, e = start[node], end[node]
        axis, spread = 0, -1.0
        for j in range(d):
            lo_j, hi_j = np.inf, -np.inf
            for t in range(s, e):
                v = z[idx[t], j]
                lo_j, hi_j = min(lo_j, v), max(hi_j, v)
            if hi_j - lo_j > spread:
                axis, spread = j, hi_j - lo_j
        seg = idx[s:e].copy()
        keys = np.empty(e - s)
        for t in range(e - s):
            keys[t] = z[seg[t], axis]
        order = np.argsort(keys, kind="mergesort")
        for t in range(e - s):
            idx[s + t] = seg[order[t]]
        mid = (s + e) // 2
        start[2 * node + 1], end[2 * node + 1] = s, mid
        start[2 * node + 2], end[2 * node + 2] = mid, e
    lo = np.empty((n_nodes, d))
    hi = np.empty((n_nodes, d))
    alive = np.zeros(n_nodes, np.int64)
    leaf_of = np.empty(n, np.int64)
    dead = np.zeros(n, np.bool_)
    for node in range(first_leaf, n_nodes):
        alive[node] = _leaf_box(z, idx, start, end, dead, lo, hi, node)
        for t in range(start[node], end[node]):
            leaf_of[idx[t]] = node
    for node in range(first_leaf - 1, -1, -1):
        alive[node] = alive[2 * node + 1] + alive[2 * node + 2]
        _merge_box(lo, hi, alive, node)
    return idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf


@nb.njit(cache=True)
def delete(z, tree, r):
    """Delete record ``r``: its leaf's box shrinks, and every box above it."""
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf = tree
    dead[r] = True
    node = leaf_of[r]
    alive[node] = _leaf_box(z, idx, start, end, dead, lo, hi, node)
    while node > 0:
        node = (node - 1) // 2
        alive[node] -= 1
        _merge_box(lo, hi, alive, node)


@nb.njit(cache=True, inline="always")
def sq_dist(z, r, point):
    """Squared distance from record r to ``point``, summed over the axes in order."""
    d = 0.0
    for j in range(z.shape[1]):
        e = z[r, j] - point[j]
        d += e * e
    return d


@nb.njit(cache=True, inline="always")
def _box_near(lo, hi, node, point):
    """Squared distance from ``point`` to the box: no live record is nearer."""
    d = 0.0
    for j in range(lo.shape[1]):
        if point[j] < lo[node, j]:
            e = lo[node, j] - point[j]
        elif point[j] > hi[node, j]:
            e = hi[node, j] - point[j]
        else:
            e = 0.0
        d += e * e
    return d


@nb.njit(cache=True, inline="always")
def _box_far(lo, hi, node, point):
    """Squared distance from ``point`` to the box's farthest corner: no live record is farther."""
    d = 0.0
    for j in range(lo.shape[1]):
        a = lo[node, j] - point[j]
        b = hi[node, j] - point[j]
        e = max(abs(a), abs(b))
        d += e * e
    return d


@nb.njit(cache=True)
def nearest(z, tree, point, m, exclude, slot):
    """The ``m`` live records nearest ``point`` other than ``exclude``.

    Ordered by (squared distance, slot): of records at equal distance the one
    with the lower ``slot`` comes first, as in a stable sort of the live list.
    """
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf = tree
    best_d = np.full(m, np.inf)
    best_s = np.full(m, np.iinfo(np.int64).max)
    best_r = np.full(m, -1, np.int64)
    if m == 0:
        return best_r
    stack = np.empty(128, np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if alive[node] == 0 or _box_near(lo, hi, node, point) > best_d[m - 1]:
            continue
        if node >= first_leaf:
            for t in range(start[node], end[node]):
                r = idx[t]
                if dead[r] or r == exclude:
                    continue
                dr = sq_dist(z, r, point)
                sr = slot[r]
                if dr > best_d[m - 1] or (dr == best_d[m - 1] and sr > best_s[m - 1]):
                    continue
                i = m - 1
                while i > 0 and (best_d[i - 1] > dr or (best_d[i - 1] == dr and best_s[i - 1] > sr)):
                    best_d[i], best_s[i], best_r[i] = best_d[i - 1], best_s[i - 1], best_r[i - 1]
                    i -= 1
                best_d[i], best_s[i], best_r[i] = dr, sr, r
            continue
        a = 2 * node + 1
        if _box_near(lo, hi, a, point) <= _box_near(lo, hi, a + 1, point):
            stack[top], stack[top + 1] = a + 1, a  # the nearer child is searched first
        else:
            stack[top], stack[top + 1] = a, a + 1
        top += 2
    return best_r


@nb.njit(cache=True)
def farthest(z, tree, point, slot):
    """The live record farthest from ``point``; of equally far ones, the lowest slot."""
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf = tree
    best_d = -1.0
    best_s = np.iinfo(np.int64).max
    best_r = -1
    stack = np.empty(128, np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if alive[node] == 0 or _box_far(lo, hi, node, point) < best_d:
            continue
        if node >= first_leaf:
            for t in range(start[node], end[node]):
                r = idx[t]
                if dead[r]:
                    continue
                dr = sq_dist(z, r, point)
                if dr > best_d or (dr == best_d and slot[r] < best_s):
                    best_d, best_s, best_r = dr, slot[r], r
            continue
        a = 2 * node + 1
        if _box_far(lo, hi, a, point) >= _box_far(lo, hi, a + 1, point):
            stack[top], stack[top + 1] = a + 1, a  # the farther child is searched first
        else:
            stack[top], stack[top + 1] = a, a + 1
        top += 2
    return best_r


@nb.njit(cache=True)
def ranked(z, active, count, point):
    """The records ``active[:count]`` by decreasing distance from ``point``, and those distances.

    With :func:`farthest_ranked` this answers "farthest from a point that moves
    little" (MDAV's centroid) without the tree, whose corner bounds are loose
    when many records are about equally far, as on the rim of a ball.
    """
    dist = np.empty(count)
    for t in range(count):
        dist[t] = np.sqrt(sq_dist(z, active[t], point))
    order = np.argsort(-dist)
    return active[:count][order].copy(), dist[order].copy()


@nb.njit(cache=True)
def farthest_ranked(z, ranking, head, dead, slot, point, drift):
    """The live record farthest from ``point``, of equally far ones the lowest slot.

    ``ranking`` is :func:`ranked` of a reference point at distance ``drift``
    from ``point``; a record at distance a from the reference is at most
    a + drift from ``point`` (the triangle inequality, widened by 1e-9 for
    rounding), so the scan down the ranking stops at the first record whose
    bound is below the best distance found. Returns the record, the new head
    (deleted records at the top are passed for good) and how many were scanned.
    """
    order, dist = ranking
    best_d = -1.0
    best_s = np.iinfo(np.int64).max
    best_r = -1
    t = head
    while t < order.size and dead[order[t]]:
        t += 1
    head = t
    while t < order.size:
        bound = dist[t] + drift
        if bound * bound * (1.0 + 1e-9) < best_d:
            break
        r = order[t]
        t += 1
        if dead[r]:
            continue
        dr = sq_dist(z, r, point)
        if dr > best_d or (dr == best_d and slot[r] < best_s):
            best_d, best_s, best_r = dr, slot[r], r
    return best_r, head, t - head
