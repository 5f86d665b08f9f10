"""The distance model of SD k-anonymization (paper 001, Aghdam & Sonehara; spec/methods.md section 1.2-1.4).

Records are clustered into classes of k to 2k-1 by a distance that needs no
generalization hierarchy:

- a numeric attribute contributes ``|x1 - x2| / R_A``, R_A its range in the whole table;
- a categorical attribute with two values contributes 1 between them;
- with three or more values, the distance from a reference value ranks the
  other values by how differently often they occur in the reference record's
  *context* (its values on the lower-cardinality categorical attributes, the
  "chain"). The least similar value gets ``m_A / (c_A - 1)``, the next one
  that divided by ``c_A - 1`` again, and so on; ``m_A`` is the smallest distance
  of the previous chain attribute (1 after a two-valued one or at the start).
  A context row with fewer than k records backs off to a shorter context.

:func:`sd_classes_exhaustive` is Fig. 3 made deterministic (section 1.3) as
the spec reads, every table recounted and every distance computed in Python:
the plain reference that :func:`publisher.methods.sd_clustering.sd_classes`
is tested against. The metrics (section 1.4) are NCP with Xu's convention
(Data Utility = 1 - NCP) and the discernibility metric DM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from verifier.data.distinct_values import distinct_values

__all__ = ["TIE", "step", "value_distances", "SDModel", "sd_classes_exhaustive", "class_extents", "ncp",
           "discernibility"]

#: distances within this of the minimum count as tied (the earliest wins)
TIE = 1e-12


def step(m: float, c: int, j: int) -> float:
    """Def. 2's j-th distance ``m / (c - 1)^j``. Past a float's range ((c - 1)^j for c of 144 values or more) the
    quotient is computed exactly and rounded once: a denormal, or 0."""
    try:
        return m / (c - 1) ** j
    except OverflowError:
        return float(Fraction(m) / (c - 1) ** j)


def value_distances(reference: Any, shares: dict[Any, float], m: float) -> dict[Any, float]:
    """Distances from ``reference`` to every other value of a chain attribute with 3 or more values.

    ``shares`` holds S_r(v) for every value of the attribute. Values are ordered
    by decreasing ``|S_r(v) - S_r(reference)|``, ties by ascending text; the
    j-th gets ``m / (c - 1)^j``.
    """
    c = len(shares)
    base = shares.get(reference, 0.0)
    others = sorted((v for v in shares if v != reference), key=lambda v: (-abs(shares[v] - base), str(v)))
    out = {reference: 0.0}
    for j, v in enumerate(others, start=1):
        out[v] = step(m, c, j)
    return out


def _sorted_codes(column: np.ndarray) -> tuple[list, np.ndarray]:
    """A categorical column's distinct values sorted by text, and each value's position among them: the column
    hashed once, only its distinct values sorted."""
    import pandas as pd  # late: a command's --help loads no pandas

    seen, distinct = pd.factorize(column, use_na_sentinel=False)  # numbered as they first appear
    distinct = np.asarray(distinct).tolist()  # Python values, as the column's tolist() gives them
    order = sorted(range(len(distinct)), key=lambda i: str(distinct[i]))
    position = np.empty(len(order), np.int64)
    position[order] = np.arange(len(order))
    return [distinct[i] for i in order], position[seen]


@dataclass
class SDModel:
    """The distance model of a table: ranges, cardinalities and the categorical chain."""

    names: list[str]
    numeric: list[bool]
    columns: list[np.ndarray]  # numeric: float values; categorical: values as str
    k: int
    _codes: dict[int, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.range = [float(c.max() - c.min()) if num and c.size else 0.0 for c, num in zip(self.columns, self.numeric)]
        coded = {j: _sorted_codes(c) for j, (c, num) in enumerate(zip(self.columns, self.numeric)) if not num}
        self.domain = [coded[j][0] if j in coded else None for j in range(len(self.columns))]
        self._codes = {j: codes for j, (_, codes) in coded.items()}
        cats = [j for j, num in enumerate(self.numeric) if not num and len(self.domain[j]) >= 2]
        self.chain = sorted(cats, key=lambda j: (len(self.domain[j]), j))
        self.minimum: dict[int, float] = {}
        prev_min, prev_card = 1.0, None
        for j in self.chain:
            c = len(self.domain[j])
            m = 1.0 if prev_card is None or prev_card == 2 else prev_min
            self.minimum[j] = m
            prev_min = 1.0 if c == 2 else step(m, c, c - 1)
            prev_card = c

    def codes(self, j: int) -> np.ndarray:
        """Categorical column j's values as their positions in the domain, found with it."""
        return self._codes[j]

    def shares(self, attr: int, context: dict[int, Any], population: np.ndarray) -> dict[Any, float]:
        """S_r(v) over ``population`` (row indices) in the context row, backing off while it holds < k rows."""
        position = self.chain.index(attr)
        keys = list(self.chain[:position])
        col = self.columns[attr]
        while True:
            rows = population
            for j in keys:
                rows = rows[self.columns[j][rows] == context[j]]
            if rows.size >= self.k or not keys:
                break
            keys.pop()
        total = rows.size
        values, counts = np.unique(col[rows], return_counts=True) if total else (np.array([]), np.array([]))
        found = dict(zip(values.tolist(), (counts / total).tolist())) if total else {}
        return {v: found.get(v, 0.0) for v in self.domain[attr]}

    def attribute_table(self, attr: int, context: dict[int, Any], population: np.ndarray) -> dict[Any, dict[Any, float]]:
        """For chain attribute ``attr``: reference value -> distances to every value."""
        if len(self.domain[attr]) == 2:
            return {a: {b: 0.0 if a == b else 1.0 for b in self.domain[attr]} for a in self.domain[attr]}
        shares = self.shares(attr, context, population)
        return {a: value_distances(a, shares, self.minimum[attr]) for a in self.domain[attr]}

    def distances_to(self, members: Sequence[int], candidates: np.ndarray, tables: dict[int, dict]) -> np.ndarray:
        """D_T(centre(members), t) for every candidate row t (eq. 7, set-valued categorical centre)."""
        d = np.zeros(candidates.size)
        for j, num in enumerate(self.numeric):
            col = self.columns[j]
            if num:
                if self.range[j] > 0:
                    d += np.abs(col[candidates] - col[list(members)].mean()) / self.range[j]
            elif j in tables:
                centre = set(col[list(members)].tolist())
                per_value = {y: 0.0 if y in centre else min(tables[j][c][y] for c in centre) for y in self.domain[j]}
                d += np.array([per_value[y] for y in col[candidates].tolist()])
        return d


