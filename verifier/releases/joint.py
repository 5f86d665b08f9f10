"""Her check against several releases of the same people at once (issue 40): what they disclose together.

Each release is verified and checked alone (:mod:`verifier.releases.subject`); then
:mod:`verifier.attacks.composition` gives the intruder who links her in every release:

- per categorical sensitive attribute, her candidate values left in every release and the joint probability of
  hers (``risk``), beside each release's own (``each``) and the base rate of her value (``prior``, in the first
  release);
- for releases with ranks, the joint random-match test (``p_joint``) beside each release's ``p_each``.

Her verdict is the verdict policy's on these joint figures: her smallest group, her smallest distance, the
joint p-value and her joint risks. Its headline says when the releases together expose more than any one of
them alone. A random-replacement release gives the attacker's posterior (paper 004) in place of candidate
shares. When every release publishes an attribute by randomized response, her joint risk is Result 1 on the
releases' stacked keep matrices (:func:`verifier.attacks.models.rr_joint_record`); a mix of randomized response
and other methods, or a numeric attribute, is left out, and the report says why.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from verifier.attacks.composition import JOINT_RR_CELLS, JointDraws, JointMatch, joint_candidates, joint_draws
from verifier.attacks.disclosure import candidate_rows
from verifier.attacks.models import replacement_groups, replacement_shares, rr_joint_record
from verifier.releases.exposure import rr_shares, with_base_rate
from verifier.releases.family import rr_distortions, step_parameters
from verifier.releases.policy import Policy, default_policy
from verifier.releases.facts import signed_contact
from verifier.releases.plain_words import joint_plain_words
from verifier.releases.verdict import LEVELS, NO_PROOF, NOTICE, HerFigures, Verdict, policy_verdict
from verifier.text import number, plural

__all__ = ["MOST_COMBINATIONS", "PROPAGATION", "JointCheck", "base_shares", "check_jointly", "check_releases_jointly", "open_together",
           "possible_shares"]


def _value_name(check: Any, s: int, value: float) -> str:
    attr = check.prepared.schema.attributes[s]
    return str(attr.categories[int(value)]) if attr.categories else repr(float(value))


def candidate_shares(check: Any, name: str) -> dict[str, float] | None:
    """Her candidate values of the sensitive attribute ``name`` in one release and their shares among her
    candidate records (in a random-replacement release, the attacker's posterior of paper 004); None where the
    release gives no candidate set for it (a numeric attribute, randomized response)."""
    schema, release = check.prepared.schema, check.prepared.release
    s = schema.names.index(name)
    if schema.attributes[s].kind == "numeric" or release.family == "randomized_response":
        return None
    if release.family == "random_replacement":
        params = step_parameters(release.methods, "random_attribute_replacement") or {}
        shares = replacement_shares(check.prepared.values, schema, params, check.record, s)
        return {_value_name(check, s, v): p for v, p in shares.items()}
    if not check.ranks_apply:
        text = check.prepared.published.text[name]
        values = [text[r - 1] for r in check.rows]
    else:
        members, _ = candidate_rows(check.prepared.values, schema, check.record)
        values = [_value_name(check, s, v) for v in check.prepared.values[members, s]]
    return _shares_of(values)


def _shares_of(values: Sequence[str]) -> dict[str, float]:
    if not values:
        return {}
    found, counts = np.unique(np.asarray(values, dtype=object).astype(str), return_counts=True)
    return {str(v): int(c) / len(values) for v, c in zip(found, counts)}


def possible_shares(check: Any, name: str, whole: dict[str, float] | None = None) -> list[dict[str, float]] | None:
    """Her candidate values' shares in each published class she could be in (a generalized release whose
    candidates span several classes: :mod:`verifier.attacks.possible_classes`; a random-replacement release, in
    each group of rows alike in what they show that she could have become:
    :func:`verifier.attacks.models.replacement_groups`), else her one candidate set's (:func:`candidate_shares`,
    or ``whole`` when the caller has it); None where the release gives no candidate set for ``name``."""
    whole = candidate_shares(check, name) if whole is None else whole
    if whole is not None and check.prepared.release.family == "random_replacement":
        s = check.prepared.schema.names.index(name)
        params = step_parameters(check.prepared.release.methods, "random_attribute_replacement") or {}
        groups = replacement_groups(check.prepared.values, check.prepared.schema, params, check.record, s)
        return [_shares_of([_value_name(check, s, v) for v in rows]) for rows in groups] or [whole]
    if whole is None or check.ranks_apply or not check.rows:
        return None if whole is None else [whole]
    text = check.prepared.published.text[name]
    return [_shares_of([text[r] for r in members.tolist()]) for members in check.found["possible"].rows]


def base_shares(check: Any, name: str) -> dict[str, float]:
    """Every value's share among all records of one release: the base rates (as :func:`_prior` counts them)."""
    s = check.prepared.schema.names.index(name)
    if not check.ranks_apply:
        return _shares_of(check.prepared.published.text[name])
    return _shares_of([_value_name(check, s, v) for v in check.prepared.values[:, s]])


