"""Compiled kernels for the spread of many windows of one sorted column.

The permutation-distance report asks for the variance of a window of the
sorted column for every record, twice. Prefix sums make each window O(1); the
kernels here keep that accurate:

- :func:`prefix_table` returns prefix sums of the values and of their
  squares as unevaluated pairs ``hi + lo`` (Neumaier's compensated
  summation), so that the sum over any window is accurate to a few units in
  the last place whatever the column's length, instead of losing ``eps * n``
  of the column's total; :func:`window_moments` turns them into each
  window's variance in one parallel pass;
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

__all__ = ["KERNELS", "RUNS_FROM", "prefix_table", "window_moments", "two_pass_variance", "run_variance"]

#: a suspect window at least this wide is summed by its runs of equal values (:func:`run_variance`); a narrower
#: one value by value (:func:`two_pass_variance`), as before
RUNS_FROM = 64


@nb.njit(cache=True)
def prefix_table(z):
    """Prefix sums of ``z`` and of ``z * z`` as compensated pairs, side by side.

    Row k holds ``(hi, lo)`` of ``z[0] + ... + z[k-1]`` then ``(hi, lo)`` of
    ``z[0]^2 + ... + z[k-1]^2`` (Neumaier's summation: each sum is
    ``hi + lo``). Side by side, the four numbers a window's end needs share
    one cache line: a window costs two lines where four arrays cost eight.
    """
    n = z.size
    out = np.zeros((n + 1, 4))
    for k in range(n):
        for first in (0, 2):  # the sum of the values, then of their squares
            x = z[k] if first == 0 else z[k] * z[k]
            s = out[k, first]
            c = out[k, first + 1]
            t = s + x
            if abs(s) >= abs(x):
                c += (s - t) + x
            else:
                c += (x - t) + s
            out[k + 1, first] = t
            out[k + 1, first + 1] = c
    return out


@nb.njit(cache=True, parallel=True)
def window_moments(table, values, qlo, qhi, d, n):
    """The variance of every window from the prefix sums, and the windows the sums cannot decide.

    Window r is the sorted positions ``[max(1, qlo[r] - t), min(n, qhi[r] + t)]``
    (1-based), ``t`` being ``d[r]``, or ``d[0]`` for every window when ``d``
    holds one distance. From the window's sums ``S1`` and ``S2`` the variance
    is ``max(S2 - S1^2 / k, 0) / k``. Returns ``(var, flag)``: flag 1 marks a
    window whose first and last values are equal (variance exactly 0), flag
    2 one where ``S2 - S1^2 / k <= 1e-6 S2``: the sums cannot decide it and
    the caller recomputes it by two passes.
    """
    nq = qlo.size
    var = np.empty(nq)
    flag = np.zeros(nq, np.int8)
    one = d.size == 1
    for r in nb.prange(nq):
        t = d[0] if one else d[r]
        a = max(1, qlo[r] - t) - 1
        b = min(n, qhi[r] + t) - 1
        if values[a] == values[b]:
            var[r] = 0.0
            flag[r] = 1
        else:
            s1 = (table[b + 1, 0] - table[a, 0]) + (table[b + 1, 1] - table[a, 1])
            s2 = (table[b + 1, 2] - table[a, 2]) + (table[b + 1, 3] - table[a, 3])
            k = float(b - a + 1)
            m2 = s2 - s1 * s1 / k
            if m2 <= 1e-6 * s2:
                flag[r] = 2
            var[r] = (m2 if m2 >= 0.0 or m2 != m2 else 0.0) / k
    return var, flag


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
KERNELS = (prefix_table, window_moments, two_pass_variance, run_variance)
