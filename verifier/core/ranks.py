"""Block ranks with ties (SPEC section 2) and reverse mapping (SPEC section 3).

Block ranks
-----------
Sort a column of ``n`` values. A value ``v`` occupies the block of 1-based
positions ``[lo(v), hi(v)]`` taken by its copies. The *rank deviation* between
two values is the gap between their blocks::

    dev(a, b) = 0                  if a == b
              = lo(b) - hi(a)      if a < b

Without ties every block is a single position and ``dev`` is
``|rank(a) - rank(b)|``, the deviation of paper 003. With ties it is the
smallest deviation that any tie-breaking could give, so ties are resolved in
the intruder's favour and the figures never overstate protection.

Reverse mapping (paper 003, Algorithm 1)
----------------------------------------
``Z[i, j] = sort(X[:, j])[rank(Y[i, j]) - 1]``: each anonymized value is
replaced by the original value of the same rank. Ties in Y are broken
uniformly at random with a seeded generator (the intruder's own randomness,
seed 0 unless given), so Z is a per-column permutation of X that keeps Y's rank
order.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numba as nb
import numpy as np

from verifier.core.interrupts import held_signals
from verifier.core.validation import as_generator, check_matrix, check_same_shape

__all__ = [
    "KERNELS",
    "ColumnBlocks",
    "block_ranks",
    "rank_deviation",
    "ReverseMappingResult",
    "reverse_map",
    "tie_broken_rank_columns",
    "tie_broken_ranks",
]


def for_each_column(fn: Callable[[int], None], n: int, m: int) -> None:
    """Call ``fn(j)`` for every column j, in two threads when the table is large.

    Column work here is numpy sorting, which releases the GIL.
    """
    if n * m >= 200_000:
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(fn, range(m)))
    else:
        for j in range(m):
            fn(j)


def rank_deviation(lo_a, hi_a, lo_b, hi_b):
    """Gap between blocks ``[lo_a, hi_a]`` and ``[lo_b, hi_b]`` (0 where they overlap).

    Works elementwise on arrays; the blocks of equal values coincide, so the
    gap of a value with itself is 0.

    >>> int(rank_deviation(2, 4, 7, 7))
    3
    """
    return np.maximum(0, np.maximum(np.subtract(lo_b, hi_a), np.subtract(lo_a, hi_b)))


@dataclass(frozen=True, eq=False)
class ColumnBlocks:
    """The sorted values of one column and the block of each distinct value.

    Attributes
    ----------
    sorted
        The column sorted ascending (length ``n``).
    unique
        Its distinct values, ascending.
    lo, hi
        1-based first and last sorted position of each distinct value.
    """

    sorted: np.ndarray
    unique: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def from_values(cls, column: np.ndarray) -> "ColumnBlocks":
        return cls.from_sorted(np.sort(np.asarray(column, dtype=np.float64)))

    @classmethod
    def from_sorted(cls, s: np.ndarray) -> "ColumnBlocks":
        """From a column already sorted ascending."""
        # 0.0 and -0.0 compare equal and must share a block; adding 0.0 makes both +0.0.
        s = s + 0.0
        return cls.from_starts(s, np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1]))))

    @classmethod
    def from_starts(cls, s: np.ndarray, starts: np.ndarray) -> "ColumnBlocks":
        """From a sorted column with no -0.0 and the 0-based first position of each of its distinct values."""
        lo = starts.astype(np.int64) + 1
        hi = np.concatenate((starts[1:], [s.size])).astype(np.int64)
        return cls(sorted=s, unique=s[starts], lo=lo, hi=hi)

    @property
    def n(self) -> int:
        return int(self.sorted.size)

    def blocks_of(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Blocks ``(lo, hi)`` of values that occur in the column."""
        k = np.searchsorted(self.unique, np.asarray(values, dtype=np.float64))
        return self.lo[k], self.hi[k]

    def query(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The query block of each value in ``x`` (SPEC section 4, step 1).

        The block of the column value closest to ``x`` by absolute difference;
        where two values are equally close, the hull of both blocks.
        """
        x = np.asarray(x, dtype=np.float64)
        u = self.unique
        k = np.searchsorted(u, x, side="left")  # u[k-1] < x <= u[k]
        left = np.clip(k - 1, 0, u.size - 1)
        right = np.clip(k, 0, u.size - 1)
        d_left = np.abs(x - u[left])
        d_right = np.abs(u[right] - x)
        qlo = np.where(d_left <= d_right, self.lo[left], self.lo[right])
        qhi = np.where(d_right <= d_left, self.hi[right], self.hi[left])
        return qlo, qhi

    def query_into(self, x: np.ndarray, j: int, qlo: np.ndarray, qhi: np.ndarray) -> None:
        """:meth:`query` of column ``j`` of the ``(k, m)`` table ``x``, written into column j of ``qlo`` and
        ``qhi``: the same blocks, compiled and in parallel (ten million queries: 1.9 s of numpy each)."""
        with held_signals():
            query_kernel(self.unique, self.lo, self.hi, x, j, qlo, qhi)

    @classmethod
    def rank_into(cls, column: np.ndarray, j: int, record_lo: np.ndarray, record_hi: np.ndarray) -> "ColumnBlocks":
        """The blocks of a contiguous float64 ``column``, each record's block written into column j of the
        ``(n, m)`` tables ``record_lo`` and ``record_hi``: one argsort, then one compiled pass.

        The same as its plain twin :meth:`plain_rank_into` (ties in argsort's
        order, which no result depends on), without the intermediate arrays:
        at 1e7 x 5 the gathers, repeats, scatters and strided copies took
        5 s of one core. The pass releases the GIL, so two threads rank two
        columns at once.
        """
        order = np.argsort(column)
        n = column.size
        s = np.empty(n, np.float64)
        starts = np.empty(n, np.int64)
        with held_signals():
            k = rank_kernel(column, order, j, record_lo, record_hi, s, starts)
        return cls.from_starts(s, starts[:k])

    @classmethod
    def plain_rank_into(cls, column: np.ndarray, j: int, record_lo: np.ndarray, record_hi: np.ndarray
                        ) -> "ColumnBlocks":
        """:meth:`rank_into` in numpy, nothing compiled: the sorted column's blocks, each record's scattered back
        through the sort's order into a contiguous buffer (random writes into a column of the row-major table
        would touch a cache line per record), then copied into column j."""
        order = np.argsort(column)
        col = cls.from_sorted(column[order])
        n = column.size
        scattered = np.empty(n, dtype=np.int64)
        if col.unique.size == n:  # no ties: every block is one position
            scattered[order] = np.arange(1, n + 1)
            record_lo[:, j] = scattered
            record_hi[:, j] = scattered
        else:
            pos_lo, pos_hi = col.position_blocks()
            scattered[order] = pos_lo
            record_lo[:, j] = scattered
            scattered[order] = pos_hi
            record_hi[:, j] = scattered
        return col

    def position_blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """For each sorted position (0-based), the 1-based block it belongs to."""
        sizes = self.hi - self.lo + 1
        return np.repeat(self.lo, sizes), np.repeat(self.hi, sizes)


@nb.njit(cache=True, parallel=True)
def query_kernel(unique, lo, hi, x, j, qlo, qhi):
    """:meth:`ColumnBlocks.query` of ``x[:, j]`` into ``qlo[:, j]``, ``qhi[:, j]``, step for step."""
    last = unique.size - 1
    for i in nb.prange(x.shape[0]):
        v = x[i, j]
        k = np.searchsorted(unique, v)  # unique[k-1] < v <= unique[k]
        left = min(max(k - 1, 0), last)
        right = min(max(k, 0), last)
        d_left = abs(v - unique[left])
        d_right = abs(unique[right] - v)
        qlo[i, j] = lo[left] if d_left <= d_right else lo[right]
        qhi[i, j] = hi[right] if d_right <= d_left else hi[left]


@nb.njit(cache=True, nogil=True)
def rank_kernel(column, order, j, record_lo, record_hi, sorted_out, starts):
    """:meth:`ColumnBlocks.rank_into`'s pass: the sorted column (``+ 0.0``, so that -0.0 and 0.0 share a block)
    into ``sorted_out``, the first sorted position of each distinct value into ``starts``, and each record's
    1-based block into ``record_lo[:, j]``, ``record_hi[:, j]``, run by run. Returns the number of distinct
    values."""
    n = order.size
    k = 0
    run = 0  # the first position of the current run of equal values
    for p in range(n):
        v = column[order[p]] + 0.0
        sorted_out[p] = v
        if p == 0 or v != sorted_out[p - 1]:
            for t in range(run, p):
                record_lo[order[t], j] = run + 1
                record_hi[order[t], j] = p
            starts[k] = p
            k += 1
            run = p
    for t in range(run, n):
        record_lo[order[t], j] = run + 1
        record_hi[order[t], j] = n
    return k


#: the compiled kernels of this module (for the warm-up's cache check)
KERNELS = (query_kernel, rank_kernel)


def block_ranks(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 1-based block ``(lo, hi)`` of every value of ``column``.

    >>> lo, hi = block_ranks(np.array([5.0, 1.0, 5.0, 3.0]))
    >>> lo.tolist(), hi.tolist()
    ([3, 1, 3, 2], [4, 1, 4, 2])
    """
    return ColumnBlocks.from_values(column).blocks_of(column)


