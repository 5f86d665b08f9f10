"""Propagation across people: what an intruder who knows everyone's quasi-identifiers learns from the published
counts of every class, beyond what each person's candidates tell alone (issue 50, item 2).

The intersection attack (:func:`verifier.attacks.composition.joint_candidates`) treats each person alone: her
value is among the values of her class in every release. The maximum-knowledge intruder knows every person's
quasi-identifiers, so he knows who is in each class, and a class's published counts bind its members together:
a class of three that holds {flu, flu, HIV} has exactly one member with HIV. When two classmates are pinned to
flu by another release, the third holds HIV, though her own candidates in each release are {flu, HIV}.

The model: people ``0..n-1``, each with a *domain* (the values still possible for her, a bitmask over value
indices); published classes (:class:`PublishedClass`), each naming its members the intruder knows, the count of
every value it publishes, and how many of its members he cannot name (``others``, whose values are free). A
class with no ``others`` says its members hold exactly its counts; with ``others`` it says they hold at most its
counts.

- :func:`propagate` applies two rules to every class until nothing changes (a fixpoint): when ``c(v)`` members
  are already pinned to ``v``, no other member holds ``v``; when only ``c(v)`` members (with ``others``) can
  hold ``v``, all of them do. It only removes values no assignment allows, so it is sound; it is fast (one pass
  per changed class) but may leave values that no full assignment allows.
- :func:`values_left` is exact: it searches for full assignments (depth first, propagating after each choice)
  and keeps a value only when one assignment that satisfies every class gives it to her. A search cut short by its
  budget of work (:data:`SEARCH_BUDGET`) leaves the pairs it could not decide in ``not_excluded`` but not in ``possible``: the values proven
  possible are then fewer than the true ones, so a risk read from them is never milder than the exact one.

Both are held to a brute-force enumeration of every assignment on small tables (tests/test_propagation.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

__all__ = ["PublishedClass", "Contradiction", "ValuesLeft", "propagate", "values_left", "SEARCH_BUDGET"]

#: the most work :func:`values_left` does before it leaves the undecided values undecided, in units of one person's
#: domain read or copied at a search node or one class member counted by a rule: its time, and the memory of the
#: domains its search keeps (at most this many), are bounded whatever the number of people (issue 59, item 6: 800
#: people in one class took 52 s under a budget of nodes, each node costing them all). The search keeps its own
#: stack, so no number of people reaches Python's (1,200 free people raised RecursionError).
SEARCH_BUDGET = 8_000_000


@dataclass(frozen=True)
class PublishedClass:
    """One published class: the people in it the intruder can name, the count of each value it publishes
    (``counts[v]`` for value index ``v``) and how many of its members he cannot name."""

    members: tuple[int, ...]
    counts: tuple[int, ...]
    others: int = 0

    def __post_init__(self) -> None:
        if sum(self.counts) != len(self.members) + self.others:
            raise ValueError(f"a class of {len(self.members) + self.others} members publishes {sum(self.counts)} "
                             "values")


class Contradiction(ValueError):
    """No assignment of values to people gives every class its published counts."""


@dataclass(frozen=True)
class ValuesLeft:
    """Each person's values after the search, as bitmasks: ``possible`` were each given to her by an assignment
    that satisfies every class; ``not_excluded`` were not ruled out (equal to ``possible`` unless the budget ran
    out)."""

    possible: tuple[int, ...]
    not_excluded: tuple[int, ...]

    @property
    def exact(self) -> bool:
        return self.possible == self.not_excluded


def _memberships(n: int, classes: Sequence[PublishedClass]) -> list[list[int]]:
    """For each person, the indices of the classes she is in."""
    out: list[list[int]] = [[] for _ in range(n)]
    for c, each in enumerate(classes):
        for person in each.members:
            out[person].append(c)
    return out


def _tighten(domains: list[int], each: PublishedClass) -> list[int]:
    """One class's rules applied from one count of its members' domains; returns the members it changed.

    Applying every rule from the same count is sound, as domains only shrink: a member pinned stays pinned and a
    value's holders only become fewer. An emptied domain is a contradiction."""
    changed = []
    for v, count in enumerate(each.counts):
        bit = 1 << v
        pinned = sum(1 for p in each.members if domains[p] == bit)
        may = sum(1 for p in each.members if domains[p] & bit)
        if pinned > count or may + each.others < count:
            raise Contradiction(f"a class publishes {count} of value {v}")
        if pinned == count and may > pinned:
            keep = ~bit
        elif count and may + each.others == count and any(domains[p] & ~bit for p in each.members
                                                          if domains[p] & bit):
            keep = None
        else:
            continue
        for p in each.members:
            if domains[p] & bit and domains[p] != bit:
                domains[p] = domains[p] & keep if keep is not None else bit
                changed.append(p)
    if any(domains[p] == 0 for p in changed):
        raise Contradiction("a person is left no value")
    return changed


