"""The notebook API: the same figures as the command line, on pandas DataFrames (issue 12, item 5)."""

from __future__ import annotations

import doctest
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import publisher
import publisher.api
import verifier
import verifier.api
from publisher.cli import main as publisher_main
from verifier.cli import main as verifier_main
from verifier.errors import InvalidInputError, VerifierError

GOLDEN = Path(__file__).parent / "data" / "golden"
HER = {"x1": 100.87, "x2": 902.21, "x3": 5108.54}


def _cli_json(capsys, main, argv) -> dict:
    capsys.readouterr()
    assert main([*argv, "--json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def _cli_records(capsys, main, argv, tmp_path) -> tuple[dict, list[dict]]:
    """The command's JSON summary and its per-record rows, written with --out to Parquet."""
    import pyarrow.parquet as pq

    out = tmp_path / "records.parquet"
    summary = _cli_json(capsys, main, [*argv, "--out", str(out)])
    return summary, pq.read_table(out).to_pylist()


def test_permuted_privacy_equals_the_distance_command(paper_paths, capsys, tmp_path):
    x, y = pd.read_csv(paper_paths["original"]), pd.read_csv(paper_paths["masked"])
    result = verifier.permuted_privacy(x, y)
    cli, records = _cli_records(capsys, verifier_main, ["distance", "--original", str(paper_paths["original"]),
                                                        "--anonymized", str(paper_paths["masked"])], tmp_path)
    assert result.dataset_distance == cli["dataset"]["distance"] == 1  # paper 003, Table 4
    assert list(result.dataset_spread.values()) == pytest.approx(cli["dataset"]["variances"])
    frame = result.to_frame()
    assert frame["record"].tolist() == [r["record"] for r in records]
    assert frame["distance"].tolist() == [r["distance"] for r in records]
    assert frame["matches"].tolist() == [r["matches"] for r in records]
    assert frame["n_matches"].tolist() == [r["n_matches"] for r in records]
    assert frame[[f"spread at D {a}" for a in x.columns]].to_numpy() == pytest.approx(
        np.array([[r[f"spread_at_D.{a}"] for a in x.columns] for r in records]))
    # record 3 of Table 1 is at distance 4 (Table 3), and its matches carry the CLI's deviations
    assert frame.loc[2, "distance"] == 4
    assert result.matches(3).iloc[:, 1:].to_numpy().tolist() == records[2]["deviations"]
    check = result.check(1, {"x1": 0.001, "x2": 10, "x3": 30})
    assert check.satisfied and check.distance == 1
    assert not result.check(2, 0.0).satisfied


def test_intruder_equals_the_intruder_command(paper_paths, capsys, tmp_path):
    x, y = pd.read_csv(paper_paths["original"]), pd.read_csv(paper_paths["masked"])
    cli, records = _cli_records(capsys, verifier_main, ["intruder", "--original", str(paper_paths["original"]),
                                                        "--anonymized", str(paper_paths["masked"]), "--paired"], tmp_path)
    result = verifier.intruder(x, y, paired=True)
    assert result.confidently_linked_share == cli["confidently_linked_share"]
    assert result.hellinger == pytest.approx(cli["hellinger"])
    assert result.correct_link_share == cli["correct_link_share"]
    frame = result.to_frame()
    assert frame["p_value"].tolist() == pytest.approx([r["p_value"] for r in records])
    assert frame["matches"].tolist() == [r["matches"] for r in records]
    assert frame["outcome"].tolist() == [r["outcome"] for r in records]
    assert result.random_distribution.sum() == pytest.approx(1.0)
    unpaired = verifier.intruder(x, y)
    assert unpaired.correct_link_share is None and "outcome" not in unpaired.to_frame()
    assert "correctly_linked" not in repr(unpaired) and "correctly_linked=30%" in repr(result)


def test_categorical_columns_take_a_schema(tmp_path, capsys):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "job", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c"]},
    ]}))
    x = pd.DataFrame({"age": [30, 40, 50, 60, 35], "job": ["a", "b", "c", "a", "b"]})
    y = pd.DataFrame({"age": [40, 30, 60, 50, 35], "job": pd.Categorical(["a", "b", "c", "a", "c"])})
    result = verifier.permuted_privacy(x, y, str(schema))
    x.to_csv(tmp_path / "x.csv", index=False)
    y.to_csv(tmp_path / "y.csv", index=False)
    cli, records = _cli_records(capsys, verifier_main, ["distance", "--original", str(tmp_path / "x.csv"),
                                                        "--anonymized", str(tmp_path / "y.csv"), "--schema", str(schema)],
                                tmp_path)
    assert result.spread_kinds == cli["spread_kinds"] == ["variance", "gini_simpson"]
    assert result.to_frame()["distance"].tolist() == [r["distance"] for r in records]
    assert max(result.distances) >= 1  # the release is no copy of the original
    assert list(result.dataset_spread.values()) == pytest.approx(cli["dataset"]["variances"])


