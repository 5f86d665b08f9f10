"""The verdict policy decides her level from her own figures, each risk beside its base rate (issue 36, items 1-2).

- the default policy is the file shipped with the verifier, named and hashed in every verdict;
- each rule fires on its figure and nothing else: class size, p-value, the posterior, beta-likeness
  (plain and enhanced), unchanged, no group, untested, a broken claim;
- a claim that promises nothing never makes her protected;
- the issue's scene on the shipped Adult sample: 95.56% beside a base rate of 74.77%, both computed from the file;
- ``--policy`` in the CLI and the API; a malformed policy is one FAIL line with its JSON path, before any work.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.errors import InvalidInputError
from verifier.releases.policy import LEVELS, Policy, Rule, default_policy, load_policy, parse_policy
from verifier.releases.verdict import HerFigures, policy_findings, policy_verdict

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
ONE_SENSITIVE = ROOT / "docs" / "examples" / "adult-one-sensitive.json"


def _policy(*rules: dict, name: str = "test") -> Policy:
    return parse_policy(json.dumps({"name": name, "version": 1, "rules": list(rules)}).encode(), "test.json")


def _entry(risk: float, prior: float) -> dict:
    beta = (risk - prior) / prior if prior > 0 else None
    delta = abs(math.log(risk / prior)) if prior > 0 and risk > 0 else None
    return {"mode": "group", "risk": risk, "prior": prior, "beta": beta, "delta": delta, "candidates": 10}


# ----------------------------------------------------------------------------- the default policy


def test_the_default_policy_is_the_shipped_file_named_and_hashed():
    data = resources.files("verifier.releases").joinpath("verdict-policy.json").read_bytes()
    policy = default_policy()
    assert policy.sha256 == hashlib.sha256(data).hexdigest()
    assert (policy.name, policy.version) == ("permuted-privacy default", 1)
    assert [r.id for r in policy.rules] == ["value_near_certain", "linked", "published_unchanged", "singled_out",
                                           "small_group", "weakly_linked", "value_gain", "not_in_release",
                                           "random_match_not_run", "publisher_promise_broken"]
    assert policy.rules[6] == Rule("value_gain", "beta", "at_risk", "above", 1.0, True)
    assert load_policy(None) is policy


@pytest.mark.parametrize("figures, level, rule", [
    (HerFigures({}, class_size=1), "exposed", "singled_out"),
    (HerFigures({}, class_size=4), "at_risk", "small_group"),
    (HerFigures({}, class_size=5), "protected", None),
    (HerFigures({}, class_size=0), "at_risk", "not_in_release"),
    (HerFigures({}, distance=3, p_value=0.009), "exposed", "linked"),
    (HerFigures({}, distance=3, p_value=0.01), "at_risk", "weakly_linked"),
    (HerFigures({}, distance=3, p_value=0.05), "protected", None),
    (HerFigures({}, distance=3), "at_risk", "random_match_not_run"),
    (HerFigures({}, distance=0, p_value=0.5, unchanged=True), "exposed", "published_unchanged"),
    (HerFigures({"s": _entry(0.99, 0.5)}, class_size=9), "exposed", "value_near_certain"),
    # enhanced beta-likeness: a rare value's chance may at most double; a frequent one's rise by -ln(prior)
    (HerFigures({"s": _entry(0.21, 0.1)}, class_size=9), "at_risk", "value_gain"),
    (HerFigures({"s": _entry(0.2, 0.1)}, class_size=9), "protected", None),
    (HerFigures({"s": _entry(0.95, 0.7)}, class_size=9), "at_risk", "value_gain"),  # beta 0.357 > -ln 0.7 = 0.3567
    (HerFigures({"s": _entry(0.94, 0.7)}, class_size=9), "protected", None),  # beta 0.343
    (HerFigures({"s": _entry(0.9556, 0.7477)}, class_size=45), "protected", None),  # the issue's figures
    (HerFigures({"s": _entry(0.5, 0.0)}, class_size=9), "protected", None),  # no base rate: beta undefined
    (HerFigures({}, class_size=9, broken=("a broken promise.", "another.")), "at_risk", "publisher_promise_broken"),
])
def test_each_rule_of_the_default_policy_fires_on_its_figure(figures, level, rule):
    verdict = policy_verdict(default_policy(), figures, details=["d"])
    assert (verdict.level, verdict.rule) == (level, rule)
    assert verdict.lines[0] == verdict.headline and verdict.lines[-1] == "d"
    assert verdict.to_json()["policy"] == {"name": "permuted-privacy default", "version": 1,
                                           "sha256": default_policy().sha256,
                                           "reads": sorted({r.figure for r in default_policy().rules})}
    if rule == "publisher_promise_broken":
        assert [f.text for f in verdict.findings] == ["a broken promise.", "another."]


def test_the_sentences_give_the_figure_its_base_rate_and_the_threshold():
    found = policy_findings(default_policy(), HerFigures({"salary": _entry(0.25, 0.1)}, class_size=3))
    assert [(f.rule, f.attribute) for f in found] == [("small_group", None), ("value_gain", "salary")]
    assert found[0].text == ("Only 3 released records are consistent with your quasi-identifiers, below the policy's "
                             "5: an attacker who knows them picks yours with probability 33.33%.")
    assert found[1].text == ("Your salary is guessed right with probability 25% from this release, 2.5 times its base "
                             "rate (10% of the released records share your value): the release tells an attacker more "
                             "about it than the policy allows (beta = 1.5, above the policy's 1).")
    certain = policy_findings(default_policy(), HerFigures({"salary": _entry(1.0, 0.25)}, class_size=9))
    assert certain[0].text == ("Your salary can be guessed with certainty from this release (25% of the released "
                               "records share your value).")
    # one rule per figure: a p-value below 1% is not also reported below 5%
    linked = policy_findings(default_policy(), HerFigures({}, distance=2, p_value=0.001))
    assert [f.rule for f in linked] == ["linked"]
    assert linked[0].text == ("An intruder can tell your match from chance: a random record matches as closely as "
                              "yours only 0.1% of the time, below the policy's 1%.")


def test_a_claim_that_promises_nothing_is_never_the_basis_of_protected():
    # k = 1 claimed and held, a risk bound of 1 claimed and held: her group of 2 and her certain value decide
    small = policy_verdict(default_policy(), HerFigures({}, class_size=2))
    assert small.level == "at_risk" and small.rule == "small_group"
    certain = policy_verdict(default_policy(), HerFigures({"s": _entry(1.0, 0.9)}, class_size=40))
    assert certain.level == "exposed" and certain.rule == "value_near_certain"


# ----------------------------------------------------------------------------- any policy


figure_values = st.one_of(st.none(), st.floats(0, 1), st.integers(0, 50))


@settings(max_examples=300, deadline=None)
@given(thresholds=st.lists(st.tuples(st.sampled_from(["class_size", "p_value", "posterior", "beta", "delta"]),
                                     st.sampled_from(["below", "at_most", "above", "at_least"]),
                                     st.floats(0, 10), st.sampled_from(LEVELS), st.booleans()), min_size=1,
                           max_size=6),
       flags=st.lists(st.tuples(st.sampled_from(["unchanged", "no_group", "untested", "claim_broken"]),
                                st.sampled_from(LEVELS)), max_size=4, unique_by=lambda t: t[0]),
       class_size=st.one_of(st.none(), st.integers(0, 20)), p_value=st.one_of(st.none(), st.floats(0, 1)),
       risk=st.floats(0, 1), prior=st.floats(0, 1), unchanged=st.booleans(), broken=st.booleans())
def test_her_level_is_the_worst_rule_that_fires_on_any_policy(thresholds, flags, class_size, p_value, risk, prior,
                                                             unchanged, broken):
    rules = [{"id": f"r{i}", "figure": f, op: t, "level": lv, **({"enhanced": True} if e and f == "beta" else {})}
             for i, (f, op, t, lv, e) in enumerate(thresholds)]
    rules += [{"id": f"f{i}", "figure": f, "level": lv} for i, (f, lv) in enumerate(flags)]
    policy = _policy(*rules)
    ranked = class_size is None
    figures = HerFigures({"s": _entry(risk, prior)}, class_size=class_size, distance=2 if ranked else None,
                         p_value=p_value if ranked else None, unchanged=unchanged,
                         broken=("broken.",) if broken else ())
    entry = figures.sensitive["s"]
    values = {"class_size": class_size or None, "p_value": figures.p_value, "posterior": risk, "beta": entry["beta"],
              "delta": entry["delta"], "unchanged": unchanged, "no_group": class_size == 0,
              "untested": ranked and p_value is None, "claim_broken": broken}
    fired = [r for r in policy.rules if r.fires(values[r.figure], prior=prior)]
    verdict = policy_verdict(policy, figures)
    expected = "exposed" if any(r.level == "exposed" for r in fired) else "at_risk" if fired else "protected"
    assert verdict.level == expected  # brute force: the worst level among the rules that fire
    if fired:
        assert verdict.rule == next(r.id for r in fired if r.level == expected)
    assert (verdict.level == "protected") == (not verdict.findings)


@pytest.mark.parametrize("doc, where", [
    ({"name": "x", "version": 1, "rules": []}, "$.rules"),
    ({"name": "x", "version": 0, "rules": [{"id": "a", "figure": "untested", "level": "at_risk"}]}, "$.version"),
    ({"name": "", "version": 1, "rules": [{"id": "a", "figure": "untested", "level": "at_risk"}]}, "$.name"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "untested", "level": "at_risk"}], "x": 1}, "$"),
    ({"name": "x", "version": 1, "rules": [{"id": "A", "figure": "untested", "level": "at_risk"}]}, "$.rules[0].id"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "kindness", "level": "at_risk"}]},
     "$.rules[0].figure"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "untested", "level": "protected"}]},
     "$.rules[0].level"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "untested", "below": 1, "level": "at_risk"}]},
     "$.rules[0].below"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "beta", "level": "at_risk"}]}, "$.rules[0]"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "beta", "below": 1, "above": 2,
                                            "level": "at_risk"}]}, "$.rules[0]"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "beta", "below": "1", "level": "at_risk"}]},
     "$.rules[0].below"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "delta", "below": 1, "enhanced": True,
                                            "level": "at_risk"}]}, "$.rules[0].enhanced"),
    ({"name": "x", "version": 1, "rules": [{"id": "a", "figure": "untested", "level": "at_risk"},
                                           {"id": "a", "figure": "unchanged", "level": "exposed"}]},
     "$.rules[1].id"),
])
def test_a_malformed_policy_is_refused_with_its_json_path(doc, where):
    with pytest.raises(InvalidInputError) as info:
        parse_policy(json.dumps(doc).encode(), "p.json")
    assert info.value.reason == "POLICY_INVALID" and info.value.message.startswith(f"{where}: ")


def test_a_policy_file_that_is_no_policy_is_refused(tmp_path):
    for content in (b'{"name": "x", "name": "y"}', b"\xff", b"[1]", b"{" * 70000):
        with pytest.raises(InvalidInputError) as info:
            load_policy(write(tmp_path / "p.json", content))
        assert info.value.reason == "POLICY_INVALID"
    with pytest.raises(InvalidInputError) as info:
        load_policy(tmp_path / "missing.json")
    assert info.value.reason == "POLICY_INVALID" and info.value.message == "no such file"


# ----------------------------------------------------------------------------- on a real release


@pytest.fixture(scope="module")
def adult_sd(tmp_path_factory):
    """The issue's scene: the shipped Adult sample, SD k-anonymity with k = 5, salary-class sensitive."""
    root = tmp_path_factory.mktemp("policy")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(SAMPLE), "--schema", str(ONE_SENSITIVE), "--method", "sd_k_anonymity",
                      "--param", "k=5", "--seed", "1", "--key", str(root / "keys" / "private.pem"), "--dataset-id",
                      "adult-sd", "--out", str(root / "release")]) == 0
    write(root / "me.json", json.dumps({"marital-status": "Separated", "race": "White", "sex": "Female",
                                        "salary-class": "<=50K"}))
    return root


