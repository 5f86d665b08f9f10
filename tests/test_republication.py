"""A release of people released before (issue 40, item 2): ``publisher release --previous DIR --link-column COL``
signs the earlier releases' digests and the joint figures, refuses what together discloses past a target, and
refuses fresh noise on people an earlier noisy release holds."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat

import numpy as np
import pytest

from conftest import resign_statement, ward_folder
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.releases.verification import MANIFEST

DISEASES = ["HIV", "cancer", "flu", "none"]


@pytest.fixture()
def ward(tmp_path):
    return ward_folder(tmp_path, DISEASES)


def _external(folder, name: str, original: str, published: str, *more: str, code: int = 0) -> int:
    """Publish ``published`` (another tool's generalization of ``original``) as release ``name``."""
    (folder / f"{name}-original.csv").write_text(original)
    (folder / f"{name}.csv").write_text(published)
    return publisher(["release", "--input", str(folder / f"{name}-original.csv"), "--schema",
                      str(folder / "schema.json"),
                      "--anonymized", str(folder / f"{name}.csv"), "--produced-by", "a hospital's tool 1.0", "--key",
                      str(folder / "keys" / "private.pem"), "--dataset-id", "ward", "--release-version",
                      str(ord(name[-1]) - ord("a") + 1), "--out", str(folder / name), *more])


FIRST = ("pid,age,sex,disease\np1,34,F,HIV\np2,36,F,flu\np3,52,M,none\np4,55,M,cancer\n",
         "age,sex,disease\n30-39,F,HIV\n30-39,F,flu\n50-59,M,none\n50-59,M,cancer\n")
SECOND = ("pid,age,sex,disease\np1,34,F,HIV\np5,33,F,cancer\np3,52,M,none\np6,58,M,flu\n",
          "age,sex,disease\n30-34,F,HIV\n30-34,F,cancer\n50-59,M,none\n50-59,M,flu\n")


def test_a_second_release_signs_the_first_and_what_they_expose_together(ward, capsys):
    """p1 (HIV) and p3 (none) are in both: {HIV, flu} and {HIV, cancer}, {none, cancer} and {none, flu}. Each
    release alone exposes nobody; together, both. The manifest signs the first release's digest and these
    figures; verify shows them; a max_exposed target refuses the release, naming how many and which figure."""
    assert _external(ward, "a", *FIRST, "--link-column", "pid") == 0
    links = ward / "a.links.json"
    assert stat.S_IMODE(os.stat(links).st_mode) == 0o600 and not (ward / "a" / "a.links.json").exists()
    assert json.loads(links.read_text())["ids"] == ["p1", "p2", "p3", "p4"]
    # the ids are never published: not in any file, nor in the signed manifest inside the envelope's base64 (whose
    # letters may spell "p1" by chance, so the envelope is read decoded)
    published = [p.read_bytes() for p in (ward / "a").iterdir() if p.name != "manifest.dsse.json"]
    published.append(base64.b64decode(json.loads((ward / "a" / "manifest.dsse.json").read_bytes())["payload"]))
    assert not any(re.search(rb"\bp[1-4]\b", data) for data in published)
    capsys.readouterr()
    assert _external(ward, "b", *SECOND, "--link-column", "pid", "--previous", str(ward / "a"), "--json") == 0
    assert json.loads(capsys.readouterr().out)["links_file"] == str(ward / "b.links.json")
    together = json.loads((ward / "b" / MANIFEST).read_bytes())["predicate"]["claims"]["composition"]
    digest = hashlib.sha256((ward / "a" / MANIFEST).read_bytes()).hexdigest()
    assert together["earlier"] == [{"datasetId": "ward", "releaseVersion": 1, "records": 4, "linked": 2,
                                    "manifest_sha256": digest}]
    levels = together["policy_levels"]
    assert (together["linked"], levels["checked"], levels["exposed"], together["newly_exposed"]) == (2, 2, 2, 2)
    assert together["attribute_disclosure"] == {"disease": {"max": 1.0, "certain_share": 1.0}}
    alone = json.loads((ward / "b" / MANIFEST).read_bytes())["predicate"]["claims"]["policy_levels"]
    assert alone["exposed"] == 0
    assert verifier(["verify", str(ward / "b"), "--key", str(ward / "keys" / "public.pem")]) == 0
    out = capsys.readouterr().out
    assert "together: of all 2 people released before: exposed 2, at risk 0, protected 0; exposed in no release " \
           "alone: 2" in out and "earlier: ward version 1 (4 records, manifest SHA-256 " in out
    code = _external(ward, "c", *SECOND, "--link-column", "pid", "--previous", str(ward / "a"), "--target",
                     "max_exposed=0")
    err = capsys.readouterr().err
    assert code == 3 and "COMPOSITION_DISCLOSURE" in err and "(max_exposed)" in err
    assert "Of the 2 people checked who were released before (2 in all), 2 are exposed together" in err
    assert not any(p.name.startswith("c.") or p.name == "c" for p in ward.iterdir() if p.name != "c.csv"
                   and p.name != "c-original.csv")


def test_m_invariant_re_publication_passes_where_plain_re_publication_is_refused(ward, capsys):
    """Xiao and Tao's Bob (30, flu) and the 55-year-old with bronchitis are in both releases. Re-published
    2-diverse, Bob's {flu, dyspepsia} meets {flu, gastritis}: exposed, refused under max_exposed=0. Re-published
    m-invariant (his group keeps {flu, dyspepsia}, with Eve who joined): nobody is exposed, and it is published."""
    first = ("pid,age,sex,disease\nbob,30,M,flu\nalice,32,M,HIV\ncarl,50,M,cancer\ndan,55,M,none\n",
             "age,sex,disease\n30-34,M,flu\n30-34,M,HIV\n50-59,M,cancer\n50-59,M,none\n")
    assert _external(ward, "a", *first, "--link-column", "pid") == 0
    plain = ("pid,age,sex,disease\nbob,30,M,flu\ncarol,36,M,cancer\ndan,55,M,none\nfred,58,M,HIV\n",
             "age,sex,disease\n30-39,M,flu\n30-39,M,cancer\n50-59,M,none\n50-59,M,HIV\n")
    invariant = ("pid,age,sex,disease\nbob,30,M,flu\ncarol,36,M,cancer\ndan,55,M,none\neve,33,M,HIV\n",
                 "age,sex,disease\n30-34,M,flu\n35-59,M,cancer\n35-59,M,none\n30-34,M,HIV\n")
    capsys.readouterr()
    argv = ["--link-column", "pid", "--previous", str(ward / "a"), "--target", "max_exposed=0"]
    assert _external(ward, "b", *plain, *argv) == 3
    assert "COMPOSITION_DISCLOSURE" in capsys.readouterr().err
    assert _external(ward, "c", *invariant, *argv) == 0
    together = json.loads((ward / "c" / MANIFEST).read_bytes())["predicate"]["claims"]["composition"]
    assert (together["linked"], together["policy_levels"]["exposed"], together["policy_levels"]["at_risk"]) == (2, 0, 2)
    assert together["attribute_disclosure"]["disease"]["max"] == 0.5


def _clinic(folder, rows: int = 120) -> None:
    rng = np.random.default_rng(40)
    lines = ["pid,age,income,disease"] + [f"p{i},{rng.integers(18, 80)},{rng.integers(10, 90) * 1000},"
                                          f"{rng.choice(DISEASES)}" for i in range(rows)]
    (folder / "x.csv").write_text("\n".join(lines) + "\n")
    (folder / "numeric.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "income", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": DISEASES}]}))


