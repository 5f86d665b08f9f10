"""Every subject's level under a verdict policy, as her own check gives it (issue 36, item 4).

The protector sees, before she publishes, how many of her records each level
holds: "exposed 0, at risk 412 (13.7%), protected 2,588". Each original
record is checked exactly as ``verifier check`` checks it (the same
:func:`~verifier.releases.subject.check_record`, the same verdict), with the
random-match test at the CLI's defaults. That test's distribution depends on
the release alone, so one serves every subject
(:func:`~verifier.attacks.intruder.subject_report`); records with the same
values are one check.

Where a table has more distinct records than :data:`MOST_CHECKED`, that many
records are drawn uniformly with a public seed, and the counts are over
them (``checked`` of ``records``): an auditor with the original draws the
same ones. Otherwise every record is counted. The manifest signs the counts (``claims.policy_levels``) and the
audit recomputes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from verifier.attacks.intruder import ALPHA, SAMPLES, random_match_distribution, subject_report
from verifier.releases.policy import Policy
from verifier.releases.subject import Prepared, check_record

__all__ = ["MOST_CHECKED", "Levels", "public_draw", "record_levels"]

#: distinct records checked at the most; beyond, a uniform draw of this many records with a public seed
MOST_CHECKED = 200
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


def _which(records: np.ndarray) -> np.ndarray:
    """The records checked: all of them when they hold at most :data:`MOST_CHECKED` distinct ones, else a
    uniform draw of that many records with the public seed."""
    n = records.shape[0]
    if n <= MOST_CHECKED or np.unique(records, axis=0).shape[0] <= MOST_CHECKED:
        return np.arange(n)
    return public_draw(n)


def public_draw(n: int) -> np.ndarray:
    """:data:`MOST_CHECKED` of ``n`` positions drawn uniformly with the public seed, ascending: the records a
    protector's count checks, and an auditor with the originals draws the same."""
    return np.sort(np.random.default_rng(SEED).choice(n, size=MOST_CHECKED, replace=False))


def record_levels(prepared: Prepared, records: np.ndarray, policy: Policy, *, alpha: float = ALPHA,
                  samples: int = SAMPLES, progress: Callable[[int, int], None] | None = None) -> Levels:
    """Each of ``records`` (rank keys in schema order, one row a subject) checked as her own check does."""
    records = np.asarray(records, dtype=np.float64)
    chosen = records[_which(records)]
    distinct, inverse = (np.unique(chosen, axis=0, return_inverse=True) if chosen.shape[0]
                         else (chosen, np.zeros(0, dtype=np.int64)))
    random = (random_match_distribution(prepared.space, samples=samples, random_state=SEED)
              if prepared.ranks_apply and distinct.shape[0] else None)
    levels, rules = [], []
    for i, record in enumerate(distinct):
        check = check_record(prepared, record, whole_space=prepared.ranks_apply)
        report = subject_report(random, check.result, alpha) if random is not None else None
        verdict = check.verdict(report, policy)
        levels.append(verdict.level)
        rules.append(verdict.rule)
        if progress is not None:
            progress(i + 1, distinct.shape[0])
    counts = {"exposed": 0, "at_risk": 0, "protected": 0}
    by_rule: dict[str, int] = {}
    for k in np.asarray(inverse).ravel():
        counts[levels[k]] += 1
        if rules[k] is not None:
            by_rule[rules[k]] = by_rule.get(rules[k], 0) + 1
    return Levels(policy.to_json(), int(records.shape[0]), int(chosen.shape[0]), counts, by_rule)
