"""Her first minute (issue 53, items 2, 3 and 4): her verdict in plain words, then what she can do, then the
details, the same in the command line, the TUI, the page (Python and JavaScript twins), the API and the shared
report; the plain part held to a general newspaper's reading ease."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.fuzz import NODE_PAGE
from conftest import PAPER, clinic
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.page import page_html
from verifier.releases.plain_words import POLICY_WORDS, RIGHTS, chance, joint_plain_words, plain_words

JOINT = "joint: sd, a contact and sd, no contact"
JARGON = ("beta", "delta", "F_rand", "p-value", "quasi", "posterior", "permutation", "d =", "v =", "anonymity",
          "equivalence class", "intruder", "rank")


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    """`verifier check --json` of her record in releases of every family and level, and the command line's text
    of each: {name: (json, text)}."""
    root = tmp_path_factory.mktemp("plain")
    assert publisher(["keygen", "--out", str(root / "keys"), "--unencrypted"]) == 0
    clinic(root, 60)
    lines = (root / "x.csv").read_text().splitlines()
    header = lines[0].split(",")
    first = dict(zip(header, lines[1].split(",")))
    first["age"] = int(first["age"])
    key = ["--key", str(root / "keys" / "private.pem"), "--seed", "3", "--samples", "50", "--allow-degenerate"]
    made = {
        "sd, a contact": (["--input", str(root / "x.csv"), "--schema", str(root / "schema.json"), "--method",
                           "sd_k_anonymity", "--param", "k=3", "--contact", "privacy@clinic.example"], first),
        "sd, no contact": (["--input", str(root / "x.csv"), "--schema", str(root / "schema.json"), "--method",
                            "sd_k_anonymity", "--param", "k=20"], first),
        "rr": (["--input", str(root / "x.csv"), "--schema", str(root / "schema.json"), "--method",
                "randomized_response", "--param", "l=2", "--param", "scope=both"], first),
        "noise": (["--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param", "relative_sd=0.5",
                   "--then", "reverse_mapping"], {"x1": 100.87, "x2": 902.21, "x3": 5108.54}),
    }
    out = {}
    for name, (argv, record) in made.items():
        release = root / name.replace(", ", "-").replace(" ", "-")
        assert publisher(["release", *argv, *key, "--dataset-id", "clinic", "--out", str(release)]) == 0, name
        (root / "me.json").write_text(json.dumps(record))
        args = ["check", str(release), "--key", str(root / "keys" / "public.pem"), "--record", str(root / "me.json"),
                "--samples", "2000"]
        found = []
        for extra in (["--json"], []):
            import contextlib
            import io

            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                assert verifier([*args, *extra]) == 0, name
            found.append(buffer.getvalue())
        out[name] = (json.loads(found[0]), found[1])
    # her joint check in both SD releases (one signs a contact): the same words, joint_plain_words
    (root / "me.json").write_text(json.dumps(first))
    joint = ["joint", str(root / "sd-a-contact"), str(root / "sd-no-contact"), "--key", str(root / "keys" / "public.pem"),
             "--record", str(root / "me.json")]
    found = []
    for extra in (["--json"], []):
        import contextlib
        import io

        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert verifier([*joint, *extra]) == 0
        found.append(buffer.getvalue())
    out[JOINT] = (json.loads(found[0]), found[1])
    return out


def test_her_levels_in_plain_words(checks):
    """What each release tells her, in sentences a reader without statistics follows."""
    sd, text = checks["sd, a contact"]
    words = sd["plain"]
    n = sd["smallest_class"] if sd["classes"] > 1 else sd["class_size"]
    assert words["summary"][0] == {"at_risk": "Your record is at risk.", "exposed": "Your record is exposed.",
                                   "protected": "Your record is protected."}[sd["verdict"]["level"]]
    entry = sd["attribute_disclosure"]["disease"]
    assert f"Someone could guess your disease right {chance(entry['risk'])} of the time from this release. " \
           f"Without it, they would guess it right {chance(entry['prior'])} of the time." in words["summary"] \
        or "Someone could tell your disease for certain" in " ".join(words["summary"])
    assert sd["verdict"]["rule"] == "small_group"
    # her place among the levels the publisher signed for every record (issue 51, item 4)
    signed = sd["signed_levels"]
    assert signed["checked"] == signed["records"] == 60 and signed["policy"] == {k: v for k, v in sd["verdict"]["policy"].items() if k != "reads"}
    assert words["summary"][1] == f"You are one of {signed['at_risk']} records at risk among the 60 in this release."
    assert words["summary"][2] == (f"Someone who knows a few facts about you could narrow this release down to {n} "
                                   f"records, and one of them is yours. They would pick yours with a chance of 1 in "
                                   f"{n}. That is too few to hide you well.")
    # every figure under the details, with its meaning and whether it is good or bad for her
    figures = {d["figure"]: d for d in words["details"]}
    assert set(figures) >= {"k, your group size", "risk of disease", "base rate of disease", "beta of disease",
                            "delta of disease", "the publisher's claims", "log proof"}
    assert figures["k, your group size"]["value"] == str(n)
    # the figure that decides her level first; on a record at risk no figure is called good: one that passes its
    # rule says it is not what decides her level, and what no rule reads is not judged (issue 60, item 1)
    assert words["details"][0]["figure"] == "k, your group size" and words["details"][0]["reading"] == "bad"
    assert figures["log proof"]["reading"] == "not judged"  # checked without a proof: a notice, no rule reads it
    assert figures["base rate of disease"]["reading"] == "not judged"
    assert figures["the publisher's claims"]["reading"] == "passes its rule, not what decides your level"
    assert not any(d["reading"] == "good" for d in words["details"])
    assert all(d["reading"] in ("bad", "not judged", "passes its rule, not what decides your level")
               and d["meaning"].endswith(".") for d in words["details"])
    # the protected paper example: no steps, her random-match test in words
    noise = checks["noise"][0]
    assert noise["verdict"]["level"] == "protected" and noise["plain"]["steps"] == []
    assert noise["plain"]["summary"][2] == ("Someone trying to find your record could not tell it from a record picked "
                                            f"at random: {chance(noise['p_value'])} of random records come as close "
                                            "to your values.")
    assert {d["figure"] for d in noise["plain"]["details"]} >= {"d, your permutation distance",
                                                                 "spread of x1 (variance)",
                                                                 "F_rand, your random-match p-value"}
    # protected: a figure that passes the rule reading it is good; the spreads, which no rule reads, are not judged
    readings = {d["figure"]: d["reading"] for d in noise["plain"]["details"]}
    assert readings["d, your permutation distance"] == readings["F_rand, your random-match p-value"] == "good"
    assert readings["spread of x1 (variance)"] == "not judged"
    # randomized response publishes her age as it is: found, and her disease read from her record by the named
    # intruder, who finds it (issue 58: the bound beside the model's risk), which the policy's first rule says
    rr = checks["rr"][0]
    assert rr["verdict"]["level"] == "exposed" and rr["verdict"]["rule"] == "value_near_certain"
    assert rr["attribute_disclosure"]["disease"]["value_bound"] >= 0.99
    assert rr["plain"]["summary"][2] == "Your record was published as it is, so anyone who knows it can find it."


def test_every_level_but_protected_ends_with_what_she_can_do(checks):
    for name, (out, text) in checks.items():
        steps = out["plain"]["steps"]
        if name == JOINT:  # the contacts of every release she gave
            assert out["contacts"] == ["privacy@clinic.example"] and (steps == [] or steps[0].startswith(
                "Write to the publishers at privacy@clinic.example and ask"))
            continue
        if out["verdict"]["level"] == "protected":
            assert steps == [] and "What you can do:" not in text, name
            continue
        assert steps[1] == RIGHTS and "Article 15" in RIGHTS and "Article 21" in RIGHTS and "Article 17" in RIGHTS
        assert steps[2].startswith("When a new release of this data comes out, check your record again")
        if name == "sd, a contact":
            assert out["contact"] == "privacy@clinic.example"
            assert steps[0].startswith("Write to the publisher at privacy@clinic.example and ask")
        else:
            assert out["contact"] is None
            assert steps[0] == "This release names no contact. Ask whoever gave it to you who made it, and write to them."


def test_the_command_line_says_it_plainly_first_then_the_steps_then_the_details(checks):
    for name, (out, text) in checks.items():
        plain = " ".join(" ".join(text.split("\n\n")[1:2]).split())  # the paragraph after the release's OK
        level = out["verdict"]["level"].replace("_", " ").upper()
        assert plain == f"{level}: " + " ".join(out["plain"]["summary"]), (name, plain)
        where = [text.index(h) for h in ("Details:", POLICY_WORDS)]
        if out["plain"]["steps"]:
            where.insert(0, text.index("What you can do:"))
        assert where == sorted(where), name
        assert not any(word in plain for word in JARGON), (name, plain)


def syllables(word: str, dic) -> int:
    return max(1, len(dic.positions(word.lower())) + 1)


def flesch(text: str) -> float:
    """Flesch reading ease: 206.835 - 1.015 words per sentence - 84.6 syllables per word; syllables from pyphen's
    English hyphenation (numbers and e-mail addresses are not words)."""
    import pyphen

    dic = pyphen.Pyphen(lang="en_US")
    text = re.sub(r"\S+@\S+", "", text)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"[A-Za-z]", s)]
    words = re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?", text)
    return 206.835 - 1.015 * len(words) / len(sentences) - 84.6 * sum(syllables(w, dic) for w in words) / len(words)


def test_the_plain_part_reads_as_a_general_newspaper(checks):
    """Flesch reading ease of 50 or more, for the summary and the steps of every release's verdict; the measure
    itself tells a child's sentence from a lawyer's."""
    assert flesch("The cat sat on the mat. It was warm.") > 90
    assert flesch("Notwithstanding the aforementioned considerations, the organisation's determination "
                  "constitutes an irrevocable administrative authorization.") < 0
    for name, (out, _) in checks.items():
        words = out["plain"]
        assert flesch(" ".join(words["summary"])) >= 50, (name, words["summary"])
        if words["steps"]:
            assert flesch(" ".join(words["steps"])) >= 50, (name, words["steps"])


def test_a_chance_reads_as_a_whole_percentage_with_its_ends_kept():
    assert [chance(p) for p in (0, 0.004, 0.005, 0.125, 1 / 3, 2 / 3, 0.994, 0.996, 1.0, None)] == [
        "0%", "less than 1%", "less than 1%", "13%", "33%", "67%", "more than 99%", "more than 99%", "100%",
        "unknown"]


_NODE = NODE_PAGE + r"""
const cases = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
process.stdout.write(JSON.stringify({ joint: cases.joint.map((o) => pp.joint_plain_words(o)),
  words: cases.outs.map((o) => pp.plain_words(o)),
  text: cases.outs.map((o) => pp.plain_text(o)), chance: cases.chances.map((p) => pp.chance(p)) }));
