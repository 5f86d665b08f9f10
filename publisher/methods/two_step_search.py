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

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import pandas as pd

from verifier.attacks.hierarchy import Hierarchy
from verifier.attacks.mask_class import SLACK, Infeasible, mask_counts
from verifier.data.tuple_codes import tuple_codes

__all__ = ["Infeasible", "RootInfeasible", "STEP_ONE", "TwoStepResult", "Records", "least_class", "search",
           "DistinctRecords", "two_step", "mask_counts"]

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
    def unmasked(self) -> Any: ...
    def distortion(self, state: Any, masked: Any) -> tuple[float, float]: ...
    def rows(self, state: Any, masked: Any) -> tuple[list[list[str]], list[list[str]]]: ...


#: how step one may decide the classes: on the quasi-identifiers alone (the released method, issue 58), or with
#: paper 002's alpha-QI on the sensitive values (Fig. 2 as published, for its experiments)
STEP_ONE = ("quasi_identifiers", "alpha_qi")


def least_class(alpha_qi: float, k: int | None) -> int:
    """The fewest rows of a class when step one reads the quasi-identifiers alone: k, and 1/alpha_qi, the fewest
    a class needs for no value to pass alpha_qi whatever the values."""
    return max(k or 1, math.ceil(1.0 / alpha_qi - SLACK))


def search(records: Records, qh: Sequence[Hierarchy], sh: Sequence[Hierarchy], alpha_qi: float, alpha_sa: float,
           k: int | None = None, max_rounds: int | None = None, step_one: str = "alpha_qi") -> TwoStepResult:
    """The greedy two-step algorithm (Fig. 2, made deterministic; spec section 2.5).

    ``step_one="quasi_identifiers"`` decides the classes from the quasi-identifiers alone: a specialization is
    kept while every class holds :func:`least_class` rows, the rounds stop where the QI distortion ratio stops
    falling, and only the last classes are masked. The intruder who reruns the method then learns nothing of
    the values from the classes, and each class's masks from its own values (:mod:`verifier.attacks.mask_class`).
    ``"alpha_qi"`` is Fig. 2 as published: a class must meet alpha-QI and be maskable, and the rounds stop where
    the whole distortion ratio stops falling, each a decision that reads the values (the minimality attack)."""
    if step_one not in STEP_ONE:
        raise ValueError(f"step_one is one of {', '.join(STEP_ONE)}. Got {step_one!r}.")
    for h in sh:
        if alpha_sa < 1.0 / h.leaf_count(h.root) - SLACK:
            raise Infeasible(f"alpha_sa {alpha_sa:g} is below 1/{h.leaf_count(h.root)}, the most a root can spread")
    qi_only = step_one == "quasi_identifiers"
    least = least_class(alpha_qi, k)

    def holds(state) -> bool:  # alpha 1 reads no value: every class holds `least` rows
        return records.alpha_qi(state, 1.0, least) if qi_only else records.alpha_qi(state, alpha_qi, k)

    def masked_of(state):  # under qi_only the classes are masked once chosen
        return (records.unmasked(), []) if qi_only else records.mask(state, alpha_sa)

    def ratio(state, masked) -> float:
        found = records.distortion(state, masked)
        return found[0] if qi_only else sum(found)

    cuts = [[h.root] for h in qh]
    state = records.generalize(cuts)
    if not holds(state):
        raise RootInfeasible("alpha-QI fails even with every quasi-identifier fully generalized" if not qi_only else
                             f"the table has fewer than {least} records, the fewest of a class")
    masked, log = masked_of(state)
    best = (state, masked, [list(c) for c in cuts], log)
    best_dr = ratio(state, masked)
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
            if not holds(state):
                continue
            try:
                masked, trial_log = masked_of(state)
            except Infeasible:
                continue
            chosen = (state, masked, trial, trial_log)
            break
        if chosen is None:
            break
        dr = ratio(chosen[0], chosen[1])
        if dr < best_dr - SLACK:
            best, best_dr, cuts = chosen, dr, chosen[2]
            rounds.append(dr)
        else:
            break
    if qi_only:  # step two on the classes chosen, each from its own values
        masked, log = records.mask(best[0], alpha_sa)
        best = (best[0], masked, best[2], log)
    qi_dr, sa_dr = records.distortion(best[0], best[1])
    qi_rows, sa_rows = records.rows(best[0], best[1])
    return TwoStepResult(qi_rows, sa_rows, best[2], qi_dr, sa_dr, rounds, best[3])


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

    def unmasked(self) -> list[tuple[str, ...]]:
        """Each distinct record's sensitive tuple as it is (no class masked)."""
        return list(self.sa_tuples)

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
             max_rounds: int | None = None, step_one: str = "alpha_qi") -> TwoStepResult:
    """The two-step generalization of the rows ``raw_qi`` (leaf labels) and ``raw_sa``, on their distinct records."""
    records = DistinctRecords.from_columns([list(c) for c in zip(*raw_qi)], [list(c) for c in zip(*raw_sa)], qh, sh)
    return search(records, qh, sh, alpha_qi, alpha_sa, k, max_rounds, step_one)
