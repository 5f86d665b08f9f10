"""The classes of SD k-anonymization (spec/methods.md section 1.3), exact and fast.

Fig. 3 is quadratic by nature: every class scans every record left, k-1
times, under contingency tables recounted on the records left. This module
computes the same classes as :func:`publisher.methods.sd_model.sd_classes_exhaustive`,
number for number, and spends its time differently:

- the contingency tables of every chain attribute, at every context length
  the back-off may need, are counted once and decremented as classes leave
  (:class:`ContextCounts`), instead of being recounted for every class;
- a class's distance rows are made only for the reference values its
  members hold, as numpy arrays over the value codes;
- the scan for the nearest record to a class's centre is compiled with
  numba, and adds the same terms in the same order as the plain version,
  so the floating-point sums, the minimum and the tie rule agree exactly.

With a numeric sort attribute the scan stops early; without one (every
quasi-identifier categorical, a census's usual case) a record's distance
depends only on its combination of value codes, so the records are indexed
by combination (:class:`Cells`): each combination is one point with its
records in scan order, its distance is computed once per change of the
class's centre, and the nearest record is the first record, in scan order,
of the combinations within the tie tolerance of the least distance. That is
O(n G) compiled steps for G combinations (some thousands on a census; O(n G q)
at worst, when every member brings a new value) instead of O(n^2 q / k).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from publisher.methods.sd_model import TIE, SDModel

__all__ = ["KERNELS", "sd_classes", "Cells", "ContextCounts"]

_SKIP, _NUMERIC, _CATEGORICAL = 0, 1, 2


class ContextCounts:
    """Per chain attribute and context length: how many records of each context hold each value."""

    def __init__(self, model: SDModel, codes: np.ndarray):
        self.model = model
        self.codes = codes
        n = codes.shape[0]
        self.levels: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        ids = np.zeros(n, np.int64)
        prefix_ids = [ids]  # context ids of the first L chain attributes, L = 0, 1, ...
        for j in model.chain[:-1]:
            ids = np.unique(ids * len(model.domain[j]) + codes[:, j], return_inverse=True)[1].ravel()
            prefix_ids.append(ids)
        for p, j in enumerate(model.chain):
            levels = []
            for ids in prefix_ids[: p + 1]:
                counts = np.zeros((int(ids.max()) + 1, len(model.domain[j])), np.int64)
                np.add.at(counts, (ids, codes[:, j]), 1)
                levels.append((ids, counts, counts.sum(axis=1)))
            self.levels[j] = levels

    def remove(self, rows: np.ndarray) -> None:
        """The records ``rows`` leave the population."""
        for j, levels in self.levels.items():
            for ids, counts, totals in levels:
                np.subtract.at(counts, (ids[rows], self.codes[rows, j]), 1)
                np.subtract.at(totals, ids[rows], 1)

    def shares(self, attr: int, t: int) -> np.ndarray:
        """S_r(v) for every value v of ``attr`` in record t's context, backing off while it holds < k records."""
        levels = self.levels[attr]
        for length in range(len(levels) - 1, -1, -1):
            ids, counts, totals = levels[length]
            total = totals[ids[t]]
            if total >= self.model.k or length == 0:
                return counts[ids[t]] / total
        raise AssertionError("unreachable: the empty context always answers")

    def distance_rows(self, attr: int, t: int, references) -> dict[int, np.ndarray]:
        """For each reference value code: its distances to every value of ``attr`` (Def. 1-2) in t's context."""
        c = len(self.model.domain[attr])
        if c == 2:
            return {a: np.array([0.0 if a == b else 1.0 for b in range(2)]) for a in references}
        shares = self.shares(attr, t)
        m = self.model.minimum[attr]
        steps = [m / (c - 1) ** j for j in range(1, c)]  # the least similar value first
        out = {}
        for a in references:
            diff = np.abs(shares - shares[a])
            order = [v for v in np.lexsort((np.arange(c), -diff)) if v != a]
            row = np.zeros(c)
            row[order] = steps
            out[a] = row
        return out


