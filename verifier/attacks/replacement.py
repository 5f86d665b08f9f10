"""Attribute disclosure under random attribute replacement (paper 004, RA and enhanced RA).

RA re-draws quasi-identifier values and leaves the sensitive attributes
untouched, so a subject's released row still carries her true sensitive
value; what protects her is that the attacker cannot tell which released row
is hers. Knowing her quasi-identifiers ``q`` and everything published (the
attributes replaced, the probabilities ``p``, ``k``), the attacker weighs each
released row ``r`` by the likelihood that ``q`` became its published values
``q'_r`` (spec/methods.md 3.3, eq. 6):

- ``k = 1`` (Algorithm 1): attribute ``i`` is re-drawn with probability
  ``p_i`` and gets ``v`` with probability ``f_i(v)``, so with
  ``w_i = p_i f_i(q'_i)``: ``L = sum_i w_i`` when ``q' = q`` (any re-draw may
  return the old value), ``L = w_i`` when ``q'`` differs from ``q`` in
  attribute ``i`` alone, and ``L = 0`` otherwise;
- ``k > 1`` (Algorithm 2): a uniform ``k``-subset ``A`` of the attributes is
  re-drawn, so ``L = C(m, k)^-1 sum over A containing D of prod_{i in A} f_i(q'_i)``
  where ``D`` is the set of attributes in which ``q'`` differs from ``q``;
  that is ``prod_{i in D} f_i(q'_i) e_{k-|D|}(f_j(q'_j), j not in D)`` with
  ``e_t`` the elementary symmetric polynomial, and 0 when ``|D| > k``.

Paper 004's risk is the posterior probability of her own sensitive value,
``sum_{r: S_r = s} L_r / sum_r L_r``: the chance that an attacker who
predicts the most likely value, or samples one, is right about her. The
frequencies ``f_i`` are estimated from the release: a re-draw follows the
original marginal, so the released marginal equals it in expectation.
docs/attribute-disclosure.md gives the derivation.

That posterior reads her record alone. The intruder of SPEC section 16
knows everyone's quasi-identifiers, so he matches the other people to the
released rows too, and his exact posterior is a ratio of permanents. Two
released rows that show the same quasi-identifiers are alike to every
person, so whatever the matching, she is as likely to be either: his
posterior is a mixture, over the groups of rows alike in what they show
that she could have become (``L_r > 0``), of her value's share in the
group. Its largest share, :func:`match_bound`, bounds it whatever the others'
quasi-identifiers are.
"""

from __future__ import annotations

from itertools import combinations
from math import comb
from typing import Sequence

import numpy as np

from verifier.attacks.disclosure import CERTAIN
from verifier.core.distinct_rows import unique_rows

__all__ = ["MOST_SUBSETS", "distinct_release", "match_bound", "qi_groups", "reachable_index", "reachable_rows",
           "replacement_likelihood", "replacement_risk", "replacement_claims", "value_masses"]

#: the most sets of k attributes :func:`reachable_index` keys the release by (C(m, k)); beyond, every row is weighed
MOST_SUBSETS = 64


def _frequencies(released: np.ndarray) -> list[dict[float, float]]:
    n = max(released.shape[0], 1)
    out = []
    for j in range(released.shape[1]):
        values, counts = np.unique(released[:, j], return_counts=True)
        out.append({float(v): c / n for v, c in zip(values, counts)})
    return out


def _published_frequencies(released: np.ndarray, frequencies: list[dict[float, float]]) -> np.ndarray:
    """``F[r, i] = f_i(q'_{r,i})``: how often each published value occurs in its column."""
    F = np.empty(released.shape)
    for j in range(released.shape[1]):
        values, inverse = np.unique(released[:, j], return_inverse=True)
        F[:, j] = np.array([frequencies[j].get(float(v), 0.0) for v in values])[inverse.ravel()]
    return F


