"""Block ranks with ties over partitioned columns, exactly as :class:`~verifier.core.permutation.RankSpace` gives them.

A column of Y is cut into value ranges ``[b_(k-1), b_k)`` at boundaries drawn
from evenly spaced order statistics of every part. All copies of a value fall
in one range, so no block of ties is ever split. Each range is sorted on a
worker; the counts of the ranges before it give its first position. A value's
block is then found in its own range, and an original value's query block
(the nearest released value, the hull of both when two are equally close)
in its range widened by the last block of the range before and the first
block of the range after: the only values that can be nearer than its own
range's. Both use :class:`~verifier.core.ranks.ColumnBlocks` itself, so the
positions are the local engine's to the last digit.

The functions here run in Dask tasks; :func:`rank_columns` builds the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from verifier.core.ranks import ColumnBlocks

__all__ = ["RankedColumns", "ValueRanges", "buckets", "pick", "rank_columns", "sorted_column", "value_ranges"]

#: order statistics each part contributes to the choice of range boundaries, per column
SAMPLE = 512


def _sample(values: np.ndarray) -> list[np.ndarray]:
    """Evenly spaced order statistics of each column of one part."""
    n, m = values.shape
    if n == 0:
        return [np.empty(0)] * m
    picks = np.linspace(0, n - 1, min(n, SAMPLE)).astype(np.int64)
    return [np.sort(values[:, j] + 0.0)[picks] for j in range(m)]


def _boundaries(ranges: int, *samples: list[np.ndarray]) -> list[np.ndarray]:
    """Per column, at most ``ranges - 1`` distinct boundary values, increasing."""
    out = []
    for j in range(len(samples[0])):
        pooled = np.sort(np.concatenate([s[j] for s in samples]))
        if pooled.size == 0:
            out.append(np.empty(0))
            continue
        picks = (np.arange(1, ranges) * pooled.size) // ranges
        out.append(np.unique(pooled[picks]))
    return out


def buckets(key: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    """The rows (ascending) of each of the ``edges.size + 1`` intervals ``[edges[k-1], edges[k])`` that ``key`` falls in."""
    where = np.searchsorted(edges, key, side="right")
    order = np.argsort(where, kind="stable")
    cuts = np.searchsorted(where[order], np.arange(edges.size + 2))
    return [order[cuts[k]:cuts[k + 1]] for k in range(edges.size + 1)]


def _split(values: np.ndarray, boundaries: list[np.ndarray]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Per column and range, the part's values in that range and their rows."""
    out = []
    for j, b in enumerate(boundaries):
        column = values[:, j] + 0.0
        out.append([(column[rows], rows) for rows in buckets(column, b)])
    return out


def pick(nested: Any, *path: int) -> Any:
    """``nested[path[0]][path[1]]...``: a task that takes one piece of another task's result."""
    for key in path:
        nested = nested[key]
    return nested