#: the most combinations of possible classes (one per release) a joint check weighs; past it her joint risk is
#: the sound bound 1
MOST_COMBINATIONS = 20_000


def _worst_joint(options: Sequence[Sequence[Mapping[str, float]]], prior: Mapping[str, float],
                 mine: str) -> tuple[dict[str, float], bool]:
    """Her values left and their joint probabilities for the combination of possible classes (one per release)
    that gives her value the largest; and whether the combinations were weighed (False past
    :data:`MOST_COMBINATIONS`, when the caller gives the bound 1)."""
    if int(np.prod([len(o) for o in options])) > MOST_COMBINATIONS:
        return {}, False
    worst: dict[str, float] | None = None
    for combination in itertools.product(*options):
        left = joint_candidates(combination, prior)
        if worst is None or left.get(mine, 0.0) > worst.get(mine, 0.0):
            worst = left
    return worst or {}, True


def _randomized(checks: Sequence[Any], name: str) -> dict[str, Any] | str:
    """Her joint entry for ``name`` when every release published it by randomized response, or why there is none."""
    first = checks[0]
    if any(c.prepared.schema.attributes != first.prepared.schema.attributes for c in checks):
        return "its releases do not share one schema's categories, which the joint randomized-response model needs"
    keeps = [rr_distortions(c.prepared.release.methods) for c in checks]
    if not all(isinstance(keep, dict) for keep in keeps):
        return "a release does not publish its keep probabilities"
    shares = rr_shares(first.prepared.release.claims, first.prepared.schema, keeps[0])
    joint = rr_joint_record([c.prepared.values for c in checks], first.prepared.schema, keeps, first.record, shares)
    entry = joint.get(name)
    if entry is None:
        return "it is not randomized in every release"
    if entry["risk"] is None:
        return f"its joint randomized distribution has more than {JOINT_RR_CELLS:,} cells"
    s = first.prepared.schema.names.index(name)
    guess = entry["best_guess"]
    return {**entry, "left": None, "candidates": None,
            "best_guess": None if guess is None else _value_name(first, s, guess)}


def _prior(check: Any, name: str, mine: str) -> float:
    """Her value's share among all records of one release (the base rate anyone guesses with); of a generalized
    release, her own check's: the least share of its people the release shows holding it."""
    s = check.prepared.schema.names.index(name)
    if not check.ranks_apply:
        return float(check.disclosure[name]["prior"])
    column = check.prepared.values[:, s]
    return float(np.count_nonzero(column == check.record[s])) / column.size if column.size else 0.0


#: her joint report's sentence where propagation across people could pin her (docs/methods.md)
PROPAGATION = ("An intruder who knows everyone's quasi-identifiers knows who shares your groups: once these releases "
               "pin your group-mates' values, a group's published counts can pin yours. This check cannot see that "
               "without their records, so your joint figures may understate what he learns (docs/methods.md, "
               "\"Propagation across people\").")


