"""Numeric anonymization methods (SPEC section 7): each method's defining property, with fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from publisher.methods.kernels import rank_swap_partners
from publisher.methods import (
    AdditiveNoise,
    Microaggregation,
    RankSwapping,
    ReverseMapping,
    anonymize,
    frame_to_keys,
    make_method,
)
from verifier.errors import InvalidInputError
from verifier.core.ranks import ColumnBlocks, reverse_map
from verifier.data.schema import Schema


def _frame(n: int, m: int = 3, *, seed: int = 0, ties: bool = False) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    names = [f"a{j}" for j in range(m)]
    values = rng.integers(0, 12, size=(n, m)).astype(float) if ties else rng.normal(size=(n, m)) * [1, 10, 100][:m]
    return pd.DataFrame(values, columns=names), Schema.all_numeric(names)


def _rank_swap_reference(n: int, window: int, uniforms: np.ndarray) -> np.ndarray:
    """Plain O(n * window) rank swapping: scan the window for positions not yet swapped."""
    partner = np.arange(n)
    done = np.zeros(n, bool)
    for i in range(n):
        if done[i]:
            continue
        done[i] = True
        free = [j for j in range(i + 1, min(n - 1, i + window) + 1) if not done[j]]
        if not free:
            continue
        j = free[min(len(free) - 1, int(uniforms[i] * len(free)))]
        done[j] = True
        partner[i], partner[j] = j, i
    return partner


@pytest.mark.parametrize("n, window", [(1, 0), (2, 1), (10, 3), (257, 20), (500, 499), (1000, 1)])
def test_rank_swap_kernel_equals_the_plain_scan(n, window):
    u = np.random.default_rng(n + window).random(n)
    assert rank_swap_partners(n, window, u).tolist() == _rank_swap_reference(n, window, u).tolist()


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("p", [0.5, 5.0, 30.0, 100.0])
def test_rank_swapping_keeps_values_and_bounds_the_rank_shift(seed, p):
    x, schema = _frame(400, seed=seed)
    method = RankSwapping(p=p)
    y = method.apply(x, schema, random_state=seed).table
    window = math.floor(p * 400 / 100)
    assert method.window(400) == window
    for name in schema.names:
        assert sorted(y[name]) == sorted(x[name])  # the multiset, exactly
        rank_x = x[name].rank(method="first").to_numpy()
        rank_y = pd.Series(y[name]).rank(method="first").to_numpy()
        assert np.abs(rank_y - rank_x).max() <= window
    if window >= 1:
        assert (y.to_numpy() != x.to_numpy()).mean() > 0.5


def test_rank_swapping_with_ties_keeps_block_deviation_within_the_window():
    x, schema = _frame(300, seed=4, ties=True)
    y = RankSwapping(p=10).apply(x, schema, random_state=1).table
    for name in schema.names:
        assert sorted(y[name]) == sorted(x[name])
        blocks = ColumnBlocks.from_values(x[name].to_numpy())
        lo_x, hi_x = blocks.blocks_of(x[name].to_numpy())
        lo_y, hi_y = blocks.blocks_of(y[name].to_numpy())
        gap = np.maximum(0, np.maximum(lo_y - hi_x, lo_x - hi_y))
        assert gap.max() <= 30


def test_reverse_mapping_step_keeps_every_column_multiset():
    x, schema = _frame(500, seed=2)
    result = anonymize(x, schema, [AdditiveNoise(relative_sd=0.5), ReverseMapping()], random_state=3)
    z = result.table
    for name in schema.names:
        assert sorted(z[name]) == sorted(x[name])
    # and it is Algorithm 1 applied to the noisy table
    noisy = AdditiveNoise(relative_sd=0.5).apply(x, schema, random_state=np.random.default_rng(3)).table
    expected = reverse_map(frame_to_keys(x, schema), frame_to_keys(noisy, schema)).z
    np.testing.assert_array_equal(frame_to_keys(z, schema), expected)


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("n", [10, 97, 300])
def test_mdav_groups_have_k_to_2k_minus_1_records_sharing_one_centroid(k, n):
    x, schema = _frame(n, seed=k * n)
    result = Microaggregation(k=k).apply(x, schema, random_state=0)
    y = result.table.to_numpy()
    rows, inverse, counts = np.unique(y, axis=0, return_inverse=True, return_counts=True)
    assert counts.min() >= k and counts.max() <= 2 * k - 1
    assert result.metrics["groups"] == rows.shape[0]
    for g in range(rows.shape[0]):
        members = x.to_numpy()[inverse.ravel() == g]
        np.testing.assert_allclose(rows[g], members.mean(axis=0), rtol=1e-12, atol=1e-12)


def test_mdav_with_many_equal_records():
    x = pd.DataFrame({"a": [1.0] * 9 + [5.0] * 4, "b": [2.0] * 13})
    result = Microaggregation(k=3).apply(x, Schema.all_numeric(["a", "b"]), random_state=0)
    counts = np.unique(result.table.to_numpy(), axis=0, return_counts=True)[1]
    sizes = np.bincount(np.unique(result.table.to_numpy(), axis=0, return_inverse=True)[1].ravel())
    assert sizes.sum() == 13 and counts.sum() == 13
    assert 3 <= result.metrics["min_group_size"] and result.metrics["max_group_size"] <= 5


def test_additive_noise_has_the_requested_sd():
    x, schema = _frame(20_000, seed=5)
    rel = {"a0": 0.1, "a1": 0.5, "a2": 1.0}
    y = AdditiveNoise(relative_sd=rel).apply(x, schema, random_state=6).table
    noise = (y - x).to_numpy()
    sd_x = x.to_numpy().std(axis=0, ddof=1)
    # the sd of a sample sd is about sigma / sqrt(2n): allow 4 of those
    np.testing.assert_allclose(noise.std(axis=0, ddof=1) / sd_x, list(rel.values()), rtol=4 / math.sqrt(2 * 20_000))
    assert abs(np.corrcoef(noise, rowvar=False)[0, 1]) < 4 / math.sqrt(20_000)  # uncorrelated


def test_correlated_noise_keeps_the_correlation_matrix():
    rng = np.random.default_rng(7)
    cov = np.array([[1.0, 0.8, -0.3], [0.8, 1.0, 0.1], [-0.3, 0.1, 1.0]])
    x = pd.DataFrame(rng.multivariate_normal(np.zeros(3), cov, size=20_000), columns=["a", "b", "c"])
    schema = Schema.all_numeric(["a", "b", "c"])
    y = AdditiveNoise(relative_sd=1.0, correlated=True).apply(x, schema, random_state=8).table
    cx, cy = np.corrcoef(x.to_numpy(), rowvar=False), np.corrcoef(y.to_numpy(), rowvar=False)
    assert np.abs(cx - cy).max() < 0.03
    # uncorrelated noise of the same size halves the correlations instead
    u = AdditiveNoise(relative_sd=1.0).apply(x, schema, random_state=8).table
    assert abs(np.corrcoef(u.to_numpy(), rowvar=False)[0, 1] - 0.4) < 0.03
    noise_cov = np.cov((y - x).to_numpy(), rowvar=False)
    np.testing.assert_allclose(noise_cov, np.cov(x.to_numpy(), rowvar=False), atol=0.05)


@pytest.mark.parametrize(
    "name, params, reason",
    [
        ("additive_noise", {"relative_sd": "-0.5"}, "PARAMETER_INVALID"),
        ("additive_noise", {"relative_sd": "nan"}, "PARAMETER_INVALID"),
        ("additive_noise", {"relative_sd": "abc"}, "PARAMETER_INVALID"),
        ("additive_noise", {}, "PARAMETER_MISSING"),
        ("additive_noise", {"relative_sd": "0"}, "PARAMETER_DEGENERATE"),
        ("rank_swapping", {"p": "0"}, "PARAMETER_DEGENERATE"),
        ("rank_swapping", {"p": "-1"}, "PARAMETER_INVALID"),
        ("rank_swapping", {"p": "100.5"}, "PARAMETER_INVALID"),
        ("microaggregation", {"k": "1"}, "PARAMETER_DEGENERATE"),
        ("microaggregation", {"k": "0"}, "PARAMETER_INVALID"),
        ("microaggregation", {"k": "2.5"}, "PARAMETER_INVALID"),
        ("microaggregation", {"size": "3"}, "PARAMETER_UNKNOWN"),
        ("swap_everything", {}, "METHOD_UNKNOWN"),
    ],
)
def test_bad_parameters_are_refused(name, params, reason):
    with pytest.raises(InvalidInputError) as info:
        make_method(name, params)
    assert info.value.reason == reason


def test_degenerate_parameters_run_with_the_override():
    x, schema = _frame(20)
    y = make_method("additive_noise", {"relative_sd": "0"}, allow_degenerate=True).apply(x, schema, random_state=0).table
    pd.testing.assert_frame_equal(y, x)
    with pytest.raises(InvalidInputError, match="larger than the number of records"):
        Microaggregation(k=21).apply(x, schema, random_state=0)
    with pytest.raises(InvalidInputError, match="so it follows another method; it cannot be the first") as info:
        anonymize(x, schema, [ReverseMapping(allow_degenerate=True)], random_state=0)  # no chain runs it first
    assert info.value.reason == "METHOD_CHAIN_INVALID"


def test_anonymize_shuffles_rows_and_keeps_no_seed():
    x, schema = _frame(200, seed=9)
    chain = [RankSwapping(p=5), ReverseMapping()]
    a = anonymize(x, schema, chain, random_state=11)
    b = anonymize(x, schema, chain, random_state=11)
    pd.testing.assert_frame_equal(a.released, b.released)
    pd.testing.assert_frame_equal(a.released, a.table.iloc[a.order].reset_index(drop=True))
    assert sorted(a.order.tolist()) == list(range(200)) and a.order.tolist() != list(range(200))
    assert a.parameters == [{"method": "rank_swapping", "parameters": {"p": 5.0, "attributes": None}},
                            {"method": "reverse_mapping", "parameters": {"attributes": None}}]
    c = anonymize(x, schema, chain, random_state=12)
    assert not c.released.equals(a.released)


def test_methods_leave_other_columns_alone():
    x = pd.DataFrame({"age": [30.0, 40.0, 50.0, 60.0], "grade": ["a", "b", "a", "c"], "pay": [1.0, 2.0, 3.0, 4.0]})
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "grade", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c"]},
        {"name": "pay", "kind": "numeric", "role": "sensitive"},
    ]})
    y = AdditiveNoise(relative_sd=1.0, attributes=["age"]).apply(x, schema, random_state=0).table
    assert y["grade"].tolist() == ["a", "b", "a", "c"] and y["pay"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert y["age"].tolist() != [30.0, 40.0, 50.0, 60.0]
    with pytest.raises(InvalidInputError, match="cannot change nominal"):
        RankSwapping(p=50, attributes=["grade"]).apply(x, schema, random_state=0)


def test_production_randomness_is_chacha20_and_a_seed_gives_pcg64():
    """No seed: a cryptographic stream (spec/reliability.md, PCG64 is not a CSPRNG); a seed: reproducible PCG64."""
    from publisher.randomness import SECRET_STREAM, SEEDED_STREAM

    x, schema = _frame(20_000, seed=4)
    chain = [AdditiveNoise(relative_sd=0.5)]
    a = anonymize(x, schema, chain, random_state=None)
    b = anonymize(x, schema, chain, random_state=None)
    assert a.randomness == b.randomness == SECRET_STREAM
    assert not a.table.equals(b.table)  # fresh keys
    for col in schema.names:  # the noise has the declared spread whichever stream drew it
        ratio = float((a.table[col] - x[col]).std() / x[col].std())
        assert ratio == pytest.approx(0.5, rel=0.03)
    assert anonymize(x, schema, chain, random_state=3).randomness == SEEDED_STREAM


def test_the_help_names_are_the_registry_in_its_order():
    """``publisher --help`` lists the methods from a light module; it must name what the registry holds."""
    from publisher.methods import METHODS
    from publisher.methods.names import METHOD_NAMES

    assert tuple(METHODS) == METHOD_NAMES


def test_all_original_answers_as_a_sort_of_whole_rows():
    """The degenerate check's "every released record equals an original record" (issue 30: per-column codes and
    a column pre-check instead of np.unique over rows): the rows shuffled, columns shuffled apart (every value
    an original one, not every row), a noised copy, -0.0 for 0.0, a table with one row, and NaN (equal to nothing,
    as numpy's sort of rows has it)."""
    from publisher.degenerate import all_original

    def by_rows(original, y):
        _, label = np.unique(np.concatenate([original, y]) + 0.0, axis=0, return_inverse=True)
        label = label.ravel()
        return bool(np.isin(label[original.shape[0]:], label[: original.shape[0]]).all())

    rng = np.random.default_rng(30)
    for trial in range(40):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 4))
        x = rng.integers(-2, 3, size=(n, m)).astype(float)
        cases = [x[rng.permutation(n)], x[rng.integers(0, n, n)],
                 np.column_stack([x[rng.permutation(n), j] for j in range(m)]),
                 x + rng.normal(scale=0.1, size=x.shape), np.where(x == 0, -0.0, x)]
        for y in cases:
            assert all_original(x, y) == by_rows(x, y), trial
    nan = np.array([[np.nan, 1.0], [2.0, 3.0]])
    assert all_original(nan, nan[::-1]) == by_rows(nan, nan[::-1]) is False
    assert all_original(nan, nan[1:]) == by_rows(nan, nan[1:]) is True
    assert all_original(np.array([[0.0, 1.0]]), np.array([[-0.0, 1.0]]))
    assert not all_original(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[0.0, 0.0]]))


