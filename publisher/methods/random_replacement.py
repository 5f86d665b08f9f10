"""Random attribute replacement, RA and enhanced RA (paper 004, Yang & Qiao; spec/methods.md section 3).

For every record, RA picks one quasi-identifier (attribute i with probability
p_i) and replaces its value by a draw from that attribute's distribution in
the original table. Enhanced RA picks k distinct attributes, every k-subset
equally likely. The sensitive attributes stay row-aligned, and the
framework shuffles the rows.

The random draws follow the explicit protocol of spec section 0, one uniform
``u = rng.random()`` at a time in the documented order, so a seed gives the
same table on every platform and tests can check published vectors:

- RA, per row: ``u1`` picks the attribute (inverse CDF over p), ``u2`` the
  new value;
- enhanced RA, per row: k uniforms for a partial Fisher-Yates selection of
  the attributes, then k uniforms for the new values.

Metrics (aggregates only; spec section 3.3): probabilistic anonymity Pa
(Prop. 7, Eq. 1), c-amplification (Def. 8) and the exact prior-knowledge
posterior (Eq. 6; Prop. 10's bound is not valid in general), the relative
bias of counting queries (Prop. 12) with its exact variance, and the
query-based utility of section 7.2 (a public workload seed; the estimators of
Eq. 12-13 for generalized and permuted comparators).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from publisher.methods.base import Method, MethodResult, fail, parse_int, parse_names
from publisher.methods.coded_rows import CodedRows
from verifier.core.validation import as_generator
from verifier.data.schema import Schema

__all__ = [
    "RandomAttributeReplacement",
    "Distribution",
    "distributions",
    "entropies",
    "optimal_p",
    "icdf",
    "replace",
    "replace_drawn",
    "probabilistic_anonymity",
    "c_amplification",
    "max_posterior",
    "max_posteriors",
    "relative_biases",
    "bias_and_variance",
    "answer_generalized",
    "answer_anatomy",
    "query_workload",
    "query_relative_errors",
]


@dataclass(frozen=True)
class Distribution:
    """An attribute's empirical distribution in the original table, values sorted by their text."""

    values: tuple[Any, ...]
    probs: np.ndarray

    def prob(self, value: Any) -> float:
        try:
            return float(self.probs[self.values.index(value)])
        except ValueError:
            return 0.0


def distributions(rows: Sequence[Sequence[Any]]) -> list[Distribution]:
    """Dist_i of every column of ``rows``: values ascending by ``str``, probabilities count / n."""
    n = len(rows)
    out = []
    for column in zip(*rows):
        counts: dict[Any, int] = {}
        for v in column:
            counts[v] = counts.get(v, 0) + 1
        values = tuple(sorted(counts, key=str))
        out.append(Distribution(values, np.array([counts[v] / n for v in values])))
    return out


def entropies(dists: Sequence[Distribution]) -> np.ndarray:
    """H_i = -sum f ln f (natural log)."""
    return np.array([-float(np.sum(d.probs * np.log(d.probs))) for d in dists])


def optimal_p(h: np.ndarray) -> np.ndarray:
    """Prop. 7: p_i proportional to e^{H_i} maximizes the probabilistic anonymity."""
    e = np.exp(h)
    return e / e.sum()


def icdf(u: float, probs: np.ndarray) -> int:
    """The smallest i with ``u < probs[0] + ... + probs[i]`` (the last index if rounding leaves none)."""
    i = int(np.searchsorted(np.cumsum(probs), u, side="right"))
    return min(i, len(probs) - 1)


def replace(rows: Sequence[Sequence[Any]], dists: Sequence[Distribution], p: np.ndarray, k: int,
            uniforms) -> tuple[list[tuple[Any, ...]], list[tuple[int, ...]]]:
    """Algorithm 1 (k = 1) or 2 (k > 1) with an iterator of uniforms. Returns the rows and, per row,
    the attributes re-drawn (secret: never published, it tells which values are original)."""
    m = len(dists)
    out, chosen = [], []
    for row in rows:
        new = list(row)
        if k == 1:
            picked = (icdf(next(uniforms), p),)
        else:
            idx = list(range(m))
            for t in range(k):
                j = t + int(math.floor(next(uniforms) * (m - t)))
                idx[t], idx[j] = idx[j], idx[t]
            picked = tuple(idx[:k])
        for a in picked:
            new[a] = dists[a].values[icdf(next(uniforms), dists[a].probs)]
        out.append(tuple(new))
        chosen.append(picked)
    return out, chosen


