"""Attribute disclosure risk (SPEC section 6): the test vectors of spec/attribute-disclosure.md section 14."""

from __future__ import annotations

import numpy as np
import pytest

from verifier.attacks.disclosure import (
    chi_square,
    eta_qi,
    estimate_distribution,
    expected_squared_error,
    group_risk,
    inverse_frobenius_sq,
    keep_matrix,
    keep_matrix_inverse,
    kl_divergence,
    kron_matvec,
    permutation_risk,
    posterior,
    released_group_risk,
    reconstruction_probability,
    rho_s,
    rr_risk,
    uncertainty_coefficient,
    utility_cost,
)
from verifier.core.match_sets import MatchSets
from verifier.errors import InvalidInputError

# T1b-hyp: rows Male, Female; columns Cancer, Flu, Other (spec section 9)
T1B = np.array([[8, 40, 12], [12, 20, 8]]) / 100
# T3D: [G][A][S], N = 60 (spec section 14)
T3D = np.array([[[5, 3, 2], [4, 9, 1], [1, 2, 7]], [[6, 1, 3], [2, 2, 6], [4, 1, 1]]]) / 60


def test_keep_matrix_and_inverse():
    np.testing.assert_allclose(keep_matrix(3, 0.7), [[.7, .15, .15], [.15, .7, .15], [.15, .15, .7]])
    inv = keep_matrix_inverse(3, 0.7)
    np.testing.assert_allclose(np.diag(inv), 17 / 11)
    assert inv[0, 1] == pytest.approx(-3 / 11)
    np.testing.assert_allclose(inv @ keep_matrix(3, 0.7), np.eye(3), atol=1e-12)
    for (d, p), want in zip([(2, .8), (3, .7), (4, .4), (3, .9)], [3.7778, 7.6116, 76.0000, 3.7682]):
        assert inverse_frobenius_sq(d, p) == pytest.approx(want, abs=5e-5)
        assert np.sum(keep_matrix_inverse(d, p) ** 2) == pytest.approx(inverse_frobenius_sq(d, p))
    with pytest.raises(InvalidInputError):
        keep_matrix(3, 0.2)  # below 1/d
    with pytest.raises(InvalidInputError, match="singular"):
        keep_matrix_inverse(2, 0.5)


def test_kron_matvec_equals_the_dense_kronecker_product():
    a, b = keep_matrix(2, .8), keep_matrix(3, .7)
    x = np.arange(1, 7) / 21
    got = kron_matvec([a, b], x.reshape(2, 3)).ravel()
    np.testing.assert_allclose(got, [0.0976, 0.1238, 0.1500, 0.1833, 0.2095, 0.2357], atol=5e-5)
    np.testing.assert_allclose(got, np.kron(a, b) @ x)
    rng = np.random.default_rng(0)
    mats = [rng.random((d, d)) for d in (2, 3, 4)]
    x3 = rng.random((2, 3, 4))
    np.testing.assert_allclose(kron_matvec(mats, x3).ravel(), np.kron(np.kron(mats[0], mats[1]), mats[2]) @ x3.ravel())


def test_posterior_and_reconstruction():
    np.testing.assert_allclose(posterior(keep_matrix(2, .8), np.array([.6, .4])), [[.8571, .1429], [.2727, .7273]], atol=5e-5)
    np.testing.assert_allclose(reconstruction_probability(keep_matrix(3, .7), np.array([.2, .5, .3])),
                               [0.4018, 0.6555, 0.5085], atol=5e-5)
    # two-category RR-S: c = (.4, .6), p_s = .8 -> risk for u = 1 is 0.6 * 0.7403
    assert rr_risk(np.array([[.4, .6]]), [1.0], .8)[0, 1] == pytest.approx(0.4442, abs=5e-5)


