"""The random-match test's settings (SPEC section 5): when it enumerates, how many records it draws at the most
and by default, and the p-value below which a link is confident.

They stand apart from :mod:`verifier.attacks.intruder` so that what only needs a bound (the manifest's
coherence rules, the command line's options) does not load the test's kernels.
"""

__all__ = ["EXHAUSTIVE_LIMIT", "SAMPLES", "MAX_SAMPLES", "ALPHA"]

#: enumerate every combination of column values up to this many (SPEC section 5)
EXHAUSTIVE_LIMIT = 10**6
#: Monte Carlo draws when the combinations are too many
SAMPLES = 10_000
#: the most draws a random-match test takes (a command's ``--samples``, a manifest's ``random_records``)
MAX_SAMPLES = 10_000_000
#: p-value below which a link is confident
ALPHA = 0.01
