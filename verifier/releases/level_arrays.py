"""The verdict policy applied to every record at once (issue 51, item 1).

:func:`~verifier.releases.verdict.policy_verdict` decides one subject's level
from her :class:`~verifier.releases.verdict.HerFigures`. A protector who
counts the levels of a million records needs the same decision a million
times: :class:`FigureArrays` holds each figure of the policy as one array over
the records, and :func:`array_levels` applies the rules to the arrays.

The decision is the one-record decision, read in bulk: a rule fires where
:meth:`~verifier.releases.policy.Rule.fires` would (a figure that is undefined
or not finite fires nothing; enhanced beta-likeness is held to
min(threshold, -ln prior)); her level is the worst level of the rules that
fire; the rule that decided it is the first to fire at that level, rules in
the policy's order and, within a rule, sensitive attributes in the schema's
(the headline of her own verdict). ``tests/test_levels.py`` holds the two to
each other on random tables of every release family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from verifier.releases.policy import Policy, Rule

__all__ = ["FigureArrays", "array_levels", "LEVEL_CODES"]

#: the levels a record can take, in the codes :func:`array_levels` returns
LEVEL_CODES = ("protected", "at_risk", "exposed")


@dataclass(frozen=True)
class FigureArrays:
    """Every record's figures, one array each over the ``n`` records (NaN where a figure is undefined).

    ``distance`` and ``p_value`` are None where ranks do not apply (a generalized release), ``class_size``
    (the fewest people of a class she could be in) where they do; a p-value of None or NaN is a random-match test
    not run.
    """

    n: int
    sensitive: Mapping[str, tuple[np.ndarray, np.ndarray]]
    """Per sensitive attribute, in schema order: her ``risk`` (the posterior) and its ``prior``."""
    broken: np.ndarray
    """Whether a figure of hers breaks a publisher's claim or signed target."""
    distance: np.ndarray | None = None
    p_value: np.ndarray | None = None
    unchanged: np.ndarray | None = None
    class_size: np.ndarray | None = None

    def flag(self, name: str) -> np.ndarray:
        no = np.zeros(self.n, dtype=bool)
        if name == "unchanged":
            return no if self.unchanged is None else self.unchanged
        if name == "no_group":
            return no if self.class_size is None else self.class_size == 0
        if name == "untested":
            if self.distance is None:
                return no
            return np.ones(self.n, dtype=bool) if self.p_value is None else np.isnan(self.p_value)
        return self.broken  # claim_broken

    def value(self, name: str) -> np.ndarray:
        nothing = np.full(self.n, np.nan)
        if name == "class_size":
            return nothing if self.class_size is None else np.where(self.class_size == 0, np.nan,
                                                                    self.class_size.astype(np.float64))
        found = {"distance": self.distance, "p_value": self.p_value}[name]
        return nothing if found is None else np.asarray(found, dtype=np.float64)

    def attribute(self, figure: str, name: str) -> np.ndarray:
        """One per-attribute figure: the posterior, the prior, beta or delta (NaN where undefined)."""
        risk, prior = self.sensitive[name]
        if figure == "posterior":
            return risk
        if figure == "prior":
            return prior
        with np.errstate(divide="ignore", invalid="ignore"):
            if figure == "beta":
                return np.where(prior > 0, (risk - prior) / prior, np.nan)
        return _delta(risk, prior)


def _delta(risk: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """|ln(risk / prior)| with the one-record computation's own logarithm (``math.log``), once per distinct pair."""
    out = np.full(risk.shape, np.nan)
    defined = (prior > 0) & (risk > 0)
    if defined.any():
        pairs, inverse = np.unique(np.column_stack([risk[defined], prior[defined]]), axis=0, return_inverse=True)
        logs = np.array([abs(math.log(r / p)) for r, p in pairs.tolist()])
        out[defined] = logs[inverse.ravel()]
    return out


def _bound(rule: Rule, prior: np.ndarray) -> np.ndarray:
    """:meth:`Rule.bound` over an array of priors (each distinct prior's ``-ln`` by ``math.log``)."""
    t = np.full(prior.shape, float(rule.threshold))
    if rule.enhanced:
        positive = prior > 0
        if positive.any():
            distinct, inverse = np.unique(prior[positive], return_inverse=True)
            logs = np.array([-math.log(p) for p in distinct.tolist()])
            t[positive] = np.minimum(t[positive], logs[inverse.ravel()])
    return t


def _fires(rule: Rule, value: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """:meth:`Rule.fires` over arrays: NaN and infinities fire nothing."""
    t = _bound(rule, prior) if prior is not None else np.float64(rule.threshold)
    finite = np.isfinite(value)
    x = np.where(finite, value, 0.0)
    hit = {"below": x < t, "at_most": x <= t, "above": x > t, "at_least": x >= t}[rule.operator]
    return finite & hit


def _rule_masks(rule: Rule, figures: FigureArrays) -> list[np.ndarray]:
    """Where ``rule`` fires, one mask per finding it can make (per sensitive attribute, in order)."""
    if rule.per_attribute:
        return [_fires(rule, figures.attribute(rule.figure, name), figures.sensitive[name][1])
                for name in figures.sensitive]
    if rule.operator is None:
        return [figures.flag(rule.figure).astype(bool)]
    return [_fires(rule, figures.value(rule.figure))]


def array_levels(policy: Policy, figures: FigureArrays) -> tuple[np.ndarray, np.ndarray]:
    """Every record's level (codes into :data:`LEVEL_CODES`) and the index in ``policy.rules`` of the rule that
    decided it (-1 where no rule fired)."""
    level = np.zeros(figures.n, dtype=np.int8)
    rule_at = np.full(figures.n, -1, dtype=np.int64)
    for code, name in ((2, "exposed"), (1, "at_risk")):
        for i, rule in enumerate(policy.rules):
            if rule.level != name:
                continue
            for mask in _rule_masks(rule, figures):
                new = mask & (level == 0)
                level[new], rule_at[new] = code, i
        # a record that reached this level keeps its first rule of it; lower levels are read only for the rest
    return level, rule_at