def _method(folder, name: str, method: list[str], *more: str) -> int:
    return publisher(["release", "--input", str(folder / "x.csv"), "--schema", str(folder / "numeric.json"), *method,
                      "--allow-degenerate", "--samples", "200", "--seed", "5", "--key",
                      str(folder / "keys" / "private.pem"), "--dataset-id", "clinic", "--release-version",
                      str(len(name)), "--link-column", "pid", "--out", str(folder / name), *more])


def test_fresh_noise_on_people_a_noisy_release_holds_is_refused(ward, capsys):
    """Two noisy copies average to half the noise: additive noise after additive noise is refused before any
    work; after rank swapping (no noise of its own) it is published, with the joint random-match test."""
    _clinic(ward)
    noise = ["--method", "additive_noise", "--param", "relative_sd=0.5", "--then", "reverse_mapping"]
    assert _method(ward, "a", noise) == 0
    assert _method(ward, "aa", noise, "--previous", str(ward / "a")) == 3
    err = capsys.readouterr().err
    assert "COMPOSITION_FRESH_NOISE" in err and "120 people" in err and "halves the noise's variance" in err
    assert not (ward / "aa").exists() and not (ward / "aa.links.json").exists()
    assert _method(ward, "b", ["--method", "rank_swapping", "--param", "p=10"]) == 0
    assert _method(ward, "bb", noise, "--previous", str(ward / "b")) == 0
    together = json.loads((ward / "bb" / MANIFEST).read_bytes())["predicate"]["claims"]["composition"]
    assert together["linked"] == 120 and together["policy_levels"]["checked"] == 120
    assert set(together["attribute_disclosure"]) == {"disease"}