T1B_TABLE = {
    "none": ((1.0,), 1.0, [[.1333, .6667, .2000], [.3000, .5000, .2000]]),
    "RR-S .7": ((1.0,), .7, [[.0413, .5047, .0812], [.1526, .3277, .0804]]),
    "RR-QI .8": ((.8,), 1.0, [[.0987, .4935, .1481], [.1831, .3052, .1221]]),
    "RR-Both .8/.7": ((.8,), .7, [[.0306, .3736, .0601], [.0931, .2000, .0491]]),
    "RR-S min": ((1.0,), 1 / 3, [[.0178, .4444, .0400], [.0900, .2500, .0400]]),
    "RR-QI min": ((.5,), 1.0, [[.0800, .4000, .1200], [.1200, .2000, .0800]]),
    "RR-Both min": ((.5,), 1 / 3, [[.0107, .2667, .0240], [.0360, .1000, .0160]]),
}


@pytest.mark.parametrize("name", T1B_TABLE)
def test_t1b_hyp_risks(name):
    p_qi, p_s, want = T1B_TABLE[name]
    np.testing.assert_allclose(rr_risk(T1B, p_qi, p_s), want, atol=5e-5)


def test_t1b_hyp_factors_and_utility():
    np.testing.assert_allclose(eta_qi(T1B.sum(axis=1), [.8]), [.7403, .6104], atol=5e-5)
    np.testing.assert_allclose(rho_s(T1B, .7), [[.3099, .7571, .4058], [.5085, .6555, .4018]], atol=5e-5)
    lam = kron_matvec([keep_matrix(2, .8), keep_matrix(3, .7)], T1B)
    np.testing.assert_allclose(lam.ravel(), [.1324, .2820, .1456, .1276, .1980, .1144], atol=5e-5)
    assert expected_squared_error(T1B, [.8, .7], 100) == pytest.approx(0.045509, abs=5e-7)
    assert utility_cost((2, 3), (.8, .7)) == pytest.approx(4.7925, abs=5e-5)
    # the paper's own number: any table with pi_FC = 0.12 gives RR-QI risk 0.12 at p_G = 1/2
    assert rr_risk(T1B, [.5], 1.0)[1, 0] == pytest.approx(0.12)


def test_t3d_risks():
    risk = rr_risk(T3D, [.8, .7], .75)
    np.testing.assert_allclose(eta_qi(T3D.sum(axis=2), [.8, .7]),
                               [[.3515, .4322, .3686], [.3784, .3623, .2691]], atol=5e-5)
    np.testing.assert_allclose(risk, [[[.1229, .0600, .0328], [.0697, .2163, .0075], [.0114, .0348, .2070]],
                                      [[.1714, .0117, .0652], [.0340, .0340, .1630], [.1405, .0191, .0191]]], atol=5e-5)
    assert rr_risk(T3D, [1, 1], 1).max() == pytest.approx(.7)
    assert rr_risk(T3D, [.8, .7], 1).max() == pytest.approx(.2778, abs=5e-5)
    assert rr_risk(T3D, [1, 1], .75).max() == pytest.approx(.5615, abs=5e-5)
    assert risk.max() == pytest.approx(.2163, abs=5e-5)
    assert expected_squared_error(T3D, [.8, .7, .75], 60) == pytest.approx(0.161564, abs=5e-7)


def test_property_1_minima_hold_for_every_p():
    rng = np.random.default_rng(3)
    c = T1B / T1B.sum(axis=1, keepdims=True)
    for _ in range(50):
        pg, ps = rng.uniform(.5, 1), rng.uniform(1 / 3, 1)
        assert np.all(rr_risk(T1B, [1.0], ps) >= c ** 2 - 1e-12)
        assert np.all(rr_risk(T1B, [pg], 1.0) >= T1B - 1e-12)
        assert np.all(rr_risk(T1B, [pg], ps) >= T1B * c - 1e-12)


