"""The data-set level (D, v) on a Dask cluster: the local engine's report, computed from partitioned tables.

:func:`distributed_permuted_privacy` ranks the released parts
(:mod:`~verifier.distributed.block_ranks`), searches rank space slab by slab
(:mod:`~verifier.distributed.slab_search`) and returns the same
:class:`~verifier.core.permutation.PermutedPrivacyReport` as
:func:`~verifier.core.permutation.compute_permuted_privacy`, equal to the
last bit: the positions and distances are integers found exactly, and the
window spreads are computed by the local engine's own code on the sorted
columns the workers produced (8 bytes per record and attribute on the
client, a third of what the ranks and the tree take).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, ContextManager, Sequence

import numpy as np

from verifier.core.match_sets import MatchSets
from verifier.core.permutation import PermutedPrivacyReport, SortedColumns, assemble_report
from verifier.core.ranks import ColumnBlocks
from verifier.distributed.block_ranks import rank_columns
from verifier.distributed.cluster import default_pieces, on_cluster
from verifier.distributed.slab_search import Slabs, build_slabs, search_slabs

__all__ = ["ClusterTree", "DistributedLinkage", "DistributedSpace", "distributed_linkage", "distributed_permuted_privacy"]


def _rows(blocks: tuple[np.ndarray, np.ndarray], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return blocks[0][rows], blocks[1][rows]


def _shape(part: np.ndarray) -> int:
    return int(part.shape[0])


class ClusterTree:
    """The slab trees on the cluster, answering as :meth:`~verifier.core.kdtree.RankTree.distances` does.

    The random-match test asks it for the distances of its random records:
    they are cut into ``pieces``, searched slab by slab like the original
    records, and only their distances come back.
    """

    def __init__(self, client, slabs: Slabs, pieces: int):
        self._client = client
        self._slabs = slabs
        self._pieces = max(1, pieces)

    def distances(self, qlo: np.ndarray, qhi: np.ndarray) -> np.ndarray:
        if qlo.shape[0] == 0:
            return np.empty(0, np.int64)
        cuts = np.linspace(0, qlo.shape[0], self._pieces + 1).astype(np.int64)[1:-1]
        pieces = list(zip(np.split(np.asarray(qlo, np.int64), cuts), np.split(np.asarray(qhi, np.int64), cuts)))
        futures = self._client.scatter(pieces)
        found = self._client.gather(search_slabs(self._client, self._slabs, futures, [p[0].shape[0] for p in pieces]))
        return np.concatenate([f[0] for f in found])


class DistributedSpace(SortedColumns):
    """Y's sorted columns on the client; its records' blocks and its slab trees stay on the workers.

    ``tree`` answers distance queries on the cluster, so the random-match
    test of :mod:`verifier.attacks.intruder` runs on this space unchanged.
    """

    def __init__(self, client, columns: list[ColumnBlocks], kinds: Sequence[str], blocks: list, sizes: Sequence[int],
                 tree: ClusterTree):
        super().__init__(columns, kinds)
        self._client = client
        self._blocks = blocks
        self._starts = np.concatenate(([0], np.cumsum(sizes)))
        self.tree = tree

    def deviations(self, qlo: np.ndarray, qhi: np.ndarray, records: np.ndarray) -> np.ndarray:
        """``dev[i, j]`` of the given released records (0-based) to one query block row, fetched by part."""
        records = np.asarray(records, dtype=np.int64)
        part = np.searchsorted(self._starts, records, side="right") - 1
        lo = np.empty((records.size, self.n_attributes), np.int64)
        hi = np.empty_like(lo)
        for p in np.unique(part):
            where = np.flatnonzero(part == p)
            lo[where], hi[where] = self._client.submit(_rows, self._blocks[p], records[where] - self._starts[p]).result()
        return np.maximum(0, np.maximum(lo - qhi, qlo - hi))

    @cached_property
    def _gathered(self) -> tuple[np.ndarray, np.ndarray]:
        parts = self._client.gather(self._blocks)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    @property
    def record_lo(self) -> np.ndarray:
        """Every released record's block starts, gathered from the workers on first use (for per-record files)."""
        return self._gathered[0]

    @property
    def record_hi(self) -> np.ndarray:
        return self._gathered[1]


