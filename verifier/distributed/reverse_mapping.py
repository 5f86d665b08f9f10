"""Paper 003's Algorithm 1 on the cluster: Z, X's values put in Y's rank order, exactly as the local engine makes it.

:func:`~verifier.core.ranks.reverse_map` ranks each column of Y, breaking ties
at random, and gives record i the value of X_j at Y_ij's rank. With ties it
draws one permutation of the n records per column, in column order, and a
tied record's rank follows its place in that permutation. Here:

- each column of Y is cut into value ranges (all copies of a value in one
  range, :func:`~verifier.distributed.block_ranks.value_ranges`); a range
  with two equal values means the column has ties;
- for a tied column the client draws the permutation from the same generator
  (8 bytes per record, one column at a time) and sends each part its records'
  places in it;
- each range is sorted on a worker by value, then by that place; the counts
  of the ranges before it give its first rank;
- Z_ij is the value at that rank of X_j's sorted column, which the workers
  hold range by range; each rank is sent to the range that holds it.

The ranks, and so Z, are the local engine's for the same seed, to the bit.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from verifier.distributed.block_ranks import ValueRanges, buckets, pick, sorted_column, value_ranges
from verifier.errors import InvalidInputError

__all__ = ["reverse_mapped_parts"]


def _count(*pieces: tuple[np.ndarray, np.ndarray]) -> int:
    return int(sum(p[0].size for p in pieces))


def _has_ties(*pieces: tuple[np.ndarray, np.ndarray]) -> bool:
    values = np.sort(np.concatenate([p[0] for p in pieces])) if pieces else np.empty(0)
    return bool(values.size > 1 and (values[1:] == values[:-1]).any())


def _places(inverse: np.ndarray, piece: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The places in the tie-breaking permutation of a piece's records."""
    return inverse[piece[1]]


def _rank_range(first: int, n_pieces: int, *args) -> list[np.ndarray]:
    """0-based ranks of each piece's values: ``args`` are the pieces, then (with ties) their places."""
    pieces, places = args[:n_pieces], args[n_pieces:]
    values = np.concatenate([p[0] for p in pieces]) if pieces else np.empty(0)
    if places:
        order = np.lexsort((np.concatenate(places), values))
    else:
        order = np.argsort(values)
    ranks = np.empty(values.size, np.int64)
    ranks[order] = first + np.arange(values.size)
    return np.split(ranks, np.cumsum([p[0].size for p in pieces])[:-1])


def _column(size: int, *flat) -> np.ndarray:
    """One part's column from ``flat``: pairs of a piece (values, rows) and its ranks."""
    out = np.empty(size, np.int64)
    for (_, rows), ranks in zip(flat[0::2], flat[1::2]):
        out[rows] = ranks
    return out


