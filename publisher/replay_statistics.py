"""What ``publisher replay`` compares: statistics of a release that its method's parameters shape.

Every statistic is computed from the original table X and the release alone,
never from the secret pairing of their rows, and none depends on the row
order, so a published release (shuffled) and a rerun are measured alike.

A release with ranks (every family but ``generalized``):

- ``permuted_privacy.distance``: the data-set distance D (paper 003, Def. 2);
- ``record_distance.q10``, ``q50``, ``q90``: quantiles of every original
  record's permutation distance to its closest released records;
- ``spread.<a>``: the data-set spread v of attribute a;
- ``linkage_rank_correlation.<a>``: Spearman's correlation between each
  original record's rank in a and the mean rank of the released records the
  intruder links it to (her closest records in rank space);
- ``rank_correlation_change``: the root mean square, over every pair of
  attributes, of the change in Spearman's correlation between them from X
  to the release (noise added to each attribute alone weakens how the
  attributes move together, even after reverse mapping restores every
  column's values);
- ``marginal_distance.<a>``: how far the released column's distribution lies
  from the original's: the mean absolute difference of the sorted columns over
  X's standard deviation for a numeric attribute (Wasserstein-1), the total
  variation distance of the category shares for a categorical one (the
  transition frequencies of randomized response and random replacement leave
  this trace; they are not identifiable record by record).

A generalized release: ``classes`` (the number of equivalence classes),
``class_size.min``, ``.median``, ``.max``, and ``distinct.<a>`` (how many
different cells column a publishes).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from verifier.attacks.classes import PublishedCells
from verifier.core.match_sets import MatchSets
from verifier.core.permutation import RankSpace, compute_permuted_privacy
from verifier.data.schema import Schema

__all__ = ["ranked_statistics", "generalized_statistics"]


def _linkage_correlation(x: np.ndarray, y: np.ndarray, sets: MatchSets) -> np.ndarray:
    """Per attribute, Spearman's rho of X's ranks and the mean rank of each record's linked released records."""
    counts = np.diff(sets.offsets)
    out = np.full(x.shape[1], np.nan)
    for j in range(x.shape[1]):
        rx = rankdata(x[:, j])
        ry = rankdata(y[:, j])
        linked = (np.add.reduceat(ry[sets.records], sets.offsets[:-1]) / counts)[sets.rows]
        if np.ptp(rx) > 0 and np.ptp(linked) > 0:
            out[j] = np.corrcoef(rx, linked)[0, 1]
    return out


def _correlation_change(x: np.ndarray, y: np.ndarray) -> float:
    """RMS over attribute pairs of Spearman(Y) - Spearman(X); a constant column's pairs count as 0."""
    m = x.shape[1]
    if m < 2 or len(x) < 3:
        return 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        rx = np.corrcoef(np.apply_along_axis(rankdata, 0, x), rowvar=False)
        ry = np.corrcoef(np.apply_along_axis(rankdata, 0, y), rowvar=False)
    upper = np.triu_indices(m, 1)
    return float(np.sqrt(np.mean(np.nan_to_num(ry[upper] - rx[upper]) ** 2)))


def _marginal_distance(x: np.ndarray, y: np.ndarray, kind: str, n_categories: int) -> float:
    if kind == "numeric":
        scale = float(np.std(x)) or 1.0
        return float(np.mean(np.abs(np.sort(x) - np.sort(y)))) / scale
    size = max(n_categories, int(max(x.max(initial=0), y.max(initial=0))) + 1)
    px = np.bincount(x.astype(np.int64), minlength=size) / len(x)
    py = np.bincount(y.astype(np.int64), minlength=size) / len(y)
    return 0.5 * float(np.abs(px - py).sum())


def ranked_statistics(x: np.ndarray, y: np.ndarray, schema: Schema) -> dict[str, float]:
    """The statistics of a release with ranks: ``x`` and ``y`` are ``(n, m)`` rank keys in schema order."""
    kinds = [a.kind for a in schema.attributes]
    report = compute_permuted_privacy(RankSpace(y, kinds), x)
    q10, q50, q90 = np.quantile(report.distances, [0.1, 0.5, 0.9])
    out = {"permuted_privacy.distance": float(report.dataset_distance),
           "record_distance.q10": float(q10), "record_distance.q50": float(q50), "record_distance.q90": float(q90)}
    out["rank_correlation_change"] = _correlation_change(x, y)
    correlation = _linkage_correlation(x, y, report.match_sets)
    for j, attr in enumerate(schema.attributes):
        out[f"spread.{attr.name}"] = float(report.dataset_spread[j])
        out[f"linkage_rank_correlation.{attr.name}"] = float(correlation[j])
        out[f"marginal_distance.{attr.name}"] = _marginal_distance(x[:, j], y[:, j], attr.kind,
                                                                   len(attr.categories or ()))
    return out


def generalized_statistics(published: PublishedCells) -> dict[str, float]:
    """The statistics of a generalized release, from its published cells."""
    sizes = np.bincount(published.class_labels()) if published.n_records else np.zeros(1, dtype=np.int64)
    out = {"classes": float(len(sizes)), "class_size.min": float(sizes.min()),
           "class_size.median": float(np.median(sizes)), "class_size.max": float(sizes.max())}
    for name in published.schema.names:
        out[f"distinct.{name}"] = float(len(set(published.text[name])))
    return out
