"""Every record's figures in a generalized release, in one pass (issue 51, item 1).

A subject's figures in a generalized release
(:func:`~verifier.releases.group_check.check_group`) depend on her
quasi-identifiers only through her *candidates*, the released rows whose every
quasi-identifier cell contains her value. So:

1. per quasi-identifier, each distinct value of the original column is tested
   once against each distinct published cell; records whose values fall in
   the same cells of every column have the same candidates;
2. each such set of candidates is found once: the published rows are grouped
   by their tuple of cells, and the tuples her cells allow are looked up (or,
   where cells overlap so much that the tuples are many, every group is
   tested);
3. each published class's people (less its published counterfeits) and,
   per sensitive value, its share of the class are computed once, adding the
   rows in the order her own check adds them
   (:class:`~verifier.attacks.possible_classes.PossibleClasses`), so that her
   fewest people and worst share are the smallest and largest of them over
   the classes among her candidates, to the last bit.
"""

from __future__ import annotations

from itertools import product
from typing import Any, Callable

import numpy as np

from verifier.attacks.classes import her_value, value_shares
from verifier.attacks.counterfeits import class_counterfeits
from verifier.data.tuple_codes import tuple_codes
from verifier.releases.level_arrays import FigureArrays
from verifier.releases.record_figures import breaches, signed_bounds
from verifier.releases.subject import Prepared

__all__ = ["class_figures"]

#: above this many cell tuples a set of candidates allows, every group of rows is tested instead
MOST_TUPLES = 256


