"""MDAV through the deletable KD-tree equals MDAV by exhaustive scans (issue 15, item 3).

The index answers two questions, "farthest live record from a point" and "k-1
nearest live records to a record", with the scan's tie-breaking (the lowest
slot). Each is compared with a plain numpy scan while records are deleted, and
the whole partition with the exhaustive MDAV, on continuous tables and on
tables with many ties and many equal records.
"""

from __future__ import annotations

import numpy as np
import pytest

from publisher.methods import point_index
from publisher.methods.mdav import mdav_groups, mdav_groups_exhaustive


def _table(rng: np.random.Generator, n: int, d: int, kind: str) -> np.ndarray:
    if kind == "continuous":
        return rng.normal(size=(n, d))
    if kind == "ties":  # few distinct values per column: many equal records and equal distances
        return rng.integers(0, 3, size=(n, d)).astype(float)
    if kind == "far from zero":  # rounding: each distance is a small difference of large numbers
        return 1e5 + 1e-3 * rng.normal(size=(n, d))
    z = rng.normal(size=(n, d))  # one heavily tied column among continuous ones
    z[:, 0] = np.round(z[:, 0])
    return z


def _scan_far(z, live, slot, point):
    dist = ((z - point) ** 2).sum(axis=1)
    cand = [r for r in live if dist[r] == max(dist[live])]
    return min(cand, key=lambda r: slot[r])


def _scan_near(z, live, slot, point, m, exclude):
    dist = ((z - point) ** 2).sum(axis=1)
    others = [r for r in live if r != exclude]
    return sorted(others, key=lambda r: (dist[r], slot[r]))[:m]


def _halves(z, tree, point, slot, first):
    """The farthest from ``point`` as MDAV's two threads find it, the root's subtree ``1 + first`` searched
    wholly before the other, which prunes with its answer."""
    shared = np.full(2, -1.0)
    found = {}
    for w in (first, 1 - first):
        found[w] = point_index.farthest_under(z, tree, point, slot, 1 + w, shared, w)
    d, s, r = max(found.values(), key=lambda f: (f[0], -f[1]))
    return r


@pytest.mark.parametrize("kind", ["continuous", "ties", "one tied column", "far from zero"])
def test_index_answers_equal_the_scans_while_records_are_deleted(kind):
    rng = np.random.default_rng(7)
    for trial in range(6):
        n, d = int(rng.integers(40, 300)), int(rng.integers(1, 5))
        z = np.ascontiguousarray(_table(rng, n, d, kind))
        tree = point_index.build(z)
        slot = rng.permutation(n)  # any order of the live list
        live = list(range(n))
        while len(live) > 3:
            q = z[live[int(rng.integers(len(live)))]].copy()
            c = z[live].mean(axis=0)
            assert point_index.farthest(z, tree, c, slot) == _scan_far(z, live, slot, c)
            assert point_index.farthest(z, tree, q, slot) == _scan_far(z, live, slot, q)
            for first in (0, 1):  # the two threads' halves, either one done before the other starts
                assert _halves(z, tree, q, slot, first) == _scan_far(z, live, slot, q)
            seed = live[0]
            near = point_index.nearest(z, tree, z[seed].copy(), 3, seed, slot)
            assert list(near) == _scan_near(z, live, slot, z[seed], 3, seed)
            for r in rng.choice(live, size=min(len(live) - 3, int(rng.integers(1, 8))), replace=False):
                point_index.delete(z, tree, r)
                live.remove(r)
            if rng.random() < 0.2:  # the reach measured from another point: any point bounds as well
                point_index.recentre(tree, z[live].mean(axis=0) + rng.normal(scale=z.std() + 1e-9, size=d))


@pytest.mark.parametrize("size, kind", [(500, "ties"), (60, "continuous"), (60, "ties"), (1, "continuous")])
def test_the_ranking_by_a_past_centroid_finds_the_farthest_record(size, kind):
    """A ranking of all records always answers; a shorter one answers right or says it cannot."""
    rng = np.random.default_rng(3)
    z = np.ascontiguousarray(_table(rng, 500, 3, kind))
    slot = np.arange(500)
    dead = np.zeros(500, bool)
    ref = z.mean(axis=0)
    ranking = point_index.ranked(z, np.arange(500), 500, ref, size)
    order, dist, floor = ranking
    assert len(order) >= min(size, 500) and (floor < 0) == (size >= 500)
    assert np.all(dist[:-1] >= dist[1:]) and (floor < 0 or floor < dist[-1])
    left_out = np.setdiff1d(np.arange(500), order)
    assert np.all(np.sqrt(((z[left_out] - ref) ** 2).sum(axis=1)) <= floor)
    head, answered = 0, 0
    for step in range(100):
        point = ref + rng.normal(scale=0.05 * (step + 1), size=3)
        drift = float(np.sqrt(((point - ref) ** 2).sum()))
        live = np.flatnonzero(~dead)
        r, head, scanned = point_index.farthest_ranked(z, ranking, head, dead, slot, point, drift)
        if r >= 0:
            answered += 1
            assert r == _scan_far(z, list(live), slot, point)
        assert size < 500 or r >= 0
        assert 0 <= scanned <= len(order) - head  # dead records inside the window count too
        dead[rng.choice(live, size=3, replace=False)] = True
    assert answered >= {500: 100, 60: 1 if kind == "continuous" else 0, 1: 0}[size]


@pytest.mark.parametrize("kind", ["continuous", "ties", "one tied column", "far from zero"])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_mdav_with_the_index_gives_the_exhaustive_partition(kind, k):
    rng = np.random.default_rng(100 + k)
    for trial in range(12):
        n, d = int(rng.integers(k, 700)), int(rng.integers(1, 6))
        z = _table(rng, n, d, kind)
        fast, plain = mdav_groups(z, k), mdav_groups_exhaustive(z, k)
        np.testing.assert_array_equal(fast, plain)
        for two in (True, False):  # each step's two questions on two threads, and on one
            np.testing.assert_array_equal(mdav_groups(z, k, two_cores=two), plain)
        np.testing.assert_array_equal(mdav_groups(z, k, ranked=int(rng.integers(1, 40))), plain)
        sizes = np.bincount(fast)
        assert sizes.sum() == n and sizes.min() >= k and sizes.max() <= 2 * k - 1


def test_mdav_on_a_few_thousand_records_with_ties():
    rng = np.random.default_rng(5)
    z = _table(rng, 4000, 4, "one tied column")
    plain = mdav_groups_exhaustive(z, 4)
    np.testing.assert_array_equal(mdav_groups(z, 4), plain)
    np.testing.assert_array_equal(mdav_groups(z, 4, two_cores=True), plain)
    np.testing.assert_array_equal(mdav_groups(z, 4, two_cores=False), plain)
    np.testing.assert_array_equal(mdav_groups(z, 4, ranked=64), plain)  # a short ranking, made longer
