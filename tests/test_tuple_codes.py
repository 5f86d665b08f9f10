"""One code per distinct tuple of column codes: the folded key against the code renumbered after every column."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.data.tuple_codes import first_seen, first_seen_plain, tuple_codes, tuple_codes_plain


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_the_folded_key_numbers_tuples_as_the_plain_one(data):
    n = data.draw(st.integers(0, 60))
    widths = data.draw(st.lists(st.sampled_from([1, 2, 3, 7, 1000, 2**20, 2**40]), max_size=6))
    columns = [np.array(data.draw(st.lists(st.integers(0, w - 1), min_size=n, max_size=n)), dtype=np.int64)
               for w in widths]
    got = tuple_codes(iter(columns), n)
    assert got.dtype == np.int64
    assert got.tolist() == tuple_codes_plain(iter(columns), n).tolist()
    if columns and n:  # dense, in lexicographic order of the tuples
        tuples = sorted(set(zip(*(c.tolist() for c in columns))))
        assert got.tolist() == [tuples.index(t) for t in zip(*(c.tolist() for c in columns))]


@pytest.mark.parametrize("n", [0, 5])
def test_no_column_gives_every_row_code_zero(n):
    assert tuple_codes(iter(()), n).tolist() == [0] * n


def test_a_key_that_would_overflow_is_renumbered_first():
    rng = np.random.default_rng(0)
    columns = [rng.integers(0, 2**31, 1000) for _ in range(4)]  # 2^124 keys: renumbered twice on the way
    assert tuple_codes(iter(columns), 1000).tolist() == tuple_codes_plain(iter(columns), 1000).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2, 7, 2**40, -3]), max_size=60))
def test_first_seen_hashes_to_the_sorted_twins_numbering(code):
    code = np.array(code, dtype=np.int64)
    got = first_seen(code)
    assert got.dtype == np.int64
    assert got.tolist() == first_seen_plain(code).tolist()
    order = list(dict.fromkeys(code.tolist()))  # the codes as they first appear
    assert got.tolist() == [order.index(c) for c in code.tolist()]
