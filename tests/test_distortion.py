"""A randomized attribute's distortion: a keep probability or a published transition matrix (issue 61, item 3).

sdcMicro's PRAM publishes a whole transition matrix. Every figure of the randomized-response model reads either
through one distortion matrix: a transition matrix equal to a keep matrix gives the keep probability's figures,
the Gauss-Jordan inverse is numpy's, and the named intruder's bound under a matrix is never below his exact
posterior, found by enumerating every assignment of sensitive values on tiny tables with ties.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from publisher.exact_oracle import permanent
from verifier.attacks.disclosure import estimate_distribution, keep_matrix, rr_risk
from verifier.attacks.distortion import (Transition, distortion_inverse, matrix_inverse, transition_value_bounds)
from verifier.attacks.models import rr_joint_record, rr_record, rr_records, rr_value_bound
from verifier.attacks.sampling_error import rr_sampling_error
from verifier.data.schema import Schema
from verifier.errors import InvalidInputError


def _stochastic(rng, d: int, diagonal: float = 0.0) -> np.ndarray:
    """A random row-stochastic d x d matrix (rows: true values), its diagonal raised by ``diagonal``."""
    m = rng.random((d, d)) + diagonal * np.eye(d)
    return m / m.sum(axis=1, keepdims=True)


def _rows(keep: np.ndarray) -> list[list[float]]:
    """A column-stochastic keep matrix as a transition matrix's rows (true value first)."""
    return keep.T.tolist()