def _check(root: Path, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert verifier(["check", str(root / "release"), "--key", str(root / "keys" / "public.pem"), "--record",
                     str(root / "me.json"), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_her_risk_stands_beside_its_base_rate_in_the_issues_scene(adult_sd, capsys):
    out = _check(adult_sd, capsys)
    with SAMPLE.open() as handle:
        salaries = [row["salary-class"] for row in csv.DictReader(handle)]
    prior = salaries.count("<=50K") / len(salaries)
    entry = out["attribute_disclosure"]["salary-class"]
    assert entry["prior"] == prior and round(prior, 4) == 0.7477  # every record is published, shuffled
    # among her 45 candidates, 43 share her value; they fall in 4 published groups, one of which is all <=50K: the
    # intruder who reruns SD on everyone's quasi-identifiers knows whether it is hers (issue 50)
    weaker = entry["candidate_set"]
    assert weaker["risk"] == pytest.approx(43 / 45) and weaker["beta"] == pytest.approx((43 / 45 - prior) / prior)
    assert weaker["delta"] == pytest.approx(math.log(43 / 45 / prior))
    assert entry["risk"] == 1.0 and entry["bound"] == "worst_class" and entry["classes"] == 4
    assert entry["delta"] == pytest.approx(math.log(1 / prior)) and entry["worst_class_rows"] == 5
    verdict = out["verdict"]
    assert verdict["level"] == "exposed" and verdict["rule"] == "value_near_certain"
    assert ("Your salary-class is guessed right with probability 100% by an intruder who knows everyone's "
            "quasi-identifiers and the published method, if your record is in the group of 5 released records where "
            "that is likeliest (one of 4 groups consistent with your values); knowing only your own values, with "
            "probability 95.56% (45 candidate records). At least 74.77% of the people in this release hold your value, "
            "so anyone "
            "could guess it right with probability 74.77% knowing nothing about you.") in verdict["lines"]
    assert verdict["lines"][3] == "The publisher's claims hold for your record."  # its own line, deciding nothing


def test_another_policy_decides_her_level_in_the_cli(adult_sd, tmp_path, capsys):
    strict = write(tmp_path / "strict.json", json.dumps({"name": "strict office", "version": 3, "rules": [
        {"id": "groups_of_fifty", "figure": "class_size", "below": 50, "level": "at_risk"},
        {"id": "any_gain", "figure": "delta", "above": 0.2, "level": "exposed"}]}))
    out = _check(adult_sd, capsys, "--policy", str(strict))
    verdict = out["verdict"]
    assert verdict["policy"] == {"name": "strict office", "version": 3,
                                 "sha256": hashlib.sha256(strict.read_bytes()).hexdigest(),
                                 "reads": sorted({r["figure"] for r in json.loads(strict.read_text())["rules"]})}
    assert verdict["level"] == "exposed" and verdict["rule"] == "any_gain"
    assert [f["rule"] for f in verdict["findings"]] == ["any_gain", "groups_of_fifty", "unwitnessed"]
    assert verdict["headline"].endswith("(delta = 0.2908, above the policy's 0.2).")  # her worst group's value
    capsys.readouterr()
    assert verifier(["check", str(adult_sd / "release"), "--key", str(adult_sd / "keys" / "public.pem"), "--record",
                     str(adult_sd / "me.json"), "--policy", str(strict)]) == 0
    text = capsys.readouterr().out
    assert "EXPOSED: Your record is exposed. " in text
    assert "In the verdict policy's words:\nYour salary-class is guessed right" in text
    assert (f'Your level was decided by the verdict policy "strict office", version 3 (SHA-256 '
            f'{hashlib.sha256(strict.read_bytes()).hexdigest()}).') in text


def test_a_bad_policy_is_one_line_before_any_work(adult_sd, tmp_path, capsys):
    bad = write(tmp_path / "bad.json", json.dumps({"name": "x", "version": 1, "rules": [
        {"id": "a", "figure": "posterior", "above": "0.5", "level": "at_risk"}]}))
    capsys.readouterr()
    code = verifier(["check", str(adult_sd / "release"), "--key", str(adult_sd / "keys" / "public.pem"), "--record",
                     str(adult_sd / "me.json"), "--policy", str(bad)])
    out, err = capsys.readouterr()
    assert code == 3 and out == ""
    assert err.strip() == f"FAIL: {bad}: POLICY_INVALID: $.rules[0].above: a threshold is a finite number"


def test_the_api_takes_a_policy_file(adult_sd, tmp_path):
    import verifier as api

    lenient = write(tmp_path / "lenient.json", json.dumps({"name": "lenient", "version": 1, "rules": [
        {"id": "alone", "figure": "class_size", "below": 2, "level": "exposed"}]}))
    record = json.loads((adult_sd / "me.json").read_text())
    release = api.open_release(adult_sd / "release", adult_sd / "keys" / "public.pem")
    mine = api.check_record(release, record=record, policy=lenient)
    assert mine.level == "protected" and mine.verdict["policy"]["name"] == "lenient"
    assert mine.to_dict()["verdict"] == mine.verdict
    assert api.check_record(release, record=record).verdict["policy"]["name"] == "permuted-privacy default"


def test_the_audit_and_the_protectors_summary_show_the_base_rate(adult_sd, tmp_path, capsys):
    """Issue 36, item 2: beside the release's risks, what anyone guesses right knowing nothing about a person."""
    with SAMPLE.open() as handle:
        salaries = [row["salary-class"] for row in csv.DictReader(handle)]
    share = salaries.count("<=50K") / len(salaries)
    key = str(adult_sd / "keys" / "public.pem")
    capsys.readouterr()
    assert verifier(["audit", str(adult_sd / "release"), "--key", key, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["base_rates"] == {"salary-class": {"value": "<=50K", "share": share}}
    assert verifier(["audit", str(adult_sd / "release"), "--key", key]) == 0
    assert ('base rate of "salary-class": 74.77% of the released records are "<=50K", so anyone guesses that right '
            "for them knowing nothing") in capsys.readouterr().out
    assert publisher(["release", "--input", str(SAMPLE), "--schema", str(ONE_SENSITIVE), "--method",
                      "random_attribute_replacement", "--param", "k=1", "--seed", "1", "--samples", "500", "--key",
                      str(adult_sd / "keys" / "private.pem"), "--dataset-id", "ra", "--out", str(tmp_path / "ra")]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("    salary-class: guessed with certainty for"))
    assert lines[at + 1] == ("      base rate: 74.77% of the released records are <=50K, so anyone guesses that right "
                             "for them knowing nothing")


def test_a_folder_as_the_policy_or_the_record_is_one_line_not_a_traceback(adult_sd, tmp_path, capsys):
    """Linux opens a directory read-only; the bounded reader refuses it before wrapping the descriptor."""
    key = str(adult_sd / "keys" / "public.pem")
    capsys.readouterr()
    for extra in (["--record", str(adult_sd / "me.json"), "--policy", str(tmp_path)], ["--record", str(tmp_path)]):
        code = verifier(["check", str(adult_sd / "release"), "--key", key, *extra])
        out, err = capsys.readouterr()
        assert code == 3 and out == "" and "Traceback" not in err
        assert err.count("\n") == 1 and f"FAIL: {tmp_path}: " in err and "is a directory" in err


@pytest.mark.parametrize("method, params", [
    ("sd_k_anonymity", {"k": 5, "mask_probability": 0.1}),
    ("randomized_response", {"l": 2, "scope": "both"}),
    ("random_attribute_replacement", {"k": 1}),
])
def test_the_summarys_figures_from_the_cells_in_memory_are_the_written_releases(adult_sd, tmp_path, method, params):
    """The publisher's summary reads the base rates and class-level models from the cells or keys the data file was
    written from, not from the file again (a second parse of a census's cells): the same figures as the written
    release gives its reader, masks, signed marginals and all."""
    from publisher.cli.common import load_input
    from publisher.methods import make_method
    from publisher.signed_release import make_release
    from verifier.frontend.passphrase import load_key
    from verifier.releases.exposure import base_rates, class_models
    from verifier.releases.verification import TrustedKey, verify_release

    table, _ = load_input(str(SAMPLE), str(ONE_SENSITIVE))
    key = load_key(str(adult_sd / "keys" / "private.pem"), None)
    trusted = TrustedKey(raw=key.public_raw, path="key")
    seen = []

    def before_move(staging, protector, released):
        verified = verify_release(staging, trusted)
        again = verify_release(staging, trusted)
        seen.append(((base_rates(verified, released), class_models(verified, released)),
                     (base_rates(again), class_models(again))))

    make_release(table, [make_method(method, params)], key, tmp_path / "release", dataset_id="d", seed=3,
                 samples=200, before_move=before_move, allow_degenerate=True)
    (from_memory, from_file), = seen
    assert from_memory == from_file and from_memory[0]["salary-class"]["share"] > 0.5
    assert bool(from_memory[1]) is (method == "sd_k_anonymity")  # the class-level models of a release with classes
