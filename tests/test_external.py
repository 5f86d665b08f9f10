"""Releases made with other tools (issue 38): ARX's outputs of the Adult sample published, verified, audited and
checked like this tool's own, their claims equal to ARX's own figures; sdcMicro's and mu-ARGUS's cells; every bad
file refused naming file, column and row."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from pathlib import Path

import pytest

from conftest import arx_folder, resign_statement
from publisher.cli import main as publisher
from verifier.cli import main as verifier

ARX = arx_folder()  # ARX's outputs and their input, from what the repository ships
QI = ("age", "education", "marital-status", "race", "sex")


def _schema(folder: Path) -> Path:
    """Age numeric, education to sex nominal quasi-identifiers (categories as the input holds them), salary-class
    sensitive."""
    rows = [line.split(",") for line in (ARX / "input.csv").read_text().splitlines()]
    header, body = rows[0], rows[1:]
    attrs = [{"name": "age", "kind": "numeric", "role": "quasi_identifier"}]
    for j, name in enumerate(header[1:], start=1):
        attrs.append({"name": name, "kind": "nominal", "role": "sensitive" if name == "salary-class" else
                      "quasi_identifier", "categories": sorted({r[j] for r in body})})
    path = folder / "schema.json"
    path.write_text(json.dumps({"attributes": attrs}))
    return path


def _arx_figures() -> dict[str, dict[str, float]]:
    """ARX's own figures of each output, from the table of the shared README (its reference values)."""
    found = {}
    for line in (ARX / "README.md").read_text().splitlines():
        m = re.match(r"\| (arx_\w+)\.csv \| [^|]+ \| (\d+) \| (\d+) \| (\d+) \| ([0-9.]+) / ([0-9.]+) \|", line)
        if m:
            found[m.group(1)] = {"classes": int(m.group(2)), "smallest_class": int(m.group(3)),
                                 "suppressed_records": int(m.group(4)), "highest_prosecutor_risk": float(m.group(5)),
                                 "average_prosecutor_risk": float(m.group(6))}
    assert len(found) == 3
    return found


def _hierarchies() -> list[str]:
    return [a for c in QI for a in ("--hierarchy", f"{c}={ARX / 'hierarchies' / f'adult_hierarchy_{c}.csv'}")]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("external")
    _schema(root)
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    (root / "arx.properties").write_text("model=KAnonymity(5)\nquality=Loss\nsuppression=0.05\n")
    return root


def _release(world: Path, name: str, *extra: str, anonymized: Path | None = None, code: int = 0,
             original: Path | None = None) -> Path:
    out = world / f"{name}-release"
    argv = ["release", "--input", str(original or ARX / "input.csv"), "--schema", str(world / "schema.json"),
            "--anonymized", str(anonymized or ARX / f"{name}.csv"), "--produced-by", "ARX 3.9.2", *extra,
            "--key", str(world / "keys" / "private.pem"), "--dataset-id", name, "--out", str(out)]
    if not out.exists() or code:
        assert publisher(argv) == code
    return out


def _json(capsys, argv: list[str], code: int = 0) -> dict:
    capsys.readouterr()
    assert verifier([*argv, "--json"]) == code
    return json.loads(capsys.readouterr().out)


# ----------------------------------------------------------------------------- parity with ARX (item 4)


