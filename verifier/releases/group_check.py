"""A subject's check of her record in a generalized release (k-anonymous, l-diverse or masked tables).

Her *equivalence class* is the set of released rows whose every published
quasi-identifier cell contains her value: the rows an attacker who knows her
quasi-identifiers cannot tell apart from hers. Its size is her anonymity
set; per sensitive attribute, her risk is the share of those rows whose
published value is hers (a masked cell covering N values counts 1/N), and the
attacker's best guess is the value with the largest share (spec
attribute-disclosure section 12). Permutation distance and the random-match
test do not apply: generalized cells have no ranks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from verifier.attacks.classes import mask_probability, subject_class
from verifier.attacks.counterfeits import counterfeits_among
from verifier.attacks.suppression import suppressed_rows
from verifier.releases.facts import MODEL_WORDS, release_facts, signed_contact
from verifier.releases.family import NO_RANKS
from verifier.releases.exposure import with_base_rate
from verifier.releases.plain_words import plain_markdown, plain_words
from verifier.releases.policy import Policy, default_policy
from verifier.releases.verdict import (NO_PROOF, HerFigures, Verdict, claims_line, disclosure_breaches, disclosure_line,
                                      held_words, policy_verdict, target_breaches)
from verifier.text import figure, literal, markdown, number, plural

__all__ = ["GroupCheck", "check_group", "class_line", "classes_line", "group_disclosure_line", "masked_line",
           "suppression_line"]


@dataclass(frozen=True, eq=False, repr=False)
class GroupCheck:
    """Her results in a generalized release. ``repr`` never shows her record."""

    prepared: Any  # verifier.releases.subject.Prepared
    record: np.ndarray
    found: dict[str, Any]

    ranks_apply = False

    def __repr__(self) -> str:
        return f"GroupCheck(class_size={self.class_size})"

    @property
    def names(self) -> list[str]:
        return self.prepared.schema.names

    @property
    def class_size(self) -> int:
        return int(self.found["class_size"])

    @property
    def counterfeits(self) -> int:
        """How many of her candidates the release says are counterfeit (an m-invariant release's; else 0)."""
        return int(self.found.get("counterfeits", 0))

    @property
    def classes(self) -> int:
        """How many published classes her candidates fall in (1 where the cells do not overlap)."""
        return int(self.found.get("classes", 1 if self.found["rows"] else 0))

    @property
    def smallest_class(self) -> int:
        """The fewest people of a published class she could be in: her anonymity set against the intruder who
        knows everyone's quasi-identifiers and the method, who can rebuild which class is hers
        (:mod:`verifier.attacks.possible_classes`)."""
        return int(self.found.get("smallest_class", self.class_size))

    @property
    def rows(self) -> list[int]:
        """The released rows (numbered from 1) consistent with her quasi-identifiers."""
        return list(self.found["rows"])

    @property
    def disclosure(self) -> dict[str, Any]:
        return self.found["attribute_disclosure"]

    @property
    def claimed_k(self) -> int | None:
        k = (self.prepared.release.claims or {}).get("k")
        return k if isinstance(k, int) and not isinstance(k, bool) else None

    def claim_holds(self) -> bool | None:
        """Whether every class she could be in is at least as large as the claimed k (None when no k is claimed)."""
        if self.claimed_k is None:
            return None
        return self.smallest_class >= self.claimed_k

    def broken_claims(self) -> list[str]:
        """Her figures that break a claim: her group below the claimed k, a risk above its claimed maximum."""
        out = []
        if self.claim_holds() is False and self.classes > 1:
            out.append(f"A group of only {plural(self.smallest_class, 'person', plural_form='people')} is among those "
                       f"consistent with your values; the publisher claims every group has at least k = "
                       f"{self.claimed_k}.")
        elif self.claim_holds() is False:
            out.append(f"Only {plural(self.class_size, 'released record')} are consistent with your values; the "
                       f"publisher claims every group has at least k = {self.claimed_k}.")
        return out + disclosure_breaches(self.disclosure, self.prepared.release.claims)

    def figures(self) -> HerFigures:
        """What the verdict policy reads of her record: her group's size, her risks with their base rates, and
        the claims and targets her figures break."""
        broken = self.broken_claims() + target_breaches(self.prepared.release.predicate.get("targets"),
                                                        risks=self.disclosure, group=self.smallest_class)
        return HerFigures(self.disclosure, class_size=self.smallest_class, counterfeits=self.counterfeits,
                          broken=broken, classes=self.classes)

    def verdict(self, random: Any = None, policy: Policy | None = None, *,
                unwitnessed: str | None = NO_PROOF) -> Verdict:
        """Her level and headline under the verdict policy, every finding, and the sentences of her report."""
        details = [claims_line(self.broken_claims(), claimed=self.claimed_k is not None)]
        if self.class_size:
            details.append(class_line(len(self.rows), self.counterfeits))
        if self.classes > 1:
            details.append(classes_line(self.classes, self.smallest_class))
        said = suppression_line(self.rows, (np.flatnonzero(suppressed_rows(self.prepared.published)) + 1).tolist())
        details += [said] if said else []
        for name in self.disclosure:
            masked = masked_line(name, self.rows, self.prepared.published.cells[name],
                                 mask_probability(self.prepared.release.methods), self.disclosure[name].get("masks"))
            details += [masked] if masked else []
        details += [group_disclosure_line(name, r) for name, r in self.disclosure.items()]
        details.append(NO_RANKS)
        figures = replace(self.figures(), unwitnessed=unwitnessed)
        return policy_verdict(policy or default_policy(), figures, details=details)

    def to_json(self, random: Any = None, policy: Policy | None = None, *,
                unwitnessed: str | None = NO_PROOF) -> dict[str, Any]:
        release = self.prepared.release
        out = {
            "verified": True, "release": release.path, "fingerprint": release.key.fingerprint, "dataset_id": release.dataset_id,
            "release_version": release.release_version, "attributes": self.names, "model": "generalized",
            "class_size": self.class_size, "class_rows": self.rows, "counterfeits": self.counterfeits,
            "classes": self.classes, "smallest_class": self.smallest_class,
            "claimed": {"k": self.claimed_k}, "claim_holds": self.claim_holds(),
            "attribute_disclosure": self.disclosure,
            "formula_like_cells": self.prepared.formula_cells.count,
            "distance": None, "matches": None, "p_value": None,
            "not_applicable": {"permutation_distance": NO_RANKS, "random_match_test": NO_RANKS},
            "verdict": self.verdict(policy=policy, unwitnessed=unwitnessed).to_json(),
            "contact": signed_contact(release),
            "signed_levels": release.claims.get("policy_levels"),
        }
        return {**out, "plain": plain_words(out)}

    def to_markdown(self, random: Any = None, policy: Policy | None = None, *,
                    unwitnessed: str | None = NO_PROOF) -> str:
        """Her report as Markdown: the verified release, the verdict, her class and her risks."""
        data = self.to_json(policy=policy, unwitnessed=unwitnessed)
        lines = ["# My record in a verified release", "", "Written at my request by `verifier`; it holds figures about "
                 "my record, not the record itself.", "", "## The release", "", "| | |", "| --- | --- |"]
        lines += [f"| {markdown(k.strip())} | {markdown(v)} |" for k, v in release_facts(self.prepared.release)]
        lines += ["", *plain_markdown(data)]
        fakes = f", {self.counterfeits} of them counterfeit" if self.counterfeits else ""
        lines += ["", f"## My group: {plural(len(self.rows), 'released record')}{fakes}", "",
                  f"The publisher claims k = {self.claimed_k}."]
        if self.disclosure:
            lines += ["", "## Attribute disclosure", "",
                      "| sensitive attribute | risk | base rate | beta | delta | candidates | best guess |",
                      "| --- | --- | --- | --- | --- | --- | --- |"]
            lines += [f"| {markdown(json.dumps(n))} | {figure(r['risk'])} | {figure(r['prior'])} | {figure(r['beta'])} | "
                      f"{figure(r['delta'])} | {r['candidates']} | {markdown(json.dumps(r['best_guess']))} |"
                      for n, r in self.disclosure.items()]
        return "\n".join(lines) + "\n"


def class_line(rows: int, counterfeits: int) -> str:
    """Her anonymity set in words: the released records consistent with her, less the counterfeits among them."""
    if not counterfeits:
        return (f"{plural(rows, 'released record')} {'is' if rows == 1 else 'are'} consistent with your "
                "quasi-identifiers: an attacker who knows them cannot tell which one is yours.")
    people = rows - counterfeits
    return (f"{plural(rows, 'released record')} are consistent with your quasi-identifiers, "
            f"{plural(counterfeits, 'counterfeit record')} among them that the publisher added and counted "
            f"(m-invariance), so {plural(people, 'person', plural_form='people')} {'is' if people == 1 else 'are'} "
            "behind them: an attacker who knows your quasi-identifiers cannot tell which record is yours, nor which "
            "are counterfeit.")


def classes_line(classes: int, smallest: int) -> str:
    """Why her figures are her worst group's: her candidates fall in several published groups, and an intruder who
    knows everyone's quasi-identifiers and the published method can tell which is hers; she cannot."""
    return (f"Those records fall in {classes} published groups. Anyone who knows everyone's quasi-identifiers can "
            "rerun the published method and tell which group is yours; you cannot without their records, so your "
            "figures are those of the worst group you could be in (the smallest holds "
            f"{plural(smallest, 'person', plural_form='people')}).")


def group_disclosure_line(name: str, entry: dict[str, Any]) -> str:
    """Her risk for one sensitive attribute of a generalized release: the worst group's figure, what it assumes,
    and beside it the share among all her candidates (what an intruder who knows only her values learns)."""
    if entry.get("bound") != "worst_class":
        return disclosure_line(name, entry, MODEL_WORDS["group"])
    base, held = number(entry.get("prior"), share=True), held_words(entry)
    weaker = entry["candidate_set"]
    return (f"Your {literal(name)} is guessed right with probability {number(entry['risk'], share=True)} by an "
            "intruder who knows everyone's quasi-identifiers and the published method, if your record is in the "
            f"group of {plural(int(entry['worst_class_rows']), 'released record')} where that is likeliest (one of "
            f"{entry['classes']} groups consistent with your values); knowing only your own values, with probability "
            f"{number(weaker['risk'], share=True)} ({plural(int(entry['candidates']), 'candidate record')}). "
            f"{held[0].upper()}{held[1:]}, so anyone could guess it right with probability "
            f"{base} knowing nothing about you.")


def masked_line(name: str, rows: list[int], cells: Sequence[Any], q: float = 0.0,
                masks: str | None = None) -> str | None:
    """The method's own masks among her candidates' ``name`` cells (rows numbered from 1), in plain words: a masked
    cell names several values, and the method decided it from the values of its group, or (``q`` > 0) drew it
    with probability q whatever the value. ``masks``: how a two-step release's masks were read (her entry's
    ``masks``: ``exact`` by rerunning MaskClass, ``covered`` as possibly hers)."""
    masked = sum(1 for r in rows if cells[r - 1].everything or (cells[r - 1].values is not None
                                                               and len(cells[r - 1].values) > 1))
    if not masked:
        return None
    head = (f"{masked} of the {plural(len(rows), 'released record')} consistent with your values "
            f"{'shows' if masked == 1 else 'show'} {literal(name)} masked (several values, not one).")
    if q > 0 and masks == "exact":
        return (f"{head} The publisher masked each cell with probability {number(q, share=True)}, whatever its value, "
                "so a masked cell tells nothing of the value behind it: your risk counts it as each value's share "
                "of the people, as the publisher signs it, and your base rate is your value's signed share.")
    if q > 0:
        return (f"{head} The publisher masked each cell with probability {number(q, share=True)}, whatever its value, "
                "so a masked cell tells nothing of the value behind it: your risk counts it as the most of each "
                "value's share of the people the release can show, and your base rate counts it for none.")
    if masks == "exact":
        return (f"{head} The method masks a value where it is too frequent in a group, so the masks themselves tell "
                "someone who knows the method and how common each value is (the publisher's signed counts) what may "
                "be behind them: your risk is his reading, every way the masked cells could hide values weighed by "
                "how likely it is, and kept only where the method would mask them so.")
    if masks == "covered":
        return (f"{head} The method masks a value where it is too frequent in a group, and this release does not "
                "sign how common each value is or decide its groups from the quasi-identifiers alone, so your risk "
                "counts every masked cell as possibly yours.")
    return (f"{head} The method masks a value where it is too frequent in a group, so a masked cell tells someone "
            "who knows the method that such a value may be behind it: your risk counts a masked cell for each of its "
            "values in part, and your base rate counts it for none.")


def suppression_line(rows: list[int], suppressed: list[int]) -> str | None:
    """What suppression means for her, when the release has suppressed records (``*`` in every quasi-identifier;
    both lists are released rows numbered from 1): a suppressed record is consistent with everyone, so it is
    among her candidates; when nothing else is, suppressing hers hid nothing."""
    if not suppressed:
        return None
    among = sorted(set(rows) & set(suppressed))
    if rows and len(among) == len(rows):
        return (f"Every released record consistent with your values is one of the {plural(len(suppressed), 'record')} "
                "the tool suppressed (* in every quasi-identifier), and no other matches you: if yours is suppressed, "
                f"that did not hide it, since an attacker who knows your quasi-identifiers knows it is one of these "
                f"{len(rows)}.")
    if among:
        return (f"{len(among)} of them {'is a record' if len(among) == 1 else 'are records'} the tool suppressed (* in "
                "every quasi-identifier): a suppressed record is consistent with everyone, so it is among every "
                "subject's candidates.")
    return None


def check_group(prepared: Any, record: np.ndarray) -> GroupCheck:
    """Her class in a generalized release and her risks in it."""
    record = np.asarray(record, dtype=np.float64)
    found = subject_class(prepared.published, record, prepared.release.methods, prepared.masks)
    found["counterfeits"] = counterfeits_among(prepared.published, [r - 1 for r in found["rows"]],
                                               prepared.release.methods)
    found["class_size"] -= found["counterfeits"]  # her anonymity set is the real people among her candidates
    for name, entry in found["attribute_disclosure"].items():
        weaker = with_base_rate(entry["candidate_set"], entry["prior"])
        found["attribute_disclosure"][name] = {**with_base_rate(entry, entry["prior"]), "candidate_set": {
            k: weaker[k] for k in ("risk", "beta", "delta", "best_guess")}}
    return GroupCheck(prepared, record, found)