"""


def test_the_pages_twins_give_the_same_words(checks, tmp_path):
    """plain_words, plain_text and chance in the page's script (Node.js) equal their Python twins, on every check
    above and on made-up ones: a release that failed, a value told for certain, a broken promise, a witnessed log."""
    node = shutil.which("node")
    assert node, "Node.js 20 is installed on this project's machines"
    from verifier.releases.plain_words import plain_text

    outs = [out for name, (out, _) in checks.items() if name != JOINT]
    sd = json.loads(json.dumps(checks["sd, a contact"][0]))
    sd["attribute_disclosure"]["disease"]["risk"] = 1.0
    sd["claim_holds"] = False
    sd["verdict"]["findings"] = [f for f in sd["verdict"]["findings"] if f["figure"] != "unwitnessed"]
    sd["contact"] = "a\u202eb@x.example"
    sampled = json.loads(json.dumps(checks["sd, no contact"][0]))
    sampled["signed_levels"].update(records=1234567, checked=200)
    other = json.loads(json.dumps(checks["noise"][0]))
    other["signed_levels"]["policy"] = {"name": "an office\u202e", "version": 2, "sha256": "0" * 64}
    unsigned = json.loads(json.dumps(checks["noise"][0]))
    unsigned["signed_levels"] = None
    unsigned["verdict"]["level"] = "exposed"  # and a count that holds no record of her level
    none = json.loads(json.dumps(checks["noise"][0]))
    none["signed_levels"]["protected"] = 0
    outs += [none, sampled, other, unsigned, sd, {"verified": False, "reason": "SIGNATURE_INVALID", "message": "FAIL",
                                            "verdict": {"level": "not_verifiable", "findings": [], "lines": []}}]
    for out in outs:
        out.pop("plain", None)
    chances = [0, 1e-9, 0.005, 0.0149999, 0.015, 0.125, 0.5, 0.995, 0.99999999, 1.0, None]
    (tmp_path / "page.js").write_text(re.search(r"<script>(.*)</script>", page_html(), re.S).group(1))
    (tmp_path / "run.js").write_text(_NODE)
    joint = json.loads(json.dumps(checks[JOINT][0]))
    certain = json.loads(json.dumps(joint))
    for entry in certain["attribute_disclosure"].values():
        entry["risk"] = 1.0
    certain["contacts"] = []
    joints = [joint, certain]
    for out in joints:
        out.pop("plain")
    (tmp_path / "cases.json").write_text(json.dumps({"outs": outs, "chances": chances, "joint": joints}))
    done = subprocess.run([node, str(tmp_path / "run.js"), str(tmp_path / "page.js"), str(tmp_path / "cases.json")],
                          capture_output=True, text=True, timeout=60, check=True)
    page = json.loads(done.stdout)
    assert page["words"] == [plain_words(o) for o in outs]
    assert page["text"] == [plain_text(o) for o in outs]
    assert page["chance"] == [chance(p) for p in chances]
    assert page["joint"] == [joint_plain_words(o) for o in joints]
    assert page["joint"][0] == checks[JOINT][0]["plain"]
    assert "Someone could tell your disease for certain from these releases together." in " ".join(
        page["joint"][1]["summary"])
    # the made-up cases say what they should
    assert page["words"][-6]["summary"][1] == ("The publisher counted no record protected among the 20 in this "
                                               "release, yet yours is: ask the publisher why.")
    assert page["words"][-5]["summary"][1] == ("Of 200 records the publisher checked, drawn at random from 1,234,567, "
                                               f"{sampled['signed_levels']['protected']} are protected like yours.")
    assert page["words"][-4]["summary"][1] == ("The publisher counted every record's level under another verdict "
                                               "policy (an office\\u202e), so its counts do not compare with yours.")
    assert page["words"][-3]["summary"][1].startswith("Someone trying to find your record")
    assert "Someone could tell your disease for certain" in " ".join(page["words"][-2]["summary"])
    assert page["words"][-2]["summary"][-1] == "The publisher promised more protection than your record gets."
    assert "a\\u202eb@x.example" in page["words"][-2]["steps"][0]  # her terminal never turns the address around
    assert page["words"][-1]["summary"][0].startswith("This release failed its check")


def test_the_shared_report_has_the_same_block(checks, tmp_path):
    from verifier.releases.plain_words import plain_markdown

    out = checks["sd, a contact"][0]
    lines = plain_markdown(out)
    assert lines[0] == f"## Verdict: {out['verdict']['level'].replace('_', ' ')}"
    assert "## What you can do" in lines and "## Details" in lines and "### In the verdict policy's words" in lines
    assert any("privacy@clinic.example" in line for line in lines)