@dataclass(frozen=True)
class JointCheck:
    """Her checks in each release, her joint candidate values per sensitive attribute, the joint random-match
    test (None when fewer than two releases have ranks) and the policy that decides her level."""

    checks: tuple[Any, ...]
    candidates: dict[str, dict[str, Any]]
    match: JointMatch | None
    policy: Policy
    left_out: Mapping[str, str] = field(default_factory=dict)
    unwitnessed: str | None = NO_PROOF
    """Her verdict's ``unwitnessed`` finding: None only when every release's log proof holds and a quorum of
    witnesses cosigned its checkpoint, else the first release's sentence that says why not."""
    logs: tuple[dict[str, Any] | None, ...] = ()
    """Each release's place in its log (``Standing.to_json``), when log proofs were given."""
    repeated: tuple[str, ...] = ()
    """The releases given again (the same manifest digest as one before): each counts once."""

    def _own(self, j: int) -> HerFigures:
        check = self.checks[j]
        p = None if self.match is None or not check.ranks_apply else self.match.p_each[self._ranked().index(j)]
        return replace(check.figures(), p_value=p, unwitnessed=None)

    def _ranked(self) -> list[int]:
        return [j for j, c in enumerate(self.checks) if c.ranks_apply]

    def own_levels(self) -> list[str]:
        """Each release's level alone, under the same policy (its p-value from the joint test's draws)."""
        return [policy_verdict(self.policy, self._own(j)).level for j in range(len(self.checks))]

    def figures(self) -> HerFigures:
        grouped = [c for c in self.checks if not c.ranks_apply]
        smallest = min(grouped, key=lambda c: c.smallest_class) if grouped else None  # the first of the smallest
        distances = [c.distance for c in self.checks if c.ranks_apply]
        sensitive = {name: entry for name, entry in self.candidates.items() if entry["risk"] is not None}
        return HerFigures(sensitive, class_size=None if smallest is None else smallest.smallest_class,
                          classes=None if smallest is None else smallest.classes,
                          counterfeits=0 if smallest is None else smallest.counterfeits,
                          distance=min(distances) if distances else None,
                          p_value=None if self.match is None else self.match.p_joint, unwitnessed=self.unwitnessed)

    def verdict(self, own: Sequence[str] | None = None) -> Verdict:
        """Her joint verdict; ``own``, each release's level alone when the caller has them already."""
        details = [self._candidates_line(name, entry) for name, entry in self.candidates.items()]
        if self.match is not None:
            each = ", ".join(number(p, share=True) for p in self.match.p_each)
            details.append(f"A random record matches you as closely as you are matched in every release at once "
                           f"{number(self.match.p_joint, share=True)} of the time (each release alone: {each}).")
        details += [f"{name} is left out: {why}." for name, why in self.left_out.items()]
        details += [f"{path} is a release given before, or the same data signed again: it counts once."
                    for path in self.repeated]
        if self._propagates():
            details.append(PROPAGATION)
        joint = policy_verdict(self.policy, self.figures(), details=details)
        def fix(text: str) -> str:  # the policy's sentences speak of one release
            return text.replace("from this release", "from these releases together")

        joint = Verdict(joint.level, fix(joint.headline), tuple(replace(f, text=fix(f.text)) for f in joint.findings),
                        tuple(map(fix, joint.lines)), joint.policy)
        own = self.own_levels() if own is None else own
        worst = max(range(len(own)), key=lambda j: LEVELS.index(own[j]))  # the first of the worst alone
        if LEVELS.index(joint.level) < LEVELS.index(own[worst]):
            return self._decided_alone(joint, worst, own[worst])
        worse = LEVELS.index(joint.level) > LEVELS.index(own[worst])
        if not worse:
            return joint
        head = (f"Together these {len(self.checks)} releases tell more about you than any one of them "
                f"({', '.join(level.replace('_', ' ') for level in own)} alone): {joint.headline}")
        return Verdict(joint.level, head, joint.findings, (head, *joint.lines[1:]), joint.policy)

    def _propagates(self) -> bool:
        """Whether an intruder who knows everyone's quasi-identifiers could learn more than her joint figures say:
        two releases or more publish groups, and one of her sensitive values is left more than one candidate."""
        return sum(not c.ranks_apply for c in self.checks) >= 2 and any(
            entry.get("mode") == "joint" and len(entry.get("left") or {}) > 1 for entry in self.candidates.values())

    def _decided_alone(self, joint: Verdict, j: int, level: str) -> Verdict:
        """Her joint verdict when one release alone says worse than the joint figures: that release decides her
        level (the intruder holds every release, so he can use it alone), its headline and findings first."""
        alone = policy_verdict(self.policy, self._own(j))
        path = self.checks[j].prepared.release.path
        head = f"{path} alone makes you {level.replace('_', ' ')}, whatever the others add: {alone.headline}"
        # the joint figures' own findings stay, after the release's: a joint risk that breaks a rule is never read
        # as good for her because one release alone says worse (issue 59, item 5)
        findings = (*alone.findings, *[f for f in joint.findings if f.severity != NOTICE],
                    *[f for f in joint.findings if f.severity == NOTICE])
        together = f"Their joint figures alone would say {joint.level.replace('_', ' ')}: {joint.headline}"
        return Verdict(level, head, findings, (head, *[f.text for f in alone.findings[1:]], together,
                                               *joint.lines[1:]), joint.policy)

    @staticmethod
    def _candidates_line(name: str, entry: dict[str, Any]) -> str:
        left = entry["left"]
        if entry["mode"] == "randomized_response":
            alone = ", ".join(number(r, share=True) for r in entry["each"])
            return (f"Your {name} is published by randomized response in every release: an intruder who links you in "
                    f"all of them reconstructs it with probability {number(entry['risk'], share=True)}, against "
                    f"{alone} from each alone (paper 000's Result 1 on their stacked keep matrices).")
        if not left:
            return (f"Your {name} is a candidate in no release's group and match set at once: check your record, "
                    "or these are not releases of you.")
        shown = ", ".join(f"{v} ({number(p, share=True)})" for v, p in left.items())
        alone = ", ".join(number(r, share=True) for r in entry["each"])
        return (f"Your {name}: {plural(len(left), 'candidate value')} left in every release, {shown}; your value "
                f"is guessed right with probability {number(entry['risk'], share=True)} from all of them "
                f"together, against {alone} from each alone.")

    def _checked_with(self, check: Any) -> list[str]:
        """The other releases given whose manifest digest this release signs as one it was checked with by its
        publisher (``claims.composition``, docs/release-format.md section 8)."""
        signed = {e.get("manifest_sha256") for e in
                  ((check.prepared.release.claims.get("composition") or {}).get("earlier") or [])}
        return [c.prepared.release.path for c in self.checks
                if c is not check and c.prepared.release.manifest_sha256 in signed]

    def to_json(self) -> dict[str, Any]:
        own = self.own_levels()
        out = {
            "releases": [{"release": c.prepared.release.path, "dataset_id": c.prepared.release.dataset_id,
                          "release_version": c.prepared.release.release_version,
                          "fingerprint": c.prepared.release.key.fingerprint, "level_alone": level,
                          "class_size": None if c.ranks_apply else c.class_size,
                          "distance": c.distance if c.ranks_apply else None,
                          "checked_with": self._checked_with(c), "log": self.logs[j] if self.logs else None}
                         for j, (c, level) in enumerate(zip(self.checks, own))],
            "attribute_disclosure": self.candidates, "left_out": dict(self.left_out), "repeated": list(self.repeated),
            "p_joint": None if self.match is None else self.match.p_joint,
            "p_each": None if self.match is None else list(self.match.p_each),
            "random_method": None if self.match is None else self.match.method,
            "random_records": None if self.match is None else self.match.total,
            "verdict": self.verdict(own).to_json(),
            "contacts": list(dict.fromkeys(c for c in map(signed_contact, (c.prepared.release for c in self.checks))
                                           if c is not None)),
        }
        return {**out, "plain": joint_plain_words(out)}


