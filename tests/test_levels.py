"""Every subject's level under the policy, counted for the protector (issues 36 and 51).

The count (every record's figures in one pass, the policy applied in bulk) is held to the plain way: each
record checked on its own, with her own random-match test, exactly as `verifier check` runs it; on random
tables with and without ties, for a release of every family, under three policies. The bulk policy is also held
to the one-record policy on random figures, NaNs, zeros and values on the thresholds included.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import write
from publisher.cli import main as publisher
from verifier.releases.facts import open_release
from verifier.releases.level_arrays import LEVEL_CODES, FigureArrays, array_levels
from verifier.releases.levels import every_level, record_levels
from verifier.releases.policy import default_policy, parse_policy
from verifier.releases.subject import check_record, prepare, random_match
from verifier.releases.verdict import HerFigures, policy_verdict
from verifier.data.tables import read_table


def _plain(prepared, records, policies) -> list[tuple[list[str], list[str | None]]]:
    """Each record's own check and random-match test, as `verifier check` runs them, and her verdict under each
    of ``policies``: per policy, the levels and the deciding rules."""
    out = [([], []) for _ in policies]
    for record in records:
        check = check_record(prepared, record)
        report = random_match(prepared, check, samples=2000) if prepared.ranks_apply else None
        for (levels, rules), policy in zip(out, policies):
            verdict = check.verdict(report, policy)
            levels.append(verdict.level)
            rules.append(verdict.rule)
    return out


STRICT = parse_policy(b'{"name": "strict", "version": 1, "rules": ['
                      b'{"id": "far", "figure": "distance", "below": 2, "level": "at_risk"},'
                      b'{"id": "groups", "figure": "class_size", "below": 8, "level": "at_risk"},'
                      b'{"id": "p", "figure": "p_value", "below": 0.3, "level": "exposed"},'
                      b'{"id": "gain", "figure": "delta", "above": 0.1, "level": "at_risk"}]}', "strict.json")
BROAD = parse_policy(b'{"name": "broad", "version": 3, "rules": ['
                     b'{"id": "sure", "figure": "posterior", "at_least": 0.6, "level": "exposed"},'
                     b'{"id": "rare", "figure": "prior", "at_most": 0.2, "level": "at_risk"},'
                     b'{"id": "gain", "figure": "beta", "above": 0.3, "enhanced": true, "level": "exposed"},'
                     b'{"id": "near", "figure": "distance", "at_most": 1, "level": "exposed"},'
                     b'{"id": "few", "figure": "class_size", "at_most": 4, "level": "exposed"},'
                     b'{"id": "odd", "figure": "delta", "at_least": 0.5, "level": "at_risk"},'
                     b'{"id": "same", "figure": "unchanged", "level": "exposed"},'
                     b'{"id": "none", "figure": "no_group", "level": "at_risk"},'
                     b'{"id": "promise", "figure": "claim_broken", "level": "at_risk"},'
                     b'{"id": "p", "figure": "p_value", "above": 0.5, "level": "at_risk"}]}', "broad.json")
METHODS = {
    "noise_then_reverse_mapping": ["--method", "additive_noise", "--param", "relative_sd=0.4", "--then",
                                   "reverse_mapping"],
    "rank_swapping": ["--method", "rank_swapping", "--param", "p=5"],
    "microaggregation": ["--method", "microaggregation", "--param", "k=3"],
    "sd_k_anonymity": ["--method", "sd_k_anonymity", "--param", "k=3"],
    "randomized_response": ["--method", "randomized_response", "--param", "l=2", "--param", "scope=both"],
    "random_attribute_replacement": ["--method", "random_attribute_replacement"],
}


def _table(tmp_path, tied: bool, n: int = 80):
    rng = np.random.default_rng(51 + tied)
    age = rng.integers(20, 26, n) if tied else np.round(rng.normal(40, 9, n), 1)
    sex = rng.choice(["f", "m"], n)
    region = rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])
    income = rng.integers(1, 4, n) * 1000 if tied else np.round(rng.lognormal(10, 0.4, n))
    sick = rng.choice(["flu", "cold", "hiv"], n, p=[0.5, 0.4, 0.1])
    source = write(tmp_path / "x.csv", "age,sex,region,income,disease\n" + "".join(
        f"{a},{x},{r},{b},{s}\n" for a, x, r, b, s in zip(age.tolist(), sex, region, income.tolist(), sick)))
    schema = write(tmp_path / "s.json", '{"attributes": [{"name": "age", "kind": "numeric", "role": '
                   '"quasi_identifier"}, {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": '
                   '["f", "m"]}, {"name": "region", "kind": "nominal", "role": "quasi_identifier", "categories": '
                   '["north", "south", "east"]}, {"name": "income", "kind": "numeric", "role": "sensitive"}, '
                   '{"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "cold", '
                   '"hiv"]}]}')
    return source, schema


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    root = tmp_path_factory.mktemp("keys")
    assert publisher(["keygen", "--out", str(root), "--unencrypted"]) == 0
    return root


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_records_level_is_her_own_checks(tmp_path, keys, tied, method):
    source, schema = _table(tmp_path, tied)
    assert publisher(["release", "--input", str(source), "--schema", str(schema), *METHODS[method], "--seed", "4",
                      "--samples", "500", "--allow-degenerate", "--key", str(keys / "private.pem"),
                      "--dataset-id", "t", "--out", str(tmp_path / "r")]) == 0
    prepared = prepare(open_release(str(tmp_path / "r"), str(keys / "public.pem")))
    records = read_table(str(source), prepared.schema).values
    seen = set()
    policies = (default_policy(), STRICT, BROAD)
    for policy, (levels, rules) in zip(policies, _plain(prepared, records, policies)):
        level, rule_at = every_level(prepared, records, policy, samples=2000)
        assert [LEVEL_CODES[c] for c in level.tolist()] == levels
        assert [None if i < 0 else policy.rules[i].id for i in rule_at.tolist()] == rules
        counted = record_levels(prepared, records, policy, samples=2000)
        assert (counted.records, counted.checked) == (80, 80) and sum(counted.counts.values()) == 80
        assert counted.counts == {k: levels.count(k) for k in ("exposed", "at_risk", "protected")}
        seen |= set(levels)
    assert len(seen) >= 2, seen  # the tables tell levels apart: a count that says one level for all proves little


def _random_figures(rng, n: int, ranked: bool) -> FigureArrays:
    def pick(values, nan_share=0.1):
        out = rng.choice(np.asarray(values, dtype=np.float64), n)
        out[rng.random(n) < nan_share] = np.nan
        return out

    shares = [0.0, 0.05, 0.2, 0.25, 0.5, 0.6, 0.99, 1.0, 1 / 3, np.exp(-1.0)]
    sensitive = {name: (np.nan_to_num(pick(shares), nan=0.0), np.nan_to_num(pick(shares), nan=0.0))
                 for name in ("a", "b")}
    broken = rng.random(n) < 0.2
    if ranked:
        return FigureArrays(n, sensitive, broken, distance=rng.integers(0, 4, n),
                            p_value=pick([0.0, 0.009, 0.01, 0.3, 0.5, 0.51, 1.0]), unchanged=rng.random(n) < 0.1)
    return FigureArrays(n, sensitive, broken, class_size=rng.integers(0, 7, n))


@pytest.mark.parametrize("ranked", [True, False])
def test_the_bulk_policy_is_the_one_record_policy(ranked):
    rng = np.random.default_rng(7 + ranked)
    n = 400
    figures = _random_figures(rng, n, ranked)
    for policy in (default_policy(), STRICT, BROAD):
        level, rule_at = array_levels(policy, figures)
        for r in range(n):
            p = None if not ranked or np.isnan(figures.p_value[r]) else float(figures.p_value[r])
            her = HerFigures({k: {"risk": float(v[0][r]), "prior": float(v[1][r]),
                                  "beta": None if v[1][r] <= 0 else (float(v[0][r]) - float(v[1][r])) / float(v[1][r]),
                                  "delta": None if v[1][r] <= 0 or v[0][r] <= 0 else
                                  abs(np.log(float(v[0][r]) / float(v[1][r])).item())}
                              for k, v in figures.sensitive.items()},
                             class_size=None if ranked else int(figures.class_size[r]),
                             distance=int(figures.distance[r]) if ranked else None, p_value=p,
                             unchanged=bool(ranked and figures.unchanged[r]),
                             broken=("broken",) if figures.broken[r] else ())
            verdict = policy_verdict(policy, her)
            assert LEVEL_CODES[level[r]] == verdict.level, (policy.name, r)
            assert (None if rule_at[r] < 0 else policy.rules[rule_at[r]].id) == verdict.rule, (policy.name, r)


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
    # the protector's own report, beside the release and never in it, names each record not protected by input row
    report = json.loads((adult / "sd.protector.json").read_text())["records_not_protected"]
    assert report["columns"] == ["row", "level", "rule"] and len(report["rows"]) == 3000 - levels["protected"]
    assert sum(level == "exposed" for _, level, _ in report["rows"]) == levels["exposed"]
    assert not any("protector" in p.name for p in (adult / "sd").iterdir())
    prepared = prepare(open_release(str(adult / "sd"), str(adult / "keys" / "public.pem")))
    records = read_table(str(SAMPLE), prepared.schema).values
    listed = {row: (level, rule) for row, level, rule in report["rows"]}
    for row in range(1, 3001, 97):  # her own check of the input's row, numbered from 1
        verdict = check_record(prepared, records[row - 1]).verdict(None, default_policy())
        assert listed.get(row, ("protected", None)) == (verdict.level, verdict.rule), row
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
    # counts that add up but whose deciding rules do not (issue 59, item 2) are refused before any figure too
    resign_statement(adult / "sd", adult / "keys" / "private.pem", lambda s: s["predicate"]["claims"][
        "policy_levels"].update(exposed=0, exposed_share=0.0, protected=signed["protected"] + signed["exposed"]))
    assert verifier(["audit", str(adult / "sd"), "--key", key, "--json"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert refused["reason"] == "MANIFEST_INCOHERENT" and "policy_levels.by_rule: its counts add up to" in \
        refused["message"]
    level_of = {r.id: r.level for r in default_policy().rules}
    at_risk_rules = {r: c for r, c in signed["by_rule"].items() if level_of[r] == "at_risk"}
    resign_statement(adult / "sd", adult / "keys" / "private.pem", lambda s: s["predicate"]["claims"][
        "policy_levels"].update(by_rule=at_risk_rules))
    assert verifier(["audit", str(adult / "sd"), "--key", key, "--original", str(SAMPLE), "--json"]) == 1
    failed = [c["claim"] for c in json.loads(capsys.readouterr().out)["checks"] if not c["ok"]]
    assert sorted(failed) == ["policy_levels.by_rule.value_near_certain", "policy_levels.exposed",
                              "policy_levels.exposed_share", "policy_levels.protected"]


def test_a_release_that_exposes_more_records_than_its_target_is_refused(adult, capsys):
    import re

    capsys.readouterr()
    assert _release(adult, "refused", "--target", "max_exposed=10") == 3
    err = capsys.readouterr().err
    found = re.search(r"TARGET_MISSED: the release misses its target: the number of records exposed under the "
                      r"verdict policy is (\d+); the target is at most 10 \(max_exposed\); the rules that decided "
                      r"those levels: value_near_certain ([\d,]+)(, [a-z_]+ [\d,]+)*; nothing was written", err)
    assert found and int(found.group(1)) > 10 and not (adult / "refused").exists()
    assert int(found.group(2).replace(",", "")) == int(found.group(1))  # every exposed record, by its rule
    assert "value_near_certain) needs a method that bounds each value's share of a class" in err


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


def test_the_protectors_report_is_the_json_of_its_document_one_record_a_line():
    from publisher.signed_release import report_bytes

    doc = {"release": "r", "protector_only": None, "records_not_protected": {
        "policy": default_policy().to_json(), "columns": ["row", "level", "rule"],
        "rows": [[3, "exposed", "value_near_certain"], [17, "at_risk", "value_gain"]]}}
    text = report_bytes(doc)
    assert json.loads(text) == doc and b'      [17, "at_risk", "value_gain"]\n' in text
    empty = {**doc, "records_not_protected": {**doc["records_not_protected"], "rows": []}}
    assert json.loads(report_bytes(empty)) == empty


def test_counts_an_earlier_manifest_drew_are_listed_unchecked_and_its_targets_held_to_every_record(adult, capsys):
    """Releases signed before every record was counted hold a public draw of 200: the audit no longer makes that
    draw, so it lists the drawn counts as unchecked with the exact ones, and holds the targets to the exact ones."""
    from conftest import resign_statement
    from verifier.cli import main as verifier

    assert _release(adult, "drawn", "--target", "max_at_risk_share=0.5") == 0
    exact = json.loads((adult / "drawn" / "manifest.json").read_text())["predicate"]["claims"]["policy_levels"]

    def drawn(statement):
        statement["predicate"]["claims"]["policy_levels"].update(
            checked=200, exposed=59, at_risk=26, protected=115, exposed_share=59 / 200, at_risk_share=26 / 200,
            by_rule={"value_near_certain": 59, "value_gain": 26})
        statement["predicate"]["targets"]["max_exposed"] = 100  # met by the draw, not by every record

    resign_statement(adult / "drawn", adult / "keys" / "private.pem", drawn)
    capsys.readouterr()
    key = str(adult / "keys" / "public.pem")
    assert verifier(["audit", str(adult / "drawn"), "--key", key, "--original", str(SAMPLE), "--json"]) == 1
    audit = json.loads(capsys.readouterr().out)
    unchecked = {u["figure"]: u["reason"] for u in audit["unchecked"]}
    assert unchecked["policy_levels.exposed"] == (
        f"signed from a draw of 200 of 3000 records, which this verifier no longer makes; every record counted: "
        f"exposed {exact['exposed']:,}, at risk {exact['at_risk']:,}, protected {exact['protected']:,}")
    failed = {c["claim"]: c for c in audit["checks"] if not c["ok"]}
    assert list(failed) == ["targets.max_exposed"] and str(exact["exposed"]) in failed["targets.max_exposed"]["note"]


@pytest.mark.parametrize("change, said", [
    (lambda levels: levels.update(at_risk_share=0.0), "policy_levels.at_risk_share: not at_risk / checked"),
    (lambda levels: levels.update(exposed_share=0.5), "policy_levels.exposed_share: not exposed / checked"),
    (lambda levels: levels["by_rule"].update(made_up=levels["by_rule"].pop(next(iter(levels["by_rule"])))),
     "policy_levels.by_rule: 'made_up' is not a rule of the policy the counts name"),
    (lambda levels: levels["policy"].update(sha256="0" * 64),
     "policy_levels.policy: it names the verifier's default policy, whose SHA-256 is"),
    (lambda levels: levels.update(checked=1, exposed=0, at_risk=0, protected=1, at_risk_share=0.0, exposed_share=0.0,
                                  by_rule={}), "policy_levels.checked: 1 of 3000 records; a manifest of this format"),
])
def test_level_counts_that_contradict_themselves_are_refused_before_any_figure(adult, capsys, tmp_path, change, said):
    """Issue 59, item 2: shares that are not count / checked, a deciding rule the policy lacks, the default policy
    named with another SHA-256, and a draw of 1 of 3,000 in a manifest of this format: each passed `verify` and the
    subject's check before; each is refused by both now (the page's twin by tests/test_page.py's fuzz of
    coherence.js against coherence.py)."""
    import shutil

    from conftest import resign_statement
    from verifier.cli import main as verifier

    key = str(adult / "keys" / "public.pem")
    if not (adult / "clean").exists():
        assert _release(adult, "clean") == 0
    release = shutil.copytree(adult / "clean", tmp_path / "clean")
    resign_statement(release, adult / "keys" / "private.pem",
                     lambda s: change(s["predicate"]["claims"]["policy_levels"]))
    capsys.readouterr()
    assert verifier(["verify", str(release), "--key", key]) == 1
    err = capsys.readouterr().err
    assert "MANIFEST_INCOHERENT" in err and said in err, err
