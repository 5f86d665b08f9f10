"""The verdict policy: the published rules that decide a subject's level from her own figures (SPEC section 15).

A policy is one JSON file: a ``name``, a ``version`` and an ordered list of
``rules``. Each rule names one *figure* of her record, a threshold and the
level it sets when the figure crosses it::

    {"id": "small_group", "figure": "class_size", "below": 5, "level": "at_risk"}

The figures (docs/subject.md explains each for her):

================  ==========================================================
``class_size``    generalized releases: how many released records are
                  consistent with her quasi-identifiers (0 is ``no_group``)
``p_value``       ranked releases: her random-match p-value
``distance``      ranked releases: her permutation distance
``posterior``     per sensitive attribute: the attacker's probability of her
                  true value
``prior``         per sensitive attribute: her value's share among the
                  released records (what anyone guesses knowing nothing of her)
``beta``          (posterior - prior) / prior (beta-likeness, Cao & Karras
                  2012); with ``"enhanced": true`` the threshold is
                  min(threshold, -ln prior), their enhanced beta-likeness
``delta``         |ln(posterior / prior)| (delta-disclosure, Brickell &
                  Shmatikov 2008)
``unchanged``     a released record equals hers on every attribute
``no_group``      no released record is consistent with her values
``untested``      her random-match test was not run (ranked releases)
``claim_broken``  a figure of hers breaks a publisher's claim or signed target
================  ==========================================================

A numeric figure's rule has exactly one of ``below``, ``at_most``, ``above``
or ``at_least``; a yes-or-no figure's rule has none. A figure that does not
apply to her release, or is undefined (a beta with a prior of 0), fires no
rule. Her level is the worst level of the rules that fire, ``protected``
when none does; the first rule of that level, in the file's order, heads her
report. The claims a publisher makes decide nothing by themselves: a claim
that promises nothing (a bound of 1, k = 1) cannot make her ``protected``.

The default policy ships with the verifier (``verdict-policy.json``);
``--policy FILE`` applies another. Its name, version and SHA-256 go into
every verdict.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from verifier.data.bounded_files import LIMITS, read_bounded
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.errors import InvalidInputError
from verifier.text import literal

__all__ = ["DEFAULT_NAME", "DEFAULT_POLICY", "NUMERIC_FIGURES", "FLAG_FIGURES", "LEVELS", "OPERATORS", "Policy", "Rule", "default_policy",
           "load_policy", "parse_policy", "policy_line", "same_name"]

#: the file of the default policy, beside this module, and its name, which no other policy may take
DEFAULT_POLICY, DEFAULT_NAME = "verdict-policy.json", "permuted-privacy default"
#: figures compared with a threshold, and whether each is per sensitive attribute
NUMERIC_FIGURES = {"class_size": False, "p_value": False, "distance": False, "posterior": True, "prior": True,
                   "beta": True, "delta": True}
#: yes-or-no figures
FLAG_FIGURES = ("unchanged", "no_group", "untested", "claim_broken")
#: how a figure crosses a threshold, in words for her report
OPERATORS = {"below": "below", "at_most": "at or below", "above": "above", "at_least": "at or above"}
LEVELS = ("exposed", "at_risk")
#: a policy is a short document; a larger file is refused before it is parsed
MAX_BYTES, MAX_RULES = LIMITS["policy"], 100
_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")


@dataclass(frozen=True)
class Rule:
    """One rule: when ``figure`` crosses ``threshold`` by ``operator`` (none for a yes-or-no figure), ``level``."""

    id: str
    figure: str
    level: str
    operator: str | None = None
    threshold: float | None = None
    enhanced: bool = False

    @property
    def per_attribute(self) -> bool:
        return NUMERIC_FIGURES.get(self.figure, False)

    def bound(self, prior: float | None = None) -> float | None:
        """The threshold her figure is held to: for enhanced beta-likeness, min(threshold, -ln prior)."""
        if self.enhanced and prior is not None and prior > 0:
            return min(float(self.threshold), -math.log(prior))
        return self.threshold

    def fires(self, value: Any, prior: float | None = None) -> bool:
        """Whether ``value`` (a number, a yes-or-no, or None where the figure is undefined) sets this rule's level."""
        if self.operator is None:
            return value is True
        if value is None or isinstance(value, bool) or not math.isfinite(float(value)):
            return False
        t, x = self.bound(prior), float(value)
        return {"below": x < t, "at_most": x <= t, "above": x > t, "at_least": x >= t}[self.operator]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "figure": self.figure, "level": self.level}
        if self.operator is not None:
            out[self.operator] = self.threshold
        if self.enhanced:
            out["enhanced"] = True
        return out


