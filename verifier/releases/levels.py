"""Every subject's level under a verdict policy, as her own check gives it (issues 36 and 51).

The protector sees, before she publishes, how many of her records each level
holds: "exposed 0, at risk 412 (13.7%), protected 2,588". Every original
record is counted, at any size: her figures are computed for all records at
once (:func:`~verifier.releases.record_figures.ranked_figures`, one search of
the rank index; :func:`~verifier.releases.class_figures.class_figures`, one
pass per set of candidates), and the policy applied to them in bulk
(:func:`~verifier.releases.level_arrays.array_levels`). Each record's level
is the level ``verifier check`` gives her, with the random-match test at the
CLI's defaults; ``tests/test_levels.py`` holds the two to each other on
random tables of every release family, with and without ties. The manifest
signs the counts (``claims.policy_levels``: exposed + at risk + protected =
records) and the audit recomputes them.

The joint figures of people released before
(:mod:`verifier.releases.composition`) still check at most
:data:`MOST_CHECKED` people, drawn with :func:`public_draw`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifier.attacks.intruder import ALPHA, SAMPLES, random_match_distribution
from verifier.releases.class_figures import class_figures
from verifier.releases.coherence import MOST_CHECKED
from verifier.releases.level_arrays import LEVEL_CODES, array_levels
from verifier.releases.policy import Policy
from verifier.releases.record_figures import ranked_figures
from verifier.releases.subject import Prepared

__all__ = ["MOST_CHECKED", "Levels", "every_level", "counted_levels", "public_draw", "record_levels",
           "records_not_protected"]

# MOST_CHECKED (coherence.py's): people checked at the most in the joint figures of people released before; beyond,
# a public draw of this many, the draw the manifests of this format once signed their own counts from
#: the public seed of that draw, and of the random-match test (the CLI's default)
SEED = 0


@dataclass(frozen=True)
class Levels:
    """How many of the checked records each level holds, and which rule decided how many."""

    policy: dict[str, Any]
    records: int
    checked: int
    counts: dict[str, int]
    by_rule: dict[str, int] = field(default_factory=dict)

    def share(self, level: str) -> float:
        return self.counts[level] / self.checked if self.checked else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"policy": dict(self.policy), "records": self.records, "checked": self.checked, **self.counts,
                "at_risk_share": self.share("at_risk"), "exposed_share": self.share("exposed"),
                "by_rule": dict(sorted(self.by_rule.items()))}


def public_draw(n: int) -> np.ndarray:
    """:data:`MOST_CHECKED` of ``n`` positions drawn uniformly with the public seed, ascending: the people released
    before whom the joint count checks, and an auditor with the originals draws the same."""
    return np.sort(np.random.default_rng(SEED).choice(n, size=MOST_CHECKED, replace=False))


def every_level(prepared: Prepared, records: np.ndarray, policy: Policy, *, alpha: float = ALPHA,
                samples: int = SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``records`` (rank keys in schema order, one row a subject): her level (a code into
    :data:`~verifier.releases.level_arrays.LEVEL_CODES`) and the index in ``policy.rules`` of the rule that
    decided it (-1: protected)."""
    records = np.asarray(records, dtype=np.float64)
    if prepared.ranks_apply:
        random = (random_match_distribution(prepared.space, samples=samples, random_state=SEED)
                  if records.shape[0] else None)
        figures = ranked_figures(prepared, records, random, alpha)
    else:
        figures = class_figures(prepared, records)
    return array_levels(policy, figures)


def record_levels(prepared: Prepared, records: np.ndarray, policy: Policy, *, alpha: float = ALPHA,
                  samples: int = SAMPLES) -> Levels:
    """How many of ``records`` each level holds, and which rule decided how many: every record counted."""
    return counted_levels(*every_level(prepared, records, policy, alpha=alpha, samples=samples), policy)


def counted_levels(level: np.ndarray, rule_at: np.ndarray, policy: Policy) -> Levels:
    """The counts of :func:`every_level`'s levels and deciding rules."""
    counts = {name: int(np.count_nonzero(level == code)) for code, name in enumerate(LEVEL_CODES)}
    decided = np.bincount(rule_at[rule_at >= 0], minlength=len(policy.rules))
    by_rule = {policy.rules[i].id: int(c) for i, c in enumerate(decided.tolist()) if c}
    n = int(level.size)
    return Levels(policy.to_json(), n, n, {k: counts[k] for k in ("exposed", "at_risk", "protected")}, by_rule)


def records_not_protected(level: np.ndarray, rule_at: np.ndarray, policy: Policy) -> dict[str, Any]:
    """The protector's list of every record ``exposed`` or ``at_risk``, by input row (numbered from 1, the header
    excluded), with the rule that decided its level, one short row each (the report writes each on one line). It
    names rows of her input, never values, and goes only to her own report beside the release, never into it."""
    rows = np.flatnonzero(level > 0)
    levels = np.array(LEVEL_CODES, dtype=object)[level[rows]].tolist()
    rules = np.array([r.id for r in policy.rules], dtype=object)[rule_at[rows]].tolist()
    return {"policy": policy.to_json(), "columns": ["row", "level", "rule"],
            "rows": [list(row) for row in zip((rows + 1).tolist(), levels, rules)]}
