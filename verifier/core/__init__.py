"""The permutation core (paper 003): block ranks with ties, reverse mapping, the permutation
distance in rank space with its KD-tree, and the window spreads of (d, v)-permuted privacy.

Everything here works on numpy arrays of rank keys; nothing reads files or
knows about releases. The names below are loaded on first use: a module that needs only this package's
validation does not compile its kernels.
"""

from verifier.lazy_names import lazy_names

#: public name -> the module that defines it
_WHERE = {
    **dict.fromkeys(["DVPrivacyResult", "PermutedPrivacyReport", "RankSpace", "RecordDistance", "SingleRecord",
                     "check_dv_privacy", "compute_distances", "compute_permuted_privacy", "compute_record_distance",
                     "compute_window_spread"], "verifier.core.permutation"),
    **dict.fromkeys(["ReverseMappingResult", "block_ranks", "rank_deviation", "reverse_map"], "verifier.core.ranks"),
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE)


__all__ = [
    "DVPrivacyResult", "PermutedPrivacyReport", "RankSpace", "RecordDistance", "ReverseMappingResult",
    "SingleRecord", "block_ranks", "check_dv_privacy", "compute_distances", "compute_permuted_privacy",
    "compute_record_distance", "compute_window_spread", "rank_deviation", "reverse_map",
]
