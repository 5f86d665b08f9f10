"""Quasi-sensitive associations (paper 004, section 7.3): rules ``QI values -> sensitive value`` found by Apriori.

A rule X -> s holds when the records with every attribute value of X and the
sensitive value s make up at least ``support`` of the table, and at least
``confidence`` of the records with X have s. X is found level by level
(Agrawal & Srikant's Apriori): an itemset of length L + 1 is a candidate only
when all its subsets of length L are frequent, and at most one value per
attribute. Nothing here is a fast path of the library; the test suite holds
it to a brute-force enumeration on small tables.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

__all__ = ["Rule", "quasi_sensitive_rules"]

#: a rule: its QI items ((attribute, value) pairs, sorted) and the sensitive value
Rule = tuple[tuple[tuple[int, int], ...], int]


def _frequent_itemsets(qi: np.ndarray, minimum: int) -> dict[tuple[tuple[int, int], ...], np.ndarray]:
    """Every itemset of QI values held by at least ``minimum`` records, with its records' mask."""
    level = {}
    for a in range(qi.shape[1]):
        for v in np.unique(qi[:, a]):
            mask = qi[:, a] == v
            if mask.sum() >= minimum:
                level[((a, int(v)),)] = mask
    found = dict(level)
    while level:
        keys = sorted(level)
        following = {}
        for x, y in combinations(keys, 2):
            if x[:-1] != y[:-1] or x[-1][0] == y[-1][0]:
                continue
            items = tuple(sorted(x + y[-1:]))
            if items in following or any(sub not in level for sub in combinations(items, len(items) - 1)):
                continue
            mask = level[x] & level[y]
            if mask.sum() >= minimum:
                following[items] = mask
        found.update(following)
        level = following
    return found


def quasi_sensitive_rules(qi: np.ndarray, sensitive: np.ndarray, *, support: float, confidence: float) -> set[Rule]:
    """The rules X -> s of a coded table (``qi``: records x attributes, ``sensitive``: one code per record)."""
    n = sensitive.size
    minimum = int(np.ceil(support * n - 1e-9))
    rules = set()
    for items, mask in _frequent_itemsets(qi, minimum).items():
        held = int(mask.sum())
        counts = np.bincount(sensitive[mask])
        for s in np.flatnonzero((counts >= minimum) & (counts >= confidence * held - 1e-9)):
            rules.add((items, int(s)))
    return rules
