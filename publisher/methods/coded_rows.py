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

__all__ = ["CodedRows"]


@dataclass(frozen=True)
class CodedRows:
    """``codes[:, i]`` codes column i of the rows; ``index[i]`` maps its values to their codes."""

    codes: np.ndarray
    index: tuple[dict[Any, int], ...]

    @classmethod
    def of(cls, rows: Sequence[Sequence[Any]], width: int | None = None) -> CodedRows:
        m = width if width is not None else (len(rows[0]) if len(rows) else 0)
        index: list[dict[Any, int]] = [{} for _ in range(m)]
        codes = np.empty((len(rows), m), dtype=np.int64)
        for j in range(m):
            column = index[j]
            codes[:, j] = [column.setdefault(r[j], len(column)) for r in rows]
        return cls(codes, tuple(index))

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    def code(self, column: int, value: Any) -> int:
        """The value's code, -1 when no row holds it (no code is -1, so it matches nothing)."""
        return self.index[column].get(value, -1)

    @cached_property
    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct coded rows and how many rows each stands for: a census of 1e6 rows over a few
        categorical columns has some thousands of them."""
        distinct, counts = np.unique(self.codes, axis=0, return_counts=True)
        return distinct, counts

    def count(self, query: Mapping[int, Iterable[Any]]) -> int:
        """How many rows hold, in every queried column, one of the query's values for it (counted over
        :attr:`cells`, one test per distinct row)."""
        distinct, counts = self.cells
        out = np.ones(distinct.shape[0], dtype=bool)
        for column, values in query.items():
            wanted = [c for c in (self.code(column, v) for v in values) if c >= 0]
            out &= np.isin(distinct[:, column], np.array(wanted, dtype=np.int64))
        return int(counts[out].sum())

    def mismatches(self, combination: Sequence[Any]) -> np.ndarray:
        """``(n, m)``: True where a row's value differs from the combination's, column by column."""
        coded = np.array([self.code(j, v) for j, v in enumerate(combination)], dtype=np.int64)
        return self.codes != coded
