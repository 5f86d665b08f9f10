"""What an SDC report carries, in the manifest (issue 18, item 5): risks of the original and the release,
the runtime environment, who published it, and the protector-only link shares kept out of the public manifest."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from importlib import metadata
from pathlib import Path

import pytest

from conftest import PAPER, resign_statement
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.releases.verification import MANIFEST

ORIGINAL = PAPER / "original.csv"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    assert publisher(["keygen", "--out", str(d), "--unencrypted"]) == 0
    return d / "private.pem", d / "public.pem"


def _release(tmp: Path, keys, *extra: str, source: Path = ORIGINAL, out: str = "rel") -> int:
    return publisher(["release", "--input", str(source), *extra, "--seed", "4", "--key", str(keys[0]),
                      "--dataset-id", "d", "--out", str(tmp / out)])


def _predicate(release: Path) -> dict:
    return json.loads((release / MANIFEST).read_bytes())["predicate"]


NOISE = ["--method", "additive_noise", "--param", "relative_sd=0.5", "--then", "reverse_mapping"]


def test_environment_and_release_metadata(tmp_path, keys, capsys):
    assert _release(tmp_path, keys, *NOISE, "--publisher", "Office of Statistics", "--contact", "sdc@example.org",
                    "--purpose", "teaching file", "--license", "CC-BY-4.0") == 0
    predicate = _predicate(tmp_path / "rel")
    assert predicate["release_metadata"] == {"publisher": "Office of Statistics", "contact": "sdc@example.org",
                                             "purpose": "teaching file", "license": "CC-BY-4.0"}
    env = predicate["environment"]
    assert env["numpy"] == metadata.version("numpy") and env["numba"] == metadata.version("numba")
    assert env["pyarrow"] == metadata.version("pyarrow") and env["python"].split()[1] == \
        ".".join(map(str, __import__("sys").version_info[:3]))
    capsys.readouterr()
    assert verifier(["verify", str(tmp_path / "rel"), "--key", str(keys[1]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["release_metadata"]["license"] == "CC-BY-4.0" and shown["environment"] == env
    assert verifier(["verify", str(tmp_path / "rel"), "--key", str(keys[1])]) == 0
    assert 'published by: publisher "Office of Statistics"; contact "sdc@example.org"' in capsys.readouterr().out


@pytest.mark.parametrize("flag, value", [("--license", "not a licence!"), ("--purpose", "two\nlines"),
                                         ("--publisher", " "), ("--contact", "x\u202ey")])
def test_bad_release_metadata_is_refused_before_anything_is_written(tmp_path, keys, capsys, flag, value):
    assert _release(tmp_path, keys, *NOISE, flag, value) == 3
    err = capsys.readouterr().err
    assert "PARAMETER_INVALID" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "rel").exists() and not (tmp_path / "rel.protector.json").exists()


def test_protector_only_shares_stay_out_of_the_public_manifest(tmp_path, keys, capsys):
    assert _release(tmp_path, keys, *NOISE) == 0
    assert "protector_only" not in _predicate(tmp_path / "rel")["claims"]
    report = tmp_path / "rel.protector.json"
    assert stat.S_IMODE(os.stat(report).st_mode) == 0o600
    shares = json.loads(report.read_text())["protector_only"]
    links = ("correct_link_share", "multiple_match_share", "misidentified_share")
    assert set(shares) == {*links, "unchanged_records"} and shares["unchanged_records"] == 0
    assert abs(sum(shares[k] for k in links) - 1.0) < 1e-12  # every record is linked correctly, to several, or wrongly
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--original", str(ORIGINAL),
                     "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert not any(u["figure"].startswith("protector_only") for u in audit["unchecked"])
    # on request they are published (and listed as unchecked), and the report keeps only the records not protected
    assert _release(tmp_path, keys, *NOISE, "--publish-protector-figures", out="pub") == 0
    assert _predicate(tmp_path / "pub")["claims"]["protector_only"] == shares
    published = json.loads((tmp_path / "pub.protector.json").read_text())
    assert published["protector_only"] is None and published["records_not_protected"]["columns"] == ["row", "level",
                                                                                                     "rule"]
    # an existing report is never overwritten, and then nothing is released
    report.write_text("mine")
    assert _release(tmp_path, keys, *NOISE, "--protector-report", str(report), out="again") == 4
    assert "OUTPUT_EXISTS" in capsys.readouterr().err and report.read_text() == "mine"
    assert not (tmp_path / "again").exists()


def _schema(tmp: Path) -> Path:
    """Quasi-identifiers age, sex and zone, and the sensitive disease."""
    schema = tmp / "schema.json"
    schema.write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "zone", "kind": "nominal", "role": "quasi_identifier", "categories": ["a", "b", "c"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "hiv"]}]}))
    return schema


def test_risks_of_the_original_and_the_release_on_a_generalized_release(tmp_path, keys, capsys):
    rows = ["age,sex,zone,disease"] + [f"{20 + (i * 7) % 40},{'FM'[i % 2]},{'abc'[i % 3]},{['flu', 'hiv'][i % 5 == 0]}"
                                      for i in range(60)]
    source = tmp_path / "x.csv"
    source.write_text("\n".join(rows) + "\n")
    schema = _schema(tmp_path)
    assert _release(tmp_path, keys, "--schema", str(schema), "--method", "sd_k_anonymity", "--param", "k=4",
                    source=source) == 0
    claims = _predicate(tmp_path / "rel")["claims"]
    # the original, counted by hand: each record's class on (age, sex, zone)
    sizes = Counter(tuple(r.split(",")[:3]) for r in rows[1:])
    per_record = [sizes[tuple(r.split(",")[:3])] for r in rows[1:]]
    original = claims["risk_original"]
    assert original["k"] == min(per_record)
    assert original["records_below_2"] == sum(s < 2 for s in per_record)
    assert original["records_below_3"] == sum(s < 3 for s in per_record)
    assert original["prosecutor"]["max"] == 1 / min(per_record)
    assert original["expected_reidentifications"] == pytest.approx(len(sizes))
    assert original["marketer"] == pytest.approx(len(sizes) / 60)
    release = claims["reidentification"]
    assert release["k"] == claims["k"] >= 4 and release["records_below_2"] == release["records_below_3"] == 0
    assert release["prosecutor"]["max"] <= 1 / 4 < original["prosecutor"]["max"]
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert {"reidentification.k", "reidentification.marketer"} <= {c["claim"] for c in alone["checks"]}
    assert {"risk_original.k"} <= {u["figure"] for u in alone["unchecked"]}
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--original", str(source), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert {c["claim"] for c in full["checks"] if c["claim"].startswith("risk_original")} >= {
        "risk_original.k", "risk_original.records_below_2", "risk_original.expected_reidentifications"}

    def understate(statement: dict) -> None:  # the publisher's own key signs an original that looks safer
        statement["predicate"]["claims"]["risk_original"]["records_below_2"] = 0
    resign_statement(tmp_path / "rel", keys[0], understate)
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--original", str(source)]) == 1
    assert "risk_original.records_below_2" in capsys.readouterr().out


def test_information_loss_il1s_and_eigenvalues(tmp_path, keys, capsys):
    """IL1s (needs the pairing: the protector's figure) and the eigenvalue difference (the auditor recomputes it)."""
    import numpy as np

    from verifier.attacks.assessment import eigenvalue_difference
    from verifier.data.tables import read_table

    assert _release(tmp_path, keys, "--method", "additive_noise", "--param", "relative_sd=0.5") == 0
    utility = _predicate(tmp_path / "rel")["utility"]
    x = read_table(ORIGINAL).values
    # by hand: the released rows are shuffled, so the pairing is the protector's; IL1s is noise-sized here
    assert 0 < utility["il1s"] < 1 and utility["il1s"] == pytest.approx(utility["distortion"] / np.sqrt(2))
    y = read_table(tmp_path / "rel" / "release.csv").values
    lx, ly = np.linalg.eigvalsh(np.corrcoef(x, rowvar=False)), np.linalg.eigvalsh(np.corrcoef(y, rowvar=False))
    assert utility["eigenvalue_difference"] == pytest.approx(np.abs(lx - ly).sum() / 3, rel=1e-12)
    assert eigenvalue_difference(x, x) == 0.0 and eigenvalue_difference(x[:, :1], y[:, :1]) is None
    capsys.readouterr()
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--original", str(ORIGINAL),
                     "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert "utility.eigenvalue_difference" in {c["claim"] for c in audit["checks"]}
    assert {"figure": "utility.il1s", "reason": "needs the secret pairing of released and original rows"} \
        in audit["unchecked"]


def test_dropped_direct_identifiers_are_named_and_never_released(tmp_path, keys, capsys):
    lines = ORIGINAL.read_text().splitlines()
    source = tmp_path / "x.csv"
    source.write_text("\n".join([lines[0] + ",name,ssn"] + [f"{r},Person {i},{100000 + i}"
                                                             for i, r in enumerate(lines[1:])]) + "\n")
    assert _release(tmp_path, keys, *NOISE, "--drop-identifier", "name", "--drop-identifier", "ssn",
                    source=source) == 0
    predicate = _predicate(tmp_path / "rel")
    assert predicate["dropped_identifiers"] == ["name", "ssn"]
    assert [a["name"] for a in predicate["schema"]["attributes"]] == ["x1", "x2", "x3"]
    data = (tmp_path / "rel" / "release.csv").read_text()
    assert "Person" not in data and "100000" not in data and "name" not in data.splitlines()[0]
    capsys.readouterr()
    assert verifier(["verify", str(tmp_path / "rel"), "--key", str(keys[1])]) == 0
    assert 'direct identifiers dropped: "name", "ssn"' in capsys.readouterr().out
    # a name that is not a column, or a column the schema would release, is refused
    assert _release(tmp_path, keys, *NOISE, "--drop-identifier", "email", source=source, out="r2") == 3
    assert "COLUMN_MISSING" in capsys.readouterr().err
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"attributes": [{"name": "x1"}, {"name": "name", "kind": "nominal"}]}))
    assert _release(tmp_path, keys, "--schema", str(schema), *NOISE, "--drop-identifier", "name", source=source,
                    out="r3") == 3
    assert "IDENTIFIER_RELEASED" in capsys.readouterr().err
    assert not (tmp_path / "r2").exists() and not (tmp_path / "r3").exists()


