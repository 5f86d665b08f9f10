"""Fig. 3's loop compiled: every class of SD k-anonymization but the leftovers (spec/methods.md section 1.3).

:func:`sd_loop` takes its records as :func:`publisher.methods.sd_model.sd_classes_exhaustive`
does and returns the same classes, number for number. Each step is the plain
version's arithmetic in the same order, so sums, minima and ties agree bit for
bit:

- a class's first record is the first record left in scan order;
- the centre's numeric values are numpy's mean of the members (:func:`_mean`
  is numpy's pairwise sum), its categorical values the set of the members';
- a categorical attribute's distance row (Def. 1-2) ranks the values by how
  differently often they occur in the first record's context, on the
  contingency tables of the records left, backing off to a shorter context
  while it holds fewer than k records (:func:`_distance_row`);
- the next member is the record nearest the centre, the first in scan order
  among those within :data:`TIE` of the least distance (:func:`_nearest`).

A record's distance depends only on its *tuple* (its numeric values and
category codes), so records are indexed by tuple: each tuple is one point
holding its records in scan order. The tuples are sorted by one numeric
attribute, whose term alone bounds the distance from below, and the search
walks outwards from the centre's value, stopping on each side once that term
exceeds the best distance found plus the tolerance. Without a numeric
attribute every tuple left is a candidate: O(G) per member for G tuples, some
thousands on a census. Emptied tuples leave the walk now and then.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from publisher.methods.sd_model import TIE

__all__ = ["KERNELS", "NUMERIC", "CATEGORICAL", "SKIP", "sd_loop"]

#: an attribute's kind in the distance: ignored (one value), numeric, categorical (in the chain)
SKIP, NUMERIC, CATEGORICAL = 0, 1, 2


@nb.njit(cache=True)
def _block_sum(a, lo, n):
    """numpy's sum of at most 128 values: in order below 8, else 8 partial sums then the rest."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r = np.empty(8)
    for j in range(8):
        r[j] = a[lo + j]
    i = 8
    while i < n - (n % 8):
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@nb.njit(cache=True)
def _pairwise_sum(a, lo, n):
    """numpy's pairwise summation of ``a[lo:lo + n]``, bit for bit: blocks of at most 128, halves cut at a
    multiple of 8, each sum the left half's plus the right half's. A stack in place of recursion (numba's cache
    does not keep recursive functions)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    los, ns = np.empty(64, np.int64), np.empty(64, np.int64)
    is_right, left_sum = np.zeros(64, np.bool_), np.empty(64)
    sp, los[0], ns[0] = 0, lo, n
    while True:
        if ns[sp] > 128:  # go down the left half
            half = ns[sp] // 2
            half -= half % 8
            los[sp + 1], ns[sp + 1], is_right[sp + 1] = los[sp], half, False
            sp += 1
            continue
        total = _block_sum(a, los[sp], ns[sp])
        while True:  # climb: a left half moves on to its sibling, a right half completes its parent
            if sp == 0:
                return total
            half = ns[sp - 1] // 2
            half -= half % 8
            if not is_right[sp]:
                left_sum[sp - 1] = total
                los[sp], ns[sp], is_right[sp] = los[sp - 1] + half, ns[sp - 1] - half, True
                break
            total = left_sum[sp - 1] + total
            sp -= 1


@nb.njit(cache=True)
def _mean(x, j, members, m, buffer):
    """``x[members[:m], j].mean()`` as numpy computes it."""
    for i in range(m):
        buffer[i] = x[members[i], j]
    return _pairwise_sum(buffer, 0, m) / m


@nb.njit(cache=True)
def _distance_row(p, t, a, k, tables, out):
    """Distances from value ``a`` of chain attribute ``p`` to each of its values, in record t's context.

    ``tables`` is (card, steps, prefix, offsets, totals_at, counts, totals); the
    least similar value gets steps[p, 0], the next steps[p, 1], ...; ties by
    the lower code, as ``np.lexsort((codes, -difference))``.
    """
    card, steps, prefix, offsets, totals_at, counts, totals = tables
    c = card[p]
    if c == 2:
        for b in range(2):
            out[b] = 0.0 if a == b else 1.0
        return
    length = p
    while True:
        total = totals[totals_at[p, length] + prefix[length, t]]
        if total >= k or length == 0:
            break
        length -= 1
    base = offsets[p, length] + prefix[length, t] * c
    share_a = counts[base + a] / total
    difference = np.empty(c)
    for v in range(c):
        difference[v] = np.abs(counts[base + v] / total - share_a)
    placed = np.zeros(c, np.bool_)
    out[a] = 0.0
    placed[a] = True
    for i in range(c - 1):
        pick = -1
        for v in range(c):
            if not placed[v] and (pick < 0 or difference[v] > difference[pick]):
                pick = v
        placed[pick] = True
        out[pick] = steps[p, i]


@nb.njit(cache=True)
def _remove(members, codes, chain, tables):
    """The class's records leave the contingency tables."""
    card, steps, prefix, offsets, totals_at, counts, totals = tables
    for p in range(chain.size):
        for length in range(p + 1):
            for r in members:
                g = prefix[length, r]
                counts[offsets[p, length] + g * card[p] + codes[r, chain[p]]] -= 1
                totals[totals_at[p, length] + g] -= 1


@nb.njit(cache=True)
def _tuple_distance(tx, tc, kinds, means, ranges, per_value, g):
    """D_T(centre, record) for tuple g's records (eq. 7): the terms added in attribute order."""
    s = 0.0
    for j in range(kinds.size):
        if kinds[j] == 1:
            s += np.abs(tx[g, j] - means[j]) / ranges[j]
        elif kinds[j] == 2:
            s += per_value[j, tc[g, j]]
    return s


