"""Compiled kernels for the spread of many windows of one sorted column.

The permutation-distance report asks for the variance of a window of the
sorted column for every record, twice. Prefix sums make each window O(1); the
two kernels here keep that accurate:

- :func:`compensated_prefix` returns prefix sums as unevaluated pairs
  ``hi + lo`` (Neumaier's compensated summation), so that the sum over any
  window is accurate to a few units in the last place whatever the column's
  length, instead of losing ``eps * n`` of the column's total;
- :func:`two_pass_variance` is the textbook two-pass variance of each window,
  used where the sums cannot decide (the window's mean dominates its spread);
- :func:`run_variance` is the same two passes over the window's runs of equal
  values, each run one term (its count times its value): a wide window of a
  heavily tied column (a census's twenty values over ten million records)
  holds a few runs, so it costs a few steps where the two passes over its
  values cost hundreds of thousands. Where those windows were summed value by
  value, the spreads grew faster than n.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["KERNELS", "RUNS_FROM", "compensated_prefix", "window_sum", "two_pass_variance", "run_variance"]

#: a suspect window at least this wide is summed by its runs of equal values (:func:`run_variance`); a narrower
#: one value by value (:func:`two_pass_variance`), as before
RUNS_FROM = 64


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


@nb.njit(cache=True, parallel=True)
def run_variance(z, run_start, lo, hi):
    """Population variance of ``z[lo[r]:hi[r] + 1]`` for every window r, two passes over its runs.

    ``z`` is sorted and ``run_start`` holds the first position of each run of
    equal values (0 first). A run of c copies of v adds ``c * v`` to the sum
    and ``c * (v - mean)^2`` to the squares: one rounding where the value by
    value passes make c.
    """
    out = np.empty(lo.size)
    for r in nb.prange(lo.size):
        a = lo[r]
        b = hi[r]
        k = b - a + 1
        first = np.searchsorted(run_start, a, side="right") - 1
        total = 0.0
        i = first
        while i < run_start.size and run_start[i] <= b:
            end = run_start[i + 1] - 1 if i + 1 < run_start.size else z.size - 1
            total += (min(end, b) - max(run_start[i], a) + 1) * z[run_start[i]]
            i += 1
        mean = total / k
        acc = 0.0
        i = first
        while i < run_start.size and run_start[i] <= b:
            end = run_start[i + 1] - 1 if i + 1 < run_start.size else z.size - 1
            dev = z[run_start[i]] - mean
            acc += (min(end, b) - max(run_start[i], a) + 1) * dev * dev
            i += 1
        out[r] = acc / k
    return out


#: the compiled kernels of this module (for the warm-up's cache check)
KERNELS = (compensated_prefix, two_pass_variance, run_variance)
