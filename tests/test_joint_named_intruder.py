"""Several releases under the named intruder (issue 50, item 2).

- Joint posteriors are Bayes' rule with the base-rate prior: ``prod_j P_j(v) / prior(v)^(m-1)``, normalised.
- The same release (the same manifest digest) given twice counts once, with a line saying so; two versions of one
  dataset are two releases.
- The joint level is never milder than the worst level alone, and its headline names the release that decides it.
- Where a release's cells overlap, the joint figure is the worst combination of the classes she could be in.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from publisher.cli import main as publisher
from verifier.attacks.composition import joint_candidates
from verifier.cli import main as verifier

PAPER = Path(str(resources.files("verifier") / "data" / "paper"))


def test_the_joint_posterior_is_bayes_rule_with_the_base_rate():
    # two releases, each already the posterior under the base rate (a: 0.8, b: 0.2)
    shares = [{"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5}]
    prior = {"a": 0.8, "b": 0.2}
    # each release alone moved b from 0.2 to 0.5 (a likelihood ratio of 4): both together give 16 : 1 * 4 / 4 ...
    # P(v) ~ prod P_j(v) / prior(v): a ~ 0.25 / 0.8, b ~ 0.25 / 0.2
    joint = joint_candidates(shares, prior)
    total = 0.25 / 0.8 + 0.25 / 0.2
    assert joint == pytest.approx({"b": (0.25 / 0.2) / total, "a": (0.25 / 0.8) / total})
    assert list(joint) == ["b", "a"] and joint["b"] == pytest.approx(0.8)
    assert joint_candidates(shares) == {"a": 0.5, "b": 0.5}  # the uniform prior of the plain product
    # three releases: the prior is divided out twice
    three = joint_candidates([{"a": 0.6, "b": 0.4}] * 3, {"a": 0.6, "b": 0.4})
    assert three == pytest.approx({"a": 0.6, "b": 0.4})  # releases that tell nothing together tell nothing


def _hospital(tmp_path: Path) -> list[Path]:
    (tmp_path / "original.csv").write_text("age,sex,disease\n34,F,HIV\n36,F,flu\n31,M,cancer\n45,M,cold\n"
                                           "33,F,flu\n38,F,HIV\n")
    (tmp_path / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["HIV", "cancer", "cold", "flu"]}]}))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    written = {"a": "age,sex,disease\n30-39,F,HIV\n30-39,F,flu\n30-49,M,cancer\n30-49,M,cold\n30-39,F,flu\n"
                    "30-39,F,HIV\n",
               # overlapping cells: 34 falls in [30-35] and in [33-39]
               "b": "age,sex,disease\n30-35,*,HIV\n33-39,*,flu\n30-35,*,cancer\n40-49,*,cold\n30-35,*,flu\n"
                    "33-39,*,HIV\n"}
    out = []
    for name, text in written.items():
        (tmp_path / f"{name}.csv").write_text(text)
        assert publisher(["release", "--input", str(tmp_path / "original.csv"), "--schema",
                          str(tmp_path / "schema.json"), "--anonymized", str(tmp_path / f"{name}.csv"),
                          "--produced-by", "a hospital's tool 1.0", "--key", str(tmp_path / "keys" / "private.pem"),
                          "--dataset-id", f"hospital-{name}", "--out", str(tmp_path / name)]) == 0
        out.append(tmp_path / name)
    (tmp_path / "me.json").write_text(json.dumps({"age": 34, "sex": "F", "disease": "HIV"}))
    return out


def _joint(tmp_path: Path, capsys, releases) -> dict:
    capsys.readouterr()
    assert verifier(["joint", *map(str, releases), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                     str(tmp_path / "me.json"), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_same_release_given_twice_counts_once(tmp_path, capsys):
    a, _ = _hospital(tmp_path)
    out = _joint(tmp_path, capsys, [a, a])
    entry = out["attribute_disclosure"]["disease"]
    # her class {HIV, flu, flu, HIV} once: 1/2, not the product 1/4 : 1/4 renormalised with the prior twice
    assert entry["left"] == {"HIV": 0.5, "flu": 0.5} and entry["risk"] == 0.5
    assert out["repeated"] == [str(a)] and len(out["releases"]) == 1
    assert f"{a} is a release given before, or the same data signed again: it counts once." in out["verdict"]["lines"]
    assert out["verdict"]["level"] == out["releases"][0]["level_alone"]


def test_the_same_data_re_signed_as_new_versions_counts_once(tmp_path, capsys):
    """Issue 59, item 5: one output published as versions 1 to 10 (the same seed, so the same rows) holds the same
    data ten times: one release's evidence. Her joint figures are one release's, and the report names the copies."""
    _hospital(tmp_path)
    versions = []
    for version in range(1, 11):
        assert publisher(["release", "--input", str(tmp_path / "original.csv"), "--schema",
                          str(tmp_path / "schema.json"), "--anonymized", str(tmp_path / "a.csv"), "--produced-by",
                          "a hospital's tool 1.0", "--seed", "7", "--key", str(tmp_path / "keys" / "private.pem"),
                          "--dataset-id", "hospital-a", "--release-version", str(version), "--out",
                          str(tmp_path / f"v{version}")]) == 0
        versions.append(tmp_path / f"v{version}")
    assert (versions[0] / "release.csv").read_bytes() == (versions[-1] / "release.csv").read_bytes()
    out = _joint(tmp_path, capsys, versions)
    entry = out["attribute_disclosure"]["disease"]
    # her class {HIV, flu, flu, HIV} once, as in one release (ten copies used to multiply it ten times)
    assert entry["risk"] == 0.5 and entry["left"] == {"HIV": 0.5, "flu": 0.5}
    assert out["repeated"] == [str(v) for v in versions[1:]] and len(out["releases"]) == 1


def test_overlapping_cells_give_the_worst_combination_of_her_possible_classes(tmp_path, capsys):
    a, b = _hospital(tmp_path)
    out = _joint(tmp_path, capsys, [a, b])
    entry = out["attribute_disclosure"]["disease"]
    # a: her class {HIV, flu, flu, HIV}; b: [30-35] {HIV, cancer, flu} or [33-39] {flu, HIV}
    prior = {"HIV": 2 / 6, "flu": 2 / 6, "cancer": 1 / 6, "cold": 1 / 6}
    assert entry["bound"] == "worst_class" and entry["each"] == [0.5, 0.5]
    # the worst combination for HIV: a's class with b's [33-39]: HIV 1/2 * 1/2 / (2/6) against flu the same
    assert entry["risk"] == pytest.approx(0.5) and set(entry["left"]) == {"HIV", "flu"}
    # her whole candidate sets: b's candidates are {HIV, cancer, flu, flu, HIV} (every row of [30-35] and [33-39])
    weaker = entry["candidate_set"]
    assert weaker["risk"] == pytest.approx((0.5 * 0.4 / prior["HIV"]) / (0.5 * 0.4 / prior["HIV"] +
                                                                         0.5 * 0.4 / prior["flu"]))
    assert entry["prior"] == pytest.approx(prior["HIV"])


def _unchanged(tmp_path: Path) -> list[Path]:
    """Paper 003's Table 1 published unchanged by a tool, and published with noise and reverse mapping."""
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    same = tmp_path / "same"
    header, *rows = (PAPER / "original.csv").read_text().splitlines()
    # every record moved a little but hers (the third), which is published as it is
    moved = [row if i == 2 else ",".join(str(round(float(x) * 1.1 + 0.5, 4)) for x in row.split(","))
             for i, row in enumerate(rows)]
    (tmp_path / "careless.csv").write_text("\n".join([header, *moved]) + "\n")
    assert publisher(["release", "--input", str(PAPER / "original.csv"), "--anonymized", str(tmp_path / "careless.csv"),
                      "--produced-by", "a careless tool 1.0", "--samples", "200", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "paper", "--release-version", "1",
                      "--out", str(same)]) == 0
    noisy = tmp_path / "noisy"
    assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed", "4",
                      "--allow-degenerate", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "paper",
                      "--release-version", "2", "--out", str(noisy)]) == 0
    header, *rows = (PAPER / "original.csv").read_text().splitlines()
    (tmp_path / "me.json").write_text(json.dumps(dict(zip(header.split(","), map(float, rows[2].split(","))))))
    return [noisy, same]


