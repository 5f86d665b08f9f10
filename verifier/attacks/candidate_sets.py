"""Every record's candidates in a release with ranks, and the share of them holding her sensitive value.

The twin of :func:`~verifier.attacks.disclosure.record_disclosure` for many
records at once (issue 51, item 1): the same candidates (every released
record when there is no quasi-identifier, the records with exactly her
categorical quasi-identifiers, else her match set on the quasi-identifiers in
rank space), found in one pass (one sort, or one search of the rank index)
instead of one scan per record, and the same risks to the last bit: each is
an exact count of hits divided by an exact count of candidates.

:func:`value_shares_of` is the base rate of each record's value, as
:func:`~verifier.releases.exposure.base_rate` gives it for one.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from verifier.attacks.disclosure import permutation_risk, released_group_risk
from verifier.data.schema import Schema

__all__ = ["candidate_risks", "value_shares_of", "TOLERANCE"]

#: the tolerance of a numeric sensitive value, as a share of its released range (record_disclosure's default)
TOLERANCE = 0.05


def value_shares_of(column: np.ndarray, mine: np.ndarray, tolerance: float | None) -> np.ndarray:
    """Each of ``mine``'s share of ``column`` (within ``tolerance`` where it is given)."""
    if not column.size:
        return np.zeros(mine.shape[0])
    zero_o, zero_r = np.zeros(mine.shape[0], np.int64), np.zeros(column.shape[0], np.int64)
    return released_group_risk(zero_o, zero_r, mine, column, tolerance=tolerance)[0]


def _group_labels(y: np.ndarray, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One integer label per distinct row of ``y`` and of ``records`` together: equal rows, equal labels."""
    both = np.concatenate([y, records]) + 0.0  # -0.0 and 0.0 are one value, as == says
    _, labels = np.unique(both, axis=0, return_inverse=True)
    labels = labels.ravel().astype(np.int64)
    return labels[: y.shape[0]], labels[y.shape[0]:]


def candidate_risks(y: np.ndarray, schema: Schema, records: np.ndarray,
                    names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per sensitive attribute (of ``names``, or all): each record's ``risk`` (an array), its ``mode`` and, for a
    numeric attribute, the ``tolerance`` of a hit; as :func:`~verifier.attacks.disclosure.record_disclosure` gives
    them one by one."""
    from verifier.core.permutation import RankSpace

    attrs = list(schema.attributes)
    wanted = [a.name for a in attrs if a.role == "sensitive" and (names is None or a.name in names)]
    if not wanted:
        return {}
    qi = [j for j, a in enumerate(attrs) if a.role == "quasi_identifier"]
    k = records.shape[0]
    if not qi:
        mode, own, theirs = "none", np.zeros(k, np.int64), np.zeros(y.shape[0], np.int64)
    elif all(attrs[j].kind != "numeric" for j in qi):
        mode = "group"
        theirs, own = _group_labels(y[:, qi], records[:, qi])
    else:
        mode = "permutation"
        space = RankSpace(y[:, qi], [attrs[j].kind for j in qi])
        qlo, qhi = space.query_blocks(records[:, qi])
        _, sets = space.match_sets(qlo, qhi)
    out: dict[str, dict[str, Any]] = {}
    for s, attr in enumerate(attrs):
        if attr.name not in wanted:
            continue
        tol = (TOLERANCE * float(y[:, s].max() - y[:, s].min()) if y.shape[0] else 0.0) if attr.kind == "numeric" \
            else None
        if mode == "permutation":
            risk = permutation_risk(sets, records[:, s], y[:, s], tolerance=tol)[0]
        else:
            risk = released_group_risk(own, theirs, records[:, s], y[:, s], tolerance=tol)[0]
        out[attr.name] = {"mode": mode, "risk": risk, **({"tolerance": tol} if tol is not None else {})}
    return out

