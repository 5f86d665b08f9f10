"""A subject's verdict: one function for the CLI, the TUI, the Python API and the page (SPEC sections 14-15).

Her verdict has a *level* and a *headline*. The level is decided by the
verdict policy (:mod:`verifier.releases.policy`) on her own figures
(:class:`HerFigures`): how many released records are consistent with hers or
her random-match p-value, and per sensitive attribute the attacker's
probability of her value beside its base rate among the released records.

================  ==================================================================
level             when
================  ==================================================================
``exposed``       a rule of level ``exposed`` fires on her figures
``at_risk``       a rule of level ``at_risk`` fires, and none of ``exposed``
``protected``     no rule of the policy fires
``not_verifiable`` the release or its manifest does not verify
================  ==================================================================

Each :class:`Finding` names the ``rule`` that fired, its ``figure``, the
``attribute`` it concerns (or None), the ``severity`` and a sentence. The
headline is the deciding rule's sentence. Whether the publisher's claims hold
for her is a line of its own (:func:`claims_line`); a claim or target her
figures break is the figure ``claim_broken``, which the default policy counts
as ``at_risk``. Every sensitive attribute's line gives its base rate
(:func:`disclosure_line`). A notice of severity ``notice``, ``unwitnessed``,
follows the findings unless a quorum of witnesses cosigned the checkpoint
that logs the release (:mod:`verifier.transparency.standing`): it sets no
level, and says that the release is what its publisher signed, not shown to
be what everyone sees.

:func:`disclosure_breaches` serves the audit too: a data set's recomputed
risks against the method's own targets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from verifier.attacks.disclosure import CERTAIN
from verifier.releases.policy import OPERATORS, Policy, Rule
from verifier.text import figure, literal, number, plural

__all__ = ["LEVELS", "NOTICE", "NO_PROOF", "SLACK", "as_number", "UNWITNESSED", "Finding", "HerFigures", "Verdict", "claims_line",
           "deciding_bound", "disclosure_breaches", "disclosure_line", "held_words", "not_verifiable", "policy_findings",
           "policy_verdict", "target_breaches", "within_error_lines"]

#: the levels, best first
LEVELS = ("protected", "at_risk", "exposed", "not_verifiable")
#: the finding, and its severity, of a release not shown to be the one everyone sees: it sets no level
UNWITNESSED, NOTICE = "unwitnessed", "notice"
#: its sentence when no log proof was given
NO_PROOF = ("This release was checked without a log proof: it is what its publisher signed, but nothing shows it "
            "is the release everyone else is shown (give its proof and your log policy).")
#: a risk may exceed a claim by rounding alone
SLACK = 1e-9
#: the entry of a sensitive attribute that holds each per-attribute figure
_ENTRY = {"posterior": "risk", "prior": "prior", "beta": "beta", "delta": "delta"}


def as_number(value: Any) -> float | None:
    """A manifest value as a float, or None where it is not a number (a bool is not one)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Finding:
    """One rule of the policy that fired on her figures: which, on what figure and attribute, how bad, in words."""

    rule: str
    figure: str
    severity: str
    text: str
    attribute: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "figure": self.figure, "attribute": self.attribute, "severity": self.severity,
                "text": self.text}


@dataclass(frozen=True)
class Verdict:
    """Her level, her headline (the deciding rule's sentence), every finding, and the sentences that explain them."""

    level: str
    headline: str
    findings: tuple[Finding, ...] = ()
    lines: tuple[str, ...] = field(default=())
    """Every sentence of her report, the headline first."""
    policy: Mapping[str, Any] | None = None
    """The policy's name, version and SHA-256 (None where nothing was decided: a release that does not verify)."""

    @property
    def rule(self) -> str | None:
        """The rule that decided her level; None when no rule fired (protected) or nothing was decided."""
        return self.findings[0].rule if self.findings and self.level in ("at_risk", "exposed") else None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "headline": self.headline, "rule": self.rule,
                "policy": dict(self.policy) if self.policy is not None else None,
                "findings": [f.to_json() for f in self.findings], "lines": list(self.lines)}


