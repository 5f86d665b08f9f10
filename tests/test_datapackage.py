"""Releases as Frictionless data packages, and Frictionless schemas as input (issue 18, item 3).

``frictionless validate`` on every method's release is in test_every_method.py; here: the verifier's own
check of datapackage.json, the format versions, and the schema read back from a Table Schema or a package.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import PAPER, resign_statement, write
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.data.schema import Schema
from verifier.data.schema_file import load_schema
from verifier.releases.verification import MANIFEST, PREDICATE_TYPE_V1, dumps_manifest

GOLDEN = Path(__file__).parent / "data" / "golden"
SCHEMA = {"attributes": [
    {"name": "zip", "kind": "nominal", "role": "quasi_identifier", "categories": ["00501", "00502", "10001"]},
    {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
    {"name": "grade", "kind": "ordinal", "role": "sensitive", "categories": ["low", "mid", "high"]},
    {"name": "note", "kind": "nominal", "role": "other", "categories": ["true", "false"]},
]}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("datapackage")
    rows = ["zip,age,grade,note"] + [f"{['00501', '00502', '10001'][i % 3]},{20 + i % 50},"
                                     f"{['low', 'mid', 'high'][i % 3 - 1]},{['true', 'false'][i % 2]}" for i in range(90)]
    write(root / "x.csv", "\n".join(rows) + "\n")
    write(root / "schema.json", json.dumps(SCHEMA))
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(root / "x.csv"), "--schema", str(root / "schema.json"), "--method",
                      "rank_swapping", "--param", "p=10", "--seed", "2", "--key", str(root / "keys" / "private.pem"),
                      "--dataset-id", "Zip Codes / 2026", "--out", str(root / "rel")]) == 0
    return root


def _copy(made: Path, tmp_path: Path) -> Path:
    shutil.copytree(made / "rel", tmp_path / "rel")
    return tmp_path / "rel"


def test_the_package_types_what_a_csv_reader_would_guess_wrong(made):
    package = json.loads((made / "rel" / "datapackage.json").read_bytes())
    assert package["name"] == "zip-codes-2026" and package["title"] == "Zip Codes / 2026" and package["version"] == "1"
    resource = package["resources"][0]
    data = (made / "rel" / "release.csv").read_bytes()
    assert resource["path"] == "release.csv" and resource["mediatype"] == "text/csv"
    assert resource["hash"] == "sha256:" + hashlib.sha256(data).hexdigest() and resource["bytes"] == len(data)
    fields = {f["name"]: f for f in resource["schema"]["fields"]}
    assert fields["zip"]["type"] == "string" and fields["zip"]["constraints"]["enum"] == ["00501", "00502", "10001"]
    assert fields["grade"]["categoriesOrdered"] is True and fields["grade"]["categories"] == ["low", "mid", "high"]
    assert fields["note"]["type"] == "string"  # "true" and "false" are categories here, not booleans
    assert fields["age"]["type"] == "number" and fields["age"]["permuted_privacy:role"] == "quasi_identifier"
    assert resource["schema"]["missingValues"] == []
    statement = json.loads((made / "rel" / MANIFEST).read_bytes())
    listed = {e["name"]: e for e in statement["subject"]}
    assert listed["datapackage.json"]["digest"]["sha256"] == hashlib.sha256(
        (made / "rel" / "datapackage.json").read_bytes()).hexdigest()


def test_a_package_that_disagrees_with_the_manifest_is_refused(made, tmp_path, capsys):
    release = _copy(made, tmp_path)
    package = json.loads((release / "datapackage.json").read_bytes())
    package["resources"][0]["schema"]["fields"][0]["type"] = "integer"  # 00501 read as 501
    (release / "datapackage.json").write_bytes(dumps_manifest(package))

    def relist(statement: dict) -> None:  # the publisher's own key signs the changed package
        content = (release / "datapackage.json").read_bytes()
        entry = next(e for e in statement["subject"] if e["name"] == "datapackage.json")
        entry["digest"]["sha256"], entry["annotations"]["size"] = hashlib.sha256(content).hexdigest(), len(content)
    resign_statement(release, made / "keys" / "private.pem", relist)
    assert verifier(["verify", str(release), "--key", str(made / "keys" / "public.pem")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"FAIL: {release}/datapackage.json: DATAPACKAGE_MISMATCH: ") and "'resources'" in err


@pytest.mark.parametrize("case", ["v2 without the package", "v1 with the package"])
def test_each_format_version_lists_the_package_or_not(made, tmp_path, capsys, case):
    release = _copy(made, tmp_path)

    def mutate(statement: dict) -> None:
        if case == "v1 with the package":
            statement["predicateType"] = PREDICATE_TYPE_V1
        else:
            statement["subject"] = [e for e in statement["subject"] if e["name"] != "datapackage.json"]
            (release / "datapackage.json").unlink()
    resign_statement(release, made / "keys" / "private.pem", mutate)
    assert verifier(["verify", str(release), "--key", str(made / "keys" / "public.pem")]) == 1
    assert "SCHEMA_INVALID: a release of format version 2 lists datapackage.json" in capsys.readouterr().err


def test_the_version_1_golden_release_still_verifies(capsys):
    assert verifier(["verify", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem")]) == 0
    assert not (GOLDEN / "release" / "datapackage.json").exists()
    capsys.readouterr()


def test_schema_read_back_from_the_package_and_from_a_table_schema(made, tmp_path, capsys):
    expected = Schema.from_dict(SCHEMA)
    assert load_schema(made / "rel" / "datapackage.json") == expected
    table = json.loads((made / "rel" / "datapackage.json").read_bytes())["resources"][0]["schema"]
    assert load_schema(write(tmp_path / "table.json", json.dumps(table))) == expected
    plain = {"fields": [{"name": "zip", "type": "string", "constraints": {"enum": ["00501", "10001"]}},
                        {"name": "age", "type": "integer"},
                        {"name": "grade", "type": "string", "categories": ["low", "high"], "categoriesOrdered": True,
                         "permuted_privacy:role": "sensitive"}]}
    got = load_schema(write(tmp_path / "plain.json", json.dumps(plain)))
    assert [(a.name, a.kind, a.role, a.categories) for a in got.attributes] == [
        ("zip", "nominal", "quasi_identifier", ("00501", "10001")), ("age", "numeric", "quasi_identifier", None),
        ("grade", "ordinal", "sensitive", ("low", "high"))]
    # a release made with the package as its schema carries the same schema
    assert publisher(["release", "--input", str(made / "x.csv"), "--schema", str(made / "rel" / "datapackage.json"),
                      "--method", "rank_swapping", "--param", "p=10", "--seed", "3", "--key",
                      str(made / "keys" / "private.pem"), "--dataset-id", "again", "--out", str(tmp_path / "r2")]) == 0
    assert json.loads((tmp_path / "r2" / MANIFEST).read_bytes())["predicate"]["schema"] == SCHEMA
    capsys.readouterr()


@pytest.mark.parametrize("bad, message", [
    ({"fields": []}, "Table Schema"),
    ({"fields": [{"name": "d", "type": "date"}]}, "Frictionless type 'date'"),
    ({"fields": [{"name": "z", "type": "string", "categories": [{"value": 1, "label": "a"}]}]}, "labelled"),
    ({"resources": [{"path": "x.csv"}]}, "no resource with an inline Table Schema"),
])
def test_frictionless_schemas_we_cannot_read_are_one_fail_line(tmp_path, bad, message, capsys):
    from verifier.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as caught:
        load_schema(write(tmp_path / "s.json", json.dumps(bad)))
    assert caught.value.reason == "SCHEMA_INVALID" and message in caught.value.message


def test_publisher_schema_drafts_a_frictionless_table_schema(tmp_path, capsys):
    out = tmp_path / "schema.json"
    assert publisher(["schema", "--input", str(PAPER / "original.csv"), "--format", "frictionless",
                      "--sensitive", "x3", "--out", str(out)]) == 0
    drafted = json.loads(out.read_text())
    assert [f["type"] for f in drafted["fields"]] == ["number"] * 3
    assert [f["permuted_privacy:role"] for f in drafted["fields"]] == ["quasi_identifier"] * 2 + ["sensitive"]
    assert load_schema(out) == Schema.from_dict({"attributes": [
        {"name": "x1"}, {"name": "x2"}, {"name": "x3", "role": "sensitive"}]})
    capsys.readouterr()
