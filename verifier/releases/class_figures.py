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
3. her classes, their people less the published counterfeits, and per
   sensitive value the worst share of it in a class she could be in are
   computed once per set of candidates (and value), by the functions her own
   check calls (:func:`~verifier.attacks.possible_classes.possible_classes`,
   :meth:`~verifier.attacks.possible_classes.PossibleClasses.worst_share`), so
   the figures are hers to the last bit.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

from verifier.attacks.classes import her_value, value_shares
from verifier.attacks.possible_classes import possible_classes
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
    """The released rows grouped by their tuple of quasi-identifier cells, each group's rows ascending."""

    def __init__(self, wheres: list[np.ndarray], n: int):
        code = tuple_codes(iter(wheres), n) if wheres else np.zeros(n, np.int64)
        _, first, label = np.unique(code, return_index=True, return_inverse=True)
        label = label.ravel()
        self.cells = np.stack([w[first] for w in wheres], axis=1) if wheres else np.zeros((first.size, 0), np.int64)
        self.lookup = {tuple(row): g for g, row in enumerate(self.cells.tolist())}
        order = np.argsort(label, kind="stable")
        self.rows = np.split(order, np.cumsum(np.bincount(label, minlength=first.size))[:-1])

    def candidates(self, allowed: list[np.ndarray]) -> np.ndarray:
        """The rows whose cell in every column is one of ``allowed`` (each column's allowed cells), ascending."""
        if not self.cells.shape[0]:
            return np.zeros(0, np.int64)
        sizes = [int(a.sum()) for a in allowed]
        if int(np.prod(sizes, dtype=np.float64)) <= MOST_TUPLES:
            groups = [self.lookup[t] for t in product(*(np.flatnonzero(a).tolist() for a in allowed))
                      if t in self.lookup]
        else:
            inside = np.ones(self.cells.shape[0], dtype=bool)
            for j, a in enumerate(allowed):
                inside &= a[self.cells[:, j]]
            groups = np.flatnonzero(inside).tolist()
        return np.sort(np.concatenate([self.rows[g] for g in groups])) if groups else np.zeros(0, np.int64)


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
    per_record = np.column_stack([which for _, which, _ in found]) if found else np.zeros((n, 0), np.int64)
    signatures, sig_of = np.unique(per_record, axis=0, return_inverse=True)
    smallest = np.zeros(n, np.int64)
    sensitive = {s.name: (np.zeros(n), np.zeros(n)) for s in published.sensitive}
    for signature, mine in zip(signatures.tolist(), _members(sig_of.ravel(), len(signatures))):
        rows = groups.candidates([found[j][0][p] for j, p in enumerate(signature)])
        possible = possible_classes(published, rows, methods)
        smallest[mine] = possible.smallest
        for s in published.sensitive:
            _worst_shares(published, s, records[mine, names.index(s.name)], possible, sensitive[s.name], mine)
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


def _worst_shares(published: Any, attr: Any, keys: np.ndarray, possible: Any,
                  into: tuple[np.ndarray, np.ndarray], mine: np.ndarray) -> None:
    """Each of ``mine``'s worst share of her sensitive value in a class she could be in, and its base rate."""
    cells, where = published.distinct_cells(attr.name)
    shares = value_shares(published, attr.name)
    values, inverse = np.unique(keys, return_inverse=True)
    for key, at in zip(values.tolist(), _members(inverse.ravel(), len(values))):
        value = str(her_value(attr, key))
        row_share = np.array([1.0 / len(c.values) if c.values and value in c.values else 0.0 for c in cells],
                             dtype=np.float64)[where] if cells else np.zeros(0)
        at = mine[at]
        into[0][at] = possible.worst_share(row_share)[0]
        into[1][at] = shares.get(value, 0.0)
