"""Rows of categorical values coded once as integer arrays, so that a count or a match is one array operation.

Random attribute replacement evaluates its release with hundreds of count
queries, a bias per value combination and a posterior per released
combination; counted row by row in Python, they took minutes on 10,000
records. :class:`CodedRows` codes each column once (values in first-seen
order; a value the rows do not hold has no code and matches nothing), and
answers "how many rows match" over its distinct rows with their counts. The
plain row-by-row functions of :mod:`publisher.methods.random_replacement`
stay the reference: the tests hold these to them on random tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from verifier.attacks.replacement import reachable_index, reachable_rows
from verifier.core.distinct_rows import unique_rows

__all__ = ["CodedRows"]


@dataclass(frozen=True)
class CodedRows:
    """``codes[:, i]`` codes column i of the rows; ``index[i]`` maps its values to their codes."""

    codes: np.ndarray
    index: tuple[dict[Any, int], ...]

    @classmethod
    def of(cls, rows: Sequence[Sequence[Any]], width: int | None = None) -> CodedRows:
        """Each column coded in one pass of pandas's hash table (values numbered as first seen, as a dictionary
        filled row by row numbers them: 1e6 rows of 7 columns in 1.5 s against 11 s). The rows are laid into one
        table of objects by numpy in one pass, not transposed through ``zip`` (0.4 s against 1.0 s there)."""
        import pandas as pd

        m = width if width is not None else (len(rows[0]) if len(rows) else 0)
        codes = np.empty((len(rows), m), dtype=np.int64)
        values = np.empty((len(rows), m), dtype=object)
        if len(rows):  # every row m values (numpy refuses rows of other widths)
            values[:] = rows
        index = []
        for j in range(m):
            codes[:, j], uniques = pd.factorize(values[:, j], use_na_sentinel=False)
            index.append({v: c for c, v in enumerate(uniques.tolist())})
        return cls(codes, tuple(index))

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    def code(self, column: int, value: Any) -> int:
        """The value's code, -1 when no row holds it (no code is -1, so it matches nothing)."""
        return self.index[column].get(value, -1)

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct coded rows (ascending, as ``np.unique(axis=0)`` gives them) and how many rows each stands
        for: a census of 1e6 rows over a few categorical columns has some thousands of them."""
        return unique_rows(self.codes, return_counts=True)

    def count(self, query: Mapping[int, Iterable[Any]]) -> int:
        """How many rows hold, in every queried column, one of the query's values for it (counted over
        :attr:`cells`, one test per distinct row)."""
        distinct, counts = self.cells
        out = np.ones(distinct.shape[0], dtype=bool)
        for column, values in query.items():
            wanted = np.zeros(len(self.index[column]), dtype=bool)  # a lookup table of the column's codes
            wanted[[c for c in (self.code(column, v) for v in values) if c >= 0]] = True
            out &= wanted[distinct[:, column]]
        return int(counts[out].sum())

    def mismatches(self, combination: Sequence[Any], rows: np.ndarray | None = None, *,
                   distinct: bool = False) -> np.ndarray:
        """``(n, m)``: True where a row's value differs from the combination's, column by column (of ``rows``
        only, in their order, where they are given; of the distinct rows of :attr:`cells` with ``distinct``)."""
        coded = np.array([self.code(j, v) for j, v in enumerate(combination)], dtype=np.int64)
        if distinct:
            return self.cells[0] != coded
        return (self.codes if rows is None else self.codes[rows]) != coded

    @cached_property
    def _reachable(self):
        """The rows keyed by their codes outside each column (:func:`~verifier.attacks.replacement.reachable_index`
        with k = 1), or None where there are too many columns to key."""
        return reachable_index(self.codes, 1)

    def within_one(self, combination: Sequence[Any]) -> np.ndarray:
        """The rows whose values differ from the combination's in at most one column, ascending: the rows
        ``mismatches(combination).sum(axis=1) <= 1`` picks, found by m lookups instead of a pass over every row."""
        if self._reachable is None:
            return np.flatnonzero(self.mismatches(combination).sum(axis=1) <= 1)
        return reachable_rows([self.code(j, v) for j, v in enumerate(combination)], self._reachable)