def _joint_entry(checks: Sequence[Any], name: str, mine: str) -> dict[str, Any]:
    """Her joint entry for a categorical ``name`` outside randomized response: Bayes' rule over the releases with
    the first release's base rates as the prior, for the worst combination of the classes she could be in (the
    maximum-knowledge intruder reads hers in each), beside the same over her whole candidate sets."""
    prior = base_shares(checks[0], name)
    wholes = [candidate_shares(c, name) for c in checks]
    options = [possible_shares(c, name, whole) for c, whole in zip(checks, wholes)]
    weaker = joint_candidates(wholes, prior)
    left, weighed = _worst_joint(options, prior, mine)
    several = any(len(o) > 1 for o in options)
    return {"mode": "joint", "left": left, "risk": left.get(mine, 0.0) if weighed else 1.0,
            "candidates": len(left), "each": [max(each.get(mine, 0.0) for each in o) for o in options],
            "best_guess": next(iter(left), None), "bound": "worst_class" if several else "own_class",
            "candidate_set": {"left": weaker, "risk": weaker.get(mine, 0.0)}}


def check_jointly(checks: Sequence[Any], *, policy: Policy | None = None, samples: int = 10_000,
                  seed: int = 0, draws: JointDraws | None = None) -> JointCheck:
    """Her joint check over her checks in each release (``verifier.releases.subject.check_record``'s, her record
    read with each release's schema). ``draws``: the joint test's random records in the releases with ranks among
    ``checks``, in their order, where the caller checks many people against the same releases. A release given
    again (the same manifest digest) counts once, and ``repeated`` names it."""
    checks, repeated = _once_each(checks)
    first = checks[0]
    candidates, left_out = {}, {}
    families = {c.prepared.release.family for c in checks}
    for attr in first.prepared.schema.attributes:
        if attr.role != "sensitive":
            continue
        s = first.prepared.schema.names.index(attr.name)
        mine = _value_name(first, s, first.record[s])
        if attr.kind == "numeric":
            left_out[attr.name] = "it is numeric, and a joint check intersects categorical values"
            continue
        if "randomized_response" in families:
            entry = _randomized(checks, attr.name) if families == {"randomized_response"} else (
                "it is published by randomized response in some of these releases only, and no joint model of the "
                "mix is derived")
            if isinstance(entry, str):
                left_out[attr.name] = entry
                continue
        else:
            entry = _joint_entry(checks, attr.name, mine)
        candidates[attr.name] = with_base_rate(entry, entry["prior"] if "value_bound" in entry else
                                               _prior(first, attr.name, mine))
    ranked = [c for c in checks if c.ranks_apply]
    match = None
    if len(ranked) >= 2:
        draws = draws or joint_draws([c.prepared.space for c in ranked], samples=samples, seed=seed)
        match = draws.test([c.distance for c in ranked])
    return JointCheck(tuple(checks), candidates, match, policy or default_policy(), left_out, repeated=repeated)