@dataclass(frozen=True)
class Policy:
    """A verdict policy: its name, version, rules in order, and the SHA-256 of the file they were read from."""

    name: str
    version: int
    rules: tuple[Rule, ...]
    sha256: str

    def to_json(self) -> dict[str, Any]:
        """What every verdict carries of its policy: enough to find the file and to know it is that one."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256}

    def verdict_json(self) -> dict[str, Any]:
        """:meth:`to_json` and the figures its rules read (``reads``, sorted): her report judges a figure by the
        rule that reads it, and leaves undecided what none reads (issue 60, item 1)."""
        return {**self.to_json(), "reads": sorted({r.figure for r in self.rules})}

    def index(self, rule_id: str) -> int:
        return next(i for i, r in enumerate(self.rules) if r.id == rule_id)


def _invalid(where: str, why: str, path: str) -> InvalidInputError:
    return InvalidInputError(f"{where}: {why}", path=path, reason="POLICY_INVALID")


def _rule(item: Any, where: str, path: str) -> Rule:
    if not isinstance(item, dict):
        raise _invalid(where, "a rule is a JSON object", path)
    ops = [k for k in OPERATORS if k in item]
    unknown = set(item) - {"id", "figure", "level", "enhanced", "about", *OPERATORS}
    if unknown:
        raise _invalid(where, f"unknown key {json.dumps(sorted(unknown)[0])} (a rule has id, figure, level, one threshold, "
                       "and for beta enhanced)", path)
    rule_id, figure, level = item.get("id"), item.get("figure"), item.get("level")
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        raise _invalid(f"{where}.id", "an id is 1 to 64 of a-z, 0-9 and _, starting with a letter", path)
    if figure not in NUMERIC_FIGURES and figure not in FLAG_FIGURES:
        raise _invalid(f"{where}.figure", f"not a figure of the policy (one of "
                       f"{', '.join([*NUMERIC_FIGURES, *FLAG_FIGURES])})", path)
    if level not in LEVELS:
        raise _invalid(f"{where}.level", "a rule sets exposed or at_risk", path)
    enhanced = item.get("enhanced", False)
    if not isinstance(enhanced, bool) or (enhanced and figure != "beta"):
        raise _invalid(f"{where}.enhanced", "enhanced is true or false, and only for the figure beta", path)
    if figure in FLAG_FIGURES:
        if ops:
            raise _invalid(f"{where}.{ops[0]}", f"{figure} is yes or no: its rule has no threshold", path)
        return Rule(rule_id, figure, level)
    if len(ops) != 1:
        raise _invalid(where, f"a rule on {figure} has exactly one of below, at_most, above, at_least", path)
    t = item[ops[0]]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise _invalid(f"{where}.{ops[0]}", "a threshold is a finite number", path)
    return Rule(rule_id, figure, level, ops[0], float(t), enhanced)


def parse_policy(data: bytes, path: str) -> Policy:
    """A policy from its file's bytes; anything but a well-formed policy is refused (``POLICY_INVALID``)."""
    if len(data) > MAX_BYTES:
        raise _invalid("$", f"a policy file holds at most {MAX_BYTES // 1024} KiB", path)
    try:
        doc = loads_strict(data, interoperable=True)
    except StrictJSONError as exc:
        raise _invalid("$", f"not strict JSON ({exc})", path) from None
    if not isinstance(doc, dict):
        raise _invalid("$", "a policy is a JSON object", path)
    unknown = set(doc) - {"name", "version", "about", "rules"}
    if unknown:
        raise _invalid("$", f"unknown key {json.dumps(sorted(unknown)[0])} (a policy has name, version, about, rules)", path)
    name, version, rules = doc.get("name"), doc.get("version"), doc.get("rules")
    if not isinstance(name, str) or not 0 < len(name) <= 200:
        raise _invalid("$.name", "a policy has a name of 1 to 200 characters", path)
    if isinstance(version, float) and version.is_integer():
        version = int(version)  # 1.0 is the integer 1, as JSON has one kind of number (and the page reads it so)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version < 2**31:
        raise _invalid("$.version", "a version is an integer from 1 to 2147483647", path)
    if not isinstance(rules, list) or not 0 < len(rules) <= MAX_RULES:
        raise _invalid("$.rules", f"a policy has 1 to {MAX_RULES} rules", path)
    digest = hashlib.sha256(data).hexdigest()
    if same_name(name, DEFAULT_NAME) and digest != _default_digest():
        raise _invalid("$.name", f"{json.dumps(DEFAULT_NAME)} names the verifier's own policy, and this file is not it "
                       "(its SHA-256 differs): give your policy a name of its own", path)
    parsed = tuple(_rule(item, f"$.rules[{i}]", path) for i, item in enumerate(rules))
    seen: set[str] = set()
    for i, r in enumerate(parsed):
        if r.id in seen:
            raise _invalid(f"$.rules[{i}].id", f"the id {json.dumps(r.id)} is used twice", path)
        seen.add(r.id)
    return Policy(name, version, parsed, digest)


def same_name(a: str, b: str) -> bool:
    """Whether two policy names read alike: equal once runs of spaces, tabs and line breaks are one space, the ends
    trimmed, and ASCII letters lower-cased (the page compares them the same way)."""
    def plain(text: str) -> str:
        return " ".join(re.split(r"[ \t\r\n]+", text.strip(" \t\r\n"))).translate(_LOWER)

    return plain(a) == plain(b)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@lru_cache(maxsize=1)
def _default_digest() -> str:
    return hashlib.sha256(resources.files("verifier.releases").joinpath(DEFAULT_POLICY).read_bytes()).hexdigest()


def load_policy(path: str | Path | None = None) -> Policy:
    """The policy in ``path``; the default one, shipped with the verifier, without it."""
    if path is None:
        return default_policy()
    try:
        data = read_bounded(path, "policy")
    except InvalidInputError as exc:
        too_large = exc.reason == "FILE_TOO_LARGE"  # said as the page says it, which sees only the bytes
        raise _invalid("$", f"a policy file holds at most {MAX_BYTES // 1024} KiB", str(path)) if too_large else (
            InvalidInputError(exc.message, path=exc.path, reason="POLICY_INVALID")) from None
    return parse_policy(data, str(path))


@lru_cache(maxsize=1)
def default_policy() -> Policy:
    """The verifier's own policy (``verdict-policy.json``)."""
    data = resources.files("verifier.releases").joinpath(DEFAULT_POLICY).read_bytes()
    return parse_policy(data, DEFAULT_POLICY)


def policy_line(policy: dict[str, Any]) -> str:
    """The sentence that names the policy her level was decided by (a verdict's ``policy``), as every front end
    prints it."""
    return (f"Your level was decided by the verdict policy \"{literal(policy['name'])}\", version {policy['version']} "
            f"(SHA-256 {policy['sha256']}).")