def tie_broken_ranks(column: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """0-based ranks with ties broken uniformly at random.

    Sorting a random permutation of the column stably orders tied values in
    the permutation's order, which is uniform over the tied records. Where
    the column has no ties the random draw would change nothing and is skipped.
    """
    return tie_broken_rank_columns(np.asarray(column).reshape(-1, 1), rng)[0]


def tie_broken_rank_columns(table: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """:func:`tie_broken_ranks` of every column, in order: the same draws, so the same ranks.

    The sorts run in two threads (:func:`for_each_column`); the permutations
    are drawn between them, in column order, for the tied columns only, as
    one column after another would draw them. A column of small integers
    (category positions) is sorted stably by radix, which orders it as any
    stable sort does.
    """
    n, m = table.shape
    columns: list[np.ndarray] = [np.empty(0)] * m
    orders: list[np.ndarray] = [np.empty(0, np.int64)] * m
    tied = [False] * m

    def first_sort(j: int) -> None:
        columns[j] = np.ascontiguousarray(table[:, j])
        orders[j] = _stable_order(columns[j])
        s = columns[j][orders[j]]
        tied[j] = n > 1 and bool((s[1:] == s[:-1]).any())

    for_each_column(first_sort, n, m)
    perms = [rng.permutation(n) if tied[j] else None for j in range(m)]
    ranks: list[np.ndarray] = [np.empty(0, np.int64)] * m

    def rank(j: int) -> None:
        order, perm = orders[j], perms[j]
        if perm is not None:
            order = perm[_stable_order(columns[j][perm])]
        ranks[j] = np.empty(n, dtype=np.int64)
        ranks[j][order] = np.arange(n)

    for_each_column(rank, n, m)
    return ranks


def _stable_order(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")``; by radix where every value is an integer that 16 bits hold."""
    if values.size and values.dtype.kind == "f":
        low, high = values.min(), values.max()
        if -(1 << 15) <= low and high < 1 << 15 and np.array_equal(values, np.trunc(values)):
            return np.argsort(values.astype(np.int16), kind="stable")
    return np.argsort(values, kind="stable")


@dataclass(frozen=True, eq=False)
class ReverseMappingResult:
    """Z, and how much of the anonymization was permutation and how much noise.

    Attributes
    ----------
    z
        ``(n, m)`` reverse-mapped values (paper 003, Algorithm 1).
    source_rows
        ``(n, m)`` 0-based row of X whose value ``z[i, j]`` is.
    rank_correlation
        Per attribute, Spearman's rank correlation of X_j and Z_j (the
        disclosure proxy of paper 003, section 2); ``nan`` where a column is
        constant and the correlation is undefined.
    mean_abs_noise_y_x, mean_abs_noise_y_z
        Per attribute, mean |Y - X| and mean |Y - Z| (paper 003, Table 2):
        how much less noise is needed once the permutation is accounted for.
    """

    z: np.ndarray
    source_rows: np.ndarray
    rank_correlation: np.ndarray
    mean_abs_noise_y_x: np.ndarray
    mean_abs_noise_y_z: np.ndarray


def reverse_map(original: np.ndarray, anonymized: np.ndarray, *, random_state=0) -> ReverseMappingResult:
    """Reverse-map ``anonymized`` (Y) onto ``original`` (X): paper 003, Algorithm 1.

    Parameters
    ----------
    original, anonymized
        ``(n, m)`` rank keys of X and Y (numeric values or category positions),
        same shape.
    random_state
        Breaks ties among Y's values (default seed 0): the intruder's own
        randomness, not a secret.

    Returns
    -------
    ReverseMappingResult

    Examples
    --------
    >>> x = np.array([[1.0], [2.0], [3.0]])
    >>> y = np.array([[2.9], [0.5], [7.0]])
    >>> reverse_map(x, y).z.ravel().tolist()
    [2.0, 1.0, 3.0]
    """
    x = check_matrix(original, "the original table X")
    y = check_matrix(anonymized, "the anonymized table Y")
    check_same_shape(x, y, "X", "Y", rows=True)
    rng = as_generator(random_state)
    n, m = x.shape
    source = np.empty((n, m), dtype=np.int64)
    z = np.empty((n, m), dtype=np.float64)
    corr = np.full(m, np.nan)
    # the random draws happen in column order, whatever the threads do
    y_ranks = tie_broken_rank_columns(y, rng)

    def column(j: int) -> None:
        x_order = np.argsort(x[:, j])
        source[:, j] = x_order[y_ranks[j]]
        z[:, j] = x[source[:, j], j]
        # Spearman's rho with average ranks for ties: Z_j holds X_j's values,
        # so Z's ranks are X's ranks carried along the permutation.
        blocks = ColumnBlocks.from_sorted(x[x_order, j])
        if n > 1 and blocks.unique.size > 1:
            lo, hi = blocks.position_blocks()
            rank_x = np.empty(n)
            rank_x[x_order] = (lo + hi) / 2.0
            corr[j] = np.corrcoef(rank_x, rank_x[source[:, j]])[0, 1]

    for_each_column(column, n, m)
    return ReverseMappingResult(
        z=z,
        source_rows=source,
        rank_correlation=corr,
        mean_abs_noise_y_x=np.abs(y - x).mean(axis=0),
        mean_abs_noise_y_z=np.abs(y - z).mean(axis=0),
    )
