"""A subject's verdict: one function for the CLI, the TUI, the Python API and the page (SPEC section 14).

Her verdict has a *level* and a *headline*, her worst finding in her words:

================  ==================================================================
level             when
================  ==================================================================
``exposed``       her match is told from chance, a sensitive value of hers is
                  guessed with certainty, or her record was published unchanged
``at_risk``       a figure of hers is worse than a claim or a target, a sensitive
                  value of hers is guessed above the release's own bound, or a check
                  that could clear her was not run or has nothing to rest on
``protected``     every check of her record passes under the release's model, and
                  the claims it rests on are complete and well-formed
``not_verifiable`` the release or its manifest does not verify
================  ==================================================================

Each :class:`Finding` has a ``kind``, the ``attribute`` it concerns (or
None), a ``severity`` (``exposed`` or ``at_risk``) and a sentence.
Whether the publisher's claims hold for her is a separate line
(:func:`claims_line`), never the headline: a release can keep every promise
and still disclose her value, when its claims allow it.

:func:`disclosure_breaches` serves the audit too: a data set's recomputed
risks against the method's own targets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from verifier.attacks.disclosure import CERTAIN
from verifier.text import figure, literal, number, plural

__all__ = ["LEVELS", "Finding", "Verdict", "disclosure_breaches", "disclosure_findings", "target_findings",
           "claims_line", "not_verifiable", "subject_verdict"]

#: the levels, best first
LEVELS = ("protected", "at_risk", "exposed", "not_verifiable")
#: a risk may exceed a claim by rounding alone
_SLACK = 1e-9


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Finding:
    """One thing the checks of her record found: what, about which attribute, how bad, in her words."""

    kind: str
    severity: str
    text: str
    attribute: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "attribute": self.attribute, "severity": self.severity, "text": self.text}


@dataclass(frozen=True)
class Verdict:
    """Her level, her headline (the worst finding), every finding, and the sentences that explain them."""

    level: str
    headline: str
    findings: tuple[Finding, ...] = ()
    lines: tuple[str, ...] = field(default=())
    """Every sentence of her report, the headline first."""

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "headline": self.headline, "findings": [f.to_json() for f in self.findings],
                "lines": list(self.lines)}


#: which finding heads the report when several are equally bad: what an attacker learns outright first
KIND_ORDER = ("certain_disclosure", "linked", "unchanged", "target_missed", "claim_broken", "no_group", "no_claim",
              "untested")


def subject_verdict(findings: Sequence[Finding], *, protected: str, details: Sequence[str] = ()) -> Verdict:
    """Her verdict from her findings: the level of the worst, its first finding as the headline.

    ``protected`` is the headline when nothing was found. ``lines`` are the
    headline, the other findings, then ``details`` (the claims line and her figures).
    """
    ordered = sorted(findings, key=lambda f: (f.severity != "exposed", KIND_ORDER.index(f.kind)
                                              if f.kind in KIND_ORDER else len(KIND_ORDER)))
    if not ordered:
        return Verdict("protected", protected, (), (protected, *details))
    head = ordered[0]
    return Verdict(head.severity, head.text, tuple(ordered),
                   (head.text, *[f.text for f in ordered[1:]], *details))


def not_verifiable(reason: str, message: str) -> Verdict:
    """The verdict on a release that does not verify: nothing it says can be trusted."""
    headline = "This release does not verify, so nothing it says about your record can be trusted."
    finding = Finding("not_verifiable", "not_verifiable", f"{reason}: {message}")
    return Verdict("not_verifiable", headline, (finding,), (headline, finding.text))


def disclosure_findings(disclosure: Mapping[str, Mapping[str, Any]], claims: Mapping[str, Any]) -> list[Finding]:
    """Her sensitive values: guessed with certainty (exposed), above the claimed maximum or the method's target,
    or with no claim to bound them (at risk)."""
    claimed_all = claims.get("attribute_disclosure") if isinstance(claims, Mapping) else None
    out = []
    for name, entry in disclosure.items():
        risk = _number(entry.get("risk"))
        if risk is None:
            continue
        shown_name = literal(name)
        if risk >= CERTAIN:
            out.append(Finding("certain_disclosure", "exposed",
                               f"Your {shown_name} can be guessed with certainty from this release.", name))
        claimed = claimed_all.get(name) if isinstance(claimed_all, Mapping) else None
        if not isinstance(claimed, Mapping):
            out.append(Finding("no_claim", "at_risk", f"The publisher makes no claim about how well your "
                               f"{shown_name} is protected, so nothing bounds the {figure(risk)} chance of guessing it.",
                               name))
            continue
        top, target = _number(claimed.get("max")), _number(claimed.get("target"))
        if top is not None and risk > top + _SLACK:
            out.append(Finding("claim_broken", "at_risk", f"Your {shown_name} is guessed with probability "
                               f"{figure(risk)}, above the maximum the publisher claims ({figure(top)}).", name))
        if target is not None and risk > target + _SLACK:
            out.append(Finding("target_missed", "at_risk", f"Your {shown_name} is guessed with probability "
                               f"{figure(risk)}, above the method's own target ({figure(target)}, one in "
                               f"l = {figure(claimed.get('l'))}).", name))
    return out


def target_findings(targets: Mapping[str, Any] | None, *, risks: Mapping[str, Mapping[str, Any]],
                    distance: int | None = None, group: int | None = None,
                    linked: bool = False) -> list[Finding]:
    """Her own figures against the protector's signed targets (:mod:`verifier.releases.targets`)."""
    targets = targets or {}
    out = []
    for name, bound in (targets.get("max_attribute_risk") or {}).items():
        risk = _number((risks.get(name) or {}).get("risk"))
        if risk is not None and risk > float(bound) + _SLACK:
            out.append(Finding("target_missed", "at_risk", f"The publisher promised no {literal(name)} guessed with "
                               f"probability above {number(bound)}; yours is {number(risk)}.", name))
    bound = _number(targets.get("min_distance"))
    if bound is not None and distance is not None and distance < bound:
        out.append(Finding("target_missed", "at_risk", f"The publisher promised every record at least {number(bound)} "
                           f"ranks from its closest match; yours is {distance}."))
    bound = _number(targets.get("min_k"))
    if bound is not None and group is not None and group < bound:
        out.append(Finding("target_missed", "at_risk", f"The publisher promised groups of at least k = {number(bound)} "
                           f"records; {plural(group, 'released record')} {'is' if group == 1 else 'are'} consistent "
                           "with your values."))
    bound = _number(targets.get("max_linked_share"))
    if bound is not None and linked:
        out.append(Finding("target_missed", "at_risk", f"The publisher promised at most {number(bound, share=True)} of "
                           "records linked with confidence; yours is one of them."))
    return out