def _weighted_source(tmp: Path) -> tuple[Path, Path, list[list[str]]]:
    """60 records on (age, sex, zone) with a sensitive disease and design weights 1.5 .. 30."""
    rows = [[str(20 + (i * 7) % 40), "FM"[i % 2], "abc"[i % 3], ["flu", "hiv"][i % 5 == 0], str(1.5 + (i * 13) % 29)]
            for i in range(60)]
    source = tmp / "w.csv"
    source.write_text("\n".join(["age,sex,zone,disease,w"] + [",".join(r) for r in rows]) + "\n")
    return source, _schema(tmp), rows


def _by_hand(rows: list[list[str]]) -> dict:
    """F = the sum of the weights of each record's class on (age, sex, zone), at least its size f."""
    f, total = Counter(), Counter()
    for r in rows:
        f[tuple(r[:3])] += 1
        total[tuple(r[:3])] += float(r[4])
    inv = [1 / max(total[tuple(r[:3])], f[tuple(r[:3])]) for r in rows]
    return {"max": max(inv), "mean": sum(inv) / len(inv), "expected": sum(inv)}


@pytest.mark.parametrize("method", [["--method", "sd_k_anonymity", "--param", "k=4"],
                                    ["--method", "rank_swapping", "--param", "p=5"]])
