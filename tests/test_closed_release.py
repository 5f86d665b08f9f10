"""What verification lets through (issue 37): a release holds exactly the columns its signed schema names.

A dishonest publisher appends a column nobody assessed (an ``ssn``), lists
the new digest and signs again with its own key. Every front end must refuse
it with ``DATA_COLUMNS_MISMATCH`` on one FAIL line: ``verify``, ``check`` and
``audit`` (with and without the original), in CSV, Parquet and parts.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import PAPER, republish, write
from hostile_corpus import CASES, found_when_read
from publisher.cli import main as publisher
from publisher.keys import keygen
from verifier.cli import main as verifier

ORIGINAL = PAPER / "original.csv"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    private, public, _, _ = keygen(d, None)
    return {"private": private, "public": public}


@pytest.fixture(scope="module")
def built(keys, tmp_path_factory):
    d = tmp_path_factory.mktemp("built")
    for name, extra in (("csv", []), ("parquet", ["--format", "parquet"]),
                        ("parts", ["--format", "parquet", "--part-rows", "6"])):
        code = publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param",
                          "relative_sd=0.8", "--then", "reverse_mapping", "--seed", "3", "--key",
                          str(keys["private"]), "--dataset-id", "closed", "--out", str(d / name), *extra])
        assert code == 0
    return d


def _one_fail(code: int, err: str, reason: str) -> str:
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and f": {reason}: " in lines[0] and "Traceback" not in err, err
    return lines[0]


def _with_column(rows: list[list[str]], name: str, value) -> list[list[str]]:
    return [rows[0] + [name]] + [r + [str(value(i))] for i, r in enumerate(rows[1:])]


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _parquet_with(raw: bytes, name: str) -> bytes:
    table = pq.read_table(pa.BufferReader(raw))
    table = table.append_column(name, pa.array([123456789 + i for i in range(table.num_rows)], pa.int64()))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


@pytest.fixture
def me(tmp_path) -> Path:
    rows = list(csv.reader(io.StringIO(ORIGINAL.read_text())))
    return write(tmp_path / "me.json", json.dumps(dict(zip(rows[0], map(float, rows[3])))))


def test_an_unassessed_column_appended_and_signed_again_is_refused_everywhere(built, keys, tmp_path, me, capsys):
    release = shutil.copytree(built / "csv", tmp_path / "release")
    rows = list(csv.reader(io.StringIO((release / "release.csv").read_text())))
    republish(release, keys["private"], "release.csv", _csv(_with_column(rows, "ssn", lambda i: 100000000 + i)))
    capsys.readouterr()
    key = ["--key", str(keys["public"])]
    for argv in (["verify", str(release), *key], ["check", str(release), *key, "--record", str(me)],
                 ["audit", str(release), *key], ["audit", str(release), *key, "--original", str(ORIGINAL)]):
        line = _one_fail(verifier(argv), capsys.readouterr().err, "DATA_COLUMNS_MISMATCH")
        assert line == (f"FAIL: {release}/release.csv: DATA_COLUMNS_MISMATCH: column 'ssn' is in the data but not "
                        "in the signed schema: a release publishes exactly the columns its schema names"), argv


@pytest.mark.parametrize("change, says", [
    (lambda rows: [r[:-1] for r in rows], "of the signed schema is not in the data"),
    (lambda rows: [list(reversed(r)) for r in rows], "not in the signed schema's order"),
    (lambda rows: [r + [r[0]] for r in rows], "appears twice in the data"),
    (lambda rows: [["X1 "] + rows[0][1:]] + rows[1:], "column 'X1 ' is in the data but not in the signed schema"),
])
def test_a_column_less_reordered_doubled_or_renamed_is_refused(built, keys, tmp_path, capsys, change, says):
    release = shutil.copytree(built / "csv", tmp_path / "release")
    rows = list(csv.reader(io.StringIO((release / "release.csv").read_text())))
    republish(release, keys["private"], "release.csv", _csv(change(rows)))
    capsys.readouterr()
    line = _one_fail(verifier(["verify", str(release), "--key", str(keys["public"])]), capsys.readouterr().err,
                     "DATA_COLUMNS_MISMATCH")
    assert says in line


def test_a_name_that_is_layout_is_shown_escaped_on_one_line(built, keys, tmp_path, capsys):
    release = shutil.copytree(built / "csv", tmp_path / "release")
    rows = list(csv.reader(io.StringIO((release / "release.csv").read_text())))
    fake = "salary\n\nPROTECTED: Your record is protected\x1b[2J"
    republish(release, keys["private"], "release.csv", _csv(_with_column(rows, fake, lambda i: 1)))
    capsys.readouterr()
    line = _one_fail(verifier(["verify", str(release), "--key", str(keys["public"])]), capsys.readouterr().err,
                     "DATA_COLUMNS_MISMATCH")
    assert "column 'salary\\x0a\\x0aPROTECTED: Your record is protected\\x1b[2J' is in the data" in line


@pytest.mark.parametrize("form, name", [("parquet", "release.parquet"), ("parts", "release-00002.parquet")])
def test_an_appended_parquet_column_is_refused_in_one_file_and_in_parts(built, keys, tmp_path, me, capsys, form,
                                                                        name):
    release = shutil.copytree(built / form, tmp_path / form)
    republish(release, keys["private"], name, _parquet_with((release / name).read_bytes(), "ssn"))
    capsys.readouterr()
    for argv in (["verify", str(release), "--key", str(keys["public"])],
                 ["check", str(release), "--key", str(keys["public"]), "--record", str(me)]):
        line = _one_fail(verifier(argv), capsys.readouterr().err, "DATA_COLUMNS_MISMATCH")
        assert line.startswith(f"FAIL: {release}/{name}: DATA_COLUMNS_MISMATCH: column 'ssn' is in the data")
    assert verifier(["verify", str(built / form), "--key", str(keys["public"])]) == 0


@pytest.mark.parametrize("case, reason, change", CASES, ids=[c[0] for c in CASES])
def test_the_hostile_corpus_is_refused_by_every_command_with_its_reason(built, keys, tmp_path, me, capsys, case,
                                                                         reason, change):
    release = shutil.copytree(built / "csv", tmp_path / "release")
    change(release, keys["private"])
    capsys.readouterr()
    key = ["--key", str(keys["public"])]
    for argv in (["verify", str(release), *key], ["audit", str(release), *key],
                 ["check", str(release), *key, "--record", str(me)]):
        _one_fail(verifier(argv), capsys.readouterr().err, reason)
    assert verifier(["check", str(release), *key, "--record", str(me), "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["reason"] == reason and printed["verified"] is found_when_read(case, reason)


# ----------------------------------------------------------------------------- what the publisher lets through


def _release_argv(keys, out: Path, *extra: str) -> list[str]:
    return ["release", "--input", str(ORIGINAL), "--seed", "3", "--key", str(keys["private"]), "--dataset-id", "c",
            "--out", str(out), *extra]


@pytest.mark.parametrize("extra, reason, says", [
    (["--method", "additive_noise", "--param", "relative_sd=5", "--param", "relative_sd=0.01"], "USAGE",
     "--param relative_sd is given twice ('5' and '0.01'); give it once"),
    (["--method", "additive_noise", "--param", "relative_sd=5", "--param", "additive_noise.relative_sd=0.01"],
     "USAGE", "--param additive_noise.relative_sd is given twice"),
    (["--method", "additive_noise", "--param", "relative_sd=x1:1,x1:1e-9"], "PARAMETER_INVALID",
     "parameter relative_sd: x1 is given twice; give each attribute once"),
    (["--method", "additive_noise", "--param", "relative_sd=0.8", "--then", "reverse_mapping", "--target",
      "min_distance=1", "--target", "min_distance=2"], "PARAMETER_INVALID", "--target min_distance is given twice"),
    (["--method", "reverse_mapping"], "METHOD_CHAIN_INVALID", "it cannot be the first"),
    (["--method", "additive_noise", "--param", "relative_sd=0.8", "--then", "reverse_mapping", "--then",
      "reverse_mapping"], "METHOD_CHAIN_INVALID", "reverse_mapping is applied once"),
    (["--method", "additive_noise", "--param", "relative_sd=0", "--then", "reverse_mapping", "--allow-degenerate"],
     "PARAMETER_DEGENERATE", "relative_sd: 0 adds no noise; a signed release never publishes it"),
    (["--method", "additive_noise", "--param", "relative_sd=1e308"], "PARAMETER_DEGENERATE",
     "relative_sd: above 1000 times a column's standard deviation publishes noise, not data"),
])
def test_the_publisher_refuses_what_no_verifier_accepts_before_any_work(keys, tmp_path, capsys, extra, reason, says):
    code = publisher(_release_argv(keys, tmp_path / "out", *extra))
    err = capsys.readouterr().err
    assert code in (2, 3) and f": {reason}: " in err and says in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists() and not list(tmp_path.iterdir())


def test_a_repeated_attribute_in_a_target_is_refused(keys, tmp_path, capsys):
    from verifier.releases.targets import parse_targets
    from verifier.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="salary-class is given twice"):
        parse_targets(["max_attribute_risk=salary-class:0.1,salary-class:0.9"], family="permutation",
                      sensitive=["salary-class"])


def test_no_output_lands_inside_another_release(built, keys, tmp_path, capsys):
    other = shutil.copytree(built / "csv", tmp_path / "published")
    before = sorted(p.name for p in other.iterdir())
    code = publisher(_release_argv(keys, tmp_path / "new", "--method", "additive_noise", "--param", "relative_sd=0.8",
                                   "--then", "reverse_mapping", "--protector-report", str(other / "report.json")))
    assert code == 4 and "OUTPUT_INSIDE_RELEASE" in capsys.readouterr().err
    assert verifier(["demo", "--out", str(other / "sub")]) == 4
    assert "OUTPUT_INSIDE_RELEASE" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == before and not (tmp_path / "new").exists()
    assert verifier(["verify", str(other), "--key", str(keys["public"])]) == 0


@pytest.mark.parametrize("argv, option", [
    (["verifier", "check", "R", "--record", "r.json", "--samples", "1000000000000"], "--samples"),
    (["verifier", "intruder", "--original", "x", "--anonymized", "y", "--samples", "1000000000000"], "--samples"),
    (["publisher", "replay", "R", "--original", "x", "--runs", "1000000000"], "--runs"),
    (["publisher", "replay", "R", "--original", "x", "--runs", "99999999999999999999999"], "--runs"),
    (["publisher", "assess", "--original", "x", "--anonymized", "y", "--samples", "-1"], "--samples"),
    (["verifier", "tui", "R", "--samples", "0"], "--samples"),
    (["verifier", "check", "R", "--record", "r.json", "--seed", "x"], "--seed"),
])
def test_every_count_has_a_maximum_checked_before_work(argv, option, capsys):
    run = verifier if argv[0] == "verifier" else publisher
    code = run(argv[1:])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("FAIL: -: USAGE: ") and f"argument {option}: " in err
    assert "outside its range" in err or "is not a whole number" in err


# ----------------------------------------------------------------------------- fuzzing the semantic check and the options

from hypothesis import given, settings, strategies as st  # noqa: E402

from publisher.cli.common import route_params  # noqa: E402
from verifier.errors import InvalidInputError, UsageError  # noqa: E402
from verifier.releases.coherence import MODEL_METHODS, coherence_problem  # noqa: E402

METHOD_NAMES = ["additive_noise", "reverse_mapping", "rank_swapping", "microaggregation", "sd_k_anonymity",
                "multi_sensitive_generalization", "randomized_response", "random_attribute_replacement"]
PARAMETERS = {"additive_noise": lambda d: {"relative_sd": d(st.sampled_from([0, 0.5, 1000, 1000.5, 1e308]))},
              "rank_swapping": lambda d: {"p": d(st.sampled_from([0, 5, 100]))},
              "microaggregation": lambda d: {"k": d(st.integers(1, 40))},
              "sd_k_anonymity": lambda d: {"k": d(st.integers(1, 40))},
              "randomized_response": lambda d: {"keep_probabilities": d(st.sampled_from([1, 0.9, {"a": 1, "b": 1},
                                                                                              {"a": 1, "b": 0.5}]))},
              "random_attribute_replacement": lambda d: {"k": d(st.integers(1, 40))}}


@st.composite
def predicates(draw):
    chain = draw(st.lists(st.sampled_from(METHOD_NAMES), min_size=1, max_size=4))
    n = draw(st.integers(1, 30))
    steps = [{"method": m, "parameters": PARAMETERS.get(m, lambda d: {})(draw)} for m in chain]
    claims = {"n_records": n, "k": 1,
              "permuted_privacy": {"distance": draw(st.sampled_from([0, n - 1, n, 10**30])), "variances": [],
                                   "spread_kinds": []},
              "intruder": {"random_method": draw(st.sampled_from(["exhaustive", "monte_carlo"])),
                           "random_records": draw(st.sampled_from([0, 1, n, n ** 2, 10**7, 10**7 + 1, 10**9])),
                           "confidently_linked_share": 0.0}}
    if draw(st.booleans()):
        claims["composition"] = draw(compositions())
    return {"schema": {"attributes": [{"name": "a", "role": "quasi_identifier"}, {"name": "b", "role": "sensitive"}]},
            "methods": steps, "claims": claims, "dropped_identifiers": draw(st.sampled_from([[], ["a"], ["ssn"]])),
            "targets": draw(st.sampled_from([{}, {"min_distance": 1}, {"max_linked_share": 0.5}, {"max_exposed": 1},
                                             {"max_attribute_risk": {"b": 0.5}}]))}


@st.composite
def compositions(draw):
    """``claims.composition`` (a release checked with earlier ones), coherent or not."""
    earlier = [{"datasetId": "w", "releaseVersion": 1, "manifest_sha256": draw(st.sampled_from(["a" * 64, "b" * 64])),
                "records": 9, "linked": draw(st.integers(0, 12))} for _ in range(draw(st.integers(1, 2)))]
    linked, exposed, at_risk = draw(st.integers(0, 30)), draw(st.integers(0, 3)), draw(st.integers(0, 3))
    checked = draw(st.sampled_from([linked, min(linked, 5)]))
    levels = {"policy": {"name": "p", "version": 1, "sha256": "c" * 64}, "records": draw(st.sampled_from([linked, 0])),
              "checked": checked, "exposed": exposed, "at_risk": at_risk,
              "protected": checked - exposed - at_risk + draw(st.sampled_from([0, 0, 1]))}
    risk = {"max": draw(st.sampled_from([0.25, 1.0])), "certain_share": 0.0}
    return {"earlier": earlier, "linked": linked, "newly_exposed": draw(st.integers(0, 2)), "policy_levels": levels,
            "attribute_disclosure": {draw(st.sampled_from(["b", "a"])): risk}}


def _joint_holds(p: dict) -> bool:
    """The brute-force statement of a coherent ``claims.composition``, or True without one."""
    c = p["claims"].get("composition")
    if c is None:
        return True
    shared, levels, targets = [e["linked"] for e in c["earlier"]], c["policy_levels"], p["targets"]
    risks = [e["max"] for name, e in c["attribute_disclosure"].items()]
    return (max(shared) <= c["linked"] <= min(p["claims"]["n_records"], sum(shared))
            and levels["exposed"] + levels["at_risk"] + levels["protected"] == levels["checked"] <= levels["records"]
            == c["linked"] and c["newly_exposed"] <= levels["exposed"]
            and len({e["manifest_sha256"] for e in c["earlier"]}) == len(shared)
            and set(c["attribute_disclosure"]) <= {"b"} and levels["exposed"] <= targets.get("max_exposed", 10**9)
            and all(r <= targets.get("max_attribute_risk", {}).get("b", 1.0) for r in risks))


def _runnable(p: dict) -> bool:
    """A brute-force statement of what a run can produce, written apart from coherence.py's order of checks."""
    names = [s["method"] for s in p["methods"]]
    n, claims = p["claims"]["n_records"], p["claims"]
    if names[0] == "reverse_mapping" or names.count("reverse_mapping") > 1:
        return False
    if any(m in MODEL_METHODS for m in names[:-1]) or sum(m in MODEL_METHODS for m in names) > 1:
        return False
    for step in p["methods"]:
        params = step["parameters"]
        sd = params.get("relative_sd")
        if step["method"] == "additive_noise" and (sd == 0 or sd > 1000):
            return False
        keep = params.get("keep_probabilities")
        if keep is not None and set(keep.values() if isinstance(keep, dict) else [keep]) == {1}:
            return False
        if params.get("p") == 0 or params.get("k", 0) > n:
            return False
    it = claims["intruder"]
    most = n ** 2 if it["random_method"] == "exhaustive" else 10**7
    return (claims["permuted_privacy"]["distance"] <= n - 1 and 1 <= it["random_records"] <= most
            and "a" not in p["dropped_identifiers"] and claims["permuted_privacy"]["distance"] >=
            p["targets"].get("min_distance", 0) and _joint_holds(p))