def _sort_range(*pieces: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return np.sort(np.concatenate([p[0] for p in pieces])) if pieces else np.empty(0)


def _range_meta(sorted_values: np.ndarray) -> tuple[int, float, int, float, int] | None:
    """Count, first value and its copies, last value and its copies; None for an empty range."""
    n = sorted_values.size
    if n == 0:
        return None
    first, last = sorted_values[0], sorted_values[-1]
    return (n, float(first), int(np.searchsorted(sorted_values, first, side="right")),
            float(last), n - int(np.searchsorted(sorted_values, last, side="left")))


def _layouts(metas: Sequence[tuple | None]) -> list[tuple[int, tuple | None, tuple | None]]:
    """Per range: its first 0-based position, and the block (value, copies) just before and just after it."""
    out, position, before = [], 0, None
    after = [None] * len(metas)
    following = None
    for k in range(len(metas) - 1, -1, -1):
        after[k] = following
        if metas[k] is not None:
            following = (metas[k][1], metas[k][2])
    for k, meta in enumerate(metas):
        out.append((position, before, after[k]))
        if meta is not None:
            position += meta[0]
            before = (meta[3], meta[4])
    return out


def _rank_range(sorted_values: np.ndarray, layout: tuple, n_released: int,
                *pieces: tuple[np.ndarray, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Blocks of the released pieces (their first ``n_released``), query blocks of the original pieces."""
    position, before, after = layout
    widened = [np.full(before[1], before[0])] if before else []
    widened += [sorted_values] + ([np.full(after[1], after[0])] if after else [])
    blocks = ColumnBlocks.from_sorted(np.concatenate(widened))
    shift = position - (before[1] if before else 0)
    out = []
    for i, (values, _) in enumerate(pieces):
        lo, hi = blocks.blocks_of(values) if i < n_released else blocks.query(values)
        out.append((lo + shift, hi + shift))
    return out


def _assemble(part: np.ndarray, columns: Sequence[int], *flat: tuple[np.ndarray, np.ndarray]):
    """One part's ``(lo, hi)`` matrices: ``flat`` alternates a piece (values, rows) and its blocks (lo, hi)."""
    lo = np.empty(part.shape, np.int64)
    hi = np.empty(part.shape, np.int64)
    for j, (_, rows), (a, b) in zip(columns, flat[0::2], flat[1::2]):
        lo[rows, j] = a
        hi[rows, j] = b
    return lo, hi


@dataclass(frozen=True, eq=False)
class RankedColumns:
    """Futures of the ranked parts: released ``(record_lo, record_hi)``, original ``(qlo, qhi)``, sorted ranges."""

    released: list
    original: list
    sorted_ranges: list[list]
    n_records: int


@dataclass(frozen=True, eq=False)
class ValueRanges:
    """Parts cut by value ranges: ``pieces[i][j][k]`` is a future of part i's ``(values, rows)`` of column j in range k."""

    boundaries: list[np.ndarray]
    pieces: list[list[list]]

    def count(self, j: int) -> int:
        """How many value ranges column j has."""
        return int(self.boundaries[j].size + 1)

    def column(self, j: int, k: int, parts: slice = slice(None)) -> list:
        """Range k of column j: the pieces of the chosen parts."""
        return [p[j][k] for p in self.pieces[parts]]


def value_ranges(client, sampled: list, parts: list, *, ranges: int) -> ValueRanges:
    """Cut every one of ``parts`` at boundaries drawn from order statistics of the ``sampled`` parts."""
    samples = [client.submit(_sample, part) for part in sampled]
    bounds = client.submit(_boundaries, ranges, *samples).result()
    splits = [client.submit(_split, part, bounds) for part in parts]
    pieces = [[[client.submit(pick, s, j, k) for k in range(b.size + 1)] for j, b in enumerate(bounds)] for s in splits]
    return ValueRanges(bounds, pieces)


def sorted_column(client, cut: ValueRanges, j: int, parts: slice = slice(None)) -> list:
    """Futures of column j's values range by range, each sorted: together, the sorted column of the chosen parts."""
    return [client.submit(_sort_range, *cut.column(j, k, parts)) for k in range(cut.count(j))]


def rank_columns(client, released: list, original: list, sizes: Sequence[int], *, ranges: int) -> RankedColumns:
    """Rank the released parts (futures of ``(n_p, m)`` arrays) and query-rank the original parts.

    ``sizes`` are the released parts' record counts; ``ranges`` the value ranges per column.
    """
    cut = value_ranges(client, released, released + original, ranges=ranges)
    m = len(cut.boundaries)
    n_released = len(released)
    sorted_ranges = [sorted_column(client, cut, j, slice(0, n_released)) for j in range(m)]
    # every column's range layouts in one round trip to the workers, not one per column
    metas_by_column = client.gather([[client.submit(_range_meta, s) for s in column] for column in sorted_ranges])
    ranked = [[client.submit(_rank_range, s, layout, n_released, *cut.column(j, k))
               for k, (s, layout) in enumerate(zip(column, _layouts(metas)))]
              for j, (column, metas) in enumerate(zip(sorted_ranges, metas_by_column))]
    parts = []
    for i, part in enumerate(released + original):
        columns, flat = [], []
        for j in range(m):
            for k in range(cut.count(j)):
                columns.append(j)
                flat += [cut.pieces[i][j][k], client.submit(pick, ranked[j][k], i)]
        parts.append(client.submit(_assemble, part, columns, *flat))
    return RankedColumns(released=parts[:n_released], original=parts[n_released:], sorted_ranges=sorted_ranges,
                         n_records=int(sum(sizes)))
