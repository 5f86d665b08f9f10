"""What a release and the earlier releases of the same people disclose together: the protector's figures before
she publishes, the audit's recomputation of them (issue 40, items 2 and 3).

The people of the new release who were released before are found by a linking column (a person's id, never
published): each release made with ``--link-column`` leaves, beside it and never in it, a protector-only
*links file* (:class:`verifier.releases.links.Links`) naming the release by its manifest's SHA-256 and listing
the ids of the people it holds, sorted, with no row of theirs. A later release given ``--previous DIR`` reads it.

Each person released before is checked as her own joint check (``verifier joint``) checks her: her record,
as the new release's input holds it, against the new release and every earlier release she is in
(:func:`verifier.releases.joint.check_jointly`, under the verdict policy, with the random-match test's public
seed). As for :mod:`verifier.releases.levels`, at most :data:`~verifier.releases.levels.MOST_CHECKED` of them are
checked, drawn uniformly with the public seed, so an auditor with the originals and the links files draws the same
ones. The manifest signs, in ``claims.composition``, the earlier releases' manifest digests, how many people each
shares with the new one, the joint levels, the largest joint risk of each sensitive attribute and how many people
are exposed together but in no release alone; a target the joint figures miss refuses the release
(``COMPOSITION_DISCLOSURE``).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from verifier.attacks.composition import JointDraws, joint_draws
from verifier.attacks.disclosure import CERTAIN
from verifier.attacks.match_settings import SAMPLES
from verifier.releases.joint import check_jointly
from verifier.releases.levels import MOST_CHECKED, SEED, Levels, public_draw
from verifier.releases.links import Links, present_in
from verifier.releases.policy import Policy
from verifier.releases.subject import Prepared, check_record

__all__ = ["composition_claim", "composition_figures", "earlier_entry"]


def earlier_entry(release: Any, linked: int) -> dict[str, Any]:
    """An earlier release as the manifest signs it: which release, its manifest's digest, its size, and how many
    of its people the new release holds again."""
    return {"datasetId": release.dataset_id, "releaseVersion": release.release_version,
            "manifest_sha256": release.manifest_sha256, "records": int(release.claims["n_records"]),
            "linked": int(linked)}


def _chosen(linked: np.ndarray) -> np.ndarray:
    """The people checked: every linked one, or :data:`MOST_CHECKED` of them drawn with the public seed."""
    return linked if linked.size <= MOST_CHECKED else linked[public_draw(linked.size)]


def composition_figures(releases: Sequence[Prepared], records: np.ndarray, present: np.ndarray,
                        policy: Policy) -> dict[str, Any]:
    """The joint figures of the new release ``releases[0]`` with the earlier ``releases[1:]`` (same schema):
    ``records`` are the new release's originals (rank keys), ``present[i, j]`` whether person ``i`` is in release
    ``j`` (column 0, the new one, all true). Returns ``linked``, ``policy_levels``, ``attribute_disclosure``
    (per sensitive attribute, the largest joint risk and the share certain) and ``newly_exposed``."""
    linked = np.flatnonzero(present[:, 1:].any(axis=1)) if present.shape[1] > 1 else np.zeros(0, dtype=np.int64)
    chosen = _chosen(linked)
    keys = np.column_stack([records[chosen], present[chosen]]) if chosen.size else np.zeros((0, 1))
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True) if chosen.size else (keys, np.zeros(0, int))
    draws: dict[tuple[int, ...], JointDraws] = {}
    per: list[tuple[str, str | None, bool, dict[str, float]]] = []
    m = records.shape[1]
    for row in distinct:
        record, where = row[:m], [j for j in range(len(releases)) if row[m + j]]
        checks = [check_record(releases[j], record, whole_space=releases[j].ranks_apply) for j in where]
        ranked = tuple(j for j in where if releases[j].ranks_apply)
        if len(ranked) >= 2 and ranked not in draws:
            draws[ranked] = joint_draws([releases[j].space for j in ranked], samples=SAMPLES, seed=SEED)
        joint = check_jointly(checks, policy=policy, draws=draws.get(ranked))
        own = joint.own_levels()
        verdict = joint.verdict(own)
        risks = {name: float(entry["risk"]) for name, entry in joint.candidates.items()}
        per.append((verdict.level, verdict.rule, verdict.level == "exposed" and "exposed" not in own, risks))
    counts, by_rule, newly, risks = {"exposed": 0, "at_risk": 0, "protected": 0}, {}, 0, {}
    for k in np.asarray(inverse).ravel():
        level, rule, new, theirs = per[k]
        counts[level] += 1
        newly += new
        if rule is not None:
            by_rule[rule] = by_rule.get(rule, 0) + 1
        for name, risk in theirs.items():
            risks.setdefault(name, []).append(risk)
    levels = Levels(policy.to_json(), int(linked.size), int(chosen.size), counts, by_rule)
    return {"linked": int(linked.size), "policy_levels": levels.to_json(), "newly_exposed": int(newly),
            "attribute_disclosure": {name: {"max": max(values), "certain_share": sum(v >= CERTAIN for v in values)
                                            / len(values)} for name, values in risks.items()}}


def composition_claim(releases: Sequence[Prepared], records: np.ndarray, ids: Sequence[str],
                      earlier: Sequence[Links], policy: Policy) -> dict[str, Any]:
    """``claims.composition`` of the new release ``releases[0]`` with the earlier ``releases[1:]``, whose links files
    are ``earlier`` in the same order: each earlier release's entry, then :func:`composition_figures` of the people
    (``ids``, one per record of ``records``) the releases share. The publisher signs it; the audit recomputes it."""
    present = present_in(ids, earlier)
    figures = composition_figures(releases, records, present, policy)
    return {"earlier": [earlier_entry(p.release, int(np.count_nonzero(present[:, 1 + j])))
                        for j, p in enumerate(releases[1:])], **figures}