def _patterns(published: Any, name: str, attr: Any, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which distinct cells of column ``name`` contain each record's value: the distinct patterns (boolean rows
    over the cells), each record's pattern, and each row's cell."""
    cells, where = published.distinct_cells(name)
    values, inverse = np.unique(keys, return_inverse=True)
    contains = np.array([[c.contains(her_value(attr, v)) for c in cells] for v in values.tolist()],
                        dtype=bool).reshape(values.size, len(cells))
    patterns, which = np.unique(contains, axis=0, return_inverse=True)
    return patterns, which.ravel()[inverse.ravel()], where


class _Groups:
    """The released rows grouped by their tuple of quasi-identifier cells."""

    def __init__(self, wheres: list[np.ndarray], n: int):
        code = tuple_codes(iter(wheres), n) if wheres else np.zeros(n, np.int64)
        _, first, label = np.unique(code, return_index=True, return_inverse=True)
        self.label = label.ravel()
        self.cells = np.stack([w[first] for w in wheres], axis=1) if wheres else np.zeros((first.size, 0), np.int64)
        self.lookup = {tuple(row): g for g, row in enumerate(self.cells.tolist())}
        self.count = int(first.size)

    def allowed(self, allowed: list[np.ndarray]) -> list[int]:
        """The groups whose cell in every column is one of ``allowed`` (each column's allowed cells)."""
        if not self.cells.shape[0]:
            return []
        sizes = [int(a.sum()) for a in allowed]
        if int(np.prod(sizes, dtype=np.float64)) <= MOST_TUPLES:
            return sorted(self.lookup[t] for t in product(*(np.flatnonzero(a).tolist() for a in allowed))
                          if t in self.lookup)
        inside = np.ones(self.cells.shape[0], dtype=bool)
        for j, a in enumerate(allowed):
            inside &= a[self.cells[:, j]]
        return np.flatnonzero(inside).tolist()


class _Classes:
    """The published classes, each computed once: its people, and per sensitive value its share of the class, as
    :class:`~verifier.attacks.possible_classes.PossibleClasses` computes them for one subject (its rows added in
    row order, so the sums are hers to the bit). A class's rows have the same texts, so the same cells: each class
    lies in one group of cells, and a subject's candidates hold whole classes."""

    def __init__(self, published: Any, methods: Any, groups: _Groups):
        self.labels = published.class_labels()
        count = int(self.labels.max()) + 1 if self.labels.size else 0
        self.sizes = np.bincount(self.labels, minlength=count)
        self.people = self.sizes - class_counterfeits(published, self.labels, methods)
        pairs = np.unique(np.column_stack([groups.label, self.labels]), axis=0)
        if pairs.shape[0] != count:  # a class's rows have the same texts, so the same cells: never split
            raise ValueError("a published class lies in several groups of cells")
        self.of_group = np.split(pairs[:, 1], np.cumsum(np.bincount(pairs[:, 0], minlength=groups.count))[:-1])
        self._shares: dict[tuple[str, str], np.ndarray] = {}

    def among(self, groups: list[int]) -> np.ndarray:
        return np.concatenate([self.of_group[g] for g in groups]) if groups else np.zeros(0, np.int64)

    def worst_among(self, published: Any, among: np.ndarray) -> Callable[[str, str], float]:
        """Her worst share of a value (in sensitive column ``name``) among the classes ``among``."""
        def worst(value: str, name: str) -> float:
            return float(self.share(published, name, value)[among].max()) if among.size else 0.0

        return worst

    def share(self, published: Any, name: str, value: str) -> np.ndarray:
        """Each class's share of ``value`` in sensitive column ``name`` (a cell of N values giving 1/N)."""
        if (name, value) not in self._shares:
            cells, where = published.distinct_cells(name)
            cell_share = np.array([1.0 / len(c.values) if c.values and value in c.values else 0.0 for c in cells],
                                  dtype=np.float64)
            sums = np.bincount(self.labels, weights=cell_share[where], minlength=self.sizes.size)
            self._shares[(name, value)] = np.minimum(1.0, sums / np.maximum(self.sizes, 1))
        return self._shares[(name, value)]


def _members(label: np.ndarray, count: int) -> list[np.ndarray]:
    """The positions holding each label 0 .. count - 1, ascending: one sort, not one pass per label."""
    order = np.argsort(label, kind="stable")
    return np.split(order, np.cumsum(np.bincount(label, minlength=count))[:-1])


def class_figures(prepared: Prepared, records: np.ndarray) -> FigureArrays:
    """Every record's figures in a generalized release (rank keys in schema order, one row a subject)."""
    published, methods = prepared.published, prepared.release.methods
    names = published.schema.names
    n = records.shape[0]
    found = [_patterns(published, a.name, a, records[:, names.index(a.name)]) for a in published.quasi_identifiers]
    groups = _Groups([w for _, _, w in found], published.n_records)
    classes = _Classes(published, methods, groups)
    per_record = np.column_stack([which for _, which, _ in found]) if found else np.zeros((n, 0), np.int64)
    signatures, sig_of = np.unique(per_record, axis=0, return_inverse=True)
    smallest = np.zeros(n, np.int64)
    sensitive = {s.name: (np.zeros(n), np.zeros(n)) for s in published.sensitive}
    for signature, mine in zip(signatures.tolist(), _members(sig_of.ravel(), len(signatures))):
        allowed = groups.allowed([found[j][0][p] for j, p in enumerate(signature)])
        among = classes.among(allowed)
        smallest[mine] = int(classes.people[among].min()) if among.size else 0
        worst = classes.worst_among(published, among)
        for s in published.sensitive:
            _worst_shares(published, s, records[mine, names.index(s.name)], worst, sensitive[s.name], mine)
    risks = {name: {"risk": risk, "sampling_error": np.zeros(n)} for name, (risk, _) in sensitive.items()}
    claims = prepared.release.claims or {}
    targets = prepared.release.predicate.get("targets") or {}
    broken = breaches(risks, signed_bounds(claims, targets), n)
    k = claims.get("k")
    if isinstance(k, int) and not isinstance(k, bool):
        broken |= smallest < k
    least = targets.get("min_k")
    if isinstance(least, (int, float)) and not isinstance(least, bool):
        broken |= smallest < float(least)
    return FigureArrays(n, sensitive, broken, class_size=smallest)


def _worst_shares(published: Any, attr: Any, keys: np.ndarray, worst: Callable[[str, str], float],
                  into: tuple[np.ndarray, np.ndarray], mine: np.ndarray) -> None:
    """Each of ``mine``'s worst share of her sensitive value in a class she could be in, and its base rate."""
    shares = value_shares(published, attr.name)
    values, inverse = np.unique(keys, return_inverse=True)
    for key, at in zip(values.tolist(), _members(inverse.ravel(), len(values))):
        value = str(her_value(attr, key))
        into[0][mine[at]] = worst(value, attr.name)
        into[1][mine[at]] = shares.get(value, 0.0)
