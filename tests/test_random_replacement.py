"""Random attribute replacement (paper 004; spec/methods.md section 3.4: RA-1 to RA-7)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from publisher.methods import make_method
from publisher.methods.random_replacement import (
    bias_and_variance,
    c_amplification,
    distributions,
    entropies,
    max_posterior,
    optimal_p,
    probabilistic_anonymity,
    replace,
)
from verifier.errors import InvalidInputError
from verifier.data.schema import Schema

RA3 = [("a1", "b1"), ("a1", "b2"), ("a2", "b1"), ("a2", "b1"), ("a1", "b1"), ("a3", "b2")]
RA5 = [("a1", "b1", "c1"), ("a2", "b1", "c2"), ("a1", "b2", "c2"), ("a2", "b2", "c1")]


def test_ra_1_probabilistic_anonymity():
    h = np.array([1.418484, 1.470808, 1.088900])
    np.testing.assert_allclose(optimal_p(h), [0.360628, 0.380000, 0.259372], atol=2e-6)
    assert probabilistic_anonymity(h, optimal_p(h))["Pa"] == pytest.approx(11.454609, abs=2e-5)
    uniform = probabilistic_anonymity(h, np.full(3, 1 / 3))
    assert uniform["Pa"] == pytest.approx(11.298572, abs=2e-5)
    assert uniform["guessing_confidence"] == pytest.approx(0.088507, abs=2e-6)
    assert uniform["Pa_max"] == pytest.approx(11.454609, abs=2e-5)
    assert probabilistic_anonymity(h, k=2)["Pa"] == pytest.approx(42.552575, abs=1e-4)
    assert probabilistic_anonymity(h, k=3)["Pa"] == pytest.approx(53.420369, abs=1e-4)


def _fig1(age, job, country):
    """Stand-in distributions with the Fig. 1 marginals the vectors use."""
    from publisher.methods.random_replacement import Distribution

    return [Distribution((v, "other"), np.array([f, 1 - f])) for v, f in ((age, .4), (job, .4), (country, .6))]


def test_ra_2_c_amplification():
    dists = _fig1("[30-40]", "Clerk", "USA")
    q = ("[30-40]", "Clerk", "USA")
    assert c_amplification(q, dists, np.full(3, 1 / 3)) == pytest.approx((1.5, 3.5))
    p_opt = np.array([0.360628, 0.380000, 0.259372])
    c, strict = c_amplification(q, dists, p_opt)
    assert c == pytest.approx(1.078835, abs=2e-5) and strict == pytest.approx(3.132553, abs=2e-5)


def test_ra_3_algorithm_1_with_injected_uniforms():
    dists = distributions(RA3)
    assert dists[0].values == ("a1", "a2", "a3")
    np.testing.assert_allclose(dists[0].probs, [1 / 2, 1 / 3, 1 / 6])
    h = entropies(dists)
    np.testing.assert_allclose(h, [1.011404, 0.636514], atol=2e-6)
    np.testing.assert_allclose(optimal_p(h), [0.592640, 0.407360], atol=2e-6)
    assert probabilistic_anonymity(h, optimal_p(h))["Pa"] == pytest.approx(4.639341, abs=2e-5)
    u = iter([.10, .95, .70, .40, .55, .20, .90, .60, .30, .49, .75, .99])
    rows, chosen = replace(RA3, dists, np.array([.5, .5]), 1, u)
    assert [c[0] for c in chosen] == [0, 1, 1, 1, 0, 1]
    assert rows == [("a3", "b1"), ("a1", "b1"), ("a2", "b1"), ("a2", "b1"), ("a1", "b1"), ("a3", "b2")]


def test_ra_4_numpy_stream_through_the_method():
    schema = Schema.from_dict({"attributes": [
        {"name": "A", "kind": "nominal", "role": "quasi_identifier", "categories": ["a1", "a2", "a3"]},
        {"name": "B", "kind": "nominal", "role": "quasi_identifier", "categories": ["b1", "b2"]}]})
    np.testing.assert_allclose(np.random.default_rng(20240601).random(12)[:4], [0.791821, 0.580868, 0.414861, 0.947037],
                               atol=1e-6)
    frame = pd.DataFrame(RA3, columns=["A", "B"])
    result = make_method("random_attribute_replacement", {"p": "optimal"}).apply(frame, schema, random_state=20240601)
    assert list(result.table.itertuples(index=False, name=None)) == [
        ("a1", "b1"), ("a3", "b2"), ("a1", "b1"), ("a2", "b1"), ("a1", "b2"), ("a1", "b2")]
    assert result.metrics["Pa"] == pytest.approx(4.639341, abs=2e-5)


def test_ra_5_enhanced_ra():
    dists = distributions(RA5)
    u = iter([.9, .1, .2, .8, .4, .6, .3, .3, .0, .99, .7, .2, .5, .5, .1, .9])
    rows, chosen = replace(RA5, dists, np.full(3, 1 / 3), 2, u)
    assert [set(c) for c in chosen] == [{2, 1}, {1, 2}, {0, 2}, {1, 2}]
    assert rows == [("a1", "b2", "c1"), ("a2", "b1", "c1"), ("a2", "b2", "c1"), ("a2", "b1", "c2")]


def test_ra_6_bias_and_variance():
    dists = distributions(RA3)
    q = {0: "a2", 1: "b1"}
    for p in (np.array([.5, .5]), optimal_p(entropies(dists))):
        bias, _ = bias_and_variance(RA3, dists, p, 1, q)
        assert bias == pytest.approx(-1 / 3)
    assert bias_and_variance(RA3, dists, np.array([.5, .5]), 1, q)[1] == pytest.approx(7 / 36)
    assert bias_and_variance(RA3, dists, optimal_p(entropies(dists)), 1, q)[1] == pytest.approx(0.203784, abs=2e-6)
    assert bias_and_variance(RA3, dists, np.array([.5, .5]), 1, {0: "a1"})[0] == pytest.approx(0.0)
    d5 = distributions(RA5)
    for k, var in ((1, .25), (2, .416667), (3, .4375)):
        bias, v = bias_and_variance(RA5, d5, np.full(3, 1 / 3), k, {0: "a1", 1: "b1", 2: "c1"})
        assert bias == pytest.approx(-1 / 2) and v == pytest.approx(var, abs=2e-6)


def test_ra_6_bias_agrees_with_simulation():
    dists = distributions(RA3)
    rng = np.random.default_rng(4)
    errors = []
    for _ in range(4000):
        rows, _ = replace(RA3, dists, np.array([.5, .5]), 1, iter(rng.random(12)))
        errors.append((sum(r == ("a2", "b1") for r in rows) - 2) / 2)
    assert np.mean(errors) == pytest.approx(-1 / 3, abs=4 * math.sqrt(7 / 36 / 4000))


def test_ra_7_exact_posterior():
    data = [("a2", "b1", "c1")] * 5 + [("a1", "b2", "c2")] * 5
    support = {r: data.count(r) / 10 for r in set(data)}
    post = max_posterior(("a1", "b1", "c1"), support, distributions(data), np.full(3, 1 / 3))
    assert post == {("a2", "b1", "c1"): pytest.approx(1.0)}  # Prop. 10 would say 1/3
    data = [("a1", "b1")] * 3 + [("a2", "b1")] * 4 + [("a1", "b2")] * 2 + [("a2", "b2")]
    support = {r: data.count(r) / 10 for r in set(data)}
    post = max_posterior(("a1", "b1"), support, distributions(data), np.array([.5, .5]))
    assert post[("a1", "b1")] == pytest.approx(0.514286, abs=2e-6)
    assert post[("a2", "b1")] == pytest.approx(0.285714, abs=2e-6)
    assert post[("a1", "b2")] == pytest.approx(0.2)


@pytest.mark.parametrize("params", [{"k": "0"}, {"p": "0.5,0.6"}, {"p": "sometimes"}, {"p": "-1,2"}])
def test_bad_parameters(params):
    with pytest.raises(InvalidInputError):
        make_method("random_attribute_replacement", params)


def test_k_larger_than_the_quasi_identifiers():
    frame = pd.DataFrame(RA3, columns=["A", "B"])
    schema = Schema.from_dict({"attributes": [
        {"name": "A", "kind": "nominal", "role": "quasi_identifier"},
        {"name": "B", "kind": "nominal", "role": "quasi_identifier"}]})
    with pytest.raises(InvalidInputError, match="more than the 2"):
        make_method("random_attribute_replacement", {"k": "3"}).apply(frame, schema, random_state=0)


from conftest import ADULT, adult_schema  # noqa: E402


def test_adult_end_to_end(tmp_path, capsys):
    import json

    from publisher.cli import main as publisher

    schema = adult_schema(tmp_path, numeric_age=False)
    capsys.readouterr()
    y = tmp_path / "y.csv"
    assert publisher(["anonymize", "--input", str(ADULT), "--schema", str(schema), "--method",
                      "random_attribute_replacement", "--seed", "3", "--keep-order", "--out", str(y), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    metrics = out["metrics"]
    assert metrics["attributes"] == ["marital-status", "race", "sex"]
    assert 1 < metrics["Pa"] <= metrics["Pa_max"] + 1e-9
    assert 0 < metrics["max_posterior"]["max"] <= 1 and metrics["c_amplification"]["max"] >= 1
    errors = metrics["query_relative_error"]["by_dimension"]
    assert set(errors) == {"1", "2", "3"} and all(0 < e for e in errors.values())
    assert publisher(["assess", "--original", str(ADULT), "--anonymized", str(y), "--schema", str(schema),
                      "--paired", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["attribute_disclosure"]["salary-class"]["mode"] == "group"


def test_ra_8_query_estimators():
    from publisher.methods.random_replacement import answer_anatomy, answer_generalized

    g1 = [("a1", "b1", "x"), ("a2", "b1", "y"), ("a1", "b2", "x")]
    g2 = [("a3", "b2", "x"), ("a3", "b1", "y"), ("a2", "b2", "x")]
    generalized = [{"covers": {"A": {"a1", "a2"}, "B": {"b1", "b2"}}, "sensitive": [r[2] for r in g1]},
                   {"covers": {"A": {"a2", "a3"}, "B": {"b1", "b2"}}, "sensitive": [r[2] for r in g2]}]
    anatomy = [{"rows": [{"A": r[0], "B": r[1]} for r in g], "sensitive": [r[2] for r in g]} for g in (g1, g2)]
    q1 = {"A": {"a1", "a3"}, "B": {"b1"}}
    assert answer_generalized(generalized, q1, "S", {"x"}) == pytest.approx(1.0)  # true answer 1: error 0
    assert answer_anatomy(anatomy, q1, {"x"}) == pytest.approx(4 / 3)  # error 1/3
    q2 = {"A": {"a1"}}
    assert answer_generalized(generalized, q2, "S", {"x"}) == pytest.approx(1.0)  # true 2: error 1/2
    assert answer_anatomy(anatomy, q2, {"x"}) == pytest.approx(4 / 3)  # error 1/3


def test_query_workload_and_errors():
    from publisher.methods.random_replacement import query_relative_errors, query_workload

    rng = np.random.default_rng(1)
    rows = [(f"a{rng.integers(3)}", f"b{rng.integers(2)}") for _ in range(200)]
    s = [f"s{rng.integers(3)}" for _ in range(200)]
    work = query_workload(rows, s, dims=[1, 2], n_queries=50, eval_seed=3)
    assert len(work) == 100 and work == query_workload(rows, s, dims=[1, 2], n_queries=50, eval_seed=3)
    assert query_relative_errors(rows, rows, s, work) == {1: 0.0, 2: 0.0}
    released, _ = replace(rows, distributions(rows), np.array([.5, .5]), 1, iter(rng.random(400)))
    errors = query_relative_errors(rows, released, s, work)
    assert 0 < errors[1] < 1 and 0 < errors[2]


def _random_rows(rng, n: int, sizes: list[int], skewed: bool) -> list[tuple]:
    """Rows of categorical values; ``skewed`` piles most records on a few values (many ties and repeated rows)."""
    columns = [rng.choice(d, n, p=rng.dirichlet(np.full(d, 0.3 if skewed else 5.0))) for d in sizes]
    return [tuple(f"v{c}" for c in r) for r in zip(*columns)]


@pytest.mark.parametrize("seed", range(6))
def test_coded_biases_and_posteriors_equal_the_plain_loops_to_the_bit(seed):
    """The fast paths of the RA metrics give the plain functions' floats, for RA and enhanced RA: the largest
    posteriors to the bit, the biases (summed over distinct rows with their counts) to 1e-12."""
    from publisher.methods.random_replacement import max_posteriors, relative_biases

    rng = np.random.default_rng(seed)
    sizes = [int(d) for d in rng.integers(2, 6, 4)]
    rows = _random_rows(rng, int(rng.integers(30, 150)), sizes, skewed=seed % 2 == 0)
    dists = distributions(rows)
    combos = sorted(set(rows), key=str)
    for k, p in ((1, optimal_p(entropies(dists))), (2, np.full(4, 0.25)), (3, np.full(4, 0.25))):
        assert relative_biases(rows, dists, p, k, combos) == pytest.approx(
            [bias_and_variance(rows, dists, p, k, dict(enumerate(q)))[0] for q in combos], rel=1e-12, abs=1e-15)
    released, _ = replace(rows, dists, optimal_p(entropies(dists)), 1, iter(rng.random(2 * len(rows))))
    support: dict = {}
    for r in rows:
        support[r] = support.get(r, 0.0) + 1.0 / len(rows)
    distinct = sorted(set(released), key=str) + [("unseen",) * 4]
    assert max_posteriors(distinct, support, dists, np.full(4, 0.25)) == [
        max(max_posterior(q, support, dists, np.full(4, 0.25)).values(), default=0.0) for q in distinct]


@pytest.mark.parametrize("seed", range(6))
def test_rows_within_one_attribute_are_those_a_pass_over_every_row_finds(seed):
    """The keyed lookup finds, in ascending order, exactly the rows that differ from a combination in one
    attribute at most, for combinations seen, unseen and partly unseen, on tied and spread tables."""
    from publisher.methods.coded_rows import CodedRows

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 5))
    rows = _random_rows(rng, int(rng.integers(1, 200)), [int(d) for d in rng.integers(2, 6, m)], seed % 2 == 0)
    coded = CodedRows.of(rows, m)
    for q in [*rows[:20], ("unseen",) * m, (*rows[0][:-1], "unseen")]:
        want = np.flatnonzero(coded.mismatches(q).sum(axis=1) <= 1)
        assert coded.within_one(q).tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(4))
def test_coded_query_counts_equal_a_plain_count(seed):
    """The workload redraws a query that counts nothing, and the errors compare counts: both as a row loop counts."""
    from publisher.methods.random_replacement import query_relative_errors, query_workload

    def plain(rows, s, query, s_values):
        return sum(all(r[a] in wanted for a, wanted in query.items()) and v in s_values for r, v in zip(rows, s))

    rng = np.random.default_rng(seed)
    rows = _random_rows(rng, 120, [3, 4, 2], skewed=seed % 2 == 0)
    s = [f"s{v}" for v in rng.integers(0, 4, 120)]
    work = query_workload(rows, s, dims=[1, 2, 3], n_queries=30, eval_seed=seed)
    assert all(plain(rows, s, q, sv) > 0 for _, q, sv in work)  # each query kept counts something
    released, _ = replace(rows, distributions(rows), np.full(3, 1 / 3), 1, iter(rng.random(240)))
    expected: dict[int, list[float]] = {}
    for j, q, sv in work:
        truth = plain(rows, s, q, sv)
        expected.setdefault(j, []).append(abs(truth - plain(released, s, q, sv)) / truth)
    assert query_relative_errors(rows, released, s, work) == {j: float(np.mean(e)) for j, e in expected.items()}


@pytest.mark.parametrize("seed", range(6))
def test_columnwise_draws_equal_the_row_by_row_algorithm(seed):
    """The release's draws, a column at a time from an array of uniforms, are Algorithms 1 and 2 row by row from
    the same uniforms: the same rows, for RA and enhanced RA, on tied and spread tables."""
    from publisher.methods.random_replacement import replace_drawn

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 5))
    rows = _random_rows(rng, int(rng.integers(1, 300)), [int(d) for d in rng.integers(2, 6, m)], seed % 2 == 0)
    dists = distributions(rows)
    for k in range(1, m + 1):
        p = optimal_p(entropies(dists)) if k == 1 else np.full(m, 1.0 / m)
        u = rng.random(2 * k * len(rows))
        assert replace_drawn(rows, dists, p, k, u) == replace(rows, dists, p, k, iter(u))[0]


@pytest.mark.parametrize("seed", range(6))
def test_coded_cells_are_numpys_distinct_rows(seed):
    """The distinct coded rows found through one integer key per row are numpy's sorted distinct rows with their
    counts, on tied and spread tables and with no rows."""
    from publisher.methods.coded_rows import CodedRows

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 6))
    rows = _random_rows(rng, int(rng.integers(0, 300)) if seed else 0, [int(d) for d in rng.integers(2, 9, m)],
                        seed % 2 == 0)
    coded = CodedRows.of(rows, m)
    distinct, counts = coded.cells
    want, want_counts = np.unique(coded.codes, axis=0, return_counts=True)
    assert distinct.tolist() == want.tolist() and counts.tolist() == want_counts.tolist()