@pytest.mark.parametrize("arrow", [False, True])
def test_release_cells_from_the_keys_are_the_frames_cells(arrow):
    """A release writes its categorical cells as the categories at the keys' positions: the same texts the frame
    holds, cell for cell (awkward categories included, the frame's strings held by numpy or by Arrow), and its
    numbers as before."""
    from publisher.methods.frames import frame_rows

    rng = np.random.default_rng(61)
    categories = ["a", " a", "a ", "=1+1", "é", "{x,y}", "", "NA", "0"]
    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "city", "kind": "nominal", "role": "quasi_identifier", "categories": categories},
        {"name": "grade", "kind": "ordinal", "role": "sensitive", "categories": ["low", "high"]}]})
    n = 500
    frame = pd.DataFrame({"age": np.round(rng.normal(40, 10, n), 1),
                          "city": [categories[i] for i in rng.integers(0, len(categories), n)],
                          "grade": [["low", "high"][i] for i in rng.integers(0, 2, n)]})
    if arrow:
        frame = frame.astype({"city": "string[pyarrow]", "grade": "string[pyarrow]"})
    keys = frame_to_keys(frame, schema)
    assert frame_rows(frame, schema, keys) == frame_rows(frame, schema)
    assert {row[1] for row in frame_rows(frame, schema, keys)} == set(categories)