@dataclass(frozen=True, eq=False)
class DistributedLinkage:
    """Every original record's query blocks, distance and match set (CSR, 0-based), and Y's space."""

    space: DistributedSpace
    qlo: np.ndarray
    qhi: np.ndarray
    distances: np.ndarray
    offsets: np.ndarray
    matches: np.ndarray


def distributed_linkage(client, original: list, released: list, kinds: Sequence[str], *,
                        slabs: int | None = None, ranges: int | None = None,
                        phase: Callable[[str], ContextManager] | None = None) -> DistributedLinkage:
    """Link every record of X to its nearest records of Y, both lists of parts on the cluster.

    ``original`` and ``released`` are futures (or values) of ``(n_p, m)``
    rank-key arrays. ``slabs`` (rank-space slabs) and ``ranges`` (value
    ranges per column) default to twice the number of workers. ``phase(label)``
    (a context manager, :class:`verifier.frontend.Phases`) follows the stages.
    """
    from distributed import wait  # the optional extra: imported when the engine runs, not when a command starts

    phase = phase or (lambda label: nullcontext())
    pieces = default_pieces(client)
    slabs = slabs or pieces
    ranges = ranges or pieces
    released, original = on_cluster(client, released), on_cluster(client, original)
    with phase("reading the parts on the workers"):
        # one round trip to the workers for both lists (each costs about 0.1 s, whatever it carries)
        sizes, x_sizes = client.gather([[client.submit(_shape, p) for p in released],
                                        [client.submit(_shape, p) for p in original]])
    with phase("ranking the released columns (value ranges)"):
        ranked = rank_columns(client, released, original, sizes, ranges=ranges)
        wait(ranked.released + ranked.original)
    with phase("searching rank space (slabs, then across slab edges)"):
        cut = build_slabs(client, ranked.released, sizes, slabs=slabs)
        parts = client.gather(search_slabs(client, cut, ranked.original, x_sizes))
    with phase("gathering the sorted columns and the query blocks"):
        sorted_ranges, queries = client.gather([ranked.sorted_ranges, ranked.original])  # one round trip
        columns = [ColumnBlocks.from_sorted(np.concatenate(r)) for r in sorted_ranges]
    space = DistributedSpace(client, columns, kinds, ranked.released, sizes, ClusterTree(client, cut, pieces))
    offsets = np.zeros(sum(x_sizes) + 1, np.int64)
    np.cumsum(np.concatenate([np.diff(p[1]) for p in parts]), out=offsets[1:])
    return DistributedLinkage(
        space=space,
        qlo=np.concatenate([q[0] for q in queries]),
        qhi=np.concatenate([q[1] for q in queries]),
        distances=np.concatenate([p[0] for p in parts]),
        offsets=offsets,
        matches=np.concatenate([p[2] for p in parts]),
    )


def distributed_permuted_privacy(client, original: list, released: list, kinds: Sequence[str], *,
                                 slabs: int | None = None, ranges: int | None = None,
                                 phase: Callable[[str], ContextManager] | None = None,
                                 ) -> tuple[PermutedPrivacyReport, DistributedSpace]:
    """The permuted-privacy report of X against Y, both lists of parts on the cluster (see :func:`distributed_linkage`)."""
    linked = distributed_linkage(client, original, released, kinds, slabs=slabs, ranges=ranges, phase=phase)
    with (phase or (lambda label: nullcontext()))("window spreads"):
        report = assemble_report(linked.space, linked.qlo, linked.qhi, linked.distances,
                                 MatchSets.each(linked.offsets, linked.matches))
    return report, linked.space
