"""Protection targets: the protector's promises, signed in the manifest (SPEC section 14).

A target is a bound the protector sets on a figure of the release
(``publisher release --target NAME=VALUE``), or one the method itself sets
(randomized response's 1/l, two-step generalization's alpha). Only those are
targets: a figure without one is reported, never judged against a default.

======================  ============================================  ======================
target                  the figure it bounds                          families
======================  ============================================  ======================
``min_distance``        the data-set permutation distance D            all with ranks
``min_k``               k, the smallest class of released QI values   all
``max_linked_share``    the intruder's confidently linked share        all with ranks
``max_attribute_risk``  per sensitive attribute, its largest risk      all
``min_l``               distinct l (generalized) or the method's l     generalized, RR
``max_exposed``         records ``exposed`` under the verdict policy   all
``max_at_risk_share``   the share of checked records ``at_risk``       all
======================  ============================================  ======================

The last two bound ``claims.policy_levels`` (:mod:`verifier.releases.levels`):
every record checked as her own check does, under the policy the manifest names.

:func:`target_misses` compares figures with the targets. The publisher
refuses a release that misses one (``TARGET_MISSED``), the audit checks the
recomputed figures against them, and a subject's verdict cites them against
her own figures (:mod:`verifier.releases.verdict`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from verifier.errors import InvalidInputError
from verifier.text import literal, number

__all__ = ["TARGETS", "Miss", "parse_targets", "target_misses", "joint_misses", "target_words"]

#: target -> (the figure it bounds, in words; the families it applies to, None for all)
TARGETS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "min_distance": ("the permutation distance D", ("permutation", "randomized_response", "random_replacement")),
    "min_k": ("k, the smallest group of records with the same quasi-identifier values", None),
    "max_linked_share": ("the share of records the intruder links with confidence",
                         ("permutation", "randomized_response", "random_replacement")),
    "max_attribute_risk": ("the largest probability of guessing a sensitive value", None),
    "min_l": ("l, the fewest distinct sensitive values an attacker must choose among",
              ("generalized", "randomized_response")),
    "max_exposed": ("the number of records exposed under the verdict policy", None),
    "max_at_risk_share": ("the share of records at risk under the verdict policy", None),
}

_SLACK = 1e-9


@dataclass(frozen=True)
class Miss:
    """One figure on the wrong side of its target."""

    target: str
    attribute: str | None
    value: float
    bound: float

    @property
    def name(self) -> str:
        return self.target + (f".{self.attribute}" if self.attribute else "")

    def text(self) -> str:
        what = TARGETS[self.target][0] + (f" of {literal(self.attribute)}" if self.attribute else "")
        side = "at least" if self.target.startswith("min_") else "at most"
        return f"{what} is {number(self.value)}; the target is {side} {number(self.bound)} ({self.name})"


def _number(name: str, text: str, *, whole: bool, low: float, high: float | None) -> float | int:
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise InvalidInputError(f"--target {name}: {text!r} is not {kind}", reason="PARAMETER_INVALID") from None
    if not math.isfinite(value) or value < low or (high is not None and value > high):
        span = f"from {number(low)}" + (f" to {number(high)}" if high is not None else " up")
        raise InvalidInputError(f"--target {name}: {text} is outside its range ({span})", reason="PARAMETER_INVALID")
    return value


def parse_targets(items: Sequence[str], *, family: str, sensitive: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` texts as the manifest holds them; ``max_attribute_risk`` becomes one bound per attribute.

    ``max_attribute_risk=0.5`` bounds every sensitive attribute,
    ``max_attribute_risk=occupation:0.5,salary-class:0.8`` each named one.
    A target repeated, unknown, or of a figure the release's family does not
    have is refused (``PARAMETER_INVALID``, exit 3).
    """
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or name not in TARGETS:
            raise InvalidInputError(f"--target takes NAME=VALUE with NAME one of {', '.join(TARGETS)}; got "
                                    f"{literal(item)}", reason="PARAMETER_INVALID")
        if name in out:
            raise InvalidInputError(f"--target {name} is given twice", reason="PARAMETER_INVALID")
        families = TARGETS[name][1]
        if families is not None and family not in families:
            raise InvalidInputError(f"--target {name} bounds {TARGETS[name][0]}, which a {family} release does not "
                                    f"have (it applies to {', '.join(families)} releases)", reason="PARAMETER_INVALID")
        if name == "max_attribute_risk":
            out[name] = _attribute_bounds(text, sensitive)
        elif name in ("min_distance", "min_k", "max_exposed"):
            out[name] = _number(name, text, whole=True, low=0 if name != "min_k" else 1, high=None)
        else:
            share = name in ("max_linked_share", "max_at_risk_share")
            out[name] = _number(name, text, whole=False, low=0.0 if share else 1.0, high=1.0 if share else None)
    return out