def test_sampling_weights_estimate_the_population(tmp_path, keys, capsys, method):
    source, schema, rows = _weighted_source(tmp_path)
    assert _release(tmp_path, keys, "--schema", str(schema), *method, "--weight-column", "w", source=source) == 0
    predicate = _predicate(tmp_path / "rel")
    assert predicate["sampling_weights"]["column"] == "w"
    assert "w" not in [a["name"] for a in predicate["schema"]["attributes"]]
    original = predicate["claims"]["risk_original"]
    hand = _by_hand(rows)
    assert original["journalist"]["max"] == pytest.approx(hand["max"], rel=1e-12)
    assert original["journalist"]["mean"] == pytest.approx(hand["mean"], rel=1e-12)
    assert original["marketer"] == pytest.approx(hand["mean"], rel=1e-12)
    assert original["expected_reidentifications"] == pytest.approx(hand["expected"], rel=1e-12)
    assert original["prosecutor"]["max"] > original["journalist"]["max"]  # the population hides the sample's uniques
    assert original["population"].startswith("estimated from the sampling weights")
    # weights.csv: the same weights, row for row with the released records, listed in the data package
    published = (tmp_path / "rel" / "weights.csv").read_text().splitlines()
    assert published[0] == "weight" and len(published) == 61
    assert sorted(float(v) for v in published[1:]) == sorted(float(r[4]) for r in rows)
    package = json.loads((tmp_path / "rel" / "datapackage.json").read_text())
    assert [r["path"] for r in package["resources"]] == ["release.csv", "weights.csv"]
    capsys.readouterr()
    assert verifier(["verify", str(tmp_path / "rel"), "--key", str(keys[1])]) == 0
    assert 'sampling weights: column "w"' in capsys.readouterr().out
    # the audit recomputes both sides with the weights: the release's from weights.csv, the original's from w
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--original", str(source),
                     "--json"]) == 0
    checked = {c["claim"] for c in json.loads(capsys.readouterr().out)["checks"]}
    assert {"reidentification.journalist.mean", "risk_original.journalist.mean"} <= checked
    # an original without the weight column: the original's risks are listed as not checked, with the reason
    plain = tmp_path / "plain.csv"
    plain.write_text("\n".join(["age,sex,zone,disease"] + [",".join(r[:4]) for r in rows]) + "\n")
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(keys[1]), "--original", str(plain), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert {"figure": "risk_original.journalist.mean",
            "reason": "needs the original's sampling weights (its weight column, in --original)"} in audit["unchecked"]


