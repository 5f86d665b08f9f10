"""The maximum-knowledge intruder on the cluster: reverse mapping, linkage and the random-match test, as locally.

:func:`distributed_intruder` is :func:`verifier.attacks.intruder.run_intruder`
for tables in parts. One generator, seeded as locally, first breaks Y's ties
(:mod:`~verifier.distributed.reverse_mapping`, on the client, column by
column) and then draws the random records; the links are the slab search's
(:func:`~verifier.distributed.engine.distributed_linkage`) and the random
records are searched in the same slab trees (its space's ``tree``), so the
report is the local engine's to the bit. The random-match test itself is the
local code: :func:`~verifier.attacks.intruder.random_match_distribution`
draws on the client (a few MB per chunk) and only the searches run on the
workers.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Callable, ContextManager, Sequence

import numpy as np

from verifier.attacks.intruder import (
    ALPHA,
    IntruderReport,
    Linkage,
    check_alpha,
    intruder_report,
    random_match_distribution,
)
from verifier.core.match_sets import MatchSets
from verifier.core.validation import as_generator
from verifier.distributed.cluster import default_pieces, on_cluster
from verifier.distributed.engine import DistributedLinkage, distributed_linkage
from verifier.distributed.reverse_mapping import reverse_mapped_parts

__all__ = ["distributed_intruder", "reverse_mapped_intruder"]


def _rank_correlation(linked: DistributedLinkage) -> np.ndarray:
    """Spearman's rho of X_j and Z_j with average ranks for ties, as the local reverse mapping gives it.

    Z_j holds X_j's values, so an original value's query block in Z's space is
    its own block, and the average ranks are the blocks' midpoints.
    """
    space = linked.space
    corr = np.full(space.n_attributes, np.nan)
    if space.n_records < 2:
        return corr
    for j, column in enumerate(space.columns):
        if column.unique.size > 1:
            rank_x = (linked.qlo[:, j] + linked.qhi[:, j]) / 2.0
            rank_z = (space.record_lo[:, j] + space.record_hi[:, j]) / 2.0
            corr[j] = np.corrcoef(rank_x, rank_z)[0, 1]
    return corr


def reverse_mapped_intruder(client, original: list, anonymized: list, kinds: Sequence[str], *, paired: bool = False,
                            alpha: float = ALPHA, random_state: int | np.random.Generator | None = 0,
                            slabs: int | None = None, ranges: int | None = None,
                            phase: Callable[[str], ContextManager] | None = None, where: str = "-",
                            **options) -> tuple[IntruderReport, list]:
    """:func:`distributed_intruder`'s report, and the futures of the parts of the intruder's Z (Y's row order)."""
    alpha = check_alpha(alpha)
    phase = phase or (lambda label: nullcontext())
    rng = as_generator(random_state)
    original, anonymized = on_cluster(client, original), on_cluster(client, anonymized)
    with phase("reverse-mapping Y onto X (ranks, ties broken at random)"):
        z = reverse_mapped_parts(client, original, anonymized, rng, ranges=ranges or default_pieces(client), where=where)
    linked = distributed_linkage(client, original, z, kinds, slabs=slabs, ranges=ranges, phase=phase)
    linkage = Linkage(distances=linked.distances, sets=MatchSets.each(linked.offsets, linked.matches))
    random = random_match_distribution(linked.space, random_state=rng, **options)
    n = linkage.distances.size
    report = intruder_report(linkage, random, alpha=alpha, true_rows=np.arange(n) if paired else None,
                             rank_correlation=_rank_correlation(linked) if paired else None)
    return report, z


def distributed_intruder(client, original: list, anonymized: list, kinds: Sequence[str], **options) -> IntruderReport:
    """Paper 003's attack (Def. 3) on X and Y given as parts on the cluster; ``options`` as for the local engine.

    ``paired`` scores the links against row i of Y being record i of X and
    adds the rank correlations; ``alpha``, ``random_state`` and the random-match
    options (``mode``, ``samples``, ...) are the local engine's; ``slabs``
    and ``ranges`` cut the work; ``phase`` follows the stages; ``where``
    names Y in a shape error.
    """
    return reverse_mapped_intruder(client, original, anonymized, kinds, **options)[0]