def test_monte_carlo_attacker_agrees_with_the_closed_form():
    """Simulate paper 000's attacker (Eq. 3: he samples from the posterior) on randomized data.

    The event: a record drawn from r's true QI-group has S = u, and the attacker reconstructs
    both its QI and its S correctly (spec section 7).
    """
    rng = np.random.default_rng(2026)
    pg, ps = .8, .7
    PG, PS = keep_matrix(2, pg), keep_matrix(3, ps)
    pi_qi = T1B.sum(axis=1)
    post_qi = posterior(PG, pi_qi)  # rows: observed QI
    draws = 200_000
    for a in range(2):
        c = T1B[a] / pi_qi[a]
        post_s = posterior(PS, c)  # the within-group prior
        s = rng.choice(3, size=draws, p=c)  # a record of group a
        qi_obs = np.where(rng.random(draws) < pg, a, 1 - a)
        qi_guess = (rng.random(draws)[:, None] > np.cumsum(post_qi[qi_obs], axis=1)).sum(axis=1)
        s_obs = _randomize(rng, s, PS)
        s_guess = (rng.random(draws)[:, None] > np.cumsum(post_s[s_obs], axis=1)).sum(axis=1)
        closed = rr_risk(T1B, [pg], ps)[a]
        for u in range(3):
            hit = np.mean((s == u) & (qi_guess == a) & (s_guess == u))
            se = np.sqrt(closed[u] * (1 - closed[u]) / draws)
            assert abs(hit - closed[u]) < 4 * se, (a, u, hit, closed[u])


def _randomize(rng, values, P):
    cum = np.cumsum(P, axis=0)  # column v: distribution of the randomized value given v
    return (rng.random(values.size)[:, None] > cum[:, values].T).sum(axis=1)


def test_estimation_is_unbiased_on_average():
    rng = np.random.default_rng(5)
    ps = [.8, .7]
    P = [keep_matrix(2, .8), keep_matrix(3, .7)]
    lam = kron_matvec(P, T1B).ravel()
    est = np.mean([estimate_distribution((rng.multinomial(5000, lam) / 5000).reshape(2, 3), ps, clip=False)
                   for _ in range(400)], axis=0)
    np.testing.assert_allclose(est, T1B, atol=0.005)


def test_distances_and_uncertainty():
    p, q = np.array([.2, .5, .3]), np.array([.25, .45, .3])
    assert kl_divergence(p, q) == pytest.approx(0.0081, abs=5e-5)
    assert chi_square(p, q) == pytest.approx(0.0156, abs=5e-5)
    assert uncertainty_coefficient(np.array([[20, 10, 5], [10, 20, 10], [5, 10, 20]])) == pytest.approx(0.1006, abs=5e-5)
    assert uncertainty_coefficient(T1B) == pytest.approx(0.0230, abs=5e-5)
    assert uncertainty_coefficient(T1B.T) == pytest.approx(0.0325, abs=5e-5)


def test_group_risk():
    risk = group_risk(np.array([0, 0, 0, 0, 1, 1, 1]), np.array(["flu", "flu", "cancer", "hiv", "flu", "cancer", "hiv"]))
    np.testing.assert_allclose(risk, [.5, .5, .25, .25, 1 / 3, 1 / 3, 1 / 3])
    assert risk.max() <= 1 / 2 and not risk.max() <= 1 / 3  # 2-diverse, not 3-diverse


def test_permutation_risk_categorical_and_numeric():
    sets = MatchSets.each(np.array([0, 2, 3]), np.array([0, 1, 2]))
    risk, n = permutation_risk(sets, np.array([1.0, 2.0]), np.array([1.0, 3.0, 2.0]))
    assert risk.tolist() == [0.5, 1.0] and n.tolist() == [2, 1]
    risk, _ = permutation_risk(sets, np.array([1.0, 2.0]), np.array([1.04, 3.0, 2.5]), tolerance=0.1)
    assert risk.tolist() == [0.5, 0.0]


def _plain_risk(offsets, matches, mine, theirs, tolerance):
    """The plain share: every record's match set walked candidate by candidate."""
    risk, counts = [], []
    for r in range(offsets.size - 1):
        found = matches[offsets[r]:offsets[r + 1]]
        hit = [abs(theirs[i] - mine[r]) <= tolerance if tolerance is not None else theirs[i] == mine[r]
               for i in found]
        risk.append(sum(hit) / found.size if found.size else 0.0)
        counts.append(found.size)
    return np.array(risk, dtype=float), np.array(counts, dtype=np.int64)


def _listed_group_risk(gx, gy, mine, theirs, tolerance):
    """The reference: every released record of her group listed as her match set, then the plain share."""
    members = [np.flatnonzero(gy == g) for g in gx]
    offsets = np.concatenate(([0], np.cumsum([m.size for m in members])))
    matches = np.concatenate(members) if members else np.empty(0, np.int64)
    return _plain_risk(offsets, matches.astype(np.int64), mine, theirs, tolerance)


