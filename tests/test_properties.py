"""Property tests of SPEC section 4: the fast path equals brute force, and the
invariants of the permutation distance hold, on random tables of 1-300 rows
and 1-6 attributes, continuous and heavily tied."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier import RankSpace, compute_distances, compute_permuted_privacy
from verifier.core.permutation import (
    compute_distances_bruteforce,
    compute_window_spread,
    compute_window_spread_bruteforce,
)
from verifier.core.ranks import reverse_map

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KINDS = ("numeric", "ordinal", "nominal")


@st.composite
def tables(draw, *, min_rows=1):
    """(X, Y, kinds): continuous noise, or few distinct integer values (heavy ties)."""
    n = draw(st.integers(min_rows, 300))
    m = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    tied = draw(st.booleans())
    rng = np.random.default_rng(seed)
    if tied:
        levels = draw(st.integers(1, 5))
        x = rng.integers(0, levels, size=(n, m)).astype(float)
        y = np.clip(x + rng.integers(-1, 2, size=(n, m)), 0, levels).astype(float)
        kinds = [draw(st.sampled_from(KINDS)) for _ in range(m)]
    else:
        x = rng.normal(size=(n, m)) * rng.uniform(0.1, 1e3, size=m)
        y = x + rng.normal(size=(n, m)) * rng.uniform(0.0, 2.0) * x.std(axis=0, keepdims=True)
        kinds = ["numeric"] * m
    return x, y, kinds, rng


@SETTINGS
@given(tables())
def test_fast_path_equals_brute_force(case):
    x, y, kinds, _ = case
    space = RankSpace(y, kinds)
    distances, offsets, matches = compute_distances(space, x)
    ref_distances, ref_matches = compute_distances_bruteforce(space, x)
    assert distances.tolist() == ref_distances.tolist()
    for r, ref in enumerate(ref_matches):
        assert matches[offsets[r]:offsets[r + 1]].tolist() == ref.tolist()


@SETTINGS
@given(tables(), st.integers(1, 40))
def test_the_tree_and_the_plain_index_give_the_same_answers(case, k):
    """Below PLAIN_BELOW records the plain scan answers instead of the compiled tree: the same distances and the
    same match sets in the same order, on every table (and both equal the per-record brute force above)."""
    from verifier.core.kdtree import RankTree
    from verifier.core.plain_index import PlainIndex

    x, y, kinds, rng = case
    space = RankSpace(y, kinds)
    queries = np.vstack([x, y[rng.integers(0, y.shape[0], size=k)]])
    qlo, qhi = space.query_blocks(queries)
    tree, plain = RankTree(space.record_lo, space.record_hi), PlainIndex(space.record_lo, space.record_hi)
    for got, want in zip(plain.nearest(qlo, qhi), tree.nearest(qlo, qhi)):
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert plain.distances(qlo, qhi).tolist() == tree.distances(qlo, qhi).tolist()


@SETTINGS
@given(tables(), st.integers(1, 40), st.integers(1, 6))
def test_the_tree_over_distinct_records_gives_the_plain_index_answers(case, k, copies):
    """The tree over the distinct records, each standing for its copies, answers as the plain scan: the same
    distances and the same match sets in the same (ascending) order, with every record repeated up to ``copies``
    times in a shuffled table, as microaggregation repeats its means."""
    from verifier.core.distinct_tree import DistinctTree
    from verifier.core.match_sets import distinct_queries
    from verifier.core.plain_index import PlainIndex

    x, y, kinds, rng = case
    y = y[rng.permutation(np.repeat(np.arange(y.shape[0]), rng.integers(1, copies + 1, size=y.shape[0])))]
    space = RankSpace(y, kinds)
    queries = np.vstack([x, y[rng.integers(0, y.shape[0], size=k)]])
    qlo, qhi = space.query_blocks(queries)
    rows, first = distinct_queries(space.record_lo, space.record_hi)
    tree, plain = DistinctTree(space.record_lo, space.record_hi, rows, first), PlainIndex(space.record_lo, space.record_hi)
    assert tree.n_distinct == len({tuple(r) for r in space.record_lo.tolist()})
    for got, want in zip(tree.nearest(qlo, qhi), plain.nearest(qlo, qhi)):
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert tree.distances(qlo, qhi).tolist() == plain.distances(qlo, qhi).tolist()


@SETTINGS
@given(tables(), st.integers(0, 8), st.booleans())
def test_the_serial_and_the_parallel_search_kernels_agree(case, cap, ties):
    """A small batch of queries runs the search compiled without parfors: the same code, the same answers."""
    from verifier.core import kdtree

    x, y, kinds, _ = case
    space = RankSpace(y, kinds)
    qlo, qhi = space.query_blocks(x)
    tree = kdtree.RankTree(space.record_lo, space.record_hi)
    qlo, qhi = kdtree.padded(qlo), kdtree.padded(qhi)
    serial = kdtree._nearest_serial(qlo, qhi, cap, ties, *tree._tree)
    parallel = kdtree._nearest(qlo, qhi, cap, ties, *tree._tree)
    assert serial[0].tolist() == parallel[0].tolist()
    if ties:  # without ties only the distances are meant (the counts and the buffer are left as they fall)
        assert serial[1].tolist() == parallel[1].tolist()
        kept = np.minimum(serial[1], cap)
        assert all(serial[2][q, :k].tolist() == parallel[2][q, :k].tolist() for q, k in enumerate(kept))


@pytest.mark.parametrize("tied", [False, True])
def test_above_the_plain_size_the_tree_answers_as_brute_force(tied):
    """At PLAIN_BELOW + 952 records the space searches with the compiled tree (over the distinct records where the
    table is tied) and the spreads run the compiled kernels; both equal the plain computations."""
    from verifier.compiling import PLAIN_BELOW
    from verifier.core.distinct_tree import DistinctTree
    from verifier.core.kdtree import RankTree

    rng = np.random.default_rng(11 + tied)
    n = PLAIN_BELOW + 952
    x = rng.integers(0, 6, size=(n, 3)).astype(float) if tied else rng.normal(size=(n, 3))
    y = x + (rng.integers(-1, 2, size=(n, 3)) if tied else rng.normal(size=(n, 3)) * 0.3)
    space = RankSpace(y)
    assert isinstance(space.tree, DistinctTree if tied else RankTree)  # 7**3 distinct records at most when tied
    distances, offsets, matches = compute_distances(space, x[:300])
    ref_distances, ref_matches = compute_distances_bruteforce(space, x[:300])
    assert distances.tolist() == ref_distances.tolist()
    assert all(matches[offsets[r]:offsets[r + 1]].tolist() == ref.tolist() for r, ref in enumerate(ref_matches))


@SETTINGS
@given(st.integers(1, 3000), st.integers(0, 2**32 - 1), st.booleans())
def test_the_spread_kernels_and_their_python_are_the_same_to_the_bit(n, seed, tied):
    """A short column runs the spread kernels' own Python: the same floating-point result, bit for bit. And the
    fused window kernel gives, bit for bit, what numpy's whole-array arithmetic gave from the same prefix sums
    (the spreads before issue 30's kernel): the same windows, the same flags."""
    from verifier.core.window import prefix_table, two_pass_variance, window_moments

    rng = np.random.default_rng(seed)
    z = np.sort(rng.integers(-3, 4, n).astype(float) if tied else rng.normal(size=n) * 10.0 ** rng.integers(-5, 5))
    lo = rng.integers(0, n, 50)
    hi = np.minimum(n - 1, lo + rng.integers(0, 30, 50))
    table = prefix_table(z)
    assert prefix_table.py_func(z).tobytes() == table.tobytes()
    assert two_pass_variance.py_func(z, lo, hi).tobytes() == two_pass_variance(z, lo, hi).tobytes()
    # windows given as query blocks and a distance: one for all, or one each
    qlo, qhi = np.sort(rng.integers(1, n + 1, (2, 50)), axis=0)
    for d in (np.array([int(rng.integers(0, 40))]), rng.integers(0, 40, 50)):
        var, flag = window_moments(table, z, qlo, qhi, d, n)
        py_var, py_flag = window_moments.py_func(table, z, qlo, qhi, d, n)
        assert py_var.tobytes() == var.tobytes() and py_flag.tolist() == flag.tolist()
        a, b = np.maximum(1, qlo - d) - 1, np.minimum(n, qhi + d) - 1
        s1 = (table[b + 1, 0] - table[a, 0]) + (table[b + 1, 1] - table[a, 1])
        s2 = (table[b + 1, 2] - table[a, 2]) + (table[b + 1, 3] - table[a, 3])
        k = (b - a + 1).astype(np.float64)
        m2 = s2 - s1 * s1 / k
        constant = z[a] == z[b]
        want = np.maximum(m2, 0.0) / k
        want[constant] = 0.0
        assert var.tobytes() == want.tobytes()
        assert (flag == 1).tolist() == constant.tolist()
        assert (flag == 2).tolist() == ((~constant) & (m2 <= 1e-6 * s2)).tolist()


@SETTINGS
@given(st.integers(1, 300), st.integers(0, 2**32 - 1), st.booleans())
def test_the_compiled_query_blocks_are_numpys(n, seed, tied):
    """Above PLAIN_BELOW queries the query blocks come from a compiled kernel: the same blocks as the numpy
    method, with values between two column values, exactly halfway (the hull of both blocks), equal to one,
    and outside the column at either end."""
    from verifier.core.ranks import ColumnBlocks, query_kernel

    rng = np.random.default_rng(seed)
    column = rng.integers(-5, 6, n).astype(float) if tied else np.round(rng.normal(size=n), 1)
    col = ColumnBlocks.from_values(column)
    u = col.unique
    x = np.concatenate([u, (u[:-1] + u[1:]) / 2, u - 0.01, u + 0.01, [u[0] - 7.0, u[-1] + 7.0, -0.0],
                        rng.normal(size=40) * 3])
    table = np.stack([x, x[::-1]], axis=1)
    qlo, qhi = np.zeros(table.shape, np.int64), np.zeros(table.shape, np.int64)
    for j in range(2):
        for kernel in (query_kernel, query_kernel.py_func):
            kernel(col.unique, col.lo, col.hi, table, j, qlo, qhi)
            want_lo, want_hi = col.query(table[:, j])
            assert qlo[:, j].tolist() == want_lo.tolist() and qhi[:, j].tolist() == want_hi.tolist()
            qlo[:], qhi[:] = 0, 0


@SETTINGS
@given(tables(), st.booleans())
def test_the_compiled_ranking_is_the_numpy_ranking(case, signed_zeros):
    """Above PLAIN_BELOW records each column is ranked in one compiled pass (ColumnBlocks.rank_into): the same
    sorted column, blocks and record blocks as its numpy twin, with ties, -0.0 beside 0.0 and one-value columns."""
    from verifier.core.ranks import ColumnBlocks

    _, y, _, rng = case
    if signed_zeros:  # -0.0 and 0.0 compare equal and share one block, whichever the sort puts first
        y = np.where(rng.random(y.shape) < 0.3, rng.choice([0.0, -0.0], size=y.shape), y)
    n, m = y.shape
    tables = {rank: (np.zeros((n, m), np.int64), np.zeros((n, m), np.int64))
              for rank in (ColumnBlocks.rank_into, ColumnBlocks.plain_rank_into)}
    for j in range(m):
        column = np.ascontiguousarray(y[:, j])
        fast, plain = (rank(column, j, *tables[rank]) for rank in tables)
        assert fast.sorted.tobytes() == plain.sorted.tobytes() and fast.unique.tobytes() == plain.unique.tobytes()
        assert fast.lo.tolist() == plain.lo.tolist() and fast.hi.tolist() == plain.hi.tolist()
        assert fast.lo.dtype == plain.lo.dtype == fast.hi.dtype == plain.hi.dtype == np.int64
    (fast_lo, fast_hi), (plain_lo, plain_hi) = tables.values()
    assert fast_lo.tolist() == plain_lo.tolist() and fast_hi.tolist() == plain_hi.tolist()
    assert (fast_lo >= 1).all() and (fast_hi <= n).all() and (fast_lo <= fast_hi).all()


@SETTINGS
@given(tables(), st.integers(0, 400))
def test_window_spread_equals_brute_force(case, d):
    x, y, kinds, _ = case
    space = RankSpace(y, kinds)
    qlo, qhi = space.query_blocks(x)
    fast = compute_window_spread(space, qlo, qhi, d)
    slow = compute_window_spread_bruteforce(space, qlo, qhi, d)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-12 * max(1.0, float(np.abs(y).max()) ** 2))