@dataclass(frozen=True)
class HerFigures:
    """What the policy reads of her record; ``None`` where a figure does not apply to her release."""

    sensitive: Mapping[str, Mapping[str, Any]]
    """Per sensitive attribute her entry: ``risk`` (the posterior), ``prior``, ``beta``, ``delta``."""
    class_size: int | None = None
    counterfeits: int = 0
    """How many of the released records consistent with her the release says are counterfeit (an m-invariant
    release's): ``class_size`` counts the people behind the others."""
    distance: int | None = None
    p_value: float | None = None
    unchanged: bool = False
    broken: Sequence[str] = ()
    """Sentences of the claims and targets her figures break."""
    classes: int | None = None
    """How many published classes her candidates fall in (a generalized release's): above 1, ``class_size`` is the
    smallest of them, her anonymity set against an intruder who can tell which is hers."""
    unwitnessed: str | None = None
    """The sentence of her ``unwitnessed`` notice: why nothing shows the release is the one everyone sees (None
    when a quorum of witnesses cosigned the checkpoint that logs it)."""

    @property
    def ranked(self) -> bool:
        return self.distance is not None

    def flag(self, name: str) -> bool:
        return {"unchanged": self.unchanged, "no_group": self.class_size == 0,
                "untested": self.ranked and self.p_value is None, "claim_broken": bool(self.broken)}[name]

    def value(self, name: str) -> float | None:
        if name == "class_size":
            return self.class_size or None  # no group at all is the figure no_group
        return {"distance": self.distance, "p_value": self.p_value}[name]


def _versus(rule: Rule, bound: float | None, *, share: bool = False) -> str:
    return f"{OPERATORS[rule.operator]} the policy's {number(bound, share=share)}"


def _attribute_sentence(rule: Rule, name: str, entry: Mapping[str, Any]) -> str:
    post, prior = as_number(entry.get("risk")), as_number(entry.get("prior"))
    shown = literal(name)
    base = held_words(entry)
    bound = rule.bound(prior)
    if rule.figure == "posterior" and post is not None and post >= CERTAIN:
        return f"Your {shown} can be guessed with certainty from this release ({base})."
    if rule.figure in ("posterior", "prior"):
        value = post if rule.figure == "posterior" else prior
        what = "is guessed right with probability" if rule.figure == "posterior" else "has a base rate of"
        return (f"Your {shown} {what} {number(value, share=True)} from this release, {_versus(rule, bound, share=True)}"
                f" ({base}).")
    times = f"{number(post / prior)} times" if post is not None and prior else "undefined"
    gain = (f"beta = {number(as_number(entry.get('beta')))}, {_versus(rule, bound)}" if rule.figure == "beta" else
            f"delta = {number(as_number(entry.get('delta')))}, {_versus(rule, bound)}")
    return (f"Your {shown} is guessed right with probability {number(post, share=True)} from this release, {times} "
            f"its base rate ({base}): the release tells an attacker more about it than the policy allows ({gain}).")


def _identity_sentence(rule: Rule, figures: HerFigures) -> str:
    bound = rule.threshold
    if rule.figure == "class_size":
        n = figures.class_size or 0
        if (figures.classes or 0) > 1:
            return (f"Your record is in one of {figures.classes} published groups consistent with your "
                    f"quasi-identifiers, and the smallest holds only {plural(n, 'person', plural_form='people')}, "
                    f"{_versus(rule, bound)}: an intruder who knows everyone's quasi-identifiers and the published "
                    f"method can tell which group is yours, and if it is that one he picks you with probability "
                    f"{number(1.0 / n, share=True)}.")
        if n == 1 and figures.counterfeits:
            return ("You are the only person behind the released records consistent with your quasi-identifiers "
                    "(the others are counterfeit): anyone who knows them learns that you are in this release, though "
                    "not which of those records is yours.")
        if figures.counterfeits:
            return (f"Only {plural(n, 'person', plural_form='people')} are behind the released records consistent "
                    f"with your quasi-identifiers (the others are counterfeit), {_versus(rule, bound)}: an attacker "
                    f"who knows them picks you with probability {number(1.0 / n, share=True)}.")
        if n == 1:
            return ("Only your record is consistent with your quasi-identifiers: anyone who knows them finds your "
                    "released record.")
        return (f"Only {plural(n, 'released record')} are consistent with your quasi-identifiers, "
                f"{_versus(rule, bound)}: an attacker who knows them picks yours with probability "
                f"{number(1.0 / n, share=True)}.")
    if rule.figure == "p_value":
        return (f"An intruder can tell your match from chance: a random record matches as closely as yours only "
                f"{number(figures.p_value, share=True)} of the time, {_versus(rule, bound, share=True)}.")
    return (f"Your closest released record is {plural(figures.distance or 0, 'rank')} from yours, "
            f"{_versus(rule, bound)}.")


