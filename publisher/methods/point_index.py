"""A KD-tree over points that records can be deleted from, for MDAV.

MDAV repeatedly asks two questions of the records not yet grouped: which one
is farthest from a point, and which k-1 are nearest to a record. Answering
them by scanning every record costs O(n) each, O(n^2 / k) in all. This index
answers both by branch and bound over a median-split KD-tree whose boxes
shrink as records are deleted:

- a node's box is the bounding box of its *live* records, and its *reach*
  the largest squared distance of those records from a reference point near
  the centroid; both are recomputed at the leaf and merged up the path on
  every deletion (O(leaf size + depth));
- the nearest search prunes a node whose box is farther than the k-th best
  so far; the farthest search prunes a node whose bound (:func:`_far_bound`:
  the lesser of the box's farthest corner and a bound from the reach) is
  nearer than the best so far. MDAV peels the table from the outside in, so
  the live records are a ball cut out of it whose boxes' corners stick out
  far beyond them; the reach is what keeps the search to a few hundred nodes;
- both break ties exactly as the exhaustive scan does, by the record's slot
  (its position in the caller's list of live records), so a node at exactly
  the bound is still visited.

Squared distances are summed over the axes in the same order as the scan, and
floating-point subtraction is monotone, so a box's bound never crosses the
distance of a record inside it; the reach's bound is widened for rounding
well beyond its error. Pruning is exact and the answers are the scan's, bit
for bit. The records' rows are copied in tree order, so a leaf is read from
one stretch of memory. The tree is a tuple of arrays (see :func:`build`) that
the functions below take apart; everything is compiled with numba.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from verifier.core.kdtree import heap_layout

__all__ = ["build", "delete", "nearest", "farthest", "farthest_under", "ranked", "farthest_ranked", "recentre",
           "sq_dist"]

LEAF_SIZE = 32


@nb.njit(cache=True)
def _leaf_box(zt, start, end, gone, lo, hi, node):
    """Box of the live records of a leaf; returns their number."""
    d = zt.shape[1]
    for j in range(d):
        lo[node, j] = np.inf
        hi[node, j] = -np.inf
    live = 0
    for t in range(start[node], end[node]):
        if gone[t]:
            continue
        live += 1
        for j in range(d):
            v = zt[t, j]
            if v < lo[node, j]:
                lo[node, j] = v
            if v > hi[node, j]:
                hi[node, j] = v
    return live


@nb.njit(cache=True)
def _leaf_reach(zt, start, end, gone, reach, ref, node):
    """Reach of a leaf: the largest squared distance of its live records from ``ref`` (-1 without any)."""
    reach[node] = -1.0
    for t in range(start[node], end[node]):
        if not gone[t]:
            reach[node] = max(reach[node], sq_dist(zt, t, ref))


@nb.njit(cache=True)
def _merge_reach(reach, alive, node):
    a = 2 * node + 1
    reach[node] = max(reach[a] if alive[a] > 0 else -1.0, reach[a + 1] if alive[a + 1] > 0 else -1.0)


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

    Returns ``(idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf, zt,
    place, gone, reach, ref)``: the tree order of the records, each node's
    slice of it, each node's box of live records and their number, each
    record's leaf and whether it is deleted, the first leaf's node number, the
    records' rows in tree order (a leaf's records lie together in memory),
    each record's place in that order, whether the record at a place is
    deleted, and each node's reach: the largest squared distance of its live
    records from the point ``ref`` (the mean of ``z``; :func:`recentre` moves it).
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
    zt = np.empty((n, d))
    place = np.empty(n, np.int64)
    for t in range(n):
        zt[t] = z[idx[t]]
        place[idx[t]] = t
    lo = np.empty((n_nodes, d))
    hi = np.empty((n_nodes, d))
    alive = np.zeros(n_nodes, np.int64)
    leaf_of = np.empty(n, np.int64)
    dead = np.zeros(n, np.bool_)
    gone = np.zeros(n, np.bool_)
    reach = np.empty(n_nodes)
    ref = np.zeros(d)
    for t in range(n):
        for j in range(d):
            ref[j] += zt[t, j]
    ref /= max(n, 1)
    for node in range(first_leaf, n_nodes):
        alive[node] = _leaf_box(zt, start, end, gone, lo, hi, node)
        for t in range(start[node], end[node]):
            leaf_of[idx[t]] = node
    for node in range(first_leaf - 1, -1, -1):
        alive[node] = alive[2 * node + 1] + alive[2 * node + 2]
        _merge_box(lo, hi, alive, node)
    tree = idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf, zt, place, gone, reach, ref
    recentre(tree, ref.copy())
    return tree


@nb.njit(cache=True)
def recentre(tree, point):
    """Measure every node's reach from ``point`` instead: O(n), worth it when queries come near it."""
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf, zt, place, gone, reach, ref = tree
    ref[:] = point
    for node in range(first_leaf, start.size):
        _leaf_reach(zt, start, end, gone, reach, ref, node)
    for node in range(first_leaf - 1, -1, -1):
        _merge_reach(reach, alive, node)


