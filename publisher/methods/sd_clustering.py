"""The classes of SD k-anonymization (spec/methods.md section 1.3), exact and fast.

Fig. 3 is quadratic by nature: every class scans every record left, k-1
times, under contingency tables recounted on the records left. This module
computes the same classes as :func:`publisher.methods.sd_model.sd_classes_exhaustive`,
number for number, and spends its time differently:

- the contingency tables of every chain attribute, at every context length
  the back-off may need, are counted once (:class:`ContextCounts`) and
  decremented as classes leave, instead of being recounted for every class;
- the records are indexed by tuple of values (:func:`tuple_index`), sorted by
  a numeric attribute when there is one, so that the search for the record
  nearest a class's centre visits the tuples near the centre's value only;
- the whole loop is compiled (:func:`publisher.methods.sd_scan.sd_loop`), and
  adds the same terms in the same order as the plain version, so the
  floating-point sums, the minimum and the tie rule agree exactly.

The few records left when fewer than k remain join their nearest class here
(:func:`_place_leftovers`), as the plain version places them.
"""

from __future__ import annotations

import numpy as np

from publisher.methods.sd_model import TIE, SDModel, step
from publisher.methods.sd_scan import CATEGORICAL, KERNELS, NUMERIC, SKIP, sd_loop
from verifier.core.distinct_rows import unique_rows
from verifier.data.distinct_values import distinct_values

__all__ = ["KERNELS", "sd_classes", "tuple_index", "ContextCounts"]


class ContextCounts:
    """Per chain attribute and context length: how many records of each context hold each value."""

    def __init__(self, model: SDModel, codes: np.ndarray):
        self.model = model
        n = codes.shape[0]
        self.levels: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        ids = np.zeros(n, np.int64)
        prefix_ids = [ids]  # context ids of the first L chain attributes, L = 0, 1, ...
        for j in model.chain[:-1]:
            ids = distinct_values(ids * len(model.domain[j]) + codes[:, j], return_inverse=True)[1]
            prefix_ids.append(ids)
        for p, j in enumerate(model.chain):
            levels = []
            for ids in prefix_ids[: p + 1]:
                counts = np.zeros((int(ids.max()) + 1, len(model.domain[j])), np.int64)
                np.add.at(counts, (ids, codes[:, j]), 1)
                levels.append((ids, counts, counts.sum(axis=1)))
            self.levels[j] = levels

    def shares(self, attr: int, t: int) -> np.ndarray:
        """S_r(v) for every value v of ``attr`` in record t's context, backing off while it holds < k records."""
        levels = self.levels[attr]
        for length in range(len(levels) - 1, -1, -1):
            ids, counts, totals = levels[length]
            total = totals[ids[t]]
            if total >= self.model.k or length == 0:
                return counts[ids[t]] / total
        raise AssertionError("unreachable: the empty context always answers")

    def steps(self, attr: int) -> list[float]:
        """The distances Def. 2 gives the values of ``attr`` with 3 or more values, the least similar first."""
        c, m = len(self.model.domain[attr]), self.model.minimum[attr]
        return [step(m, c, j) for j in range(1, c)]

    def distance_rows(self, attr: int, t: int, references) -> dict[int, np.ndarray]:
        """For each reference value code: its distances to every value of ``attr`` (Def. 1-2) in t's context."""
        c = len(self.model.domain[attr])
        if c == 2:
            return {a: np.array([0.0 if a == b else 1.0 for b in range(2)]) for a in references}
        shares = self.shares(attr, t)
        steps = self.steps(attr)
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
            kinds[j] = NUMERIC if model.range[j] > 0 else SKIP
        else:
            codes[:, j] = model.codes(j)
            kinds[j] = CATEGORICAL if j in model.chain else SKIP
    return x, codes, kinds


def _place_leftovers(model, everyone: ContextCounts, x, codes, kinds, classes, leftovers) -> None:
    """Each leftover joins the class whose centre is nearest, tables on the whole table, context its own."""
    for t in leftovers:
        d = np.zeros(len(classes))
        for j in range(kinds.size):
            if kinds[j] == NUMERIC:
                means = np.array([model.columns[j][c].mean() for c in classes])
                d += np.abs(x[t, j] - means) / model.range[j]
            elif kinds[j] == CATEGORICAL:
                values = [set(codes[c, j].tolist()) for c in classes]
                rows = everyone.distance_rows(j, t, sorted(set().union(*values)))
                y = codes[t, j]
                d += np.array([0.0 if y in v else min(rows[a][y] for a in v) for v in values])
        classes[int(np.flatnonzero(d <= d.min() + TIE)[0])].append(int(t))


