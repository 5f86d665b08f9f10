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

sdcMicro suppresses single cells (``localSuppression``) and counts a
suppressed cell as matching any value: a record's f_k is the number of
released records that agree with it on every quasi-identifier where neither
is suppressed (freqCalc with its default alpha = 1), and an output is
k-anonymous as sdcMicro means it when every f_k is k or more
(:func:`matching_counts`; ``smallest_matching`` in the claims, issue 61).
That is the protection against someone who knows the records' values but not
how the tool chose the cells it suppressed. The claims' ``k`` stays the
smallest class of identical published cells: the intruder the project names
knows the tool's code and configuration, and can tell the record whose cell
was suppressed from those it matches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier.attacks.classes import WILDCARD, PublishedCells

__all__ = ["matching_counts", "suppressed_rows", "suppression_claims"]


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


def matching_counts(published: PublishedCells) -> np.ndarray:
    """Each released row's f_k as sdcMicro counts it: the released rows that agree with it on every
    quasi-identifier where neither cell is ``*`` (itself included). Rows with no ``*`` match only their own
    pattern and the patterns with a ``*``, so the work follows the distinct patterns with one, not the rows."""
    qi = published.quasi_identifiers
    n = published.n_records
    if not qi or not n:
        return np.full(n, n, dtype=np.int64)
    columns = []
    for a in qi:
        texts = [t.strip() for t in published.text[a.name]]
        seen: dict[str, int] = {WILDCARD: -1}
        columns.append(np.array([seen.setdefault(t, len(seen) - 1) for t in texts], dtype=np.int64))
    rows = np.stack(columns, axis=1)
    patterns, of_row, count = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    of_row = of_row.ravel()
    plain = ~(patterns == -1).any(axis=1)
    wild = np.flatnonzero(~plain)
    found = count.astype(np.int64).copy()  # a pattern without a * matches itself...
    for start in range(0, wild.size, 256):  # ...and those with one, in blocks of patterns
        block = wild[start:start + 256]
        w = patterns[block]
        fits = ((w[:, None, :] == patterns[None, :, :]) | (w[:, None, :] == -1)
                | (patterns[None, :, :] == -1)).all(axis=2)
        found[block] = fits @ count
        found[plain] += (fits[:, plain] * count[block, None]).sum(axis=0)
    return found[of_row]


def suppression_claims(published: PublishedCells) -> dict[str, Any]:
    """The suppressed records, ARX's class figures over the records not suppressed, and the fewest released records
    any one matches as sdcMicro counts them (:func:`matching_counts`)."""
    kept = ~suppressed_rows(published)
    sizes = np.bincount(published.class_labels()[kept]) if kept.any() else np.zeros(0, dtype=np.int64)
    sizes = sizes[sizes > 0]
    smallest = int(sizes.min()) if sizes.size else None
    matching = matching_counts(published)
    return {"suppressed_records": int((~kept).sum()), "classes": int(sizes.size), "smallest_class": smallest,
            "highest_prosecutor_risk": 1.0 / smallest if smallest else None,
            "average_prosecutor_risk": sizes.size / int(kept.sum()) if kept.any() else None,
            "suppressed_cells": int(sum(t.strip() == WILDCARD for a in published.quasi_identifiers
                                        for t in published.text[a.name])),
            "smallest_matching": int(matching.min()) if matching.size else None}
