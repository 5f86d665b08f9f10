"""A generalized release under ARX's class-level privacy models (issue 50, item 4).

The verdict judges one person by her own value: her posterior, beta and delta (docs/subject.md). The literature,
and ARX, judge a release class by class, over every value of a class, against the value's share of the whole
table ``p(v)`` (for a release, the released table's):

- **enhanced beta-likeness** (Cao & Karras, VLDB 2012; ARX's ``EnhancedBLikeness``): a class violates it when a
  value it holds has ``(q(v) - p(v)) / p(v) > min(beta, -ln p(v))``, ``q(v)`` the value's share in the class;
- **delta-disclosure privacy** (Brickell & Shmatikov, KDD 2008; ARX's ``DDisclosurePrivacy``): a class violates
  it when a value it holds has ``|log2(q(v) / p(v))| >= delta``. ARX takes the logarithm to base 2; the verdict's
  delta is the natural one.

A value a class does not hold is not tested, as in ARX. Shares count a masked cell of N values as 1/N of each.
The protector's summary and the audit print, per categorical sensitive attribute, how many classes violate each
model and how many records they hold, so a protector compares with ARX on the same numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verifier.attacks.classes import PublishedCells, value_shares

__all__ = ["BETA", "DELTA", "class_model_violations"]

#: the beta of enhanced beta-likeness reported (the default policy's value_gain rule uses the same)
BETA = 1.0
#: the delta of delta-disclosure privacy reported (base 2: a class may neither double nor halve a value's share)
DELTA = 1.0


def _class_shares(published: PublishedCells, name: str, labels: np.ndarray) -> list[dict[str, float]]:
    """Each class's share of each value it holds, a masked cell of N values counting 1/N of each."""
    sizes = np.bincount(labels)
    totals: list[dict[str, float]] = [{} for _ in range(sizes.size)]
    cells = published.cells[name]
    for row, label in enumerate(labels.tolist()):
        values = cells[row].values or frozenset()
        for v in values:
            totals[label][v] = totals[label].get(v, 0.0) + 1.0 / len(values)
    return [{v: t / size for v, t in total.items()} for total, size in zip(totals, sizes.tolist())]


def _violations_by_class(published: PublishedCells, name: str, labels: np.ndarray, p: dict[str, float], beta: float,
                         delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Each class's flags, class by class over its shares (cells that mask several values)."""
    classes = _class_shares(published, name, labels)
    beta_bad = np.zeros(len(classes), dtype=bool)
    delta_bad = np.zeros(len(classes), dtype=bool)
    for c, shares in enumerate(classes):
        for v, q in shares.items():
            base = p.get(v, 0.0)
            if q <= 0 or base <= 0:
                continue
            beta_bad[c] |= (q - base) / base > min(beta, -math.log(base))
            delta_bad[c] |= abs(math.log2(q / base)) >= delta
    return beta_bad, delta_bad


def _violations_of_values(published: PublishedCells, name: str, labels: np.ndarray, sizes: np.ndarray,
                          p: dict[str, float], beta: float, delta: float) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`class_model_violations`' per-class flags where every cell names one value, with numpy over the
    (class, value) pairs (a census has hundreds of thousands of classes); None where some cell names several."""
    cells, where = published.distinct_cells(name)
    if any(c.values is None or len(c.values) != 1 for c in cells):
        return None
    names = [next(iter(c.values)) for c in cells]
    code_of = {v: k for k, v in enumerate(dict.fromkeys(names))}
    codes = np.array([code_of[v] for v in names], dtype=np.int64)[where]
    base = np.array([p.get(v, 0.0) for v in code_of], dtype=np.float64)
    width = len(code_of)
    pairs, held = np.unique(labels * width + codes, return_counts=True)
    cls, val = pairs // width, pairs % width
    q, b = held / sizes[cls], base[val]
    with np.errstate(divide="ignore", invalid="ignore"):
        bad_beta = (b > 0) & ((q - b) / b > np.minimum(beta, -np.log(b)))
        bad_delta = (b > 0) & (np.abs(np.log2(q / b)) >= delta)
    return (np.bincount(cls[bad_beta], minlength=sizes.size) > 0,
            np.bincount(cls[bad_delta], minlength=sizes.size) > 0)


def class_model_violations(published: PublishedCells, *, beta: float = BETA,
                           delta: float = DELTA) -> dict[str, dict[str, Any]]:
    """Per categorical sensitive attribute, the classes violating enhanced beta-likeness at ``beta`` and
    delta-disclosure privacy at ``delta`` (base 2), and the records those classes hold."""
    labels = published.class_labels()
    if not labels.size:
        return {}
    sizes = np.bincount(labels)
    out: dict[str, dict[str, Any]] = {}
    for attr in published.sensitive:
        if attr.kind == "numeric":
            continue
        p = value_shares(published, attr.name)
        fast = _violations_of_values(published, attr.name, labels, sizes, p, beta, delta)
        beta_bad, delta_bad = fast if fast is not None else _violations_by_class(published, attr.name, labels, p,
                                                                                 beta, delta)
        out[attr.name] = {
            "classes": int(sizes.size),
            "enhanced_beta_likeness": {"beta": beta, "classes": int(beta_bad.sum()),
                                       "records": int(sizes[beta_bad].sum())},
            "delta_disclosure": {"delta": delta, "log_base": 2, "classes": int(delta_bad.sum()),
                                 "records": int(sizes[delta_bad].sum())},
        }
    return out
