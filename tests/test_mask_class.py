"""MaskClass rerun (issue 58; verifier/attacks/mask_class.py): a class's posterior under its masks, held to the plain
sum over every assignment of values to its people, rerun through the publisher's row-by-row MaskClass.

The plain version gives each of the g people every joint value with a positive share (|V|^g assignments), weighs an
assignment by the product of its values' signed counts, keeps it where MaskClass on its rows publishes the class's
tuples, and reads the posterior count of each value; the fast one sums over count vectors in integers. They agree
exactly (as fractions), on random classes of one and two sensitive attributes over a tree and a flat root, with ties
and at several alphas; past the enumeration's limit, and for cells no MaskClass run publishes, every covering cell
counts.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from publisher.methods.multi_sensitive import Infeasible as RowInfeasible, mask_class
from verifier.attacks.hierarchy import build_hierarchy
from verifier.attacks.mask_class import class_posterior, completions, mask_counts

TREE = {"type": "categorical", "tree": {"*": [{"Genetic": ["Albinism", "Haemophilia"]},
                                               {"Respiratory": ["Asthma", "Pneumonia", "Cold"]}, "No"]}}
LEAVES = ["Albinism", "Haemophilia", "Asthma", "Pneumonia", "Cold", "No"]


def _plain(people: list[tuple[str, ...]], sens, alpha: float, marginals) -> tuple[Counter, list[dict[str, Fraction]]]:
    """The class MaskClass publishes from ``people``, and the posterior count of each value by the plain sum."""
    def published(rows):
        rows = [list(r) for r in rows]
        try:
            mask_class(rows, sens, alpha)
        except RowInfeasible:
            return None
        return Counter(tuple(r) for r in rows)

    shown = published(people)
    domains = [[v for v, n in m.items() if n > 0] for m in marginals]
    joint = list(itertools.product(*domains))
    total, counts = 0, [Counter() for _ in sens]
    for pick in itertools.product(joint, repeat=len(people)):
        if published(pick) != shown:
            continue
        weight = math.prod(marginals[i][v] for t in pick for i, v in enumerate(t))
        total += weight
        for t in pick:
            for i, v in enumerate(t):
                counts[i][v] += weight
    return shown, [{v: Fraction(n, total) for v, n in c.items()} for c in counts]


def test_the_posterior_is_the_plain_sum_over_every_assignment():
    rng = np.random.default_rng(58)
    tree, flat = build_hierarchy(TREE, LEAVES, False), build_hierarchy(None, ["a", "b", "c"], False)
    tried = Counter()
    for trial in range(60):
        two = trial % 3 == 0
        sens = [tree, flat] if two else [tree if trial % 2 else flat]
        g = int(rng.integers(2, 4 if two else 6))
        marginals = []
        for h in sens:
            leaves = list(h.leaves(h.root))
            held = rng.choice(leaves, size=int(rng.integers(2, min(4, len(leaves)) + 1)), replace=False)
            marginals.append({v: int(rng.integers(1, 6)) if v in held else 0 for v in leaves})
        domains = [[v for v, n in m.items() if n > 0] for m in marginals]
        people = [tuple(str(rng.choice(d)) for d in domains) for _ in range(g)]
        if rng.random() < 0.4:
            people = [people[0]] * (g - 1) + people[1:2]  # ties: most of the class alike
        alpha = float(rng.choice([0.34, 0.5, 0.7]))
        if any(alpha < 1 / h.leaf_count(h.root) for h in sens):
            continue
        shown, plain = _plain(people, sens, alpha, marginals)
        if shown is None:
            continue
        fast = class_posterior(shown, sens, alpha, marginals)
        assert fast.how == "exact", trial
        for i in range(len(sens)):
            got = {v: Fraction(n, fast.denominator) for v, n in fast.counts[i].items() if n}
            assert got == {v: p for v, p in plain[i].items() if p}, (trial, people, alpha)
            for v in got:
                assert fast.share(i, v, g) == float(got[v] / g)
        tried["masked" if any(t not in set(people) for t in shown) else "as it is"] += 1
    assert tried["masked"] >= 15 and tried["as it is"] >= 5, tried


def test_a_two_valued_class_fully_masked_leans_to_the_common_value():
    """Salary-class's two values at alpha 0.7: a class of 10 fully masked holds more than 7 of one value; with the
    common value three times as frequent, its posterior is 0.857, above its 3/4, the rarer one's below its 1/4."""
    h = build_hierarchy(None, ["<=50K", ">50K"], False)
    now, _ = mask_counts({("<=50K",): 8, (">50K",): 2}, [h], 0.7)
    assert set(now.values()) == {("*",)}
    post = class_posterior({("*",): 10}, [h], 0.7, [{"<=50K": 3, ">50K": 1}])
    allowed = [c for c in range(11) if max(c, 10 - c) > 7]  # counts of <=50K that MaskClass masks fully
    weights = {c: math.comb(10, c) * 3 ** c for c in allowed}
    want = Fraction(sum(w * c for c, w in weights.items()), sum(weights.values()) * 10)
    assert Fraction(post.counts[0]["<=50K"], post.denominator * 10) == want
    assert post.share(0, "<=50K", 10) == float(want) and 0.85 < post.share(0, "<=50K", 10) < 0.86
    assert post.share(0, ">50K", 10) == pytest.approx(1 - float(want))


def test_too_many_completions_and_cells_no_run_publishes_count_every_covering_cell():
    h = build_hierarchy(None, list("abcdefgh"), False)
    marginal = [{v: 1 for v in "abcdefgh"}]
    shown = {("*",): 40, ("a",): 2}
    assert completions(shown, [h], marginal) > 4_000
    post = class_posterior(shown, [h], 0.5, marginal)
    assert post.how == "covered" and post.share(0, "a", 42) == 1.0 and post.share(0, "b", 42) == 40 / 42
    # three rows of one value kept as they are at alpha 0.5: MaskClass never publishes that
    odd = class_posterior({("a",): 3}, [h], 0.5, marginal)
    assert odd.how == "covered" and odd.share(0, "a", 3) == 1.0


def test_two_leaves_weighs_as_every_completion_does():
    """The fast path (one masked cell of two values, its weights found one from the last) gives every value the
    ratio the completions give, exactly; on classes of up to 300 people, at several alphas and shares."""
    from verifier.attacks.mask_class import by_completions, two_leaves

    rng = np.random.default_rng(59)
    flat = build_hierarchy(None, ["a", "b", "c"], False)
    tree = build_hierarchy(TREE, LEAVES, False)
    tried = 0
    for trial in range(40):
        h = flat if trial % 2 else tree
        prior = {v: 0 for v in h.leaves(h.root)}
        pair = ["a", "b"] if h is flat else ["Albinism", "Haemophilia"]
        for v in pair:
            prior[v] = int(rng.integers(1, 2000))
        masked = "*" if h is flat else "Genetic"
        shown = {(masked,): int(rng.integers(1, 300))}
        for v in pair:
            if rng.random() < 0.6:
                shown[(v,)] = int(rng.integers(1, 40))
        alpha = float(rng.choice([0.5, 0.6, 0.75, 0.9]))
        fast = two_leaves(shown, [h], alpha, [prior])
        plain = by_completions(shown, [h], alpha, [prior])
        assert fast is not None
        if plain.how == "covered":
            assert fast.how == "covered"
            continue
        for v in pair:
            assert Fraction(fast.counts[0].get(v, 0), fast.denominator) == \
                Fraction(plain.counts[0].get(v, 0), plain.denominator), (trial, shown, alpha)
        tried += 1
    assert tried >= 10