def replace_drawn(rows: Sequence[Sequence[Any]], dists: Sequence[Distribution], p: np.ndarray, k: int,
                  uniforms: np.ndarray) -> list[tuple[Any, ...]]:
    """:func:`replace`'s rows from the same uniforms given as an array (``2 k`` per row, row after row), drawn a
    column at a time: the same draws, 1e6 rows in about a second instead of 18 s of one row at a time."""
    n, m = len(rows), len(dists)
    u = np.asarray(uniforms, dtype=np.float64)[: 2 * k * n].reshape(n, 2 * k)
    if k == 1:
        picked = np.minimum(np.searchsorted(np.cumsum(p), u[:, 0], side="right"), m - 1)[:, None]
    else:  # the partial Fisher-Yates selection, one step for every row at once
        idx = np.tile(np.arange(m), (n, 1))
        every = np.arange(n)
        for t in range(k):
            j = t + np.floor(u[:, t] * (m - t)).astype(np.int64)
            idx[every, t], idx[every, j] = idx[every, j], idx[every, t].copy()
        picked = idx[:, :k]
    columns = [list(column) for column in zip(*rows)] if n else [[] for _ in range(m)]
    for a, dist in enumerate(dists):
        for t in range(picked.shape[1]):
            mine = np.flatnonzero(picked[:, t] == a)
            if not mine.size:
                continue
            drawn = np.minimum(np.searchsorted(np.cumsum(dist.probs), u[mine, k + t], side="right"),
                               len(dist.probs) - 1)
            values = dist.values
            for r, v in zip(mine.tolist(), drawn.tolist()):
                columns[a][r] = values[v]
    return list(zip(*columns)) if n else []


def probabilistic_anonymity(h: np.ndarray, p: np.ndarray | None = None, k: int = 1) -> dict[str, float]:
    """Pa (Eq. 1: ln Pa = sum p_i (H_i - ln p_i)), Pa_max = sum e^{H_i}, and 1/Pa.

    For enhanced RA (k > 1): ln Pa_k = ln C(m, k) + (k / m) sum H_i, an extension
    (not in the paper) that equals Eq. 3 at k = 1.
    """
    m = len(h)
    if k > 1:
        pa = math.exp(math.log(math.comb(m, k)) + k / m * float(np.sum(h)))
    else:
        p = np.asarray(p, dtype=float)
        pa = math.exp(float(np.sum(p * (h - np.log(p)))))
    return {"Pa": pa, "Pa_max": float(np.sum(np.exp(h))), "guessing_confidence": 1.0 / pa}


def c_amplification(released: tuple[Any, ...], dists: Sequence[Distribution], p: np.ndarray) -> tuple[float, float]:
    """Def. 8 for one released combination: the paper's ``max w / min w`` and the strict ``sum w / min w``,
    with ``w_i = p_i P(Q_i = q'_i)``."""
    w = np.array([p[i] * d.prob(v) for i, (d, v) in enumerate(zip(dists, released))])
    low = w.min()
    if low <= 0:
        return math.inf, math.inf
    return float(w.max() / low), float(w.sum() / low)


def max_posterior(released: tuple[Any, ...], support: Mapping[tuple[Any, ...], float],
                  dists: Sequence[Distribution], p: np.ndarray) -> dict[tuple[Any, ...], float]:
    """Eq. 6, exact: the posterior over originals r of a released q' for an attacker who knows the
    original supports. ``P(r | q') ~ supp(r) L(r -> q')``, L = sum w_i for r = q', w_i when r
    differs from q' only in attribute i."""
    w = [p[i] * d.prob(v) for i, (d, v) in enumerate(zip(dists, released))]
    scores: dict[tuple[Any, ...], float] = {}
    for r, s in support.items():
        diff = [i for i, (a, b) in enumerate(zip(r, released)) if a != b]
        if not diff:
            scores[r] = s * sum(w)
        elif len(diff) == 1:
            scores[r] = s * w[diff[0]]
    total = sum(scores.values())
    return {r: v / total for r, v in scores.items() if v > 0} if total > 0 else {}


def _plans(m: int, p: np.ndarray, k: int) -> list[tuple[tuple[int, ...], float]]:
    if k == 1:
        return [((i,), float(p[i])) for i in range(m)]
    subsets = list(combinations(range(m), k))
    return [(s, 1.0 / len(subsets)) for s in subsets]


