"""m-invariant re-publication with counterfeit records (Xiao and Tao, SIGMOD 2007; issue 40, item 2): the groups
the method forms, checked by brute force on random tables; the releases it makes, with their published counterfeit
counts read by the subject's check, the joint check, the release's claims and the audit; and what is refused."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import one_person_fewer, resign_statement, ward_folder
from publisher.cli import main as publisher
from publisher.methods.m_invariance import m_invariant_groups
from verifier.attacks.classes import read_published, subject_class
from verifier.attacks.counterfeits import counterfeit_problem, counterfeits_among
from verifier.cli import main as verifier
from verifier.data.schema import Schema
from verifier.errors import InvalidInputError
from verifier.releases.coherence import coherence_problem
from verifier.releases.subject import prepare
from verifier.releases.verification import MANIFEST, load_public_key, verify_release

DISEASES = ["bronchitis", "dyspepsia", "flu", "gastritis"]


def _signatures_of(groups, values, n: int) -> list[frozenset | None]:
    out: list[frozenset | None] = [None] * n
    for g in groups:
        s = frozenset([*(values[i] for i in g.members), *g.counterfeits])
        for i in g.members:
            out[i] = s
    return out


def _check_groups(groups, values, signatures, m: int) -> None:
    """Every record in one group; every group at least m distinct values, each once, at least one real record;
    every person released before in a group of her signature."""
    seen = sorted(i for g in groups for i in g.members)
    assert seen == list(range(len(values)))
    for g in groups:
        held = [values[i] for i in g.members] + list(g.counterfeits)
        assert len(held) == len(set(held)) >= m and g.members
        for i in g.members:
            assert signatures[i] is None or signatures[i] == frozenset(held)


@pytest.mark.parametrize("seed", range(40))
def test_every_group_is_m_unique_and_every_returning_person_keeps_her_signature(seed):
    """Brute force over random tables of 1 to 60 records, 2 to 6 values (with ties in the quasi-identifiers'
    order), m from 2 to 4: a first release from nothing, then a second where some leave, some join and the rest
    return. Counterfeits appear only where the table cannot do without: none in a first release whose pool is
    m-eligible and holds a multiple of m records with every value equally often."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 5))
    d = int(rng.integers(m, 7))
    domain = [f"v{j}" for j in range(d)]
    n = int(rng.integers(1, 61))
    values = [domain[j] for j in rng.integers(0, d, n)]
    order = rng.integers(0, max(1, n // 2), n)  # ties
    if max(values.count(v) for v in set(values)) * m > n:  # not m-eligible: refused (issue 58), values unnamed
        with pytest.raises(InvalidInputError) as refused:
            m_invariant_groups(values, [None] * n, order, m, domain)
        assert refused.value.reason == "M_INVARIANCE_IMPOSSIBLE" and "m-eligible" in refused.value.message
        assert not any(v in refused.value.message for v in domain)
        n -= n % m  # an eligible table: its first n - n % m people, every value of m as often
        if n == 0:
            return
        values, order = [domain[i % m] for i in range(n)], order[:n]
    first = m_invariant_groups(values, [None] * n, order, m, domain)
    _check_groups(first, values, [None] * n, m)
    assert not any(g.counterfeits for g in first)  # an m-eligible first release needs no counterfeit
    signatures = _signatures_of(first, values, n)
    stay = rng.random(n) < 0.6
    joined = int(rng.integers(0, 30))
    new_values = [v for v, s in zip(values, stay) if s] + [domain[j] for j in rng.integers(0, d, joined)]
    new_signatures = [sig for sig, s in zip(signatures, stay) if s] + [None] * joined
    second = m_invariant_groups(new_values, new_signatures, rng.permutation(len(new_values)), m, domain)
    _check_groups(second, new_values, new_signatures, m)


@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_rounds_are_the_rounds_as_written(seed):
    """The assignment's compiled loop against the rule as written, on pools large enough to take it (over 8,192
    people): the same buckets, each value's people in the same order, and the same people left; with and without ties
    in the grouping order, skewed and even values, 2 to 40 of them, m from 2 to 5, with and without a bucket of
    returning people the rounds join; and a pool of fewer values than m, where no round is played."""
    from publisher.methods.m_invariant_rounds import assign, plain_rounds

    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 6))
    d = int(rng.integers(m, 41))
    n = int(rng.integers(8_300, 12_000))
    values = rng.choice(d, n, p=rng.dirichlet(np.ones(d) * (0.3 if seed % 3 == 0 else 4.0)))
    rank = rng.integers(0, n // 4, n) if seed % 2 else rng.permutation(n)
    pool: dict = {}
    for i in np.argsort(rank, kind="stable").tolist():
        pool.setdefault(f"v{values[i]}", []).append(i)
    top = sorted(pool, key=lambda v: -len(pool[v]))[:m]
    start = {frozenset(top): {v: [] for v in top}} if seed % 4 < 2 else {}
    plain, fast = {s: {v: list(r) for v, r in b.items()} for s, b in start.items()}, start
    left = plain_rounds(pool, plain, m, rank)
    assert assign(pool, fast, m, rank) == left and fast == plain
    assert sum(len(r) for b in plain.values() for r in b.values()) + sum(map(len, left.values())) == n
    assert len(left) < m and len(plain) > 1
    # fewer values than m among 8,300 people: no round at all, everyone left
    fewer = {f"w{j}": sorted(range(j, 8_300, m - 1), key=lambda i: rank[i]) for j in range(m - 1)}
    assert assign(fewer, {}, m, rank) == plain_rounds(fewer, {}, m, rank) == fewer


def test_a_census_sized_grouping_is_m_unique():
    """A table large enough for every compiled and array path (the rounds, the residue's medians, the buckets cut
    into groups), with returning people: every group m-unique, every returning person in her signature."""
    rng = np.random.default_rng(61)
    m, n = 3, 20_000
    domain = [f"v{j}" for j in range(7)]
    values = [domain[j] for j in rng.choice(7, n, p=[0.25, 0.2, 0.2, 0.15, 0.1, 0.06, 0.04])]
    first = m_invariant_groups(values, [None] * n, rng.permutation(n), m, domain)
    _check_groups(first, values, [None] * n, m)
    signatures = _signatures_of(first, values, n)
    stay = rng.random(n) < 0.7
    new_values = [v for v, s in zip(values, stay) if s] + [domain[j] for j in rng.integers(0, 7, 5_000)]
    new_signatures = [sig for sig, s in zip(signatures, stay) if s] + [None] * 5_000
    second = m_invariant_groups(new_values, new_signatures, rng.permutation(len(new_values)), m, domain)
    _check_groups(second, new_values, new_signatures, m)
    assert any(g.counterfeits for g in second)


def test_a_balanced_first_release_needs_no_counterfeit():
    values = ["a", "b", "c"] * 4
    groups = m_invariant_groups(values, [None] * 12, list(range(12)), 3, ["a", "b", "c"])
    assert len(groups) == 4 and not any(g.counterfeits for g in groups)


def test_the_critical_absence_with_a_counterfeit():
    """Bob (flu) and Alice (dyspepsia) shared a group; Alice left and nobody with dyspepsia joined: Bob's group
    keeps {flu, dyspepsia} with one counterfeit dyspepsia. Carol (gastritis) joins a group of new people alone."""
    values = ["flu", "gastritis", "bronchitis", "flu", "gastritis"]
    signatures = [frozenset({"flu", "dyspepsia"}), None, None, None, None]
    groups = m_invariant_groups(values, signatures, [0, 1, 2, 3, 4], 2, DISEASES)
    bob = next(g for g in groups if 0 in g.members)
    assert bob.members == (0,) and bob.counterfeits == ("dyspepsia",)
    assert sum(len(g.counterfeits) for g in groups) == 1


def test_refusals_name_the_rows_never_the_values():
    from verifier.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as changed:
        m_invariant_groups(["flu", "HIV"], [frozenset({"flu", "cancer"}), frozenset({"flu", "cancer"})], [0, 1], 2,
                           ["flu", "HIV", "cancer"])
    assert changed.value.reason == "M_INVARIANCE_IMPOSSIBLE" and "row 2" in changed.value.message
    assert "HIV" not in changed.value.message and "cancer" not in changed.value.message
    with pytest.raises(InvalidInputError) as small:
        m_invariant_groups(["flu"], [frozenset({"flu"})], [0], 2, ["flu", "HIV"])
    assert "fewer than m = 2" in small.value.message
    with pytest.raises(InvalidInputError) as few:
        m_invariant_groups(["flu"], [None], [0], 3, ["flu", "HIV"])
    assert "has 2 values" in few.value.message


@pytest.fixture()
def ward(tmp_path):
    return ward_folder(tmp_path, DISEASES)


def _release(folder, name: str, rows: str, *more: str, m: int = 2, seed: int = 1) -> int:
    """``seed`` draws the grouping order: with 1, FIRST's groups are Bob with Alice and Dan with Fay."""
    (folder / f"{name}.csv").write_text("pid,age,sex,disease\n" + rows)
    return publisher(["release", "--input", str(folder / f"{name}.csv"), "--schema", str(folder / "schema.json"),
                      "--method", "m_invariant", "--param", f"m={m}", "--key", str(folder / "keys" / "private.pem"),
                      "--dataset-id", "ward", "--release-version", name[-1], "--link-column", "pid",
                      "--out", str(folder / name), "--seed", str(seed), *more])


FIRST = "bob,30,M,flu\nalice,31,M,dyspepsia\ndan,55,M,bronchitis\nfay,56,M,gastritis\n"
SECOND = "bob,30,M,flu\ncarol,33,M,gastritis\ndan,55,M,bronchitis\nfay,56,M,gastritis\ngil,57,M,flu\n"


def test_re_publication_keeps_bob_s_signature_with_a_published_counterfeit(ward, capsys):
    """The critical absence made by the method itself: Bob's group keeps {flu, dyspepsia} with one counterfeit
    dyspepsia, published with its count in the signed manifest. The joint check leaves him both values; his own
    check counts two released records and one person (a counterfeit hides a value, not a person: singled out);
    the claims' k and re-identification figures count people; the audit recomputes the counterfeits."""
    assert _release(ward, "r1", FIRST) == 0
    capsys.readouterr()
    assert _release(ward, "r2", SECOND, "--previous", str(ward / "r1")) == 0
    capsys.readouterr()
    predicate = json.loads((ward / "r2" / MANIFEST).read_bytes())["predicate"]
    step = predicate["methods"][0]
    assert step["method"] == "m_invariant" and step["parameters"]["m"] == 2
    assert step["parameters"]["counterfeits"] == [{"cells": {"age": "30", "sex": "M"}, "count": 1}]
    assert step["parameters"]["counterfeit_records"] == 1 and predicate["claims"]["n_records"] == 6
    assert predicate["claims"]["k"] == 1 and predicate["claims"]["policy_levels"]["records"] == 5
    released = (ward / "r2" / "release.csv").read_text().splitlines()
    assert sorted(released[1:]).count("30,M,dyspepsia") == 1 and "30,M,flu" in released
    key = str(ward / "keys" / "public.pem")
    (ward / "bob.json").write_text(json.dumps({"age": 30, "sex": "M", "disease": "flu"}))
    assert verifier(["joint", str(ward / "r1"), str(ward / "r2"), "--key", key, "--record", str(ward / "bob.json"),
                     "--json"]) == 0
    joint = json.loads(capsys.readouterr().out)
    assert joint["attribute_disclosure"]["disease"]["left"] == {"dyspepsia": 0.5, "flu": 0.5}
    assert verifier(["check", str(ward / "r2"), "--key", key, "--record", str(ward / "bob.json"), "--json"]) == 0
    bob = json.loads(capsys.readouterr().out)
    assert (bob["class_size"], bob["counterfeits"], len(bob["class_rows"])) == (1, 1, 2)
    # one person behind two rows, the counterfeit of the value Alice took away: the intruder who reruns the method
    # reads Bob's flu for certain, and so does Bob's check (issue 58), no longer a share of 1/2
    assert bob["attribute_disclosure"]["disease"]["risk"] == 1.0
    assert bob["verdict"]["level"] == "exposed" and bob["verdict"]["rule"] == "value_near_certain"
    assert ("2 released records are consistent with your quasi-identifiers, 1 counterfeit record among them that "
            "the publisher added and counted (m-invariance), so 1 person is behind them") in "\n".join(bob["verdict"]["lines"])
    assert verifier(["audit", str(ward / "r2"), "--key", key, "--original", str(ward / "r2.csv"), "--previous",
                     str(ward / "r1"), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    checked = {c["claim"]: c for c in audit["checks"]}
    assert checked["methods.0.parameters.counterfeit_records"]["ok"] and checked["methods.0.parameters.counterfeits"][
        "ok"] and not any(u["figure"].startswith("methods.") for u in audit["unchecked"])
    assert verifier(["audit", str(ward / "r2"), "--key", key, "--original", str(ward / "r1.csv")]) == 1
    assert "FALSE: methods.0.parameters.counterfeit_records: the released rows less the original's records" in \
        capsys.readouterr().out


def test_m_invariant_re_publication_leaves_every_returning_person_her_signature(ward, capsys):
    """With m = 3 every group keeps two people or more beside a counterfeit: the second wave passes
    max_exposed=0, and every person released before is left her whole signature (at least 3 values) by the
    joint check, and the manifest's joint figures certain of nobody."""
    first = "".join(f"p{i},{20 + 3 * i},{'FM'[i % 2]},{DISEASES[i % 3 + (i // 9) % 2]}\n" for i in range(18))
    second = "".join(f"p{i},{20 + 3 * i},{'FM'[i % 2]},{DISEASES[i % 3 + (i // 9) % 2]}\n" for i in range(4, 18)) \
        + "".join(f"q{i},{25 + 4 * i},{'MF'[i % 2]},{DISEASES[i % 4]}\n" for i in range(6))
    assert _release(ward, "r1", first, m=3) == 0
    assert _release(ward, "r2", second, "--previous", str(ward / "r1"), "--target", "max_exposed=0", m=3) == 0
    predicate = json.loads((ward / "r2" / MANIFEST).read_bytes())["predicate"]
    together = predicate["claims"]["composition"]
    assert predicate["methods"][0]["parameters"]["counterfeit_records"] > 0
    assert together["linked"] == 14 and together["policy_levels"]["exposed"] == 0
    # her candidates may span groups whose intervals overlap, so the joint shares are uneven, and the intruder who
    # reads her group in each wave weighs its values by their base rates (issue 50): never one value left
    assert 1 / 3 <= together["attribute_disclosure"]["disease"]["max"] < 0.6
    assert together["attribute_disclosure"]["disease"]["certain_share"] == 0
    key = load_public_key(ward / "keys" / "public.pem")
    releases = [prepare(verify_release(ward / r, key)) for r in ("r1", "r2")]
    for row in second.splitlines()[:14]:
        _, age, sex, disease = row.split(",")
        record = np.array([float(age), ["F", "M"].index(sex), DISEASES.index(disease)])
        left = None
        for p in releases:
            rows = [r - 1 for r in subject_class(p.published, record)["rows"]]
            held = {p.published.text["disease"][r] for r in rows}
            left = held if left is None else left & held
        assert disease in left and len(left) >= 3


def test_a_dishonest_count_of_counterfeits_is_refused(ward, capsys):
    """Counts that do not add up, name no group of the data, or leave a group with no real record: the manifest
    is incoherent (exit 1), in verify as in the check."""
    assert _release(ward, "r1", FIRST) == 0
    assert _release(ward, "r2", SECOND, "--previous", str(ward / "r1")) == 0
    predicate = json.loads((ward / "r2" / MANIFEST).read_bytes())["predicate"]
    wrong = json.loads(json.dumps(predicate))
    wrong["methods"][0]["parameters"]["counterfeit_records"] = 2
    assert coherence_problem(wrong) == ("$.predicate.methods[0].parameters.counterfeit_records: 2 is not the sum of "
                                        "the groups' counts")
    wrong = json.loads(json.dumps(predicate))
    wrong["methods"][0]["parameters"]["counterfeits"][0]["cells"] = {"age": "30"}
    assert "cells: a group is named by its quasi-identifiers' cells" in coherence_problem(wrong)
    schema = Schema.from_dict(predicate["schema"])
    text = list(csv.reader((ward / "r2" / "release.csv").open()))
    published = read_published(schema, text[0], [list(c) for c in zip(*text[1:])])
    assert counterfeit_problem(published, predicate["methods"]) is None
    bob = [i for i, row in enumerate(text[1:]) if row[:2] == ["30", "M"]]
    assert counterfeits_among(published, bob, predicate["methods"]) == 1
    two = [{"method": "m_invariant", "parameters": {**predicate["methods"][0]["parameters"], "counterfeits": [
        {"cells": {"age": "30", "sex": "M"}, "count": 2}], "counterfeit_records": 2}}]
    assert counterfeit_problem(published, two) == ("$.predicate.methods[0].parameters.counterfeits[0]: 2 counterfeit "
                                                   "records in a group of 2 released rows; every group holds at least "
                                                   "one real record")

    def more(statement):
        statement["predicate"]["methods"] = two
        one_person_fewer(statement["predicate"]["claims"]["policy_levels"])  # one person fewer, counted coherently

    resign_statement(ward / "r2", ward / "keys" / "private.pem", more)
    capsys.readouterr()
    assert verifier(["verify", str(ward / "r2"), "--key", str(ward / "keys" / "public.pem")]) == 1
    err = capsys.readouterr().err
    assert "MANIFEST_INCOHERENT" in err and "2 counterfeit records in a group of 2 released rows" in err


def test_what_m_invariant_refuses(ward, capsys):
    """A person whose disease changed (row named, never the value), an earlier release with no groups, sampling
    weights, and a column a counterfeit has no value for: each refused with one line, nothing written."""
    assert _release(ward, "r1", FIRST) == 0
    capsys.readouterr()
    assert _release(ward, "r2", "bob,30,M,bronchitis\ndan,55,M,bronchitis\nfay,56,M,gastritis\n", "--previous",
                    str(ward / "r1")) == 3
    err = capsys.readouterr().err
    assert "M_INVARIANCE_IMPOSSIBLE" in err and "row 1" in err and "bronchitis" not in err
    assert not (ward / "r2").exists() and not (ward / "r2.links.json").exists()
    (ward / "w.csv").write_text("pid,age,sex,disease,w\na,30,M,flu,2\nb,31,M,gastritis,2\n")
    assert publisher(["release", "--input", str(ward / "w.csv"), "--schema", str(ward / "schema.json"), "--method",
                      "m_invariant", "--param", "m=2", "--weight-column", "w", "--key",
                      str(ward / "keys" / "private.pem"), "--dataset-id", "w", "--out", str(ward / "w")]) == 2
    assert "no sampling weight" in capsys.readouterr().err
    capsys.readouterr()
    (ward / "swap.csv").write_text("pid,age,sex,disease\n" + FIRST)
    assert publisher(["release", "--input", str(ward / "swap.csv"), "--schema", str(ward / "schema.json"), "--method",
                      "rank_swapping", "--param", "p=50", "--allow-degenerate", "--key",
                      str(ward / "keys" / "private.pem"), "--dataset-id", "s", "--link-column", "pid", "--out",
                      str(ward / "swap")]) == 0
    capsys.readouterr()
    assert _release(ward, "r3", SECOND, "--previous", str(ward / "swap")) == 3
    assert "has no groups of published sensitive values" in capsys.readouterr().err
    other = json.loads((ward / "schema.json").read_text())
    other["attributes"].append({"name": "ward", "kind": "nominal", "role": "other", "categories": ["a"]})
    (ward / "other.json").write_text(json.dumps(other))
    (ward / "o.csv").write_text("age,sex,disease,ward\n30,M,flu,a\n31,M,gastritis,a\n")
    assert publisher(["release", "--input", str(ward / "o.csv"), "--schema", str(ward / "other.json"), "--method",
                      "m_invariant", "--param", "m=2", "--key", str(ward / "keys" / "private.pem"), "--dataset-id",
                      "o", "--out", str(ward / "o")]) == 3
    assert "a counterfeit record has no value for 'ward'" in capsys.readouterr().err


def test_verify_says_the_counterfeits_and_replay_what_it_can_rerun(ward, capsys):
    """verify says the counterfeits in numbers (their counts are in the manifest); replay reruns a first release,
    deterministic, counterfeits and all, and says a re-publication is not replayable from its original alone."""
    assert _release(ward, "r1", FIRST) == 0
    assert _release(ward, "r2", SECOND, "--previous", str(ward / "r1")) == 0
    key = str(ward / "keys" / "public.pem")
    capsys.readouterr()
    assert verifier(["verify", str(ward / "r2"), "--key", key]) == 0
    assert ("  method: m_invariant: m = 2, 1 counterfeit record in 1 group, each group's count in the manifest (a "
            "counterfeit hides a value, not a person: group sizes count people)") in capsys.readouterr().out
    assert publisher(["replay", str(ward / "r1"), "--key", key, "--original", str(ward / "r1.csv"), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["verdict"] == "plausible" and {d["parameter"] for d in first["derived_parameters"]} == {
        "methods.0.parameters.counterfeit_records", "methods.0.parameters.counterfeits"}
    assert publisher(["replay", str(ward / "r2"), "--key", key, "--original", str(ward / "r2.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "not_replayable"


def test_the_links_file_keeps_each_person_s_own_group_for_the_next_wave(ward, capsys):
    """The protector's links file of an m-invariant release records each person's signature, her own group's
    values: the next wave keeps those, not the values of every group whose cells contain her (a union wherever
    intervals overlap, which would need counterfeits the group does not)."""
    rows = "".join(f"p{i},{30 + (7 * i) % 23},{'FM'[i % 2]},{DISEASES[i % 4]}\n" for i in range(16))
    assert _release(ward, "r1", rows) == 0
    links = json.loads((ward / "r1.links.json").read_text())
    signatures = links["signatures"]
    assert sorted(signatures) == links["ids"] and all(len(s) == 2 for s in signatures.values())
    for i in range(16):
        assert DISEASES[i % 4] in signatures[f"p{i}"]
    assert sorted(map(tuple, signatures.values())).count(tuple(signatures["p0"])) % 2 == 0  # groups of two
    again = "".join(f"p{i},{30 + (7 * i) % 23},{'FM'[i % 2]},{DISEASES[i % 4]}\n" for i in range(16))
    assert _release(ward, "r2", again, "--previous", str(ward / "r1")) == 0
    second = json.loads((ward / "r2.links.json").read_text())["signatures"]
    assert second == signatures  # everyone returned: every group kept, no counterfeit
    step = json.loads((ward / "r2" / MANIFEST).read_bytes())["predicate"]["methods"][0]
    assert step["parameters"]["counterfeit_records"] == 0


@pytest.mark.parametrize("method,grid", [("m_invariant", "m=2,3"), ("sd_k_anonymity", "k=2,3")])
def test_calibrate_sweeps_a_generalizing_method_against_the_levels(ward, capsys, method, grid):
    """A generalizing method has no ranks to sweep D over: it is swept against the level targets instead (issue 60,
    item 6), a value whose release would be refused listed with its reason, never a traceback; the distance
    targets are refused in one line, exit 2."""
    (ward / "x.csv").write_text("age,sex,disease\n" + "".join(r.split(",", 1)[1] + "\n" for r in FIRST.splitlines()))
    base = ["calibrate", "--input", str(ward / "x.csv"), "--schema", str(ward / "schema.json"), "--method", method,
            "--param-grid", grid, "--seed", "1"]
    capsys.readouterr()
    assert publisher([*base, "--json"]) in (0, 1)
    found = json.loads(capsys.readouterr().out)
    assert [r["refused"] is None or r["refused"].isupper() for r in found["frontier"]] == [True, True]
    assert publisher([*base, "--min-distance", "2"]) == 2
    err = capsys.readouterr().err
    assert "--min-distance judges the frontier of distances and links" in err and "Traceback" not in err


def test_the_audit_finds_counterfeit_counts_moved_to_another_group(ward, capsys):
    """A dishonest publisher moves Bob's counterfeit to Carol's group (the counts still add up and fit the data,
    and Bob's group now looks like two people): only the original can tell, and the audit does."""
    assert _release(ward, "r1", FIRST) == 0
    assert _release(ward, "r2", SECOND, "--previous", str(ward / "r1")) == 0
    rows = list(csv.reader((ward / "r2" / "release.csv").open()))[1:]
    carol = next(r for r in rows if r[2] == "gastritis" and r[0] != "30")[:2]

    def move(statement):
        statement["predicate"]["methods"][0]["parameters"]["counterfeits"] = [
            {"cells": {"age": carol[0], "sex": carol[1]}, "count": 1}]

    resign_statement(ward / "r2", ward / "keys" / "private.pem", move)
    capsys.readouterr()
    assert verifier(["audit", str(ward / "r2"), "--key", str(ward / "keys" / "public.pem"), "--original",
                     str(ward / "r2.csv"), "--json"]) == 1
    checked = {c["claim"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checked["methods.0.parameters.counterfeit_records"]["ok"]
    assert not checked["methods.0.parameters.counterfeits"]["ok"]
    assert "leaves each group its declared counterfeits" in checked["methods.0.parameters.counterfeits"]["note"]


def _fits_by_hand(published, records, fakes_by_class) -> bool:
    """Brute force: some choice of counterfeit rows in each class (its declared number) leaves rows that the
    original records match one to one, each to a row whose cells contain it and whose value is its own."""
    import itertools

    labels = published.class_labels()
    names = published.schema.names
    qi, s = published.quasi_identifiers, published.sensitive[0]

    def fits(record, row) -> bool:
        for a in qi:
            key = record[names.index(a.name)]
            if not published.cells[a.name][row].contains(float(key) if a.kind == "numeric" else a.categories[int(key)]):
                return False
        return published.text[s.name][row].strip() == s.categories[int(record[names.index(s.name)])]

    choices = [itertools.combinations(np.flatnonzero(labels == c).tolist(), int(k)) for c, k in
               enumerate(fakes_by_class)]
    for fake in itertools.product(*choices):
        real = sorted(set(range(published.n_records)) - {r for part in fake for r in part})
        if len(real) == len(records) and any(all(fits(records[i], real[j]) for i, j in enumerate(order))
                                             for order in itertools.permutations(range(len(real)))):
            return True
    return False


def test_the_audit_s_matching_of_counterfeits_is_the_brute_force_one():
    """counterfeits_fit (a maximum flow) against every choice of counterfeit rows and every matching, on tiny
    random m-invariant re-publications (returning people with random signatures, ties in age), with their true
    counts and with one count moved to another group that could hold it."""
    import pandas as pd

    from publisher.methods.frames import published_cells
    from publisher.methods.m_invariant import MInvariant
    from verifier.attacks.counterfeits import class_counterfeits, counterfeits_fit

    schema = Schema.from_dict({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": DISEASES}]})
    compared = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 6))
        table = pd.DataFrame({"age": rng.integers(30, 34, n).astype(float), "sex": rng.choice(["F", "M"], n),
                              "disease": rng.choice(DISEASES[:3], n)})
        signatures = [frozenset({v, DISEASES[(DISEASES.index(v) + 1 + int(rng.integers(0, 3))) % 4]})
                      if rng.random() < 0.5 else None for v in table["disease"]]
        if all(s is None for s in signatures):  # a first release: no counterfeit (an ineligible one is refused)
            continue
        method = MInvariant(m=2).given_signatures(signatures)
        released = method.apply(table, schema, random_state=rng).table
        if len(released) > 8:  # the brute force tries every choice of rows and every matching
            continue
        published = published_cells(released, schema)[1]
        records = np.column_stack([table["age"].to_numpy(), (table["sex"] == "M").to_numpy(dtype=float),
                                   [DISEASES.index(v) for v in table["disease"]]])
        steps = [{"method": "m_invariant", "parameters": method.parameters()}]
        labels = published.class_labels()
        fakes = class_counterfeits(published, labels, steps)
        assert counterfeits_fit(published, records, steps) is True and _fits_by_hand(published, records, fakes)
        sizes, first = np.bincount(labels), np.unique(labels, return_index=True)[1]
        for c in np.flatnonzero(fakes).tolist():
            for d in range(sizes.size):
                if d != c and fakes[d] + 1 < sizes[d]:
                    moved = fakes.copy()
                    moved[c], moved[d] = moved[c] - 1, moved[d] + 1
                    entries = [{"cells": {a: published.text[a][first[k]] for a in ("age", "sex")}, "count": int(v)}
                               for k, v in enumerate(moved) if v]
                    lie = [{"method": "m_invariant", "parameters": {**method.parameters(), "counterfeits": entries}}]
                    found = counterfeits_fit(published, records, lie)
                    assert found == _fits_by_hand(published, records, moved), seed
                    compared.append(found)
    assert compared.count(False) >= 3 and len(compared) >= 5, compared


def test_a_wave_made_by_another_tool_gives_signatures_from_the_candidates(tmp_path, capsys):
    """The hospital's first wave came from another tool (docs/examples/ward): its links file holds no signatures,
    so each returning patient keeps the values among her candidates there ({HIV, flu}, {none, cancer}). Where the
    plain second wave is refused by max_exposed=0 (tests/test_republication.py), m_invariant re-publishes the same
    people and passes, leaving each returning patient both values."""
    ward = ward_folder(tmp_path, ["HIV", "cancer", "flu", "none"])
    examples = Path(__file__).resolve().parents[1] / "docs" / "examples" / "ward"
    assert publisher(["release", "--input", str(examples / "2025.csv"), "--schema", str(examples / "schema.json"),
                      "--anonymized", str(examples / "2025-generalized.csv"), "--produced-by", "a tool 1.0", "--key",
                      str(ward / "keys" / "private.pem"), "--dataset-id", "ward", "--link-column", "patient",
                      "--out", str(ward / "w1")]) == 0
    assert "signatures" not in json.loads((ward / "w1.links.json").read_text())
    assert publisher(["release", "--input", str(examples / "2026.csv"), "--schema", str(examples / "schema.json"),
                      "--method", "m_invariant", "--param", "m=2", "--key", str(ward / "keys" / "private.pem"),
                      "--dataset-id", "ward", "--release-version", "2", "--link-column", "patient", "--previous",
                      str(ward / "w1"), "--target", "max_exposed=0", "--out", str(ward / "w2")]) == 0
    kept = json.loads((ward / "w2.links.json").read_text())["signatures"]
    assert kept["P-0192"] == ["HIV", "flu"] and kept["P-0415"] == ["cancer", "none"]
    for age, sex, disease, other in ((34, "F", "HIV", "flu"), (52, "M", "none", "cancer")):
        (ward / "me.json").write_text(json.dumps({"age": age, "sex": sex, "disease": disease}))
        capsys.readouterr()
        assert verifier(["joint", str(ward / "w1"), str(ward / "w2"), "--key", str(ward / "keys" / "public.pem"),
                         "--record", str(ward / "me.json"), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["attribute_disclosure"]["disease"]["left"] == {
            disease: 0.5, other: 0.5}


@pytest.mark.parametrize("signatures", [{"zed": ["flu", "dyspepsia"]}, {"bob": []}, {"bob": ["flu", "flu"]},
                                        {"bob": "flu"}, ["bob"]])
def test_a_links_file_s_signatures_are_read_strictly(ward, capsys, signatures):
    """Signatures name people of the release, each with a list of distinct sensitive values; anything else makes
    the links file invalid (LINKS_INVALID, exit 3) before any work."""
    assert _release(ward, "r1", FIRST) == 0
    links = json.loads((ward / "r1.links.json").read_text())
    (ward / "r1.links.json").write_text(json.dumps({**links, "signatures": signatures}))
    capsys.readouterr()
    assert _release(ward, "r2", SECOND, "--previous", str(ward / "r1")) == 3
    err = capsys.readouterr().err
    assert "LINKS_INVALID" in err and "signatures" in err and not (ward / "r2").exists()
