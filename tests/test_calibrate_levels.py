"""``publisher calibrate --target``: every method swept against the level targets (issue 60, item 6).

Each value's release is judged as ``publisher release --target`` judges it (every record's level under the verdict
policy, the same secret draws for every value); the frontier is exposure against information loss, and the chosen
value the least lossy one that meets the targets. The tests hold its counts to the ones a real release signs, run it
for every method with a parameter, and follow its refusals.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import clinic
from publisher.calibrate_levels import loss_key
from publisher.cli import main as publisher

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
ARX = ROOT / "docs" / "examples" / "arx" / "adult-arx.json"


def _calibrate(capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = publisher(["calibrate", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_each_value_is_judged_as_the_release_signs_it(tmp_path, capsys):
    """SD k-anonymity on the Adult sample: the records exposed, at risk and protected at each k are the counts the
    real release with that k and seed signs, and no k meets max_exposed=0 (exit 1)."""
    code, found = _calibrate(capsys, "--input", str(SAMPLE), "--schema", str(ARX), "--method", "sd_k_anonymity",
                             "--param-grid", "k=5,20", "--seed", "1", "--target", "max_exposed=0")
    assert code == 1 and found["chosen"] is None and found["targets"] == {"max_exposed": 0}
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    for row in found["frontier"]:
        out = tmp_path / f"k{row['value']}"
        assert publisher(["release", "--input", str(SAMPLE), "--schema", str(ARX), "--method", "sd_k_anonymity",
                          "--param", f"k={row['value']}", "--seed", "1", "--key",
                          str(tmp_path / "keys" / "private.pem"),
                          "--dataset-id", "sd", "--out", str(out)]) == 0
        signed = json.loads((out / "manifest.json").read_text())["predicate"]
        levels = signed["claims"]["policy_levels"]
        assert [row[k] for k in ("exposed", "at_risk", "protected")] == [levels[k] for k in
                                                                         ("exposed", "at_risk", "protected")]
        assert row["ncp"] == signed["utility"]["ncp"] and row["misses"] == ["max_exposed"]
    assert [r["exposed"] for r in found["frontier"]] == [1412, 557]


def test_the_least_lossy_value_that_meets_the_targets_is_chosen_and_publishes(tmp_path, capsys):
    """Two-step generalization over alpha_sa: NCP is the same at every alpha_sa (step one reads the quasi-identifiers
    alone), so the masks' loss (SA.DR) decides; the chosen value's release meets the target."""
    code, found = _calibrate(capsys, "--input", str(SAMPLE), "--schema", str(ARX), "--method",
                             "multi_sensitive_generalization", "--param", "alpha_qi=0.95", "--param-grid",
                             "alpha_sa=0.5,0.7,0.9", "--seed", "1", "--target", "max_exposed=0", "--plot",
                             str(tmp_path / "frontier.png"))
    rows = found["frontier"]
    meeting = [r for r in rows if r["meets_targets"]]
    assert code == 0 and found["chosen"] == min(meeting, key=loss_key) and found["chosen"]["value"] == 0.7
    assert len({r["ncp"] for r in rows}) == 1 and [r["sa_distortion_ratio"] for r in rows] == sorted(
        (r["sa_distortion_ratio"] for r in rows), reverse=True)
    assert not rows[-1]["meets_targets"] and rows[-1]["exposed"] > 0
    assert (tmp_path / "frontier.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(SAMPLE), "--schema", str(ARX), "--method",
                      "multi_sensitive_generalization", "--param", "alpha_qi=0.95", "--param", "alpha_sa=0.7",
                      "--seed", "1", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "two",
                      "--out", str(tmp_path / "two"), "--target", "max_exposed=0"]) == 0


@pytest.mark.parametrize("method, grid, extra", [
    ("sd_k_anonymity", "k=2,4", []),
    ("multi_sensitive_generalization", "k=2,4", ["--param", "alpha_sa=0.5"]),
    ("m_invariant", "m=2,3", []),
    ("randomized_response", "keep_probabilities=0.6,0.9", []),
    ("random_attribute_replacement", "k=1,2", []),
    ("additive_noise", "relative_sd=0.5,1", ["--then", "reverse_mapping"]),
])
def test_every_method_with_a_parameter_is_swept(tmp_path, capsys, method, grid, extra):
    """Every method with a parameter, on a small clinic: each value's levels add up to the records checked, or the
    value is listed as refused with the release's own reason; the chosen value is the least lossy of those meeting
    the targets."""
    clinic(tmp_path, 40)
    code, found = _calibrate(capsys, "--input", str(tmp_path / "x.csv"), "--schema", str(tmp_path / "schema.json"),
                             "--method", method, "--param-grid", grid, *extra, "--seed", "2", "--samples", "100",
                             "--allow-degenerate", "--allow-uninformative", "--target", "max_at_risk_share=1")
    assert len(found["frontier"]) == 2  # a row per value, as the method reads it
    judged = [r for r in found["frontier"] if r["refused"] is None]
    for r in found["frontier"]:
        if r["refused"] is not None:
            assert r["refused"].isupper() and r["why"] and not r["meets_targets"]
    for r in judged:
        assert r["exposed"] + r["at_risk"] + r["protected"] == r["checked"] == 40
        assert (r["ncp"] is not None) == (r["model"] == "generalized") and r["meets_targets"]
    assert code == (0 if judged else 1)
    if judged:
        assert found["chosen"] == min(judged, key=loss_key)


def test_refusals_and_usage(tmp_path, capsys):
    """A value whose release is refused is a row that says why; with no value meeting the targets the command exits
    1; the distance targets of the ranked frontier are given as --target beside the level targets."""
    code, found = _calibrate(capsys, "--input", str(SAMPLE), "--schema", str(ARX), "--method",
                             "multi_sensitive_generalization", "--param", "alpha_sa=0.7", "--param-grid",
                             "k=2,5000", "--seed", "1", "--target", "max_exposed=0")
    refused = found["frontier"][1]
    assert refused["refused"] == "TARGET_INFEASIBLE" and "fewer than 5000 records" in refused["why"]
    assert code == 0 and found["chosen"]["value"] == 2
    capsys.readouterr()
    assert publisher(["calibrate", "--input", str(SAMPLE), "--schema", str(ARX), "--method", "sd_k_anonymity",
                      "--param-grid", "k=5", "--target", "max_exposed=0", "--max-linked-share", "0.1"]) == 2
    assert "--max-linked-share judges the frontier of distances and links" in capsys.readouterr().err
    assert publisher(["calibrate", "--input", str(SAMPLE), "--schema", str(ARX), "--method", "sd_k_anonymity",
                      "--param-grid", "q=5", "--target", "max_exposed=0"]) == 3
    assert "PARAMETER_UNKNOWN" in capsys.readouterr().err
