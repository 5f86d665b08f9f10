"""Mondrian (LeFevre, DeWitt & Ramakrishnan, ICDE 2006): strict multidimensional partitioning, the baseline of paper 001.

No maintained Python package implements it (the toolkits on the package
index do full-domain generalization with hierarchies), so here is the plain
algorithm: start from the whole table; split a partition on the attribute
of widest range, normalized by its range over the whole table, at its
median (values up to the median go left, the rest right); a split is
allowed when both sides keep at least k records; when no attribute allows
one, the partition is an equivalence class. With ``move_ties`` a cut that
leaves too few on one side is tried again with the median's ties on the
right, which a skewed attribute (sex: two thirds male) needs to be cut at all. Categorical attributes are ordered
alphabetically, as Mondrian needs a total order and the paper gives none.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["mondrian_classes"]


def _split(keys: np.ndarray, rows: np.ndarray, spans: np.ndarray, k: int, move_ties: bool,
           accept: Callable[[np.ndarray], bool] | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The first allowed median split of ``rows``, widest normalized range first; None when none is allowed."""
    part = keys[rows]
    width = (part.max(axis=0) - part.min(axis=0)) / np.where(spans > 0, spans, 1.0)
    for j in np.argsort(-width, kind="stable"):
        if width[j] <= 0:
            break
        values = np.sort(part[:, j])
        median = values[(values.size - 1) // 2]
        cuts = (part[:, j] <= median, part[:, j] < median) if move_ties else (part[:, j] <= median,)
        for left in cuts:  # the median's ties go left, else (move_ties) right
            if k <= left.sum() <= rows.size - k and (accept is None or (accept(rows[left]) and accept(rows[~left]))):
                return rows[left], rows[~left]
    return None


def mondrian_classes(columns: Sequence[np.ndarray], k: int, *, move_ties: bool = False,
                     accept: Callable[[np.ndarray], bool] | None = None) -> list[list[int]]:
    """Mondrian's equivalence classes (lists of row numbers, ascending) of the rows of ``columns``.

    ``columns`` are numeric arrays, or text arrays for categorical attributes
    (ranked alphabetically). ``move_ties``: when the median's ties on the left
    leave one side too small, try them on the right. ``accept(rows)``, when
    given, must also hold on both sides of a cut (entropy l-diversity, for
    paper 004's comparator). Every class has at least k rows when the table
    has at least k.
    """
    keys = np.column_stack([np.asarray(c, dtype=float) if np.asarray(c).dtype.kind in "fiu"
                            else np.unique(np.asarray(c, dtype=str), return_inverse=True)[1].astype(float)
                            for c in columns])
    spans = keys.max(axis=0) - keys.min(axis=0)
    done, todo = [], [np.arange(keys.shape[0])]
    while todo:
        rows = todo.pop()
        halves = _split(keys, rows, spans, k, move_ties, accept) if rows.size >= 2 * k else None
        if halves is None:
            done.append(sorted(rows.tolist()))
        else:
            todo.extend(halves)
    return sorted(done)
