"""The assessment's searches on a Dask cluster: ``verifier audit`` and ``publisher assess`` with ``--engine dask``.

:func:`verifier.attacks.assessment.assess` runs two searches, the data-set
permutation distances (D, v) and the intruder (reverse mapping, linkage, the
random-match test), then computes utility and attribute disclosure from
their results. :class:`ClusterSearches` runs the two searches on the cluster,
with the local engine's results to the bit; the tables themselves, and the
figures computed from them, stay in the calling process.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Callable, ContextManager

import numpy as np

from verifier.attacks.assessment import Searches
from verifier.distributed.cluster import default_pieces
from verifier.distributed.engine import distributed_permuted_privacy
from verifier.distributed.intruder import reverse_mapped_intruder

__all__ = ["ClusterSearches"]


class ClusterSearches(Searches):
    """:class:`~verifier.attacks.assessment.Searches` on a Dask client; each table is scattered once, in pieces.
    The two searches take turns: each fills the cluster, and their phases are said one at a time."""

    at_once = False

    def __init__(self, client, *, phase: Callable[[str], ContextManager] | None = None):
        self._client = client
        self._phase = phase or (lambda label: nullcontext())
        self._scattered: dict[int, tuple[np.ndarray, list]] = {}

    def _parts(self, table: np.ndarray) -> list:
        known = self._scattered.get(id(table))
        if known is not None and known[0] is table:
            return known[1]
        parts = self._client.scatter(np.array_split(np.asarray(table, dtype=np.float64), default_pieces(self._client)))
        self._scattered[id(table)] = (table, parts)
        return parts

    def permuted_privacy(self, original: np.ndarray, anonymized: np.ndarray, kinds: list[str]):
        with self._phase("sending the tables to the workers"):
            x, y = self._parts(original), self._parts(anonymized)
        return distributed_permuted_privacy(self._client, x, y, kinds, phase=self._phase)

    def intruder(self, original: np.ndarray, anonymized: np.ndarray, kinds: list[str], *, paired: bool,
                 space=None, **options):
        """The intruder on the workers; ``space`` is not read (nor waited for): Z's space is made and searched
        there."""
        report, z = reverse_mapped_intruder(self._client, self._parts(original), self._parts(anonymized), kinds,
                                            paired=paired, phase=self._phase, **options)
        return report, np.concatenate(self._client.gather(z))
