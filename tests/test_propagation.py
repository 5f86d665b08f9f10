"""Propagation across people (issue 50, item 2): the values an intruder who knows everyone's quasi-identifiers
leaves each person, held to a brute-force enumeration of every assignment of values to people."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from verifier.attacks.composition import joint_candidates
from verifier.attacks.propagation import Contradiction, PublishedClass, propagate, values_left


def brute_force(n: int, d: int, classes: list[PublishedClass]) -> list[int] | None:
    """Each person's values over every assignment of ``d`` values to ``n`` people that gives each class its
    counts (at most its counts where some members are unnamed), as bitmasks; None when there is none."""
    every = np.array(list(itertools.product(range(d), repeat=n)), dtype=np.int8).reshape(-1, n)
    keep = np.ones(len(every), dtype=bool)
    for each in classes:
        held = every[:, list(each.members)]
        for v, count in enumerate(each.counts):
            have = (held == v).sum(axis=1)
            keep &= have == count if each.others == 0 else have <= count
    if not keep.any():
        return None
    return [int(sum(1 << int(v) for v in np.unique(every[keep, p]))) for p in range(n)]


def random_releases(rng: np.random.Generator, n: int, d: int, releases: int, overlap: bool,
                    unnamed: bool) -> tuple[np.ndarray, list[PublishedClass]]:
    """True values of ``n`` people and the classes of ``releases`` releases of them: each release holds every
    person, or (``overlap``) a random part of them, cut into classes of 2 to 4; with ``unnamed`` some members of
    some classes are people the intruder cannot name."""
    truth = rng.integers(0, d, size=n)
    if rng.random() < 0.5:  # ties: most people share one value
        truth[rng.random(n) < 0.6] = 0
    classes = []
    for _ in range(releases):
        held = rng.permutation(n)
        if overlap:
            held = held[: rng.integers(max(2, n // 2), n + 1)]
        start = 0
        while start < held.size:
            size = int(rng.integers(2, 5))
            part = held[start:start + size] if held.size - start - size >= 2 else held[start:]
            start += part.size
            counts = tuple(int((truth[part] == v).sum()) for v in range(d))
            hidden = int(rng.integers(0, 2)) if unnamed and part.size > 1 else 0
            classes.append(PublishedClass(tuple(int(p) for p in part[hidden:]), counts, others=hidden))
    return truth, classes


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("releases, overlap, unnamed", [(2, False, False), (2, True, False), (3, False, False),
                                                        (3, True, False), (2, True, True), (3, True, True)])
def test_values_left_equal_every_assignment_brute_force(seed, releases, overlap, unnamed):
    rng = np.random.default_rng([seed, releases, overlap, unnamed])
    d = 2 if seed % 2 else 3
    n = int(rng.integers(4, 17 if d == 2 else 11))
    truth, classes = random_releases(rng, n, d, releases, overlap, unnamed)
    full = [(1 << d) - 1] * n
    exact = brute_force(n, d, classes)
    left = values_left(full, classes)
    assert left.exact
    assert list(left.possible) == exact
    assert all(exact[p] >> int(truth[p]) & 1 for p in range(n))  # the truth is one assignment
    fast = propagate(full, classes)  # sound: never removes a value some assignment gives
    assert all(f & e == e for f, e in zip(fast, exact))


def test_a_classmate_pinned_elsewhere_pins_her():
    """Ann, Bob and Cy share a class of {flu, flu, HIV}; a second release puts Ann and Bob, with Dee, in a class of
    {flu, flu, cancer}, and Dee in a third release's class alone with cancer. Each alone, Cy's candidates are
    {flu, HIV}; across people, Ann and Bob are flu and Cy is HIV."""
    flu, hiv, cancer = 0, 1, 2
    classes = [PublishedClass((0, 1, 2), (2, 1, 0)), PublishedClass((0, 1, 3), (2, 0, 1)),
               PublishedClass((3, 4), (0, 0, 2))]
    full = [0b111] * 5
    left = values_left(full, classes)
    assert left.possible == (1 << flu, 1 << flu, 1 << hiv, 1 << cancer, 1 << cancer)
    assert propagate(full, classes) == list(left.possible)
    # the intersection of her own candidates leaves her two values, one chance in two
    assert joint_candidates([{"flu": 2 / 3, "HIV": 1 / 3}]) == {"flu": 2 / 3, "HIV": 1 / 3}
    assert brute_force(5, 3, classes) == list(left.possible)


def test_counts_no_assignment_meets_are_a_contradiction():
    classes = [PublishedClass((0, 1), (2, 0)), PublishedClass((1, 2), (0, 2))]
    assert brute_force(3, 2, classes) is None
    with pytest.raises(Contradiction):
        values_left([0b11] * 3, classes)
    with pytest.raises(Contradiction):
        propagate([0b11] * 3, classes)
    with pytest.raises(ValueError, match="publishes 1 values"):
        PublishedClass((0, 1), (1, 0))


def test_a_search_cut_short_never_gives_a_milder_figure():
    """With too small a budget the values proven possible are at most the true ones and the values not ruled
    out at least them: a risk read from the first is never milder."""
    rng = np.random.default_rng(7)
    _, classes = random_releases(rng, 10, 3, 3, True, False)
    exact = brute_force(10, 3, classes)
    for budget in (1, 3, 10):
        left = values_left([0b111] * 10, classes, budget=budget)
        assert all(p & e == p for p, e in zip(left.possible, exact))
        assert all(x & e == e for x, e in zip(left.not_excluded, exact))
    assert not values_left([0b111] * 10, classes, budget=1).exact


@pytest.mark.parametrize("n", [800, 1_200, 3_000])
def test_many_free_people_end_within_the_budget_and_the_stack(n):
    """Issue 59, item 6: one class of n free people and three values. The search used to spend its node budget at
    the cost of every person per node (800 people: 52 s) and to recurse once per person (1,200: RecursionError);
    its work and depth are bounded now, and cut short it stays sound: nothing is excluded that an assignment
    allows, and what it proves possible is possible."""
    counts = (n // 3, n // 3, n - 2 * (n // 3))
    left = values_left([0b111] * n, [PublishedClass(tuple(range(n)), counts)])
    assert left.not_excluded == (0b111,) * n  # every value of every person is some assignment's
    assert all(p & ~q == 0 for p, q in zip(left.possible, left.not_excluded))
    if n <= 1_200:  # one assignment found within the budget: every person's value in it is proven possible
        assert all(left.possible)
