"""Compiled kernels for the spread of many windows of one sorted column.

The permutation-distance report asks for the variance of a window of the
sorted column for every record, twice. Prefix sums make each window O(1); the
two kernels here keep that accurate:

- :func:`compensated_prefix` returns prefix sums as unevaluated pairs
  ``hi + lo`` (Neumaier's compensated summation), so that the sum over any
  window is accurate to a few units in the last place whatever the column's
  length, instead of losing ``eps * n`` of the column's total;
- :func:`two_pass_variance` is the textbook two-pass variance of each window,
  used where the sums cannot decide (the window's mean dominates its spread).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["KERNELS", "compensated_prefix", "window_sum", "two_pass_variance"]


@nb.njit(cache=True)
def compensated_prefix(a):
    """Prefix sums ``P[k] = a[0] + ... + a[k-1]`` as pairs ``(hi[k], lo[k])``."""
    n = a.size
    hi = np.zeros(n + 1)
    lo = np.zeros(n + 1)
    s = 0.0
    c = 0.0
    for k in range(n):
        x = a[k]
        t = s + x
        if abs(s) >= abs(x):
            c += (s - t) + x
        else:
            c += (x - t) + s
        s = t
        hi[k + 1] = s
        lo[k + 1] = c
    return hi, lo


def window_sum(prefix: tuple[np.ndarray, np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Sum over 0-based inclusive windows ``[lo, hi]`` from compensated prefix sums."""
    p_hi, p_lo = prefix
    return (p_hi[hi + 1] - p_hi[lo]) + (p_lo[hi + 1] - p_lo[lo])


@nb.njit(cache=True, parallel=True)
def two_pass_variance(z, lo, hi):
    """Population variance of ``z[lo[r]:hi[r] + 1]`` for every window r, two-pass."""
    out = np.empty(lo.size)
    for r in nb.prange(lo.size):
        a = lo[r]
        b = hi[r] + 1
        k = b - a
        mean = 0.0
        for t in range(a, b):
            mean += z[t]
        mean /= k
        acc = 0.0
        for t in range(a, b):
            dev = z[t] - mean
            acc += dev * dev
        out[r] = acc / k
    return out


#: the compiled kernels of this module (for the warm-up's cache check)
KERNELS = (compensated_prefix, two_pass_variance)