def _once_each(checks: Sequence[Any]) -> tuple[list[Any], tuple[str, ...]]:
    """The checks of distinct releases, in their order, and the paths of those given again: the same release twice
    (by manifest digest), or the same data re-signed (by :attr:`~verifier.releases.verification.VerifiedRelease.
    content_key`: a copy signed as a new version), is one release's evidence, and multiplying its shares would
    invent certainty. Two versions of one dataset with their own data are two releases."""
    seen: set[str] = set()
    kept, repeated = [], []
    for check in checks:
        release = check.prepared.release
        keys = (release.manifest_sha256, release.content_key)
        if any(k in seen for k in keys):
            repeated.append(release.path)
            continue
        seen.update(keys)
        kept.append(check)
    return kept, tuple(repeated)


def open_together(prepared: Any, directory: str, key: str, fingerprint: str | None = None) -> Any:
    """Another release of the same people, verified with ``key`` and parsed, for her record read with
    ``prepared``'s schema: its attributes, kinds and categories must be the same (``SCHEMA_MISMATCH``)."""
    from verifier.errors import InvalidInputError
    from verifier.releases.facts import open_release
    from verifier.releases.subject import prepare

    other = prepare(open_release(directory, key, fingerprint=fingerprint))
    if other.schema.attributes != prepared.schema.attributes:
        raise InvalidInputError(f"its attributes are not those of {prepared.release.path}: your record is checked "
                                "against releases of the same attributes, kinds and categories", path=directory,
                                reason="SCHEMA_MISMATCH")
    return other


def check_releases_jointly(releases: Sequence[Any], record_for: Callable[[Any], np.ndarray], *,
                           policy: Policy | None = None, samples: int = 10_000, seed: int = 0,
                           standings: Sequence[Any] | None = None) -> JointCheck:
    """Her joint check over verified ``releases`` (two or more, of the same attributes); ``record_for(schema)``
    reads her record with each release's signed schema. ``standings``: each release's place in its log
    (:class:`verifier.transparency.standing.Standing`, from its proof), or None when no proof was given; her
    verdict is witnessed only when every one is. The command line and the Python API share it."""
    from verifier.errors import InvalidInputError, UsageError
    from verifier.releases.subject import check_record, prepare

    if len(releases) < 2:
        raise UsageError("a joint check takes two releases or more; verifier check takes one")
    checks = []
    for release in releases:
        prepared = prepare(release)
        if checks and prepared.schema.names != checks[0].prepared.schema.names:
            raise InvalidInputError(f"its attributes ({', '.join(prepared.schema.names)}) are not those of "
                                    f"{checks[0].prepared.release.path}: a joint check reads releases of the same "
                                    "attributes", path=release.path, reason="SCHEMA_MISMATCH")
        checks.append(check_record(prepared, record_for(prepared.schema), whole_space=prepared.ranks_apply))
    joint = check_jointly(checks, policy=policy, samples=samples, seed=seed)
    if standings is None:
        return joint
    unwitnessed = next((s.unwitnessed for s in standings if s.unwitnessed is not None), None)
    kept = [s for c, s in zip(checks, standings) if any(c is k for k in joint.checks)]  # a repeat's proof counts once
    return replace(joint, unwitnessed=unwitnessed, logs=tuple(s.to_json() for s in kept))
