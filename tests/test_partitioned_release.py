"""The partitioned Parquet form of a release (docs/release-format.md, section 1.7; issue 16, item 1).

The same seed gives the same released table in one file and in parts; every
part is verified like the one data file, and a part changed after
verification is refused when it is read. Each negative case asserts the exit
code and the reason code on the one FAIL line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import PAPER, resign_statement
from publisher.cli import main as publisher
from publisher.keys import keygen
from verifier.cli import main as verifier
from verifier.releases.listed_files import ReleaseError
from verifier.releases.verification import MANIFEST, load_public_key, verify_release

ORIGINAL = PAPER / "original.csv"
SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "verify-by-hand.sh"
PARTS = [f"release-{i:05d}.parquet" for i in range(4)]


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    private, public, _, _ = keygen(d, None)
    return {"private": private, "public": public}


def _release(keys, out: Path, *extra: str) -> int:
    return publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--then", "reverse_mapping", "--seed", "5", "--format", "parquet",
                      "--key", str(keys["private"]), "--dataset-id", "parts", "--out", str(out), *extra])


@pytest.fixture(scope="module")
def built(keys, tmp_path_factory):
    d = tmp_path_factory.mktemp("built")
    assert _release(keys, d / "whole") == 0
    assert _release(keys, d / "parts", "--part-rows", "6") == 0
    return d


@pytest.fixture
def parts(built, tmp_path) -> Path:
    return shutil.copytree(built / "parts", tmp_path / "parts")


def _fail(path: Path, keys, capsys, reason: str) -> str:
    code = verifier(["verify", str(path), "--key", str(keys["public"])])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and f": {reason}: " in err[0], err
    return err[0]


def test_the_parts_are_the_whole_table_cut_by_rows(built, keys, capsys):
    key = load_public_key(keys["public"])
    whole, parts = verify_release(built / "whole", key), verify_release(built / "parts", key)
    assert sorted(os.listdir(built / "parts")) == ["datapackage.json", "manifest.dsse.json", "manifest.json", *PARTS]
    assert parts.data_files == PARTS and parts.data == b"" and [p[2] for p in parts.parts] == [
        (built / "parts" / name).stat().st_size for name in PARTS]
    assert np.array_equal(parts.table().values, whole.table().values)  # 6 + 6 + 6 + 2 rows, the same seed
    assert parts.claims == whole.claims
    assert verifier(["verify", str(built / "parts"), "--key", str(keys["public"]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["data_file"]
    assert shown == {"name": PARTS[0], "size": parts.data_size, "parts": PARTS}
    statement = json.loads((built / "parts" / MANIFEST).read_bytes())
    assert [s["name"] for s in statement["subject"][:4]] == PARTS
    assert {s["mediaType"] for s in statement["subject"][:4]} == {"application/vnd.apache.parquet"}
    package = json.loads((built / "parts" / "datapackage.json").read_bytes())
    assert [r["name"] for r in package["resources"]] == [p[:-8] for p in PARTS]


def test_audit_and_a_subjects_check_read_the_parts(built, keys, tmp_path, capsys):
    record = tmp_path / "me.json"
    record.write_text('{"x1": 100.87, "x2": 902.21, "x3": 5108.54}\n')
    reports = {}
    for form in ("whole", "parts"):
        base = [str(built / form), "--key", str(keys["public"])]
        assert verifier(["audit", *base, "--original", str(ORIGINAL)]) == 0
        capsys.readouterr()
        assert verifier(["check", *base, "--record", str(record), "--json"]) == 0
        reports[form] = {k: v for k, v in json.loads(capsys.readouterr().out).items() if k != "release"}
    assert reports["parts"] == reports["whole"]


def test_independent_tools_accept_a_partitioned_release(built, keys, tmp_path):
    """The hand check (bash, jq, OpenSSL) lists and hashes every part; frictionless validates every resource."""
    done = subprocess.run(["bash", str(SCRIPT), str(built / "parts"), str(keys["public"])], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    frictionless = shutil.which("frictionless") or str(Path(os.sys.executable).parent / "frictionless")
    done = subprocess.run([frictionless, "validate", "datapackage.json", "--skip-errors", "byte-count,hash-count"],
                          capture_output=True, text=True, cwd=built / "parts", timeout=120)
    assert done.returncode == 0 and done.stdout.count("VALID") >= 4, done.stdout


@pytest.mark.parametrize("defect, reason", [
    ("flipped byte", "DIGEST_MISMATCH"),
    ("part missing", "FILE_MISSING"),
    ("extra part", "UNLISTED_FILE"),
    ("part is a link", "UNSAFE_PATH"),
    ("byte appended", "SIZE_MISMATCH"),
])
def test_each_part_is_verified_like_the_data_file(parts, keys, capsys, defect, reason):
    target = parts / PARTS[2]
    if defect == "flipped byte":
        raw = bytearray(target.read_bytes())
        raw[40] ^= 1
        target.write_bytes(bytes(raw))
    elif defect == "part missing":
        target.unlink()
    elif defect == "extra part":
        shutil.copy(target, parts / "release-00004.parquet")
    elif defect == "part is a link":
        target.rename(parts.parent / "elsewhere.parquet")
        target.symlink_to(parts.parent / "elsewhere.parquet")
    else:
        target.write_bytes(target.read_bytes() + b"\0")
    line = _fail(parts, keys, capsys, reason)
    assert (PARTS[2] if defect != "extra part" else "release-00004.parquet") in line


@pytest.mark.parametrize("change, message", [
    ("gap", "entry 2 is release-00002.parquet"),
    ("order", "entry 1 is release-00001.parquet"),
    ("media type", "the media type of release-00001.parquet must be application/vnd.apache.parquet"),
    ("one file besides", "exactly one data file"),
])
def test_the_statement_must_list_the_parts_in_order(parts, keys, capsys, change, message):
    """A publisher who re-signs a statement with parts missing, reordered, mistyped, or mixed with a data file."""
    def mutate(statement):
        subject = statement["subject"]
        if change == "gap":
            del subject[1]
        elif change == "order":
            subject[0], subject[1] = subject[1], subject[0]
        elif change == "media type":
            subject[1]["mediaType"] = "text/csv"
        else:
            subject.append({**subject[0], "name": "release.parquet"})
    if change == "gap":
        (parts / PARTS[1]).unlink()
    if change == "one file besides":
        shutil.copy(parts / PARTS[0], parts / "release.parquet")
    resign_statement(parts, keys["private"], mutate)
    assert message in _fail(parts, keys, capsys, "SCHEMA_INVALID")


def test_a_part_changed_after_verification_is_refused_when_read(parts, keys):
    release = verify_release(parts, load_public_key(keys["public"]))
    (parts / PARTS[1]).unlink()
    shutil.copy(parts / PARTS[0], parts / PARTS[1])  # another valid Parquet part, swapped in
    with pytest.raises(ReleaseError) as failed:
        release.table()
    assert failed.value.reason == "SIZE_MISMATCH" or failed.value.reason == "DIGEST_MISMATCH"
    assert failed.value.path.endswith(PARTS[1])


def test_part_rows_usage(keys, tmp_path, capsys):
    assert publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--part-rows", "5", "--key", str(keys["private"]), "--dataset-id", "d",
                      "--out", str(tmp_path / "csv")]) == 2
    assert "--part-rows" in capsys.readouterr().err
    assert _release(keys, tmp_path / "zero", "--part-rows", "0") == 2  # outside its range as it is parsed
    assert "argument --part-rows: 0 is outside its range" in capsys.readouterr().err
    for method, param, code in (("microaggregation", "k=3", 0), ("sd_k_anonymity", "k=4", 3)):
        assert publisher(["release", "--input", str(ORIGINAL), "--method", method, "--param", param,
                          "--format", "parquet", "--part-rows", "7", "--key", str(keys["private"]),
                          "--dataset-id", "d", "--out", str(tmp_path / method)]) == code
    assert [p.name for p in sorted((tmp_path / "microaggregation").glob("release-*"))] == PARTS[:3]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "PARAMETER_INVALID" in err[0] and "a generalized release is published as one" in err[0]
    assert not any((tmp_path / name).exists() for name in ("csv", "zero", "sd_k_anonymity"))