@pytest.mark.parametrize("name", ["arx_global_suppression0", "arx_global_suppression5", "arx_local_recoding"])
def test_the_claims_of_each_arx_output_are_arx_s_own_figures(world, capsys, name):
    """Classes, smallest class, suppressed records and prosecutor risks (1 / smallest class; classes / records not
    suppressed) as ARX reported them; verify and audit pass, and the audit lists the tool's run as not checked."""
    release = _release(world, name, *_hierarchies(), "--configuration", str(world / "arx.properties"))
    statement = json.loads((release / "manifest.json").read_text())
    claims, step = statement["predicate"]["claims"], statement["predicate"]["methods"]
    expected = _arx_figures()[name]
    got = claims["suppression"]
    assert {k: got[k] for k in ("classes", "smallest_class", "suppressed_records")} == \
        {k: expected[k] for k in ("classes", "smallest_class", "suppressed_records")}
    assert got["highest_prosecutor_risk"] == pytest.approx(expected["highest_prosecutor_risk"], abs=5e-7)
    assert got["average_prosecutor_risk"] == pytest.approx(expected["average_prosecutor_risk"], abs=5e-7)
    assert claims["model"] == "generalized" and [s["method"] for s in step] == ["external"]
    params = step[0]["parameters"]
    assert params["produced_by"] == "ARX 3.9.2" and params["suppressed_records"] == expected["suppressed_records"]
    config = (world / "arx.properties").read_bytes()
    assert base64.b64decode(params["configuration"]["base64"]) == config  # every parameter published
    assert params["hierarchy_files"]["age"]["text"] == (ARX / "hierarchies" / "adult_hierarchy_age.csv").read_text()
    assert verifier(["verify", str(release), "--key", str(world / "keys" / "public.pem")]) == 0
    audit = _json(capsys, ["audit", str(release), "--key", str(world / "keys" / "public.pem"), "--original",
                           str(ARX / "input.csv")])
    assert audit["passed"] and {"figure": "methods[0]", "reason": "produced by ARX 3.9.2: not replayable (only that "
                                "tool can rerun it), so whether the release is one of its runs is not checked"} \
        in audit["unchecked"]
    checked = {c["claim"]: c for c in audit["checks"]}
    assert checked["suppression.classes"]["ok"] and checked["methods[0].hierarchy_files.age"]["ok"]
    assert checked["methods[0].configuration"]["ok"]


