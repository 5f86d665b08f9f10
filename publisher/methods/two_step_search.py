"""The two-step generalization's search (paper 002, Fig. 2; spec/methods.md section 2.5) on the distinct records.

:func:`search` is Fig. 2 made deterministic: from every quasi-identifier at
its root, each round tries the specializations of the current cut, the most
populated node first, keeps the first whose classes meet alpha-QI and whose
sensitive values can be masked to alpha-SA, and stops at the first round whose
distortion ratio does not improve. It works through an :class:`Records`
object, which does the steps on some representation of the table.

:class:`DistinctRecords` does them on the table's distinct records (quasi-
identifier leaves and sensitive values), each weighted by how many rows hold
it, with numpy over node codes. Its cost follows the distinct records and the
classes, not the rows: a census of 2e5 rows repeats a few tens of thousands.
Each step gives what the plain version on rows
(:func:`publisher.methods.multi_sensitive.two_step_exhaustive`) gives, to the
bit: a masked class depends on how many rows hold each sensitive tuple, not on
their order, as confidences are exact fractions; the distortion ratios are the
exact sums of the cells' losses rounded once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import pandas as pd

from verifier.attacks.hierarchy import Hierarchy
from verifier.data.tuple_codes import tuple_codes
from verifier.text import number

__all__ = ["Infeasible", "RootInfeasible", "TwoStepResult", "Records", "search", "DistinctRecords", "two_step",
           "mask_counts"]

#: a share above alpha by more than this violates it
SLACK = 1e-12


class Infeasible(Exception):
    """No generalization meets the requirement."""


class RootInfeasible(Infeasible):
    """alpha-QI fails even with every quasi-identifier fully generalized: no alpha_qi below the table's own
    largest share of one sensitive value (or a k above its size) can be met."""


@dataclass
class TwoStepResult:
    qi: list[list[str]]
    sa: list[list[str]]
    cuts: list[list[str]]
    qi_dr: float
    sa_dr: float
    rounds: list[float]
    log: list[dict[str, Any]]

    @property
    def dr(self) -> float:
        return self.qi_dr + self.sa_dr


class Records(Protocol):
    """The steps of the search on one representation of the table; a *state* is the table under one cut."""

    def value_counts(self, q: int) -> Counter: ...
    def generalize(self, cuts: list[list[str]]) -> Any: ...
    def alpha_qi(self, state: Any, alpha: float, k: int | None) -> bool: ...
    def mask(self, state: Any, alpha: float) -> tuple[Any, list[dict[str, Any]]]: ...
    def distortion(self, state: Any, masked: Any) -> tuple[float, float]: ...
    def rows(self, state: Any, masked: Any) -> tuple[list[list[str]], list[list[str]]]: ...


def search(records: Records, qh: Sequence[Hierarchy], sh: Sequence[Hierarchy], alpha_qi: float, alpha_sa: float,
           k: int | None = None, max_rounds: int | None = None) -> TwoStepResult:
    """The greedy two-step algorithm (Fig. 2, made deterministic; spec section 2.5)."""
    for h in sh:
        if alpha_sa < 1.0 / h.leaf_count(h.root) - SLACK:
            raise Infeasible(f"alpha_sa {alpha_sa:g} is below 1/{h.leaf_count(h.root)}, the most a root can spread")
    cuts = [[h.root] for h in qh]
    state = records.generalize(cuts)
    if not records.alpha_qi(state, alpha_qi, k):
        raise RootInfeasible("alpha-QI fails even with every quasi-identifier fully generalized")
    masked, log = records.mask(state, alpha_sa)
    best = (state, masked, [list(c) for c in cuts], log)
    best_dr = sum(records.distortion(state, masked))
    rounds = [best_dr]
    value_counts = [records.value_counts(q) for q in range(len(qh))]
    while max_rounds is None or len(rounds) <= max_rounds:
        candidates = []
        for q, (h, cut) in enumerate(zip(qh, cuts)):
            for node in cut:
                if h.children.get(node):
                    score = sum(c for v, c in value_counts[q].items() if h.covers(node, h.leaf_of[v]))
                    candidates.append((-score, q, h.order[node], node))
        chosen = None
        for _, q, _, node in sorted(candidates):
            trial = [list(c) for c in cuts]
            at = trial[q].index(node)
            trial[q][at : at + 1] = qh[q].children[node]
            state = records.generalize(trial)
            if not records.alpha_qi(state, alpha_qi, k):
                continue
            try:
                masked, trial_log = records.mask(state, alpha_sa)
            except Infeasible:
                continue
            chosen = (state, masked, trial, trial_log)
            break
        if chosen is None:
            break
        dr = sum(records.distortion(chosen[0], chosen[1]))
        if dr < best_dr - SLACK:
            best, best_dr, cuts = chosen, dr, chosen[2]
            rounds.append(dr)
        else:
            break
    qi_dr, sa_dr = records.distortion(best[0], best[1])
    qi_rows, sa_rows = records.rows(best[0], best[1])
    return TwoStepResult(qi_rows, sa_rows, best[2], qi_dr, sa_dr, rounds, best[3])


def _worst(rows: dict[tuple[str, ...], int], sens: Sequence[Hierarchy], alpha: float) -> tuple | None:
    """The violation MaskClass treats first, (conf, i, group key, leaf): the highest leaf confidence above alpha in
    a Q&S group (Def. 5-7), ties by attribute, key and leaf order; None when MD(alpha) holds."""
    worst, worst_rank = None, None
    m = len(sens)
    for i in range(m):
        groups: dict[tuple, Counter] = {}
        for r, count in rows.items():
            groups.setdefault(r[:i] + r[i + 1:], Counter())[r[i]] += count
        for key, nodes in groups.items():
            size = sum(nodes.values())
            conf: dict[str, Fraction] = {}
            for node, count in nodes.items():
                leaves = sens[i].leaves(node)
                for leaf in leaves:
                    conf[leaf] = conf.get(leaf, 0) + Fraction(count, len(leaves))
            for leaf, total in conf.items():
                c = total / size
                if c > alpha + SLACK:
                    rank = (-c, i, tuple(map(str, key)), sens[i].order[leaf])
                    if worst_rank is None or rank < worst_rank:
                        worst, worst_rank = (c, i, key, leaf), rank
    return worst


def mask_counts(rows: dict[tuple[str, ...], int], sens: Sequence[Hierarchy],
                alpha: float) -> tuple[dict[tuple[str, ...], tuple[str, ...]], list[dict[str, Any]]]:
    """MaskClass (section 2.5) on one class's sensitive tuples and how many rows hold each: each tuple's masked
    tuple, and the masking log. Raises :class:`Infeasible` when a violation reaches a root."""
    now = {r: r for r in rows}  # each original tuple's current one
    current = dict(rows)
    log = []
    while True:
        found = _worst(current, sens, alpha)
        if found is None:
            return now, log
        c, i, key, leaf = found
        h = sens[i]
        members = {r[i] for r in current if r[:i] + r[i + 1:] == key}
        v = min((n for n in members if leaf in h.leaves(n)), key=lambda n: (h.leaf_count(n), h.order[n]))
        if v == h.root:
            raise Infeasible(f"sensitive attribute {i}: {leaf!r} keeps confidence {number(float(c))} even at the "
                             f"root, so alpha_sa must be at least {number(float(c))}")
        p = h.parent[v]
        siblings = [s for s in h.children[p] if s != v]
        company = (min(siblings, key=lambda s: (sum(n for r, n in current.items() if h.covers(s, r[i])), h.order[s]))
                   if siblings else None)
        raised = {r: (r[:i] + (p,) + r[i + 1:]) if h.covers(v, r[i]) or (company is not None and h.covers(company, r[i]))
                  else r for r in current}
        changed = sum(n for r, n in current.items() if raised[r] != r)
        merged: dict[tuple[str, ...], int] = {}
        for r, n in current.items():
            merged[raised[r]] = merged.get(raised[r], 0) + n
        current, now = merged, {r: raised[t] for r, t in now.items()}
        log.append({"attribute": i, "value": v, "company": company, "parent": p, "tuples": changed,
                    "confidence": float(c)})


class DistinctRecords:
    """The table as its distinct records (quasi-identifier leaves, sensitive values) and how many rows hold each.

    Quasi-identifier values are coded by their node's position in the hierarchy's pre-order; a *state* is each
    distinct record's node under a cut and its class, (nodes, class, number of classes); a masking gives each
    distinct record its sensitive tuple as published.
    """

    def __init__(self, qi: np.ndarray, sa: np.ndarray, sa_labels: list[list[str]], qh: Sequence[Hierarchy],
                 sh: Sequence[Hierarchy]):
        """``qi``: each row's leaves, coded by their pre-order position; ``sa``: each row's sensitive values,
        coded by their place in ``sa_labels``."""
        self.qh, self.sh, self.sa_labels = list(qh), list(sh), sa_labels
        self.n = qi.shape[0]
        self.labels = [np.array(sorted(h.order, key=h.order.get), dtype=object) for h in qh]
        both = np.concatenate([qi, sa], axis=1)
        _, first, self.row_of = np.unique(tuple_codes(both.T, self.n), return_index=True, return_inverse=True)
        distinct, self.row_of = both[first], self.row_of.ravel()
        self.count = np.bincount(self.row_of, minlength=distinct.shape[0]).astype(np.int64)
        self.qi, self.sa = distinct[:, : len(qh)], distinct[:, len(qh):]
        self.sa_tuples = [tuple(self.sa_labels[i][c] for i, c in enumerate(r)) for r in self.sa.tolist()]

    @classmethod
    def from_columns(cls, qi: Sequence[Sequence[Any]], sa: Sequence[Sequence[Any]], qh: Sequence[Hierarchy],
                     sh: Sequence[Hierarchy], leaf: Sequence[Callable[[Any], str]] | None = None) -> DistinctRecords:
        """From columns of values: ``leaf[j]`` names quasi-identifier j's leaf of a value (default: its text);
        sensitive values are read as text. Each distinct value is looked up once."""
        n = len(qi[0]) if qi else 0
        qi_codes = np.empty((n, len(qi)), np.int64)
        for j, (column, h) in enumerate(zip(qi, qh)):
            inverse, uniques = pd.factorize(pd.Series(column), use_na_sentinel=False)
            name = leaf[j] if leaf is not None else str
            qi_codes[:, j] = np.array([h.order[h.leaf_of[name(u)]] for u in uniques], dtype=np.int64)[inverse]
        sa_codes = np.empty((n, len(sa)), np.int64)
        labels = []
        for i, column in enumerate(sa):
            inverse, uniques = pd.factorize(pd.Series(column).astype(str), use_na_sentinel=False)
            sa_codes[:, i] = inverse
            labels.append([str(u) for u in uniques])
        return cls(qi_codes, sa_codes, labels, qh, sh)

    def value_counts(self, q: int) -> Counter:
        counts = np.bincount(self.qi[:, q], weights=self.count, minlength=len(self.labels[q]))
        return Counter({self.labels[q][v]: int(counts[v]) for v in np.flatnonzero(counts)})

    def generalize(self, cuts: list[list[str]]) -> tuple[np.ndarray, np.ndarray, int]:
        nodes = np.empty_like(self.qi)
        for j, (h, cut) in enumerate(zip(self.qh, cuts)):
            node_of = np.full(len(self.labels[j]), -1, np.int64)
            for node in cut:
                node_of[[h.order[leaf] for leaf in h.leaves(node)]] = h.order[node]
            nodes[:, j] = node_of[self.qi[:, j]]
        key = tuple_codes(nodes.T, nodes.shape[0])
        n_classes = int(key.max()) + 1 if key.size else 0
        return nodes, key, n_classes

    def alpha_qi(self, state, alpha: float, k: int | None) -> bool:
        """Every class holds k rows or more, and no raw sensitive value more than alpha of them."""
        nodes, cls, n_classes = state
        size = np.bincount(cls, weights=self.count, minlength=n_classes).astype(np.int64)
        if k is not None and (size < k).any():
            return False
        for i in range(len(self.sh)):
            width = len(self.sa_labels[i])
            held = np.bincount(cls * width + self.sa[:, i], weights=self.count, minlength=n_classes * width)
            top = held.astype(np.int64).reshape(n_classes, width).max(axis=1)
            if (top / size > alpha + SLACK).any():
                return False
        return True

    def mask(self, state, alpha: float) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
        """MaskClass on every class, in the order of their labels' text: each distinct record's published
        sensitive tuple, and the log."""
        nodes, cls, n_classes = state
        by_class = np.argsort(cls, kind="stable")
        cuts = np.flatnonzero(np.diff(cls[by_class])) + 1
        members = np.split(by_class, cuts)
        keys = [tuple(self.labels[j][nodes[m[0], j]] for j in range(len(self.qh))) for m in members]
        masked: list[tuple[str, ...]] = list(self.sa_tuples)
        log = []
        for c in sorted(range(n_classes), key=lambda c: tuple(map(str, keys[c]))):
            rows: dict[tuple[str, ...], int] = {}
            for d in members[c].tolist():
                rows[self.sa_tuples[d]] = rows.get(self.sa_tuples[d], 0) + int(self.count[d])
            now, steps = mask_counts(rows, self.sh, alpha)
            for d in members[c].tolist():
                masked[d] = now[self.sa_tuples[d]]
            log.extend({"class": list(keys[c]), **step} for step in steps)
        return masked, log

    def distortion(self, state, masked: list[tuple[str, ...]]) -> tuple[float, float]:
        """The distortion ratios: each the exact sum of its cells' information losses (eq. 1), rounded once."""
        nodes = state[0]
        qi_loss = Fraction(0)
        for j, h in enumerate(self.qh):
            held = np.bincount(nodes[:, j], weights=self.count, minlength=len(self.labels[j]))
            for v in np.flatnonzero(held).tolist():
                qi_loss += Fraction(h.info_loss(self.labels[j][v])) * int(held[v])
        sa_held: Counter = Counter()
        for d, r in enumerate(masked):
            sa_held[r] += int(self.count[d])
        sa_loss = sum((Fraction(sum(Fraction(h.info_loss(v)) for h, v in zip(self.sh, r))) * n
                       for r, n in sa_held.items()), Fraction(0))
        qi = float(qi_loss) / (self.n * len(self.qh)) if self.qh else 0.0
        sa = float(sa_loss) / (self.n * len(self.sh)) if self.sh else 0.0
        return qi, sa

    def rows(self, state, masked) -> tuple[list[list[str]], list[list[str]]]:
        nodes = state[0]
        columns = [self.labels[j][nodes[self.row_of, j]].tolist() for j in range(len(self.qh))]
        qi_rows = [list(r) for r in zip(*columns)] if columns else [[] for _ in range(self.n)]
        return qi_rows, [list(masked[d]) for d in self.row_of.tolist()]


def two_step(raw_qi: Sequence[Sequence[str]], raw_sa: Sequence[Sequence[str]], qh: Sequence[Hierarchy],
             sh: Sequence[Hierarchy], alpha_qi: float, alpha_sa: float, k: int | None = None,
             max_rounds: int | None = None) -> TwoStepResult:
    """The two-step generalization of the rows ``raw_qi`` (leaf labels) and ``raw_sa``, on their distinct records."""
    records = DistinctRecords.from_columns([list(c) for c in zip(*raw_qi)], [list(c) for c in zip(*raw_sa)], qh, sh)
    return search(records, qh, sh, alpha_qi, alpha_sa, k, max_rounds)