@SETTINGS
@given(tables())
def test_distance_of_y_to_itself_is_zero(case):
    _, y, kinds, _ = case
    space = RankSpace(y, kinds)
    distances, offsets, matches = compute_distances(space, y)
    assert (distances == 0).all()
    for r in range(y.shape[0]):
        assert r in matches[offsets[r]:offsets[r + 1]]


@SETTINGS
@given(tables())
def test_distance_is_between_0_and_n_minus_1(case):
    x, y, kinds, _ = case
    distances, _, _ = compute_distances(RankSpace(y, kinds), x)
    assert ((distances >= 0) & (distances <= y.shape[0] - 1)).all()


@SETTINGS
@given(tables())
def test_shuffling_the_release_permutes_matches_only(case):
    x, y, kinds, rng = case
    perm = rng.permutation(y.shape[0])
    before = compute_permuted_privacy(RankSpace(y, kinds), x)
    after = compute_permuted_privacy(RankSpace(y[perm], kinds), x)
    assert after.distances.tolist() == before.distances.tolist()
    assert after.dataset_distance == before.dataset_distance
    np.testing.assert_array_equal(after.dataset_spread, before.dataset_spread)
    inverse = np.argsort(perm)  # row i of y is row inverse[i] of y[perm]
    for r in range(x.shape[0]):
        assert sorted(inverse[before.record_matches(r)].tolist()) == after.record_matches(r).tolist()


