"""Pre-release assessment, calibration, and the publisher's anonymize/assess/calibrate commands."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import write
from publisher.calibrate import Targets, calibrate
from publisher.cli import main as publisher
from verifier.attacks.assessment import assess
from verifier.attacks.intruder import run_intruder
from verifier.core.permutation import RankSpace, compute_permuted_privacy
from verifier.data.schema import Schema



def _census_like(path: Path, n: int = 1080, m: int = 13, seed: int = 5) -> Path:
    """A table of the CASC reference file's shape (1,080 records of 13 continuous, skewed and correlated amounts),
    generated here: the CASC file itself is GPL-2 and does not ship with the project, and the calibration's
    frontier is a property of the method, not of those numbers."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 1))
    values = np.exp(0.8 * latent + 0.6 * rng.normal(size=(n, m))) * rng.uniform(100, 10_000, size=m)
    pd.DataFrame(np.round(values, 2), columns=[f"v{j}" for j in range(m)]).to_csv(path, index=False)
    return path


def test_assessment_of_the_paper_example(paper):
    x, y = paper["original"].values, paper["masked"].values
    a = assess(x, y, paper["original"].schema, paired=True)
    out = a.to_json()
    assert out["permuted_privacy"]["distance"] == 1  # paper Table 4
    np.testing.assert_allclose(out["permuted_privacy"]["variances"], [0.01, 11.07, 30.26], atol=0.006)
    assert out["intruder"]["confidently_linked_share"] == 0.0
    assert out["intruder"]["correct_link_share"] == pytest.approx(0.3)
    assert out["intruder"]["random_method"] == "exhaustive" and out["intruder"]["random_records"] == 8000
    u = out["utility"]["attributes"]
    # paper 003 section 2: rank correlations of X and Z
    assert [round(u[n]["rank_correlation"], 3) for n in ("x1", "x2", "x3")] == [0.722, 0.844, 0.776]
    assert u["x1"]["mean_abs_y_x"] == pytest.approx(np.abs(y[:, 0] - x[:, 0]).mean())
    assert u["x1"]["mean_original"] == pytest.approx(x[:, 0].mean())
    expected = np.mean([np.abs(y[:, j] - x[:, j]).mean() / x[:, j].std() for j in range(3)])
    assert out["utility"]["distortion"] == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(4))