@nb.njit(cache=True)
def delete(z, tree, r):
    """Delete record ``r``: its leaf's box shrinks, and every box above it."""
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf, zt, place, gone, reach, ref = tree
    dead[r] = True
    gone[place[r]] = True
    node = leaf_of[r]
    alive[node] = _leaf_box(zt, start, end, gone, lo, hi, node)
    _leaf_reach(zt, start, end, gone, reach, ref, node)
    while node > 0:
        node = (node - 1) // 2
        alive[node] -= 1
        _merge_box(lo, hi, alive, node)
        _merge_reach(reach, alive, node)


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


@nb.njit(cache=True, inline="always")
def _far_bound(lo, hi, reach, ref, off, node, point):
    """No live record of the node is farther from ``point`` than this.

    Besides the box's farthest corner: with c = ``ref``, |x - p|^2 = |x - c|^2
    + |c - p|^2 + 2 (x - c).(c - p), where the first term is at most the
    node's reach and the last at most its largest value over the box. Where
    the live records are a ball cut out of the table, as MDAV leaves them,
    this is far tighter than the corner. It is widened by 1e-9 of the terms'
    sizes for rounding, so it never falls below a distance as computed.
    """
    lin = 0.0
    size = 0.0
    for j in range(lo.shape[1]):
        u = ref[j] - point[j]
        a = (lo[node, j] - ref[j]) * u
        b = (hi[node, j] - ref[j]) * u
        lin += max(a, b)
        size += max(abs(a), abs(b))
    lifted = reach[node] + off + 2.0 * lin + 1e-9 * (reach[node] + off + 2.0 * size)
    return min(_box_far(lo, hi, node, point), lifted)


@nb.njit(cache=True)
def nearest(z, tree, point, m, exclude, slot):
    """The ``m`` live records nearest ``point`` other than ``exclude``.

    Ordered by (squared distance, slot): of records at equal distance the one
    with the lower ``slot`` comes first, as in a stable sort of the live list.
    A node's bound is computed once, when it is put on the stack.
    """
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf, zt, place, gone, reach, ref = tree
    best_d = np.full(m, np.inf)
    best_s = np.full(m, np.iinfo(np.int64).max)
    best_r = np.full(m, -1, np.int64)
    if m == 0 or alive[0] == 0:
        return best_r
    stack = np.empty(128, np.int64)
    bound = np.empty(128)
    stack[0] = 0
    bound[0] = _box_near(lo, hi, 0, point)
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if bound[top] > best_d[m - 1]:
            continue
        if node >= first_leaf:
            for t in range(start[node], end[node]):
                if gone[t]:
                    continue
                dr = sq_dist(zt, t, point)
                if dr > best_d[m - 1]:
                    continue
                r = idx[t]
                sr = slot[r]
                if r == exclude or (dr == best_d[m - 1] and sr > best_s[m - 1]):
                    continue
                i = m - 1
                while i > 0 and (best_d[i - 1] > dr or (best_d[i - 1] == dr and best_s[i - 1] > sr)):
                    best_d[i], best_s[i], best_r[i] = best_d[i - 1], best_s[i - 1], best_r[i - 1]
                    i -= 1
                best_d[i], best_s[i], best_r[i] = dr, sr, r
            continue
        a, b = 2 * node + 1, 2 * node + 2
        da = _box_near(lo, hi, a, point) if alive[a] > 0 else np.inf
        db = _box_near(lo, hi, b, point) if alive[b] > 0 else np.inf
        if da > db:  # the nearer child goes on top, to be searched first
            a, b, da, db = b, a, db, da
        if db <= best_d[m - 1]:
            stack[top], bound[top] = b, db
            top += 1
        if da <= best_d[m - 1]:
            stack[top], bound[top] = a, da
            top += 1
    return best_r



@nb.njit(cache=True)
def farthest(z, tree, point, slot):
    """The live record farthest from ``point``; of equally far ones, the lowest slot (-1 with none left)."""
    return farthest_under(z, tree, point, slot, 0, np.full(2, -1.0), 0)[2]


