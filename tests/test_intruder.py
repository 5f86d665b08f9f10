"""The maximum-knowledge intruder and the random-match test (SPEC section 5; paper 003, section 5)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write
from verifier.cli import main
from verifier.errors import InvalidInputError
from verifier.attacks.intruder import (
    hellinger,
    intruder_test,
    random_match_distribution,
    random_match_distribution_bruteforce,
    run_intruder,
    subject_test,
)
from verifier.core.permutation import RankSpace, compute_distances_bruteforce

# Paper 003, Table 5: for each original record, its matches in Z (numbered from 1) and the distance.
TABLE_5 = [
    ([1, 7], 4), ([4], 3), ([10], 3), ([4], 4), ([5], 2), ([11], 2), ([7], 2), ([17], 5), ([7, 9], 3), ([15], 3),
    ([2, 6], 4), ([12], 5), ([20], 3), ([14], 3), ([10], 3), ([19], 5), ([13], 2), ([12], 5), ([13, 19], 4), ([20], 3),
]
# Paper 003, Table 6 (SPEC section 5): the exact counts of the 8,000 random records at d = 0..8.
TABLE_6_COUNTS = [20, 469, 1519, 2411, 2076, 1030, 342, 114, 19]
TABLE_6_ROUNDED = [0.0025, 0.0586, 0.1899, 0.3014, 0.2595, 0.1288, 0.0428, 0.0143, 0.0024]


@pytest.fixture(scope="module")
def paper_report(paper):
    return run_intruder(paper["original"].values, paper["masked"].values)


def test_paper_table_5_linkage(paper_report):
    link = paper_report.linkage
    assert [int(d) for d in link.distances] == [d for _, d in TABLE_5]
    assert [(link.record_matches(r) + 1).tolist() for r in range(20)] == [m for m, _ in TABLE_5]


def test_paper_table_5_shares(paper_report):
    # By SPEC section 5: exactly the true record, the true record among several, or not the true record.
    # The paper's text reads "5 correct, 4 multiple, 11 misidentified"; its own Table 5 gives
    # 6 / 3 / 11 (records 4, 5, 7, 12, 14, 20 correct; 1, 9, 19 among two; 11's two matches are both wrong).
    outcomes = paper_report.outcomes.tolist()
    assert [r + 1 for r, o in enumerate(outcomes) if o == "correct"] == [4, 5, 7, 12, 14, 20]
    assert [r + 1 for r, o in enumerate(outcomes) if o == "multiple"] == [1, 9, 19]
    assert paper_report.correct_link_share == pytest.approx(0.30)
    assert paper_report.multiple_match_share == pytest.approx(0.15)
    assert paper_report.misidentified_share == pytest.approx(0.55)
    assert paper_report.ambiguous_share == pytest.approx(0.20)  # the paper's "4 records have multiple matches"


def test_paper_table_6_exhaustive(paper_report):
    random = paper_report.random
    assert random.method == "exhaustive" and random.total == 8000
    assert random.counts.tolist() == TABLE_6_COUNTS
    np.testing.assert_allclose(random.pmf, TABLE_6_ROUNDED, atol=5e-5)
    # Table 6, original records: 0.2 at d = 2, 0.4 at 3, 0.2 at 4, 0.2 at 5
    np.testing.assert_allclose(paper_report.original_pmf, [0, 0, 0.2, 0.4, 0.2, 0.2])


def test_paper_p_values_and_hellinger(paper_report):
    cum = np.cumsum(TABLE_6_COUNTS) / 8000
    expected = [cum[d] for _, d in TABLE_5]
    np.testing.assert_allclose(paper_report.p_values, expected)
    assert paper_report.p_values[4] == pytest.approx(0.251)  # record 5, at distance 2
    assert paper_report.confidently_linked_share == 0.0
    # exact p-values have a zero-width interval
    np.testing.assert_array_equal(paper_report.p_value_low, paper_report.p_value_high)
    # Hellinger distance from the two columns of Table 6
    p = np.array([0, 0, 0.2, 0.4, 0.2, 0.2, 0, 0, 0])
    q = np.array(TABLE_6_COUNTS) / 8000
    assert paper_report.hellinger == pytest.approx(np.sqrt(1 - np.sum(np.sqrt(p * q))))
    assert 0.26 < paper_report.hellinger < 0.27


def test_hellinger_extremes():
    assert hellinger(np.array([0.5, 0.5]), np.array([0.5, 0.5])) == pytest.approx(0.0)
    assert hellinger(np.array([1.0, 0.0]), np.array([0.0, 0.0, 1.0])) == pytest.approx(1.0)


def test_subject_version_equals_the_intruder_on_a_pure_permutation(paper, paper_report):
    # Z is a pure permutation of X: each subject's own test from Z alone is the intruder's test for her.
    space = RankSpace(paper_report.reverse_mapping.z)
    for r in range(20):
        mine = subject_test(space, paper["original"].values[r])
        assert mine.distance == paper_report.linkage.distances[r]
        assert mine.p_value == pytest.approx(paper_report.p_values[r])
        assert mine.random.counts.tolist() == TABLE_6_COUNTS


def test_subject_version_on_the_noisy_release(paper):
    # record 3 against Y: d = 4 (paper Table 3); random records from Y's columns
    report = subject_test(RankSpace(paper["masked"].values), paper["original"].values[2])
    assert report.distance == 4 and report.record.matches.tolist() == [9]
    assert report.p_value == pytest.approx(sum(TABLE_6_COUNTS[:5]) / 8000)
    assert not report.confidently_linked


def _table(rng, n, m, ties):
    if ties:
        return rng.integers(0, 3, size=(n, m)).astype(float)
    return rng.normal(size=(n, m))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_exhaustive_count_is_exact(seed, ties):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 7)), int(rng.integers(1, 4))
    y = _table(rng, n, m, ties)
    kinds = [["numeric", "ordinal", "nominal"][j % 3] for j in range(m)] if ties else None
    space = RankSpace(y, kinds)
    fast = random_match_distribution(space)
    slow = random_match_distribution_bruteforce(space)
    assert fast.method == "exhaustive" and fast.total == n**m
    assert fast.counts.tolist() == slow.counts.tolist()
    assert fast.counts.sum() == n**m


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(1, 3), st.integers(0, 2**32 - 1), st.booleans())
def test_exhaustive_count_is_exact_property(n, m, seed, ties):
    y = _table(np.random.default_rng(seed), n, m, ties)
    space = RankSpace(y)
    assert random_match_distribution(space).counts.tolist() == random_match_distribution_bruteforce(space).counts.tolist()


@pytest.mark.parametrize("ties", [False, True])
def test_monte_carlo_agrees_with_the_exhaustive_distribution(ties):
    """Pooled over tables, 95% intervals cover the exact value about 95% of the time;
    no point falls outside its 99.99% interval."""
    covered = points = 0
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        y = _table(rng, 12, 3, ties)
        space = RankSpace(y)
        exact = random_match_distribution(space, mode="exhaustive")
        for confidence in (0.95, 0.9999):
            mc = random_match_distribution(space, mode="monte_carlo", samples=4000, random_state=seed, confidence=confidence)
            assert mc.method == "monte_carlo" and mc.total == 4000
            size = max(exact.cdf.size, mc.cdf.size)
            truth = exact.p_value(np.arange(size))
            lo, hi = mc.p_value_interval(np.arange(size))
            inside = (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
            if confidence == 0.95:
                covered += int(inside.sum())
                points += size
            else:
                assert inside.all(), (seed, truth, lo, hi)
    assert covered / points >= 0.85


def test_monte_carlo_is_reproducible_by_seed(paper):
    space = RankSpace(paper["masked"].values)
    a = random_match_distribution(space, mode="monte_carlo", samples=3000, random_state=5)
    b = random_match_distribution(space, mode="monte_carlo", samples=3000, random_state=5)
    c = random_match_distribution(space, mode="monte_carlo", samples=3000, random_state=6)
    assert a.counts.tolist() == b.counts.tolist()
    assert a.counts.tolist() != c.counts.tolist()


def test_auto_mode_follows_the_limit(paper):
    space = RankSpace(paper["masked"].values)
    assert random_match_distribution(space, exhaustive_limit=8000).method == "exhaustive"
    assert random_match_distribution(space, exhaustive_limit=7999, samples=100).method == "monte_carlo"
    with pytest.raises(InvalidInputError, match="more than the limit"):
        random_match_distribution(space, mode="exhaustive", exhaustive_limit=7999)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"samples": 0}, "samples"), ({"exhaustive_limit": -1}, "exhaustive_limit"), ({"confidence": 1.0}, "confidence"),
     ({"mode": "guess"}, "mode")],
)
def test_bad_options_are_refused(paper, kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        random_match_distribution(RankSpace(paper["masked"].values), **kwargs)


def test_bad_alpha_is_refused(paper):
    with pytest.raises(InvalidInputError, match="alpha"):
        run_intruder(paper["original"].values, paper["masked"].values, alpha=0.0)


def test_linkage_outcomes_with_a_known_pairing():
    # Z rows: record 0 is unique, records 1 and 2 tie on every attribute, record 3 is swapped with 4
    x = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [3.0, 3.0], [4.0, 4.0]])
    z = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [4.0, 4.0], [3.0, 3.0]])
    report = intruder_test(RankSpace(z), x, true_rows=np.arange(5))
    assert report.outcomes.tolist() == ["correct", "multiple", "multiple", "misidentified", "misidentified"]
    assert report.linkage.distances.tolist() == [0, 0, 0, 0, 0]
    fast = [report.linkage.record_matches(r).tolist() for r in range(5)]
    _, slow = compute_distances_bruteforce(RankSpace(z), x)
    assert fast == [s.tolist() for s in slow]


def test_distances_only_search_equals_the_full_search():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n, m = int(rng.integers(1, 400)), int(rng.integers(1, 6))
        y = _table(rng, n, m, ties=bool(seed % 2))
        space = RankSpace(y)
        q = _table(rng, 300, m, ties=bool(seed % 2)) + (0.5 if seed % 4 == 1 else 0.0)
        qlo, qhi = space.query_blocks(q)
        assert space.tree.distances(qlo, qhi).tolist() == space.tree.nearest(qlo, qhi)[0].tolist()


def _simulate(relative_noise: float):
    """Paper 003, Figures 2-3: 1,000 records like the running example, additive noise, then the attack."""
    rng = np.random.default_rng(2026)
    mean, sd = np.array([100.0, 1000.0, 5000.0]), np.array([10.0, 50.0, 200.0])
    x = rng.normal(mean, sd, size=(1000, 3))
    y = x + rng.normal(0.0, relative_noise * sd, size=x.shape)
    return run_intruder(x, y, random_state=7)


def test_simulation_strong_noise_overlaps():
    report = _simulate(1.0)
    assert report.random.method == "monte_carlo" and report.random.total == 10_000
    assert report.hellinger < 0.2
    assert report.confidently_linked_share < 0.03
    assert report.correct_link_share < 0.05


def test_simulation_weak_noise_is_confidently_linked():
    report = _simulate(0.01)
    assert report.hellinger > 0.9
    assert report.confidently_linked_share > 0.9
    assert report.correct_link_share > 0.95
    assert np.median(report.linkage.distances) <= 6
    assert np.median(report.p_values) < 0.001
    assert report.random.p_value(3) < 0.001


# ----------------------------------------------------------------------------- CLI


def test_cli_intruder_json_is_spec_shaped(paper_paths, capsys):
    code = main(["intruder", "--original", str(paper_paths["original"]), "--anonymized",
                 str(paper_paths["masked"]), "--paired", "--record", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["paired"] is True and "not_computed" not in out
    assert out["records"][0] == {
        "record": 1, "distance": 4, "matches": [1, 7], "p_value": pytest.approx(0.811875),
        "p_value_interval": [pytest.approx(0.811875), pytest.approx(0.811875)],
        "confidently_linked": False, "outcome": "multiple",
    }
    assert [out["random_distribution"][str(d)] for d in range(9)] == pytest.approx(np.array(TABLE_6_COUNTS) / 8000)
    assert out["original_distribution"]["3"] == pytest.approx(0.4)
    assert out["random"]["method"] == "exhaustive" and out["random"]["random_records"] == 8000
    assert out["confidently_linked_share"] == 0.0
    assert out["correct_link_share"] == pytest.approx(0.3)
    assert 0.26 < out["hellinger"] < 0.27


def test_cli_intruder_without_paired_leaves_out_the_pairing_shares_and_says_why(paper_paths, tmp_path, capsys):
    # the paper's masked table shuffled, as every release is: row i of Y is no longer record i of X
    rows = paper_paths["masked"].read_text().splitlines()
    shuffled = tmp_path / "shuffled.csv"
    order = np.random.default_rng(4).permutation(len(rows) - 1)
    shuffled.write_text("\n".join([rows[0], *(rows[1 + i] for i in order)]) + "\n")
    argv = ["intruder", "--original", str(paper_paths["original"]), "--anonymized", str(shuffled)]
    assert main([*argv, "--out", str(tmp_path / "links.parquet"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = pq.read_table(tmp_path / "links.parquet").to_pylist()
    assert out["paired"] is False
    assert not {"correct_link_share", "misidentified_share", "multiple_match_share", "rank_correlation"} & set(out)
    assert out["not_computed"]["figures"] == ["correct_link_share", "multiple_match_share", "misidentified_share",
                                              "rank_correlation"]
    assert "true pairing" in out["not_computed"]["reason"] and all("outcome" not in r for r in rows)
    # the linkage itself does not depend on row order: the same distances, record by record
    assert main([*argv[:-1], str(paper_paths["masked"]), "--out", str(tmp_path / "in-order.parquet"), "--json"]) == 0
    in_order = json.loads(capsys.readouterr().out)
    in_order_rows = pq.read_table(tmp_path / "in-order.parquet").to_pylist()
    assert [r["distance"] for r in rows] == [r["distance"] for r in in_order_rows]
    assert out["distances"] == in_order["distances"]
    assert out["hellinger"] == pytest.approx(in_order["hellinger"])
    assert main(argv) == 0
    assert "Not scored against a true pairing" in capsys.readouterr().out


def test_cli_intruder_readable_and_check(paper_paths, capsys, tmp_path):
    args = ["intruder", "--original", str(paper_paths["original"]), "--anonymized", str(paper_paths["masked"]), "--paired"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "exhaustive over all 20^3 = 8000 combinations" in text
    assert "correctly linked 6 (30%)" in text
    # a zero tolerance passes (no record is confidently linked) ...
    assert main(args + ["--max-linked-share", "0"]) == 0
    assert "share 0% <= 0%: met" in capsys.readouterr().out
    # ... and a loose alpha makes records 5, 6, 7, 17 (p = 0.251) confident, which fails the check
    links = tmp_path / "links.csv"
    assert main(args + ["--alpha", "0.3", "--max-linked-share", "0.1", "--out", str(links), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["out"] == str(links) and "records" not in out
    with open(links, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["record"]) for r in rows if r["confidently_linked"] == "true"] == [5, 6, 7, 17]
    assert {r["outcome"] for r in rows} <= {"correct", "multiple", "misidentified"}
    assert out["check"] == {"max_linked_share": 0.1, "satisfied": False}


def test_cli_intruder_monte_carlo(paper_paths, capsys):
    code = main(["intruder", "--original", str(paper_paths["original"]), "--anonymized", str(paper_paths["masked"]),
                 "--monte-carlo", "--samples", "2000", "--seed", "3", "--record", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["random"]["method"] == "monte_carlo" and out["random"]["random_records"] == 2000
    lo, hi = out["records"][0]["p_value_interval"]
    assert lo < out["records"][0]["p_value"] < hi


def test_cli_intruder_usage_errors(paper_paths, tmp_path, capsys):
    base = ["intruder", "--anonymized", str(paper_paths["masked"])]
    assert main(base) == 2
    assert "--original" in capsys.readouterr().err
    assert main(base + ["--original", str(paper_paths["original"]), "--exhaustive", "--exhaustive-limit", "100"]) == 2
    assert "n^m = 20^3" in capsys.readouterr().err
    assert main(base + ["--original", str(paper_paths["original"]), "--alpha", "1.5"]) == 2
    assert main(base + ["--exhaustive", "--monte-carlo"]) == 2


def test_cli_subject_version(paper_paths, tmp_path, capsys):
    record = write(tmp_path / "me.json", '{"x1": 103.69, "x2": 981.80, "x3": 4928.80}')
    code = main(["intruder", "--anonymized", str(paper_paths["masked"]), "--subject-record", str(record), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    # record 1 against Y (Table 3's method): d = 4; random records from Y's columns (Table 6's counts)
    assert out["distance"] == 4 and out["p_value"] == pytest.approx(sum(TABLE_6_COUNTS[:5]) / 8000)
    assert out["confidently_linked"] is False
    csv_record = write(tmp_path / "me.csv", "x1,x2,x3\n103.69,981.80,4928.80\n")
    assert main(["intruder", "--anonymized", str(paper_paths["masked"]), "--subject-record", str(csv_record)]) == 0
    text = capsys.readouterr().out
    assert "Your p-value F_rand(4) = 0.8119" in text
    assert "an intruder cannot tell the match from chance" in text


@pytest.mark.parametrize("permuted", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_z_that_is_y_is_searched_in_ys_space_with_the_same_report(permuted, seed):
    """Where Y is a permutation of X's values in every column (rank swapping, reverse mapping), Z is Y: the
    intruder reads the search the permuted-privacy report made in Y's space, and his report is the one a fresh
    space of Z gives, field by field. Where Z is not Y (noise), Y's space is left alone."""
    from verifier.core.permutation import compute_permuted_privacy

    rng = np.random.default_rng(seed)
    n, kinds = 300, ["numeric", "numeric", "nominal"]
    x = np.column_stack([rng.integers(0, 20, n), rng.normal(size=n).round(1), rng.integers(0, 4, n)]).astype(float)
    y = np.column_stack([rng.permutation(x[:, j]) for j in range(3)])
    if not permuted:
        y[:, 0] += rng.integers(-2, 3, n)
    space = RankSpace(y, kinds)
    privacy = compute_permuted_privacy(space, x)
    shared = run_intruder(x, y, kinds, samples=400, space=space)
    fresh = run_intruder(x, y, kinds, samples=400)
    assert (shared.linkage.sets is privacy.match_sets) is permuted
    for name in ("p_values", "p_value_low", "p_value_high", "original_counts", "outcomes", "rank_correlation"):
        np.testing.assert_array_equal(getattr(shared, name), getattr(fresh, name))
    np.testing.assert_array_equal(shared.linkage.distances, fresh.linkage.distances)
    np.testing.assert_array_equal(shared.random.pmf, fresh.random.pmf)
    assert shared.linkage.sets.listed()[1].tolist() == fresh.linkage.sets.listed()[1].tolist()
