"""m-invariance (Xiao and Tao, "m-Invariance: Towards Privacy Preserving Re-publication of Dynamic Datasets",
SIGMOD 2007): the groups of a re-publication, with the counterfeit records it needs (issue 40, item 2).

A generalized table is *m-unique* when every group holds at least m records, all with distinct sensitive values;
a group's *signature* is the set of its sensitive values. A sequence of releases is *m-invariant* when each is
m-unique and every person published again is in a group of the same signature as before: an intruder who
intersects her candidate values across the releases is left with her whole signature, never fewer values.

Given each person's signature in the earlier release (``None`` for a person not released before),
:func:`m_invariant_groups` follows the paper's four phases:

1. **Division.** People released before go into the *bucket* of their signature.
2. **Balancing.** A bucket must hold every value of its signature equally often (``c`` times, the count of its
   most frequent value). A value short of ``c`` takes new people with that value, and where there are not enough,
   *counterfeit records*: rows of that value that are nobody.
3. **Assignment.** The new people left form buckets of m distinct values, one record of each value per round,
   always taking the m values with the most people left (as Anatomy does), so the counts stay even; among values
   left equally often, those with a record nearest the round's first in the grouping order. The people
   of the last fewer than m values each join the nearest group of new people alone that lacks their value (as
   Anatomy places its residue); those no such group takes form one last bucket of their values and the table's
   most frequent others, filled with counterfeits.
4. **Decomposition.** A bucket of ``c`` records per value is cut into ``c`` groups of one record per value.
   Each value's records are in the grouping order, and a value with fewer real records than
   ``c`` spreads them evenly over the groups.

The grouping order is a uniform shuffle drawn from the release's secret seed
(:class:`publisher.methods.m_invariant.MInvariant`), never the quasi-identifiers' order: the intruder who reruns
the method on every assignment of a group's values to its members finds each as likely as the others (issue 58).

Every group holds at least one real person (the bucket's most frequent value fills every group). The paper
publishes how many counterfeits each group holds; :mod:`publisher.methods.m_invariant` generalizes the groups and
publishes those counts in the signed manifest.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from publisher.methods.base import fail
from publisher.methods.m_invariant_rounds import assign, nearest_at

__all__ = ["Group", "m_invariant_groups", "check_signatures", "eligible"]


@dataclass(frozen=True)
class Group:
    """One group: its real people (row indices, in the grouping order) and the sensitive values of its
    counterfeit records; its signature is the set of both."""

    members: tuple[int, ...]
    counterfeits: tuple[Hashable, ...]


def check_signatures(values: Sequence[Hashable], signatures: Sequence[frozenset | None], m: int) -> None:
    """Refused (``M_INVARIANCE_IMPOSSIBLE``) when a person released before cannot keep her signature: her value is
    not in it (her sensitive value changed), or it holds fewer than m values (the earlier release was not
    m-unique). The rows are named, never the values."""
    changed = [i + 1 for i, (v, s) in enumerate(zip(values, signatures)) if s is not None and v not in s]
    if changed:
        raise fail(f"m_invariant: the sensitive value of the record in row {_rows(changed)} is not among those of "
                   "the group the earlier release put that person in, so no group can keep its signature; "
                   "m-invariance re-publishes people whose sensitive value stays the same",
                   "M_INVARIANCE_IMPOSSIBLE")
    small = [i + 1 for i, s in enumerate(signatures) if s is not None and len(s) < m]
    if small:
        raise fail(f"m_invariant: the earlier release puts the person of row {_rows(small)} in a group of fewer than "
                   f"m = {m} distinct sensitive values, and keeping that group's signature keeps it below m; "
                   "choose an m the earlier release meets", "M_INVARIANCE_IMPOSSIBLE")


def eligible(values: Sequence[Hashable], signatures: Sequence[frozenset | None], m: int) -> None:
    """Refused (``M_INVARIANCE_IMPOSSIBLE``) when a first release is not *m-eligible* (Xiao and Tao, as for
    Anatomy): a sensitive value held by more than n/m of its n people. Such a table has no m-unique grouping of
    its people, and padding it with counterfeits of the other values tells the intruder who reruns the method which
    record of a group is real (issue 58). A re-publication keeps its counterfeits: its groups' signatures are fixed
    by the earlier release. The value is never named."""
    if any(s is not None for s in signatures) or not values:
        return
    top = max(Counter(values).values())
    if top * m > len(values):
        raise fail(f"m_invariant: one sensitive value is held by {top} of the {len(values)} records, more than n/m = "
                   f"{len(values) / m:g}, so no grouping of these people into groups of m = {m} distinct values "
                   "exists (the table is not m-eligible); choose a smaller m, or release a table whose most frequent value is "
                   f"held by at most 1/m of the records", "M_INVARIANCE_IMPOSSIBLE")


def _rows(rows: list[int]) -> str:
    shown = ", ".join(map(str, rows[:5]))
    return shown + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")


def m_invariant_groups(values: Sequence[Hashable], signatures: Sequence[frozenset | None], order: Sequence[int],
                       m: int, domain: Sequence[Hashable]) -> list[Group]:
    """The groups of an m-invariant re-publication (the module's four phases).

    ``values[i]`` is row ``i``'s sensitive value, ``signatures[i]`` its signature in the earlier release or None,
    ``order[i]`` its position in the grouping order (a uniform shuffle, independent of the values), and
    ``domain`` the sensitive attribute's values, most frequent first, from which a last bucket borrows values."""
    check_signatures(values, signatures, m)
    if len(set(domain)) < m:
        raise fail(f"m_invariant: the sensitive attribute has {len(set(domain))} values, and m = {m} needs "
                   "groups of m distinct values", "M_INVARIANCE_IMPOSSIBLE")
    eligible(values, signatures, m)
    rank = np.asarray(order, dtype=np.int64)
    buckets, pool = _divide(values, signatures, rank)
    returning = set(buckets)
    fakes = _balance(buckets, pool, rank)
    left = assign(pool, buckets, m, rank)
    groups: list[Group] = []
    fresh: list[bool] = []  # groups of new people alone, which a person left over may join
    for s in sorted(buckets, key=_signature_key):
        made = _decompose(buckets[s], fakes.get(s, {}), rank)
        groups += made
        fresh += [s not in returning] * len(made)
    left = _join_residue(groups, fresh, left, values, rank)
    if not left:
        return groups
    others = [v for v in dict.fromkeys(domain) if v not in left][:m - len(left)]
    last = {v: left.get(v, []) for v in [*left, *others]}
    c = max(len(rows) for rows in last.values())
    return groups + _decompose(last, {v: c - len(rows) for v, rows in last.items() if c > len(rows)}, rank)


def _divide(values: Sequence[Hashable], signatures: Sequence[frozenset | None],
            rank: np.ndarray) -> tuple[dict[frozenset, dict[Hashable, list[int]]], dict[Hashable, list[int]]]:
    """Division: the people released before in the bucket of their signature; the new ones in a pool by value,
    each value's in the grouping order."""
    buckets: dict[frozenset, dict[Hashable, list[int]]] = {}
    pool: dict[Hashable, list[int]] = {}
    for i, (v, s) in enumerate(zip(values, signatures)):
        if s is None:
            pool.setdefault(v, []).append(i)
        else:
            buckets.setdefault(frozenset(s), {u: [] for u in s})[v].append(i)
    return buckets, {v: sorted(rows, key=lambda i: rank[i]) for v, rows in pool.items()}


def _balance(buckets: dict, pool: dict[Hashable, list[int]], rank: np.ndarray) -> dict[frozenset, dict[Hashable, int]]:
    """Balancing: each value of a bucket's signature brought to the count of its most frequent one with new people
    of that value (nearest the bucket first), else counterfeits; returns each bucket's counterfeits by value."""
    fakes: dict[frozenset, dict[Hashable, int]] = {}
    for s in sorted(buckets, key=_signature_key):
        bucket, c = buckets[s], max(len(rows) for rows in buckets[s].values())
        for v in sorted(s, key=str):
            short = c - len(bucket[v])
            if short > 0:
                bucket[v] += _nearest(pool.get(v, []), short, bucket, rank)
                if c > len(bucket[v]):
                    fakes.setdefault(s, {})[v] = c - len(bucket[v])
    return fakes


def _join_residue(groups: list[Group], fresh: list[bool], left: dict[Hashable, list[int]],
                  values: Sequence[Hashable], rank: np.ndarray) -> dict[Hashable, list[int]]:
    """The new people left over (fewer than m values) joined to the nearest group of new people alone whose values
    do not hold theirs (as Anatomy places its residue): the group stays of distinct values, one more of them. Returns
    those no such group takes. A group's place is the median of its members' ranks before any joins."""
    out: dict[Hashable, list[int]] = {}
    if not left:
        return out
    sizes = np.fromiter(map(len, (g.members for g in groups)), dtype=np.int64, count=len(groups))
    members = np.fromiter((i for g in groups for i in g.members), dtype=np.int64, count=int(sizes.sum()))
    owner = np.repeat(np.arange(len(groups)), sizes)
    centres = _medians(np.asarray(rank)[members], owner, sizes)
    held_values = np.fromiter(values, dtype=object, count=len(values))[members]
    for v in sorted(left, key=str):
        lacking = np.asarray(fresh, dtype=bool)
        lacking[owner[held_values == v]] = False
        ids = np.flatnonzero(lacking)
        ids = ids[np.lexsort((ids, centres[ids]))]
        open_, keys = ids.tolist(), centres[ids].tolist()
        for i in left[v]:
            if not open_:
                out.setdefault(v, []).append(i)
                continue
            at = nearest_at(keys, float(rank[i]))
            g = open_.pop(at)
            keys.pop(at)
            groups[g] = Group(tuple(sorted([*groups[g].members, i], key=lambda t: rank[t])), groups[g].counterfeits)
    return out


def _medians(ranks: np.ndarray, owner: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Each group's median rank, as ``np.median`` gives it (the mean of the two middle ranks of an even group), from
    its members' ranks ``ranks`` (``owner``: their groups, in group order; every group holds one at least)."""
    ranks = ranks[np.lexsort((ranks, owner))]
    first = np.zeros(sizes.size, dtype=np.int64)
    np.cumsum(sizes[:-1], out=first[1:])
    low = ranks[first + (sizes - 1) // 2].astype(np.float64)
    high = ranks[first + sizes // 2].astype(np.float64)
    return np.where(sizes % 2 == 1, low, (low + high) / 2)


def _signature_key(s: frozenset) -> tuple:
    return tuple(sorted(map(str, s)))


def _nearest(candidates: list[int], count: int, bucket: dict[Hashable, list[int]], rank: np.ndarray) -> list[int]:
    """Up to ``count`` of ``candidates`` (removed from it) closest in the grouping order to the bucket's
    median record."""
    if not candidates or count <= 0:
        return []
    held = [i for rows in bucket.values() for i in rows]
    centre = float(np.median(rank[held])) if held else 0.0
    chosen = sorted(sorted(candidates, key=lambda i: (abs(rank[i] - centre), rank[i]))[:count], key=lambda i: rank[i])
    taken = set(chosen)
    candidates[:] = [i for i in candidates if i not in taken]
    return chosen


def _decompose(bucket: dict[Hashable, list[int]], fakes: dict[Hashable, int], rank: np.ndarray) -> list[Group]:
    """A balanced bucket cut into groups of one record per value: each value's real records spread evenly over the
    groups in the grouping order, its counterfeits in the groups left. A group lists its members in the grouping
    order (on a tie in rank, values in text order, each value's records as the bucket holds them)."""
    c = max(len(rows) + fakes.get(v, 0) for v, rows in bucket.items())
    fake_slots: list[list[Hashable]] = [[] for _ in range(c)]
    placed, slots = [], []
    for v in sorted(bucket, key=str):
        rows = np.asarray(bucket[v], dtype=np.int64)
        rows = rows[np.argsort(rank[rows], kind="stable")]
        where = np.floor((np.arange(rows.size) + 0.5) * c / max(rows.size, 1)).astype(np.int64)
        placed.append(rows)
        slots.append(where)
        empty = np.ones(c, dtype=bool)
        empty[where] = False
        for g in np.flatnonzero(empty).tolist():
            fake_slots[g].append(v)
    rows, slot = np.concatenate(placed), np.concatenate(slots)
    order = np.lexsort((np.arange(rows.size), rank[rows], slot))
    bounds = np.searchsorted(slot[order], np.arange(c + 1)).tolist()
    flat = rows[order].tolist()
    return [Group(tuple(flat[a:b]), tuple(fake)) for a, b, fake in zip(bounds[:-1], bounds[1:], fake_slots)]
