"""Her verdict in plain words, then the details, then what she can do (issue 53, items 2 and 3).

Her check (``verifier check --json``, the page's ``checkRecord``) is an expert's report: betas, spreads,
``F_rand``. :func:`plain_words` reads that report and gives what a person who is not a statistician needs first:

- ``summary``: her level and, in short sentences with no symbol, what someone could learn about her from the
  release and how sure he would be, against what anyone could guess without her record;
- ``details``: each technical figure, with one sentence of what it means and whether its value is good or bad
  for her: ``bad`` when a rule of her verdict policy fired on it or it misses the publisher's claim, ``good`` when
  it meets them, ``not judged`` for a reference (a base rate) or a figure nothing judges (delta under the default
  policy, which has no rule on it);
- ``steps``: for every level but protected, what she can do: write to the contact the release signs (or learn
  that it names none), her rights under the GDPR (Articles 15, 21 and 17), and checking again when a new release
  appears.

Every front end shows these same words: the command line and the TUI first, the page (``plain_words`` in
``verifier/page/plain_words.js``, held equal by the differential fuzz and tests/test_plain_words.py), the Python
API's ``RecordCheck.text`` and the shared Markdown report. docs/subject.md has the glossary. The summary is held
to the reading ease of a general newspaper (Flesch 50 or more) by the tests.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from verifier.attacks.disclosure import CERTAIN
from verifier.releases.verdict import deciding_bound
from verifier.text import literal, markdown, number

__all__ = ["LEVEL_SENTENCES", "POLICY_WORDS", "RIGHTS", "chance", "grouped", "joint_plain_words", "place_sentence", "plain_details", "plain_parts", "plain_steps", "plain_markdown", "plain_summary",
           "plain_text", "plain_words"]

#: the first sentence of each level
LEVEL_SENTENCES = {
    "protected": "Your record is protected.",
    "at_risk": "Your record is at risk.",
    "exposed": "Your record is exposed.",
    "not_verifiable": "This release failed its check, so do not trust what it seems to say about you.",
}
#: her rights, in the words of the GDPR, without advice
RIGHTS = ("The GDPR gives you the right to see the data held about you (Article 15), to object to its use "
          "(Article 21), and to ask for it to be erased (Article 17). This is not legal advice.")
#: the heading of the verdict policy's own sentences, which follow the details
POLICY_WORDS = "In the verdict policy's words:"
AGAIN = "When a new release of this data comes out, check your record again the same way."


def chance(p: float | None) -> str:
    """A probability as a whole percentage, rounded half up; ``less than 1%`` and ``more than 99%`` at the ends
    (a 0.4% risk is not 0%, and a 99.6% one is not certain)."""
    if p is None:
        return "unknown"
    pct = float(p) * 100
    if 0 < pct < 1:
        return "less than 1%"
    if 99 < pct < 100:
        return "more than 99%"
    return f"{math.floor(pct + 0.5)}%"


def _fired(out: Mapping[str, Any], figure: str, attribute: str | None = None) -> bool:
    """Whether a rule of her policy fired on this figure (of this attribute): the figure is bad for her."""
    return any(f["figure"] == figure and f["severity"] in ("at_risk", "exposed")
               and (attribute is None or f["attribute"] == attribute) for f in out["verdict"]["findings"])


#: the reading of a figure that passes the rule reading it, on a record that rule does not protect: no figure is
#: called good beside a level that is not (issue 60, item 1)
PASSES = "passes its rule, not what decides your level"


def _reading(out: Mapping[str, Any], figures: Sequence[str], attribute: str | None = None) -> str:
    """A detail's reading by the policy's rules on ``figures`` (of ``attribute``): bad where one fired; where one
    reads them and none fired, good on a protected record and :data:`PASSES` on any other; not judged where no rule
    of her policy reads them."""
    if any(_fired(out, f, attribute) for f in figures):
        return "bad"
    reads = (out["verdict"].get("policy") or {}).get("reads")
    if isinstance(reads, list) and not set(reads).intersection(figures):
        return "not judged"
    return "good" if out["verdict"]["level"] == "protected" else PASSES


def _judged(out: Mapping[str, Any], figure: str, value: str, meaning: str, figures: Sequence[str] = (),
            attribute: str | None = None) -> tuple[dict[str, str], Sequence[str], str | None]:
    """A detail read by the policy's rules on ``figures`` (:func:`_reading`; none: not judged), kept with them for
    :func:`_deciding_first`."""
    reading = _reading(out, figures, attribute) if figures else "not judged"
    return _detail(figure, value, meaning, reading), figures, attribute


def _deciding_first(out: Mapping[str, Any], found: list[tuple[dict[str, str], Sequence[str], str | None]]) -> list:
    """The details, the one whose figure decides her level first (the policy's head finding), then those a rule
    fired on, then the rest, each group in its own order."""
    findings = [f for f in out["verdict"]["findings"] if f["severity"] in ("at_risk", "exposed")]
    head = findings[0] if findings else None

    def rank(item: tuple[dict[str, str], Sequence[str], str | None]) -> int:
        detail, figures, attribute = item
        if head is not None and head["figure"] in figures and attribute in (None, head["attribute"]):
            return 0
        return 1 if detail["reading"] == "bad" else 2

    return [detail for detail, _, _ in sorted(found, key=rank)]


def _group_size(out: Mapping[str, Any]) -> int | None:
    """The fewest records of a published group she could be in (a generalized release's), or None."""
    if out.get("model") != "generalized":
        return None
    classes = out.get("classes")
    return int(out["smallest_class"] if isinstance(classes, int) and classes > 1 else out["class_size"])


def _identity_sentences(out: Mapping[str, Any]) -> list[str]:
    """Whether someone could find her record, in words."""
    n = _group_size(out)
    if n is not None:
        if n == 0:
            return ["No record in this release fits the facts you gave, so you may not be in it."]
        if n == 1:
            return ["Someone who knows a few facts about you could find your record: no one else's record fits them."]
        few = " That is too few to hide you well." if _fired(out, "class_size") else ""
        return [f"Someone who knows a few facts about you could narrow this release down to {n} records, and one "
                f"of them is yours. They would pick yours with a chance of 1 in {n}.{few}"]
    if _fired(out, "unchanged"):
        return ["Your record was published as it is, so anyone who knows it can find it."]
    p = out.get("p_value")
    if p is None:
        return ["The test of whether your record stands out was not run, so this check cannot say whether someone "
                "could find it."]
    if _fired(out, "p_value"):
        return [f"Your record stands out: only {chance(p)} of records picked at random come as close to your "
                "values as the one that matches you. So someone could find it."]
    return [f"Someone trying to find your record could not tell it from a record picked at random: {chance(p)} of "
            "random records come as close to your values."]


def grouped(n: int) -> str:
    """A whole number with a comma every three digits: 3,000."""
    return f"{int(n):,}"


def place_sentence(out: Mapping[str, Any]) -> str | None:
    """Her place among the levels the publisher signed for every record (``claims.policy_levels``, carried in her
    check as ``signed_levels``; issue 51, item 4), under her policy; None where the release signs none."""
    signed, level = out.get("signed_levels"), out["verdict"]["level"]
    if not isinstance(signed, Mapping) or level not in ("exposed", "at_risk", "protected"):
        return None
    policy, mine = signed.get("policy") or {}, out["verdict"].get("policy") or {}
    if policy.get("sha256") != mine.get("sha256"):
        return (f"The publisher counted every record's level under another verdict policy "
                f"({literal(policy.get('name'))}), so its counts do not compare with yours.")
    if _fired(out, "untested"):  # the counts are her level with the random-match test, which she did not run
        return None
    words, count, records, checked = level.replace("_", " "), signed[level], signed["records"], signed["checked"]
    if checked == records and count == 0:
        return (f"The publisher counted no record {words} among the {grouped(records)} in this release, yet yours "
                "is: ask the publisher why.")
    if checked == records:
        among = f"{words} among the {grouped(records)} in this release."
        return f"You are the only record {among}" if count == 1 else f"You are one of {grouped(count)} records {among}"
    return (f"Of {grouped(checked)} records the publisher checked, drawn at random from {grouped(records)}, "
            f"{grouped(count)} {'is' if count == 1 else 'are'} {words} like yours.")


def _attribute_sentences(entries: Mapping[str, Any], source: str, absent: str) -> list[str]:
    """Per sensitive attribute, how often someone guesses her value right from ``source``, against ``absent``."""
    lines = []
    for name, entry in (entries or {}).items():
        shown, prior, risk = literal(name), chance(entry.get("prior")), entry.get("risk")
        if risk is None:
            continue
        if entry.get("mode") == "joint" and isinstance(entry.get("left"), dict) and not risk:  # hers is not left
            lines.append(f"Your {shown} is not among the values {source} leave for you: check your record, or these "
                         "are not all releases of you.")
        else:
            # her risk is the most the named intruder could learn, not what he learns
            who = "At worst, someone who knows how the release was made" if deciding_bound(entry) else "Someone"
            guess = f"tell your {shown} for certain" if risk >= CERTAIN else \
                f"guess your {shown} right {chance(risk)} of the time"
            lines.append(f"{who} could {guess} from {source}. Without {absent}, they would guess it right {prior} "
                         "of the time.")
    return lines


def plain_summary(out: Mapping[str, Any]) -> list[str]:
    """Her level, then what someone could learn about her and how sure he would be, in plain sentences."""
    level = out["verdict"]["level"]
    if level == "not_verifiable":
        return [LEVEL_SENTENCES[level], "It may have been changed after it was signed, or a part of it is missing."]
    place = place_sentence(out)
    lines = [LEVEL_SENTENCES[level], *([place] if place else []), *_identity_sentences(out),
             *_attribute_sentences(out.get("attribute_disclosure"), "this release", "it")]
    if out.get("claim_holds") is False:
        lines.append("The publisher promised more protection than your record gets.")
    return lines


def _detail(figure: str, value: str, meaning: str, reading: str) -> dict[str, str]:
    return {"figure": figure, "value": value, "meaning": meaning, "reading": reading}


def _ranked_details(out: Mapping[str, Any]) -> list[tuple[dict[str, str], tuple[str, ...], str | None]]:
    """Her distance, her spreads against the claim, and the random-match test's p-value, each with the figures the
    policy reads it by."""
    claimed = out.get("claimed") or {}
    promised = claimed.get("distance")
    found = [_judged(out, "d, your permutation distance", number(out["distance"]),
                     "How far your values were moved among the others when the release was made: the larger, the "
                     "better mixed." + ("" if promised is None else f" The publisher claimed at least "
                                        f"{number(promised)} (D)."), ("distance", "unchanged"))]
    kinds = out.get("spread_kinds") or []
    at_claim = out.get("variances_at_claimed_distance")
    for j, name in enumerate(out["attributes"]):
        v = (claimed.get("variances") or [])[j] if j < len(claimed.get("variances") or []) else None
        claims = v is not None and at_claim is not None and at_claim[j] is not None
        what = "variance" if j < len(kinds) and kinds[j] == "variance" else "diversity"
        found.append(_judged(
            out, f"spread of {literal(name)} ({what})", number(out["variances"][j]),
            "How much the released values near your record differ: the larger, the better your value is hidden. "
            + (f"The publisher claimed at least {number(v)} (v) at distance {number(claimed.get('distance'))} "
               f"(D), where yours is {number(at_claim[j])}." if claims else "The publisher claimed no spread for it.")))
    p = out.get("p_value")
    found.append(_judged(out, "F_rand, your random-match p-value", "not run" if p is None else number(p),
                         "The share of random records that match your values as closely as your own match does: "
                         "near 0 means your record stands out.", ("p_value", "untested")))
    return found


def plain_details(out: Mapping[str, Any]) -> list[dict[str, str]]:
    """Each technical figure: its name, its value, one sentence of meaning, and its reading by the rule of her
    policy that reads it (:func:`_reading`), the figure that decides her level first."""
    if out["verdict"]["level"] == "not_verifiable":
        return [_detail("reason", str(out.get("reason")), "Why the release failed its check.", "bad")]
    n = _group_size(out)
    if n is not None:
        found = [_judged(out, "k, your group size", number(n), "How many released records fit the facts someone may "
                         "know about you: the more, the better.", ("class_size", "no_group"))]
    else:
        found = _ranked_details(out)
    for name, entry in (out.get("attribute_disclosure") or {}).items():
        shown = literal(name)
        found += [
            _judged(out, f"risk of {shown}", number(entry.get("risk"), share=True),
                    f"How often someone using this release would guess your {shown} right.", ("posterior",), name),
            _judged(out, f"base rate of {shown}", number(entry.get("prior"), share=True),
                    "How often anyone would guess it right without your record: the share of records with your "
                    "value.", ("prior",), name),
            _judged(out, f"beta of {shown}", number(entry.get("beta")),
                    "How much the release raises that chance, as a share of the base rate: 0 means not at all.",
                    ("beta",), name),
            _judged(out, f"delta of {shown}", number(entry.get("delta")),
                    "The same gain on a log scale: 0 means none.", ("delta",), name)]
    found.append(_judged(out, "the publisher's claims", "hold" if out.get("claim_holds") is not False else "broken",
                         "Whether the protection the publisher promised holds for your record.", ("claim_broken",)))
    unwitnessed = any(f["figure"] == "unwitnessed" for f in out["verdict"]["findings"])
    found.append(_judged(out, "log proof", "none or too few witnesses" if unwitnessed else "witnessed",
                         "Whether witnesses vouch that everyone is shown this same release: a notice, which no rule "
                         "of the policy reads."))
    return _deciding_first(out, found)


def plain_steps(out: Mapping[str, Any]) -> list[str]:
    """What she can do: nothing to do when protected; else whom to ask, her rights, and checking again."""
    level = out["verdict"]["level"]
    if level == "protected":
        return []
    contact = out.get("contact")
    if level == "not_verifiable":
        ask = "Ask whoever gave you this release for a copy that passes the check."
    elif isinstance(contact, str) and contact:
        ask = (f"Write to the publisher at {literal(contact)} and ask what they hold about you and how they keep it "
               "safe.")
    else:
        ask = "This release names no contact. Ask whoever gave it to you who made it, and write to them."
    return [ask, RIGHTS, AGAIN]


def plain_words(out: Mapping[str, Any]) -> dict[str, Any]:
    """The plain summary, the details and the steps of her check (see the module's text)."""
    return {"summary": plain_summary(out), "details": plain_details(out), "steps": plain_steps(out)}


def plain_parts(out: Mapping[str, Any]) -> list[str]:
    """Her check's plain words in paragraphs, as the command line and the TUI print them: the level in capitals
    with the summary, what she can do (none when protected), then the details under their heading."""
    words = out.get("plain") or plain_words(out)
    level = out["verdict"]["level"].replace("_", " ").upper()
    parts = [f"{level}: " + " ".join(words["summary"])]
    if words["steps"]:
        parts.append("What you can do:\n" + "\n".join(f"- {s}" for s in words["steps"]))
    parts.append("Details:\n" + "\n".join(f"- {d['figure']}: {d['value']} ({d['reading']}). {d['meaning']}"
                                          for d in words["details"]))
    return parts


def plain_text(out: Mapping[str, Any]) -> str:
    """:func:`plain_parts` as one text, a blank line between paragraphs."""
    return "\n\n".join(plain_parts(out))


def joint_plain_words(out: Mapping[str, Any]) -> dict[str, Any]:
    """Her joint check's plain words (``verifier joint --json``'s object): her level, whether the releases together
    or one alone decide it, what someone holding all of them could learn, then the details and the steps."""
    level, releases = out["verdict"]["level"], out["releases"]
    order = ("protected", "at_risk", "exposed")
    alone = [r for r in releases if r["level_alone"] == level]
    summary = [LEVEL_SENTENCES[level]]
    if not alone and level in order:
        summary.append(f"Together, these {len(releases)} releases tell more about you than any one of them.")
    elif level != "protected" and alone:
        summary.append(f"One of them alone is enough for this: {literal(alone[0]['release'])}.")
    p = out.get("p_joint")
    if p is not None:
        summary.append(f"Your record stands out: only {chance(p)} of random records come as close to your values in "
                       "every release at once." if _fired(out, "p_value") else
                       f"Someone holding all of them could not tell your record from a record picked at random: "
                       f"{chance(p)} of random records come as close to your values in every release at once.")
    summary += _attribute_sentences(out.get("attribute_disclosure"), "these releases together", "them")
    details = [_detail(f"alone: {literal(r['release'])}", r["level_alone"].replace("_", " "),
                       "Your level if this release were the only one.",
                       "bad" if r["level_alone"] != "protected" else "good" if level == "protected" else
                       "not what decides your level") for r in releases]
    for name, entry in (out.get("attribute_disclosure") or {}).items():
        if entry.get("risk") is not None:
            details.append(_detail(f"risk of {literal(name)}, together", number(entry["risk"], share=True),
                                   "How often someone holding every release would guess it right.",
                                   _reading(out, ("posterior",), name)))
    if p is not None:
        details.append(_detail("F_rand, together", number(p), "The share of random records as close to yours in "
                               "every release at once: near 0 means your record stands out.",
                               _reading(out, ("p_value",))))
    contacts = [c for c in out.get("contacts") or [] if c]
    steps = [] if level == "protected" else [
        (f"Write to the publishers at {', '.join(literal(c) for c in contacts)} and ask what they hold about you and "
         "how they keep it safe.") if contacts else
        "These releases name no contact. Ask whoever gave them to you who made them, and write to them.",
        RIGHTS, AGAIN]
    return {"summary": summary, "details": details, "steps": steps}


def plain_markdown(out: Mapping[str, Any]) -> list[str]:
    """Her verdict in the shared Markdown report: the level and summary, what she can do, the details, then the
    verdict policy's own sentences."""
    words = out.get("plain") or plain_words(out)
    lines = [f"## Verdict: {out['verdict']['level'].replace('_', ' ')}", "", markdown(" ".join(words["summary"]))]
    if words["steps"]:
        lines += ["", "## What you can do", "", *[f"- {markdown(s)}" for s in words["steps"]]]
    lines += ["", "## Details", "", *[f"- **{markdown(d['figure'])}: {markdown(d['value'])}** ({d['reading']}). "
                                      f"{markdown(d['meaning'])}" for d in words["details"]]]
    lines += ["", f"### {POLICY_WORDS.rstrip(':')}", "", *[f"- {markdown(line)}" for line in out["verdict"]["lines"]]]
    return lines