def test_bad_frames_name_the_column_and_row(paper_paths):
    x = pd.read_csv(paper_paths["original"])
    y = x.copy()
    y.loc[4, "x2"] = np.nan
    with pytest.raises(InvalidInputError) as info:
        verifier.permuted_privacy(x, y)
    assert info.value.reason == "VALUE_MISSING" and "'x2', row 5" in info.value.message
    with pytest.raises(InvalidInputError) as info:
        verifier.permuted_privacy(x, y.drop(columns="x3"))
    assert info.value.reason == "COLUMN_MISSING"
    y = x.astype({"x1": str})
    with pytest.raises(InvalidInputError) as info:
        verifier.permuted_privacy(x, y)
    assert info.value.reason == "COLUMN_TYPE"


def test_a_subject_checks_her_record_as_the_check_command_does(tmp_path, capsys):
    record = tmp_path / "me.json"
    record.write_text(json.dumps(HER))
    cli = _cli_json(capsys, verifier_main, ["check", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"),
                                            "--record", str(record)])
    release = verifier.open_release(GOLDEN / "release", GOLDEN / "public.pem")
    mine = verifier.check_record(release, record=HER)
    assert mine.to_dict() == cli
    assert mine.distance == cli["distance"] == 3 and mine.verdict == cli["verdict"]
    assert mine.to_frame()["released_record"].tolist() == cli["matches"]
    # her values appear in no summary of her results
    for text in (repr(mine), mine._repr_html_()):
        assert "100.87" not in text and "902.21" not in text and "5108.54" not in text
    assert verifier.check_record(GOLDEN / "release", GOLDEN / "public.pem", HER, random_match_test=False).p_value is None


def test_open_release_fails_closed(tmp_path):
    with pytest.raises(VerifierError) as info:  # a file that is no public key verifies nothing
        verifier.open_release(GOLDEN / "release", GOLDEN / "release" / "manifest.json")
    assert info.value.reason == "KEY_INVALID"
    tampered = tmp_path / "release"
    shutil.copytree(GOLDEN / "release", tampered)
    data = tampered / "release.csv"
    data.write_bytes(data.read_bytes().replace(b"1", b"2", 1))
    with pytest.raises(VerifierError) as info:
        verifier.open_release(tampered, GOLDEN / "public.pem")
    assert info.value.reason == "DIGEST_MISMATCH"
    with pytest.raises(InvalidInputError) as info:
        verifier.check_record(GOLDEN / "release", GOLDEN / "public.pem", {**HER, "x4": 1})
    assert info.value.reason == "RECORD_FIELD_UNKNOWN"


def _cli_release(tmp_path, x: pd.DataFrame, *extra: str):
    """``x`` released by the command line as the API tests release it (additive noise at 0.8, seed 7), verified."""
    source = tmp_path / "x.csv"
    x.to_csv(source, index=False)
    assert publisher_main(["release", "--input", str(source), "--method", "additive_noise", "--param", "relative_sd=0.8",
                           *extra, "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "api", "--seed",
                           "7", "--out", str(tmp_path / "cli")]) == 0
    return verifier.open_release(tmp_path / "cli", tmp_path / "keys" / "public.pem")