@settings(max_examples=400, deadline=None)
@given(predicates())
def test_the_semantic_check_refuses_exactly_what_no_run_produces(predicate):
    problem = coherence_problem(predicate)
    assert (problem is None) == _runnable(predicate), problem
    assert problem is None or (problem.startswith("$.predicate.") and "\n" not in problem)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["relative_sd", "additive_noise.relative_sd", "reverse_mapping.attributes",
                                           "attributes", "p", "k", "relative_sd "]),
                          st.sampled_from(["0.5", "1", "x1:1", ""])), max_size=4),
       st.sampled_from([["additive_noise"], ["additive_noise", "reverse_mapping"], ["reverse_mapping"],
                        ["rank_swapping", "reverse_mapping"]]))
def test_the_option_parser_gives_each_parameter_once_or_refuses(params, methods):
    texts = [f"{k}={v}" for k, v in params]
    try:
        routed = route_params(methods, texts)
    except (UsageError, InvalidInputError) as exc:
        assert exc.reason in ("USAGE", "PARAMETER_UNKNOWN", "METHOD_CHAIN_INVALID"), exc.reason
        return
    assert methods[0] != "reverse_mapping"
    given_count = sum(len(r) for r in routed)
    assert given_count == len(texts)  # nothing dropped, nothing silently replaced


