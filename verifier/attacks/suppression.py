"""Suppressed records, and the figures ARX reports for a release that has them (issue 38, item 4).

A tool that suppresses a record writes ``*`` in every quasi-identifier
(sdcMicro ``NA``, mu-ARGUS an empty cell: :mod:`publisher.external_output`
reads each as ``*``). The record stays in the release as one whose
quasi-identifiers are all unknown: it is among the candidates of every
subject, and it tells nothing of its own quasi-identifiers.

ARX leaves such records out of its figures, and a protector compares hers
with ARX's: the classes of identical published quasi-identifiers among the
records not suppressed, the smallest of them, the highest prosecutor risk
(1 / the smallest class) and the average one (classes / records not
suppressed). Every figure needs the release alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier.attacks.classes import WILDCARD, PublishedCells

__all__ = ["suppressed_rows", "suppression_claims"]


def suppressed_rows(published: PublishedCells) -> np.ndarray:
    """Which released rows have ``*`` in every quasi-identifier (none, for a table without quasi-identifiers);
    found once per release, as every subject's check asks."""
    if not published.suppressed:
        qi = published.quasi_identifiers
        found = np.ones(published.n_records, dtype=bool) if qi else np.zeros(published.n_records, dtype=bool)
        for a in qi:
            found &= np.array([t.strip() == WILDCARD for t in published.text[a.name]], dtype=bool)
        published.suppressed.append(found)
    return published.suppressed[0]


def suppression_claims(published: PublishedCells) -> dict[str, Any]:
    """The suppressed records, and ARX's class figures over the records not suppressed."""
    kept = ~suppressed_rows(published)
    sizes = np.bincount(published.class_labels()[kept]) if kept.any() else np.zeros(0, dtype=np.int64)
    sizes = sizes[sizes > 0]
    smallest = int(sizes.min()) if sizes.size else None
    return {"suppressed_records": int((~kept).sum()), "classes": int(sizes.size), "smallest_class": smallest,
            "highest_prosecutor_risk": 1.0 / smallest if smallest else None,
            "average_prosecutor_risk": sizes.size / int(kept.sum()) if kept.any() else None}