_FLAG_SENTENCES = {
    "unchanged": "Your record was published unchanged: a released record equals yours on every attribute.",
    "no_group": "No released record is consistent with your values: check them, or you are not in this release; "
                "nothing here says how you are protected.",
    "untested": "The random-match test was not run, so whether an intruder could tell your match from chance is "
                "not known: run it before you rely on this.",
}


def policy_findings(policy: Policy, figures: HerFigures) -> list[Finding]:
    """Every rule of ``policy`` that fires on her figures, in the policy's order (per attribute, schema order);
    of the rules on one figure of one attribute, only the first of the worst level."""
    out = []
    for rule in policy.rules:
        if rule.per_attribute:
            for name, entry in figures.sensitive.items():
                value = as_number(entry.get(_ENTRY[rule.figure]))
                if rule.fires(value, prior=as_number(entry.get("prior"))):
                    out.append(Finding(rule.id, rule.figure, rule.level, _attribute_sentence(rule, name, entry), name))
        elif rule.figure == "claim_broken":
            out += [Finding(rule.id, rule.figure, rule.level, text) for text in figures.broken] if rule.fires(
                figures.flag("claim_broken")) else []
        elif rule.operator is None:
            if rule.fires(figures.flag(rule.figure)):
                out.append(Finding(rule.id, rule.figure, rule.level, _FLAG_SENTENCES[rule.figure]))
        elif rule.fires(figures.value(rule.figure)):
            out.append(Finding(rule.id, rule.figure, rule.level, _identity_sentence(rule, figures)))
    return _strongest(out)


def _strongest(found: list[Finding]) -> list[Finding]:
    """One rule per figure and attribute: the first of the worst level that fired (a p-value below 1% is not
    also reported as below 5%)."""
    keep: dict[tuple[str, str | None], Finding] = {}
    for f in found:
        key = (f.figure, f.attribute)
        if key not in keep or (f.severity == "exposed" and keep[key].severity != "exposed"):
            keep[key] = f
    return [f for f in found if keep[(f.figure, f.attribute)].rule == f.rule]


def _protected_headline(policy: Policy, figures: HerFigures) -> str:
    if figures.class_size and (figures.classes or 0) > 1:
        basis = (f"every published group consistent with your quasi-identifiers holds at least "
                 f"{plural(figures.class_size, 'person', plural_form='people')}")
    elif figures.class_size:
        basis = (f"{plural(figures.class_size, 'released record')} {'is' if figures.class_size == 1 else 'are'} "
                 "consistent with your quasi-identifiers")
    elif figures.p_value is not None:
        basis = f"a random record matches as closely as yours {number(figures.p_value, share=True)} of the time"
    else:
        basis = "nothing links you to a released record"
    values = (", and none of your sensitive values is guessed better than the policy allows against its base rate"
              if figures.sensitive else "")
    return (f"Your record is protected under the verdict policy \"{literal(policy.name)}\" (version {policy.version}): "
            f"{basis}{values}.")


def policy_verdict(policy: Policy, figures: HerFigures, *, details: Sequence[str] = ()) -> Verdict:
    """Her verdict under ``policy``: the worst level among the rules that fire, the first of them as the headline.

    ``lines`` are the headline, the other findings, then ``details`` (the
    claims line and her figures with their base rates).
    """
    found = policy_findings(policy, figures)
    ordered = sorted(found, key=lambda f: f.severity != "exposed")  # stable: the policy's order within a level
    notice = [Finding(UNWITNESSED, UNWITNESSED, NOTICE, figures.unwitnessed)] if figures.unwitnessed else []
    if not ordered:
        headline = _protected_headline(policy, figures)
        return Verdict("protected", headline, tuple(notice), (headline, *[f.text for f in notice], *details),
                       policy.verdict_json())
    head = ordered[0]
    return Verdict(head.severity, head.text, (*ordered, *notice),
                   (head.text, *[f.text for f in (*ordered[1:], *notice)], *details), policy.verdict_json())


