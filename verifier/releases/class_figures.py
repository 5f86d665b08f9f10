"""Every record's figures in a generalized release, in one pass (issue 51, item 1).

A subject's figures in a generalized release
(:func:`~verifier.releases.group_check.check_group`) depend on her
quasi-identifiers only through her *candidates*, the released rows whose every
quasi-identifier cell contains her value. So:

1. per quasi-identifier, each distinct value of the original column is tested
   once against each distinct published cell; records whose values fall in
   the same cells of every column have the same candidates;
2. each such set of candidates is found once: the published rows are grouped
   by their tuple of cells, the groups holding her allowed cells of one
   column are looked up (the column that allows the fewest), and the others
   tested on them;
3. each published class's people (less its published counterfeits) and,
   per sensitive value, its share of the class are computed once, adding the
   rows in the order her own check adds them
   (:class:`~verifier.attacks.possible_classes.PossibleClasses`), so that her
   fewest people and worst share are the smallest and largest of them over
   the classes among her candidates, to the last bit. Each distinct sensitive
   value of the records costs one pass over the rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier.attacks.classes import base_rate_bounds, cell_share, her_value, mask_weights
from verifier.attacks.counterfeits import class_counterfeits
from verifier.data.distinct_values import distinct_values, first_rows
from verifier.data.tuple_codes import label_members, tuple_codes
from verifier.releases.level_arrays import FigureArrays
from verifier.releases.record_figures import breaches, signed_bounds
from verifier.releases.subject import Prepared

__all__ = ["class_figures"]


def _patterns(published: Any, name: str, attr: Any, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which distinct cells of column ``name`` contain each record's value: the distinct patterns (boolean rows
    over the cells), each record's pattern, and each row's cell."""
    cells, where = published.distinct_cells(name)
    values, inverse = distinct_values(keys, return_inverse=True)
    contains = np.array([[c.contains(her_value(attr, v)) for c in cells] for v in values.tolist()],
                        dtype=bool).reshape(values.size, len(cells))
    patterns, which = np.unique(contains, axis=0, return_inverse=True)
    return patterns, which.ravel()[inverse.ravel()], where


class _Groups:
    """The released rows grouped by their tuple of quasi-identifier cells, and per column which groups hold each
    cell."""

    def __init__(self, wheres: list[np.ndarray], n: int):
        self.label = tuple_codes(iter(wheres), n) if wheres else np.zeros(n, np.int64)  # dense, in the cells' order
        self.count = int(self.label.max(initial=-1)) + 1
        first = first_rows(self.label, self.count)
        self.cells = np.stack([w[first] for w in wheres], axis=1) if wheres else np.zeros((first.size, 0), np.int64)
        self.columns = [np.ascontiguousarray(self.cells[:, j]) for j in range(self.cells.shape[1])]
        # column j's groups ordered by their cell there, and where each cell's run of them starts
        self.by_cell = [np.argsort(self.cells[:, j], kind="stable") for j in range(self.cells.shape[1])]
        self.cell_starts = [np.searchsorted(self.cells[order, j], np.arange(int(w.max(initial=0)) + 2))
                            for j, (order, w) in enumerate(zip(self.by_cell, wheres))]
        self.held = [np.diff(starts) for starts in self.cell_starts]  # how many groups hold each cell

    def allowed(self, allowed: list[np.ndarray]) -> np.ndarray:
        """The groups whose cell in every column is one of ``allowed`` (each column's allowed cells), ascending:
        those of the column whose allowed cells hold the fewest groups, then tested on the other columns."""
        if not self.cells.shape[1]:
            return np.arange(self.count)
        sizes = [int(np.dot(a[: self.held[i].size], self.held[i])) for i, a in enumerate(allowed)]
        j = int(np.argmin(sizes))
        cells = np.flatnonzero(allowed[j][: self.held[j].size])
        begins, lengths = self.cell_starts[j][cells], self.held[j][cells]
        offsets = np.cumsum(lengths) - lengths
        chosen = self.by_cell[j][np.repeat(begins - offsets, lengths) + np.arange(int(lengths.sum()))]
        inside = np.ones(chosen.size, dtype=bool)
        for i, a in enumerate(allowed):
            if i != j:
                inside &= a[self.columns[i][chosen]]
        return np.sort(chosen[inside])