def distinct_release(released_qi: np.ndarray, released_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The release as its distinct ``(q', s)`` rows, their counts, and ``F`` of their quasi-identifiers: every
    subject is weighed against these (her check and every record's count alike, so their figures are equal)."""
    released_qi = np.asarray(released_qi, dtype=np.float64)
    rows, weights = unique_rows(np.column_stack([released_qi, released_s]), return_counts=True)
    return rows, weights, _published_frequencies(rows[:, :-1], _frequencies(released_qi))


def qi_groups(released_qi: np.ndarray) -> np.ndarray:
    """Each released row's group: the rows that show the same quasi-identifiers share one number."""
    released_qi = np.asarray(released_qi, dtype=np.float64) + 0.0
    if released_qi.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return unique_rows(released_qi, return_inverse=True)[1]


def match_bound(L: np.ndarray, groups: np.ndarray, released_s: np.ndarray, s: float,
                weights: np.ndarray | None = None) -> float:
    """The most the named intruder's posterior of her value ``s`` can be: its largest share among the groups of
    released rows alike in their quasi-identifiers (:func:`qi_groups`) that she could have become (``L > 0``);
    ``weights`` counts the rows each row of ``released_s`` stands for. 0 where she could have become none."""
    reachable = L > 0
    if not reachable.any():
        return 0.0
    w = np.ones(len(groups)) if weights is None else np.asarray(weights, dtype=np.float64)
    size = np.bincount(groups, weights=w)
    mine = np.bincount(groups, weights=np.where(np.asarray(released_s) == s, w, 0.0), minlength=len(size))
    used = np.unique(groups[reachable])
    return float((mine[used] / size[used]).max())


def replacement_likelihood(q: np.ndarray, released: np.ndarray, p: Sequence[float], k: int,
                           frequencies: list[dict[float, float]] | None = None, *,
                           F: np.ndarray | None = None) -> np.ndarray:
    """``L_r``: the likelihood that quasi-identifiers ``q`` (``(m,)``) were published as each row of ``released`` (``(n, m)``).

    ``F`` (from the frequencies) may be given when many subjects are weighed against one release.
    """
    released = np.asarray(released, dtype=np.float64)
    n, m = released.shape
    if F is None:
        F = _published_frequencies(released, frequencies if frequencies is not None else _frequencies(released))
    differs = released != np.asarray(q, dtype=np.float64)[None, :]
    nd = differs.sum(axis=1)
    if k == 1:
        w = F * np.asarray(p, dtype=np.float64)[None, :]
        return np.where(nd == 0, w.sum(axis=1), np.where(nd == 1, (w * differs).sum(axis=1), 0.0))
    # e_t over the attributes that agree, by the usual recurrence; the differing ones must all be re-drawn
    e = np.zeros((n, k + 1))
    e[:, 0] = 1.0
    for j in range(m):
        same = ~differs[:, j]
        for t in range(k, 0, -1):
            e[:, t] += np.where(same, e[:, t - 1] * F[:, j], 0.0)
    forced = np.prod(np.where(differs, F, 1.0), axis=1)
    rest = k - nd
    picked = np.where(rest >= 0, e[np.arange(n), np.clip(rest, 0, k)], 0.0)
    return forced * picked / comb(m, k)


def reachable_index(released_qi: np.ndarray, k: int) -> list[tuple[list[int], dict]] | None:
    """The released rows keyed by their values outside each set ``A`` of ``min(k, m)`` attributes: L > 0 only where
    her quasi-identifiers differ from a row's in at most k attributes, that is where she agrees with it outside some
    such A. None where there are more than :data:`MOST_SUBSETS` such sets (every row is then weighed)."""
    released_qi = np.asarray(released_qi, dtype=np.float64) + 0.0
    m = released_qi.shape[1]
    t = min(k, m)
    if comb(m, t) > MOST_SUBSETS:
        return None
    out = []
    for free in combinations(range(m), t):
        keep = [j for j in range(m) if j not in free]
        table: dict[tuple, list[int]] = {}
        for r, key in enumerate(map(tuple, released_qi[:, keep].tolist())):
            table.setdefault(key, []).append(r)
        out.append((keep, {key: np.array(rows, dtype=np.int64) for key, rows in table.items()}))
    return out


def reachable_rows(q: np.ndarray, index: list[tuple[list[int], dict]]) -> np.ndarray:
    """The rows of :func:`reachable_index` she could have become (every row with L > 0, and maybe some with
    L = 0 where a published frequency is 0), ascending."""
    q = np.asarray(q, dtype=np.float64) + 0.0
    parts = [table.get(tuple(q[keep].tolist())) for keep, table in index]
    parts = [part for part in parts if part is not None]
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def replacement_risk(q: np.ndarray, s: float, released_qi: np.ndarray, released_s: np.ndarray, p: Sequence[float],
                     k: int, frequencies: list[dict[float, float]] | None = None, *, F: np.ndarray | None = None,
                     weights: np.ndarray | None = None, groups: np.ndarray | None = None,
                     index: list[tuple[list[int], dict]] | None = None) -> dict:
    """One subject's posterior: ``risk`` of her sensitive value ``s`` (paper 004's), ``candidates`` (rows with
    L > 0), ``best_guess``, and with ``groups`` (:func:`qi_groups` of ``released_qi``) the named intruder's
    :func:`match_bound`.

    ``weights`` counts how many released rows each row of ``released_qi`` stands for (distinct rows). With
    ``index`` (:func:`reachable_index` of ``released_qi``, and ``F``) only the rows she could have become are
    weighed: every other row's L is 0, and each group of rows alike in their quasi-identifiers is in or out
    whole, so the figures are the same (the sums, of fewer zeros, to the last few bits).
    """
    if index is not None and F is not None:
        take = reachable_rows(q, index)
        released_qi, released_s, F = np.asarray(released_qi)[take], np.asarray(released_s)[take], F[take]
        weights = None if weights is None else np.asarray(weights)[take]
        groups = None if groups is None else np.asarray(groups)[take]
    L = replacement_likelihood(q, released_qi, p, k, frequencies, F=F)
    bound = {} if groups is None else {"match_bound": match_bound(L, groups, released_s, s, weights)}
    candidates = int(np.count_nonzero(L)) if weights is None else int(weights[L > 0].sum())
    if weights is not None:
        L = L * weights
    total = float(L.sum())
    if total <= 0.0:
        return {"risk": 0.0, "candidates": 0, "best_guess": None, **bound}
    values, mass = value_masses(L, released_s)
    # a probability: two sums of the same terms in another order may put it an ulp above 1
    return {"risk": min(1.0, float(L[released_s == s].sum() / total)), "candidates": candidates,
            "best_guess": float(values[int(np.argmax(mass))]), **bound}


def value_masses(L: np.ndarray, released_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each sensitive value published and the likelihood ``L`` of the rows that publish it: the attacker's
    posterior of her value, unnormalized (paper 004)."""
    values = np.unique(released_s)
    return values, np.array([L[released_s == v].sum() for v in values])


def replacement_claims(original_qi: np.ndarray, original_s: np.ndarray, released_qi: np.ndarray,
                       released_s: np.ndarray, p: Sequence[float], k: int) -> dict:
    """The risk of every original record: ``max``, ``mean`` and mean ``candidates`` (the protector's claim).

    Records with the same quasi-identifiers and sensitive value have the same
    risk, so each distinct combination is computed once.
    """
    rows, weights, F = distinct_release(released_qi, released_s)
    index = reachable_index(rows[:, :-1], k)
    keys = np.column_stack([original_qi, original_s]).astype(np.float64) + 0.0
    distinct, counts = unique_rows(keys, return_counts=True)
    risks = np.empty(len(distinct))
    cands = np.empty(len(distinct))
    for i, row in enumerate(distinct):
        one = replacement_risk(row[:-1], row[-1], rows[:, :-1], rows[:, -1], p, k, F=F, weights=weights, index=index)
        risks[i], cands[i] = one["risk"], one["candidates"]
    n = max(int(counts.sum()), 1)
    return {"max": float(risks.max()) if len(risks) else 0.0,
            "mean": float((risks * counts).sum() / n), "mean_candidates": float((cands * counts).sum() / n),
            "certain_share": float(counts[risks >= CERTAIN].sum() / n)}