@SETTINGS
@given(tables(), st.sampled_from(["exp", "cube", "sigmoid", "affine"]))
def test_strictly_increasing_map_of_both_tables(case, name):
    """Ranks only see order. For a pure permutation release (Y a per-column
    permutation of X, as after reverse mapping) any strictly increasing map of a
    column of X and Y leaves everything unchanged. For a noisy release the
    closest value is by absolute difference, which only maps that preserve
    differences exactly keep: an affine map by a power of two on integer data."""
    x, y, kinds, rng = case
    j = int(rng.integers(0, x.shape[1]))
    if name == "affine":
        x = np.round(x * 8)
        y = np.round(y * 8)
        fx, fy = x.copy(), y.copy()
        fx[:, j] = 4.0 * x[:, j] + 12.0
        fy[:, j] = 4.0 * y[:, j] + 12.0
    else:
        y = reverse_map(x, y).z  # a pure permutation of X
        scale = max(1.0, float(np.abs(x[:, j]).max()))
        f = {"exp": lambda t: np.exp(t / scale), "cube": lambda t: (t / scale) ** 3 + t / scale,
             "sigmoid": lambda t: 1.0 / (1.0 + np.exp(-t / scale))}[name]
        fx, fy = x.copy(), y.copy()
        fx[:, j], fy[:, j] = f(x[:, j]), f(y[:, j])
    base = compute_distances(RankSpace(y, kinds), x)
    mapped = compute_distances(RankSpace(fy, kinds), fx)
    for a, b in zip(base, mapped):
        assert a.tolist() == b.tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.sampled_from([1e-300, 1.0, 1e9, 1e150]))
def test_window_spread_at_extreme_magnitudes(n, seed, magnitude):
    """No overflow, no catastrophic cancellation (spec/reliability.md section 5)."""
    rng = np.random.default_rng(seed)
    y = magnitude * (1 + rng.integers(0, 4, size=(n, 1)) * 1e-3)
    space = RankSpace(y)
    qlo, qhi = space.query_blocks(y)
    fast = compute_window_spread(space, qlo, qhi, 2)
    # the reference works on values scaled to 1, where np.var is accurate
    slow = compute_window_spread_bruteforce(RankSpace(y / magnitude), qlo, qhi, 2) * magnitude**2
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-300)


def test_window_spread_near_the_float_limit():
    """A constant column of 1.38e307 has spread exactly 0; a spread beyond the
    largest float is reported as infinite (the CLI prints it as undefined/null),
    never NaN and never an exception."""
    constant = np.full((4, 1), 1.38e307)
    space = RankSpace(constant)
    qlo, qhi = space.query_blocks(constant)
    assert compute_window_spread(space, qlo, qhi, 3).ravel().tolist() == [0.0] * 4
    wide = np.array([[-1.5e308], [0.0], [1.5e308]])
    space = RankSpace(wide)
    qlo, qhi = space.query_blocks(wide)
    spread = compute_window_spread(space, qlo, qhi, 2)
    assert np.isinf(spread).all() and not np.isnan(spread).any()


def test_constant_and_near_constant_windows_are_exact():
    col = np.full((3, 1), 0.1)
    space = RankSpace(col)
    qlo, qhi = space.query_blocks(col)
    assert compute_window_spread(space, qlo, qhi, 5).tolist() == [[0.0]] * 3  # np.var gives 1.9e-34
    offset = (1e9 + np.array([4.0, 7.0, 13.0, 16.0])).reshape(-1, 1)
    space = RankSpace(offset)
    qlo, qhi = space.query_blocks(offset[:1])
    assert compute_window_spread(space, qlo, qhi, 3)[0, 0] == 22.5  # naive E[x^2]-E[x]^2 gives -128


def test_nominal_spread_is_gini_simpson():
    y = np.array([[0.0], [0.0], [1.0], [2.0], [2.0], [2.0]])
    space = RankSpace(y, ["nominal"])
    qlo, qhi = space.query_blocks(np.array([[1.0]]))
    # window at d = 5 is everything: p = (2, 1, 3) / 6
    assert compute_window_spread(space, qlo, qhi, 5)[0, 0] == 1 - (4 + 1 + 9) / 36
    assert compute_window_spread(space, qlo, qhi, 0)[0, 0] == 0.0


def test_ties_resolved_in_the_intruders_favour():
    """SPEC section 2: the deviation is the gap between blocks, the least any tie-break gives."""
    y = np.array([[1.0], [2.0], [2.0], [2.0], [3.0]])
    space = RankSpace(y)
    # x = 1 sits in block [1, 1]; 3 sits in block [5, 5]; 2 fills [2, 4]
    assert space.deviations(np.array([1]), np.array([1]), np.arange(5)).ravel().tolist() == [0, 1, 1, 1, 4]


@SETTINGS
@given(tables(min_rows=2))
def test_reverse_map_is_a_per_column_permutation_with_scipy_spearman(case):
    from scipy import stats

    x, y, _, _ = case
    result = reverse_map(x, y, random_state=5)
    for j in range(x.shape[1]):
        assert sorted(result.z[:, j]) == sorted(x[:, j])  # keeps X's marginal exactly
        # Z keeps Y's rank order: y_a < y_b implies z_a <= z_b (tied y's may go either way)
        values = np.unique(y[:, j])
        group_max = [result.z[y[:, j] == v, j].max() for v in values]
        group_min = [result.z[y[:, j] == v, j].min() for v in values]
        assert all(a <= b for a, b in zip(group_max[:-1], group_min[1:]))
        with warnings.catch_warnings():  # scipy warns on the constant columns checked below
            warnings.simplefilter("ignore", stats.ConstantInputWarning)
            expected = stats.spearmanr(x[:, j], result.z[:, j]).statistic
        if np.isnan(expected):
            assert np.isnan(result.rank_correlation[j])
        else:
            assert result.rank_correlation[j] == pytest.approx(expected, abs=1e-12)
    same = reverse_map(x, y, random_state=5)
    assert np.array_equal(same.z, result.z)  # the intruder's seed makes it reproducible


