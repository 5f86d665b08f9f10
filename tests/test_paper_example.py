"""The running example of paper 003 (Tables 1-4), computed from the shipped data.

Reference values are the paper's (rounded to two decimals there) as restated
in SPEC sections 3-4; the code computes them, the tests only compare.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from verifier import RankSpace, compute_permuted_privacy, compute_record_distance, reverse_map
from verifier.cli import main


def test_reverse_mapping_reproduces_table_1_exactly(paper):
    result = reverse_map(paper["original"].values, paper["masked"].values)
    assert np.array_equal(result.z, paper["reverse_mapped"].values)


def test_reverse_mapping_rank_correlations(paper):
    result = reverse_map(paper["original"].values, paper["masked"].values)
    assert np.round(result.rank_correlation, 3).tolist() == [0.722, 0.844, 0.776]


def test_reverse_mapped_noise_is_smaller_than_the_added_noise(paper):
    # Paper 003, Table 2: once the permutation is taken out, less noise is left.
    result = reverse_map(paper["original"].values, paper["masked"].values)
    assert (result.mean_abs_noise_y_z < result.mean_abs_noise_y_x).all()


def test_cli_reverse_map_writes_the_reference_file_byte_for_byte(paper_paths, tmp_path):
    out = tmp_path / "z.csv"
    code = main(["reverse-map", "--original", str(paper_paths["original"]),
                 "--anonymized", str(paper_paths["masked"]), "--out", str(out), "--json"])
    assert code == 0
    assert out.read_bytes() == paper_paths["reverse_mapped"].read_bytes()


def test_record_3_table_3(paper):
    space = RankSpace(paper["masked"].values)
    r = compute_record_distance(space, paper["original"].values[2])
    assert r.query_lo.tolist() == [8, 2, 16] and r.query_hi.tolist() == [8, 2, 16]
    assert r.distance == 4
    assert (r.matches + 1).tolist() == [10]
    assert r.deviations.tolist() == [[4, 1, 4]]


def test_record_3_and_dataset_table_4(paper):
    report = compute_permuted_privacy(RankSpace(paper["masked"].values), paper["original"].values)
    assert np.round(report.spread_at_record_distance[2], 2).tolist() == [24.70, 896.76, 20167.78]
    assert np.round(report.spread_at_dataset_distance[2], 2).tolist() == [1.63, 155.00, 1692.52]
    assert report.dataset_distance == 1
    assert np.round(report.dataset_spread, 2).tolist() == [0.01, 11.07, 30.26]


def test_every_record_distance_of_table_4(paper):
    report = compute_permuted_privacy(RankSpace(paper["masked"].values), paper["original"].values)
    # Column d(x) of paper 003, Table 4.
    assert report.distances.tolist() == [4, 4, 4, 4, 2, 3, 1, 4, 1, 4, 1, 4, 3, 3, 4, 4, 1, 3, 2, 2]
    # The paper prints one closest record per original record; it is always in our full match set.
    paper_closest = [1, 2, 10, 6, 5, 6, 7, 17, 7, 13, 6, 12, 20, 14, 10, 19, 13, 15, 1, 20]
    for r, closest in enumerate(paper_closest):
        assert closest - 1 in report.record_matches(r)


def test_cli_distance_json_for_record_3(paper_paths, capsys):
    code = main(["distance", "--original", str(paper_paths["original"]),
                 "--anonymized", str(paper_paths["masked"]), "--record", "3", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    (rec,) = out["records"]
    assert rec["record"] == 3 and rec["distance"] == 4 and rec["matches"] == [10]
    assert rec["deviations"] == [[4, 1, 4]]
    assert [round(v, 2) for v in rec["variances_at_record_distance"]] == [24.70, 896.76, 20167.78]
    assert [round(v, 2) for v in rec["variances_at_dataset_distance"]] == [1.63, 155.00, 1692.52]
    assert out["dataset"]["distance"] == 1
    assert [round(v, 2) for v in out["dataset"]["variances"]] == [0.01, 11.07, 30.26]


@pytest.mark.parametrize(
    ("d", "v", "expected"),
    # at d = 0 every window is a single value: spread 0, never > v (Def. 1 is strict)
    [("1", "0.001,10,30", 0), ("1", "0.01,10,30", 1), ("2", "0", 1), ("0", "0", 1)],
)
def test_cli_dv_check_exit_code(paper_paths, capsys, d, v, expected):
    code = main(["distance", "--original", str(paper_paths["original"]),
                 "--anonymized", str(paper_paths["masked"]), "--d", d, "--v", v, "--json"])
    assert code == expected
    assert json.loads(capsys.readouterr().out)["check"]["satisfied"] is (expected == 0)
