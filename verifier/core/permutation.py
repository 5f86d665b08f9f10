"""Permutation distance and (d,v)-permuted privacy (SPEC section 4; paper 003, Def. 1-2, Alg. 2).

Given an original record x and an anonymized table Y (n records, m attributes):

1. for each attribute j, the *query block* ``Q_j = [qlo_j, qhi_j]`` is the block
   of the Y_j value closest to x_j (the hull of both blocks where two values
   are equally close);
2. ``dev[i, j]`` is the block gap between Q_j and the block of ``Y[i, j]``;
3. the *permutation distance* is ``d(x) = min_i max_j dev[i, j]`` and the
   *match set* is every i reaching it;
4. the *window* of attribute j at distance d is the sorted Y_j at 1-based
   positions ``[max(1, qlo_j - d), min(n, qhi_j + d)]``; its spread
   ``var_j(x, d)`` is the population variance (ddof 0) of the values, or of
   the category positions for an ordinal column, or the Gini-Simpson index
   ``1 - sum_c p_c^2`` for a nominal column;
5. Y satisfies (d, v)-permuted privacy w.r.t. x if ``d(x) >= d`` and
   ``var_j(x, d) > v_j`` for every j; at the data-set level ``D = min_x d(x)``
   and ``v_j = min_x var_j(x, D)``.

A single record is an O(n m) scan (:func:`compute_record_distance`). The data-set
level runs an exact nearest-neighbour search in rank space
(:class:`verifier.core.kdtree.RankTree`); :func:`compute_distances_bruteforce` and
:func:`compute_window_spread_bruteforce` are the plain versions the tests hold
it to.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

import numpy as np

from verifier.core.interrupts import held_signals
from verifier.core.validation import check_matrix, check_same_shape
from verifier.errors import InvalidInputError
from verifier.text import html_table, number
from verifier.compiling import compiling_pays
from verifier.core.match_sets import MatchSets, distinct_queries
from verifier.core.plain_index import PlainIndex
from verifier.core.window import RUNS_FROM, prefix_table, run_variance, two_pass_variance, window_moments
from verifier.core.ranks import ColumnBlocks, for_each_column

__all__ = [
    "RankSpace",
    "SortedColumns",
    "assemble_report",
    "RecordDistance",
    "SingleRecord",
    "SpaceRecord",
    "record_spread",
    "cell_spreads",
    "PermutedPrivacyReport",
    "DVPrivacyResult",
    "compute_record_distance",
    "compute_distances",
    "compute_distances_bruteforce",
    "compute_window_spread",
    "compute_window_spread_bruteforce",
    "compute_permuted_privacy",
    "check_dv_privacy",
    "spread_kind",
]

def spread_kind(kind: str) -> str:
    """What ``var_j`` means for a column kind: ``variance`` or ``gini_simpson``."""
    return "gini_simpson" if kind == "nominal" else "variance"


class SortedColumns:
    """What the window spreads need of Y: its sorted columns and their kinds (a distributed engine's space).

    :class:`RankSpace` is one, with the records' blocks; the distributed engine
    builds one from the sorted value ranges its workers return.
    """

    def __init__(self, columns: Sequence[ColumnBlocks], kinds: Sequence[str]):
        self.columns = list(columns)
        self.kinds = list(kinds)

    @property
    def n_records(self) -> int:
        return int(self.columns[0].n) if self.columns else 0

    @property
    def n_attributes(self) -> int:
        return len(self.columns)

    @property
    def spread_kinds(self) -> list[str]:
        return [spread_kind(k) for k in self.kinds]


class RankSpace(SortedColumns):
    """An anonymized table prepared for permutation-distance queries: its sorted columns and every record's blocks.

    Parameters
    ----------
    anonymized
        ``(n, m)`` rank keys of Y: values of numeric columns, category
        positions of ordinal and nominal ones.
    kinds
        The kind of each column (``numeric``, ``ordinal``, ``nominal``);
        decides how window spread is measured. Defaults to all numeric.
    """

    def __init__(self, anonymized: np.ndarray, kinds: Sequence[str] | None = None):
        y = check_matrix(anonymized, "the anonymized table Y")
        self.values = y
        n, m = y.shape
        self.kinds = list(kinds) if kinds is not None else ["numeric"] * m
        if len(self.kinds) != m:
            raise InvalidInputError(f"{len(self.kinds)} column kinds given for {m} attributes")
        # One argsort per column gives the sorted column and each record's
        # block (ties in argsort's order, which no result depends on).
        # Columns are independent, so they are ranked in two threads (numpy
        # sorts and the compiled pass release the GIL), each copied out of
        # the row-major table first; a table too small for the kernels takes
        # the plain twin, with nothing to compile.
        self.columns: list[ColumnBlocks] = [None] * m  # type: ignore[list-item]
        self.record_lo = np.empty((n, m), dtype=np.int64)
        self.record_hi = np.empty((n, m), dtype=np.int64)
        rank = ColumnBlocks.rank_into if compiling_pays(n) else ColumnBlocks.plain_rank_into

        def prepare(j: int) -> None:
            column = np.ascontiguousarray(y[:, j], dtype=np.float64)
            self.columns[j] = rank(column, j, self.record_lo, self.record_hi)

        for_each_column(prepare, n, m)

    @property
    def n_records(self) -> int:
        return int(self.values.shape[0])

    def query_blocks(self, originals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Query blocks ``(qlo, qhi)``, each ``(k, m)``, of k original records, read-only. The last records' are
        kept, so that the same records asked again (a release's claims, then every record's level) are not
        placed again; they are known again by their values, compared whole."""
        x = check_matrix(originals, "the original records")
        check_same_shape(x, self.values, "the original records", "Y", rows=False)
        last = self.__dict__.get("_last_queries")
        if last is not None and last[0].shape == x.shape and np.array_equal(last[0], x):
            return last[1], last[2]
        qlo = np.empty(x.shape, dtype=np.int64)
        qhi = np.empty(x.shape, dtype=np.int64)
        if compiling_pays(x.shape[0]):
            x = np.ascontiguousarray(x, dtype=np.float64)
            for j, col in enumerate(self.columns):
                col.query_into(x, j, qlo, qhi)
        else:
            for j, col in enumerate(self.columns):
                qlo[:, j], qhi[:, j] = col.query(x[:, j])
        for blocks in (qlo, qhi):
            blocks.setflags(write=False)
        self.__dict__["_last_queries"] = (_kept(x, np.float64), qlo, qhi)
        return qlo, qhi

    def deviations(self, qlo: np.ndarray, qhi: np.ndarray, records: np.ndarray) -> np.ndarray:
        """``dev[i, j]`` of the given records (0-based) to one query block row."""
        lo = self.record_lo[records]
        hi = self.record_hi[records]
        return np.maximum(0, np.maximum(lo - qhi, qlo - hi))

    def drop_tree(self) -> None:
        """Free the search index (its record blocks in tree order: 0.9 GB at 1e7 x 5); the next use builds it again."""
        self.__dict__.pop("tree", None)

    def match_sets(self, qlo: np.ndarray, qhi: np.ndarray, progress: Callable[[int, int], None] | None = None
                   ) -> tuple[np.ndarray, MatchSets]:
        """``(distances, sets)`` of every query block row: :attr:`tree` searches each distinct row once, and the
        sets keep each distinct row's match set once (:mod:`verifier.core.match_sets`). The last search is kept,
        so that the same queries asked again (a release's claims, then every record's level) are answered without
        searching twice; its arrays are read-only, shared by every caller. The queries are known again by their
        blocks, compared whole (the space keeps a read-only copy of the last ones only where the caller's could
        still change)."""
        last = self.__dict__.get("_last_search")
        if last is None or not (_same_blocks(last[0], qlo) and _same_blocks(last[1], qhi)):
            rows, first = distinct_queries(qlo, qhi)
            distances, offsets, records = self.tree.nearest(qlo[first], qhi[first], progress=progress)
            found = (distances[rows], MatchSets(rows, offsets, records))
            for a in (found[0], rows, offsets, records):
                a.setflags(write=False)
            last = (_kept(qlo), _kept(qhi), found)
            self.__dict__["_last_search"] = last
        return last[2]

    def nearest(self, qlo: np.ndarray, qhi: np.ndarray, progress: Callable[[int, int], None] | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(distances, offsets, matches)`` of every query block row, every match set written out (CSR), from
        :meth:`match_sets`; each caller gets its own arrays."""
        distances, sets = self.match_sets(qlo, qhi, progress)
        return (distances.copy(), *sets.listed())

    @cached_property
    def tree(self):
        """The exact nearest-neighbour index, built on first use: the compiled tree, over the distinct records
        where the table repeats many (:mod:`verifier.core.distinct_tree`), or below
        :data:`~verifier.compiling.PLAIN_BELOW` records the plain scan (same answers, nothing compiled)."""
        if not compiling_pays(self.n_records):
            return PlainIndex(self.record_lo, self.record_hi)
        from verifier.core.distinct_tree import distinct_tree_or_none
        from verifier.core.kdtree import RankTree

        most_values = max((col.unique.size for col in self.columns), default=0)
        collapsed = distinct_tree_or_none(self.record_lo, self.record_hi, most_values)
        return collapsed if collapsed is not None else RankTree(self.record_lo, self.record_hi)


def _kept(blocks: np.ndarray, dtype=np.int64) -> np.ndarray:
    """Query blocks (or records) a search remembers: the caller's own array where nobody can change it any more
    (read-only, and not a view of a writable one), else a read-only copy."""
    blocks = np.asarray(blocks)
    if not blocks.flags.writeable and blocks.base is None and blocks.dtype == dtype:
        return blocks
    out = np.array(blocks, dtype=dtype)
    out.setflags(write=False)
    return out


def _same_blocks(kept: np.ndarray, blocks: np.ndarray) -> bool:
    """Whether ``blocks`` are the remembered query blocks ``kept``, value for value."""
    return kept is blocks or (kept.shape == np.shape(blocks) and np.array_equal(kept, blocks))


@dataclass(frozen=True, eq=False)
class RecordDistance:
    """The permutation distance of one original record (SPEC section 4).

    ``matches`` are 0-based record numbers of Y, ascending; ``deviations`` has
    one row per match. ``query_lo``/``query_hi`` are the 1-based query blocks
    (the paper's boxed ranks when there are no ties).
    """

    distance: int
    matches: np.ndarray
    deviations: np.ndarray
    query_lo: np.ndarray
    query_hi: np.ndarray


def compute_record_distance(space: RankSpace, original: np.ndarray) -> RecordDistance:
    """Permutation distance, match set and deviations of one original record.

    An O(n m) scan of Y: the subject's computation (paper 003, Algorithm 2).

    Examples
    --------
    >>> y = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]])
    >>> r = compute_record_distance(RankSpace(y), np.array([1.1, 19.0]))
    >>> r.distance, r.matches.tolist(), r.deviations.tolist()
    (1, [0, 2], [[0, 1], [1, 0]])
    """
    x = np.asarray(original, dtype=np.float64).reshape(1, -1)
    qlo, qhi = space.query_blocks(x)
    worst = np.zeros(space.n_records, dtype=np.int64)
    for j in range(space.n_attributes):
        gap = np.maximum(space.record_lo[:, j] - qhi[0, j], qlo[0, j] - space.record_hi[:, j])
        np.maximum(worst, gap, out=worst)
    d = int(worst.min())
    matches = np.flatnonzero(worst == d)
    return RecordDistance(
        distance=d,
        matches=matches,
        deviations=space.deviations(qlo[0], qhi[0], matches),
        query_lo=qlo[0],
        query_hi=qhi[0],
    )


class SingleRecord:
    """One original record against Y without sorting Y (SPEC section 4; the subject's report).

    :func:`compute_record_distance` needs a :class:`RankSpace`, that is one
    full sort per column. A subject asks about one record, so only the ranks
    near hers matter:

    1. her query block on each column comes from a few linear passes (the
       values just below and at-or-above hers, and how many values lie under
       each);
    2. an upper bound ``U`` of her distance is the exact distance of one
       released record, the closest in standardized values;
    3. a record within ``U`` ranks of her on column j has a value between the
       order statistics at positions ``qlo_j - U`` and ``qhi_j + U``, found by
       linear selection (``np.partition``). Only the values between them are
       sorted, and only the records inside every such window are ranked
       exactly. The record that gave ``U`` is among them, so the minimum and
       every record reaching it are too: the result is exact;
    4. a window spread at distance ``t`` slices the same sorted values, or
       selects a wider window when ``t > U``.

    Results equal :func:`compute_record_distance` and
    :func:`compute_window_spread` (property tests hold them to the brute
    force). ``repr`` does not show the record.
    """

    def __init__(self, anonymized: np.ndarray, kinds: Sequence[str] | None, original: np.ndarray):
        y = check_matrix(anonymized, "the anonymized table Y")
        x = np.asarray(original, dtype=np.float64).reshape(-1)
        check_same_shape(x[None], y, "the original record", "Y", rows=False)
        if not np.isfinite(x).all():
            raise InvalidInputError("the original record holds a value that is not a finite number")
        n, m = y.shape
        self.kinds = list(kinds) if kinds is not None else ["numeric"] * m
        self._n = n
        self._columns: list[np.ndarray] = [None] * m  # type: ignore[list-item]
        qlo = np.empty(m, dtype=np.int64)
        qhi = np.empty(m, dtype=np.int64)
        gaps: list[np.ndarray] = [None] * m  # type: ignore[list-item]

        def first_pass(j: int) -> None:
            v = self._columns[j] = np.ascontiguousarray(y[:, j])
            qlo[j], qhi[j] = _single_query_block(v, float(x[j]))
            sample = v[:: max(1, n // 4096)]
            scale = float(sample.max() - sample.min()) or 1.0
            gaps[j] = np.abs(v - x[j]) / scale

        # columns are independent; numpy's passes, selections and sorts release the GIL
        for_each_column(first_pass, n, m)
        closest = gaps[0]
        for g in gaps[1:]:
            np.maximum(closest, g, out=closest)
        bound = self._distance_of(int(np.argmin(closest)), qlo, qhi)
        gaps.clear()  # n x m floats no longer needed
        # the sorted values at positions [a_j, b_j] of each column, and the records inside every window
        self._windows: list[tuple[int, int, int, np.ndarray]] = [None] * m  # type: ignore[list-item]
        masks: list[np.ndarray] = [None] * m  # type: ignore[list-item]

        def second_pass(j: int) -> None:
            v = self._columns[j]
            a, b = max(1, int(qlo[j]) - bound), min(n, int(qhi[j]) + bound)
            first, values, low, high = _sorted_window(v, a, b)
            self._windows[j] = (a, b, first, values)
            masks[j] = (v >= low) & (v <= high)

        for_each_column(second_pass, n, m)
        inside = masks[0]
        for mask in masks[1:]:
            inside &= mask
        candidates = np.flatnonzero(inside)
        dev = np.empty((candidates.size, m), dtype=np.int64)
        for j, (v, (_, _, first, values)) in enumerate(zip(self._columns, self._windows)):
            chosen = v[candidates]
            lo = first + np.searchsorted(values, chosen, side="left") + 1
            hi = first + np.searchsorted(values, chosen, side="right")
            dev[:, j] = np.maximum(0, np.maximum(lo - qhi[j], qlo[j] - hi))
        worst = dev.max(axis=1)
        d = int(worst.min())
        keep = worst == d
        self.result = RecordDistance(distance=d, matches=candidates[keep], deviations=dev[keep],
                                     query_lo=qlo, query_hi=qhi)

    def __repr__(self) -> str:
        return f"SingleRecord(n={self._n}, distance={self.result.distance})"

    def _distance_of(self, r: int, qlo: np.ndarray, qhi: np.ndarray) -> int:
        """The exact rank distance between her query blocks and released record r."""
        worst = 0
        for j, v in enumerate(self._columns):
            value = v[r]
            lo = int(np.count_nonzero(v < value)) + 1
            hi = int(np.count_nonzero(v <= value))
            worst = max(worst, lo - int(qhi[j]), int(qlo[j]) - hi)
        return worst

    def spread_at(self, d: int) -> np.ndarray:
        """``var_j(x, d)`` for every attribute, as :func:`compute_window_spread` defines it."""
        out = np.empty(len(self._columns))
        qlo, qhi = self.result.query_lo, self.result.query_hi
        for j, (v, (a, b, first, values)) in enumerate(zip(self._columns, self._windows)):
            lo, hi = max(1, int(qlo[j]) - int(d)), min(self._n, int(qhi[j]) + int(d))
            if not (a <= lo and hi <= b):
                first, values, _, _ = _sorted_window(v, lo, hi)
            window = values[lo - 1 - first : hi - first]
            out[j] = _single_spread(window, self.kinds[j])
        return out


class SpaceRecord:
    """One original record against a :class:`RankSpace` already built: :class:`SingleRecord`'s results.

    When the whole rank space exists anyway (the subject's random-match test
    needs it), her distance is one scan of its blocks and each spread a slice
    of its sorted columns, measured by the same function as
    :class:`SingleRecord`'s, so the two agree to the last bit.
    """

    def __init__(self, space: RankSpace, original: np.ndarray):
        self._space = space
        self.result = compute_record_distance(space, original)

    def __repr__(self) -> str:
        return f"SpaceRecord(n={self._space.n_records}, distance={self.result.distance})"

    def spread_at(self, d: int) -> np.ndarray:
        """``var_j(x, d)`` for every attribute, as :meth:`SingleRecord.spread_at`."""
        return record_spread(self._space, self.result.query_lo, self.result.query_hi, d)


def record_spread(space: RankSpace, qlo: np.ndarray, qhi: np.ndarray, d: int) -> np.ndarray:
    """``var_j(x, d)`` of one record's query blocks ``qlo``, ``qhi`` (``(m,)``), each window measured on its own:
    a subject's figure, which the bulk :func:`window_spreads` meets to within a few ulps."""
    lo, hi = _window(space, np.asarray(qlo)[None], np.asarray(qhi)[None], int(d))
    out = np.empty(len(space.columns))
    for j, col in enumerate(space.columns):
        out[j] = _single_spread(col.sorted[lo[0, j] : hi[0, j] + 1], space.kinds[j])
    return out


def cell_spreads(space: RankSpace, qlo: np.ndarray, qhi: np.ndarray, d: int, rows: np.ndarray,
                 cols: np.ndarray) -> np.ndarray:
    """:func:`record_spread`'s ``var_j(x, d)`` at the cells (record ``rows[i]``, attribute ``cols[i]``) of query
    blocks ``qlo``, ``qhi`` (``(k, m)``), each distinct window of an attribute measured once: records whose
    windows coincide (a tied column, where a third of a census shares one) share its figure. A window is known by
    one integer, its start times ``n`` plus its end (5.2 million cells of an additive-noise census at 1e6, 16
    distinct windows: 6.1 s to 0.5 s against a row-wise unique of the pairs)."""
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    n = space.n_records
    lo, hi = _window_bounds(n, qlo[rows, cols], qhi[rows, cols], int(d))
    out = np.empty(rows.size)
    for j in np.unique(cols).tolist():
        at = np.flatnonzero(cols == j)
        windows, where = np.unique(lo[at] * n + hi[at], return_inverse=True)  # 0 <= lo, hi < n
        column = space.columns[j].sorted
        figures = np.array([_single_spread(column[a:b + 1], space.kinds[j])
                            for a, b in zip((windows // n).tolist(), (windows % n).tolist())])
        out[at] = figures[where.ravel()]
    return out


def _single_query_block(v: np.ndarray, x: float) -> tuple[int, int]:
    """:meth:`ColumnBlocks.query` for one value, by linear passes over the unsorted column."""
    n = v.size
    under = v < x
    n_under = int(np.count_nonzero(under))
    blocks = []  # (distance, lo, hi) of the value just below x and of the one at or above it
    if n_under:
        below = float(np.max(v, where=under, initial=-np.inf))
        blocks.append((x - below, int(np.count_nonzero(v < below)) + 1, n_under))
    if n_under < n:
        above = float(np.min(v, where=~under, initial=np.inf))
        blocks.append((above - x, n_under + 1, int(np.count_nonzero(v <= above))))
    if len(blocks) == 1:
        return blocks[0][1], blocks[0][2]
    (d_left, lo_left, hi_left), (d_right, lo_right, hi_right) = blocks
    return (lo_left if d_left <= d_right else lo_right), (hi_right if d_right <= d_left else hi_left)


def _sorted_window(v: np.ndarray, a: int, b: int) -> tuple[int, np.ndarray, float, float]:
    """The values between the order statistics at 1-based positions a and b, sorted.

    Returns ``(first, values, low, high)``: ``values`` occupy the sorted
    positions ``first + 1 ... first + len(values)``, a superset of ``[a, b]``
    (ties at either end are kept whole).
    """
    picked = np.partition(v, [a - 1, b - 1]) if a != b else np.partition(v, a - 1)
    low, high = float(picked[a - 1]), float(picked[b - 1])
    values = np.sort(v[(v >= low) & (v <= high)])
    return int(np.count_nonzero(v < low)), values, low, high


def _single_spread(window: np.ndarray, kind: str) -> float:
    """The spread of one sorted window: population variance, or Gini-Simpson for a nominal column."""
    if window[0] == window[-1]:
        return 0.0
    if kind == "nominal":
        _, counts = np.unique(window, return_counts=True)
        p = counts / window.size
        return float(1.0 - np.sum(p * p))
    # scale by a power of two (exact) so that squares cannot overflow, then two passes
    shift = int(np.frexp(max(abs(window[0]), abs(window[-1])))[1])
    with np.errstate(over="ignore"):
        return float(np.ldexp(np.var(np.ldexp(window, -shift)), 2 * shift))


def compute_distances(space: RankSpace, originals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Permutation distance of every original record, by exact KD-tree search.

    Returns
    -------
    distances
        ``(k,)`` int64 ``d(x)`` of each original record.
    offsets, matches
        The match sets in CSR form, 0-based and ascending:
        ``matches[offsets[r]:offsets[r + 1]]`` for record r.
    """
    qlo, qhi = space.query_blocks(originals)
    return space.nearest(qlo, qhi)


def compute_distances_bruteforce(space: RankSpace, originals: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The plain O(k n m) pairwise scan: every original against every record."""
    x = check_matrix(originals, "the original records")
    distances = np.empty(x.shape[0], dtype=np.int64)
    matches = []
    for r in range(x.shape[0]):
        result = compute_record_distance(space, x[r])
        distances[r] = result.distance
        matches.append(result.matches)
    return distances, matches


def _window(space: RankSpace, qlo: np.ndarray, qhi: np.ndarray, d) -> tuple[np.ndarray, np.ndarray]:
    """0-based inclusive window positions ``(lo, hi)`` per query and attribute."""
    d = np.asarray(d, dtype=np.int64)
    return _window_bounds(space.n_records, qlo, qhi, d[:, None] if d.ndim == 1 else d)


def _window_bounds(n: int, qlo: np.ndarray, qhi: np.ndarray, d) -> tuple[np.ndarray, np.ndarray]:
    """0-based inclusive positions ``(lo, hi)`` of the windows at distance ``d`` around query blocks ``qlo``,
    ``qhi`` (broadcast alike) in a column of ``n`` values; :func:`~verifier.core.window.window_moments` computes
    the same bounds in its loop."""
    return np.maximum(1, qlo - d) - 1, np.minimum(n, qhi + d) - 1


def _numeric_spread(col: ColumnBlocks, qlo: np.ndarray, qhi: np.ndarray, distances: Sequence) -> list[np.ndarray]:
    """Population variance of every window of the column's query blocks ``qlo``, ``qhi`` at each distance.

    The column is scaled into [-1, 1] by a power of two (exact; no overflow
    even near 1e308) and centred on its median. Window sums come from
    compensated prefix sums, so ``S1`` and ``S2`` are accurate to a few ulps;
    the variance
    ``(S2 - S1^2 / k) / k`` then loses about ``eps * S2 / (S2 - S1^2/k)``,
    large only where the window's mean dwarfs its spread. Those windows are
    recomputed by the two-pass formula: value by value where they are narrow,
    run by run of equal values where they are wide (a wide one that the sums
    cannot decide lies mostly in one tied block, so it holds few runs; the
    runs are the column's blocks). A window whose first and last values are
    equal is exactly 0. The prefix sums are built once for every distance.
    """
    sorted_col = col.sorted
    n = sorted_col.size
    top = max(abs(sorted_col[0]), abs(sorted_col[-1]))
    if top == 0.0:
        return [np.zeros(qlo.shape) for _ in distances]
    # Scaling by a power of two is exact, and subtracting the median after it
    # keeps every low bit that holds a narrow window's spread.
    shift = int(np.frexp(top)[1])
    z = np.ldexp(sorted_col, -shift)
    z = z - z[z.size // 2]
    # a short column runs the kernels' own Python (the same arithmetic, step by step): compiling would not pay
    compiled = compiling_pays(n)
    kernels = (prefix_table, window_moments, two_pass_variance, run_variance)
    prefix, moments, two_pass, runs = kernels if compiled else tuple(k.py_func for k in kernels)
    qlo = np.ascontiguousarray(qlo, dtype=np.int64)
    qhi = np.ascontiguousarray(qhi, dtype=np.int64)
    with held_signals():
        table = prefix(z)
    out = []
    for d in distances:
        d = np.ascontiguousarray(np.reshape(d, -1), dtype=np.int64)
        with held_signals():
            var, flag = moments(table, sorted_col, qlo, qhi, d, n)
        suspect = np.flatnonzero(flag == 2)
        if suspect.size:
            lo, hi = _window_bounds(n, qlo[suspect], qhi[suspect], d if d.size == 1 else d[suspect])
            wide = hi - lo + 1 >= RUNS_FROM
            with held_signals():
                var[suspect[~wide]] = two_pass(z, lo[~wide], hi[~wide])
                # each block of equal values is a run (two blocks may share a value in z: still runs)
                var[suspect[wide]] = runs(z, col.lo - 1, lo[wide], hi[wide])
        with np.errstate(over="ignore"):
            out.append(np.ldexp(var, 2 * shift))
    return out


def _gini_simpson(col: ColumnBlocks, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``1 - sum_c p_c^2`` of the categories in each window, from block counts."""
    sizes = (col.hi - col.lo + 1).astype(np.float64)
    sq = np.concatenate(([0.0], np.cumsum(sizes * sizes)))
    b1 = np.searchsorted(col.hi, lo + 1)  # block holding position lo (0-based)
    b2 = np.searchsorted(col.hi, hi + 1)
    k = (hi - lo + 1).astype(np.float64)
    n1 = (col.hi[b1] - lo).astype(np.float64)
    n2 = (hi + 2 - col.lo[b2]).astype(np.float64)
    inner = sq[np.maximum(b2, b1 + 1)] - sq[np.minimum(b1 + 1, b2)]
    same = b1 == b2
    total = np.where(same, k * k, n1 * n1 + n2 * n2 + inner)
    out = 1.0 - total / (k * k)
    out[same] = 0.0
    return out


def compute_window_spread(space: RankSpace, qlo: np.ndarray, qhi: np.ndarray, d) -> np.ndarray:
    """``var_j(x, d)`` for query blocks ``(k, m)`` and a distance (scalar or per query).

    Returns a ``(k, m)`` float array: population variance for numeric and
    ordinal columns, Gini-Simpson index for nominal ones. A value too large
    for a float (spread of values near 1e308) comes back as ``inf``.
    """
    return window_spreads(space, qlo, qhi, [d])[0]


def window_spreads(space: "RankSpace | SortedColumns", qlo: np.ndarray, qhi: np.ndarray,
                   distances: Sequence) -> list[np.ndarray]:
    """:func:`compute_window_spread` at each of several distances, each column prepared once.

    For the query blocks a :class:`RankSpace` has kept (:meth:`RankSpace.query_blocks`), the spreads at one
    distance for every query are kept too, and given again as a copy: the permuted-privacy report and then every
    record's claim check ask for the spreads at the data-set distance D of the same records."""
    kept = space.__dict__.get("_last_queries") if isinstance(space, RankSpace) else None
    if kept is None or qlo is not kept[1] or qhi is not kept[2]:
        return _window_spreads(space, qlo, qhi, distances)
    spreads = space.__dict__.setdefault("_spreads", {})
    if spreads.get("blocks") is not kept[1]:  # other records were placed since: what was kept is theirs
        spreads.clear()
        spreads["blocks"] = kept[1]
    one = [np.ndim(d) == 0 for d in distances]
    missing = [d for d, single in zip(distances, one) if not (single and int(d) in spreads)]
    found = iter(_window_spreads(space, qlo, qhi, missing) if missing else [])
    out = []
    for d, single in zip(distances, one):
        if single and int(d) in spreads:
            out.append(spreads[int(d)].copy())
            continue
        out.append(next(found))
        if single:
            spreads[int(d)] = out[-1].copy()
    return out


def _window_spreads(space: "RankSpace | SortedColumns", qlo: np.ndarray, qhi: np.ndarray,
                    distances: Sequence) -> list[np.ndarray]:
    """:func:`window_spreads`, computed."""
    out = [np.empty(qlo.shape, dtype=np.float64) for _ in distances]
    n = space.n_records
    for j, col in enumerate(space.columns):
        if space.kinds[j] == "nominal":
            for spread, d in zip(out, distances):
                spread[:, j] = _gini_simpson(col, *_window_bounds(n, qlo[:, j], qhi[:, j], np.asarray(d, np.int64)))
        else:
            for spread, column in zip(out, _numeric_spread(col, qlo[:, j], qhi[:, j], distances)):
                spread[:, j] = column
    return out


def compute_window_spread_bruteforce(space: RankSpace, qlo: np.ndarray, qhi: np.ndarray, d) -> np.ndarray:
    """Plain reference of :func:`compute_window_spread`: slice, then ``np.var`` or count."""
    lo, hi = _window(space, qlo, qhi, d)
    out = np.empty(lo.shape, dtype=np.float64)
    for r in range(lo.shape[0]):
        for j, col in enumerate(space.columns):
            window = col.sorted[lo[r, j] : hi[r, j] + 1]
            if space.kinds[j] == "nominal":
                _, counts = np.unique(window, return_counts=True)
                p = counts / window.size
                out[r, j] = 1.0 - float(np.sum(p * p))
            else:
                out[r, j] = float(np.var(window))
    return out


@dataclass(frozen=True, eq=False)
class PermutedPrivacyReport:
    """(d,v)-permuted privacy of a whole data set (paper 003, Def. 2; Table 4).

    Per original record (0-based arrays, records in input order): its distance,
    match set (CSR), query blocks, and the window spread at the data-set
    distance D and at its own distance d(x). At the data-set level: D and the
    data-set spreads ``v_j = min_x var_j(x, D)``.
    """

    distances: np.ndarray
    match_sets: MatchSets
    query_lo: np.ndarray
    query_hi: np.ndarray
    spread_at_dataset_distance: np.ndarray
    spread_at_record_distance: np.ndarray
    dataset_distance: int
    dataset_spread: np.ndarray
    spread_kinds: list[str]

    def record_matches(self, r: int) -> np.ndarray:
        return self.match_sets.of(r)

    @property
    def match_counts(self) -> np.ndarray:
        """The size of every record's match set."""
        return self.match_sets.counts

    @cached_property
    def _listed(self) -> tuple[np.ndarray, np.ndarray]:
        return self.match_sets.listed()

    @property
    def match_offsets(self) -> np.ndarray:
        """Every record's match set written out (CSR offsets into :attr:`matches`): as large as the sets listed
        record by record, which on a tied census is far larger than :attr:`match_sets`."""
        return self._listed[0]

    @property
    def matches(self) -> np.ndarray:
        """The released records of every match set, record after record (see :attr:`match_offsets`)."""
        return self._listed[1]

    def check_dv(
        self, space: RankSpace, *, d: int, v: Sequence[float], record: int | None = None
    ) -> "DVPrivacyResult":
        """:func:`check_dv_privacy` from this report's distances and query blocks.

        ``space`` must be the release the report was computed on. ``record``
        (0-based) checks one record (Def. 1); ``None`` the whole data set (Def. 2).
        """
        d, v = _dv_arguments(d, v, space.n_attributes)
        rows = slice(None) if record is None else slice(record, record + 1)
        spread = compute_window_spread(space, self.query_lo[rows], self.query_hi[rows], d).min(axis=0)
        return _dv_verdict(d, v, int(self.distances[rows].min()), spread)


def compute_permuted_privacy(
    space: RankSpace, originals: np.ndarray, *, progress: Callable[[int, int], None] | None = None,
    keep_tree: bool = True,
) -> PermutedPrivacyReport:
    """Permutation distances, match sets and spreads of every original record.

    ``originals`` is X (``(n_x, m)`` rank keys), ``space`` holds Y.
    ``progress(done, total)`` is called as pieces of records finish. With
    ``keep_tree`` false the space's search index is freed once the search is
    done, before the spreads, for a caller that will not search again.
    """
    qlo, qhi = space.query_blocks(originals)
    del originals  # the caller may hold no other reference: X is not needed past its query blocks
    for blocks in (qlo, qhi):  # the report's, and the search remembers them without a copy
        blocks.setflags(write=False)
    distances, sets = space.match_sets(qlo, qhi, progress=progress)
    if not keep_tree:
        space.drop_tree()
    return assemble_report(space, qlo, qhi, distances, sets)


def assemble_report(space: "RankSpace | SortedColumns", qlo: np.ndarray, qhi: np.ndarray, distances: np.ndarray,
                    sets: MatchSets) -> PermutedPrivacyReport:
    """The report from the distances and match sets (however found): D, and the spreads at D and at each d(x)."""
    dataset_distance = int(distances.min())
    at_dataset, at_record = window_spreads(space, qlo, qhi, [dataset_distance, distances])
    return PermutedPrivacyReport(
        distances=distances,
        match_sets=sets,
        query_lo=qlo,
        query_hi=qhi,
        spread_at_dataset_distance=at_dataset,
        spread_at_record_distance=at_record,
        dataset_distance=dataset_distance,
        dataset_spread=at_dataset.min(axis=0),
        spread_kinds=space.spread_kinds,
    )


@dataclass(frozen=True, repr=False)
class DVPrivacyResult:
    """Whether (d, v)-permuted privacy holds (paper 003, Def. 1 or 2).

    True in a boolean context when both conditions hold. ``spread`` is
    ``var_j(x, d)`` (record level) or the data-set spread at distance ``d``.
    """

    d: int
    v: tuple[float, ...]
    distance: int
    spread: tuple[float, ...]
    distance_ok: bool
    spread_ok: tuple[bool, ...]

    @property
    def satisfied(self) -> bool:
        return self.distance_ok and all(self.spread_ok)

    def __bool__(self) -> bool:
        return self.satisfied

    def __repr__(self) -> str:
        def numbers(values) -> str:
            return "(" + ", ".join(number(t) for t in values) + ")"

        return (f"DVPrivacyResult(satisfied={self.satisfied}, d={self.d}, distance={self.distance}, "
                f"v={numbers(self.v)}, spread={numbers(self.spread)})")

    def _repr_html_(self) -> str:
        rows = [("(d, v)-permuted privacy", "holds" if self.satisfied else "fails"),
                ("d", number(self.d)), ("distance", f"{number(self.distance)} ({'ok' if self.distance_ok else 'below d'})")]
        rows += [(f"attribute {j + 1}: spread against v", f"{number(s)} against {number(t)} ({'ok' if ok else 'below v'})")
                 for j, (s, t, ok) in enumerate(zip(self.spread, self.v, self.spread_ok))]
        return html_table(rows, "(d, v)-permuted privacy (paper 003, Def. 1-2)")


def _dv_arguments(d, v: Sequence[float], n_attributes: int) -> tuple[int, tuple[float, ...]]:
    """Validate the (d, v) of a check before anything is computed."""
    if int(d) != d or d < 0:
        raise InvalidInputError(f"d must be a non-negative integer. Got {d!r} instead.")
    v = tuple(float(t) for t in v)
    if len(v) != n_attributes or not all(np.isfinite(v)) or min(v) < 0:
        raise InvalidInputError(
            f"v must hold {n_attributes} finite non-negative numbers, one per attribute. Got {v!r} instead."
        )
    return int(d), v


def _dv_verdict(d: int, v: tuple[float, ...], distance: int, spread: np.ndarray) -> DVPrivacyResult:
    return DVPrivacyResult(
        d=d,
        v=v,
        distance=int(distance),
        spread=tuple(float(s) for s in spread),
        distance_ok=distance >= d,
        spread_ok=tuple(bool(s > t) for s, t in zip(spread, v)),
    )


def check_dv_privacy(
    space: RankSpace, originals: np.ndarray, *, d: int, v: Sequence[float]
) -> DVPrivacyResult:
    """Check (d, v)-permuted privacy of Y w.r.t. one record or a whole data set.

    With one record x (a 1-D array): ``d(x) >= d`` and ``var_j(x, d) > v_j``
    for every j (Def. 1). With several records (2-D): the same for every
    record, that is ``D >= d`` and ``min_x var_j(x, d) > v_j`` (Def. 2).
    A failed check is a result, never an exception. Where the distances are
    already known, :meth:`PermutedPrivacyReport.check_dv` gives the same
    result without searching again.
    """
    d, v = _dv_arguments(d, v, space.n_attributes)
    x = np.asarray(originals, dtype=np.float64)
    x2 = x.reshape(1, -1) if x.ndim == 1 else x
    qlo, qhi = space.query_blocks(x2)
    distance = int(space.tree.nearest(qlo, qhi)[0].min()) if x2.shape[0] > 1 else (
        compute_record_distance(space, x2[0]).distance
    )
    return _dv_verdict(d, v, distance, compute_window_spread(space, qlo, qhi, d).min(axis=0))
