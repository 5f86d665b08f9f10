"""Every record's figures in a release with ranks, in one pass (issue 51, item 1).

What :func:`~verifier.releases.subject.check_record` and her random-match
test give one subject, computed for every original record at once:

- her permutation distance: one search of the release's rank index for all
  the records' query blocks (:meth:`RankSpace.tree`), not one scan each;
- her p-value: the one random-match distribution of the release (it depends
  on the release alone) read at every distance;
- whether she was published unchanged: her distance is 0 and her exact row
  is among the released rows (such a row is at distance 0 from her, so it is
  among her matches);
- whether the publisher's claimed (D, v) holds for her: her distance against
  D, and the window variances at D of every record in one bulk pass; a
  variance within a hair of its bound is measured again window by window, as
  her own check measures it, so the comparison is hers to the last bit;
- her attribute disclosure risks, their base rates and sampling errors
  (:func:`~verifier.releases.exposure.every_disclosure`), and which of them
  break a signed claim or target, with the one-record rules' margins.

``tests/test_levels.py`` holds every level to each record's own check.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from verifier.attacks.intruder import RandomMatchDistribution
from verifier.core.distinct_rows import rows_in
from verifier.core.permutation import cell_spreads, window_spreads
from verifier.releases.exposure import every_disclosure
from verifier.releases.level_arrays import FigureArrays
from verifier.releases.subject import Prepared, claimed_dv
from verifier.releases.verdict import SLACK, as_number

__all__ = ["ranked_figures", "breaches", "signed_bounds"]

#: a bulk window variance this close to its bound (relatively) is measured again window by window
NEAR = 1e-6


def _claim_holds(prepared: Prepared, records: np.ndarray, qlo: np.ndarray, qhi: np.ndarray,
                 distances: np.ndarray) -> np.ndarray | None:
    """:meth:`SubjectCheck.claim_holds` of every record (None where no D is claimed)."""
    d, v = claimed_dv(prepared.release)
    if d is None:
        return None
    holds = distances >= d
    if v is None or len(v) != len(prepared.schema.names) or not records.shape[0]:
        return holds
    space = prepared.space
    spread = window_spreads(space, qlo, qhi, [d])[0]
    bound = np.array([t - 1e-9 * max(1.0, abs(t)) for t in v], dtype=np.float64)
    near = np.abs(spread - bound) <= NEAR * np.maximum(np.abs(bound), np.abs(spread)) + 1e-300
    rows, cols = np.nonzero(near)  # hers, window by window, where the bulk is too close (each window once)
    spread[rows, cols] = cell_spreads(space, qlo, qhi, d, rows, cols)
    return holds & np.all(spread >= bound, axis=1)


def signed_bounds(claims: Mapping[str, Any], targets: Mapping[str, Any] | None) -> dict[str, float]:
    """Per sensitive attribute, the lowest bound its risk is held to: the claimed maximum, the method's target
    (``disclosure_breaches``) and the signed ``max_attribute_risk`` (``target_breaches``); attributes with none
    are left out."""
    claimed_all = claims.get("attribute_disclosure") if isinstance(claims, Mapping) else None
    found: dict[str, list[float]] = {}
    for name, claimed in (claimed_all.items() if isinstance(claimed_all, Mapping) else ()):
        if isinstance(claimed, Mapping):
            bounds = (as_number(claimed.get("max")), as_number(claimed.get("target")))
            found.setdefault(name, []).extend(b for b in bounds if b is not None)
    for name, bound in ((targets or {}).get("max_attribute_risk") or {}).items():
        found.setdefault(name, []).append(float(bound))
    return {name: min(bounds) for name, bounds in found.items() if bounds}


def breaches(risks: Mapping[str, Mapping[str, np.ndarray]], bounds: Mapping[str, float], n: int) -> np.ndarray:
    """Whose risks break a bound of :func:`signed_bounds`: each risk less its sampling error, above the bound by
    more than the one-record rules' slack (as ``disclosure_breaches`` and ``target_breaches`` decide). The risk
    is the one the bounds are about (``paper_risk``: randomized response's closed form, not the named intruder's
    bound beside it)."""
    out = np.zeros(n, dtype=bool)
    for name, entry in risks.items():
        if name in bounds:
            out |= entry.get("paper_risk", entry["risk"]) - entry["sampling_error"] > bounds[name] + SLACK
    return out


def ranked_figures(prepared: Prepared, records: np.ndarray, random: RandomMatchDistribution | None,
                   alpha: float) -> FigureArrays:
    """Every record's figures (rank keys in schema order, one row a subject) with the random-match
    distribution ``random`` (None: the test was not run, as for a subject who skips it)."""
    space = prepared.space
    qlo, qhi = space.query_blocks(records)
    distances = space.match_sets(qlo, qhi)[0]
    p_value = None if random is None else np.asarray(random.p_value(distances), dtype=np.float64)
    unchanged = np.zeros(records.shape[0], dtype=bool)
    at_zero = np.flatnonzero(distances == 0) if "numeric" in prepared.kinds else np.zeros(0, np.int64)
    unchanged[at_zero] = rows_in(records[at_zero], prepared.values)
    release = prepared.release
    targets = release.predicate.get("targets") or {}
    bounds = signed_bounds(release.claims, targets)
    risks = every_disclosure(release.methods, prepared.values, prepared.schema, records, bounds=bounds,
                             claims=release.claims)
    broken = breaches(risks, bounds, records.shape[0])
    holds = _claim_holds(prepared, records, qlo, qhi, distances)
    if holds is not None:
        broken |= ~holds
    least = as_number(targets.get("min_distance"))
    if least is not None:
        broken |= distances < least
    if as_number(targets.get("max_linked_share")) is not None and p_value is not None:
        broken |= p_value < alpha
    return FigureArrays(records.shape[0], {name: (e["risk"], e["prior"]) for name, e in risks.items()}, broken,
                        distance=distances, p_value=p_value, unchanged=unchanged)
