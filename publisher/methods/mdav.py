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
O(n log n) in all. On two cores each step's two questions about r run side
by side: one thread searches one half of the tree for the farthest from r,
the other the other half and then r's k-1 nearest, each pruning with the
farther record the other has found so far (1e6 census records: about 26 s to
23 s). :func:`mdav_groups_exhaustive` scans every record left for each
question, O(n^2 / k), on one thread; it is kept as the plain reference the
tests compare the indexed search against, and the two give the same
partition.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from publisher.methods import point_index
from verifier.compiling import compiling_pays
from verifier.core.side_by_side import kernels_share_threads

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
def _question(z, tree, active, slot, count, r, point, k, indexed, w, shared, near):
    """Thread ``w``'s share of the two questions about ``r`` (at ``point``): which record is farthest from it, and
    which k-1 are nearest. With the index each thread searches one of the root's subtrees for the farthest, and
    thread 1 then finds r's group (``near``, slots); without it, or with a tree of one leaf, thread 0 answers the
    farthest alone. Returns the thread's farthest: squared distance, slot and record (-1, a slot past every slot
    and -1 where it found none)."""
    halves = indexed and tree[8] > 0
    found = (-1.0, np.iinfo(np.int64).max, -1)
    if halves:
        found = point_index.farthest_under(z, tree, point, slot, 1 + w, shared, w)
    elif w == 0:
        rec = _far(z, tree, active, slot, count, point, indexed)
        found = (0.0, slot[rec], rec)
    if w == 1:
        near[:] = _group_slots(z, tree, active, slot, count, r, k, indexed)
    return found


@nb.njit(cache=True)
def _take(z, tree, active, slot, count, seed, k, group, g, total, indexed):
    """Form group g around ``seed``; its records leave the list. Returns the new count."""
    return _leave(z, tree, active, slot, count, _group_slots(z, tree, active, slot, count, seed, k, indexed), group,
                  g, total, indexed)


@nb.njit(cache=True)
def _leave(z, tree, active, slot, count, slots, group, g, total, indexed):
    """Form group g of the records at ``slots``; they leave the list. Returns the new count."""
    chosen = np.sort(slots)[::-1]
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


@nb.njit(cache=True, parallel=True)
def _mdav(z, k, indexed, ranked, two):
    n = z.shape[0]
    tree = point_index.build(z if indexed else z[:1])
    group = np.full(n, -1, np.int64)
    active = np.arange(n)
    slot = np.arange(n)
    total = np.zeros(z.shape[1])
    for i in range(n):
        for j in range(z.shape[1]):
            total[j] += z[i, j]
    count = n
    ref = total / count
    meta = np.array([0, 0, ranked])
    ranking = point_index.ranked(z, active, count if indexed else 0, ref, meta[2])
    g = 0
    shared = np.empty(2)
    far_d, far_slot, far_r = np.empty(2), np.empty(2, np.int64), np.empty(2, np.int64)  # each thread's farthest
    near = np.empty(k, np.int64)
    while count >= 3 * k:
        r, ranking, ref = _far_from_centroid(z, tree, active, slot, count, total, ranking, ref, meta, indexed)
        shared[:] = -1.0
        point = z[r].copy()
        if two:
            for w in nb.prange(2):  # the two questions about r on two cores (each answer written where numba sees it)
                far_d[w], far_slot[w], far_r[w] = _question(z, tree, active, slot, count, r, point, k, indexed, w,
                                                            shared, near)
        else:  # one thread asks both, the same way
            for w in range(2):
                far_d[w], far_slot[w], far_r[w] = _question(z, tree, active, slot, count, r, point, k, indexed, w,
                                                            shared, near)
        h = 1 if far_d[1] > far_d[0] or (far_d[1] == far_d[0] and far_slot[1] < far_slot[0]) else 0
        s = far_r[h]
        count = _leave(z, tree, active, slot, count, near, group, g, total, indexed)
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


def mdav_groups(z: np.ndarray, k: int, ranked: int = RANKED, two_cores: bool | None = None) -> np.ndarray:
    """Group label of each row of ``z`` (standardized attributes), found with the KD-tree.

    ``ranked`` is how many records the ranking by distance from the centroid
    holds at first; ``two_cores``, whether each step's two questions run on
    two threads. By default they do from :data:`~verifier.compiling.PLAIN_BELOW`
    records, where numba's threading layer lets two threads run kernels at once
    (:func:`~verifier.core.side_by_side.kernels_share_threads`; its work queue
    took 64 s where one thread takes 26 s at 1e6). Neither changes the groups.
    """
    two = compiling_pays(len(z)) and kernels_share_threads() if two_cores is None else bool(two_cores)
    return _mdav(np.ascontiguousarray(z, dtype=np.float64), int(k), True, max(int(ranked), 1), two)


def mdav_groups_exhaustive(z: np.ndarray, k: int) -> np.ndarray:
    """The same labels as :func:`mdav_groups`, every question answered by a scan of all records left, on one
    thread."""
    return _mdav(np.ascontiguousarray(z, dtype=np.float64), int(k), False, 1, False)