class _Classes:
    """The published classes, each computed once: its people, and per sensitive value its share of the class, as
    :class:`~verifier.attacks.possible_classes.PossibleClasses` computes them for one subject (its rows added in
    row order, so the sums are hers to the bit). A class's rows have the same texts, so the same cells: each class
    lies in one group of cells, and a subject's candidates hold whole classes."""

    def __init__(self, published: Any, methods: Any, groups: _Groups, masks: Any = None):
        self.labels = published.class_labels()
        count = int(self.labels.max()) + 1 if self.labels.size else 0
        self.sizes = np.bincount(self.labels, minlength=count)
        self.people = self.sizes - class_counterfeits(published, self.labels, methods)
        self.methods, self.masks = methods, masks
        group_of = np.zeros(count, np.int64)
        group_of[self.labels] = groups.label
        if not np.array_equal(group_of[self.labels], groups.label):
            # a class's rows have the same texts, so the same cells: never split
            raise ValueError("a published class lies in several groups of cells")
        # each group's classes, ascending, one group after another
        self.in_groups = np.argsort(group_of, kind="stable")
        self.per_group = np.bincount(group_of, minlength=groups.count)
        self.group_starts = np.cumsum(self.per_group) - self.per_group
        self._shares: dict[tuple[str, str], np.ndarray] = {}

    def among(self, groups: np.ndarray) -> np.ndarray:
        """The classes of ``groups``, group after group (each group's ascending)."""
        lengths = self.per_group[groups]
        offsets = np.cumsum(lengths) - lengths
        return self.in_groups[np.repeat(self.group_starts[groups] - offsets, lengths) + np.arange(int(lengths.sum()))]

    def share(self, published: Any, name: str, value: str) -> np.ndarray:
        """Each class's share of ``value`` in sensitive column ``name`` (:func:`~verifier.attacks.classes.cell_share`:
        a cell of N values giving 1/N, or under masks drawn whatever the value, the value's bound)."""
        if self.masks is not None:  # a two-step release: each class's posterior under its masks' model
            return self.masks.class_shares(name, value)
        if (name, value) not in self._shares:
            cells, where = published.distinct_cells(name)
            weights = mask_weights(published, name, self.methods)
            share_of = np.array([cell_share(c, value, weights) for c in cells], dtype=np.float64)
            sums = np.bincount(self.labels, weights=share_of[where], minlength=self.sizes.size)
            self._shares[(name, value)] = np.minimum(1.0, sums / np.maximum(self.people, 1))
        return self._shares[(name, value)]


class _Candidates:
    """Each set of candidates as the classes it holds, one after another (``flat``, the sets starting at
    ``starts``), so that a figure of every set is one reduction over the classes' figures."""

    def __init__(self, sets: list[np.ndarray]):
        lengths = np.array([a.size for a in sets], dtype=np.int64)
        self.flat = np.concatenate(sets) if sets else np.zeros(0, np.int64)
        self.held = lengths > 0
        self.starts = (np.cumsum(lengths) - lengths)[self.held]

    def reduced(self, reduce: np.ufunc, figure: np.ndarray) -> np.ndarray:
        """Per set, ``reduce`` (``np.minimum``, ``np.maximum``) of its classes' ``figure`` (0 for a set that holds
        none)."""
        out = np.zeros(self.held.size, dtype=figure.dtype)
        if self.starts.size:
            out[self.held] = reduce.reduceat(figure[self.flat], self.starts)
        return out


def class_figures(prepared: Prepared, records: np.ndarray) -> FigureArrays:
    """Every record's figures in a generalized release (rank keys in schema order, one row a subject)."""
    published, methods = prepared.published, prepared.release.methods
    names = published.schema.names
    n = records.shape[0]
    found = [_patterns(published, a.name, a, records[:, names.index(a.name)]) for a in published.quasi_identifiers]
    groups = _Groups([w for _, _, w in found], published.n_records)
    classes = _Classes(published, methods, groups, prepared.masks)
    per_record = np.column_stack([which for _, which, _ in found]) if found else np.zeros((n, 0), np.int64)
    sig_of = tuple_codes((which for _, which, _ in found), n)  # dense, in the patterns' order
    signatures = per_record[first_rows(sig_of, int(sig_of.max(initial=-1)) + 1)]
    sets = _Candidates([classes.among(groups.allowed([found[j][0][p] for j, p in enumerate(signature)]))
                        for signature in signatures.tolist()])
    smallest = sets.reduced(np.minimum, classes.people)[sig_of]
    sensitive = {}
    for attr in published.sensitive:
        values, which = distinct_values(records[:, names.index(attr.name)], return_inverse=True)
        shares = base_rate_bounds(published, attr.name, methods)
        risk, prior = np.zeros(n), np.zeros(n)
        for key, at in zip(values.tolist(), label_members(which.ravel(), len(values))):
            value = str(her_value(attr, key))
            risk[at] = sets.reduced(np.maximum, classes.share(published, attr.name, value))[sig_of[at]]
            signed = prepared.masks.prior(attr.name, value) if prepared.masks is not None else None
            prior[at] = signed if signed is not None else shares.get(value, 0.0)
        sensitive[attr.name] = (risk, prior)
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
