"""The numbers a table may hold: finite, normal, and small enough that the methods' sums stay finite.

A 64-bit float holds magnitudes up to about 1.8e308, but a variance squares
the values and a method sums them over every record: at 1e160 one square is
already infinite. Every numeric cell is therefore at most
:data:`MAX_MAGNITUDE` (1e150) in absolute value: its square is at most 1e300,
and the squares of even 1e8 records sum to at most 1e308, with noise added on
top. A cell that is not zero but below the smallest normal float
(2.2e-308) is *subnormal*: it has lost precision, and is refused as an
underflow, like one that would become 0. docs/input-format.md lists the rule.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_MAGNITUDE", "MIN_NORMAL", "out_of_range", "range_words"]

#: the largest absolute value of a numeric cell
MAX_MAGNITUDE = 1e150
#: the smallest normal 64-bit float: a nonzero cell below it in absolute value is subnormal
MIN_NORMAL = float(np.finfo(np.float64).tiny)


def out_of_range(values: np.ndarray) -> np.ndarray:
    """The positions of the cells beyond :data:`MAX_MAGNITUDE` or subnormal (NaN and infinity included)."""
    magnitude = np.abs(values)
    return np.flatnonzero(~(magnitude <= MAX_MAGNITUDE) | ((magnitude > 0) & (magnitude < MIN_NORMAL)))


def range_words(value: float) -> str:
    """Why one value is out of range, in words."""
    if not np.isfinite(value):
        return "is NaN or infinite"
    if abs(value) > MAX_MAGNITUDE:
        return ("is beyond 1e150 in absolute value, the largest a numeric cell may hold so that variances, noise "
                "and sums stay finite")
    return "is too small for a 64-bit float (a subnormal number, which has lost precision)"