def test_replay_says_another_tool_s_run_is_not_replayable(world, capsys):
    release = _release(world, "arx_global_suppression5", *_hierarchies())
    capsys.readouterr()
    assert publisher(["replay", str(release), "--key", str(world / "keys" / "public.pem"), "--original",
                      str(ARX / "input.csv"), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["verdict"] == "not_replayable" and said["plausible"] is False
    assert said["reason"].startswith("produced by ARX 3.9.2: not replayable")


def test_rows_are_shuffled_with_the_secret_seed(world):
    """The tool writes rows in the original's order; published so, a row's place would link it to its subject."""
    release = _release(world, "arx_local_recoding", *_hierarchies())
    published = (release / "release.csv").read_text().splitlines()[1:]
    written = (ARX / "arx_local_recoding.csv").read_text().splitlines()[1:]
    suppressed = [i for i, row in enumerate(published) if row.startswith("*,*,*,*,*,")]
    assert len(suppressed) == 2 and suppressed != [500, 1046]  # the tool's records on its lines 502 and 1048 moved
    assert len(published) == len(written) == 3000


def test_a_suppressed_subject_is_told_what_suppression_means_for_her(world, capsys):
    """Line 502 of the input (its record 501) is one of the two records ARX's local recoding suppressed; no other released record is
    consistent with her values, so the suppression hid nothing: her check says so and rates her exposed."""
    release = _release(world, "arx_local_recoding", *_hierarchies())
    header, row = (ARX / "input.csv").read_text().splitlines()[0], (ARX / "input.csv").read_text().splitlines()[501]
    record = dict(zip(header.split(","), row.split(",")))
    record["age"] = int(record["age"])
    (world / "suppressed.json").write_text(json.dumps(record))
    out = _json(capsys, ["check", str(release), "--key", str(world / "keys" / "public.pem"), "--record",
                         str(world / "suppressed.json")])
    assert out["class_size"] == 2 and out["verdict"]["level"] == "exposed"
    assert ("Every released record consistent with your values is one of the 2 records the tool suppressed (* in "
            "every quasi-identifier), and no other matches you: if yours is suppressed, that did not hide it, since "
            "an attacker who knows your quasi-identifiers knows it is one of these 2.") in out["verdict"]["lines"]
    header_row = (ARX / "input.csv").read_text().splitlines()[1]  # a record ARX did not suppress
    record = dict(zip(header.split(","), header_row.split(",")))
    record["age"] = int(record["age"])
    (world / "kept.json").write_text(json.dumps(record))
    out = _json(capsys, ["check", str(release), "--key", str(world / "keys" / "public.pem"), "--record",
                         str(world / "kept.json")])
    assert out["class_size"] >= 5
    assert "2 of them are records the tool suppressed (* in every quasi-identifier): a suppressed record is " \
        "consistent with everyone, so it is among every subject's candidates." in out["verdict"]["lines"]


# ----------------------------------------------------------------------------- the formats protectors have (item 3)

ORIGINAL = """age,zip,sex,disease
23,12345,F,flu
27,12346,M,flu
25,12347,F,hiv
29,12348,M,none
41,23456,F,flu
44,23457,M,cancer
47,23458,F,none
48,23459,M,hiv
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("formats")
    (root / "x.csv").write_text(ORIGINAL)
    (root / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "zip", "kind": "nominal", "role": "quasi_identifier",
         "categories": ["12345", "12346", "12347", "12348", "23456", "23457", "23458", "23459"]},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["cancer", "flu", "hiv", "none"]}]}))
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    return root


def _tool(small: Path, name: str, rows: list[str], tool: str = "sdcMicro 5.7.8", *extra: str, code: int = 0,
          capsys=None) -> Path:
    (small / f"{name}.csv").write_text("\n".join(rows) + "\n")
    out = small / f"{name}-release"
    argv = ["release", "--input", str(small / "x.csv"), "--schema", str(small / "schema.json"), "--anonymized",
            str(small / f"{name}.csv"), "--produced-by", tool, *extra, "--key", str(small / "keys" / "private.pem"),
            "--dataset-id", name, "--out", str(out)]
    assert publisher(argv) == code
    if code:
        assert not out.exists() and not (small / f"{name}-release.protector.json").exists()
    return out


def _cells(release: Path, column: str) -> list[str]:
    rows = list(csv.reader(io.StringIO((release / "release.csv").read_text())))
    return sorted(r[rows[0].index(column)] for r in rows[1:])


def test_each_tool_s_cells_become_release_cells(small, capsys):
    """ARX's intervals ([20, 40[ and 20-39) and masked strings, sdcMicro's NA, mu-ARGUS's empty cell: each read
    into the release's cell and checked against the original in its row; the release verifies and checks."""
    arx = _tool(small, "arx", ["age,zip,sex,disease", *[
        f"{age},{z},{s},{d}" for age, z, s, d in (
            ('"[20, 40["', "1234*", "F", "flu"), ('"[20, 40["', "1234*", "M", "flu"), ("20-39", "1234*", "F", "hiv"),
            ("20-39", "1234*", "M", "none"), ('"[40, 60["', "2345*", "F", "flu"), ('"[40, 60["', "2345*", "M", "cancer"),
            ("40-59", "2345*", "F", "none"), ("40-59", "2345*", "M", "hiv"))]], "ARX 3.9.2")
    assert _cells(arx, "age") == ["[20,39]"] * 2 + ["[20,40)"] * 2 + ["[40,59]"] * 2 + ["[40,60)"] * 2
    assert set(_cells(arx, "zip")) == {"{12345,12346,12347,12348}", "{23456,23457,23458,23459}"}
    statement = json.loads((arx / "manifest.json").read_text())["predicate"]
    assert statement["claims"]["model"] == "generalized" and statement["claims"]["suppression"]["suppressed_records"] == 0
    sdc = _tool(small, "sdc", ["age,zip,sex,disease", "NA,NA,NA,flu", "27,12346,M,flu", "25,12347,F,hiv",
                               "NA,12348,M,none", "41,23456,F,flu", "44,NA,M,cancer", "47,23458,F,none",
                               "48,23459,M,hiv"])
    assert _cells(sdc, "age").count("*") == 2 and _cells(sdc, "zip").count("*") == 2
    assert json.loads((sdc / "manifest.json").read_text())["predicate"]["claims"]["suppression"]["suppressed_records"] == 1
    argus = _tool(small, "argus", ["age,zip,sex,disease", "20-29,12345,F,flu", "20-29,12346,M,flu", "20-29,,F,hiv",
                                   "20-29,12348,M,none", "40-49,23456,F,flu", "40-49,23457,M,cancer",
                                   "40-49,23458,F,none", "40-49,23459,M,hiv"], "mu-ARGUS 5.1.3")
    assert _cells(argus, "age") == ["[20,29]"] * 4 + ["[40,49]"] * 4
    key = str(small / "keys" / "public.pem")
    (small / "me.json").write_text(json.dumps({"age": 25, "zip": "12347", "sex": "F", "disease": "hiv"}))
    for release in (arx, sdc, argus):
        assert verifier(["verify", str(release), "--key", key]) == 0
        found = _json(capsys, ["check", str(release), "--key", key, "--record", str(small / "me.json")])
        assert found["model"] == "generalized" and found["class_size"] >= 1


def test_plain_values_from_a_tool_are_judged_by_their_ranks(small, capsys):
    """sdcMicro's microaggregated ages (plain numbers): the permutation model, with (D, v) and the intruder."""
    release = _tool(small, "mdav", ["age,zip,sex,disease", "25,12345,F,flu", "25,12346,M,flu", "25,12347,F,hiv",
                                    "25,12348,M,none", "45,23456,F,flu", "45,23457,M,cancer", "45,23458,F,none",
                                    "45,23459,M,hiv"], "sdcMicro 5.7.8", "--samples", "200")
    claims = json.loads((release / "manifest.json").read_text())["predicate"]["claims"]
    assert claims["model"] == "permutation" and "suppression" not in claims
    assert claims["permuted_privacy"]["distance"] >= 0 and claims["intruder"]["random_records"] >= 1
    key = str(small / "keys" / "public.pem")
    audit = _json(capsys, ["audit", str(release), "--key", key, "--original", str(small / "x.csv")])
    assert audit["passed"] and any(u["figure"] == "methods[0]" for u in audit["unchecked"])


@pytest.mark.parametrize("rows, reason, words", [
    (["age,zip,sex,disease,ssn", *[f"{r},x" for r in ORIGINAL.splitlines()[1:]]], "COLUMNS_MISMATCH",
     "the tool's output must hold the original's columns, each once (columns not in the original's schema: 'ssn')"),
    (ORIGINAL.splitlines()[:-1], "ROWS_MISMATCH", "holds 7 records and the original 8"),
    (["age,zip,sex,disease", "twenty,12345,F,flu", *ORIGINAL.splitlines()[2:]], "CELL_INVALID",
     "column 'age', row 1: 'twenty': no rule reads it"),
    (["age,zip,sex,disease", *ORIGINAL.splitlines()[1:4], '"[50, 60[",12348,M,none', *ORIGINAL.splitlines()[5:]],
     "CELL_NOT_COVERING", "column 'age', row 4: '[50, 60[' does not contain the original record's value in this row"),
    (["age,zip,sex,disease", "2*,12345,F,flu", *ORIGINAL.splitlines()[2:]], "CELL_INVALID",
     "column 'age', row 1: '2*': a masked value in a numeric column: declare the column nominal in the schema"),
    (["age,zip,sex,disease", "23,9999*,F,flu", *ORIGINAL.splitlines()[2:]], "CELL_INVALID",
     "column 'zip', row 1: '9999*': a masked value no category of the column fits"),
])
def test_a_file_that_does_not_fit_the_original_is_refused_naming_file_column_and_row(small, capsys, rows, reason,
                                                                                      words):
    capsys.readouterr()
    _tool(small, f"bad-{reason.lower()}", rows, code=3)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f": {reason}: " in err[0] and words in err[0], err
    assert "bad-" in err[0].split(": ")[1]  # the tool's file, by name
    assert "Traceback" not in err[0] and "29" not in err[0].split(reason)[1]  # never the original's value (row 4's)


def test_a_bad_arx_hierarchy_and_a_mix_of_options_are_refused(small, capsys, tmp_path):
    (tmp_path / "sex.csv").write_text("F;person\nM;*\n")
    capsys.readouterr()
    _tool(small, "badtree", ORIGINAL.splitlines(), "ARX 3.9.2", "--hierarchy", f"sex={tmp_path / 'sex.csv'}", code=3)
    err = capsys.readouterr().err
    assert "HIERARCHY_INVALID" in err and "row 2: ends in '*' and the first row in 'person'" in err
    for extra, words in ((["--method", "rank_swapping"], "no --method, --then, --param"),
                         (["--hierarchy", "sex"], "--hierarchy takes COLUMN=FILE")):
        _tool(small, "mixed", ORIGINAL.splitlines(), "ARX 3.9.2", *extra, code=2)
        assert words in capsys.readouterr().err
    assert publisher(["release", "--input", str(small / "x.csv"), "--key", str(small / "keys" / "private.pem"),
                      "--dataset-id", "d", "--out", str(tmp_path / "r")]) == 2
    assert "give --method NAME to anonymize here, or --anonymized FILE --produced-by TOOL" in capsys.readouterr().err


def test_a_publisher_who_shows_one_hierarchy_and_reads_with_another_is_caught_by_the_audit(world, capsys, tmp_path):
    """The ARX file in the manifest and the tree of hierarchies.json the cells are read with must agree: a
    re-signed manifest whose published hierarchy text differs fails the audit on that file."""
    import shutil

    release = tmp_path / "lie"
    shutil.copytree(_release(world, "arx_global_suppression5", *_hierarchies()), release)

    def lie(statement):
        files = statement["predicate"]["methods"][0]["parameters"]["hierarchy_files"]
        files["sex"]["text"] = "Male;person\nFemale;person\n"
    resign_statement(release, world / "keys" / "private.pem", lie)
    key = str(world / "keys" / "public.pem")
    audit = _json(capsys, ["audit", str(release), "--key", key], code=1)
    false = [c for c in audit["checks"] if not c["ok"]]
    assert [c["claim"] for c in false] == ["methods[0].hierarchy_files.sex"]
    assert false[0]["note"] == "the published file is not the one its SHA-256 and size name"


def test_a_hierarchy_file_whose_tree_is_not_the_one_the_cells_are_read_with_fails_the_audit(world, capsys, tmp_path):
    """The same lie with a matching SHA-256: the file is what the manifest names, but not the tree of
    hierarchies.json; the audit says which."""
    import hashlib
    import shutil

    release = tmp_path / "lie"
    shutil.copytree(_release(world, "arx_global_suppression5", *_hierarchies()), release)

    def lie(statement):
        entry = statement["predicate"]["methods"][0]["parameters"]["hierarchy_files"]["sex"]
        entry["text"] = "Male;person;*\nFemale;person;*\n"
        entry["sha256"] = hashlib.sha256(entry["text"].encode()).hexdigest()
    resign_statement(release, world / "keys" / "private.pem", lie)
    audit = _json(capsys, ["audit", str(release), "--key", str(world / "keys" / "public.pem")], code=1)
    false = [c for c in audit["checks"] if not c["ok"]]
    assert [(c["claim"], c["note"]) for c in false] == [
        ("methods[0].hierarchy_files.sex", "its tree is not the one hierarchies.json reads the cells with")]


def test_the_python_api_publishes_and_checks_another_tool_s_release(world, tmp_path):
    """A notebook's path: publisher.release_external, then verifier.open_release and verifier.check_record."""
    import pandas as pd

    import publisher as publisher_api
    import verifier as verifier_api

    frame = pd.read_csv(ARX / "input.csv")
    out = publisher_api.release_external(
        frame, ARX / "arx_global_suppression5.csv", produced_by="ARX 3.9.2", key=world / "keys" / "private.pem",
        out=tmp_path / "api", dataset_id="api", schema=world / "schema.json",
        hierarchies={c: ARX / "hierarchies" / f"adult_hierarchy_{c}.csv" for c in QI}, seed=3)
    release = verifier_api.open_release(out, world / "keys" / "public.pem")
    assert release.claims["suppression"]["classes"] == _arx_figures()["arx_global_suppression5"]["classes"]
    record = {**frame.iloc[0].to_dict(), "age": int(frame.iloc[0]["age"])}
    checked = verifier_api.check_record(release, record=record)
    assert checked.class_size >= 5 and checked.distance is None and checked.level in ("protected", "at_risk")


def test_arx_labels_without_their_hierarchy_are_refused_with_what_to_give(world, capsys, tmp_path):
    """Read as intervals, ARX's age labels miss their own values (its 20-24 holds 25): the refusal names the row
    and the --hierarchy that reads them."""
    capsys.readouterr()
    assert publisher(["release", "--input", str(ARX / "input.csv"), "--schema", str(world / "schema.json"),
                      "--anonymized", str(ARX / "arx_local_recoding.csv"), "--produced-by", "ARX 3.9.2",
                      *_hierarchies()[2:], "--key", str(world / "keys" / "private.pem"), "--dataset-id", "x", "--out",
                      str(tmp_path / "r")]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"FAIL: {ARX / 'arx_local_recoding.csv'}: CELL_NOT_COVERING: column 'age', row ")
    assert err.endswith("give it with --hierarchy age=FILE (ARX's 20-24 may hold 21 to 25)")
    assert not (tmp_path / "r").exists()