def _run(argv, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = publisher(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case, code, reason", [
    ("no link column", 2, "--previous needs --link-column"),
    ("a link column not in the file", 3, "--link-column 'person' is not a column of the file"),
    ("no links file", 3, "LINKS_MISSING"),
    ("a links file that is not one", 3, "LINKS_INVALID"),
    ("another release's links", 3, "LINKS_MISMATCH"),
    ("another link column", 3, "LINKS_MISMATCH"),
    ("a repeated id", 3, "LINK_INVALID"),
    ("another schema", 3, "SCHEMA_MISMATCH"),
    ("the same release twice", 2, "is given twice"),
])
def test_what_cannot_be_checked_together_is_refused_before_any_work(ward, capsys, case, code, reason):
    assert _external(ward, "a", *FIRST, "--link-column", "pid") == 0
    assert _external(ward, "b", *SECOND, "--link-column", "pid") == 0
    original, published = SECOND
    previous = ["--previous", str(ward / "a")]
    link = ["--link-column", "pid"]
    if case == "no link column":
        link = []
    elif case == "a link column not in the file":
        link = ["--link-column", "person"]
    elif case == "no links file":
        os.unlink(ward / "a.links.json")
    elif case == "a links file that is not one":
        links = json.loads((ward / "a.links.json").read_text())
        (ward / "a.links.json").write_text(json.dumps({**links, "ids": ["p1", "p1"]}))
    elif case == "another release's links":
        os.replace(ward / "b.links.json", ward / "a.links.json")
    elif case == "another link column":
        original = original.replace("pid,", "person,")
        link = ["--link-column", "person"]
    elif case == "a repeated id":
        original = original.replace("p5,", "p1,")
    elif case == "another schema":
        schema = json.loads((ward / "schema.json").read_text())
        schema["attributes"][2]["categories"] = [*DISEASES, "other"]
        (ward / "schema.json").write_text(json.dumps(schema))
    elif case == "the same release twice":
        previous *= 2
    found, err = _run(["release", "--input", str(_write(ward / "c-original.csv", original)), "--schema",
                       str(ward / "schema.json"), "--anonymized", str(_write(ward / "c.csv", published)),
                       "--produced-by", "a tool 1", "--key", str(ward / "keys" / "private.pem"), "--dataset-id",
                       "ward", "--release-version", "3", "--out", str(ward / "c"), *link, *previous], capsys)
    assert (found, reason in err) == (code, True), err
    assert "p1" not in err and "p5" not in err  # a person's id is never in a message
    assert not (ward / "c").exists() and not (ward / "c.links.json").exists()


def _write(path, text: str):
    path.write_text(text)
    return path


