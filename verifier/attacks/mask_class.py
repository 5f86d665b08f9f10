"""MaskClass, paper 002's step two, and what its masks tell the intruder who reruns it (issue 58).

:func:`mask_counts` is MaskClass (section 2.5) on one class's sensitive tuples and how many rows hold each: the
publisher's two-step generalization masks every class with it, and the verifier reruns it here, so both run one
implementation.

The masks are decided from the sensitive values, so a masked cell is not an even split between its values: a
class of two values fully masked at alpha = 0.7 says that one value holds more than 70% of it. The intruder the
project names (SPEC section 16) knows the method, its parameters and everyone's quasi-identifiers, and the
population's shares pi of each sensitive value. Where step one decides the classes on the quasi-identifiers alone
(``step_one: quasi_identifiers``), the classes tell him nothing of the values, and each class is masked on its
own, from how many of its rows hold each sensitive tuple. So his posterior of a class member's value v is

    P(s_i = v | R) = E[c_v | the class's published cells] / g,

the expected count of v over every *completion* c of the class (each masked cell replaced by one of the leaves it
covers) that MaskClass turns into the class's published cells, each weighed by its prior probability
g! / prod_t c_t! * prod_t pi(t)^c_t (pi(t) the product of each attribute's share; g the class's size). He cannot
tell its members apart, as the rows are shuffled. :func:`class_posterior` computes it exactly, in integers: the
shares are the signed marginal's counts m(v), and the common factor N^g drops out.

Where the completions are too many (:data:`MOST_COMPLETIONS`), or none is allowed (cells no MaskClass run
publishes), every masked cell covering v counts for v (:func:`covered`): no posterior can be higher.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

from verifier.attacks.hierarchy import Hierarchy
from verifier.text import number

__all__ = ["SLACK", "Infeasible", "mask_counts", "completions", "class_posterior", "covered", "ClassPosterior",
           "MOST_COMPLETIONS", "by_completions", "two_leaves"]

#: a share above alpha by more than this violates it
SLACK = 1e-12
#: the completions of one class enumerated at the most; beyond, every masked cell counts for each of its values
MOST_COMPLETIONS = 4_000

Tuple = tuple[str, ...]


class Infeasible(Exception):
    """No generalization meets the requirement."""


def _worst(rows: Mapping[Tuple, int], sens: Sequence[Hierarchy], alpha: float) -> tuple | None:
    """The violation MaskClass treats first, (conf, i, group key, leaf): the highest leaf confidence above alpha in
    a Q&S group (Def. 5-7), ties by attribute, key and leaf order; None when MD(alpha) holds. A group's confidences
    are exact: integers over the group's size times the least common multiple of its nodes' leaf counts, compared
    with alpha + SLACK as the exact value of that float."""
    limit = Fraction(alpha + SLACK)
    worst, worst_rank = None, None
    m = len(sens)
    for i in range(m):
        h = sens[i]
        groups: dict[tuple, dict[str, int]] = {}
        for r, count in rows.items():
            nodes = groups.setdefault(r[:i] + r[i + 1:], {})
            nodes[r[i]] = nodes.get(r[i], 0) + count
        for key, nodes in groups.items():
            span = math.lcm(*(h.leaf_count(node) for node in nodes))
            denominator = span * sum(nodes.values())
            conf: dict[str, int] = {}
            for node, count in nodes.items():
                share = count * (span // h.leaf_count(node))
                for leaf in h.leaves(node):
                    conf[leaf] = conf.get(leaf, 0) + share
            for leaf, total in conf.items():
                if total * limit.denominator > limit.numerator * denominator:
                    c = Fraction(total, denominator)
                    rank = (-c, i, tuple(map(str, key)), h.order[leaf])
                    if worst_rank is None or rank < worst_rank:
                        worst, worst_rank = (c, i, key, leaf), rank
    return worst


def mask_counts(rows: Mapping[Tuple, int], sens: Sequence[Hierarchy],
                alpha: float) -> tuple[dict[Tuple, Tuple], list[dict[str, Any]]]:
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
        merged: dict[Tuple, int] = {}
        for r, n in current.items():
            merged[raised[r]] = merged.get(raised[r], 0) + n
        current, now = merged, {r: raised[t] for r, t in now.items()}
        log.append({"attribute": i, "value": v, "company": company, "parent": p, "tuples": changed,
                    "confidence": float(c)})


def _compositions(total: int, parts: int):
    """Every way to put ``total`` rows into ``parts`` ordered parts (stars and bars), in lexicographic order."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1, *bars, total + parts - 1)
        yield tuple(edges[j + 1] - edges[j] - 1 for j in range(parts))