@pytest.mark.parametrize("seed", range(5))
def test_the_gauss_jordan_inverse_is_numpys(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 9))
    m = _stochastic(rng, d, diagonal=float(rng.random()))
    np.testing.assert_allclose(matrix_inverse(m), np.linalg.inv(m), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(matrix_inverse(m) @ m, np.eye(d), atol=1e-9)
    assert matrix_inverse(np.full((3, 3), 1 / 3)) is None  # every row alike: nothing can be estimated
    with pytest.raises(InvalidInputError):
        distortion_inverse(3, Transition.of([[1 / 3] * 3] * 3))


def test_a_transition_matrix_is_refused_unless_its_rows_are_probabilities_summing_to_one():
    for bad in ([], [[1.0, 0.0]], [[0.5, 0.6], [0.5, 0.5]], [[1.2, -0.2], [0, 1]], [[True, 0], [0, 1]], "x"):
        with pytest.raises(InvalidInputError):
            Transition.of(bad)
    assert Transition.of([[1, 0], [0, 1]]).identity() and not Transition.of([[0.9, 0.1], [0, 1]]).identity()


def _schema(dims: list[int]) -> Schema:
    names = [f"q{i}" for i in range(len(dims) - 1)] + ["s"]
    return Schema.from_dict({"attributes": [
        {"name": n, "kind": "nominal", "role": "sensitive" if n == "s" else "quasi_identifier",
         "categories": [f"c{j}" for j in range(d)]} for n, d in zip(names, dims)]})


@pytest.mark.parametrize("seed", range(6))
def test_a_keep_matrix_given_as_a_transition_matrix_gives_the_keep_probabilitys_figures(seed):
    """On random tables with many ties: Result 1, Eq. 2, the sampling error, her record, every record at once and
    the joint check, each to 1e-12."""
    rng = np.random.default_rng(seed)
    dims = [int(d) for d in rng.integers(2, 5, size=int(rng.integers(1, 4)))] + [int(rng.integers(2, 5))]
    schema = _schema(dims)
    n = int(rng.integers(20, 200))
    y = np.column_stack([rng.integers(0, d, n) for d in dims]).astype(np.float64)
    ps = [float(rng.uniform(1 / d + 0.05, 1.0)) for d in dims]
    keep = {a.name: p for a, p in zip(schema.attributes, ps)}
    matrices = {a.name: _rows(keep_matrix(d, p)) for a, d, p in zip(schema.attributes, dims, ps)}
    lam = np.bincount(np.ravel_multi_index(y.astype(np.int64).T, dims), minlength=int(np.prod(dims))).reshape(dims) / n
    as_matrices = [Transition.of(matrices[a.name]) for a in schema.attributes]
    np.testing.assert_allclose(estimate_distribution(lam, as_matrices), estimate_distribution(lam, ps), atol=1e-12)
    np.testing.assert_allclose(rr_risk(lam, as_matrices[:-1], as_matrices[-1]), rr_risk(lam, ps[:-1], ps[-1]),
                               atol=1e-12)
    cell = tuple(int(v) for v in y[0])
    assert rr_sampling_error(lam, as_matrices, cell, n) == pytest.approx(rr_sampling_error(lam, ps, cell, n),
                                                                          abs=1e-12)
    shares = np.bincount(y[:, -1].astype(np.int64), minlength=dims[-1]) / n
    for record in y[:5]:
        a = rr_record(y, schema, matrices, record, shares)["s"]
        b = rr_record(y, schema, keep, record, shares)["s"]
        assert a.keys() == b.keys()
        for key in a:
            assert a[key] == pytest.approx(b[key], abs=1e-12), key
    a, b = rr_records(y, schema, matrices, y, shares=shares)["s"], rr_records(y, schema, keep, y, shares=shares)["s"]
    for key in ("risk", "paper_risk", "sampling_error"):
        np.testing.assert_allclose(a[key], b[key], atol=1e-12)
    twice = rr_joint_record([y, y[::-1]], schema, [matrices, keep], y[0], shares)["s"]
    plain = rr_joint_record([y, y[::-1]], schema, [keep, keep], y[0], shares)["s"]
    for key in ("risk", "paper_risk", "value_bound"):
        assert twice[key] == pytest.approx(plain[key], abs=1e-12), key


@pytest.mark.parametrize("seed", range(4))
def test_the_value_bound_of_a_keep_matrix_is_bayes_rule_on_her_own_value(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    shares = rng.dirichlet(np.ones(d))
    p = float(rng.uniform(1 / d, 1.0))
    np.testing.assert_allclose(transition_value_bounds(shares, keep_matrix(d, p)), rr_value_bound(shares, p, d),
                               rtol=1e-14)


def _exact_posteriors(true_qi: np.ndarray, shown: np.ndarray, qi_rows: list[np.ndarray], s_rows: np.ndarray,
                      prior: np.ndarray) -> np.ndarray:
    """The named intruder's posterior of each person's value: every assignment of sensitive values weighed by its
    prior and the permanent of each person's likelihood of each (shuffled) published row (SPEC section 16)."""
    n, d = len(true_qi), len(prior)
    out = np.zeros((n, d))
    for values in itertools.product(range(d), repeat=n):
        like = np.ones((n, n))
        for k, rows in enumerate(qi_rows):
            like *= rows[true_qi[:, k][:, None], shown[:, k][None, :]]
        like *= s_rows[np.array(values)[:, None], shown[:, -1][None, :]]
        weight = float(np.prod(prior[list(values)])) * permanent(like)
        out[np.arange(n), values] += weight
    return out / out.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed, tied", [(s, t) for s in range(4) for t in (True, False)])
def test_no_subject_is_rated_below_the_exact_posterior_under_a_transition_matrix(seed, tied):
    """Tiny tables, a random transition matrix on the sensitive attribute (and on a quasi-identifier in half of
    them): her risk, with the table's shares as the signed marginal, is never below the exact posterior of her
    true value."""
    rng = np.random.default_rng(seed)
    n, d, dq = 6, 3, 3
    true_qi = rng.integers(0, 2 if tied else dq, size=(n, 1))
    true_s = rng.integers(0, d, n)
    s_rows = _stochastic(rng, d, diagonal=1.5)
    q_rows = _stochastic(rng, dq, diagonal=2.0) if seed % 2 else np.eye(dq)
    shown_q = np.array([rng.choice(dq, p=q_rows[v]) for v in true_qi[:, 0]])
    shown_s = np.array([rng.choice(d, p=s_rows[v]) for v in true_s])
    order = rng.permutation(n)
    shown = np.column_stack([shown_q, shown_s])[order]
    prior = np.bincount(true_s, minlength=d) / n
    exact = _exact_posteriors(true_qi, shown, [q_rows], s_rows, prior)
    schema = _schema([dq, d])
    keep = {"q0": q_rows.tolist() if seed % 2 else 1.0, "s": s_rows.tolist()}
    y = shown.astype(np.float64)
    for i in range(n):
        record = np.array([true_qi[i, 0], true_s[i]], dtype=np.float64)
        risk = rr_record(y, schema, keep, record, prior)["s"]["risk"]
        assert risk >= exact[i, true_s[i]] - 1e-12, (i, risk, exact[i, true_s[i]])