def bias_and_variance(rows: Sequence[Sequence[Any]], dists: Sequence[Distribution], p: np.ndarray, k: int,
                      query: Mapping[int, Any]) -> tuple[float, float]:
    """E[R(q)] and the exact Var R(q) of the relative error of ``count(q)`` (Prop. 12; spec section 3.3).

    ``query`` maps attribute index to value. ``pi_r``, the chance that record r
    is released matching q, sums over the ways its attributes are re-drawn.
    """
    count = sum(all(r[i] == v for i, v in query.items()) for r in rows)
    if count == 0:
        raise fail("the query matches no original record: its relative error is undefined")
    plans = _plans(len(dists), p, k)
    pis = []
    for r in rows:
        pi_r = 0.0
        for attrs, prob in plans:
            kept_ok = all(r[i] == v for i, v in query.items() if i not in attrs)
            if kept_ok:
                pi_r += prob * math.prod(dists[i].prob(query[i]) for i in attrs if i in query)
        pis.append(pi_r)
    pis = np.array(pis)
    return float(pis.sum() / count - 1.0), float(np.sum(pis * (1 - pis)) / count**2)


def relative_biases(rows: Sequence[Sequence[Any]], dists: Sequence[Distribution], p: np.ndarray, k: int,
                    combinations_: Sequence[Sequence[Any]]) -> list[float]:
    """E[R(q)] of :func:`bias_and_variance` for each full combination q, over the distinct rows with their counts
    (equal to 1e-12: the same terms, each distinct row's once times its count).

    A record keeps q under a plan (the attributes re-drawn) when every
    attribute it differs from q in is re-drawn; so it is the count of its
    mismatches that each plan is checked against. Records with the same
    values have the same chance, so each distinct row is weighed once: a
    census of 1e6 records has some thousands of them.
    """
    coded = CodedRows.of(rows, len(dists))
    distinct, counts = coded.cells
    plans = _plans(len(dists), p, k)
    out = []
    for q in combinations_:
        miss = coded.mismatches(q, distinct=True)
        total = miss.sum(axis=1)
        count = int(counts[total == 0].sum())
        if count == 0:
            raise fail("the query matches no original record: its relative error is undefined")
        pis = np.zeros(distinct.shape[0])
        for attrs, prob in plans:
            kept = total == miss[:, list(attrs)].sum(axis=1)
            pis = pis + np.where(kept, prob * math.prod(dists[i].prob(q[i]) for i in attrs), 0.0)
        out.append(float((pis * counts).sum() / count - 1.0))
    return out


def max_posteriors(released: Sequence[tuple[Any, ...]], support: Mapping[tuple[Any, ...], float],
                   dists: Sequence[Distribution], p: np.ndarray) -> list[float]:
    """The largest posterior of :func:`max_posterior` (0 when none) for each released combination, the support's
    combinations coded once; the same sums in the same order, so equal to the bit."""
    keys = list(support)
    weights = [support[r] for r in keys]
    coded = CodedRows.of(keys, len(dists))
    out = []
    for q in released:
        w = [p[i] * d.prob(v) for i, (d, v) in enumerate(zip(dists, q))]
        near = coded.within_one(q)  # the rows that differ from q in one attribute at most, ascending
        miss = coded.mismatches(q, near)
        count = miss.sum(axis=1)
        scores = [weights[r] * (sum(w) if count[t] == 0 else w[int(np.argmax(miss[t]))])
                  for t, r in enumerate(near.tolist())]
        total = sum(scores)
        out.append(max((v / total for v in scores if v > 0), default=0.0) if total > 0 else 0.0)
    return out


def _parse_p(name: str, text: str) -> str | list[float]:
    text = text.strip()
    if text in ("optimal", "uniform"):
        return text
    try:
        return [float(t) for t in text.split(",")]
    except ValueError:
        raise fail(f"parameter {name}: optimal, uniform, or comma-separated probabilities; got {text!r}") from None


