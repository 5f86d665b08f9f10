"""The distinct values of a column by hashing, held to ``np.unique``'s sort on random columns with ties, NaN and
-0.0 (issue 61: a release asks for them dozens of times)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.data.distinct_values import distinct_values, first_appearances, first_rows

FLOATS = st.sampled_from([0.0, -0.0, 1.5, -2.0, 3.0, np.nan, np.inf, -np.inf, 1e300])


def _same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype.kind == w.dtype.kind
        assert np.array_equal(g, w, equal_nan=True)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_distinct_values_are_numpys_unique(data):
    floats = data.draw(st.booleans())
    values = np.array(data.draw(st.lists(FLOATS if floats else st.integers(-5, 5), max_size=50)),
                      dtype=np.float64 if floats else np.int64)
    want = np.unique(values, return_index=True, return_inverse=True, return_counts=True)
    got = distinct_values(values, return_index=True, return_inverse=True, return_counts=True)
    _same(got, want)
    # -0.0 and 0.0 are one value, shown as the first of them to appear (np.unique's stable sort shows it too)
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0]))
    for asked in ({}, {"return_inverse": True}, {"return_counts": True}, {"return_index": True}):
        alone, want = distinct_values(values, **asked), np.unique(values, **asked)
        _same(alone if isinstance(alone, tuple) else (alone,), want if isinstance(want, tuple) else (want,))


def test_a_census_column_of_a_million_values_is_numpys_unique():
    rng = np.random.default_rng(61)
    ages = rng.integers(17, 91, 10**6).astype(np.float64)
    got = distinct_values(ages, return_index=True, return_inverse=True, return_counts=True)
    _same(got, np.unique(ages, return_index=True, return_inverse=True, return_counts=True))
    assert got[0].tolist() == list(range(17, 91))


@pytest.mark.parametrize("values", [np.zeros((2, 2)), np.array(["a", "b"], dtype=object)])
def test_anything_but_a_numeric_column_is_refused(values):
    with pytest.raises(ValueError, match="1-D numeric"):
        distinct_values(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=60))
def test_the_first_rows_of_codes_are_numpys_first_indices(raw):
    dense = np.unique(np.array(raw, dtype=np.int64), return_inverse=True)[1]  # codes 0 .. count - 1, every one present
    count = int(dense.max(initial=-1)) + 1
    assert first_rows(dense, count).tolist() == np.unique(dense, return_index=True)[1].tolist()
    seen = np.array([list(dict.fromkeys(raw)).index(v) for v in raw], dtype=np.int64)  # numbered as first seen
    assert first_appearances(seen).tolist() == np.unique(seen, return_index=True)[1].tolist()
    assert first_appearances(seen).tolist() == [raw.index(v) for v in dict.fromkeys(raw)]
