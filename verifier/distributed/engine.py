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
from functools import cached_property
from typing import Callable, ContextManager, Sequence

import numpy as np

from verifier.core.permutation import PermutedPrivacyReport, SortedColumns, assemble_report
from verifier.core.ranks import ColumnBlocks
from verifier.distributed.block_ranks import rank_columns
from verifier.distributed.slab_search import nearest_released

__all__ = ["DistributedSpace", "distributed_permuted_privacy"]


def _rows(blocks: tuple[np.ndarray, np.ndarray], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return blocks[0][rows], blocks[1][rows]


def _shape(part: np.ndarray) -> int:
    return int(part.shape[0])


class DistributedSpace(SortedColumns):
    """Y's sorted columns on the client; its records' blocks stay on the workers until asked for."""

    def __init__(self, client, columns: list[ColumnBlocks], kinds: Sequence[str], blocks: list, sizes: Sequence[int]):
        super().__init__(columns, kinds)
        self._client = client
        self._blocks = blocks
        self._starts = np.concatenate(([0], np.cumsum(sizes)))

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


def distributed_permuted_privacy(client, original: list, released: list, kinds: Sequence[str], *,
                                 slabs: int | None = None, ranges: int | None = None,
                                 phase: Callable[[str], ContextManager] | None = None,
                                 ) -> tuple[PermutedPrivacyReport, DistributedSpace]:
    """The permuted-privacy report of X against Y, both lists of parts on the cluster.

    ``original`` and ``released`` are futures (or values) of ``(n_p, m)``
    rank-key arrays. ``slabs`` (rank-space slabs) and ``ranges`` (value
    ranges per column) default to twice the number of workers. ``phase(label)``
    (a context manager, :class:`verifier.frontend.Phases`) follows the stages.
    """
    from distributed import wait  # the optional extra: imported when the engine runs, not when a command starts

    phase = phase or (lambda label: nullcontext())
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    slabs = slabs or 2 * workers
    ranges = ranges or 2 * workers
    released = [client.scatter(p) if isinstance(p, np.ndarray) else p for p in released]
    original = [client.scatter(p) if isinstance(p, np.ndarray) else p for p in original]
    with phase("reading the parts on the workers"):
        sizes = client.gather([client.submit(_shape, p) for p in released])
        x_sizes = client.gather([client.submit(_shape, p) for p in original])
    with phase("ranking the released columns (value ranges)"):
        ranked = rank_columns(client, released, original, sizes, ranges=ranges)
        wait(ranked.released + ranked.original)
    with phase("searching rank space (slabs, then across slab edges)"):
        parts = client.gather(nearest_released(client, ranked.released, ranked.original, sizes, x_sizes, slabs=slabs))
    with phase("gathering the sorted columns and the query blocks"):
        columns = [ColumnBlocks.from_sorted(np.concatenate(client.gather(r))) for r in ranked.sorted_ranges]
        queries = client.gather(ranked.original)
    space = DistributedSpace(client, columns, kinds, ranked.released, sizes)
    qlo = np.concatenate([q[0] for q in queries])
    qhi = np.concatenate([q[1] for q in queries])
    distances = np.concatenate([p[0] for p in parts])
    matches = np.concatenate([p[2] for p in parts])
    offsets = np.zeros(distances.size + 1, np.int64)
    np.cumsum(np.concatenate([np.diff(p[1]) for p in parts]), out=offsets[1:])
    with phase("window spreads"):
        return assemble_report(space, qlo, qhi, distances, offsets, matches), space