def test_a_re_signed_composition_that_misses_its_own_target_is_refused(ward, capsys):
    """A dishonest publisher who signs joint figures past the target the manifest signs, or people exposed
    together who outnumber the people exposed: refused by verify, like any claim against its own target."""
    assert _external(ward, "a", *FIRST, "--link-column", "pid") == 0
    assert _external(ward, "b", *SECOND, "--link-column", "pid", "--previous", str(ward / "a")) == 0
    key = ward / "keys" / "private.pem"

    def targets(statement):
        statement["predicate"]["targets"] = {"max_exposed": 1}

    resign_statement(ward / "b", key, targets)
    capsys.readouterr()
    assert verifier(["verify", str(ward / "b"), "--key", str(ward / "keys" / "public.pem")]) != 0
    assert "$.predicate.targets.max_exposed: the joint figures of claims.composition miss" in capsys.readouterr().err

    def newly(statement):
        statement["predicate"].pop("targets")
        statement["predicate"]["claims"]["composition"]["newly_exposed"] = 3

    resign_statement(ward / "b", key, newly)
    assert verifier(["verify", str(ward / "b"), "--key", str(ward / "keys" / "public.pem")]) != 0
    assert "$.predicate.claims.composition.newly_exposed" in capsys.readouterr().err


def test_the_audit_recomputes_the_joint_figures_from_the_originals(ward, capsys):
    """With the original, its linking column and the earlier release with its links file, every joint figure is
    recomputed; without them each is listed as unchecked, with why; a re-signed lie (one person exposed together,
    not two) is false."""
    assert _external(ward, "a", *FIRST, "--link-column", "pid") == 0
    assert _external(ward, "b", *SECOND, "--link-column", "pid", "--previous", str(ward / "a")) == 0
    argv = ["audit", str(ward / "b"), "--key", str(ward / "keys" / "public.pem"), "--original",
            str(ward / "b-original.csv"), "--json"]
    capsys.readouterr()
    assert verifier([*argv, "--previous", str(ward / "a")]) == 0
    out = json.loads(capsys.readouterr().out)
    joint = {c["claim"]: c for c in out["checks"] if c["claim"].startswith("composition.")}
    assert {"composition.earlier", "composition.linked", "composition.newly_exposed",
            "composition.policy_levels.exposed", "composition.attribute_disclosure.disease.max"} <= set(joint)
    assert all(c["ok"] for c in joint.values()) and joint["composition.policy_levels.exposed"]["computed"] == 2
    assert verifier(argv) == 0
    out = json.loads(capsys.readouterr().out)
    unchecked = {u["figure"]: u["reason"] for u in out["unchecked"]}
    assert unchecked["composition.linked"].startswith("needs the original with its linking column")

    def lie(statement):
        levels = statement["predicate"]["claims"]["composition"]["policy_levels"]
        levels.update(exposed=1, protected=1, exposed_share=1 / levels["checked"])
        statement["predicate"]["claims"]["composition"]["newly_exposed"] = 1

    resign_statement(ward / "b", ward / "keys" / "private.pem", lie)
    assert verifier([*argv, "--previous", str(ward / "a")]) == 1
    false = {c["claim"] for c in json.loads(capsys.readouterr().out)["checks"] if not c["ok"]}
    assert false == {"composition.policy_levels.exposed", "composition.policy_levels.protected",
                     "composition.policy_levels.exposed_share", "composition.newly_exposed"}
    assert verifier(["audit", str(ward / "b"), "--key", str(ward / "keys" / "public.pem"), "--previous",
                     str(ward / "a")]) == 2
    assert "give --original X.csv too" in capsys.readouterr().err


def test_her_joint_check_names_the_earlier_release_its_publisher_checked_it_with(ward, capsys):
    """``verifier joint`` says which of the releases she gives the later one signs as checked with it."""
    assert _external(ward, "a", *FIRST, "--link-column", "pid") == 0
    assert _external(ward, "b", *SECOND, "--link-column", "pid", "--previous", str(ward / "a")) == 0
    (ward / "me.json").write_text(json.dumps({"age": 34, "sex": "F", "disease": "HIV"}))
    argv = ["joint", str(ward / "a"), str(ward / "b"), "--key", str(ward / "keys" / "public.pem"), "--record",
            str(ward / "me.json")]
    capsys.readouterr()
    assert verifier([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["checked_with"] for r in out["releases"]] == [[], [str(ward / "a")]]
    assert verifier(argv) == 0
    assert f"its publisher checked it with {ward / 'a'} (the manifest signs their digests)" in capsys.readouterr().out
