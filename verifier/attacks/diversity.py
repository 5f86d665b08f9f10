"""Checks for several sensitive attributes (paper 002, Li & Ye; spec/methods.md section 2.1).

Usable on any release whose quasi-identifiers are published as values or
generalized groups (rows with identical published QI values form an
equivalence class E). Without a hierarchy only exact sensitive values count.

- **alpha requirement** (Def. 3): in every group, every sensitive value has
  confidence (relative frequency) at most alpha;
- **single diversity** SD(alpha): the alpha requirement per sensitive attribute, grouped by the QIs;
- **Q&S diversity** of S_i (Def. 5): grouped by the QIs *and* the other
  sensitive attributes as published, which an attacker who learns one
  sensitive value of a person can use;
- **multi-diversity** MD(alpha) (Def. 6): Q&S diversity for every S_i; it
  implies SD(alpha) and rules out negative disclosure;
- **negative disclosure** (diagnostic): in each class, an attacker who learns
  "S_j is not v" keeps the other rows; the largest confidence of S_i among
  them, flagged above alpha.

Groups never drop a missing value: every published value, missing included,
is a value (pandas' ``groupby`` would drop NaN keys by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from verifier.errors import InvalidInputError

__all__ = ["DiversityCheck", "alpha_requirement", "single_diversity", "qs_diversity", "multi_diversity",
           "negative_disclosure"]

Columns = Mapping[str, Sequence[Any]]


@dataclass(frozen=True)
class DiversityCheck:
    """Whether a check passed, its largest confidence, and where that occurs."""

    passed: bool
    max_confidence: float
    worst: dict[str, Any] = field(default_factory=dict)
    per_attribute: dict[str, float] = field(default_factory=dict)


def _codes(values: Sequence[Any]) -> np.ndarray:
    """Integer codes of any values; None and NaN are values too, never dropped."""
    index: dict[Any, int] = {}
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        key = ("<nan>",) if isinstance(v, float) and v != v else v
        out[i] = index.setdefault(key, len(index))
    return out


def _group_labels(columns: Columns, keys: Sequence[str], n: int) -> np.ndarray:
    if not keys:
        return np.zeros(n, dtype=np.int64)
    stacked = np.stack([_codes(columns[k]) for k in keys], axis=1)
    return np.unique(stacked, axis=0, return_inverse=True)[1].ravel()


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha <= 1.0:
        raise InvalidInputError(f"alpha lies in (0, 1]. Got {alpha!r} instead.", reason="PARAMETER_INVALID")
    return alpha


def _n(columns: Columns) -> int:
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise InvalidInputError("every column must have the same number of rows", reason="SHAPE_MISMATCH")
    return lengths.pop() if lengths else 0


def alpha_requirement(columns: Columns, keys: Sequence[str], sensitive: str, alpha: float) -> DiversityCheck:
    """Def. 3: ``conf_G(s) <= alpha`` for every group G of ``keys`` and every value s of ``sensitive``."""
    alpha = _check_alpha(alpha)
    n = _n(columns)
    if n == 0:
        return DiversityCheck(True, 0.0)
    groups = _group_labels(columns, keys, n)
    values = _codes(columns[sensitive])
    pair = groups * (int(values.max()) + 1) + values
    uniq, first, counts = np.unique(pair, return_index=True, return_counts=True)
    sizes = np.bincount(groups)
    conf = counts / sizes[groups[first]]
    worst = int(np.argmax(conf))
    row = int(first[worst])
    where = {"attribute": sensitive, "value": columns[sensitive][row],
             "group": {k: columns[k][row] for k in keys}, "confidence": float(conf[worst])}
    return DiversityCheck(bool(conf.max() <= alpha + 1e-12), float(conf.max()), where, {sensitive: float(conf.max())})


def _combine(checks: list[DiversityCheck]) -> DiversityCheck:
    worst = max(checks, key=lambda c: c.max_confidence)
    per = {}
    for c in checks:
        per.update(c.per_attribute)
    return DiversityCheck(all(c.passed for c in checks), worst.max_confidence, worst.worst, per)


def single_diversity(columns: Columns, qi: Sequence[str], sensitive: Sequence[str], alpha: float) -> DiversityCheck:
    """SD(alpha): the alpha requirement of every sensitive attribute within the QI classes."""
    return _combine([alpha_requirement(columns, qi, s, alpha) for s in sensitive])


def qs_diversity(columns: Columns, qi: Sequence[str], sensitive: Sequence[str], target: str, alpha: float) -> DiversityCheck:
    """Def. 5: the alpha requirement of ``target`` grouped by the QIs and the other sensitive attributes."""
    others = [s for s in sensitive if s != target]
    return alpha_requirement(columns, [*qi, *others], target, alpha)


def multi_diversity(columns: Columns, qi: Sequence[str], sensitive: Sequence[str], alpha: float) -> DiversityCheck:
    """Def. 6: Q&S diversity of every sensitive attribute."""
    return _combine([qs_diversity(columns, qi, sensitive, s, alpha) for s in sensitive])


def negative_disclosure(columns: Columns, qi: Sequence[str], sensitive: Sequence[str], alpha: float) -> dict[str, Any]:
    """For every class E, attribute S_j and value v in E: the largest confidence of each S_i (i != j)
    among the rows of E with S_j != v. Returns the worst case per class and the flagged ones (> alpha)."""
    alpha = _check_alpha(alpha)
    n = _n(columns)
    groups = _group_labels(columns, qi, n)
    codes = {s: _codes(columns[s]) for s in sensitive}
    per_class = []
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        worst: dict[str, Any] = {"confidence": 0.0}
        for j in sensitive:
            for v in np.unique(codes[j][rows]):
                rest = rows[codes[j][rows] != v]
                if rest.size == 0:
                    continue
                for i in sensitive:
                    if i == j:
                        continue
                    vals, counts = np.unique(codes[i][rest], return_counts=True)
                    k = int(np.argmax(counts))
                    conf = counts[k] / rest.size
                    if conf > worst["confidence"]:
                        example = int(rest[codes[i][rest] == vals[k]][0])
                        excluded = int(rows[codes[j][rows] == v][0])
                        worst = {"confidence": float(conf), "known": {"attribute": j, "not": columns[j][excluded]},
                                 "disclosed": {"attribute": i, "value": columns[i][example]}}
        per_class.append({"group": {k: columns[k][int(rows[0])] for k in qi}, **worst,
                          "flagged": bool(worst["confidence"] > alpha + 1e-12)})
    return {"alpha": alpha, "classes": per_class, "flagged": sum(c["flagged"] for c in per_class),
            "max_confidence": max((c["confidence"] for c in per_class), default=0.0)}
