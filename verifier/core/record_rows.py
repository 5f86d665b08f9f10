"""Every original record's permutation-distance results as columns, batch by batch (for ``--out`` files).

One row per record of X: ``record`` (from 1), ``distance``, ``n_matches``,
``matches`` (the released records at that distance, from 1) and
``deviations`` (per match, the rank deviation on each attribute), then per
attribute ``spread_at_D.<a>`` (the window's spread at the data-set distance)
and ``spread_at_d.<a>`` (at her own distance). The list columns are Arrow
lists, built from the report's flat arrays without a Python loop per record.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from verifier.core.permutation import PermutedPrivacyReport, RankSpace

__all__ = ["distance_columns", "distance_summary", "match_columns", "matches_array"]


def matches_array(offsets: np.ndarray, matches: np.ndarray):
    """Match lists in CSR form (``offsets`` from 0) as an Arrow list array, numbered from 1."""
    import pyarrow as pa

    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int64()), pa.array(matches + 1, type=pa.int64()))


def match_columns(distances: np.ndarray, listed: tuple[np.ndarray, np.ndarray], start: int,
                  stop: int) -> dict[str, Any]:
    """``record``, ``distance``, ``n_matches`` and ``matches`` of records ``start..stop-1``, whose match sets
    ``listed`` holds written out (:meth:`MatchSets.listed <verifier.core.match_sets.MatchSets.listed>`)."""
    offsets, matches = listed
    return {
        "record": np.arange(start + 1, stop + 1, dtype=np.int64),
        "distance": distances[start:stop].astype(np.int64),
        "n_matches": np.diff(offsets),
        "matches": matches_array(offsets, matches),
    }


def _deviations(report: PermutedPrivacyReport, space: RankSpace, start: int, stop: int,
                listed: tuple[np.ndarray, np.ndarray]):
    import pyarrow as pa

    offsets, matched = listed
    owner = np.repeat(np.arange(start, stop), np.diff(offsets))
    dev = np.maximum(0, np.maximum(space.record_lo[matched] - report.query_hi[owner],
                                   report.query_lo[owner] - space.record_hi[matched]))
    m = dev.shape[1]
    inner = pa.FixedSizeListArray.from_arrays(pa.array(dev.ravel(), type=pa.int64()), m)
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int64()), inner)


def distance_columns(report: PermutedPrivacyReport, space: RankSpace, names: list[str], *,
                     batch: int) -> Iterator[dict[str, Any]]:
    """The rows of every record, ``batch`` records at a time."""
    n = report.distances.size
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        listed = report.match_sets.listed(start, stop)  # written out once, for the matches and their deviations
        columns = match_columns(report.distances, listed, start, stop)
        columns["deviations"] = _deviations(report, space, start, stop, listed)
        for j, name in enumerate(names):
            columns[f"spread_at_D.{name}"] = report.spread_at_dataset_distance[start:stop, j]
        for j, name in enumerate(names):
            columns[f"spread_at_d.{name}"] = report.spread_at_record_distance[start:stop, j]
        yield columns


def distance_summary(distances: np.ndarray, sizes: np.ndarray) -> dict[str, Any]:
    """Quantiles of the record distances and the ``sizes`` of their match sets, for a summary."""
    if distances.size == 0:
        return {}
    q = np.quantile(distances, [0.0, 0.1, 0.5, 0.9, 1.0])
    return {"min": int(q[0]), "q10": float(q[1]), "median": float(q[2]), "q90": float(q[3]), "max": int(q[4]),
            "mean": float(distances.mean()), "mean_matches": float(sizes.mean()), "max_matches": int(sizes.max())}
