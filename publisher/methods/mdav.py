"""MDAV (Domingo-Ferrer & Torra): the partition of records into groups of k to 2k-1.

While at least 3k records are left: r is the record farthest from their
centroid, s the one farthest from r; r with its k-1 nearest form a group, then
s with its k-1 nearest. With 2k to 3k-1 left, one more group around the record
farthest from the centroid, and the rest as the last group; with fewer than 2k,
the rest is one group.

The records left form a list (their *slots*); a group leaves it by moving the
list's tail into each of its slots, highest slot first. Ties are broken by
slot: the farthest record is the lowest slot among the equally far, and the
k-1 nearest are the first k-1 of a stable sort by distance. The centroid is a
running sum, from which each group's records are subtracted as they leave.

:func:`mdav_groups` answers "farthest" and "k-1 nearest" with a KD-tree that
records are deleted from (:mod:`publisher.methods.point_index`), about
O(n log n) in all. :func:`mdav_groups_exhaustive` scans every record left for
each question, O(n^2 / k); it is kept as the plain reference the tests
compare the indexed search against, and the two give the same partition.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from publisher.methods import point_index

__all__ = ["KERNELS", "mdav_groups", "mdav_groups_exhaustive"]


#: how many records the ranking by distance from the centroid holds at first (doubled when short)
RANKED = 4096


@nb.njit(cache=True)
def _scan_far(z, active, count, point):
    """Slot of the record farthest from ``point``: the first of the equally far."""
    best = -1.0
    arg = 0
    for t in range(count):
        d = point_index.sq_dist(z, active[t], point)
        if d > best:
            best = d
            arg = t
    return arg


@nb.njit(cache=True)
def _scan_group(z, active, count, seed_slot, k):
    """Slots of the record at ``seed_slot`` and of its k-1 nearest, by a stable sort."""
    centre = z[active[seed_slot]].copy()
    dist = np.empty(count)
    for t in range(count):
        dist[t] = point_index.sq_dist(z, active[t], centre)
    dist[seed_slot] = -1.0  # the seed record itself comes first
    return np.argsort(dist, kind="mergesort")[:k]


@nb.njit(cache=True)
def _far_from_centroid(z, tree, active, slot, count, total, ranking, ref, meta, indexed):
    """The record farthest from the centroid, and the ranking to use next time.

    The indexed search scans a ranking by distance from a past centroid
    ``ref``; ``meta`` holds its head, the records scanned since it was made
    and how many records it holds. Once those scanned outnumber four times
    the records left, the ranking is made again from the present centroid,
    so its cost is paid for by scans; when it is too short to answer, it is
    made again twice as long. The tree's reach is measured from the same
    centroid (:func:`publisher.methods.point_index.recentre`).
    """
    c = total / count
    if not indexed:
        return active[_scan_far(z, active, count, c)], ranking, ref
    drift = 0.0
    for j in range(c.size):
        drift += (c[j] - ref[j]) ** 2
    r, meta[0], scanned = point_index.farthest_ranked(z, ranking, meta[0], tree[7], slot, c, np.sqrt(drift))
    meta[1] += scanned
    while r < 0 or meta[1] > 4 * count:
        if r < 0:  # the ranking was too short: a longer one
            meta[2] *= 2
        ranking = point_index.ranked(z, active, count, c, meta[2])
        point_index.recentre(tree, c)
        ref = c
        meta[0] = 0
        meta[1] = 0
        if r < 0:
            r, meta[0], meta[1] = point_index.farthest_ranked(z, ranking, 0, tree[7], slot, c, 0.0)
    return r, ranking, ref


@nb.njit(cache=True)
def _far(z, tree, active, slot, count, point, indexed):
    """The record farthest from ``point``."""
    if indexed:
        return point_index.farthest(z, tree, point, slot)
    return active[_scan_far(z, active, count, point)]


@nb.njit(cache=True)
def _group_slots(z, tree, active, slot, count, seed, k, indexed):
    """Slots of ``seed`` and of its k-1 nearest records."""
    if not indexed:
        return _scan_group(z, active, count, slot[seed], k)
    chosen = np.empty(k, np.int64)
    chosen[0] = slot[seed]
    near = point_index.nearest(z, tree, z[seed].copy(), k - 1, seed, slot)
    for i in range(k - 1):
        chosen[i + 1] = slot[near[i]]
    return chosen


@nb.njit(cache=True)
def _take(z, tree, active, slot, count, seed, k, group, g, total, indexed):
    """Form group g around ``seed``; its records leave the list. Returns the new count."""
    chosen = np.sort(_group_slots(z, tree, active, slot, count, seed, k, indexed))[::-1]
    for t in chosen:
        r = active[t]
        group[r] = g
        for j in range(z.shape[1]):
            total[j] -= z[r, j]
        if indexed:
            point_index.delete(z, tree, r)
        count -= 1
        active[t] = active[count]
        slot[active[t]] = t
    return count


@nb.njit(cache=True)
def _mdav(z, k, indexed, ranked):
    n = z.shape[0]
    tree = point_index.build(z if indexed else z[:1])
    group = np.full(n, -1, np.int64)
    active = np.arange(n)
    slot = np.arange(n)
    total = np.zeros(z.shape[1])
    for r in range(n):
        for j in range(z.shape[1]):
            total[j] += z[r, j]
    count = n
    ref = total / count
    meta = np.array([0, 0, ranked])
    ranking = point_index.ranked(z, active, count if indexed else 0, ref, meta[2])
    g = 0
    while count >= 3 * k:
        r, ranking, ref = _far_from_centroid(z, tree, active, slot, count, total, ranking, ref, meta, indexed)
        s = _far(z, tree, active, slot, count, z[r].copy(), indexed)
        count = _take(z, tree, active, slot, count, r, k, group, g, total, indexed)
        g += 1
        if group[s] >= 0:  # s fell into r's group (only with many equal records)
            s = _far(z, tree, active, slot, count, z[r].copy(), indexed)
        count = _take(z, tree, active, slot, count, s, k, group, g, total, indexed)
        g += 1
    if count >= 2 * k:
        r, ranking, ref = _far_from_centroid(z, tree, active, slot, count, total, ranking, ref, meta, indexed)
        count = _take(z, tree, active, slot, count, r, k, group, g, total, indexed)
        g += 1
    for t in range(count):
        group[active[t]] = g
    return group


#: the compiled kernels MDAV calls (what a fresh install compiles on its first run)
KERNELS = (_mdav,)


def mdav_groups(z: np.ndarray, k: int, ranked: int = RANKED) -> np.ndarray:
    """Group label of each row of ``z`` (standardized attributes), found with the KD-tree.

    ``ranked`` is how many records the ranking by distance from the centroid
    holds at first; it changes the work, never the groups.
    """
    return _mdav(np.ascontiguousarray(z, dtype=np.float64), int(k), True, max(int(ranked), 1))


def mdav_groups_exhaustive(z: np.ndarray, k: int) -> np.ndarray:
    """The same labels as :func:`mdav_groups`, every question answered by a scan of all records left."""
    return _mdav(np.ascontiguousarray(z, dtype=np.float64), int(k), False, 1)
