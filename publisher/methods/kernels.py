"""Compiled loops of the numeric methods: rank swapping and MDAV.

Random draws are made by the caller with its numpy Generator and passed in, so
that a seed decides every result whatever numba does.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["rank_swap_partners", "mdav_groups"]


@nb.njit(cache=True)
def _bit_add(tree, i, delta):
    i += 1
    while i < tree.size:
        tree[i] += delta
        i += i & -i


@nb.njit(cache=True)
def _bit_prefix(tree, i):
    """Number of unswapped positions among 0..i."""
    s = 0
    i += 1
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s


@nb.njit(cache=True)
def _bit_kth(tree, k, log):
    """0-based position of the k-th (1-based) unswapped position."""
    pos = 0
    step = log
    while step > 0:
        nxt = pos + step
        if nxt < tree.size and tree[nxt] < k:
            pos = nxt
            k -= tree[nxt]
        step >>= 1
    return pos


@nb.njit(cache=True)
def rank_swap_partners(n, window, uniforms):
    """Moore's rank swapping on sorted positions 0..n-1.

    In increasing order, each position i not yet swapped picks its partner
    uniformly among the positions in ``(i, i + window]`` not yet swapped, using
    ``uniforms[i]``; with none left it keeps its value. A Fenwick tree over
    the unswapped positions finds the partner in O(log n). Returns
    ``partner`` with ``partner[partner[i]] == i`` and ``|partner[i] - i| <= window``.
    """
    tree = np.zeros(n + 1, np.int64)
    for i in range(n):
        _bit_add(tree, i, 1)
    log = 1
    while log * 2 <= n:
        log *= 2
    partner = np.arange(n)
    done = np.zeros(n, np.bool_)
    for i in range(n):
        if done[i]:
            continue
        done[i] = True
        _bit_add(tree, i, -1)
        hi = min(n - 1, i + window)
        below = _bit_prefix(tree, i)
        free = _bit_prefix(tree, hi) - below
        if free == 0:
            continue
        k = min(free - 1, int(uniforms[i] * free))
        j = _bit_kth(tree, below + k + 1, log)
        done[j] = True
        _bit_add(tree, j, -1)
        partner[i] = j
        partner[j] = i
    return partner


@nb.njit(cache=True, inline="always")
def _sq_dist(z, r, point):
    d = 0.0
    for j in range(z.shape[1]):
        e = z[r, j] - point[j]
        d += e * e
    return d


@nb.njit(cache=True)
def _far(z, active, count, point):
    best = -1.0
    arg = 0
    for t in range(count):
        d = _sq_dist(z, active[t], point)
        if d > best:
            best = d
            arg = t
    return arg


@nb.njit(cache=True)
def _centroid(z, active, count):
    c = np.zeros(z.shape[1])
    for t in range(count):
        for j in range(z.shape[1]):
            c[j] += z[active[t], j]
    return c / count


@nb.njit(cache=True)
def _take_group(z, active, count, seed_slot, k, group, g):
    """Put the record at ``active[seed_slot]`` and its k-1 nearest active records in group g.

    Removes them from ``active`` (swap with the tail) and returns the new count.
    A stable sort breaks ties in distance by slot, so the grouping is deterministic.
    """
    centre = z[active[seed_slot]].copy()
    dist = np.empty(count)
    for t in range(count):
        dist[t] = _sq_dist(z, active[t], centre)
    dist[seed_slot] = -1.0  # the seed record itself comes first
    order = np.argsort(dist, kind="mergesort")[:k]
    for t in order:
        group[active[t]] = g
    # remove the chosen slots, highest first, by swapping with the tail
    chosen = np.sort(order)[::-1]
    for t in chosen:
        count -= 1
        active[t] = active[count]
    return count


@nb.njit(cache=True)
def mdav_groups(z, k):
    """MDAV (Domingo-Ferrer & Torra): group labels of records, every group of k to 2k-1.

    ``z`` holds the standardized attributes. While at least 3k records are
    left: r is the record farthest from their centroid, s the one farthest
    from r; r with its k-1 nearest form a group, then s with its k-1 nearest.
    With 2k to 3k-1 left, one more group around the farthest record and the
    rest as the last group; with fewer than 2k, the rest is one group.
    """
    n = z.shape[0]
    group = np.full(n, -1, np.int64)
    active = np.arange(n)
    count = n
    g = 0
    while count >= 3 * k:
        c = _centroid(z, active, count)
        r = _far(z, active, count, c)
        rec_r = active[r]
        s_rec = active[_far(z, active, count, z[rec_r].copy())]
        count = _take_group(z, active, count, r, k, group, g)
        g += 1
        slot = -1
        for t in range(count):
            if active[t] == s_rec:
                slot = t
        if slot < 0:  # s fell into r's group (only with many equal records)
            slot = _far(z, active, count, z[rec_r].copy())
        count = _take_group(z, active, count, slot, k, group, g)
        g += 1
    if count >= 2 * k:
        c = _centroid(z, active, count)
        r = _far(z, active, count, c)
        count = _take_group(z, active, count, r, k, group, g)
        g += 1
    for t in range(count):
        group[active[t]] = g
    return group
