"""Counterfeit records of an m-invariant release (Xiao and Tao, SIGMOD 2007; issue 40): rows that are nobody.

m-invariant re-publication keeps the signature (the set of sensitive values) of every group a person published
again is in, and where the real records cannot fill a group it adds counterfeit records of the missing values.
The method publishes how many counterfeits each group holds; here the release's ``m_invariant`` step lists them,
each group named by its published quasi-identifier cells::

    "counterfeits": [{"cells": {"age": "[30,34]", "sex": "F"}, "count": 1}, ...]

A counterfeit looks like any record of its group, so an intruder cannot tell which rows they are: the shares of
sensitive values among her candidates count them (the method's model, under which her risk in a group of m
distinct values is 1/m). Her anonymity set is the real people only: a group's size, the claimed ``k`` and the
re-identification figures subtract its counterfeits, so a counterfeit never makes a group look larger than the
people in it.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["COUNTERFEITING", "MOST_PAIRS", "counterfeit_entries", "class_counterfeits", "counterfeits_among",
           "counterfeit_problem", "counterfeits_fit"]

#: the method that adds counterfeit records and publishes their counts
COUNTERFEITING = "m_invariant"


def counterfeit_entries(methods: Sequence[Any], names: Sequence[str]) -> dict[tuple[str, ...], int]:
    """Each group's published counterfeit count, by its quasi-identifier cells (in the order of ``names``, spaces
    around a cell stripped as classes are found): empty when no step adds counterfeits. Entries of the same cells
    add up (they are one class to anyone reading the release)."""
    out: dict[tuple[str, ...], int] = {}
    for step in methods:
        if not isinstance(step, dict) or step.get("method") != COUNTERFEITING:
            continue
        for entry in (step.get("parameters") or {}).get("counterfeits") or []:
            key = tuple(str(entry["cells"][n]).strip() for n in names)
            out[key] = out.get(key, 0) + int(entry["count"])
    return out


def _keys(published: Any, rows: Iterable[int]) -> list[tuple[str, ...]]:
    names = [a.name for a in published.quasi_identifiers]
    return [tuple(published.text[n][r].strip() for n in names) for r in rows]


def _class_keys(published: Any, labels: np.ndarray) -> list[tuple[str, ...]]:
    """Each class's quasi-identifier cells (``labels`` numbers the classes from 0), read from its first row."""
    return _keys(published, np.unique(labels, return_index=True)[1].tolist())


def class_counterfeits(published: Any, labels: np.ndarray, methods: Sequence[Any]) -> np.ndarray:
    """The counterfeit count of each class (``labels`` numbers them, as :meth:`PublishedCells.class_labels` does)."""
    entries = counterfeit_entries(methods, [a.name for a in published.quasi_identifiers])
    out = np.zeros(int(labels.max()) + 1 if labels.size else 0, dtype=np.int64)
    if entries:
        for label, key in enumerate(_class_keys(published, labels)):
            out[label] = entries.get(key, 0)
    return out


def counterfeits_among(published: Any, rows: Sequence[int], methods: Sequence[Any]) -> int:
    """How many of the released rows ``rows`` (indices from 0; whole classes, as a subject's candidates are) the
    release says are counterfeit."""
    entries = counterfeit_entries(methods, [a.name for a in published.quasi_identifiers])
    if not entries:
        return 0
    return sum(entries.get(key, 0) for key in set(_keys(published, rows)))


def counterfeit_problem(published: Any, methods: Sequence[Any]) -> str | None:
    """Why the published counterfeit counts cannot be the release's (a manifest that is ``MANIFEST_INCOHERENT``
    with its data): a group no row has, or one whose counterfeits leave no real record in it. None when they fit."""
    entries = counterfeit_entries(methods, [a.name for a in published.quasi_identifiers])
    if not entries:
        return None
    labels = published.class_labels()
    rows = dict(zip(_class_keys(published, labels), np.bincount(labels).tolist())) if labels.size else {}
    where = next(i for i, step in enumerate(methods) if isinstance(step, dict) and step.get("method") == COUNTERFEITING)
    for j, (key, count) in enumerate(entries.items()):
        if count >= rows.get(key, 0):
            return (f"$.predicate.methods[{where}].parameters.counterfeits[{j}]: {count} counterfeit records in a "
                    f"group of {rows.get(key, 0)} released rows; every group holds at least one real record")
    return None


#: the most (distinct original record, class) pairs :func:`counterfeits_fit` weighs
MOST_PAIRS = 50_000_000


def counterfeits_fit(published: Any, records: np.ndarray, methods: Sequence[Any]) -> bool | None:
    """Whether the original ``records`` (rank keys, the release's schema) fill the released rows less the declared
    counterfeits: each record matched to its own released row, whose cells contain its quasi-identifiers and whose
    sensitive cell is its value, each class keeping exactly its declared counterfeits over (a maximum flow from the
    records through (class, value) slots to the classes). Counts moved from one group to another, to make a small
    group look larger, fail it. None when the records and classes are too many pairs to weigh here."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    schema, qi = published.schema, published.quasi_identifiers
    sensitive = published.sensitive[0]
    labels = published.class_labels()
    fakes = class_counterfeits(published, labels, methods)
    n_class = fakes.size
    first = np.unique(labels, return_index=True)[1]
    values = [t.strip() for t in published.text[sensitive.name]]
    slots: dict[tuple[int, str], int] = {}
    for label, value in zip(labels.tolist(), values):
        slots[(label, value)] = slots.get((label, value), 0) + 1
    names = schema.names
    distinct, inverse = np.unique(records, axis=0, return_inverse=True)
    counts = np.bincount(inverse.ravel(), minlength=distinct.shape[0])
    if distinct.shape[0] * n_class > MOST_PAIRS:
        return None
    fits = np.ones((distinct.shape[0], n_class), dtype=bool)
    for a in qi:
        column = distinct[:, names.index(a.name)]
        cells = [published.cells[a.name][r] for r in first.tolist()]
        for u in np.unique(column).tolist():
            mine = float(u) if a.kind == "numeric" else (a.categories or ())[int(u)]
            fits[column == u] &= np.fromiter((c.contains(mine) for c in cells), dtype=bool, count=n_class)
    slot_index = {key: i for i, key in enumerate(slots)}
    r_n, s_n = distinct.shape[0], len(slots)
    source, sink = 0, 1 + r_n + s_n + n_class
    rows, cols, caps = [], [], []

    def edge(a: int, b: int, c: int) -> None:
        rows.append(a), cols.append(b), caps.append(int(c))

    her_values = [(sensitive.categories or ())[int(k)] for k in distinct[:, names.index(sensitive.name)].tolist()]
    for r in range(r_n):
        edge(source, 1 + r, counts[r])
        for c in np.flatnonzero(fits[r]).tolist():
            s = slot_index.get((c, her_values[r]))
            if s is not None:
                edge(1 + r, 1 + r_n + s, counts[r])
    for (c, _), s in slot_index.items():
        edge(1 + r_n + s, 1 + r_n + s_n + c, slots[(c, _)])
    sizes = np.bincount(labels, minlength=n_class)
    for c in range(n_class):
        edge(1 + r_n + s_n + c, sink, max(0, int(sizes[c] - fakes[c])))
    graph = csr_matrix((np.asarray(caps, dtype=np.int32), (rows, cols)), shape=(sink + 1, sink + 1))
    return int(maximum_flow(graph, source, sink).flow_value) == int(records.shape[0]) == int(sizes.sum() - fakes.sum())
