"""Closed on every side, third round (issue 52, item 1): each defect the red team reproduced, with a test that fails
on the code before its fix."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import resign_statement
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.frontend.output import text_table

ROOT = Path(__file__).resolve().parents[1]
ARX = ROOT / "docs" / "examples" / "arx"
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"


def _arx_release(tmp_path: Path) -> Path:
    columns = ["age", "education", "marital-status", "race", "sex", "salary-class"]
    with (tmp_path / "input.csv").open("w", newline="") as handle:
        out = csv.DictWriter(handle, columns, extrasaction="ignore")
        out.writeheader()
        out.writerows(csv.DictReader(SAMPLE.open()))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    trees = [a for c in ("age", "education", "marital-status", "race", "sex")
             for a in ("--hierarchy", f"{c}={ARX / f'adult_hierarchy_{c}.csv'}")]
    assert publisher(["release", "--input", str(tmp_path / "input.csv"), "--schema", str(ARX / "adult-arx.json"),
                      "--anonymized", str(ARX / "arx_global_suppression5.csv"), "--produced-by", "ARX 3.9.2", *trees,
                      "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "adult-arx", "--out",
                      str(tmp_path / "release")]) == 0
    return tmp_path / "release"


def test_an_audit_at_80_columns_lists_claims_too_long_for_a_table(tmp_path):
    """The audit of docs/methods.md's own ARX example ended in a RecursionError at 80 columns: a claim's name beside
    any one column passes the width. Each claim is now a row of its own, its figures under it."""
    release = _arx_release(tmp_path)
    done = subprocess.run([sys.executable, "-m", "verifier", "audit", str(release), "--key",
                           str(tmp_path / "keys" / "public.pem"), "--original", str(tmp_path / "input.csv")],
                          capture_output=True, text=True, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"}, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    at = lines.index("utility.attribute_disclosure_of_original_records.salary-class.mean_candidates")
    assert lines[at + 1].startswith("  manifest: ") and lines[at + 3] == "  verdict: true"
    assert lines[-1].startswith("AUDIT PASSED") or lines[-2].startswith("AUDIT PASSED")
    assert all(len(line) <= 80 for line in lines if " " in line.strip())


def test_a_table_whose_first_column_alone_is_too_wide_is_listed():
    wide = "x" * 70
    rows = [[wide, "12345", "abcdef"], ["short", "1", "2"]]
    text = text_table(rows, ["name", "manifest", "recomputed"], width=72)
    assert text.split("\n") == [wide, "  manifest: 12345", "  recomputed: abcdef", "short", "  manifest: 1",
                                "  recomputed: 2"]
    assert text_table(rows, ["name", "manifest", "recomputed"], width=None).startswith("name")  # no limit: a table


def test_a_policy_that_takes_the_defaults_name_is_refused(tmp_path):
    """A lax policy named "permuted-privacy default", version 1, turned AT RISK into PROTECTED with only its SHA-256
    to tell it apart; the default's own bytes still load, and any other name is the policy's to choose."""
    from importlib import resources

    from verifier.errors import InvalidInputError
    from verifier.releases.policy import default_policy, load_policy

    lax = {"name": "permuted-privacy default", "version": 1, "rules": [
        {"id": "alone", "figure": "class_size", "below": 2, "level": "exposed"}]}
    for name in ("permuted-privacy default", "PERMUTED-PRIVACY  DEFAULT ", "\tpermuted-privacy\ndefault"):
        (tmp_path / "p.json").write_text(json.dumps({**lax, "name": name}))
        with pytest.raises(InvalidInputError) as info:
            load_policy(tmp_path / "p.json")
        assert info.value.reason == "POLICY_INVALID" and info.value.message.startswith(
            "$.name: \"permuted-privacy default\" names the verifier's own policy, and this file is not it")
    own = resources.files("verifier.releases").joinpath("verdict-policy.json").read_bytes()
    (tmp_path / "copy.json").write_bytes(own)
    assert load_policy(tmp_path / "copy.json") == default_policy()
    (tmp_path / "mine.json").write_text(json.dumps({**lax, "name": "permuted-privacy default (lenient)"}))
    assert load_policy(tmp_path / "mine.json").name == "permuted-privacy default (lenient)"