def test_publisher_api_releases_what_the_cli_would(tmp_path, paper_paths):
    assert publisher_main(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    x = pd.read_csv(paper_paths["original"])
    out = publisher.release(x, "additive_noise", relative_sd=0.8, then={"reverse_mapping": {}},
                            key=tmp_path / "keys" / "private.pem", out=tmp_path / "release", dataset_id="api", seed=7)
    release = verifier.open_release(out, tmp_path / "keys" / "public.pem")
    assert [m["method"] for m in release.methods] == ["additive_noise", "reverse_mapping"]
    assert release.methods[0]["parameters"]["relative_sd"] == 0.8
    data = release.data
    # reverse mapping: every released column is a permutation of the original one
    for column in x.columns:
        assert sorted(data[column]) == sorted(x[column])
    # the same seed through the command line gives the same released values
    cli = _cli_release(tmp_path, x, "--then", "reverse_mapping")
    pd.testing.assert_frame_equal(cli.data, data)
    assert release.claims["permuted_privacy"] == cli.claims["permuted_privacy"]
    assert "api" in repr(release) and "<table>" in release._repr_html_()


def test_publisher_api_takes_weights_and_keeps_the_protector_shares(tmp_path, paper_paths):
    assert publisher_main(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    x = pd.read_csv(paper_paths["original"])
    x["w"] = (1 + np.arange(len(x)) % 5) * 2.5  # design weights shared by four records each: none names its record
    kw = dict(relative_sd=0.8, key=tmp_path / "keys" / "private.pem", dataset_id="api", seed=7, weight_column="w",
              metadata={"publisher": "Office"})
    out = publisher.release(x, "additive_noise", out=tmp_path / "release", **kw)
    release = verifier.open_release(out, tmp_path / "keys" / "public.pem")
    assert "w" not in release.data.columns and release.predicate["sampling_weights"]["column"] == "w"
    assert sorted(release.weights) == sorted(x["w"])
    assert release.predicate["release_metadata"] == {"publisher": "Office"}
    assert "protector_only" not in release.claims
    shares = json.loads((tmp_path / "release.protector.json").read_text())["protector_only"]
    assert abs(sum(shares.values()) - 1.0) < 1e-12
    # the same through the command line: the same weighted risks
    cli = _cli_release(tmp_path, x, "--weight-column", "w")
    assert cli.claims["risk_original"] == release.claims["risk_original"]
    assert cli.claims["reidentification"]["population"].startswith("estimated from the sampling weights")
    with pytest.raises(InvalidInputError) as info:
        publisher.release(x.assign(w=0.0), "additive_noise", out=tmp_path / "zero", **kw)
    assert info.value.reason == "WEIGHT_INVALID" and not (tmp_path / "zero").exists()


def test_publisher_anonymize_keeps_the_protector_order():
    x = pd.DataFrame({"a": np.arange(12, dtype=float), "b": np.arange(12, dtype=float)[::-1]})
    result = publisher.anonymize(x, "microaggregation", k=3, seed=1)
    assert sorted(result.released["a"]) == sorted(result.table["a"])
    assert result.table["a"].tolist() == [1.0] * 3 + [4.0] * 3 + [7.0] * 3 + [10.0] * 3
    assert result.steps[0]["parameters"]["k"] == 3
    paired = verifier.intruder(x, result.table, paired=True)
    assert paired.correct_link_share is not None
    with pytest.raises(InvalidInputError) as info:
        publisher.anonymize(x, "microaggregation", q=3)
    assert info.value.reason == "PARAMETER_UNKNOWN"


def test_html_summaries_escape_untrusted_names():
    x = pd.DataFrame({"<script>alert(1)</script>": [1.0, 2.0, 3.0]})
    html = verifier.permuted_privacy(x, x.iloc[::-1].reset_index(drop=True))._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


@pytest.mark.parametrize("module", [verifier.api, publisher.api], ids=["verifier", "publisher"])
def test_the_examples_in_the_docstrings_run(module):
    assert doctest.testmod(module).failed == 0


DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_the_notebook_session_of_docs_api_md_runs_as_written():
    """docs/api.md's session on the paper's example, shipped in the package, run as a doctest exactly as a new user
    types it (nothing given to it beforehand): its figures are the library's own."""
    pd.set_option("display.width", 120)
    try:
        result = doctest.testfile(str(DOC), module_relative=False, globs={},
                                  optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    finally:
        pd.reset_option("display.width")
    assert result.attempted >= 30 and result.failed == 0


def test_a_subject_of_a_k_anonymous_release_gets_her_group():
    golden = Path(__file__).parent / "data" / "golden-kanon"
    mine = verifier.check_record(golden / "release", golden / "public.pem",
                                 {"age": 24, "zip": "14853", "job": "driver", "disease": "hiv"})
    assert mine.distance is None and mine.p_value is None and mine.class_size == 3
    assert repr(mine) == "RecordCheck(class_size=3)" and "24" not in mine._repr_html_()
    frame = mine.to_frame()
    assert frame["released_record"].tolist() == [9, 10, 11] and set(frame["age"]) == {"[21,25]"}
    assert mine.attribute_disclosure["disease"]["risk"] == pytest.approx(1 / 3)


def test_a_frame_column_of_the_wrong_type_is_named_in_pandas_words():
    """Issue 37: a DataFrame with a text column was refused for its "Parquet type large_string", and one of mixed
    types with pyarrow's own message; the column is named with its pandas dtype and what to do."""
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": ["x", "y", "x", "z"]})
    with pytest.raises(InvalidInputError) as info:
        verifier.permuted_privacy(x, x)
    message = str(info.value)
    assert info.value.reason == "COLUMN_TYPE" and "Parquet" not in message
    assert f"column 'b' has pandas dtype {x['b'].dtype}, not a number; without a schema every column is numeric: " \
           "pass schema=" in message
    schema = verifier.Schema.from_dict({"attributes": [
        {"name": "a", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "b", "kind": "nominal", "role": "quasi_identifier", "categories": ["1.5", "x", "y", "z"]}]})
    mixed = x.assign(b=pd.Series([1.5, "y", "x", "z"], dtype=object))
    with pytest.raises(InvalidInputError) as info:
        verifier.permuted_privacy(mixed, x, schema)
    assert "column 'b' mixes values of types float, str; a column holds one type" in str(info.value)
    assert verifier.permuted_privacy(x, x.iloc[::-1], schema).n_records == 4  # the same frame, read with the schema


def test_the_api_gives_her_worst_possible_group_as_the_command_line(tmp_path, capsys):
    """Issue 50: an SD release of the Adult sample; her candidates fall in several published groups, and the API
    gives the smallest and the worst group's figures, the CLI's JSON whole."""
    from publisher.cli import main as publisher
    from verifier.cli import main as command_line

    root = Path(__file__).resolve().parents[1]
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(root / "experiments" / "data" / "adult_sample_3000.csv"), "--schema",
                      str(root / "docs" / "examples" / "adult-one-sensitive.json"), "--method", "sd_k_anonymity",
                      "--param", "k=5", "--seed", "1", "--samples", "100", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "sd", "--out", str(tmp_path / "sd")]) == 0
    record = {"marital-status": "Separated", "race": "White", "sex": "Female", "salary-class": "<=50K"}
    mine = verifier.check_record(tmp_path / "sd", tmp_path / "keys" / "public.pem", record)
    assert mine.class_size == 45 and mine.smallest_class == 5 and mine.level == "exposed"
    assert mine.attribute_disclosure["salary-class"]["risk"] == 1.0
    assert "published groups among them, the smallest</th><td>4, 5" in mine._repr_html_().replace("\n", "")
    (tmp_path / "me.json").write_text(json.dumps(record))
    capsys.readouterr()
    assert command_line(["check", str(tmp_path / "sd"), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                         str(tmp_path / "me.json"), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert {**mine.to_dict(), "release": None} == {**cli, "release": None}