def held_words(entry: Mapping[str, Any], *, signed: bool = False) -> str:
    """What her base rate is a share of, in words: under randomized response or a two-step release's masks' model
    with a signed marginal, of the people
    (``signed``: saying whose count it is); in a generalized release, the least share of the people its records
    show (a masked cell names no value, a counterfeit is nobody); else of the released records."""
    base = number(as_number(entry.get("prior")), share=True)
    if entry.get("value_bound") is not None or entry.get("masks") == "exact":
        return f"{base} of the people in this release hold your value" + (
            " (the publisher's signed count)" if signed else "")
    if "candidate_set" in entry:
        return f"at least {base} of the people in this release hold your value"
    return f"{base} of the released records share your value"


def deciding_bound(entry: Mapping[str, Any]) -> str | None:
    """Which of the named intruder's bounds decides her risk, where one does rather than the paper's figure
    (``paper_risk``): ``"value"``, randomized response's from the signed shares, at or above it; ``"match"``, random
    replacement's from matching everyone else to the released rows, above it; else None."""
    paper = as_number(entry.get("paper_risk")) or 0.0
    value, matched = as_number(entry.get("value_bound")), as_number(entry.get("match_bound"))
    if value is not None and value >= paper:
        return "value"
    if matched is not None and matched > paper:
        return "match"
    return None


def disclosure_line(name: str, entry: Mapping[str, Any], how: str) -> str:
    """Her risk for one sensitive attribute with its base rate: what the release tells, and what anyone knows.
    Under randomized response with a signed marginal, the base rate is her value's signed share of the people,
    and where the named intruder's bound decides her risk, no estimate's interval stands beside it. Under random
    replacement, where his bound from matching everyone else to the released records decides, the words say so."""
    base = number(as_number(entry.get("prior")), share=True)
    interval = entry.get("interval")
    decides = deciding_bound(entry)
    noise = ""
    if isinstance(interval, list) and decides != "value":
        low, high = (number(as_number(v), share=True) for v in interval)
        noise = f", estimated within {low} to {high} ({number(as_number(entry.get('confidence')), share=True)} interval)"
    if decides == "value":
        noise = (" at the most, by someone who knows the method, its parameters and how common each value is, "
                 "whichever released record is yours")
    elif decides == "match":
        noise = (" at the most, by someone who knows the method, its parameters and everyone else's "
                 "quasi-identifiers, and so which released records are theirs")
    records = plural(int(entry.get("candidates") or 0), "candidate record")
    return (f"Your {literal(name)} is guessed right with probability {number(as_number(entry.get('risk')), share=True)} "
            f"from this release{noise} ({records}, {how}); {held_words(entry, signed=True)}, so anyone could guess it "
            f"right with probability {base} knowing nothing about you.")


def not_verifiable(reason: str, message: str) -> Verdict:
    """The verdict on a release that does not verify: nothing it says can be trusted."""
    headline = "This release does not verify, so nothing it says about your record can be trusted."
    finding = Finding("not_verifiable", "verification", "not_verifiable", f"{reason}: {message}")
    return Verdict("not_verifiable", headline, (finding,), (headline, finding.text))


def target_breaches(targets: Mapping[str, Any] | None, *, risks: Mapping[str, Mapping[str, Any]],
                    distance: int | None = None, group: int | None = None, linked: bool = False) -> list[str]:
    """Her own figures against the protector's signed targets (:mod:`verifier.releases.targets`), as sentences."""
    targets = targets or {}
    out = []
    for name, bound in (targets.get("max_attribute_risk") or {}).items():
        risk = _promised_figure(risks.get(name))
        if risk is not None and risk - _margin(risks.get(name)) > float(bound) + SLACK:
            out.append(f"The publisher promised no {literal(name)} guessed with probability above {number(bound)}; "
                       f"yours is {number(risk)}{_beyond(risks.get(name))}.")
    bound = as_number(targets.get("min_distance"))
    if bound is not None and distance is not None and distance < bound:
        out.append(f"The publisher promised every record at least {number(bound)} ranks from its closest match; "
                   f"yours is {distance}.")
    bound = as_number(targets.get("min_k"))
    if bound is not None and group is not None and group < bound:
        out.append(f"The publisher promised groups of at least k = {number(bound)} records; "
                   f"{plural(group, 'released record')} {'is' if group == 1 else 'are'} consistent with your values.")
    bound = as_number(targets.get("max_linked_share"))
    if bound is not None and linked:
        out.append(f"The publisher promised at most {number(bound, share=True)} of records linked with confidence; "
                   "yours is one of them.")
    return out