def claims_line(broken: Sequence[str], *, claimed: bool) -> str:
    """Whether the publisher's claims hold for her record: a line of its own, never the headline."""
    if not claimed:
        return "The release makes no claim to check your record against."
    if broken:
        return "The publisher's claims do NOT hold for your record: " + " ".join(broken)
    return "The publisher's claims hold for your record."


def disclosure_breaches(figures: Mapping[str, Mapping[str, Any]], claims: Mapping[str, Any], *,
                        subject: bool = True) -> list[str]:
    """Sentences for every sensitive attribute whose figure is above its claimed max or the method's target.

    ``figures`` maps a sensitive attribute to a subject's entry (its
    ``risk``), or with ``subject=False`` to a data set's recomputed entry (its
    ``max``, checked against the target only: the audit compares it with the
    claim itself). ``claims`` are the release's.
    """
    key, whose = ("risk", "Your") if subject else ("max", "The release's largest")
    claimed_all = claims.get("attribute_disclosure") if isinstance(claims, Mapping) else None
    out = []
    for name, entry in figures.items():
        value = _number(entry.get(key))
        claimed = claimed_all.get(name) if isinstance(claimed_all, Mapping) else None
        if value is None or not isinstance(claimed, Mapping):
            continue
        top, target = _number(claimed.get("max")), _number(claimed.get("target"))
        if subject and top is not None and value > top + _SLACK:
            out.append(f"{whose} risk for {literal(name)} ({figure(value)}) is above the maximum the publisher "
                       f"claims ({figure(top)}).")
        if target is not None and value > target + _SLACK:
            out.append(f"{whose} risk for {literal(name)} ({figure(value)}) is above the method's own target "
                       f"({figure(target)}, one in l = {figure(claimed.get('l'))}).")
    return out