def _argmin(d: np.ndarray) -> int:
    """The earliest index within a tiny tolerance of the minimum (deterministic ties)."""
    return int(np.flatnonzero(d <= d.min() + TIE)[0])


def sd_classes_exhaustive(model: SDModel) -> list[list[int]]:
    """Fig. 3 made deterministic (spec section 1.3): the classes as lists of row indices, by plain scans."""
    n = len(model.columns[0]) if model.columns else 0
    k = model.k
    cards = [len(set(c.tolist())) for c in model.columns]
    sort_col = int(np.argmax(cards))  # the first of the QIs with the most distinct values
    key = model.columns[sort_col]
    order = sorted(range(n), key=(lambda i: key[i]) if model.numeric[sort_col] else (lambda i: str(key[i])))
    remaining = list(order)
    classes: list[list[int]] = []
    while len(remaining) >= k:
        t1 = remaining.pop(0)
        population = np.array([t1, *remaining])
        context = {j: model.columns[j][t1] for j in model.chain}
        tables = {j: model.attribute_table(j, context, population) for j in model.chain}
        members = [t1]
        while len(members) < k:
            d = model.distances_to(members, np.array(remaining), tables)
            members.append(remaining.pop(_argmin(d)))
        classes.append(members)
    everyone = np.arange(n)
    for t in remaining:  # leftovers: tables on the whole table, context = t's own chain values
        context = {j: model.columns[j][t] for j in model.chain}
        tables = {j: model.attribute_table(j, context, everyone) for j in model.chain}
        d = np.array([model.distances_to(c, np.array([t]), tables)[0] for c in classes])
        classes[_argmin(d)].append(t)
    if not classes and remaining:
        classes.append(list(remaining))
    return classes


def class_extents(model: SDModel, classes: list[list[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per quasi-identifier, each class's extent: numeric, its (least, greatest) values; categorical, (the
    class of each distinct (class, value) pair, the value's position in the domain), pairs by class then value."""
    sizes = np.array([len(c) for c in classes], dtype=np.int64)
    rows = np.concatenate([np.asarray(c, dtype=np.int64) for c in classes]) if classes else np.zeros(0, np.int64)
    label = np.repeat(np.arange(len(classes)), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    out = []
    for j, num in enumerate(model.numeric):
        if num:
            values = model.columns[j][rows]
            out.append((np.minimum.reduceat(values, starts), np.maximum.reduceat(values, starts)))
        else:
            c = len(model.domain[j])
            pairs = distinct_values(label * c + model.codes(j)[rows])
            out.append((pairs // c, pairs % c))
    return out


def ncp(model: SDModel, classes: list[list[int]], weights: Sequence[float] | None = None,
        extents: list[tuple[np.ndarray, np.ndarray]] | None = None) -> float:
    """NCP_total (Xu et al.; the paper's eqs. 2-3), in [0, 1]; Data Utility = 1 - NCP_total.

    A class's cost adds its attributes' terms in order and the classes' costs are added in order, as a plain
    loop over the classes would. ``extents``: :func:`class_extents` of these classes, when already found."""
    w = np.ones(len(model.names)) if weights is None else np.asarray(weights, dtype=float)
    sizes = np.array([len(c) for c in classes], dtype=np.int64)
    n = int(sizes.sum())
    cost = np.zeros(len(classes))
    for j, (num, (a, b)) in enumerate(zip(model.numeric, extents or class_extents(model, classes))):
        if num:
            part = (b - a) / model.range[j] if model.range[j] > 0 else np.zeros(len(classes))
        else:
            distinct = np.bincount(a, minlength=len(classes))
            part = np.where(distinct == 1, 0.0, distinct / len(model.domain[j]))
        cost += w[j] * part
    total = 0.0
    for size, c in zip(sizes.tolist(), cost.tolist()):
        total += size * c
    return total / (n * w.sum()) if n else 0.0


def discernibility(sizes: Sequence[int], k: int, n_total: int) -> int:
    """DM (eq. 1): ``sum |E|^2`` over classes of at least k, ``|D| |E|`` for smaller (suppressed) ones."""
    return int(sum(s * s if s >= k else n_total * s for s in sizes))