@nb.njit(cache=True)
def farthest_under(z, tree, point, slot, root, shared, mine):
    """``(squared distance, slot, record)`` of the live record under node ``root`` farthest from ``point``; of
    equally far ones, the lowest slot (``(-1.0, max int, -1)`` with none there).

    A node's bound is :func:`_far_bound`, computed once, when the node is put
    on the stack. Two threads may search the root's two subtrees at once
    (:mod:`publisher.methods.mdav`): each writes its best distance so far to
    ``shared[mine]`` and prunes a node nearer than the other's,
    ``shared[1 - mine]``, a distance some live record reaches, so that node
    cannot hold the farthest. A node at exactly that distance is still
    searched, so the ties the caller breaks by slot are all found. Alone, the
    other's entry stays -1.
    """
    idx, start, end, lo, hi, alive, leaf_of, dead, first_leaf, zt, place, gone, reach, ref = tree
    off = 0.0  # |ref - point|^2
    for j in range(ref.size):
        off += (ref[j] - point[j]) ** 2
    best_d = -1.0
    best_s = np.iinfo(np.int64).max
    best_r = -1
    if alive[root] == 0:
        return best_d, best_s, best_r
    stack = np.empty(128, np.int64)
    bound = np.empty(128)
    stack[0] = root
    bound[0] = _far_bound(lo, hi, reach, ref, off, root, point)
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        floor = max(best_d, shared[1 - mine])
        if bound[top] < floor:
            continue
        if node >= first_leaf:
            for t in range(start[node], end[node]):
                if gone[t]:
                    continue
                dr = sq_dist(zt, t, point)
                if dr > best_d or (dr == best_d and slot[idx[t]] < best_s):
                    best_d, best_s, best_r = dr, slot[idx[t]], idx[t]
            shared[mine] = best_d
            continue
        a, b = 2 * node + 1, 2 * node + 2
        fa = _far_bound(lo, hi, reach, ref, off, a, point) if alive[a] > 0 else -np.inf
        fb = _far_bound(lo, hi, reach, ref, off, b, point) if alive[b] > 0 else -np.inf
        if fa < fb:  # the farther child goes on top, to be searched first
            a, b, fa, fb = b, a, fb, fa
        if fb >= floor:
            stack[top], bound[top] = b, fb
            top += 1
        if fa >= floor:
            stack[top], bound[top] = a, fa
            top += 1
    return best_d, best_s, best_r


@nb.njit(cache=True)
def ranked(z, active, count, point, size):
    """The ``size`` records of ``active[:count]`` farthest from ``point``, by decreasing distance.

    Returns them, their distances, and the floor: every record left out is
    nearer than it (-1 when none is left out). With :func:`farthest_ranked`
    this answers "farthest from a point that moves little" (MDAV's centroid)
    without the tree, whose bounds are loose when many records are about
    equally far, as on the rim of a ball. Only the head of the ranking is
    sorted, so making it again costs O(count).
    """
    dist = np.empty(count)
    for t in range(count):
        dist[t] = np.sqrt(sq_dist(z, active[t], point))
    floor = -1.0
    keep = np.arange(count)
    if size < count:
        floor = np.partition(dist, count - size)[count - size]
        keep = np.flatnonzero(dist >= floor)
        floor = np.nextafter(floor, -np.inf)  # those left out are below the kept, maybe equal to this
    head = dist[keep]
    order = np.argsort(-head)
    return active[keep[order]], head[order], floor


@nb.njit(cache=True)
def farthest_ranked(z, ranking, head, dead, slot, point, drift):
    """The live record farthest from ``point``, of equally far ones the lowest slot.

    ``ranking`` is :func:`ranked` of a reference point at distance ``drift``
    from ``point``; a record at distance a from the reference is at most
    a + drift from ``point`` (the triangle inequality, widened by 1e-9 for
    rounding), so the scan down the ranking stops at the first record whose
    bound is below the best distance found. Returns the record, the new head
    (deleted records at the top are passed for good) and how many were scanned.
    The record is -1 when the records left out of the ranking might be
    farther: the ranking is to be made again, longer.
    """
    order, dist, floor = ranking
    best_d = -1.0
    best_s = np.iinfo(np.int64).max
    best_r = -1
    t = head
    while t < order.size and dead[order[t]]:
        t += 1
    head = t
    stopped = False
    while t < order.size:
        bound = dist[t] + drift
        if bound * bound * (1.0 + 1e-9) < best_d:
            stopped = True
            break
        r = order[t]
        t += 1
        if dead[r]:
            continue
        dr = sq_dist(z, r, point)
        if dr > best_d or (dr == best_d and slot[r] < best_s):
            best_d, best_s, best_r = dr, slot[r], r
    if not stopped and floor >= 0 and (floor + drift) ** 2 * (1.0 + 1e-9) >= best_d:
        best_r = -1
    return best_r, head, t - head