def _attribute_bounds(text: str, sensitive: Sequence[str]) -> dict[str, float]:
    if not sensitive:
        raise InvalidInputError("--target max_attribute_risk needs a sensitive attribute in the schema",
                                reason="PARAMETER_INVALID")
    if ":" not in text:
        bound = _number("max_attribute_risk", text, whole=False, low=0.0, high=1.0)
        return {s: float(bound) for s in sensitive}
    out: dict[str, float] = {}
    for part in text.split(","):
        attr, _, value = part.rpartition(":")
        if attr.strip() not in sensitive:
            raise InvalidInputError(f"--target max_attribute_risk: {literal(attr.strip())} is not a sensitive "
                                    f"attribute (sensitive: {', '.join(map(literal, sensitive))})",
                                    reason="PARAMETER_INVALID")
        if attr.strip() in out:
            raise InvalidInputError(f"--target max_attribute_risk: {literal(attr.strip())} is given twice; give each "
                                    "attribute once", reason="PARAMETER_INVALID")
        out[attr.strip()] = float(_number("max_attribute_risk", value, whole=False, low=0.0, high=1.0))
    return out


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _l_figure(disclosure: Mapping[str, Any]) -> float | None:
    """The l a release gives: the fewest distinct values in a class, or the randomized-response method's l."""
    found = [v for entry in disclosure.values() if isinstance(entry, Mapping)
             for v in (_num(entry.get("distinct_l")), _num(entry.get("l"))) if v is not None]
    return min(found) if found else None


def target_misses(targets: Mapping[str, Any] | None, claims: Mapping[str, Any]) -> list[Miss]:
    """Every figure of ``claims`` (a manifest's, or the audit's recomputed ones) that misses its target.

    A figure the claims do not hold is not judged here: the schema makes the
    claims of each model complete, and the audit lists what it could not recompute.
    """
    out: list[Miss] = []
    targets = targets or {}
    disclosure = claims.get("attribute_disclosure") or {}
    lows = {"min_distance": _num((claims.get("permuted_privacy") or {}).get("distance")),
            "min_k": _num(claims.get("k")), "min_l": _l_figure(disclosure)}
    for name, value in lows.items():
        bound = _num(targets.get(name))
        if bound is not None and value is not None and value < bound - _SLACK:
            out.append(Miss(name, None, value, bound))
    linked, bound = _num((claims.get("intruder") or {}).get("confidently_linked_share")), _num(targets.get("max_linked_share"))
    if linked is not None and bound is not None and linked > bound + _SLACK:
        out.append(Miss("max_linked_share", None, linked, bound))
    for attr, bound in (targets.get("max_attribute_risk") or {}).items():
        risk = _num((disclosure.get(attr) or {}).get("max"))
        if risk is not None and risk > float(bound) + _SLACK:
            out.append(Miss("max_attribute_risk", attr, risk, float(bound)))
    levels = claims.get("policy_levels") or {}
    for name, figure in (("max_exposed", "exposed"), ("max_at_risk_share", "at_risk_share")):
        value, bound = _num(levels.get(figure)), _num(targets.get(name))
        if value is not None and bound is not None and value > bound + _SLACK:
            out.append(Miss(name, None, value, bound))
    return out


def joint_misses(targets: Mapping[str, Any] | None, composition: Mapping[str, Any]) -> list[Miss]:
    """The targets that the joint figures of a release and the earlier ones (``claims.composition``,
    :mod:`verifier.releases.composition`) miss: ``max_attribute_risk``, ``max_exposed`` and ``max_at_risk_share``,
    over the people released before."""
    return target_misses(targets, {"attribute_disclosure": composition.get("attribute_disclosure") or {},
                                   "policy_levels": composition.get("policy_levels") or {}})


def target_words(targets: Mapping[str, Any] | None) -> list[str]:
    """Each target in one line, for the publisher's summary and ``verifier verify``."""
    out = []
    for name, bound in (targets or {}).items():
        if isinstance(bound, Mapping):
            out += [f"{name}.{attr} <= {number(b)}" for attr, b in bound.items()]
        else:
            out.append(f"{name} {'>=' if name.startswith('min_') else '<='} {number(bound)}")
    return out