class RandomAttributeReplacement(Method):
    """RA (k = 1) and enhanced RA (k > 1) on the quasi-identifiers (paper 004).

    Parameters: ``k`` attributes re-drawn per record (default 1); ``p``
    (``optimal``, ``uniform`` or one probability per QI, used when k = 1).
    Every QI is treated as categorical: pre-bin continuous ones (a column of
    unique values has H = ln n and dominates p). Secret draws: the attribute
    choices and the new values. RA gives no k-anonymity guarantee.
    """

    name = "random_attribute_replacement"
    kinds = ("numeric", "ordinal", "nominal")
    parsers = {"k": parse_int, "p": _parse_p, "attributes": parse_names, "n_queries": parse_int,
               "eval_seed": parse_int}
    seed_use = "which attributes each record re-draws, and the values drawn"

    def __init__(self, *, k: int = 1, p: str | Sequence[float] = "optimal", attributes: Sequence[str] | None = None,
                 n_queries: int = 200, eval_seed: int = 0, allow_degenerate: bool = False):
        if n_queries < 1 or eval_seed < 0:
            raise fail("random_attribute_replacement: n_queries >= 1 and a non-negative eval_seed")
        self.n_queries, self.eval_seed = int(n_queries), int(eval_seed)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise fail(f"random_attribute_replacement: k must be a positive integer. Got {k!r}.")
        if isinstance(p, str):
            if p not in ("optimal", "uniform"):
                raise fail(f"random_attribute_replacement: p is optimal, uniform or a list. Got {p!r}.")
        else:
            p = [float(v) for v in p]
            if any(not math.isfinite(v) or v <= 0 for v in p) or abs(sum(p) - 1) > 1e-9:
                raise fail(f"random_attribute_replacement: p must be positive and sum to 1. Got {p!r}.")
        self.k, self.p = int(k), p
        self.attributes = tuple(attributes) if attributes is not None else None
        self._p_used: list[float] | None = None

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k, "p": self.p if isinstance(self.p, str) else list(self.p),
                "p_used": self._p_used, "n_queries": self.n_queries, "eval_seed": self.eval_seed, "attributes": list(self.attributes) if self.attributes is not None else None}

    def apply(self, table: pd.DataFrame, schema: Schema, *, random_state, original=None) -> MethodResult:
        rng = as_generator(random_state)
        names = list(self.attributes) if self.attributes is not None else [
            a.name for a in schema.attributes if a.role == "quasi_identifier"]
        for n in names:
            if n not in schema.names:
                raise fail(f"random_attribute_replacement: {n!r} is not an attribute of the table")
        m = len(names)
        if m == 0:
            raise fail("random_attribute_replacement needs quasi-identifiers, and the schema marks none: give the "
                       "columns an attacker could know the role quasi_identifier", "METHOD_NOT_APPLICABLE")
        if self.k > m:
            raise fail(f"random_attribute_replacement: k = {self.k} is more than the {m} quasi-identifiers; "
                       f"k is from 1 to {m} here")
        rows = list(zip(*[table[name].tolist() for name in names]))  # a column at a time: 6x itertuples' pace
        dists = distributions(rows)
        h = entropies(dists)
        if self.k > 1:
            p = np.full(m, 1.0 / m)
        elif self.p == "optimal":
            p = optimal_p(h)
        elif self.p == "uniform":
            p = np.full(m, 1.0 / m)
        else:
            if len(self.p) != m:
                raise fail(f"random_attribute_replacement: p has {len(self.p)} entries for {m} quasi-identifiers")
            p = np.array(self.p)
        self._p_used = [float(v) for v in p]
        n = len(rows)
        new_rows = replace_drawn(rows, dists, p, self.k, rng.random(2 * self.k * n))
        out = table.copy()
        for j, name in enumerate(names):
            out[name] = [r[j] for r in new_rows]
        metrics: dict[str, Any] = {"attributes": names, "entropy": dict(zip(names, map(float, h))),
                                   **probabilistic_anonymity(h, p, self.k)}
        distinct = sorted(set(new_rows), key=str)
        if self.k == 1 and distinct:
            amp = np.array([c_amplification(q, dists, p) for q in distinct])
            metrics["c_amplification"] = {"max": float(amp[:, 0].max()), "mean": float(amp[:, 0].mean()),
                                          "strict_max": float(amp[:, 1].max()), "strict_mean": float(amp[:, 1].mean())}
            support: dict[tuple[Any, ...], float] = {}
            for r in rows:
                support[r] = support.get(r, 0.0) + 1.0 / n
            posts = max_posteriors(distinct, support, dists, p)
            metrics["max_posterior"] = {"max": float(np.max(posts)), "mean": float(np.mean(posts))}
        sens = [a.name for a in schema.attributes if a.role == "sensitive"]
        if sens:
            s_col = table[sens[0]].tolist()
            work = query_workload(rows, s_col, dims=range(1, m + 1), n_queries=self.n_queries, eval_seed=self.eval_seed)
            metrics["query_relative_error"] = {
                "sensitive": sens[0], "eval_seed": self.eval_seed, "queries_per_dimension": self.n_queries,
                "by_dimension": {str(j): e for j, e in query_relative_errors(rows, new_rows, s_col, work).items()}}
        combos = sorted(set(rows), key=str)
        biases = [abs(b) for b in relative_biases(rows, dists, p, self.k, combos[:200])]
        metrics["relative_bias_full_combinations"] = {"max": float(np.max(biases)), "mean": float(np.mean(biases)),
                                                      "combinations": len(biases)}
        return MethodResult(out, metrics)