def _by_range(ranks: np.ndarray, starts: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per range of X's sorted column (``starts``: its first rank, and n), the positions in it and their rows."""
    return [(ranks[rows] - starts[k], rows) for k, rows in enumerate(buckets(ranks, starts[1:-1]))]


def _take(sorted_values: np.ndarray, piece: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return sorted_values[piece[0]]


def _assemble(size: int, m: int, *flat) -> np.ndarray:
    """One part of Z: ``flat`` holds, per column, one (column, piece, values) triple per range."""
    z = np.empty((size, m), np.float64)
    for j, (_, rows), values in zip(flat[0::3], flat[1::3], flat[2::3]):
        z[rows, j] = values
    return z


def _range_facts(client, cut: ValueRanges) -> tuple[list[bool], list[list[int]]]:
    """Whether each column of ``cut`` has ties, and how many records each of its ranges holds: one round trip to
    the workers for every column, not two per column."""
    ranges = [[cut.column(j, k) for k in range(cut.count(j))] for j in range(len(cut.boundaries))]
    tied, counts = client.gather([[[client.submit(_has_ties, *r) for r in column] for column in ranges],
                                  [[client.submit(_count, *r) for r in column] for column in ranges]])
    return [any(t) for t in tied], counts


def _tie_broken_ranks(client, cut: ValueRanges, j: int, sizes: Sequence[int], rng: np.random.Generator,
                      tied: bool, counts: Sequence[int]) -> list:
    """Futures of every part's 0-based ranks of Y_j, ties broken as :func:`~verifier.core.ranks.tie_broken_ranks` does;
    ``tied`` and ``counts`` (each range's records) from :func:`_range_facts`."""
    count = cut.count(j)
    ranges = [cut.column(j, k) for k in range(count)]
    places: list[list] = [[] for _ in range(count)]
    n = int(sum(sizes))
    if tied and n > 1:
        inverse = np.empty(n, np.int64)
        inverse[rng.permutation(n)] = np.arange(n)
        starts = np.concatenate(([0], np.cumsum(sizes)))
        parts = client.scatter([inverse[a:b] for a, b in zip(starts[:-1], starts[1:])])
        places = [[client.submit(_places, parts[i], piece) for i, piece in enumerate(r)] for r in ranges]
        del inverse
    firsts = np.concatenate(([0], np.cumsum(counts)))
    ranked = [client.submit(_rank_range, int(firsts[k]), len(r), *r, *places[k]) for k, r in enumerate(ranges)]
    return [client.submit(_column, int(size), *[x for k in range(count)
                                                 for x in (cut.pieces[i][j][k], client.submit(pick, ranked[k], i))])
            for i, size in enumerate(sizes)]


def reverse_mapped_parts(client, original: list, anonymized: list, rng: np.random.Generator, *, ranges: int,
                         where: str = "-") -> list:
    """Futures of Z's parts (Y's row order, ``(n_p, m)`` values of X), from futures of X's and Y's parts.

    ``rng`` breaks Y's ties, column by column, exactly as the local engine's
    :func:`~verifier.core.ranks.reverse_map` does with the same generator.
    """
    x_sizes, y_sizes = client.gather([[client.submit(np.shape, p) for p in original],
                                      [client.submit(np.shape, p) for p in anonymized]])
    n_x, n_y = sum(s[0] for s in x_sizes), sum(s[0] for s in y_sizes)
    if {s[1] for s in x_sizes} != {s[1] for s in y_sizes}:
        raise InvalidInputError("has other columns than the original; the intruder reverse-maps Y onto X column by "
                                "column", path=where, reason="SHAPE_MISMATCH")
    if n_x != n_y:
        raise InvalidInputError(f"has {n_y} records and the original {n_x}; the intruder reverse-maps Y onto X, "
                                "which needs the same number", path=where, reason="SHAPE_MISMATCH")
    sizes = [s[0] for s in y_sizes]
    y_cut = value_ranges(client, anonymized, anonymized, ranges=ranges)
    x_cut = value_ranges(client, original, original, ranges=ranges)
    m = len(y_cut.boundaries)
    tied, counts = _range_facts(client, y_cut)
    x_sorted_columns = [sorted_column(client, x_cut, j) for j in range(m)]
    x_counts = client.gather([[client.submit(np.size, s) for s in column] for column in x_sorted_columns])
    flat: list[list] = [[] for _ in sizes]
    for j in range(m):  # Y's ties are broken column by column in order, as the local engine draws them
        ranks = _tie_broken_ranks(client, y_cut, j, sizes, rng, tied[j], counts[j])
        x_sorted = x_sorted_columns[j]
        starts = np.concatenate(([0], np.cumsum(x_counts[j])))
        for i, part_ranks in enumerate(ranks):
            split = client.submit(_by_range, part_ranks, starts)
            for k, values in enumerate(x_sorted):
                piece = client.submit(pick, split, k)
                flat[i] += [j, piece, client.submit(_take, values, piece)]
    return [client.submit(_assemble, int(size), m, *f) for size, f in zip(sizes, flat)]