def test_a_release_that_exposes_her_alone_decides_her_joint_level(tmp_path, capsys):
    """Published unchanged in one release is a figure of that release alone: the joint figures cannot show it, and
    the release decides her joint level (a policy of that one rule, so that nothing else decides it)."""
    noisy, same = _unchanged(tmp_path)
    policy = tmp_path / "unchanged.json"
    policy.write_text(json.dumps({"name": "unchanged only", "version": 1, "rules": [
        {"id": "published_unchanged", "figure": "unchanged", "level": "exposed"}]}))
    capsys.readouterr()
    assert verifier(["joint", str(noisy), str(same), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                     str(tmp_path / "me.json"), "--policy", str(policy), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["level_alone"] for r in out["releases"]] == ["protected", "exposed"]
    verdict = out["verdict"]
    assert verdict["level"] == "exposed" and verdict["rule"] == "published_unchanged"
    assert verdict["headline"] == (f"{same} alone makes you exposed, whatever the others add: Your record was "
                                   "published unchanged: a released record equals yours on every attribute.")
    assert any(line.startswith("Their joint figures alone would say protected: ") for line in verdict["lines"])
    # under the default policy the joint random-match test links her too: the joint level is exposed by itself
    assert _joint(tmp_path, capsys, [noisy, same])["verdict"]["level"] == "exposed"


def test_her_joint_words_never_contradict_her_level(tmp_path, capsys):
    """Issue 59, item 5: where the releases leave her none of her own value, her joint report says so, not that someone
    would guess her value right 0% of the time; and a joint figure that breaks a rule of the policy is read as bad
    for her even when one release alone decides a worse level (its findings stay beside that release's)."""
    a, b = _hospital(tmp_path)
    (tmp_path / "me.json").write_text(json.dumps({"age": 34, "sex": "F", "disease": "cancer"}))  # not among a's
    out = _joint(tmp_path, capsys, [a, b])
    entry = out["attribute_disclosure"]["disease"]
    assert "cancer" not in entry["left"] and entry["risk"] == 0.0
    summary = " ".join(out["plain"]["summary"])
    assert "0% of the time from these releases together" not in summary
    assert ("Your disease is not among the values these releases together leave for you: check your record, or "
            "these are not all releases of you.") in summary
    from verifier.releases.plain_words import joint_plain_words

    # a joint finding kept beside the release's that decided her level: the joint risk is read as bad
    decided = {**out, "verdict": {**out["verdict"], "level": "exposed", "findings": [
        {"rule": "singled_out", "figure": "class_size", "attribute": None, "severity": "exposed", "text": "alone"},
        {"rule": "value_gain", "figure": "beta", "attribute": "disease", "severity": "at_risk", "text": "joint"},
        {"rule": "value_near_certain", "figure": "posterior", "attribute": "disease", "severity": "exposed",
         "text": "joint"}]}, "attribute_disclosure": {"disease": {**entry, "left": {"HIV": 0.87}, "risk": 0.87}}}
    risk = next(d for d in joint_plain_words(decided)["details"] if d["figure"] == "risk of disease, together")
    assert risk["reading"] == "bad"
