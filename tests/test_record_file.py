"""Per-record results go to a file, never to stdout (issue 15): ``--out FILE.parquet|.csv``, a JSON summary.

Every row of the file equals what ``--record N --json`` gives for that record;
the summary carries D, v and the quantiles of the distances; a bad file name
is a usage error and a failed write leaves nothing behind.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import write
from verifier.cli import main


def _json(capsys, argv: list[str], code: int = 0) -> dict:
    capsys.readouterr()
    assert main([*argv, "--json"]) == code
    return json.loads(capsys.readouterr().out)


def test_distance_out_parquet_has_every_record_as_record_n_gives_it(paper_paths, tmp_path, capsys):
    base = ["distance", "--original", str(paper_paths["original"]), "--anonymized", str(paper_paths["masked"])]
    out = tmp_path / "d.parquet"
    summary = _json(capsys, [*base, "--out", str(out)])
    assert "records" not in summary and summary["out"] == str(out) and summary["n_records"] == 20
    assert summary["dataset"]["distance"] == 1 and summary["distances"]["min"] == 1
    rows = pq.read_table(out).to_pylist()
    assert [r["record"] for r in rows] == list(range(1, 21))
    for row in rows:
        (one,) = _json(capsys, [*base, "--record", str(row["record"])])["records"]
        assert row["distance"] == one["distance"] and row["matches"] == one["matches"]
        assert row["n_matches"] == len(one["matches"]) and row["deviations"] == one["deviations"]
        assert [row[f"spread_at_D.{a}"] for a in ("x1", "x2", "x3")] == pytest.approx(one["variances_at_dataset_distance"])
        assert [row[f"spread_at_d.{a}"] for a in ("x1", "x2", "x3")] == pytest.approx(one["variances_at_record_distance"])
    distances = np.array([r["distance"] for r in rows])
    assert summary["distances"]["median"] == float(np.median(distances))
    assert summary["distances"]["max"] == distances.max() and summary["distances"]["mean"] == distances.mean()
    # record 3 of the paper (Table 4): d = 4, matched by record 10
    assert rows[2]["distance"] == 4 and rows[2]["matches"] == [10] and rows[2]["deviations"] == [[4, 1, 4]]


def test_distance_out_csv_keeps_the_scalar_columns(paper_paths, tmp_path, capsys):
    out = tmp_path / "d.csv"
    assert main(["distance", "--original", str(paper_paths["original"]), "--anonymized", str(paper_paths["masked"]),
                 "--out", str(out)]) == 0
    assert f"every record is in {out}" not in capsys.readouterr().out  # 20 records: all shown, nothing more
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 20 and "matches" not in rows[0] and "deviations" not in rows[0]
    assert rows[2]["record"] == "3" and rows[2]["distance"] == "4" and rows[2]["n_matches"] == "1"


def test_a_bad_out_name_is_a_usage_error_and_a_failed_write_leaves_nothing(paper_paths, tmp_path, capsys):
    base = ["distance", "--original", str(paper_paths["original"]), "--anonymized", str(paper_paths["masked"])]
    assert main([*base, "--out", str(tmp_path / "d.json")]) == 2
    assert ".parquet or .csv" in capsys.readouterr().err
    x = write(tmp_path / "x.csv", paper_paths["original"].read_bytes())
    assert main(["distance", "--original", str(x), "--anonymized", str(paper_paths["masked"]), "--out", str(x)]) == 2
    assert "would overwrite the input" in capsys.readouterr().err and x.read_bytes() == paper_paths["original"].read_bytes()
    missing = tmp_path / "no" / "d.parquet"
    assert main([*base, "--out", str(missing)]) == 4
    assert capsys.readouterr().err.startswith("FAIL:") and not missing.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]


def test_distance_json_without_out_or_record_is_a_summary_only(paper_paths, capsys):
    summary = _json(capsys, ["distance", "--original", str(paper_paths["original"]), "--anonymized",
                             str(paper_paths["masked"])])
    assert "records" not in summary and summary["out"] is None
    assert set(summary["distances"]) == {"min", "q10", "median", "q90", "max", "mean", "mean_matches", "max_matches"}


def test_intruder_out_rows_equal_record_n(paper_paths, tmp_path, capsys):
    base = ["intruder", "--original", str(paper_paths["original"]), "--anonymized", str(paper_paths["masked"]),
            "--paired"]
    summary = _json(capsys, [*base, "--out", str(tmp_path / "links.parquet")])
    assert "records" not in summary and summary["distances"]["min"] == min(
        r["distance"] for r in pq.read_table(tmp_path / "links.parquet").to_pylist())
    rows = pq.read_table(tmp_path / "links.parquet").to_pylist()
    assert len(rows) == 20 and sum(r["confidently_linked"] for r in rows) / 20 == summary["confidently_linked_share"]
    for row in rows[:5]:
        (one,) = _json(capsys, [*base, "--record", str(row["record"])])["records"]
        assert (row["distance"], row["matches"], row["outcome"]) == (one["distance"], one["matches"], one["outcome"])
        assert [row["p_value_low"], row["p_value_high"]] == pytest.approx(one["p_value_interval"])
    assert main([*base, "--record", "21"]) == 2


def test_audit_out_has_her_distance_and_her_link_for_every_record(paper_paths, tmp_path, capsys):
    from publisher.cli import main as publisher

    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    release = tmp_path / "release"
    assert publisher(["release", "--input", str(paper_paths["original"]), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--then", "reverse_mapping", "--seed", "4", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "paper", "--out", str(release)]) == 0
    key = str(tmp_path / "keys" / "public.pem")
    assert main(["audit", str(release), "--key", key, "--out", str(tmp_path / "a.parquet")]) == 2
    assert "--original" in capsys.readouterr().err
    audit = _json(capsys, ["audit", str(release), "--key", key, "--original", str(paper_paths["original"]),
                           "--out", str(tmp_path / "a.parquet")])
    assert audit["passed"] and audit["out"] == str(tmp_path / "a.parquet")
    rows = pq.read_table(tmp_path / "a.parquet").to_pylist()
    # her distance columns are what `verifier distance` gives on the same tables
    _json(capsys, ["distance", "--original", str(paper_paths["original"]), "--anonymized",
                   str(release / "release.csv"), "--out", str(tmp_path / "d.parquet")])
    plain = pq.read_table(tmp_path / "d.parquet").to_pylist()
    assert [{k: r[k] for k in p} for r, p in zip(rows, plain)] == plain
    claimed = next(c for c in audit["checks"] if c["claim"] == "intruder.confidently_linked_share")["computed"]
    assert sum(r["confidently_linked"] for r in rows) / len(rows) == claimed
    assert min(r["distance"] for r in rows) == next(c for c in audit["checks"]
                                                    if c["claim"] == "permuted_privacy.distance")["computed"]