def _leaf_tuples(published: Tuple, sens: Sequence[Hierarchy], marginals: Sequence[Mapping[str, int]]) -> list[Tuple]:
    """The leaf tuples a published tuple covers whose every value some people hold (the others weigh nothing)."""
    return list(itertools.product(*([leaf for leaf in h.leaves(node) if m.get(leaf, 0) > 0]
                                    for h, node, m in zip(sens, published, marginals))))


def completions(shown: Mapping[Tuple, int], sens: Sequence[Hierarchy], marginals: Sequence[Mapping[str, int]]) -> int:
    """How many completions the class's published tuples ``shown`` have: each published tuple's rows spread over
    the leaf tuples it covers (:func:`_leaf_tuples`)."""
    return math.prod(math.comb(n + len(_leaf_tuples(t, sens, marginals)) - 1, n) for t, n in shown.items())


def _each_completion(shown: Mapping[Tuple, int], sens: Sequence[Hierarchy], marginals: Sequence[Mapping[str, int]]):
    """Every completion of ``shown``, as {leaf tuple: rows}, the published tuples in text order."""
    labels = sorted(shown)
    leaves = [_leaf_tuples(t, sens, marginals) for t in labels]
    for parts in itertools.product(*(_compositions(shown[t], len(ls)) for t, ls in zip(labels, leaves))):
        rows: dict[Tuple, int] = {}
        for ls, counts in zip(leaves, parts):
            for leaf, n in zip(ls, counts):
                if n:
                    rows[leaf] = rows.get(leaf, 0) + n
        yield rows


def _published_by(rows: Mapping[Tuple, int], sens: Sequence[Hierarchy], alpha: float,
                  memo: dict | None = None) -> Counter | None:
    """The class MaskClass publishes from ``rows``, as a multiset of tuples; None where it refuses them. ``memo``
    remembers each answer for one set of trees and one alpha (classes of one size share their completions)."""
    if memo is not None:
        key = tuple(sorted(rows.items()))
        if key not in memo:
            memo[key] = _published_by(rows, sens, alpha)
        return memo[key]
    try:
        now, _ = mask_counts(rows, sens, alpha)
    except Infeasible:
        return None
    out: Counter = Counter()
    for t, n in rows.items():
        out[now[t]] += n
    return out


@dataclass(frozen=True)
class ClassPosterior:
    """Per sensitive attribute, each leaf's posterior count in one class, as an exact ratio ``counts[i][v] /
    denominator``, and how it was found: ``exact`` (under the signed marginal's prior) or ``covered`` (every cell
    that covers the value, the bound)."""

    counts: list[dict[str, int]]
    denominator: int
    how: str

    def share(self, i: int, value: str, people: int) -> float:
        """Her value's posterior share of a class of ``people`` (the ratio rounded once)."""
        return min(1.0, self.counts[i].get(value, 0) / (self.denominator * max(people, 1)))


def covered(shown: Mapping[Tuple, int], sens: Sequence[Hierarchy]) -> ClassPosterior:
    """Each value's count of the class's cells that cover it: a bound on its posterior count whatever the masks."""
    counts: list[dict[str, int]] = [{} for _ in sens]
    for t, n in shown.items():
        for i, (h, node) in enumerate(zip(sens, t)):
            for leaf in h.leaves(node):
                counts[i][leaf] = counts[i].get(leaf, 0) + n
    return ClassPosterior(counts, 1, "covered")


def class_posterior(shown: Mapping[Tuple, int], sens: Sequence[Hierarchy], alpha: float,
                    marginals: Sequence[Mapping[str, int]], most: int = MOST_COMPLETIONS,
                    memo: dict | None = None) -> ClassPosterior:
    """The posterior count of each sensitive value in one class whose published tuples are ``shown`` (tuple: rows),
    masked by MaskClass at ``alpha`` over the trees ``sens`` (the module's formula). ``marginals``: each
    attribute's signed counts, the intruder's prior; ``memo``, MaskClass's answers kept across the classes of one
    release (:func:`_published_by`)."""
    if completions(shown, sens, marginals) > most:
        return covered(shown, sens)
    found = two_leaves(shown, sens, alpha, marginals, memo)
    return found if found is not None else by_completions(shown, sens, alpha, marginals, memo)