def test_weights_that_lie_are_caught(tmp_path, keys, capsys):
    source, schema, rows = _weighted_source(tmp_path)
    assert _release(tmp_path, keys, "--schema", str(schema), "--method", "sd_k_anonymity", "--param", "k=4",
                    "--weight-column", "w", source=source) == 0
    rel = tmp_path / "rel"

    def inflate(statement: dict) -> None:  # the publisher's own key signs a population ten times larger
        lines = (rel / "weights.csv").read_text().splitlines()
        content = ("\n".join([lines[0]] + [repr(float(v) * 10) for v in lines[1:]]) + "\n").encode()
        (rel / "weights.csv").write_bytes(content)
        entry = next(e for e in statement["subject"] if e["name"] == "weights.csv")
        entry["digest"]["sha256"] = __import__("hashlib").sha256(content).hexdigest()
        entry["annotations"]["size"] = len(content)
        package = json.loads((rel / "datapackage.json").read_text())
        package["resources"][1].update(hash=f"sha256:{entry['digest']['sha256']}", bytes=len(content))
        raw = (json.dumps(package, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
        (rel / "datapackage.json").write_bytes(raw)
        listed = next(e for e in statement["subject"] if e["name"] == "datapackage.json")
        listed["digest"]["sha256"] = __import__("hashlib").sha256(raw).hexdigest()
        listed["annotations"]["size"] = len(raw)
    resign_statement(rel, keys[0], inflate)
    capsys.readouterr()
    assert verifier(["verify", str(rel), "--key", str(keys[1])]) == 0  # signed: it verifies
    capsys.readouterr()
    # but the release's risks, recomputed from the weights it carries, are not the ones it claims
    assert verifier(["audit", str(rel), "--key", str(keys[1]), "--original", str(source), "--json"]) == 1
    audit = json.loads(capsys.readouterr().out)
    failed = {c["claim"] for c in audit["checks"] if not c["ok"]}
    assert "reidentification.journalist.mean" in failed


@pytest.mark.parametrize("transform, problem", [
    (lambda values: ["0", *values[1:]], "weight"),
    (lambda values: ["many", *values[1:]], "many"),
    (lambda values: values[1:], "59 weights for 60 released records"),
])
def test_signed_weights_that_are_no_weights_do_not_verify(tmp_path, keys, capsys, transform, problem):
    """verify checks what a signed weights.csv holds, not only its digest (issue 27, item 5)."""
    import hashlib

    source, schema, rows = _weighted_source(tmp_path)
    assert _release(tmp_path, keys, "--schema", str(schema), "--method", "sd_k_anonymity", "--param", "k=4",
                    "--weight-column", "w", source=source) == 0
    rel = tmp_path / "rel"

    def replace(statement: dict) -> None:
        lines = (rel / "weights.csv").read_text().splitlines()
        content = ("\n".join([lines[0], *transform(lines[1:])]) + "\n").encode()
        (rel / "weights.csv").write_bytes(content)
        entry = next(e for e in statement["subject"] if e["name"] == "weights.csv")
        entry["digest"]["sha256"], entry["annotations"]["size"] = hashlib.sha256(content).hexdigest(), len(content)
        package = json.loads((rel / "datapackage.json").read_text())
        package["resources"][1].update(hash=f"sha256:{entry['digest']['sha256']}", bytes=len(content))
        raw = (json.dumps(package, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
        (rel / "datapackage.json").write_bytes(raw)
        listed = next(e for e in statement["subject"] if e["name"] == "datapackage.json")
        listed["digest"]["sha256"], listed["annotations"]["size"] = hashlib.sha256(raw).hexdigest(), len(raw)

    resign_statement(rel, keys[0], replace)
    capsys.readouterr()
    assert verifier(["verify", str(rel), "--key", str(keys[1])]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "weights.csv: DATA_MALFORMED: " in err and problem in err, err


@pytest.mark.parametrize("cell, reason", [("0", "WEIGHT_INVALID"), ("-2", "WEIGHT_INVALID"), ("NA", "MISSING_VALUE")])
def test_a_bad_weight_is_refused_naming_its_row(tmp_path, keys, capsys, cell, reason):
    source, schema, rows = _weighted_source(tmp_path)
    lines = source.read_text().splitlines()
    lines[7] = lines[7].rsplit(",", 1)[0] + "," + cell
    source.write_text("\n".join(lines) + "\n")
    assert _release(tmp_path, keys, "--schema", str(schema), "--method", "sd_k_anonymity", "--param", "k=4",
                    "--weight-column", "w", source=source) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'w'" in err and "7" in err, err
    assert not (tmp_path / "rel").exists()
    # the weight column is no attribute: a schema that lists it is refused
    schema.write_text(schema.read_text().replace('"disease"', '"w", "kind": "numeric"}, {"name": "disease"', 1))
    assert _release(tmp_path, keys, "--schema", str(schema), "--method", "sd_k_anonymity", "--param", "k=4",
                    "--weight-column", "w", source=source, out="r2") == 3
