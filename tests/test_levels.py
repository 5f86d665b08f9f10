"""Every subject's level under the policy, counted for the protector (issue 36, item 4).

The counting (one random-match distribution for every subject, one check per distinct record) is held to the
plain way: each record checked on its own, with her own random-match test, exactly as `verifier check` runs it;
on random tables with and without ties, ranked and generalized releases.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import write
from publisher.cli import main as publisher
from verifier.releases import levels as levels_module
from verifier.releases.facts import open_release
from verifier.releases.levels import record_levels
from verifier.releases.policy import default_policy, parse_policy
from verifier.releases.subject import check_record, prepare, random_match
from verifier.data.tables import read_table


def _plain(prepared, records, policy, chosen) -> tuple[dict, dict]:
    counts, rules = {"exposed": 0, "at_risk": 0, "protected": 0}, {}
    for record in records[chosen]:
        check = check_record(prepared, record)
        report = random_match(prepared, check, samples=2000) if prepared.ranks_apply else None
        verdict = check.verdict(report, policy)
        counts[verdict.level] += 1
        if verdict.rule:
            rules[verdict.rule] = rules.get(verdict.rule, 0) + 1
    return counts, rules


STRICT = parse_policy(b'{"name": "strict", "version": 1, "rules": ['
                      b'{"id": "far", "figure": "distance", "below": 2, "level": "at_risk"},'
                      b'{"id": "groups", "figure": "class_size", "below": 8, "level": "at_risk"},'
                      b'{"id": "p", "figure": "p_value", "below": 0.3, "level": "exposed"},'
                      b'{"id": "gain", "figure": "delta", "above": 0.1, "level": "at_risk"}]}', "strict.json")


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("method", [["--method", "additive_noise", "--param", "relative_sd=0.4", "--then",
                                     "reverse_mapping"], ["--method", "sd_k_anonymity", "--param", "k=3"],
                                    ["--method", "rank_swapping", "--param", "p=5"]])
def test_the_counts_are_each_records_own_check(tmp_path, monkeypatch, tied, method):
    rng = np.random.default_rng(36 + tied)
    n = 90
    age = rng.integers(20, 26, n) if tied else np.round(rng.normal(40, 9, n), 1)
    income = rng.integers(1, 4, n) * 1000 if tied else np.round(rng.lognormal(10, 0.4, n))
    sick = rng.choice(["flu", "cold", "hiv"], n, p=[0.5, 0.4, 0.1])
    source = write(tmp_path / "x.csv", "age,income,disease\n" + "".join(
        f"{a},{b},{s}\n" for a, b, s in zip(age.tolist(), income.tolist(), sick)))
    schema = write(tmp_path / "s.json", '{"attributes": [{"name": "age", "kind": "numeric", "role": '
                   '"quasi_identifier"}, {"name": "income", "kind": "numeric", "role": "quasi_identifier"}, '
                   '{"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "cold", '
                   '"hiv"]}]}')
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(source), "--schema", str(schema), *method, "--seed", "4",
                      "--samples", "500", "--allow-degenerate", "--key", str(tmp_path / "keys" / "private.pem"),
                      "--dataset-id", "t", "--out", str(tmp_path / "r")]) == 0
    prepared = prepare(open_release(str(tmp_path / "r"), str(tmp_path / "keys" / "public.pem")))
    records = read_table(str(source), prepared.schema).values
    monkeypatch.setattr(levels_module, "MOST_CHECKED", 60)
    chosen = levels_module._which(records)
    distinct = np.unique(records, axis=0).shape[0]
    # more distinct records than checked: a draw of 60 of the 90, as at census size; else every record
    assert chosen.size == (60 if distinct > 60 else n) and np.unique(chosen).size == chosen.size
    assert tied or chosen.size == 60
    for policy in (default_policy(), STRICT):
        fast = record_levels(prepared, records, policy, samples=2000)
        counts, rules = _plain(prepared, records, policy, chosen)
        assert fast.counts == counts and fast.by_rule == rules and (fast.records, fast.checked) == (n, chosen.size)
        assert sum(fast.counts.values()) == chosen.size
    if not tied and method[1] != "sd_k_anonymity":  # every level holds records here: the counts can tell them apart
        assert all(c > 0 for c in fast.counts.values()), fast.counts


SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "experiments" / "data" / "adult_sample_3000.csv"
ONE = SAMPLE.parents[2] / "docs" / "examples" / "adult-one-sensitive.json"


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    root = tmp_path_factory.mktemp("levels")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    return root


def _release(root, name: str, *extra: str) -> int:
    return publisher(["release", "--input", str(SAMPLE), "--schema", str(ONE), "--method", "sd_k_anonymity",
                      "--param", "k=5", "--seed", "1", "--key", str(root / "keys" / "private.pem"), "--dataset-id",
                      "adult", "--out", str(root / name), *extra])


def test_the_protector_sees_the_counts_signs_them_and_the_audit_recomputes_them(adult, capsys):
    import json

    from conftest import resign_statement
    from verifier.cli import main as verifier

    capsys.readouterr()
    assert _release(adult, "sd", "--target", "max_at_risk_share=0.5") == 0
    out = capsys.readouterr().out
    levels = json.loads((adult / "sd" / "manifest.json").read_text())["predicate"]["claims"]["policy_levels"]
    # every record of the sample is checked (its distinct records are fewer than the draw), each as her own check
    assert levels["records"] == levels["checked"] == 3000
    assert levels["exposed"] + levels["at_risk"] + levels["protected"] == 3000
    assert levels["at_risk_share"] == levels["at_risk"] / 3000 and levels["policy"] == default_policy().to_json()
    assert sum(levels["by_rule"].values()) == levels["exposed"] + levels["at_risk"]
    assert levels["exposed"] > 0 and levels["at_risk"] > 0 and levels["protected"] > 0
    assert (f"      exposed {levels['exposed']:,}, at risk {levels['at_risk']:,} "
            f"({levels['at_risk_share'] * 100:.4g}%), protected {levels['protected']:,} of 3,000 records") in out
    key = str(adult / "keys" / "public.pem")
    assert verifier(["audit", str(adult / "sd"), "--key", key, "--original", str(SAMPLE), "--json"]) == 0
    checks = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert all(checks[f"policy_levels.{k}"]["ok"] for k in ("exposed", "at_risk", "protected", "checked"))
    assert verifier(["audit", str(adult / "sd"), "--key", key, "--json"]) == 0  # from the release alone: unchecked
    unchecked = {u["figure"]: u["reason"] for u in json.loads(capsys.readouterr().out)["unchecked"]}
    assert unchecked["policy_levels.exposed"] == "needs the original table (--original)"
    # a publisher that understates how many records are exposed, re-signed: counts that no longer add up are
    # refused before any figure is read (issue 37); counts made to add up are caught by the audit
    signed = json.loads((adult / "sd" / "manifest.json").read_text())["predicate"]["claims"]["policy_levels"]
    resign_statement(adult / "sd", adult / "keys" / "private.pem",
                     lambda s: s["predicate"]["claims"]["policy_levels"].update(exposed=0))
    assert verifier(["audit", str(adult / "sd"), "--key", key, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reason"] == "MANIFEST_INCOHERENT"
    resign_statement(adult / "sd", adult / "keys" / "private.pem", lambda s: s["predicate"]["claims"][
        "policy_levels"].update(exposed=0, exposed_share=0.0, protected=signed["protected"] + signed["exposed"]))
    assert verifier(["audit", str(adult / "sd"), "--key", key, "--original", str(SAMPLE), "--json"]) == 1
    failed = [c["claim"] for c in json.loads(capsys.readouterr().out)["checks"] if not c["ok"]]
    assert sorted(failed) == ["policy_levels.exposed", "policy_levels.exposed_share", "policy_levels.protected"]


def test_a_release_that_exposes_more_records_than_its_target_is_refused(adult, capsys):
    import re

    capsys.readouterr()
    assert _release(adult, "refused", "--target", "max_exposed=10") == 3
    err = capsys.readouterr().err
    found = re.search(r"TARGET_MISSED: the release misses its target: the number of records exposed under the "
                      r"verdict policy is (\d+); the target is at most 10 \(max_exposed\); nothing was written", err)
    assert found and int(found.group(1)) > 10 and not (adult / "refused").exists()


def test_another_policy_is_named_signed_and_needed_by_the_audit(adult, tmp_path, capsys):
    import json

    from verifier.cli import main as verifier

    strict = write(tmp_path / "strict.json", b'{"name": "strict", "version": 2, "rules": [{"id": "groups", '
                   b'"figure": "class_size", "below": 100, "level": "at_risk"}]}')
    assert _release(adult, "strict", "--policy", str(strict)) == 0
    levels = json.loads((adult / "strict" / "manifest.json").read_text())["predicate"]["claims"]["policy_levels"]
    assert levels["policy"] == parse_policy(strict.read_bytes(), "s").to_json()
    assert levels["by_rule"] == {"groups": levels["at_risk"]} and levels["exposed"] == 0
    key = str(adult / "keys" / "public.pem")
    capsys.readouterr()
    assert verifier(["audit", str(adult / "strict"), "--key", key, "--original", str(SAMPLE), "--json"]) == 0
    unchecked = {u["figure"]: u["reason"] for u in json.loads(capsys.readouterr().out)["unchecked"]}
    assert unchecked["policy_levels.at_risk"].startswith("needs the verdict policy it names")
    assert verifier(["audit", str(adult / "strict"), "--key", key, "--original", str(SAMPLE), "--policy",
                     str(strict), "--json"]) == 0
    checks = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["policy_levels.at_risk"]["ok"] and checks["policy_levels.at_risk"]["computed"] == levels["at_risk"]
