"""Every original record's nearest released records in rank space, slab by slab, exactly.

Rank space is cut into slabs by the block start of the first attribute. Each
slab holds the released records whose block starts there, in a
:class:`~verifier.core.kdtree.RankTree` of its own, and first answers the
original records whose query block starts there: its distance ``d`` is an
upper bound of the true one. A record of another slab ``t`` lies at least
``max(0, lo_t - qhi, qlo - hi_t)`` away on the first attribute alone
(``lo_t`` the smallest block start of ``t``, ``hi_t`` the largest block end),
so only the queries whose bound reaches that far are sent to ``t``, once.
The distance is the smallest answer and the match set the union of the
answers that reach it: a record outside every slab searched is farther than
the bound, so nothing is missed, and a record sits in one slab only, so
nothing is counted twice.

The functions here run in Dask tasks; :func:`nearest_released` builds the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from verifier.core.kdtree import RankTree
from verifier.distributed.block_ranks import buckets, pick

__all__ = ["Found", "Slabs", "build_slabs", "nearest_released", "search_slabs"]

#: the distance of a query whose own slab holds no released record: every slab is searched
UNBOUNDED = np.iinfo(np.int64).max


@dataclass(frozen=True, eq=False)
class Found:
    """Answers for some queries: global ids, query blocks, distances, match sets (CSR, global ids ascending)."""

    ids: np.ndarray
    qlo: np.ndarray
    qhi: np.ndarray
    distances: np.ndarray
    offsets: np.ndarray
    matches: np.ndarray


@dataclass(frozen=True, eq=False)
class Slab:
    tree: RankTree | None
    ids: np.ndarray
    bounds: tuple[int, int] | None


def _split(blocks: tuple[np.ndarray, np.ndarray], first_id: int, edges: np.ndarray):
    """A part's records per slab, by the start of their first attribute's block: (lo, hi, global ids)."""
    lo, hi = blocks
    return [(lo[rows], hi[rows], first_id + rows) for rows in buckets(lo[:, 0], edges)]


def _build(*pieces) -> Slab:
    lo = np.concatenate([p[0] for p in pieces])
    if lo.shape[0] == 0:
        return Slab(None, np.empty(0, np.int64), None)
    hi = np.concatenate([p[1] for p in pieces])
    return Slab(RankTree(lo, hi), np.concatenate([p[2] for p in pieces]), (int(lo[:, 0].min()), int(hi[:, 0].max())))


def _bounds(slab: Slab) -> tuple[int, int] | None:
    return slab.bounds


def _search(slab: Slab, *pieces) -> Found:
    """The slab's nearest records to the queries of ``pieces`` (qlo, qhi, ids)."""
    qlo = np.concatenate([p[0] for p in pieces])
    qhi = np.concatenate([p[1] for p in pieces])
    ids = np.concatenate([p[2] for p in pieces])
    if slab.tree is None:
        return Found(ids, qlo, qhi, np.full(ids.size, UNBOUNDED), np.zeros(ids.size + 1, np.int64),
                     np.empty(0, np.int64))
    distances, offsets, records = slab.tree.nearest(qlo, qhi)
    return Found(ids, qlo, qhi, distances, offsets, slab.ids[records])


def _crossing(found: Found, bounds: Sequence[tuple[int, int] | None], own: int):
    """Per slab, the queries whose distance bound reaches it (none for the query's own slab)."""
    out = []
    for t, b in enumerate(bounds):
        if t == own or b is None:
            rows = np.empty(0, np.int64)
        else:
            gap = np.maximum(0, np.maximum(b[0] - found.qhi[:, 0], found.qlo[:, 0] - b[1]))
            rows = np.flatnonzero(gap <= found.distances)
        out.append((found.qlo[rows], found.qhi[rows], found.ids[rows]))
    return out


def _by_part(found: Found, starts: np.ndarray) -> list[Found]:
    """The answers of each original part (``starts``: first global id of each part, and the total)."""
    out = []
    for a, b in zip(starts[:-1], starts[1:]):
        rows = np.flatnonzero((found.ids >= a) & (found.ids < b))
        first = found.offsets[rows]
        counts = found.offsets[rows + 1] - first
        offsets = np.zeros(rows.size + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        take = np.arange(offsets[-1]) + np.repeat(first - offsets[:-1], counts)
        out.append(Found(found.ids[rows] - a, found.qlo[rows], found.qhi[rows], found.distances[rows], offsets,
                         found.matches[take]))
    return out


def _merge(n: int, *answers: Found) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One part's distances and match sets (CSR, ascending) from every slab's answers."""
    ids = np.concatenate([a.ids for a in answers])
    distances = np.concatenate([a.distances for a in answers])
    best = np.full(n, UNBOUNDED)
    np.minimum.at(best, ids, distances)
    owners, found = [], []
    for a in answers:
        counts = np.diff(a.offsets)
        keep = a.distances == best[a.ids]
        owners.append(np.repeat(a.ids[keep], counts[keep]))
        found.append(a.matches[np.repeat(keep, counts)])
    owner = np.concatenate(owners)
    matches = np.concatenate(found)
    order = np.lexsort((matches, owner))
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n), out=offsets[1:])
    return best, offsets, matches[order]


@dataclass(frozen=True, eq=False)
class Slabs:
    """Rank space cut into slabs on the cluster: the futures of their trees, their first-attribute bounds, the edges."""

    trees: list
    bounds: list[tuple[int, int] | None]
    edges: np.ndarray


def build_slabs(client, released: list, released_sizes: Sequence[int], *, slabs: int) -> Slabs:
    """A :class:`~verifier.core.kdtree.RankTree` per slab of the released records; blocks are futures of ``(lo, hi)``."""
    n = int(sum(released_sizes))
    edges = np.unique(1 + (np.arange(1, slabs) * n) // slabs)
    starts = np.concatenate(([0], np.cumsum(released_sizes)))
    y_split = [client.submit(_split, b, int(s), edges) for b, s in zip(released, starts)]
    trees = [client.submit(_build, *[client.submit(pick, p, s) for p in y_split]) for s in range(edges.size + 1)]
    return Slabs(trees, client.gather([client.submit(_bounds, t) for t in trees]), edges)


def search_slabs(client, slabs: Slabs, original: list, original_sizes: Sequence[int]) -> list:
    """Futures of each query part's ``(distances, offsets, matches)``; the parts are futures of ``(qlo, qhi)``."""
    x_starts = np.concatenate(([0], np.cumsum(original_sizes)))
    count = len(slabs.trees)
    x_split = [client.submit(_split, b, int(s), slabs.edges) for b, s in zip(original, x_starts)]
    first = [client.submit(_search, slabs.trees[s], *[client.submit(pick, p, s) for p in x_split]) for s in range(count)]
    crossing = [client.submit(_crossing, f, slabs.bounds, s) for s, f in enumerate(first)]
    second = [client.submit(_search, slabs.trees[t], *[client.submit(pick, c, t) for c in crossing])
              for t in range(count)]
    per_part = [client.submit(_by_part, found, x_starts) for found in first + second]
    return [client.submit(_merge, int(size), *[client.submit(pick, p, i) for p in per_part])
            for i, size in enumerate(original_sizes)]


def nearest_released(client, released: list, original: list, released_sizes: Sequence[int],
                     original_sizes: Sequence[int], *, slabs: int) -> list:
    """Futures of each original part's ``(distances, offsets, matches)``; blocks are futures of ``(lo, hi)``."""
    return search_slabs(client, build_slabs(client, released, released_sizes, slabs=slabs), original, original_sizes)