def _encode(model: SDModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numeric values, categorical value codes (by the domain's order) and each attribute's kind."""
    n, q = len(model.columns[0]), len(model.columns)
    x = np.zeros((n, q))
    codes = np.zeros((n, q), np.int64)
    kinds = np.zeros(q, np.int64)
    for j, col in enumerate(model.columns):
        if model.numeric[j]:
            x[:, j] = col
            kinds[j] = _NUMERIC if model.range[j] > 0 else _SKIP
        else:
            index = {v: i for i, v in enumerate(model.domain[j])}
            codes[:, j] = [index[v] for v in col.tolist()]
            kinds[j] = _CATEGORICAL if j in model.chain else _SKIP
    return x, codes, kinds


@nb.njit(cache=True, inline="always")
def _distance(x, codes, kinds, means, ranges, per_value, r):
    """D_T(centre, r) (eq. 7): the terms added in attribute order, as the plain version adds them."""
    s = 0.0
    for j in range(kinds.size):
        if kinds[j] == 1:
            s += np.abs(x[r, j] - means[j]) / ranges[j]
        elif kinds[j] == 2:
            s += per_value[j, codes[r, j]]
    return s


@nb.njit(cache=True)
def _nearest(rest, taken, x, codes, kinds, means, ranges, per_value, tie, key):
    """Position in ``rest`` of the record nearest the centre: the first within ``tie`` of the minimum.

    ``rest`` is sorted by attribute ``key`` (numeric; -1 when it is not). Every
    term of the distance is at least 0, so a record's ``key`` term alone bounds
    its distance from below: the search walks outwards from the centre's
    ``key`` value and stops on each side once that term exceeds the best
    distance found plus ``tie``. Records it never reaches can be neither the
    minimum nor within ``tie`` of it.
    """
    m = rest.size
    found = np.empty(m, np.int64)
    dist = np.empty(m)
    n_found = 0
    best = np.inf
    if key < 0:
        left, right = -1, m  # scan everything: no bound
        for i in range(m):
            if not taken[rest[i]]:
                found[n_found], dist[n_found] = i, _distance(x, codes, kinds, means, ranges, per_value, rest[i])
                best = min(best, dist[n_found])
                n_found += 1
    else:
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) // 2
            if x[rest[mid], key] < means[key]:
                lo = mid + 1
            else:
                hi = mid
        left, right = lo - 1, lo
    while left >= 0 or right < m:
        gap_left = np.abs(x[rest[left], key] - means[key]) / ranges[key] if left >= 0 else np.inf
        gap_right = np.abs(x[rest[right], key] - means[key]) / ranges[key] if right < m else np.inf
        i = left if gap_left <= gap_right else right
        if min(gap_left, gap_right) > best + tie:
            break
        if i == left:
            left -= 1
        else:
            right += 1
        if not taken[rest[i]]:
            found[n_found], dist[n_found] = i, _distance(x, codes, kinds, means, ranges, per_value, rest[i])
            best = min(best, dist[n_found])
            n_found += 1
    limit = best + tie
    first = m
    for t in range(n_found):
        if dist[t] <= limit and found[t] < first:
            first = found[t]
    return first


class Cells:
    """The records indexed by their combination of categorical codes (the attributes of kind ``_CATEGORICAL``).

    ``codes[g]`` is combination g's codes, and its records, in the scan
    order of ``position`` (each record's place in the sorted order Fig. 3
    walks), are ``records[start[g]:start[g + 1]]``; ``head[g]`` skips the
    ones taken so far.
    """

    def __init__(self, codes: np.ndarray, kinds: np.ndarray, position: np.ndarray):
        used = codes[:, kinds == _CATEGORICAL]
        self.codes, cell = np.unique(used, axis=0, return_inverse=True)
        cell = cell.ravel()
        self.records = np.lexsort((position, cell)).astype(np.int64)
        self.start = np.searchsorted(cell[self.records], np.arange(self.codes.shape[0] + 1)).astype(np.int64)
        self.head = self.start[:-1].copy()
        self.position = position.astype(np.int64)
        self.columns = np.flatnonzero(kinds == _CATEGORICAL).astype(np.int64)

    def distances(self, per_value: np.ndarray) -> np.ndarray:
        """Each combination's distance to the centre: the terms added in attribute order, as :func:`_distance`."""
        return _cell_distances(self.codes, self.columns, per_value)

    def nearest(self, distance: np.ndarray, taken: np.ndarray) -> int:
        """The record :func:`_nearest` would choose by scanning every record left."""
        return int(_nearest_cell(distance, self.records, self.start, self.head, self.position, taken, TIE))


@nb.njit(cache=True)
def _cell_distances(cells, columns, per_value):
    out = np.zeros(cells.shape[0])
    for g in range(cells.shape[0]):
        s = 0.0
        for c in range(columns.size):
            s += per_value[columns[c], cells[g, c]]
        out[g] = s
    return out


@nb.njit(cache=True)
def _nearest_cell(distance, records, start, head, position, taken, tie):
    """The first record in scan order, among the combinations within ``tie`` of the least distance."""
    best = np.inf
    for g in range(distance.size):
        while head[g] < start[g + 1] and taken[records[head[g]]]:
            head[g] += 1
        if head[g] < start[g + 1] and distance[g] < best:
            best = distance[g]
    first = -1
    for g in range(distance.size):
        if head[g] < start[g + 1] and distance[g] <= best + tie:
            r = records[head[g]]
            if first < 0 or position[r] < position[first]:
                first = r
    return first


def _one_class(model, counts, encoded, rest, taken, t1, cells=None) -> list[int]:
    """t1 and the k-1 records that, one by one, are nearest the centre of those taken so far."""
    x, codes, kinds, ranges, width, key = encoded
    members = [t1]
    means = np.zeros(kinds.size)
    per_value = np.zeros((kinds.size, width))  # D_A(C, y): the least of the rows of C's values
    seen: dict[int, set] = {}
    for j in np.flatnonzero(kinds == _CATEGORICAL):
        seen[j] = {codes[t1, j]}
        per_value[j, : len(model.domain[j])] = counts.distance_rows(j, t1, [codes[t1, j]])[codes[t1, j]]
    distance = None  # the combinations' distances to the centre, while it stays the same
    while len(members) < model.k:
        if cells is not None:
            if distance is None:
                distance = cells.distances(per_value)
            r = cells.nearest(distance, taken)
        else:
            for j in np.flatnonzero(kinds == _NUMERIC):
                means[j] = model.columns[j][members].mean()
            r = int(rest[_nearest(rest, taken, x, codes, kinds, means, ranges, per_value, TIE, key)])
        members.append(r)
        taken[r] = True
        for j, values in seen.items():
            if codes[r, j] not in values:
                values.add(codes[r, j])
                c = len(model.domain[j])
                row = counts.distance_rows(j, t1, [codes[r, j]])[codes[r, j]]
                per_value[j, :c] = np.minimum(per_value[j, :c], row)
                distance = None
    return members


def _place_leftovers(model, x, codes, kinds, classes, leftovers) -> None:
    """Each leftover joins the class whose centre is nearest, tables on the whole table, context its own."""
    everyone = ContextCounts(model, codes)
    for t in leftovers:
        d = np.zeros(len(classes))
        for j in range(kinds.size):
            if kinds[j] == _NUMERIC:
                means = np.array([model.columns[j][c].mean() for c in classes])
                d += np.abs(x[t, j] - means) / model.range[j]
            elif kinds[j] == _CATEGORICAL:
                values = [set(codes[c, j].tolist()) for c in classes]
                rows = everyone.distance_rows(j, t, sorted(set().union(*values)))
                y = codes[t, j]
                d += np.array([0.0 if y in v else min(rows[a][y] for a in v) for v in values])
        classes[int(np.flatnonzero(d <= d.min() + TIE)[0])].append(int(t))


def sd_classes(model: SDModel) -> list[list[int]]:
    """Fig. 3 made deterministic (spec section 1.3): the classes as lists of row indices."""
    n = len(model.columns[0]) if model.columns else 0
    x, codes, kinds = _encode(model)
    cards = [len(set(c.tolist())) for c in model.columns]
    sort_col = int(np.argmax(cards))  # the first of the QIs with the most distinct values
    key = model.columns[sort_col] if model.numeric[sort_col] else model.columns[sort_col].astype(str)
    remaining = np.argsort(key, kind="stable")
    ranges = np.array([r if r > 0 else 1.0 for r in model.range])
    width = max([len(d) for d in model.domain if d is not None], default=1)
    encoded = (x, codes, kinds, ranges, width, sort_col if kinds[sort_col] == _NUMERIC else -1)
    counts = ContextCounts(model, codes)
    taken = np.zeros(n, np.bool_)
    cells = None
    if (kinds == _CATEGORICAL).any() and not (kinds == _NUMERIC).any():  # a function of the codes alone
        position = np.empty(n, np.int64)
        position[remaining] = np.arange(n)
        cells = Cells(codes, kinds, position)
    classes: list[list[int]] = []
    head, live = 0, n
    while live >= model.k:
        while taken[remaining[head]]:
            head += 1
        t1 = int(remaining[head])
        taken[t1] = True
        classes.append(_one_class(model, counts, encoded, remaining[head + 1:], taken, t1, cells))
        counts.remove(np.array(classes[-1]))
        live -= model.k
        if remaining.size > 2 * live + 64:  # drop the records taken, now and then
            remaining, head = remaining[~taken[remaining]], 0
    remaining = remaining[~taken[remaining]]
    if not classes:
        return [remaining.tolist()] if remaining.size else []
    _place_leftovers(model, x, codes, kinds, classes, remaining.tolist())
    return classes


#: the compiled kernels the clustering calls
KERNELS = (_nearest, _cell_distances, _nearest_cell)