def two_leaves(shown: Mapping[Tuple, int], sens: Sequence[Hierarchy], alpha: float,
               marginals: Sequence[Mapping[str, int]], memo: dict | None = None) -> ClassPosterior | None:
    """:func:`by_completions` where one sensitive attribute's class has one masked cell of two values (with some
    people) and every other cell one value: the completions are x rows of the masked cells holding the first value,
    x = 0 .. m, and their weights, over the constant factor every completion shares, are
    C(N, c_a) m_a^c_a m_b^c_b, each found from the last by one product and one exact division. The posterior is
    the same ratio, so her figures are the same to the bit; None for any other class."""
    if len(sens) != 1:
        return None
    h, prior = sens[0], marginals[0]
    fixed: dict[str, int] = {}
    masked = None
    for (node,), n in shown.items():
        leaves = [leaf for leaf in h.leaves(node) if prior.get(leaf, 0) > 0]
        if len(leaves) == 1:
            fixed[leaves[0]] = fixed.get(leaves[0], 0) + n
        elif len(leaves) == 2 and masked is None and n:
            masked = (leaves, n)
        else:
            return None
    if masked is None:
        return None
    (a, b), m = masked
    target = Counter({t: n for t, n in shown.items() if n})
    ca, cb = fixed.get(a, 0), fixed.get(b, 0) + m
    weight = math.comb(ca + cb, ca) * prior[a] ** ca * prior[b] ** cb
    counts: dict[str, int] = {}
    total = 0
    for x in range(m + 1):
        rows = {(v,): n for v, n in fixed.items() if n and v not in (a, b)}
        rows.update({(v,): n for v, n in ((a, ca), (b, cb)) if n})
        if _published_by(rows, sens, alpha, memo) == target:
            total += weight
            for (v,), n in rows.items():
                counts[v] = counts.get(v, 0) + weight * n
        if x < m:
            weight = weight * cb * prior[a] // ((ca + 1) * prior[b])
            ca, cb = ca + 1, cb - 1
    if total == 0:
        return covered(shown, sens)
    return ClassPosterior([counts], total, "exact")


def by_completions(shown: Mapping[Tuple, int], sens: Sequence[Hierarchy], alpha: float,
                   marginals: Sequence[Mapping[str, int]], memo: dict | None = None) -> ClassPosterior:
    """:func:`class_posterior` by every completion, each weighed by g! / prod_t c_t! * prod_t pi(t)^c_t."""
    target = Counter({t: n for t, n in shown.items() if n})
    size = sum(target.values())
    counts: list[dict[str, int]] = [{} for _ in sens]
    total = 0
    factorial = [1]
    for j in range(1, size + 1):  # every factorial a completion reads, once
        factorial.append(factorial[-1] * j)
    powers: dict[Tuple, list[int]] = {}

    def power(t: Tuple, n: int) -> int:  # (prod_i m_i(t_i))^n, each power found once
        found = powers.setdefault(t, [1])
        base = math.prod(marginals[i].get(v, 0) for i, v in enumerate(t))
        while len(found) <= n:
            found.append(found[-1] * base)
        return found[n]

    for rows in _each_completion(shown, sens, marginals):
        if _published_by(rows, sens, alpha, memo) != target:
            continue
        held = [Counter() for _ in sens]
        for t, n in rows.items():
            for i, v in enumerate(t):
                held[i][v] += n
        weight = factorial[size]  # g! / prod_t c_t!, then prod_t (prod_i m_i(t_i))^c_t
        for n in rows.values():
            weight //= factorial[n]
        for t, n in rows.items():
            weight *= power(t, n)
        total += weight
        for i, c in enumerate(held):
            for v, n in c.items():
                counts[i][v] = counts[i].get(v, 0) + weight * n
    if total == 0:  # no completion allowed (or none of positive prior): cells no MaskClass run publishes
        return covered(shown, sens)
    return ClassPosterior(counts, total, "exact")