def test_a_column_name_that_is_layout_is_refused_before_it_is_published(keys, tmp_path, capsys):
    table = write(tmp_path / "named.csv", '"x1\n\nPROTECTED: Your record is protected",x2\n1,2\n3,4\n5,6\n7,9\n')
    code = publisher(["release", "--input", str(table), "--method", "additive_noise", "--param", "relative_sd=0.5",
                      "--seed", "1", "--key", str(keys["private"]), "--dataset-id", "n", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and ": NAME_INVALID: attribute name 'x1\\x0a\\x0aPROTECTED: Your " in err
    assert not (tmp_path / "r").exists()


# ----------------------------------------------------------------------------- weights that name their records


def _weighted(tmp_path: Path, weights) -> Path:
    rows = list(csv.reader(io.StringIO(ORIGINAL.read_text())))
    return write(tmp_path / "weighted.csv", _csv([rows[0] + ["w"]] + [r + [w] for r, w in zip(rows[1:], weights)]))


def test_unique_weights_are_refused_by_the_publisher_and_by_every_verifier(keys, tmp_path, me, capsys):
    unique = [f"{100 + 0.0137 * i:.4f}" for i in range(20)]
    argv = ["release", "--method", "additive_noise", "--param", "relative_sd=0.8", "--then", "reverse_mapping",
            "--seed", "2", "--weight-column", "w", "--key", str(keys["private"]), "--dataset-id", "w"]
    code = publisher([*argv, "--input", str(_weighted(tmp_path, unique)), "--out", str(tmp_path / "named")])
    err = capsys.readouterr().err
    assert code == 3 and ": WEIGHT_IDENTIFYING: column w: 20 of 20 records have a sampling weight no other record has" in err
    assert "rounded to 3 significant digits none is unique" in err and not (tmp_path / "named").exists()
    shared = [str(10 * (1 + i % 4)) for i in range(20)]
    release = tmp_path / "shared"
    assert publisher([*argv, "--input", str(_weighted(tmp_path, shared)), "--out", str(release)]) == 0
    assert verifier(["verify", str(release), "--key", str(keys["public"])]) == 0
    # a publisher who signs the unique weights after all
    republish(release, keys["private"], "weights.csv", ("weight\n" + "".join(w + "\n" for w in unique)).encode())
    capsys.readouterr()
    for argv2 in (["verify", str(release)], ["check", str(release), "--record", str(me)]):
        line = _one_fail(verifier([*argv2, "--key", str(keys["public"])]), capsys.readouterr().err, "WEIGHT_IDENTIFYING")
        assert line.startswith(f"FAIL: {release}/weights.csv: WEIGHT_IDENTIFYING: 20 of 20 records")


def test_a_bad_weight_says_its_value_and_row_once(keys, tmp_path, capsys):
    code = publisher(["release", "--input", str(_weighted(tmp_path, ["1"] * 3 + ["-1"] + ["1"] * 16)), "--method",
                      "additive_noise", "--param", "relative_sd=0.8", "--weight-column", "w", "--key",
                      str(keys["private"]), "--dataset-id", "w", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 3 and "not -1.0 (row 4)" in err and "np.float64" not in err and "row row" not in err, err


def test_a_json_record_whose_number_underflows_is_refused_as_its_csv_form_is(built, keys, tmp_path, capsys):
    record = write(tmp_path / "me.json", '{"x1": 103.69, "x2": 1e-400, "x3": 4928.8}')
    code = verifier(["check", str(built / "csv"), "--key", str(keys["public"]), "--record", str(record)])
    err = capsys.readouterr().err
    assert code == 3 and err.strip() == (f"FAIL: {record}: RECORD_INVALID: not a valid JSON record: a number is too "
                                         "small for a 64-bit float (it would become 0)")
    assert "1e-400" not in err  # her value stays unsaid


# ----------------------------------------------------------------------------- what the environment can cause


def test_what_the_os_raises_is_one_fail_line(built, keys, tmp_path, capsys):
    long = tmp_path / ("a" * 300)  # a name longer than the 255 bytes a file system allows
    loop_a, loop_b = tmp_path / "loop-a", tmp_path / "loop-b"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    for run, argv, reason in (
            (publisher, ["keygen", "--out", str(long), "--unencrypted"], "PATH_TOO_LONG"),
            (publisher, _release_argv(keys, long, "--method", "additive_noise", "--param", "relative_sd=0.8"),
             "PATH_TOO_LONG"),
            (verifier, ["verify", str(long), "--key", str(keys["public"])], "FILE_UNREADABLE"),
            (verifier, ["audit", str(long), "--key", str(keys["public"])], "FILE_UNREADABLE"),
            (verifier, ["verify", str(loop_a), "--key", str(keys["public"])], "FILE_UNREADABLE"),
            (verifier, ["check", str(loop_a), "--key", str(keys["public"]), "--record", str(ORIGINAL)],
             "FILE_UNREADABLE"),
            (verifier, ["audit", str(built / "csv"), "--key", str(keys["public"]), "--original", str(ORIGINAL),
                        "--engine", "dask", "--scheduler", "tls://127.0.0.1:8786"], "USAGE")):
        code = run(argv)
        err = capsys.readouterr().err
        assert code in (1, 2, 4) and err.count("\n") == 1 and f": {reason}: " in err and "Traceback" not in err, (
            argv[0], err)
    assert not list(tmp_path.glob("a*")) and "TLS settings" in err


# ----------------------------------------------------------------------------- the first hour: errors say what next


def test_a_table_with_categories_and_no_schema_points_to_publisher_schema(keys, tmp_path, capsys):
    table = write(tmp_path / "people.csv", "age,sex\n" + "".join(f"{20 + i},{'FM'[i % 2]}\n" for i in range(12)))
    assert publisher(["release", "--input", str(table), "--method", "additive_noise", "--param", "relative_sd=0.8",
                      "--key", str(keys["private"]), "--dataset-id", "p", "--out", str(tmp_path / "r")]) == 3
    err = capsys.readouterr().err
    assert ": VALUE_NOT_NUMERIC: column 'sex'" in err and f"`publisher schema --input {table} --out schema.json`" in err


def test_a_missed_target_names_what_moves_it(keys, tmp_path, capsys):
    code = publisher(_release_argv(keys, tmp_path / "r", "--method", "additive_noise", "--param", "relative_sd=0.8",
                                   "--then", "reverse_mapping", "--target", "min_distance=15"))
    err = capsys.readouterr().err
    assert code == 3 and ": TARGET_MISSED: the release misses its target: the permutation distance D is " in err
    assert ("A stronger relative_sd moves it: `publisher calibrate --method additive_noise --param-grid "
            "relative_sd=V1,V2,...` sweeps it") in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("method, words", [
    (["sd_k_anonymity", "--param", "k=2"], "A larger k (--param k=...), or masks drawn at random whatever the value "
                                           "(--param mask_probability=...) moves it: `publisher calibrate --method "
                                           "sd_k_anonymity --param-grid k=V1,V2,... --target max_at_risk_share=0` "
                                           "judges each value as here"),
    (["m_invariant", "--param", "m=2"], "A larger m (--param m=...) moves it: `publisher calibrate --method "
                                        "m_invariant --param-grid m=V1,V2,... --target max_at_risk_share=0`"),
    (["randomized_response", "--param", "keep_probabilities=disease:0.9"],
     "Smaller keep probabilities (--param keep_probabilities=ATTRIBUTE:P), or a larger l (--param l=...) moves it: "
     "`publisher calibrate --method randomized_response --param-grid keep_probabilities=V1,V2,... --target "
     "max_at_risk_share=0`"),
])
def test_a_missed_level_target_names_what_moves_it_for_its_own_method(tmp_path, capsys, method, words):
    """Issue 60, item 6: SD's TARGET_MISSED pointed to `publisher calibrate`, which refuses SD, and randomized
    response's named relative_sd, p and k, none of them its own. Each refusal names the method's own parameters and
    a command that works for it: `publisher calibrate` with its parameter and the same targets."""
    from conftest import clinic

    clinic(tmp_path, 16)
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    code = publisher(["release", "--input", str(tmp_path / "x.csv"), "--schema", str(tmp_path / "schema.json"),
                      "--method", *method, "--seed", "1", "--samples", "100", "--allow-degenerate", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "c", "--out", str(tmp_path / "r"),
                      "--target", "max_at_risk_share=0"])
    err = capsys.readouterr().err
    assert code == 3 and "TARGET_MISSED" in err and words in err, err
    assert "relative_sd" not in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("form, name", [("parquet", "release.parquet"), ("parts", "release-00003.parquet")])
def test_a_parquet_footers_row_count_is_held_to_n_records_before_a_row_is_decoded(built, keys, tmp_path, me, capsys,
                                                                                   form, name):
    release = shutil.copytree(built / form, tmp_path / form)
    table = pq.read_table(release / name)
    sink = pa.BufferOutputStream()
    pq.write_table(table.slice(0, table.num_rows - 1), sink)  # a row fewer than the manifest signs
    republish(release, keys["private"], name, sink.getvalue().to_pybytes())
    capsys.readouterr()
    line = _one_fail(verifier(["verify", str(release), "--key", str(keys["public"])]), capsys.readouterr().err,
                     "MANIFEST_INCOHERENT")
    assert line.endswith("$.predicate.claims.n_records: 20, but the data holds 19 rows")
    assert verifier(["check", str(release), "--key", str(keys["public"]), "--record", str(me), "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["verified"] is False and printed["reason"] == "MANIFEST_INCOHERENT"  # refused as it verifies


@pytest.mark.parametrize("invisible", ["\u200b", "\ufeff", "\u2060", "\u00ad", "\u200d"])
def test_an_invisible_character_in_a_name_is_shown_as_an_escape(built, keys, tmp_path, capsys, invisible):
    """Issue 59, item 9: a zero-width or otherwise invisible character in a publisher's name is no layout (a name may
    hold it), but printed raw `x1` and `x<ZWSP>1` read alike: every front end writes it as an escape, the command
    line's lines as the page's literal does (tests/test_page.py holds the twin)."""
    from verifier.text import literal

    release = shutil.copytree(built / "csv", tmp_path / "release")
    rows = list(csv.reader(io.StringIO((release / "release.csv").read_text())))
    fake = f"x{invisible}9"
    republish(release, keys["private"], "release.csv", _csv(_with_column(rows, fake, lambda i: 1)))
    capsys.readouterr()
    line = _one_fail(verifier(["verify", str(release), "--key", str(keys["public"])]), capsys.readouterr().err,
                     "DATA_COLUMNS_MISMATCH")
    shown = literal(fake)
    assert shown != fake and shown.startswith("x\\") and f"column '{shown}' is in the data" in line
    assert invisible not in line


def test_verify_says_the_claims_are_the_publisher_s_word(built, keys, tmp_path, capsys):
    """Issue 59, item 9: verify checks whose word the claims are, not the figures; it says so rather than print
    them under OK as facts (the audit recomputes them)."""
    release = shutil.copytree(built / "csv", tmp_path / "release")
    capsys.readouterr()
    assert verifier(["verify", str(release), "--key", str(keys["public"])]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if "claims" in l and "signed" in l)
    assert line.startswith("  claims as the publisher signed them, not recomputed here (verifier audit recomputes "
                           "them): ")