@SETTINGS
@given(tables(), st.integers(0, 50), st.floats(0, 2))
def test_report_check_equals_standalone_check(case, d, v):
    from verifier import check_dv_privacy

    x, y, kinds, rng = case
    space = RankSpace(y, kinds)
    report = compute_permuted_privacy(space, x)
    vs = [v] * y.shape[1]
    assert report.check_dv(space, d=d, v=vs) == check_dv_privacy(space, x, d=d, v=vs)
    r = int(rng.integers(0, x.shape[0]))
    assert report.check_dv(space, d=d, v=vs, record=r) == check_dv_privacy(space, x[r], d=d, v=vs)


@SETTINGS
@given(tables(), st.integers(0, 400), st.sampled_from(["row", "midpoint", "outside"]))
def test_single_record_without_sorting_equals_the_rank_space(case, t, where):
    """The subject's path (linear selection, no full sort) against RankSpace and the brute-force spreads."""
    from verifier.core.permutation import SingleRecord, compute_record_distance

    x, y, kinds, rng = case
    record = x[int(rng.integers(0, x.shape[0]))].copy()
    if where == "midpoint":  # equally close to two released values: the hull of both blocks
        record = np.floor(record) + 0.5
    elif where == "outside":
        record = record + np.where(rng.random(record.size) < 0.5, -1, 1) * (np.abs(y).max() + 1.0)
    space = RankSpace(y, kinds)
    ref = compute_record_distance(space, record)
    fast = SingleRecord(y, kinds, record)
    got = fast.result
    assert (got.distance, got.matches.tolist(), got.deviations.tolist()) == (
        ref.distance, ref.matches.tolist(), ref.deviations.tolist())
    assert got.query_lo.tolist() == ref.query_lo.tolist() and got.query_hi.tolist() == ref.query_hi.tolist()
    for d in {0, ref.distance, t}:
        slow = compute_window_spread_bruteforce(space, ref.query_lo[None], ref.query_hi[None], d)[0]
        np.testing.assert_allclose(fast.spread_at(d), slow, rtol=1e-9,
                                   atol=1e-12 * max(1.0, float(np.abs(y).max()) ** 2))


def _assert_tree_is_brute_force(space: RankSpace, x: np.ndarray) -> None:
    """The compiled tree's distances and match sets (and its distances alone) are brute force's, whatever the
    table's size (below PLAIN_BELOW records the space would otherwise answer with its plain scan)."""
    from verifier.core.distinct_tree import DistinctTree
    from verifier.core.kdtree import RankTree
    from verifier.core.match_sets import distinct_queries

    ref_distances, ref_matches = compute_distances_bruteforce(space, x)
    qlo, qhi = space.query_blocks(x)
    for tree in (RankTree(space.record_lo, space.record_hi),
                 DistinctTree(space.record_lo, space.record_hi, *distinct_queries(space.record_lo, space.record_hi))):
        space.drop_tree()
        space.__dict__.pop("_last_search", None)
        space.__dict__["tree"] = tree
        distances, offsets, matches = compute_distances(space, x)
        assert distances.tolist() == ref_distances.tolist()
        assert all(matches[offsets[r]:offsets[r + 1]].tolist() == ref.tolist() for r, ref in enumerate(ref_matches))
        assert space.tree.distances(qlo, qhi).tolist() == ref_distances.tolist()


@pytest.mark.parametrize("ties", ["none", "one column", "every column"])
def test_tree_of_thousands_equals_brute_force(ties):
    """A tree deep enough that its levels are split in parallel: distances and match sets as brute force."""
    rng = np.random.default_rng(len(ties))
    n, m = 4000, 4
    y = np.round(rng.normal(size=(n, m)), 3)
    if ties != "none":
        y[:, 0] = rng.integers(0, 7, n)
    if ties == "every column":
        y[:, 1:] = rng.integers(0, 3, size=(n, m - 1))
    x = y[rng.permutation(n)[:300]] + rng.normal(scale=0.3, size=(300, m))
    _assert_tree_is_brute_force(RankSpace(y), x)


