"""Compiled loop of rank swapping (MDAV's is in :mod:`publisher.methods.mdav`).

Random draws are made by the caller with its numpy Generator and passed in, so
that a seed decides every result whatever numba does.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["KERNELS", "rank_swap_partners"]


@nb.njit(cache=True)
def _bit_add(tree, i, delta):
    i += 1
    while i < tree.size:
        tree[i] += delta
        i += i & -i


@nb.njit(cache=True)
def _bit_prefix(tree, i):
    """Number of unswapped positions among 0..i."""
    s = 0
    i += 1
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s


@nb.njit(cache=True)
def _bit_kth(tree, k, log):
    """0-based position of the k-th (1-based) unswapped position."""
    pos = 0
    step = log
    while step > 0:
        nxt = pos + step
        if nxt < tree.size and tree[nxt] < k:
            pos = nxt
            k -= tree[nxt]
        step >>= 1
    return pos


@nb.njit(cache=True)
def rank_swap_partners(n, window, uniforms):
    """Moore's rank swapping on sorted positions 0..n-1.

    In increasing order, each position i not yet swapped picks its partner
    uniformly among the positions in ``(i, i + window]`` not yet swapped, using
    ``uniforms[i]``; with none left it keeps its value. A Fenwick tree over
    the unswapped positions finds the partner in O(log n). Returns
    ``partner`` with ``partner[partner[i]] == i`` and ``|partner[i] - i| <= window``.
    """
    tree = np.zeros(n + 1, np.int64)
    for i in range(n):
        _bit_add(tree, i, 1)
    log = 1
    while log * 2 <= n:
        log *= 2
    partner = np.arange(n)
    done = np.zeros(n, np.bool_)
    for i in range(n):
        if done[i]:
            continue
        done[i] = True
        _bit_add(tree, i, -1)
        hi = min(n - 1, i + window)
        below = _bit_prefix(tree, i)
        free = _bit_prefix(tree, hi) - below
        if free == 0:
            continue
        k = min(free - 1, int(uniforms[i] * free))
        j = _bit_kth(tree, below + k + 1, log)
        done[j] = True
        _bit_add(tree, j, -1)
        partner[i] = j
        partner[j] = i
    return partner


#: the compiled kernels rank swapping calls
KERNELS = (rank_swap_partners,)
