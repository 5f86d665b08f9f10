"""The permutation core (paper 003): block ranks with ties, reverse mapping, the permutation
distance in rank space with its KD-tree, and the window spreads of (d, v)-permuted privacy.

Everything here works on numpy arrays of rank keys; nothing reads files or
knows about releases.
"""

from verifier.core.permutation import (
    DVPrivacyResult,
    PermutedPrivacyReport,
    RankSpace,
    RecordDistance,
    SingleRecord,
    check_dv_privacy,
    compute_distances,
    compute_permuted_privacy,
    compute_record_distance,
    compute_window_spread,
)
from verifier.core.ranks import ReverseMappingResult, block_ranks, rank_deviation, reverse_map

__all__ = [
    "DVPrivacyResult", "PermutedPrivacyReport", "RankSpace", "RecordDistance", "ReverseMappingResult",
    "SingleRecord", "block_ranks", "check_dv_privacy", "compute_distances", "compute_permuted_privacy",
    "compute_record_distance", "compute_window_spread", "rank_deviation", "reverse_map",
]