@pytest.mark.parametrize("m", [8, 9, 17])
def test_a_tree_of_rows_wider_than_a_lane_equals_brute_force(m):
    """The tree pads its block rows with zero columns to a multiple of eight (``kdtree.padded``): a table of a
    whole lane, one column over, and two lanes and one, tied on every other column, answers as brute force."""
    from verifier.core import kdtree

    rng = np.random.default_rng(m)
    n = 3000
    y = np.round(rng.normal(size=(n, m)), 2)
    y[:, ::2] = rng.integers(0, 4, size=(n, (m + 1) // 2))
    x = y[rng.permutation(n)[:200]] + rng.normal(scale=0.2, size=(200, m))
    space = RankSpace(y)
    _assert_tree_is_brute_force(space, x)
    assert kdtree.padded(space.record_lo).shape == (n, kdtree.padded_width(m))
    assert kdtree.padded_width(m) % kdtree.LANES == 0 and kdtree.padded_width(m) - m < kdtree.LANES
    assert kdtree.padded(space.record_lo).dtype == np.int32


def test_a_tree_refuses_more_records_than_its_32_bit_ranks_hold():
    """Ranks are kept, and gaps computed, in 32 bits: a table ranked beyond kdtree.MAX_RECORDS is refused with a
    reason before anything is built, even where the tree holds a few of its records (a slab of the distributed
    engine holds records at their positions in the whole table); the largest table it takes answers exactly."""
    from verifier.core import kdtree
    from verifier.errors import InvalidInputError

    lo = np.array([[1, 1], [2, kdtree.MAX_RECORDS + 1]], np.int64)
    with pytest.raises(InvalidInputError, match="at most 1,073,741,824 records") as refused:
        kdtree.RankTree(lo, lo)
    assert refused.value.reason == "TABLE_TOO_LARGE" and refused.value.exit_code == 3
    top = kdtree.MAX_RECORDS
    lo = np.array([[1, 1], [top, top], [top // 2, 3]], np.int64)
    tree = kdtree.RankTree(lo, lo)
    queries = np.array([[top, 1], [1, top], [top // 2 + 5, 2]], np.int64)
    distances, offsets, records = tree.nearest(queries, queries)
    brute = np.abs(queries[:, None, :] - lo[None, :, :]).max(axis=2)
    assert distances.tolist() == brute.min(axis=1).tolist()
    assert [records[offsets[q]:offsets[q + 1]].tolist() for q in range(3)] == \
        [np.flatnonzero(row == row.min()).tolist() for row in brute]


@pytest.mark.parametrize("ties", ["none", "every column"])
def test_the_tree_answers_in_pieces_as_in_one_call(ties, monkeypatch):
    """Queries are answered in pieces, so that an interrupt waits for one piece (verifier.core.interrupts):
    pieces of 7 give the distances and match sets of one call, and of brute force."""
    from verifier.core import kdtree

    rng = np.random.default_rng(3)
    y = np.round(rng.normal(size=(500, 3)), 2) if ties == "none" else rng.integers(0, 4, size=(500, 3)).astype(float)
    x = y[:120] + rng.normal(scale=0.2, size=(120, 3))
    whole = RankSpace(y)
    one = compute_distances(whole, x)
    monkeypatch.setattr(kdtree, "QUERY_CHUNK", 7)
    pieces = RankSpace(y)
    cut = compute_distances(pieces, x)
    assert all(a.tolist() == b.tolist() for a, b in zip(one, cut))
    ref_distances, ref_matches = compute_distances_bruteforce(pieces, x)
    assert cut[0].tolist() == ref_distances.tolist()
    assert all(cut[2][cut[1][r]:cut[1][r + 1]].tolist() == ref.tolist() for r, ref in enumerate(ref_matches))
    qlo, qhi = pieces.query_blocks(x)
    assert pieces.tree.distances(qlo, qhi).tolist() == ref_distances.tolist()


@pytest.mark.parametrize("ties", ["none", "census-like"])
def test_a_batch_searched_in_tree_order_answers_in_the_callers_order(ties, monkeypatch):
    """A batch above the serial size is searched sorted by the leaf each query descends to, in pieces, and
    its answers are put back in the callers' order: brute force's distances and match sets (issue 30). The
    census-like table has a two-valued column, a heaped one and a continuous one, as the tree's reach rule
    meets them."""
    from verifier.compiling import PLAIN_BELOW
    from verifier.core import kdtree

    rng = np.random.default_rng(30)
    n = PLAIN_BELOW + 952
    y = np.round(rng.normal(size=(n, 4)), 2)
    if ties != "none":
        y[:, 0] = rng.integers(0, 2, n)
        y[:, 1] = np.where(rng.random(n) < 0.9, 0.0, y[:, 1])
        y[:, 3] = rng.integers(0, 12, n)
    x = np.concatenate([y[rng.permutation(n)[:400]] + rng.normal(scale=0.3, size=(400, 4)), y[:100]])
    monkeypatch.setattr(kdtree, "SERIAL_QUERIES", 50)
    monkeypatch.setattr(kdtree, "QUERY_CHUNK", 64)
    space = RankSpace(y)
    _assert_tree_is_brute_force(space, x)
    # the whole batch is ordered at once and each piece's match sets are put back: some overflow the search's
    # buffer and are listed again inside their piece; progress counts every piece
    seen = []
    qlo, qhi = space.query_blocks(x)
    _, offsets, _ = space.tree.nearest(qlo, qhi, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(min(500, a + 64), 500) for a in range(0, 500, 64)]
    if ties != "none":
        assert np.diff(offsets).max() > kdtree.RankTree.buffer


def _exact_variance(values: np.ndarray) -> float:
    """The population variance of ``values`` in exact rational arithmetic, rounded once."""
    from fractions import Fraction

    exact = [Fraction(v) for v in values.tolist()]
    mean = sum(exact) / len(exact)
    return float(sum((v - mean) ** 2 for v in exact) / len(exact))


@pytest.mark.parametrize("compiled", [True, False])
def test_wide_windows_of_a_tied_column_are_summed_by_runs(compiled):
    """Windows of a heavily tied column that the prefix sums cannot decide (the mean dwarfs the spread) and
    that are wide are summed run by run of equal values (issue 30, item 3): the exact variance to a few ulps,
    and the value-by-value two passes' figure within their own error; a narrow one keeps the two passes."""
    from verifier.core.permutation import _numeric_spread
    from verifier.core.ranks import ColumnBlocks
    from verifier.core.window import RUNS_FROM, run_variance, two_pass_variance

    rng = np.random.default_rng(30)
    # the median is 0 (the column is centred on it), so the blocks at 10,000 and up have a mean that dwarfs
    # their windows' spread
    column = np.sort(np.concatenate([np.full(6000, 10_000.0 + v) for v in range(12)]
                                    + [np.zeros(80_000), rng.normal(0, 1, 50)]))
    runs = ColumnBlocks.from_sorted(column)
    starts = runs.lo - 1  # 0-based first position of each run of equal values
    blocks = starts[starts > 80_100]
    lo = np.concatenate([blocks[:8] - 3, blocks[:8] - 40, [blocks[2] - 1]]).astype(np.int64)
    hi = np.concatenate([blocks[:8] + 5000, blocks[:8] + 30, [blocks[2] + 1]]).astype(np.int64)
    kernel = run_variance if compiled else run_variance.py_func
    by_runs = kernel(column, starts, lo, hi)
    by_values = two_pass_variance.py_func(column, lo, hi)
    for r in range(lo.size):
        exact = _exact_variance(column[lo[r]:hi[r] + 1])
        assert by_runs[r] == pytest.approx(exact, rel=1e-12, abs=0.0)
        assert by_values[r] == pytest.approx(exact, rel=1e-9, abs=0.0)
    spread = _numeric_spread(runs, lo + 1, hi + 1, [0])[0]  # query blocks [lo, hi] at distance 0
    for r in range(lo.size):
        assert spread[r] == pytest.approx(_exact_variance(column[lo[r]:hi[r] + 1]), rel=1e-9)
    narrow = hi - lo + 1 < RUNS_FROM
    assert narrow.any() and (~narrow).any()
    assert by_runs.tolist() != by_values.tolist()  # the two ways round differently: the test tells them apart


def _reference_tree_order(pos: np.ndarray, pos_hi: np.ndarray, leaf_size: int) -> list[int]:
    """The records' tree order as the build made it before the split keys were gathered: the same axis rule, and a
    quickselect reading each record's position through the index (plain Python)."""
    from verifier.core.kdtree import plain_heap_layout, split_weights

    idx, start, end, depth = plain_heap_layout(pos.shape[0], leaf_size)
    weight = split_weights(pos, pos_hi)
    for node in range((1 << depth) - 1):
        s, e = int(start[node]), int(end[node])
        step = max(1, (e - s) // 256)
        best_axis, best_reach = 0, -math.inf
        for j in range(pos.shape[1]):
            highest_start, lowest_end = pos[idx[s], j], pos_hi[idx[s], j]
            for t in range(s, e, step):
                highest_start = max(highest_start, pos[idx[t], j])
                lowest_end = min(lowest_end, pos_hi[idx[t], j])
            if (highest_start - lowest_end) * weight[j] > best_reach:
                best_reach, best_axis = (highest_start - lowest_end) * weight[j], j
        mid = (s + e) // 2
        lo, hi = s, e - 1
        while lo < hi:
            a, b, c = pos[idx[lo], best_axis], pos[idx[(lo + hi) // 2], best_axis], pos[idx[hi], best_axis]
            pivot = max(min(a, b), min(max(a, b), c))
            i, j = lo, hi
            while i <= j:
                while pos[idx[i], best_axis] < pivot:
                    i += 1
                while pos[idx[j], best_axis] > pivot:
                    j -= 1
                if i <= j:
                    idx[i], idx[j] = idx[j], idx[i]
                    i, j = i + 1, j - 1
            if mid <= j:
                hi = j
            elif mid >= i:
                lo = i
            else:
                break
        start[2 * node + 1], end[2 * node + 1], start[2 * node + 2], end[2 * node + 2] = s, mid, mid, e
    return idx.tolist()


@pytest.mark.parametrize("tied", [False, True])
def test_the_split_keys_gathered_per_node_give_the_tree_of_the_indirect_select(tied):
    """Each node gathers its records' positions on the split axis before the quickselect, which then swaps keys
    and records alike: the tree's record order is the one the select through the index gave, ties or not."""
    from verifier.core.kdtree import _LEAF_SIZE, RankTree

    rng = np.random.default_rng(40 + tied)
    n = 3000
    y = rng.integers(0, 5, size=(n, 3)).astype(float) if tied else rng.normal(size=(n, 3))
    if tied:
        y[:, 2] = np.round(rng.normal(size=n), 1)
    space = RankSpace(y)
    tree = RankTree(space.record_lo, space.record_hi)
    assert tree._tree[6].tolist() == _reference_tree_order(space.record_lo, space.record_hi, _LEAF_SIZE)


@SETTINGS
@given(tables(), st.integers(0, 8), st.integers(1, 40))
def test_the_plain_scan_gives_the_same_answers_in_pieces_of_any_size(case, k, cells):
    """The scan works through the queries in pieces sized to stay in cache, reusing one buffer: pieces of one
    query to many give the tree's answers, record for record."""
    from verifier.core import plain_index
    from verifier.core.kdtree import RankTree

    x, y, kinds, rng = case
    space = RankSpace(y, kinds)
    qlo, qhi = space.query_blocks(np.vstack([x, y[rng.integers(0, y.shape[0], size=k)]]))
    tree = RankTree(space.record_lo, space.record_hi)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plain_index, "_CELLS", cells)
        plain = plain_index.PlainIndex(space.record_lo, space.record_hi)
        for got, want in zip(plain.nearest(qlo, qhi), tree.nearest(qlo, qhi)):
            assert got.tolist() == want.tolist()
        assert plain.distances(qlo, qhi).tolist() == tree.distances(qlo, qhi).tolist()


@pytest.mark.parametrize("tied", [False, True])
def test_a_search_asked_again_is_answered_as_the_first_and_never_for_other_queries(tied):
    """The rank space keeps its last search (a release's claims, then every record's level): the same queries get
    the same answers, other queries their own, and no caller can change what the next one gets."""
    rng = np.random.default_rng(51 + tied)
    y = rng.integers(0, 6, (300, 3)).astype(float) if tied else rng.normal(size=(300, 3))
    a, b = y[rng.permutation(300)] + 0.25, rng.normal(size=(120, 3))
    space = RankSpace(y)
    first = space.nearest(*space.query_blocks(a))
    first[0][:] = -1  # a caller's copy, not the kept one
    for queries in (a, b, a):
        got = space.nearest(*space.query_blocks(queries))
        distances, matches = compute_distances_bruteforce(RankSpace(y), queries)
        assert got[0].tolist() == distances.tolist()
        assert [got[2][got[1][r]:got[1][r + 1]].tolist() for r in range(len(queries))] == [m.tolist() for m in matches]


@pytest.mark.parametrize("seed", range(6))
def test_tied_queries_are_searched_once_and_keep_one_match_set(seed):
    """On a tied census-like table most records share their query blocks: the search keeps each distinct row's
    match set once, every record still gets the plain scan's distance and match set, and the kept arrays are
    read-only (no caller can change what the next one gets)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    y = rng.integers(0, 3, (n, 3)).astype(float)
    x = rng.integers(0, 3, (int(rng.integers(1, 300)), 3)).astype(float) + rng.choice([0.0, 0.5], (1, 3))
    space = RankSpace(y)
    qlo, qhi = space.query_blocks(x)
    distances, sets = space.match_sets(qlo, qhi)
    assert sets.offsets.size - 1 == np.unique(x, axis=0).shape[0] <= 27
    want_d, want_m = compute_distances_bruteforce(RankSpace(y), x)
    assert distances.tolist() == want_d.tolist()
    assert [sets.of(r).tolist() for r in range(len(x))] == [m.tolist() for m in want_m]
    assert sets.counts.tolist() == [m.size for m in want_m]
    with pytest.raises(ValueError):
        sets.records[:1] = 0


@pytest.mark.parametrize("seed", range(8))
def test_distinct_queries_hashed_and_sorted_number_the_rows_alike(seed):
    """The hashed labelling of many queries and the sorted one of few give the same rows and first queries, and
    rows number the distinct query blocks in order of first appearance."""
    from verifier.core.match_sets import distinct_queries

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 500)), int(rng.integers(1, 5))
    qlo = rng.integers(0, 1 + seed, (n, m))
    qhi = qlo + rng.integers(0, 2, (n, m))
    if seed % 2:  # every row its own from the first column on: the columns left are not read
        qlo[:, 0] = rng.permutation(n)
    if seed % 4 == 3:  # a block too wide to fold its start and end into one key
        qhi[:, -1] += 1 << 40
    sorted_rows, sorted_first = distinct_queries(qlo, qhi, hashed_from=n + 1)
    hashed_rows, hashed_first = distinct_queries(qlo, qhi, hashed_from=0)
    assert sorted_rows.tolist() == hashed_rows.tolist() and sorted_first.tolist() == hashed_first.tolist()
    both = np.concatenate([qlo, qhi], axis=1)
    seen: dict[tuple, int] = {}
    for r, row in enumerate(map(tuple, both)):
        seen.setdefault(row, len(seen))
        assert hashed_rows[r] == seen[row]
    assert [both[f].tolist() for f in hashed_first] == [list(k) for k in seen]


def test_rows_hashed_alike_are_labelled_a_column_at_a_time():
    """The hashed labels are checked row by row: where two different rows share a hash (forced here, by giving
    every row one hash), the labelling says so and the column-at-a-time fold labels them instead."""
    from verifier.core import match_sets
    from verifier.core.row_hashes import labels_by_hash, row_hashes

    rng = np.random.default_rng(4)
    qlo = rng.integers(0, 3, (300, 3))
    qhi = qlo + rng.integers(0, 2, (300, 3))
    assert labels_by_hash(qlo, qhi, np.zeros(300, np.int64)) is None
    same = np.tile(qlo[:1], (300, 1)), np.tile(qhi[:1], (300, 1))
    assert labels_by_hash(*same, np.zeros(300, np.int64)).tolist() == [0] * 300
    hashed = labels_by_hash(qlo, qhi, row_hashes(qlo, qhi))
    assert hashed.tolist() == match_sets._hashed_labels(qlo, qhi).tolist()
    assert hashed.tolist() == match_sets.distinct_queries(qlo, qhi, hashed_from=301)[0].tolist()


@pytest.mark.parametrize("seed", range(10))
def test_distinct_rows_a_column_at_a_time_are_numpys(seed):
    """One integer key per row gives np.unique(axis=0)'s rows, inverse and counts: tied, spread and signed-zero
    floats, integers, NaN (numpy's own sort) and empty tables."""
    from verifier.core.distinct_rows import unique_rows

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(0, 200)), int(rng.integers(1, 6))
    a = rng.integers(-2, 3, (n, m)).astype(float) if seed % 3 else rng.normal(size=(n, m)).round(1)
    if seed % 4 == 1 and n:
        a[0, 0] = -0.0
    if seed == 5 and n:
        a[-1, -1] = np.nan
    if seed == 7:
        a = a.astype(np.int64)
    rows, first, inverse, counts = unique_rows(a, return_index=True, return_inverse=True, return_counts=True)
    want, want_first, want_inverse, want_counts = np.unique(a + 0 if seed == 7 else a + 0.0, axis=0,
                                                            return_index=True, return_inverse=True,
                                                            return_counts=True)
    np.testing.assert_array_equal(rows, want)
    assert inverse.tolist() == want_inverse.ravel().tolist() and counts.tolist() == want_counts.tolist()
    assert first.tolist() == want_first.tolist()
    np.testing.assert_array_equal(unique_rows(a), want)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("collide", [False, True])
def test_rows_in_by_hashes_is_the_bytes_lookup(seed, collide):
    """Which records are rows of a table, through each row's hash and one comparison, against np.isin of the rows
    viewed as bytes: tied and spread floats, -0.0, NaN, empty tables; and with every row given one hash (each record
    then compared with one row of the table, the rest found by the bytes' lookup)."""
    from verifier.core import distinct_rows, row_hashes

    rng = np.random.default_rng(seed)
    n, k, m = int(rng.integers(0, 150)), int(rng.integers(0, 150)), int(rng.integers(1, 5))
    table = rng.integers(-2, 3, (n, m)).astype(float) if seed % 3 else rng.normal(size=(n, m)).round(1)
    records = np.vstack([table[rng.integers(0, n, k // 2)] if n else np.zeros((0, m)),
                         rng.integers(-2, 3, (k - (k // 2 if n else 0), m)).astype(float)])
    if seed % 4 == 1 and records.size:
        records[0] = np.where(records[0] == 0, -0.0, records[0])
    if seed == 5 and n and records.size:
        table[0, 0] = records[-1, 0] = np.nan
        records[-1] = table[0]
    width = np.dtype((np.void, 8 * m))
    want = np.isin(np.ascontiguousarray(records + 0.0).view(width).ravel(),
                   np.ascontiguousarray(table + 0.0).view(width).ravel()) if n and records.shape[0] else \
        np.zeros(records.shape[0], dtype=bool)
    with pytest.MonkeyPatch.context() as patch:
        if collide:
            patch.setattr(row_hashes, "row_hashes", lambda *parts: np.zeros(parts[0].shape[0], np.int64))
        assert distinct_rows.rows_in(records, table).tolist() == want.tolist()
    assert (not n or not records.shape[0]) or want.any()


def test_a_heaped_axis_weighs_little_when_a_node_is_split():
    """The split's weight per axis: the chance that two records lie in different blocks, cubed. Ten distinct
    values: (1 - 10/100)^3; one value held by 9 records of 10 and one by the tenth: (1 - 0.82)^3; a constant: 0."""
    from verifier.core.kdtree import split_weights

    y = np.column_stack([np.arange(10.0), [0.0] * 9 + [5.0], np.ones(10)])
    space = RankSpace(y)
    weights = split_weights(space.record_lo, space.record_hi)
    assert weights == pytest.approx([0.9 ** 3, 0.18 ** 3, 0.0], abs=1e-15)


@pytest.mark.parametrize("seed", range(8))
def test_cell_spreads_are_each_records_own_spreads(seed):
    """Every record's level measures again, window by window, the cells whose bulk spread is too close to the
    claimed bound, each distinct window once: the same figures as each record's own record_spread, on tied and
    spread columns, numeric and nominal, at several distances."""
    from verifier.core.permutation import cell_spreads, record_spread

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 120)), int(rng.integers(1, 5))
    y = np.column_stack([rng.integers(0, 4, n).astype(float) if j % 2 else rng.normal(size=n).round(1)
                         for j in range(m)])
    kinds = ["nominal" if j % 2 else "numeric" for j in range(m)]
    space = RankSpace(y, kinds)
    x = y[rng.integers(0, n, 40)] + rng.choice([0.0, 0.05], (40, m))
    qlo, qhi = space.query_blocks(x)
    for d in (0, 1, int(rng.integers(2, n + 2))):
        rows, cols = np.nonzero(rng.random((40, m)) < 0.5)
        want = [record_spread(space, qlo[r], qhi[r], d)[j] for r, j in zip(rows.tolist(), cols.tolist())]
        assert cell_spreads(space, qlo, qhi, d, rows, cols).tolist() == want


def test_a_space_answers_the_same_queries_again_from_its_last_search():
    """The last search is remembered by its query blocks' values: the same blocks asked again (read-only or a
    fresh copy) get the same arrays back; blocks changed since, even in the caller's own array, are searched
    again and answered as a fresh space answers them."""
    rng = np.random.default_rng(11)
    y = rng.integers(0, 40, size=(3000, 3)).astype(float)
    x = y[rng.permutation(3000)[:500]] + rng.integers(-2, 3, size=(500, 3))
    space = RankSpace(y)
    qlo, qhi = (blocks.copy() for blocks in space.query_blocks(x))  # the caller's own, writable arrays
    first = space.match_sets(qlo, qhi)
    assert space.match_sets(qlo.copy(), qhi.copy())[0] is first[0]
    qlo[0, 0] += 7  # the caller changes its own array: the space kept a copy of what it searched
    again = space.match_sets(qlo, qhi)
    assert again[0] is not first[0]
    assert again[0].tolist() == RankSpace(y).match_sets(qlo.copy(), qhi.copy())[0].tolist()
    frozen_lo, frozen_hi = space.query_blocks(x)  # read-only: the space's own, kept without a copy
    assert not frozen_lo.flags.writeable and not frozen_hi.flags.writeable
    kept = space.match_sets(frozen_lo, frozen_hi)
    assert space.match_sets(frozen_lo, frozen_hi)[0] is kept[0]
    assert kept[0].tolist() == first[0].tolist()


def test_a_space_places_the_same_records_again_from_its_last_placing():
    """The last records' query blocks are remembered by the records' values: the same records, even in another
    array, get the same read-only blocks back; records changed since, even in the caller's own array, are placed
    again, as a fresh space places them."""
    rng = np.random.default_rng(12)
    y = rng.integers(0, 40, size=(3000, 3)).astype(float)
    x = y[rng.permutation(3000)[:500]] + rng.integers(-2, 3, size=(500, 3))
    space = RankSpace(y)
    first = space.query_blocks(x)
    assert all(not blocks.flags.writeable for blocks in first)
    again = space.query_blocks(x.copy())
    assert again[0] is first[0] and again[1] is first[1]
    x[0, 0] += 7  # the caller changes its own records: the space kept a copy of what it placed
    moved = space.query_blocks(x)
    assert moved[0] is not first[0]
    fresh = RankSpace(y).query_blocks(x)
    assert moved[0].tolist() == fresh[0].tolist() and moved[1].tolist() == fresh[1].tolist()


def test_the_spreads_at_one_distance_are_kept_for_the_kept_records_and_given_as_copies():
    """The claim check asks for the spreads at D of the records the report has just measured: they are given
    again, as the report has them and as a fresh space computes them; a caller that writes into its copy changes
    nothing kept, and other records are measured afresh."""
    from verifier.core.permutation import compute_permuted_privacy, window_spreads

    rng = np.random.default_rng(13)
    y = np.column_stack([rng.integers(0, 30, 4000), rng.normal(size=4000).round(2), rng.integers(0, 5, 4000)])
    x = y[rng.permutation(4000)[:600]] + rng.integers(-1, 2, size=(600, 3))
    kinds = ["numeric", "numeric", "nominal"]
    space = RankSpace(y, kinds)
    report = compute_permuted_privacy(space, x)
    d = report.dataset_distance
    qlo, qhi = space.query_blocks(x)
    again = window_spreads(space, qlo, qhi, [d, d + 1])
    fresh_space = RankSpace(y, kinds)
    fresh = window_spreads(fresh_space, *(b.copy() for b in fresh_space.query_blocks(x)), [d, d + 1])
    assert again[0].tolist() == report.spread_at_dataset_distance.tolist() == fresh[0].tolist()
    assert again[1].tolist() == fresh[1].tolist()
    again[0][:] = -1.0  # the caller's own copy
    assert window_spreads(space, qlo, qhi, [d])[0].tolist() == fresh[0].tolist()
    other = x[:100] + 1
    olo, ohi = space.query_blocks(other)
    measured = window_spreads(space, olo, ohi, [d])[0]
    assert measured.tolist() == window_spreads(RankSpace(y, kinds), *RankSpace(y, kinds).query_blocks(other),
                                               [d])[0].tolist()


def test_the_space_searches_through_distinct_records_only_where_they_are_few():
    """Microaggregation's repeated means are searched through their distinct records; a noised table, whose
    column has as many values as records, through every record, without labelling them."""
    from verifier.compiling import PLAIN_BELOW
    from verifier.core.distinct_tree import DistinctTree, distinct_tree_or_none
    from verifier.core.kdtree import RankTree

    rng = np.random.default_rng(5)
    n = PLAIN_BELOW + 500
    means = rng.normal(size=(n // 5 + 1, 3))
    repeated = RankSpace(means[rng.permutation(np.arange(n) // 5)])
    assert isinstance(repeated.tree, DistinctTree) and repeated.tree.n_distinct == len(np.unique(np.arange(n) // 5))
    noised = RankSpace(rng.normal(size=(n, 3)))
    assert isinstance(noised.tree, RankTree)
    lo, hi = noised.record_lo, noised.record_hi
    assert distinct_tree_or_none(lo[:, :1] // 2, hi[:, :1] // 2, most_values=n) is None  # the floor alone decides
    assert isinstance(distinct_tree_or_none(lo[:, :1] // 2, hi[:, :1] // 2), DistinctTree)  # n / 2 distinct


@pytest.mark.parametrize("seed", range(6))
def test_tie_broken_ranks_of_every_column_are_one_column_at_a_time(seed):
    """The columns' ranks, sorted in two threads with radix for small integers, are those of one column after
    another with numpy's sorts, from the same generator: tied categories, signed zeros, wide integers, halves,
    distinct floats."""
    from verifier.core.ranks import tie_broken_rank_columns

    def one_column(column, rng):
        order = np.argsort(column)
        s = column[order]
        if column.size > 1 and (s[1:] == s[:-1]).any():
            perm = rng.permutation(column.size)
            order = perm[np.argsort(column[perm], kind="stable")]
        ranks = np.empty(column.size, dtype=np.int64)
        ranks[order] = np.arange(column.size)
        return ranks

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400_000 if seed == 0 else 3_000))
    table = np.column_stack([
        rng.integers(0, 5, n).astype(float),
        rng.choice([0.0, -0.0, 1.0, -3.0], n),
        rng.integers(-(1 << 20), 1 << 20, n).astype(float),
        rng.integers(-40_000, 40_000, n) / 2.0,
        rng.normal(size=n),
    ])
    plain_rng = np.random.default_rng(seed + 100)
    want = [one_column(table[:, j], plain_rng) for j in range(table.shape[1])]
    got = tie_broken_rank_columns(table, np.random.default_rng(seed + 100))
    assert all(g.tolist() == w.tolist() for g, w in zip(got, want))