@pytest.mark.parametrize("seed", range(30))
def test_permutation_risk_of_merged_sets_equals_the_plain_share(seed):
    """Match sets kept once per distinct query (as a tied table's search gives them) give every record the
    plain walk's risk and candidate count, bit for bit: tied and continuous values, empty sets, -0.0 and 0.0,
    and values at exactly mine +- tolerance."""
    rng = np.random.default_rng(seed)
    n_y, distinct, n = int(rng.integers(1, 40)), int(rng.integers(1, 6)), int(rng.integers(1, 50))
    sets = [np.sort(rng.choice(n_y, size=int(rng.integers(0 if seed % 5 == 0 else 1, n_y + 1)), replace=False))
            for _ in range(distinct)]
    rows = rng.integers(0, distinct, size=n)
    offsets = np.concatenate(([0], np.cumsum([s.size for s in sets]))).astype(np.int64)
    merged = MatchSets(rows.astype(np.int64), offsets, np.concatenate(sets).astype(np.int64))
    listed_offsets, listed = merged.listed()
    assert all(np.array_equal(listed[listed_offsets[q]:listed_offsets[q + 1]], sets[rows[q]]) for q in range(n))
    tied = seed % 2 == 0
    theirs = rng.integers(-2, 3, n_y).astype(float) if tied else rng.normal(size=n_y)
    mine = rng.integers(-2, 3, n).astype(float) if tied else rng.choice(theirs, n) + rng.choice([0.0, 0.5, -0.5], n)
    mine[mine == 0] = -0.0
    for tolerance in (None, 0.5, 1.0):
        got = permutation_risk(merged, mine, theirs, tolerance=tolerance)
        want = _plain_risk(listed_offsets, listed, mine, theirs, tolerance)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    wanted = rng.integers(0, n_y, n)
    assert merged.contains(wanted).tolist() == [bool(np.isin(wanted[q], sets[rows[q]])) for q in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_released_group_risk_equals_the_listed_match_sets(seed):
    """Counting per group gives the risks and counts of listing every candidate, bit for bit: tied and
    continuous sensitive values, groups absent from the release, and values at exactly mine +- tolerance."""
    rng = np.random.default_rng(seed)
    n, m, groups = int(rng.integers(1, 60)), int(rng.integers(1, 60)), int(rng.integers(1, 8))
    gx, gy = rng.integers(0, groups, n), rng.integers(0, groups, m)
    if seed % 2:
        mine, theirs = rng.integers(0, 4, n).astype(float), rng.integers(0, 4, m).astype(float)
        tolerances = [None, 0.0, 1.0]
    else:
        mine = np.round(rng.normal(size=n), 1)
        theirs = np.concatenate([np.round(rng.normal(size=m - m // 3), 1), mine[rng.integers(0, n, m // 3)]])
        theirs[: m // 4] = mine[rng.integers(0, n, m // 4)] + 0.3  # on the edge of tolerance 0.3, up to rounding
        tolerances = [None, 0.3, 0.1 + 0.2, 2.5]
    for tolerance in tolerances:
        risk, counts = released_group_risk(gx, gy, mine, theirs, tolerance=tolerance)
        want_risk, want_counts = _listed_group_risk(gx, gy, mine, theirs, tolerance)
        assert counts.tolist() == want_counts.tolist()
        assert risk.tolist() == want_risk.tolist()


def test_assessment_risk_of_an_unchanged_release_is_the_baseline():
    """Released unchanged, the group-based risk is c[a, u] (spec section 6); numeric QIs give the
    same through the permutation-based mode, whose match sets are then the identical records."""
    from verifier.attacks.assessment import attribute_disclosure
    from verifier.data.schema import Schema

    rows = [(g, d) for (g, d), n in np.ndenumerate(np.array([[8, 40, 12], [12, 20, 8]])) for _ in range(n)]
    keys = np.array(rows, dtype=float)
    baseline = rr_risk(T1B, [1.0], 1.0)
    expected = baseline[keys[:, 0].astype(int), keys[:, 1].astype(int)]
    for kind, mode in (("nominal", "group"), ("numeric", "permutation")):
        qi = {"name": "g", "kind": kind, "role": "quasi_identifier"}
        if kind == "nominal":
            qi["categories"] = ["M", "F"]
        schema = Schema.from_dict({"attributes": [qi, {"name": "s", "kind": "nominal", "role": "sensitive",
                                                        "categories": ["C", "F", "O"]}]})
        out = attribute_disclosure(keys, keys, schema)["s"]
        assert out["mode"] == mode
        assert out["max"] == pytest.approx(expected.max()) and out["mean"] == pytest.approx(expected.mean())
    # a numeric sensitive attribute counts candidates within 5% of its range
    schema = Schema.from_dict({"attributes": [{"name": "g", "kind": "nominal", "role": "quasi_identifier",
                                               "categories": ["M", "F"]},
                                              {"name": "pay", "kind": "numeric", "role": "sensitive"}]})
    x = np.array([[0, 100.0], [0, 104.0], [0, 200.0], [1, 150.0]])
    out = attribute_disclosure(x, x, schema)["pay"]
    assert out["tolerance"] == pytest.approx(5.0)
    assert out["max"] == pytest.approx(1.0) and out["mean"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1) / 4)


def test_a_subjects_own_risk_from_the_release():
    from verifier.attacks.assessment import attribute_disclosure
    from verifier.attacks.disclosure import record_disclosure
    from verifier.data.schema import Schema

    rows = [(g, d) for (g, d), n in np.ndenumerate(np.array([[8, 40, 12], [12, 20, 8]])) for _ in range(n)]
    y = np.array(rows, dtype=float)
    schema = Schema.from_dict({"attributes": [
        {"name": "g", "kind": "nominal", "role": "quasi_identifier", "categories": ["M", "F"]},
        {"name": "s", "kind": "nominal", "role": "sensitive", "categories": ["C", "F", "O"]}]})
    # unchanged release: a female with cancer shares her value with 12 of the 20 + 12 + 8 = 40 women
    mine = record_disclosure(y, schema, np.array([1.0, 0.0]))["s"]
    assert mine == {"mode": "group", "risk": pytest.approx(0.3), "candidates": 40, "best_guess": 1.0}
    # every record's own risk is what the protector's assessment averages
    each = [record_disclosure(y, schema, r)["s"]["risk"] for r in y]
    assert np.mean(each) == pytest.approx(attribute_disclosure(y, y, schema)["s"]["mean"])
    # a randomized response release: the closed form on the distribution estimated from the release;
    # with the exact expected table as release the estimate is the truth, so it is T1b-hyp's value
    lam = kron_matvec([keep_matrix(2, .8), keep_matrix(3, .7)], T1B)
    counts = np.rint(lam * 10_000).astype(int)
    y_rr = np.array([(g, d) for (g, d), n in np.ndenumerate(counts) for _ in range(n)], dtype=float)
    rr = record_disclosure(y_rr, schema, np.array([1.0, 0.0]), keep_probabilities={"g": .8, "s": .7})["s"]
    assert rr["mode"] == "randomized_response" and rr["risk"] == pytest.approx(0.0931, abs=2e-3)


def test_a_subjects_own_risk_with_numeric_quasi_identifiers():
    from verifier.attacks.assessment import attribute_disclosure
    from verifier.attacks.disclosure import record_disclosure
    from verifier.data.schema import Schema

    rng = np.random.default_rng(8)
    x = np.column_stack([rng.normal(size=300), rng.integers(0, 3, size=300)]).astype(float)
    y = x + np.column_stack([rng.normal(scale=0.3, size=300), np.zeros(300)])
    schema = Schema.from_dict({"attributes": [
        {"name": "a", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "s", "kind": "nominal", "role": "sensitive", "categories": ["p", "q", "r"]}]})
    each = [record_disclosure(y, schema, r)["s"] for r in x]
    assert {e["mode"] for e in each} == {"permutation"}
    assert np.mean([e["risk"] for e in each]) == pytest.approx(attribute_disclosure(x, y, schema)["s"]["mean"])