# ----------------------------------------------------------------------------- query-based utility (section 3.3, paper 7.2)


def answer_generalized(groups: Sequence[Mapping[str, Any]], query: Mapping[str, set], sensitive: str,
                       s_values: set) -> float:
    """Eq. 12: a generalized or l-diverse release's estimate of a count query.

    ``groups``: each ``{"covers": {attr: set of original values covered}, "sensitive": [values]}``;
    the estimate assumes the QI values spread uniformly over what the group covers.
    """
    total = 0.0
    for g in groups:
        hits = sum(v in s_values for v in g["sensitive"])
        share = 1.0
        for attr, wanted in query.items():
            covered = g["covers"][attr]
            share *= len(wanted & covered) / len(covered)
        total += hits * share
    return total


def answer_anatomy(groups: Sequence[Mapping[str, Any]], query: Mapping[str, set], s_values: set) -> float:
    """Eq. 13: a permuted (Anatomy) release's estimate: ``sum_p #_p(R_s) #_p(QI rows matching) / |p|``."""
    total = 0.0
    for g in groups:
        rows = g["rows"]  # the group's QI rows, as {attr: value}
        hits = sum(v in s_values for v in g["sensitive"])
        matching = sum(all(r[a] in wanted for a, wanted in query.items()) for r in rows)
        total += hits * matching / len(rows)
    return total


def query_workload(rows: Sequence[Sequence[Any]], sensitive: Sequence[Any], *, dims: Sequence[int],
                   n_queries: int, eval_seed: int) -> list[tuple[int, dict[int, set], set]]:
    """Count queries of paper 004 section 7.2 with their own public seed.

    For each dimension j: j QIs chosen without replacement; for each chosen QI
    and for S, a size b uniform in 1..|domain| and b values without
    replacement from the sorted domain. A query with a true answer of 0 is drawn
    again (at most 100 tries).
    """
    rng = np.random.default_rng(eval_seed)
    m = len(rows[0]) if rows else 0
    coded = _with_sensitive(rows, sensitive, m)
    *domains, s_domain = [sorted(values, key=str) for values in coded.index]  # each column's values, once
    out = []
    for j in dims:
        for _ in range(n_queries):
            for _try in range(100):
                attrs = rng.choice(m, size=j, replace=False)
                query = {int(a): set(rng.choice(np.array(domains[a], dtype=object),
                                                size=int(rng.integers(1, len(domains[a]) + 1)), replace=False))
                         for a in attrs}
                s_values = set(rng.choice(np.array(s_domain, dtype=object),
                                          size=int(rng.integers(1, len(s_domain) + 1)), replace=False))
                if _count(coded, query, s_values) > 0:
                    break
            out.append((j, query, s_values))
    return out


def _with_sensitive(rows: Sequence[Sequence[Any]], sensitive: Sequence[Any], m: int) -> CodedRows:
    """The rows with the sensitive value as a last column, coded."""
    return CodedRows.of([(*r, s) for r, s in zip(rows, sensitive)], m + 1)


def _count(coded: CodedRows, query: Mapping[int, set], s_values: set) -> int:
    """Rows matching the query on the quasi-identifiers and holding one of ``s_values`` (the last column)."""
    return coded.count({**query, coded.codes.shape[1] - 1: s_values})


def query_relative_errors(original: Sequence[Sequence[Any]], released: Sequence[Sequence[Any]],
                          sensitive: Sequence[Any], workload) -> dict[int, float]:
    """Mean relative error ``|Ans(D) - Ans(D')| / Ans(D)`` per dimension, D' answered by direct counts."""
    m = len(original[0]) if original else 0
    before, after = _with_sensitive(original, sensitive, m), _with_sensitive(released, sensitive, m)
    errors: dict[int, list[float]] = {}
    for j, query, s_values in workload:
        truth = _count(before, query, s_values)
        if truth == 0:
            continue
        errors.setdefault(j, []).append(abs(truth - _count(after, query, s_values)) / truth)
    return {j: float(np.mean(e)) for j, e in errors.items()}
