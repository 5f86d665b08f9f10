"""Every original record's link by the maximum-knowledge intruder as columns, batch by batch (``--out`` files).

One row per record of X: ``record`` (from 1), ``distance`` of her link in Z,
``n_matches``, ``matches`` (the records of Z at that distance, from 1),
``p_value`` F_rand(d) with ``p_value_low`` and ``p_value_high`` (its 95%
interval; equal when the random distribution is exact),
``confidently_linked``, and ``outcome`` (correct, multiple, misidentified)
only for a table paired with X row by row.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from verifier.attacks.intruder import IntruderReport
from verifier.core.record_rows import match_columns

__all__ = ["link_columns"]


def link_columns(report: IntruderReport, *, batch: int) -> Iterator[dict[str, Any]]:
    """The rows of every record, ``batch`` records at a time."""
    link = report.linkage
    n = link.distances.size
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        columns = match_columns(link.distances, link.sets.listed(start, stop), start, stop)
        columns.update({
            "p_value": report.p_values[start:stop],
            "p_value_low": report.p_value_low[start:stop],
            "p_value_high": report.p_value_high[start:stop],
            "confidently_linked": np.asarray(report.confidently_linked[start:stop], dtype=bool),
        })
        if report.outcomes is not None:
            columns["outcome"] = np.asarray(report.outcomes[start:stop]).astype(str)
        yield columns