@nb.njit(cache=True)
def _first_left(g, records, start, head, taken):
    """Tuple g's first record left in scan order, or -1 once they are all taken (its head moves past them)."""
    while head[g] < start[g + 1] and taken[records[head[g]]]:
        head[g] += 1
    return records[head[g]] if head[g] < start[g + 1] else -1


@nb.njit(cache=True)
def _nearest(index, alive, n_alive, taken, position, centre, key, found, dist):
    """The record nearest the centre: the first in scan order within TIE of the least distance.

    ``index`` is (tx, tc, records, start, head); ``centre`` is (kinds, means,
    ranges, per_value); ``alive[:n_alive]`` are the tuples sorted by attribute
    ``key`` (-1: no numeric attribute, visit them all); ``found`` and ``dist``
    are room for the tuples visited and their distances.
    """
    tx, tc, records, start, head = index
    kinds, means, ranges, per_value = centre
    n_found = 0
    best = np.inf
    if key < 0:
        left, right = -1, n_alive
        for i in range(n_alive):
            g = alive[i]
            if _first_left(g, records, start, head, taken) >= 0:
                found[n_found], dist[n_found] = g, _tuple_distance(tx, tc, kinds, means, ranges, per_value, g)
                best = min(best, dist[n_found])
                n_found += 1
    else:
        lo, hi = 0, n_alive
        while lo < hi:
            mid = (lo + hi) // 2
            if tx[alive[mid], key] < means[key]:
                lo = mid + 1
            else:
                hi = mid
        left, right = lo - 1, lo
    while left >= 0 or right < n_alive:
        gap_left = np.abs(tx[alive[left], key] - means[key]) / ranges[key] if left >= 0 else np.inf
        gap_right = np.abs(tx[alive[right], key] - means[key]) / ranges[key] if right < n_alive else np.inf
        if min(gap_left, gap_right) > best + TIE:
            break
        if gap_left <= gap_right:
            g = alive[left]
            left -= 1
        else:
            g = alive[right]
            right += 1
        if _first_left(g, records, start, head, taken) >= 0:
            found[n_found], dist[n_found] = g, _tuple_distance(tx, tc, kinds, means, ranges, per_value, g)
            best = min(best, dist[n_found])
            n_found += 1
    limit = best + TIE
    first = -1
    for i in range(n_found):
        if dist[i] <= limit:
            r = records[head[found[i]]]
            if first < 0 or position[r] < position[first]:
                first = r
    return first


@nb.njit(cache=True)
def _compact(alive, n_alive, records, start, head, taken):
    """Drop the emptied tuples from the walk, keeping the order; the new count."""
    kept = 0
    for i in range(n_alive):
        if _first_left(alive[i], records, start, head, taken) >= 0:
            alive[kept] = alive[i]
            kept += 1
    return kept


@nb.njit(cache=True)
def _join(r, codes, categorical, seen, per_value, p_of, t1, k, tables, row):
    """Member r's categorical values join the centre: a new value lowers D_A(C, y) to its row where smaller."""
    for j in categorical:
        a = codes[r, j]
        if not seen[j, a]:
            seen[j, a] = True
            _distance_row(p_of[j], t1, a, k, tables, row)
            for b in range(tables[0][p_of[j]]):
                per_value[j, b] = min(per_value[j, b], row[b])


@nb.njit(cache=True)
def sd_loop(k, order, position, x, codes, kinds, ranges, index, key, chain, tables, width):
    """The classes Fig. 3 builds while k records or more are left: (members, number of classes, taken).

    ``members[c * k:(c + 1) * k]`` is class c in the order its records joined;
    the records left over are the ones not ``taken``.
    """
    tx, tc, records, start, head = index
    n, q = x.shape
    p_of = np.full(q, -1, np.int64)
    for p in range(chain.size):
        p_of[chain[p]] = p
    categorical = np.flatnonzero(kinds == 2)
    numeric = np.flatnonzero(kinds == 1)
    tuple_of = np.empty(n, np.int64)
    for g in range(start.size - 1):
        tuple_of[records[start[g]:start[g + 1]]] = g
    alive = np.argsort(tx[:, key], kind="mergesort") if key >= 0 else np.arange(start.size - 1)
    n_alive, emptied = alive.size, 0
    taken = np.zeros(n, np.bool_)
    members = np.empty((n // k) * k, np.int64)
    means, buffer, row = np.zeros(q), np.empty(k), np.empty(width)
    found, dist = np.empty(alive.size, np.int64), np.empty(alive.size)
    per_value = np.zeros((q, width))
    seen = np.zeros((q, width), np.bool_)
    scan, live, n_classes = 0, n, 0
    while live >= k:
        while taken[order[scan]]:
            scan += 1
        t1 = order[scan]
        at = n_classes * k
        for m in range(k):
            if m == 0:
                r = t1
            else:
                for j in numeric:
                    means[j] = _mean(x, j, members[at:], m, buffer)
                centre = (kinds, means, ranges, per_value)
                r = _nearest(index, alive, n_alive, taken, position, centre, key, found, dist)
            members[at + m] = r
            taken[r] = True
            emptied += _first_left(tuple_of[r], records, start, head, taken) < 0
            if m == 0:
                for j in categorical:
                    per_value[j, :] = np.inf
            _join(r, codes, categorical, seen, per_value, p_of, t1, k, tables, row)
        for r in members[at:at + k]:
            for j in categorical:
                seen[j, codes[r, j]] = False
        _remove(members[at:at + k], codes, chain, tables)
        n_classes += 1
        live -= k
        if emptied > 64 and 2 * emptied > n_alive:
            n_alive, emptied = _compact(alive, n_alive, records, start, head, taken), 0
    return members, n_classes, taken


#: the compiled kernels the clustering calls
KERNELS = (sd_loop,)