def test_category_positions_are_the_same_whoever_holds_the_strings():
    """pyarrow's lookup of an Arrow-held column (pandas's strings) gives pandas's categorical codes: the same
    positions for awkward categories, and the same refusal of a cell that is none of them or missing."""
    from publisher.methods.frames import category_positions

    rng = np.random.default_rng(7)
    categories = ["a", " a", "a ", "=1+1", "é", "{x,y}", "", "NA", "0", "😀"]
    cells = [categories[i] for i in rng.integers(0, len(categories), 2000)]
    arrow, plain = pd.Series(cells, dtype="str"), pd.Series(cells, dtype=object)
    assert isinstance(arrow.array, pd.arrays.ArrowStringArray)
    assert not isinstance(plain.array, pd.arrays.ArrowStringArray)
    shuffled = [categories[i] for i in rng.permutation(len(categories))]
    positions = category_positions(arrow, shuffled, "city")
    assert positions.dtype == np.int64
    assert positions.tolist() == category_positions(plain, shuffled, "city").tolist()
    assert [shuffled[p] for p in positions] == cells
    for bad, shown in (("b", "'b'"), (None, "(nan|None)")):  # a missing cell as the holder shows it
        cells[1234] = bad
        for held in ("str", object):
            with pytest.raises(InvalidInputError, match=f"column 'city': {shown} is not one of its categories"):
                category_positions(pd.Series(cells, dtype=held), categories, "city")