def test_utility_rank_correlation_is_scipys_spearman_on_tied_tables(seed):
    """The utility's rho comes from the reverse mapping's ranks, not a second ranking: it is scipy's Spearman of
    X_j and Z_j (average ranks for ties), constant columns undefined."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    n = 200
    x = np.column_stack([rng.integers(0, 6, n), rng.normal(size=n).round(1), np.full(n, 3.0), rng.integers(0, 3, n)])
    y = x + rng.normal(scale=0.7, size=x.shape).round(1) * np.array([1.0, 1.0, 0.0, 0.0])
    y[:, 3] = rng.permutation(x[:, 3])
    schema = Schema.from_dict({"attributes": [
        {"name": "a", "kind": "numeric"}, {"name": "b", "kind": "numeric"}, {"name": "c", "kind": "numeric"},
        {"name": "d", "kind": "ordinal", "categories": ["0", "1", "2"]}]})
    a = assess(x.astype(float), y.astype(float), schema, paired=True)
    z = a.intruder.reverse_mapping.z
    u = a.to_json()["utility"]["attributes"]
    for name, col in (("a", 0), ("b", 1), ("d", 3)):
        assert u[name]["rank_correlation"] == pytest.approx(spearmanr(x[:, col], z[:, col]).statistic, abs=1e-12)
    assert u["c"]["rank_correlation"] is None  # a constant column: undefined
    assert len({u[n]["rank_correlation"] for n in "abd"}) == 3


def test_unpaired_assessment_leaves_out_what_needs_the_pairing(paper):
    out = assess(paper["original"].values, paper["masked"].values, paper["original"].schema, paired=False).to_json()
    assert out["intruder"]["correct_link_share"] is None
    assert out["utility"]["distortion"] is None
    assert "rank_correlation" not in out["utility"]["attributes"]["x1"]
    assert out["permuted_privacy"]["distance"] == 1


def _synthetic(n: int = 300, seed: int = 3) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 3)) * [10.0, 50.0, 200.0] + [100.0, 1000.0, 5000.0], columns=["a", "b", "c"])
    return frame, Schema.all_numeric(["a", "b", "c"])


def _monotone(frontier: list[dict], slack: float = 0.0) -> None:
    """More distortion at each step, and no more confidently linked records (up to ``slack``)."""
    distortion = [r["distortion"] for r in frontier]
    linked = [r["confidently_linked_share"] for r in frontier]
    assert distortion == sorted(distortion), distortion
    assert all(b <= a + slack for a, b in zip(linked, linked[1:])), linked


def test_calibration_picks_the_least_distorting_value_that_meets_the_targets():
    frame, schema = _synthetic()
    result = calibrate(frame, schema, "additive_noise", "relative_sd", ["0.01", "0.1", "0.5", "1", "2"],
                       then=["reverse_mapping"], targets=Targets(max_linked_share=0.05, min_distance=1), seed=4)
    # once the links are no better than chance, about alpha = 1% of records stay "confident" by luck:
    # 300 records give that share in steps of 1/300
    _monotone(result.frontier, slack=0.01)
    meeting = [r for r in result.frontier if r["meets_targets"]]
    assert meeting and result.chosen == min(meeting, key=lambda r: r["distortion"])
    assert result.frontier[0]["confidently_linked_share"] > 0.5  # 1% noise links most records
    assert all(r["confidently_linked_share"] <= 0.05 and r["distance"] >= 1 for r in meeting)
    assert not result.frontier[0]["meets_targets"]
    # the frontier's figures are the assessment's figures for that value
    row = result.frontier[2]
    assert row["value"] == 0.5
    impossible = calibrate(frame, schema, "additive_noise", "relative_sd", ["0.01"], targets=Targets(max_linked_share=0.0), seed=4)
    assert impossible.chosen is None


@pytest.mark.parametrize("method, grid", [
    ("additive_noise", ["0.05", "0.1", "0.25", "0.5", "1", "1.5", "2", "3"]),
    ("rank_swapping", ["1", "2", "5", "10", "20", "40", "60"]),
])
def test_a_census_sized_calibration_frontier_is_monotone(method, grid, tmp_path, capsys):
    plot = tmp_path / "frontier.png"
    census = _census_like(tmp_path / "census.csv")
    argv = ["calibrate", "--input", str(census), "--method", method, "--param-grid",
            f"{'relative_sd' if method == 'additive_noise' else 'p'}={','.join(grid)}", "--seed", "1",
            "--max-linked-share", "0.1", "--min-distance", "1", "--plot", str(plot), "--json"]
    if method == "additive_noise":
        argv += ["--then", "reverse_mapping"]
    code = publisher(argv)
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    _monotone(out["frontier"])
    assert out["frontier"][0]["confidently_linked_share"] > 0.9 > out["frontier"][-1]["confidently_linked_share"]
    assert out["chosen"]["confidently_linked_share"] <= 0.1
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ----------------------------------------------------------------------------- CLI


@pytest.fixture
def x_csv(tmp_path) -> Path:
    frame, _ = _synthetic(200)
    path = tmp_path / "x.csv"
    frame.to_csv(path, index=False)
    return path


def test_anonymize_json_and_output(x_csv, tmp_path, capsys):
    out = tmp_path / "y.csv"
    code = publisher(["anonymize", "--input", str(x_csv), "--method", "additive_noise", "--param", "relative_sd=0.5",
                      "--then", "reverse_mapping", "--seed", "987654321", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert code == 0
    assert result["parameters"] == {"relative_sd": 0.5, "correlated": False, "attributes": None}
    assert set(result["metrics"]) == {"attributes", "noise_sd", "realized_relative_sd"}
    assert [s["method"] for s in result["steps"]] == ["additive_noise", "reverse_mapping"]
    assert result["rows_shuffled"] is True
    # the seed is never printed nor written beside the output
    assert "987654321" not in captured.out + captured.err
    assert "987654321" not in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "y.csv"]
    # reverse mapping: every column of Y is a permutation of X's
    x = pd.read_csv(x_csv)
    y = pd.read_csv(out)
    for c in x.columns:
        assert sorted(x[c]) == sorted(y[c])
    # the rows are shuffled
    assert not np.array_equal(np.argsort(x["a"].to_numpy()), np.argsort(y["a"].to_numpy()))


def test_anonymize_is_reproducible_only_with_a_seed(x_csv, tmp_path):
    args = ["anonymize", "--input", str(x_csv), "--method", "rank_swapping", "--param", "p=10"]
    for name, seed in (("a", ["--seed", "1"]), ("b", ["--seed", "1"]), ("c", []), ("d", [])):
        assert publisher(args + seed + ["--out", str(tmp_path / f"{name}.csv")]) == 0
    read = lambda n: (tmp_path / f"{n}.csv").read_text()
    assert read("a") == read("b")
    assert read("c") != read("d")


@pytest.mark.parametrize(
    "params, words",
    [
        (["--method", "additive_noise", "--param", "relative_sd=-1"], "non-negative"),
        (["--method", "microaggregation", "--param", "k=500"], "larger than the number of records"),
        (["--method", "rank_swapping", "--param", "p=0"], "gives no protection"),
        (["--method", "rank_swapping", "--param", "p=101"], "(0, 100]"),
        (["--method", "shuffle"], "unknown method"),
        (["--method", "rank_swapping", "--param", "q=3"], "no parameter 'q'"),
    ],
)
def test_anonymize_bad_parameters_exit_3_with_one_line(x_csv, tmp_path, capsys, params, words):
    out = tmp_path / "y.csv"
    code = publisher(["anonymize", "--input", str(x_csv), *params, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and len(err) == 1 and err[0].startswith("FAIL: ") and words in err[0]
    assert not out.exists()


def test_anonymize_refuses_to_overwrite(x_csv, tmp_path, capsys):
    assert publisher(["anonymize", "--input", str(x_csv), "--method", "rank_swapping", "--param", "p=5",
                      "--out", str(x_csv)]) == 2
    existing = write(tmp_path / "y.csv", "keep me\n")
    assert publisher(["anonymize", "--input", str(x_csv), "--method", "rank_swapping", "--param", "p=5",
                      "--out", str(existing)]) == 4
    assert existing.read_text() == "keep me\n"


def test_assess_cli_on_a_kept_order_release(x_csv, tmp_path, capsys):
    y = tmp_path / "y.csv"
    assert publisher(["anonymize", "--input", str(x_csv), "--method", "additive_noise", "--param", "relative_sd=0.3",
                      "--seed", "2", "--keep-order", "--out", str(y)]) == 0
    capsys.readouterr()
    assert publisher(["assess", "--original", str(x_csv), "--anonymized", str(y), "--paired", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # the same figures as the verifier's own functions on the same files
    x_values = pd.read_csv(x_csv).to_numpy()
    y_values = np.array([[float(c) for c in row] for row in list(csv.reader(y.open()))[1:]])
    report = compute_permuted_privacy(RankSpace(y_values), x_values)
    intruder = run_intruder(x_values, y_values)
    assert out["permuted_privacy"]["distance"] == report.dataset_distance
    assert out["intruder"]["confidently_linked_share"] == intruder.confidently_linked_share
    assert out["intruder"]["correct_link_share"] == intruder.correct_link_share
    assert set(out) == {"n_records", "attributes", "paired", "permuted_privacy", "intruder", "utility",
                        "attribute_disclosure", "engine"} and out["engine"] == "local"
    assert publisher(["assess", "--original", str(x_csv), "--anonymized", str(y)]) == 0
    text = capsys.readouterr().out
    assert "Permuted privacy (SPEC section 4): D = " in text and "rows not paired" in text


def test_calibrate_cli_exit_1_when_no_value_meets_the_targets(x_csv, tmp_path, capsys):
    code = publisher(["calibrate", "--input", str(x_csv), "--method", "rank_swapping", "--param-grid", "p=1,2",
                      "--seed", "3", "--max-linked-share", "0"])
    assert code == 1 and "No value meets the targets" in capsys.readouterr().out
    code = publisher(["calibrate", "--input", str(x_csv), "--method", "rank_swapping", "--param-grid", "p=1,-2"])
    assert code == 3 and "FAIL:" in capsys.readouterr().err


def test_smallest_class_equals_counting_whole_rows():
    from verifier.attacks.assessment import smallest_class

    rng = np.random.default_rng(4)
    for trial in range(100):
        n, m = int(rng.integers(1, 300)), int(rng.integers(1, 9))
        spread = 5 if trial % 2 else 2000  # few values (ties), or so many that the codes are re-numbered
        keys = rng.integers(-spread, spread, (n, m)).astype(float)
        keys[keys == 0] = -0.0 if trial % 3 == 0 else 0.0
        expected = int(np.unique(keys + 0.0, axis=0, return_counts=True)[1].min())
        assert smallest_class(keys, Schema.all_numeric([f"a{j}" for j in range(m)])) == expected