def claims_line(broken: Sequence[str], *, claimed: bool) -> str:
    """Whether the publisher's claims hold for her record: a line of its own, never the basis of her level."""
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
        value = _promised_figure(entry) if subject else as_number(entry.get(key))
        claimed = claimed_all.get(name) if isinstance(claimed_all, Mapping) else None
        if value is None or not isinstance(claimed, Mapping):
            continue
        top, target = as_number(claimed.get("max")), as_number(claimed.get("target"))
        low = value - (_margin(entry) if subject else 0.0)  # an estimate is above a bound only beyond its noise
        beyond = _beyond(entry) if subject else ""
        if subject and top is not None and low > top + SLACK:
            out.append(f"{whose} risk for {literal(name)} ({figure(value)}{beyond}) is above the maximum the "
                       f"publisher claims ({figure(top)}).")
        if target is not None and low > target + SLACK:
            out.append(f"{whose} risk for {literal(name)} ({figure(value)}{beyond}) is above the method's own target "
                       f"({figure(target)}, one in l = {figure(claimed.get('l'))}).")
    return out


def _promised_figure(entry: Mapping[str, Any] | None) -> float | None:
    """Her risk as the publisher's promises (claimed maximum, targets) measure it: randomized response's closed
    form (``paper_risk``) where the named intruder's bound stands beside it, else her risk."""
    entry = entry or {}
    return as_number(entry.get("paper_risk", entry.get("risk")))


def _margin(entry: Mapping[str, Any] | None) -> float:
    """The one-sided sampling error of a risk estimated from the release (0 for a risk computed exactly)."""
    return as_number((entry or {}).get("sampling_error")) or 0.0


def _beyond(entry: Mapping[str, Any] | None) -> str:
    margin = _margin(entry)
    if not margin:
        return ""
    return (f", estimated from the release, more than its sampling error of {figure(margin)} at "
            f"{number(as_number((entry or {}).get('confidence')), share=True)} above it")


def within_error_lines(figures: Mapping[str, Mapping[str, Any]], claims: Mapping[str, Any],
                       targets: Mapping[str, Any] | None) -> list[str]:
    """Her estimated risks that are above a signed bound (the claimed maximum, the method's target, a target of
    the protector's) by no more than their sampling error: each said with its interval, and no finding, as the
    randomization's noise explains them."""
    claimed_all = claims.get("attribute_disclosure") if isinstance(claims, Mapping) else None
    out = []
    for name, entry in figures.items():
        value, margin = _promised_figure(entry), _margin(entry)
        claimed = claimed_all.get(name) if isinstance(claimed_all, Mapping) else {}
        claimed = claimed if isinstance(claimed, Mapping) else {}
        bounds = [b for b in (as_number(claimed.get("max")), as_number(claimed.get("target")),
                              as_number(((targets or {}).get("max_attribute_risk") or {}).get(name))) if b is not None]
        if value is None or not margin or not bounds:
            continue
        bound = min(bounds)
        if value > bound + SLACK and value - margin <= bound + SLACK:
            lo, hi = entry.get("interval") or (value - margin, value + margin)
            out.append(f"Your {literal(name)} risk estimated from the release, {number(value, share=True)}, is above "
                       f"the {number(bound, share=True)} the publisher signed, but within the estimate's sampling "
                       f"error ({number(as_number(entry.get('confidence')), share=True)} interval "
                       f"{number(lo, share=True)} to {number(hi, share=True)}): the randomization's noise explains "
                       "it, so it is no broken promise.")
    return out
