"""The disclosure models by family and the one verdict (issue 13, items 2 and 5)."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.attacks.classes import _group_risk, group_claims, read_published, subject_class
from verifier.attacks.replacement import replacement_claims, replacement_likelihood, replacement_risk
from verifier.data.schema import Attribute, Schema
from verifier.releases.verdict import disclosure_breaches, target_breaches

# ----------------------------------------------------------------------------- random attribute replacement


def _brute_likelihood(q, released_row, freq, p, k):
    """P(q is published as released_row) by enumerating every re-draw the method can make."""
    m = len(q)
    total = 0.0
    if k == 1:
        subsets = [((i,), p[i]) for i in range(m)]
    else:
        subsets = [(a, 1.0 / comb(m, k)) for a in itertools.combinations(range(m), k)]
    for chosen, weight in subsets:
        prob = weight
        for i in range(m):
            if i in chosen:
                prob *= freq[i].get(float(released_row[i]), 0.0)
            elif released_row[i] != q[i]:
                prob = 0.0
        total += prob
    return total


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(2, 4))
def test_replacement_likelihood_equals_enumeration(seed, k, m):
    """The closed form (elementary symmetric polynomials for k > 1) against every subset and draw."""
    rng = np.random.default_rng(seed)
    k = min(k, m)
    released = rng.integers(0, 3, (30, m)).astype(float)
    q = rng.integers(0, 3, m).astype(float)
    p = rng.dirichlet(np.ones(m))
    freq = [{float(v): float(np.mean(released[:, j] == v)) for v in np.unique(released[:, j])} for j in range(m)]
    fast = replacement_likelihood(q, released, p, k, freq)
    slow = [_brute_likelihood(q, row, freq, p, k) for row in released]
    assert fast == pytest.approx(slow, abs=1e-12)


def test_replacement_risk_is_the_posterior_of_her_value():
    # three released rows; q = (0, 0): row 0 is q itself, row 1 differs in attribute 1, row 2 in both
    released = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    s = np.array([5.0, 6.0, 5.0])
    f = [{0.0: 2 / 3, 1.0: 1 / 3}, {0.0: 1 / 3, 1.0: 2 / 3}]
    p = [0.25, 0.75]
    L0 = 0.25 * 2 / 3 + 0.75 * 1 / 3  # either attribute re-drawn to its old value
    L1 = 0.75 * 2 / 3  # attribute 1 re-drawn to 1
    risk = replacement_risk(np.array([0.0, 0.0]), 5.0, released, s, p, 1)
    assert risk["risk"] == pytest.approx(L0 / (L0 + L1)) and risk["candidates"] == 2
    assert risk["best_guess"] == (5.0 if L0 > L1 else 6.0)
    claims = replacement_claims(released, s, released, s, p, 1)
    assert 0 < claims["mean"] <= claims["max"] <= 1


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 4))
def test_weighing_only_the_rows_she_could_have_become_gives_every_figure(seed, k, m):
    """With the reachable index only the rows within k differing attributes of her are weighed: the candidates,
    the best guess and the named intruder's bound are those of weighing every row, the risk to 1e-12 (the same
    terms summed without the zeros), on tied tables with rows she could not have become."""
    from verifier.attacks.replacement import distinct_release, qi_groups, reachable_index

    rng = np.random.default_rng(seed)
    k = min(k, m)
    released_qi = rng.integers(0, 3, (int(rng.integers(1, 40)), m)).astype(float)
    released_s = rng.integers(0, 3, released_qi.shape[0]).astype(float)
    rows, weights, F = distinct_release(released_qi, released_s)
    groups, index = qi_groups(rows[:, :-1]), reachable_index(rows[:, :-1], k)
    p = list(rng.dirichlet(np.ones(m)))
    for _ in range(6):
        q, s = rng.integers(0, 4, m).astype(float), float(rng.integers(0, 3))
        every = replacement_risk(q, s, rows[:, :-1], rows[:, -1], p, k, F=F, weights=weights, groups=groups)
        some = replacement_risk(q, s, rows[:, :-1], rows[:, -1], p, k, F=F, weights=weights, groups=groups,
                                index=index)
        assert some["risk"] == pytest.approx(every["risk"], rel=1e-12, abs=1e-300)
        assert (some["candidates"], some["best_guess"], some["match_bound"]) == (
            every["candidates"], every["best_guess"], every["match_bound"])


# ----------------------------------------------------------------------------- generalized releases


SCHEMA = Schema((Attribute("age", "numeric", "quasi_identifier"),
                 Attribute("zip", "nominal", "quasi_identifier", ("a", "b", "c")),
                 Attribute("disease", "nominal", "sensitive", ("cancer", "flu", "hiv"))))


def _published(age, zip_, disease):
    return read_published(SCHEMA, ["age", "zip", "disease"], [age, zip_, disease])


def test_group_risk_vector_of_the_spec():
    """spec/attribute-disclosure.md section 12: groups [0,0,0,0,1,1,1], risks [.5,.5,.25,.25,1/3,1/3,1/3]."""
    published = _published(["[20,30]"] * 4 + ["[31,40)"] * 3, ["{a,b}"] * 4 + ["*"] * 3,
                           ["flu", "flu", "cancer", "hiv", "flu", "cancer", "hiv"])
    claims = group_claims(published)
    assert claims["k"] == 3 and claims["classes"] == 2
    risk = claims["attribute_disclosure"]["disease"]
    assert risk["max"] == 0.5 and risk["mean"] == pytest.approx((0.5 + 0.5 + 0.25 + 0.25 + 1.0) / 7)
    assert risk["distinct_l"] == 3
    her = subject_class(published, np.array([35.0, 2.0, 2.0]))  # age 35, zip c, hiv: only the second class
    assert her["class_size"] == 3 and her["rows"] == [5, 6, 7]
    assert her["attribute_disclosure"]["disease"]["risk"] == pytest.approx(1 / 3)


def test_class_labels_number_the_classes_as_they_first_appear():
    """Rows with the same published quasi-identifiers (spaces around a cell aside) share a class; classes are
    numbered in the order their first row comes, as a dictionary filled row by row numbers them."""
    rng = np.random.default_rng(5)
    for trial in range(40):
        n = int(rng.integers(1, 300))
        ages = rng.choice(["[20,29]", " [20,29]", "[30,39]", "25", "*"], n).tolist()
        zips = rng.choice(["a", "{a,b}", "*", "c "], n).tolist()
        published = _published(ages, zips, rng.choice(["flu", "hiv"], n).tolist())
        index: dict[tuple, int] = {}
        plain = [index.setdefault((a.strip(), z.strip()), len(index)) for a, z in zip(ages, zips)]
        assert published.class_labels().tolist() == plain, trial


def test_the_group_risks_of_values_published_as_they_are_are_the_loop_s_figures():
    """A sensitive column published as it is (every cell one value, SD's case) has its group risks counted with
    numpy: the same floats as the loop over classes and rows (_group_risk), on random classes with ties."""
    rng = np.random.default_rng(13)
    for trial in range(60):
        n = int(rng.integers(1, 400))
        ages = [f"[{a},{a + 9}]" for a in rng.integers(0, int(rng.integers(1, 30)), n) * 10]
        zips = rng.choice(["a", "{a,b}", "*", "c"], n).tolist()
        disease = rng.choice(["cancer", "flu", "hiv"][: int(rng.integers(1, 4))], n).tolist()
        published = _published(ages, zips, disease)
        labels = published.class_labels()
        sizes = np.bincount(labels)
        members = np.split(np.argsort(labels, kind="stable"), np.cumsum(sizes)[:-1])
        top, own, distinct, certain = _group_risk(published.cells["disease"], members, np.bincount(labels))
        risk = group_claims(published)["attribute_disclosure"]["disease"]
        assert (risk["max"], risk["mean"], risk["distinct_l"], risk["certain_share"]) == (
            top, own / n, distinct, certain / n), trial


def test_a_masked_value_counts_one_share_per_leaf():
    published = _published(["[20,30]"] * 4, ["a"] * 4, ["flu", "flu", "{cancer,hiv}", "*"])
    risk = group_claims(published)["attribute_disclosure"]["disease"]
    # flu: 2 + 1/3 (from *) of 4 rows
    assert risk["max"] == pytest.approx((2 + 1 / 3) / 4)
    her = subject_class(published, np.array([25.0, 0.0, 0.0]))  # cancer
    assert her["attribute_disclosure"]["disease"]["risk"] == pytest.approx((0.5 + 1 / 3) / 4)
    assert her["attribute_disclosure"]["disease"]["best_guess"] == "flu"


def test_her_class_spans_overlapping_generalizations():
    published = _published(["25", "[20,30]", "[26,40]", "[41,50]"], ["a", "{a,b}", "a", "a"],
                           ["flu", "hiv", "flu", "cancer"])
    her = subject_class(published, np.array([25.0, 0.0, 1.0]))
    # two rows consistent with her, each its own class: among them her value is half; in the worst, certain
    assert her["rows"] == [1, 2] and her["attribute_disclosure"]["disease"]["candidate_set"]["risk"] == 0.5
    assert her["classes"] == 2 and her["attribute_disclosure"]["disease"]["risk"] == 1.0


def test_a_cell_that_is_no_interval_names_column_and_row():
    from verifier.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as info:
        _published(["[20,30]", "[2x,30]"], ["a", "a"], ["flu", "flu"])
    assert info.value.reason == "CELL_INVALID" and "column 'age', row 2" in info.value.message
    with pytest.raises(InvalidInputError) as info:
        _published(["20", "30"], ["a", "{a,z}"], ["flu", "flu"])
    assert info.value.reason == "CATEGORY_UNKNOWN" and "'z'" in info.value.message


# ----------------------------------------------------------------------------- one verdict


CLAIMS = {"attribute_disclosure": {"disease": {"mode": "randomized_response", "max": 0.4, "target": 0.5, "l": 2}}}


@pytest.mark.parametrize("risk, breaches", [(0.3, 0), (0.45, 1), (0.55, 2), (1.0, 2)])
def test_a_risk_above_the_claim_or_the_target_is_a_breach(risk, breaches):
    assert len(disclosure_breaches({"disease": {"risk": risk}}, CLAIMS)) == breaches


def test_the_audit_checks_the_data_set_against_the_target_only():
    assert disclosure_breaches({"disease": {"max": 0.45}}, CLAIMS, subject=False) == []
    assert len(disclosure_breaches({"disease": {"max": 0.55}}, CLAIMS, subject=False)) == 1


def test_her_figures_are_held_to_the_protectors_targets():
    targets = {"max_attribute_risk": {"disease": 0.5}, "min_distance": 3, "min_k": 5, "max_linked_share": 0.01}
    found = target_breaches(targets, risks={"disease": {"risk": 1.0}}, distance=1, group=2, linked=True)
    assert found == [
        "The publisher promised no disease guessed with probability above 0.5; yours is 1.",
        "The publisher promised every record at least 3 ranks from its closest match; yours is 1.",
        "The publisher promised groups of at least k = 5 records; 2 released records are consistent with your values.",
        "The publisher promised at most 1% of records linked with confidence; yours is one of them."]
    assert target_breaches(targets, risks={"disease": {"risk": 0.5}}, distance=3, group=5, linked=False) == []


def test_a_bad_published_cell_is_named_at_its_first_row():
    """Cells are read once per distinct text; the error still names the first row holding a bad one."""
    from verifier.errors import InvalidInputError

    ages = ["25", "[20,30]", "25", "[20,30]", "[40,x]", "[40,x]", "[50,y]"]
    with pytest.raises(InvalidInputError, match="row 5") as info:
        _published(ages, ["a"] * 7, ["flu", "mumps", "flu", "flu", "flu", "flu", "flu"])
    assert info.value.reason == "CELL_INVALID"
    with pytest.raises(InvalidInputError, match="row 2") as info:
        _published(["25"] * 7, ["a"] * 7, ["flu", "mumps", "flu", "flu", "flu", "flu", "flu"])
    assert info.value.reason == "CATEGORY_UNKNOWN"