def tuple_index(x: np.ndarray, codes: np.ndarray, kinds: np.ndarray, position: np.ndarray) -> tuple:
    """The records by tuple of the values the distance reads: (values, codes, records, start, head).

    Tuple g's numeric values are ``values[g]`` and its codes ``codes[g]``; its
    records, in scan order (``position``), are ``records[start[g]:start[g + 1]]``
    and ``head[g]`` will skip the ones taken.
    """
    numeric, categorical = kinds == NUMERIC, kinds == CATEGORICAL
    used = np.concatenate([np.zeros((x.shape[0], 1)), x[:, numeric], codes[:, categorical].astype(float)], axis=1)
    _, first, cell = unique_rows(used, return_index=True, return_inverse=True)
    records = np.lexsort((position, cell)).astype(np.int64)
    start = np.searchsorted(cell[records], np.arange(first.size + 1)).astype(np.int64)
    return np.ascontiguousarray(x[first]), np.ascontiguousarray(codes[first]), records, start, start[:-1].copy()


def _tables(model: SDModel, counts: ContextCounts, n: int) -> tuple:
    """:class:`ContextCounts` as flat arrays: (card, steps, prefix, offsets, totals_at, counts, totals)."""
    s = max(len(model.chain), 1)
    width = max([len(d) for d in model.domain if d is not None], default=1)
    card, steps = np.zeros(s, np.int64), np.zeros((s, width))
    prefix = np.zeros((s, n), np.int64)
    offsets, totals_at = np.zeros((s, s), np.int64), np.zeros((s, s), np.int64)
    flat_counts, flat_totals = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    at_counts = at_totals = 0
    for p, j in enumerate(model.chain):
        card[p] = len(model.domain[j])
        steps[p, : card[p] - 1] = counts.steps(j)
        for length, (ids, table, totals) in enumerate(counts.levels[j]):
            prefix[length] = ids
            offsets[p, length], totals_at[p, length] = at_counts, at_totals
            flat_counts.append(table.ravel())
            flat_totals.append(totals)
            at_counts, at_totals = at_counts + table.size, at_totals + totals.size
    return (card, steps, prefix, offsets, totals_at, np.concatenate(flat_counts).astype(np.int64),
            np.concatenate(flat_totals).astype(np.int64))


def sd_classes(model: SDModel) -> list[list[int]]:
    """Fig. 3 made deterministic (spec section 1.3): the classes as lists of row indices."""
    n = len(model.columns[0]) if model.columns else 0
    if n < model.k:
        return [list(range(n))] if n else []
    x, codes, kinds = _encode(model)
    cards = [len(set(c.tolist())) if model.numeric[j] else len(model.domain[j]) for j, c in enumerate(model.columns)]
    sort_col = int(np.argmax(cards))  # the first of the QIs with the most distinct values
    key = model.columns[sort_col] if model.numeric[sort_col] else model.columns[sort_col].astype(str)
    order = np.argsort(key, kind="stable").astype(np.int64)
    position = np.empty(n, np.int64)
    position[order] = np.arange(n)
    ranges = np.array([r if r > 0 else 1.0 for r in model.range])
    walked = [j for j in np.flatnonzero(kinds == NUMERIC)]  # the numeric attribute of most values bounds the search
    walk = max(walked, key=lambda j: (cards[j], -j)) if walked else -1
    everyone = ContextCounts(model, codes)  # the tables of the whole table: the loop works on a copy
    tables = _tables(model, everyone, n)
    chain = np.array(model.chain, np.int64)
    index = tuple_index(x, codes, kinds, position)
    members, n_classes, taken = sd_loop(model.k, order, position, x, codes, kinds, ranges, index, walk, chain,
                                        tables, tables[1].shape[1])
    classes = members[: n_classes * model.k].reshape(n_classes, model.k).tolist()
    _place_leftovers(model, everyone, x, codes, kinds, classes, order[~taken[order]].tolist())
    return classes