def _fixpoint(domains: list[int], classes: Sequence[PublishedClass], memberships: list[list[int]],
              dirty: set[int], spend: Callable[[int], None] | None = None) -> None:
    """Apply the rules of the classes in ``dirty``, and of every class a change touches, until none changes;
    ``spend`` is charged each class's members times its values."""
    while dirty:
        c = dirty.pop()
        if spend is not None:
            spend(len(classes[c].members) * len(classes[c].counts))
        for person in _tighten(domains, classes[c]):
            dirty.update(memberships[person])


def propagate(domains: Sequence[int], classes: Sequence[PublishedClass]) -> list[int]:
    """Each person's domain after both rules are applied to every class until none changes (see the module's
    text); raises :class:`Contradiction` when the counts cannot all hold."""
    out = list(domains)
    _fixpoint(out, classes, _memberships(len(out), classes), set(range(len(classes))))
    return out


class _Search:
    """Depth-first search for one assignment that satisfies every class, with propagation after each choice and
    a budget of work shared by every search of one :func:`values_left` call."""

    def __init__(self, classes: Sequence[PublishedClass], memberships: list[list[int]], budget: int):
        self.classes, self.memberships, self.left = classes, memberships, budget

    def spend(self, work: int) -> None:
        """Charge ``work`` to the budget; :class:`TimeoutError` when it runs out."""
        self.left -= work
        if self.left < 0:
            raise TimeoutError

    def solve(self, domains: list[int], touched: set[int]) -> list[int] | None:
        """An assignment (every domain one bit) from ``domains``, after propagating the classes in ``touched``;
        None when there is none; raises :class:`TimeoutError` when the budget runs out. Depth first, each choice
        followed by propagation, on a stack of its own: each frame a node's domains, the person it branches on
        and the values not tried yet."""
        stack: list[tuple[list[int], int, int]] = []
        current, dirty = domains, touched
        while True:
            self.spend(1 + len(current))  # the node's scan and copy of every domain
            try:
                _fixpoint(current, self.classes, self.memberships, dirty, self.spend)
                open_ = [p for p, d in enumerate(current) if d & (d - 1)]
                if not open_:
                    return current
                person = min(open_, key=lambda p: bin(current[p]).count("1"))
                stack.append((current, person, current[person]))
            except Contradiction:
                pass
            while stack and not stack[-1][2]:  # a node whose values were all tried: back to its parent
                stack.pop()
            if not stack:
                return None
            base, person, rest = stack[-1]
            bit = rest & -rest
            stack[-1] = (base, person, rest ^ bit)
            current = list(base)
            current[person] = bit
            dirty = set(self.memberships[person])


def values_left(domains: Sequence[int], classes: Sequence[PublishedClass],
                budget: int = SEARCH_BUDGET) -> ValuesLeft:
    """Each person's values that some assignment satisfying every class gives her (see the module's text);
    raises :class:`Contradiction` when none exists."""
    memberships = _memberships(len(domains), classes)
    search = _Search(classes, memberships, budget)
    left = propagate(domains, classes)
    possible = [0] * len(left)

    def witness(found: list[int]) -> None:
        for p, bit in enumerate(found):
            possible[p] |= bit

    try:
        first = search.solve(list(left), set())
    except TimeoutError:
        return ValuesLeft(tuple(possible), tuple(left))
    if first is None:
        raise Contradiction("no assignment gives every class its published counts")
    witness(first)
    for person in range(len(left)):
        rest = left[person] & ~possible[person]
        while rest:
            bit = rest & -rest
            rest ^= bit
            if possible[person] & bit:
                continue
            trial = list(left)
            trial[person] = bit
            try:
                found = search.solve(trial, set(memberships[person]))
            except TimeoutError:
                return ValuesLeft(tuple(possible), tuple(left))
            if found is None:  # proven impossible: removing it can tighten the others
                left[person] &= ~bit
                _fixpoint(left, classes, memberships, set(memberships[person]))
            else:
                witness(found)
    return ValuesLeft(tuple(possible), tuple(left))
