"""The pre-release assessment: privacy and utility of a release against its original.

Sections 4, 5 and 8 of the SPEC in one pass, as the protector runs it before
release (``publisher assess``) and as an auditor entitled to the original
recomputes it (the claims of a manifest):

- (d, v)-permuted privacy at the data-set level: D and v (section 4);
- the maximum-knowledge intruder: the confidently linked share, the Hellinger
  distance, and with the true pairing the correct / multiple / misidentified
  shares (section 5);
- utility (section 8, paper 003 Table 2): per attribute the mean and
  variance of X and Y, the rank correlation of X_j and Z_j, the mean |Y - X|
  and |Y - Z|; the correlation matrices of X and Y; and one *distortion*
  figure, the mean over attributes of ``mean |Y_j - X_j| / sd(X_j)``.

Figures that need the true pairing (row i of Y anonymizes row i of X) are
``None`` when it is not known: a shuffled release cannot give them.

It lives in the verifier so that an auditor recomputes every claim without
installing the publisher.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from verifier.attacks.disclosure import CERTAIN
from verifier.attacks.reidentification import class_codes, quasi_identifier_columns
from verifier.attacks.intruder import ALPHA, EXHAUSTIVE_LIMIT, SAMPLES, IntruderReport, run_intruder
from verifier.core.permutation import PermutedPrivacyReport, RankSpace, compute_permuted_privacy
from verifier.core.side_by_side import side_by_side
from verifier.compiling import compiling_pays
from verifier.data.schema import Schema

__all__ = ["Assessment", "Searches", "assess", "attribute_disclosure", "smallest_class",
           "utility_figures"]


class Searches:
    """Where :func:`assess` runs its two searches: in this process (this class), or on a cluster.

    :class:`verifier.distributed.searches.ClusterSearches` runs them on Dask
    with the same results to the bit; the figures computed from their
    results (utility, attribute disclosure) stay in the calling process.
    ``at_once``: the two searches run side by side
    (:func:`~verifier.core.side_by_side.side_by_side`), the intruder's on the
    calling thread.
    """

    at_once = True

    def permuted_privacy(self, original: np.ndarray, anonymized: np.ndarray, kinds: list[str]):
        """The data-set (D, v) report and the release's space (its sorted columns and record blocks)."""
        space = RankSpace(anonymized, kinds)
        return compute_permuted_privacy(space, original), space

    def intruder(self, original: np.ndarray, anonymized: np.ndarray, kinds: list[str], *, paired: bool,
                 space: RankSpace | Callable[[], RankSpace] | None = None, **options
                 ) -> tuple[IntruderReport, np.ndarray]:
        """The intruder's report (:func:`~verifier.attacks.intruder.run_intruder`) and his reverse-mapped Z;
        ``space``, Y's from :meth:`permuted_privacy` (or a function that waits for it), is Z's where Z is Y."""
        report = run_intruder(original, anonymized, kinds, paired=paired, space=space, **options)
        return report, report.reverse_mapping.z


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _corr(a: np.ndarray) -> np.ndarray:
    if a.shape[1] == 0 or a.shape[0] < 2:
        return np.full((a.shape[1], a.shape[1]), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.atleast_2d(np.corrcoef(a, rowvar=False))


def utility_figures(x: np.ndarray, y: np.ndarray, z: np.ndarray, schema: Schema, *, paired: bool,
                    rank_correlation: np.ndarray | None = None) -> dict[str, Any]:
    """Section 8's utility figures from rank keys of X, Y and the reverse-mapped Z (Z in Y's row order).

    ``rank_correlation``: Spearman's rho of each X_j and Z_j where the reverse mapping already measured it
    (:attr:`~verifier.core.ranks.ReverseMappingResult.rank_correlation`), so that it is not ranked again;
    else it is computed here."""
    names = schema.names
    ranked = [j for j, a in enumerate(schema.attributes) if a.kind != "nominal"]
    per: dict[str, dict[str, Any]] = {}
    sd_x = x.std(axis=0)
    for j, attr in enumerate(schema.attributes):
        entry: dict[str, Any] = {}
        if attr.kind != "nominal":
            entry.update(
                mean_original=_num(x[:, j].mean()), mean_anonymized=_num(y[:, j].mean()),
                variance_original=_num(x[:, j].var()), variance_anonymized=_num(y[:, j].var()),
                mean_abs_y_z=_num(np.abs(y[:, j] - z[:, j]).mean()),
            )
        if paired:
            if attr.kind == "nominal":
                entry["changed_share"] = _num(np.mean(y[:, j] != x[:, j]))
            else:
                entry["mean_abs_y_x"] = _num(np.abs(y[:, j] - x[:, j]).mean())
                rho = _spearman(x[:, j], z[:, j]) if rank_correlation is None else rank_correlation[j]
                entry["rank_correlation"] = _num(rho)
        per[attr.name] = entry
    cx, cy = _corr(x[:, ranked]), _corr(y[:, ranked])
    change = np.abs(cx - cy)
    distortion = il1s = None
    if paired and ranked:
        rel = [np.abs(y[:, j] - x[:, j]).mean() / sd_x[j] for j in ranked if sd_x[j] > 0]
        distortion = _num(np.mean(rel)) if rel else 0.0
    numeric = [j for j, a in enumerate(schema.attributes) if a.kind == "numeric"]
    if paired and numeric:
        il1s = _num(np.mean([np.abs(y[:, j] - x[:, j]).mean() / (np.sqrt(2.0) * sd_x[j])
                             for j in numeric if sd_x[j] > 0] or [0.0]))
    return {
        "attributes": per,
        "correlation_attributes": [names[j] for j in ranked],
        "correlation_original": [[_num(v) for v in row] for row in cx],
        "correlation_anonymized": [[_num(v) for v in row] for row in cy],
        "max_abs_correlation_change": _num(np.nanmax(change)) if np.isfinite(change).any() else None,
        "distortion": distortion,
        "il1s": il1s,
        "eigenvalue_difference": eigenvalue_difference(x[:, numeric], y[:, numeric]),
    }


def eigenvalue_difference(x: np.ndarray, y: np.ndarray) -> float | None:
    """How far the correlation structure moved: sum |lambda_X - lambda_Y| / sum lambda_X over the sorted
    eigenvalues of the two correlation matrices (sdcMicro's ``eigen`` measure, on correlations so that
    units do not weigh). Needs no pairing of rows; None for fewer than two numeric columns or a constant one."""
    if x.shape[1] < 2 or x.shape[0] < 2:
        return None
    cx, cy = _corr(x), _corr(y)
    if not (np.isfinite(cx).all() and np.isfinite(cy).all()):
        return None
    lx, ly = np.linalg.eigvalsh(cx), np.linalg.eigvalsh(cy)  # ascending
    return _num(np.abs(lx - ly).sum() / lx.sum())


def attribute_disclosure(x: np.ndarray, y: np.ndarray, schema: Schema, *, tolerance: float = 0.05) -> dict[str, Any]:
    """SPEC section 6 for every sensitive attribute: each original record's risk against the release.

    Group-based when every quasi-identifier is categorical (the candidates are
    the released records with exactly her QI values), permutation-based
    otherwise (the candidates are her match set of SPEC section 4 on the QI
    attributes). The risk is the share of candidates whose released sensitive
    value is hers, or within ``tolerance`` times its range for a numeric one.
    A randomized response release has its own closed form, reported by the
    method (``verifier.attacks.disclosure.rr_risk``).
    """
    from verifier.attacks.disclosure import permutation_risk, released_group_risk

    attrs = list(schema.attributes)
    qi = [j for j, a in enumerate(attrs) if a.role == "quasi_identifier"]
    out: dict[str, Any] = {}
    n = x.shape[0]
    grouped = not qi or all(attrs[j].kind != "numeric" for j in qi)
    if grouped and any(a.role == "sensitive" for a in attrs):
        label = class_codes(np.concatenate([y[:, qi], x[:, qi]]), list(range(len(qi))))
        released_label, original_label = label[: y.shape[0]], label[y.shape[0]:]
    elif any(a.role == "sensitive" for a in attrs):  # her candidates are her match set on the QIs, found once
        space = RankSpace(y[:, qi], [attrs[j].kind for j in qi])
        _, sets = space.match_sets(*space.query_blocks(x[:, qi]))
    for s, attr in enumerate(attrs):
        if attr.role != "sensitive":
            continue
        tol = None
        if attr.kind == "numeric":
            span = float(x[:, s].max() - x[:, s].min()) if n else 0.0
            tol = tolerance * span
        if grouped:  # her candidates are the released records of her QI group (every record when there is no QI)
            mode = "group" if qi else "none"
            risk, candidates = released_group_risk(original_label, released_label, x[:, s], y[:, s], tolerance=tol)
        else:
            mode = "permutation"
            risk, candidates = permutation_risk(sets, x[:, s], y[:, s], tolerance=tol)
        out[attr.name] = {
            "mode": mode,
            "max": float(risk.max()) if n else 0.0,
            "mean": float(risk.mean()) if n else 0.0,
            "certain_share": float(np.mean(risk >= CERTAIN)) if n else 0.0,
            "mean_candidates": float(candidates.mean()) if n else 0.0,
            **({"tolerance": tol} if tol is not None else {}),
        }
    return out


def smallest_class(keys: np.ndarray, schema: Schema) -> int:
    """k: the smallest number of records sharing the same quasi-identifier values.

    Every column counts when none is a quasi-identifier. Computed from the
    release alone, so anyone can check a manifest's claimed k. Values are
    rank keys (never NaN: the loaders refuse missing values), and ``+ 0.0``
    makes ``-0.0`` and ``0.0`` one value.
    """
    if keys.shape[0] == 0:
        return 0
    code = class_codes(keys, quasi_identifier_columns(schema))
    return int(np.unique(code, return_counts=True)[1].min())


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    if np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(spearmanr(a, b).statistic)


@dataclass(frozen=True, eq=False)
class Assessment:
    """Everything :func:`assess` computed; :meth:`to_json` gives the reported figures."""

    schema: Schema
    paired: bool
    permuted_privacy: PermutedPrivacyReport
    intruder: IntruderReport
    utility: dict[str, Any]
    attribute_disclosure: dict[str, Any]
    space: RankSpace | None = None
    """The release's rank space, for per-record rows (deviations)."""

    def to_json(self) -> dict[str, Any]:
        pp, it = self.permuted_privacy, self.intruder
        size = max(it.random.pmf.size, it.original_pmf.size)

        def dist(p: np.ndarray) -> dict[str, float]:
            p = np.pad(p, (0, size - p.size))
            return {str(d): float(v) for d, v in enumerate(p)}

        return {
            "n_records": it.n_records,
            "attributes": self.schema.names,
            "paired": self.paired,
            "permuted_privacy": {
                "distance": pp.dataset_distance,
                "variances": [_num(v) for v in pp.dataset_spread],
                "spread_kinds": pp.spread_kinds,
            },
            "intruder": {
                "alpha": it.alpha,
                "confidently_linked_share": it.confidently_linked_share,
                "hellinger": _num(it.hellinger),
                "correct_link_share": it.correct_link_share,
                "multiple_match_share": it.multiple_match_share,
                "misidentified_share": it.misidentified_share,
                "ambiguous_share": it.ambiguous_share,
                "random_method": it.random.method,
                "random_records": it.random.total,
                "original_distribution": dist(it.original_pmf),
                "random_distribution": dist(it.random.pmf),
            },
            "utility": self.utility,
            "attribute_disclosure": self.attribute_disclosure,
        }


def assess(
    original: np.ndarray,
    anonymized: np.ndarray,
    schema: Schema,
    *,
    paired: bool,
    alpha: float = ALPHA,
    samples: int = SAMPLES,
    exhaustive_limit: int = EXHAUSTIVE_LIMIT,
    random_state: int | np.random.Generator | None = 0,
    progress: Callable[[int, int], None] | None = None,
    searches: Searches | None = None,
) -> Assessment:
    """Assess the release ``anonymized`` (Y) of ``original`` (X), both ``(n, m)`` rank keys in schema order.

    ``paired``: row i of Y anonymizes row i of X. ``random_state`` is the
    intruder's randomness (tie-break of the reverse mapping, random records),
    never the release's secret seed. ``searches`` runs the permutation
    distances and the intruder elsewhere (a Dask cluster); by default here.
    """
    kinds = [a.kind for a in schema.attributes]
    searches = searches or Searches()
    (privacy, space), (intruder, z) = side_by_side(
        lambda: searches.permuted_privacy(original, anonymized, kinds),
        lambda searched: searches.intruder(
            original, anonymized, kinds, paired=paired, space=lambda: searched()[1], alpha=alpha,
            samples=samples, exhaustive_limit=exhaustive_limit, random_state=random_state, progress=progress,
        ),
        at_once=searches.at_once and compiling_pays(len(anonymized)),  # below, the plain searches: no kernel
    )
    return Assessment(
        schema=schema, paired=paired, permuted_privacy=privacy, intruder=intruder,
        utility=utility_figures(original, anonymized, z, schema, paired=paired,
                                rank_correlation=intruder.rank_correlation),
        attribute_disclosure=attribute_disclosure(original, anonymized, schema), space=space,
    )
