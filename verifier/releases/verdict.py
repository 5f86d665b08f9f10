"""One verdict for the CLI, the TUI and the audit (SPEC section 13): never "protected as the publisher
claims" when a figure breaks a published claim or the method's own target.

A *breach* is a sentence about one figure that breaks a claim or a target:

- a disclosure risk above the claimed maximum of the release
  (``claims.attribute_disclosure[S].max``), or above the method's own target
  (``target``, 1/l for randomized response with ``l``);
- for a subject in a generalized release, fewer released rows consistent with
  her values than the claimed ``k``;
- a permutation distance below the claimed D, or a spread below the claimed v.

:func:`headline` turns the breaches and the random-match test into the one
sentence that opens every report.
"""

from __future__ import annotations

from typing import Any, Mapping

from verifier.text import figure, literal

__all__ = ["certain_disclosure", "disclosure_breaches", "headline", "NOT_PROTECTED", "PROTECTED", "EXPOSED", "NO_CLAIM"]

NOT_PROTECTED = "Your record is NOT protected as the publisher claims."
PROTECTED = "Your record is protected as the publisher claims."
EXPOSED = "Your record is exposed: a match as close as yours is rarely chance."
NO_CLAIM = "The release makes no claim to check your record against."
EXACT_UNTESTED = ("Your record meets the publisher's claim, but a released record sits at exactly your ranks: "
                  "run the random-match test to see whether that could be chance.")

#: a risk may exceed a claim by rounding alone
_SLACK = 1e-9


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


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


def certain_disclosure(figures: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A plain warning for every sensitive attribute an attacker learns with certainty, claimed or not."""
    return [f"Your {literal(name)} is disclosed: the attacker's guess is right with certainty, and the publisher's "
            "claims allow it." for name, entry in figures.items()
            if (_number(entry.get("risk")) or 0.0) >= 1.0 - _SLACK]


def headline(breaches: list[str], *, claim_holds: bool | None, exposed: bool = False,
             exact_untested: bool = False) -> str:
    """The report's first sentence.

    ``claim_holds`` is whether her figures meet the claims at all (None when
    the release claims nothing that applies to her); ``exposed`` whether the
    random-match test linked her with confidence; ``exact_untested`` whether a
    released record sits at her ranks and the test has not run.
    """
    if breaches or claim_holds is False:
        return NOT_PROTECTED
    if exposed:
        return EXPOSED
    if claim_holds and exact_untested:
        return EXACT_UNTESTED
    return PROTECTED if claim_holds else NO_CLAIM
