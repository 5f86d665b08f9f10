"""Manifests no run of the published methods can produce, refused (docs/release-format.md, section 4, step 4).

The published JSON Schema bounds each field's shape, and
:func:`~verifier.releases.manifest_schema.model_problem` ties the claims to
the model of the signed methods. Neither can say that a chain of methods is
one the publisher runs, that a parameter protects anything, or that the
claims keep the manifest's own signed targets. :func:`coherence_problem`
does, after the schema and before any figure is read; a failure is one
``MANIFEST_INCOHERENT`` naming the JSON path. The page runs its twin
(``coherence.js``), and the publisher refuses the same chains and parameters
before it anonymizes (:func:`chain_problem`, :func:`step_problem`), even with
``--allow-degenerate``.

What cannot be:

- an ``external`` step (another tool's output) beside any other step;
- a chain that starts with ``reverse_mapping`` (it maps the previous step's
  values back onto the original's; first, there is no previous step) or
  repeats it; a generalizing, randomized-response or random-replacement step
  that is not the last (nothing after it reads its cells or keeps its model)
  or is one of two such steps;
- ``relative_sd`` 0 (no noise) or above :data:`MAX_RELATIVE_SD`; keep
  probabilities that are all 1 (nothing randomized); rank swapping with p 0;
  a method's k above the records;
- a distance D above n - 1 (ranks run from 1 to n); an exhaustive
  random-match test over none or more than n^m records, a Monte Carlo one over none
  or more than :data:`MAX_SAMPLES`; level counts that do not add up;
- a dropped identifier, or a weight column, that is a released column;
- claims that miss the manifest's own targets (no original is needed to see it);
- level counts that contradict themselves (:func:`levels_problem`): shares that are not count / checked, a
  manifest of this format that counts fewer records than it releases, deciding rules that do not add up, and
  counts that name the verifier's default policy with another SHA-256 or a rule it lacks;
- a signed ``marginal`` (randomized response's sensitive counts, the base rate of its subjects) beside another
  model, naming a category the schema does not list, or not adding up to the records released;
- an ``m_invariant`` step whose counterfeit counts do not add up to its ``counterfeit_records``, leave no real
  record, or name a group by other cells than the quasi-identifiers; the records checked for the policy levels
  are the real ones, the released rows less the counterfeits (:func:`released_people`).

The number of released rows against ``claims.n_records`` is checked where the
data is parsed (:func:`rows_problem`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from verifier.attacks.classes import mask_probability
from verifier.attacks.match_settings import MAX_SAMPLES
from verifier.releases.family import EXTERNAL, GENERALIZING
from verifier.releases.policy import DEFAULT_NAME, default_policy, same_name
from verifier.releases.targets import joint_misses, target_misses
from verifier.releases.verdict import as_number
from verifier.text import literal

__all__ = ["MAX_RELATIVE_SD", "MAX_SAMPLES", "MODEL_METHODS", "MOST_CHECKED", "chain_problem", "coherence_problem", "levels_problem",
           "rows_problem", "step_problem", "released_people"]

#: the public draw of records whose levels the manifests of this format signed before they counted every record
MOST_CHECKED = 200
#: noise with a standard deviation more than this many times the column's publishes noise, not data
MAX_RELATIVE_SD = 1000.0
#: methods whose model describes the release they make: each is the chain's last step, and only one
MODEL_METHODS = (*GENERALIZING, "randomized_response", "random_attribute_replacement")


def chain_problem(methods: Sequence[str]) -> tuple[int, str] | None:
    """Why no run can chain ``methods`` in this order, as (the step's index, what is wrong), or None."""
    for i, name in enumerate(methods):
        if name == EXTERNAL and len(methods) > 1:
            return i, ("an external step is another tool's whole output, published as it is: it is the only method "
                       "of its release")
        if name == "reverse_mapping" and i == 0:
            return i, ("reverse_mapping maps a masked table's values back onto the original's, so it follows another "
                       "method; it cannot be the first")
        if name == "reverse_mapping" and "reverse_mapping" in methods[:i]:
            return i, "reverse_mapping is applied once"
        if name in MODEL_METHODS and i != len(methods) - 1:
            return i, (f"{name} publishes cells no later method reads and claims under its own model, so it is the "
                       "last method")
    models = [m for m in methods if m in MODEL_METHODS]
    if len(models) > 1:
        return methods.index(models[1]), f"{models[0]} and {models[1]} are two models; a release has one"
    return None


def step_problem(step: dict[str, Any], n: int | None) -> tuple[str, str] | None:
    """Why one ``{"method", "parameters"}`` step protects nothing or cannot run on ``n`` records (None: not known
    yet), as (the parameter, what is wrong), or None."""
    params, method = step["parameters"], step["method"]
    if method == "additive_noise":
        sds = params["relative_sd"]
        sds = list(sds.values()) if isinstance(sds, dict) else [sds]
        if all(s == 0 for s in sds):
            return "relative_sd", "0 adds no noise"
        if any(s > MAX_RELATIVE_SD for s in sds):
            return "relative_sd", f"above {MAX_RELATIVE_SD:g} times a column's standard deviation publishes noise, not data"
    if method == "randomized_response":
        keep = params["keep_probabilities"]
        keep = list(keep.values()) if isinstance(keep, dict) else [keep]
        if all(p == 1 for p in keep):
            return "keep_probabilities", "every one is 1, so nothing is randomized"
    if method == "rank_swapping" and params["p"] == 0:
        return "p", "0 swaps nothing"
    if method == EXTERNAL and n is not None and params["suppressed_records"] > n:
        return "suppressed_records", f"{params['suppressed_records']} is more than the {n} records"
    k = as_number(params.get("k"))
    if k is not None and n is not None and k > n:
        return "k", f"{int(k)} is more than the {n} records"
    return None


def released_people(predicate: dict[str, Any]) -> int:
    """The real records of a release: ``claims.n_records`` less the counterfeit records an ``m_invariant`` step
    added (:mod:`verifier.attacks.counterfeits`)."""
    fakes = sum(step["parameters"]["counterfeit_records"] for step in predicate["methods"]
                if step["method"] == "m_invariant")
    return predicate["claims"]["n_records"] - fakes


def _counterfeits_problem(predicate: dict[str, Any]) -> str | None:
    """What no m-invariant run publishes as its counterfeit counts."""
    qi = sorted(a["name"] for a in predicate["schema"]["attributes"] if a["role"] == "quasi_identifier")
    for i, step in enumerate(predicate["methods"]):
        if step["method"] != "m_invariant":
            continue
        where, params = f"$.predicate.methods[{i}].parameters", step["parameters"]
        entries = params["counterfeits"]
        for j, entry in enumerate(entries):
            if sorted(entry["cells"]) != qi:
                return f"{where}.counterfeits[{j}].cells: a group is named by its quasi-identifiers' cells, each once"
        if sum(entry["count"] for entry in entries) != params["counterfeit_records"]:
            return f"{where}.counterfeit_records: {params['counterfeit_records']} is not the sum of the groups' counts"
        if params["counterfeit_records"] >= predicate["claims"]["n_records"]:
            return f"{where}.counterfeit_records: a release of counterfeits alone holds nobody"
    return None


def _at_most_power(x: int, n: int, m: int) -> bool:
    """``x <= n^m`` without computing a power of millions of digits (a hostile manifest's n and m)."""
    if n <= 1 or m == 0:
        return x <= 1
    if m * math.log2(n) > x.bit_length() + 1:
        return True
    return x <= n ** m


def _marginal_problem(predicate: dict[str, Any]) -> str | None:
    """A signed marginal that no randomized-response, two-step or masking SD run writes: beside another model, with a
    category the schema does not list, or counts that do not add up to the records released."""
    categories = {a["name"]: a.get("categories") or [] for a in predicate["schema"]["attributes"]}
    for name, entry in (predicate["claims"].get("attribute_disclosure") or {}).items():
        marginal = entry.get("marginal")
        if marginal is None:
            continue
        where = f"$.predicate.claims.attribute_disclosure: the marginal of '{literal(name)}'"
        methods = predicate.get("methods") or []
        masks = mask_probability(methods) > 0 or any(isinstance(step, dict) and step.get("method") ==
                                                     "multi_sensitive_generalization" for step in methods)
        if entry.get("mode") != ("group" if masks else "randomized_response"):
            return f"{where} is signed under another model than randomized response or two-step generalization"
        if any(c not in categories.get(name, []) for c in marginal):
            return f"{where} counts a category the schema does not list"
        if sum(marginal.values()) != predicate["claims"]["n_records"]:
            return (f"{where} adds up to {sum(marginal.values())} records, not the {predicate['claims']['n_records']} "
                    "released")
    return None


def levels_problem(levels: dict[str, Any], where: str, *, every: bool = False,
                   rules: bool = True) -> str | None:
    """Level counts that contradict themselves (issue 59, item 2): a share that is not its count over the records
    checked; with ``every`` (a manifest of this format, which counts every record, or signed before it did, a public
    draw of :data:`MOST_CHECKED`), any other number checked;
    with ``rules``, deciding rules that do not add up to the records not protected, and where the counts name the
    verifier's default policy, another SHA-256 than its own, a rule it lacks, or rules of a level that do not add
    up to that level's count."""
    checked = levels["checked"]
    if every and checked != levels["records"] and not (checked == MOST_CHECKED < levels["records"]):
        return (f"{where}.checked: {checked} of {levels['records']} records; a manifest of this format counts every "
                f"record (or, signed before it did, a public draw of {MOST_CHECKED})")
    for key, count in (("at_risk_share", "at_risk"), ("exposed_share", "exposed")):
        if key in levels and levels[key] != (levels[count] / checked if checked else 0.0):
            return f"{where}.{key}: not {count} / checked = {levels[count]} / {checked}"
    policy = levels["policy"]
    default = default_policy()
    if same_name(policy["name"], DEFAULT_NAME) and policy["sha256"] != default.sha256:
        return (f"{where}.policy: it names the verifier's default policy, whose SHA-256 is {default.sha256}, with "
                f"another ({policy['sha256']})")
    decided = levels.get("by_rule")
    if not rules or decided is None:
        return None
    if sum(decided.values()) != levels["exposed"] + levels["at_risk"]:
        return (f"{where}.by_rule: its counts add up to {sum(decided.values())}, not the "
                f"{levels['exposed'] + levels['at_risk']} records exposed or at risk that a rule decided")
    if policy["sha256"] != default.sha256:
        return None
    level_of = {r.id: r.level for r in default.rules}
    unknown = [r for r in decided if r not in level_of]
    if unknown:
        return f"{where}.by_rule: '{literal(unknown[0])}' is not a rule of the policy the counts name"
    for level in ("exposed", "at_risk"):
        if sum(c for r, c in decided.items() if level_of[r] == level) != levels[level]:
            return f"{where}.by_rule: the rules of level {level} add up to another count than {level}'s"
    return None


def _claims_problem(predicate: dict[str, Any], names: list[str], current: bool = False) -> str | None:
    claims, n = predicate["claims"], predicate["claims"]["n_records"]
    pp = claims.get("permuted_privacy")
    if pp is not None and pp["distance"] > n - 1:
        return (f"$.predicate.claims.permuted_privacy.distance: {pp['distance']} is above n - 1 = {n - 1}, the "
                "farthest two ranks of {n} records can be".replace("{n}", str(n)))
    it = claims.get("intruder")
    if it is not None:
        records = it["random_records"]
        if it["random_method"] == "exhaustive" and not (1 <= records and _at_most_power(records, n, len(names))):
            return (f"$.predicate.claims.intruder.random_records: an exhaustive test enumerates 1 to n^m = "
                    f"{n}^{len(names)} records, not {records}")
        if it["random_method"] == "monte_carlo" and not 1 <= records <= MAX_SAMPLES:
            return f"$.predicate.claims.intruder.random_records: a Monte Carlo test draws 1 to {MAX_SAMPLES} records"
    levels = claims.get("policy_levels")
    if levels is not None:
        total = levels["exposed"] + levels["at_risk"] + levels["protected"]
        if total != levels["checked"] or levels["checked"] > levels["records"] \
                or levels["records"] != released_people(predicate):
            return ("$.predicate.claims.policy_levels: exposed, at risk and protected add up to the records checked, "
                    "at most the records released")
        problem = levels_problem(levels, "$.predicate.claims.policy_levels", every=current)
        if problem:
            return problem
    together = claims.get("composition")
    return None if together is None else composition_problem(together, released_people(predicate), predicate)


def composition_problem(together: dict[str, Any], n: int, predicate: dict[str, Any]) -> str | None:
    """What no check of a release with earlier ones gives (verifier.releases.composition)."""
    levels, linked, shared = together["policy_levels"], together["linked"], [e["linked"] for e in together["earlier"]]
    where = "$.predicate.claims.composition"
    if not max(shared) <= linked <= min(n, sum(shared)):
        return (f"{where}.linked: the people released before are at least those of the earlier release that shares the "
                "most, at most those of all of them and at most the records released")
    if levels["exposed"] + levels["at_risk"] + levels["protected"] != levels["checked"] \
            or levels["checked"] > levels["records"] or levels["records"] != linked:
        return (f"{where}.policy_levels: exposed, at risk and protected add up to the people checked, at most the "
                "people released before")
    problem = levels_problem(levels, f"{where}.policy_levels", rules=False)
    if problem:
        return problem
    if together["newly_exposed"] > levels["exposed"]:
        return f"{where}.newly_exposed: more than the people exposed together"
    if len({e["manifest_sha256"] for e in together["earlier"]}) != len(shared):
        return f"{where}.earlier: an earlier release is listed twice"
    sensitive = {a["name"] for a in predicate["schema"]["attributes"] if a["role"] == "sensitive"}
    for name in together["attribute_disclosure"]:
        if name not in sensitive:
            return f"{where}.attribute_disclosure: '{literal(name)}' is not a sensitive attribute of the schema"
    misses = joint_misses(predicate.get("targets"), together)
    if misses:
        return (f"$.predicate.targets.{misses[0].name}: the joint figures of claims.composition miss the manifest's "
                f"own target: {misses[0].text()}")
    return None


def coherence_problem(predicate: dict[str, Any], *, current: bool = False) -> str | None:
    """What no run of the published methods produces, as ``<json path>: <what>``, or None. ``current``: the
    manifest is of this format (its level counts count every record).

    Called on a predicate that passed the schema and the model checks.
    """
    names = [a["name"] for a in predicate["schema"]["attributes"]]
    methods = predicate["methods"]
    chain = chain_problem([step["method"] for step in methods])
    if chain is not None:
        return f"$.predicate.methods[{chain[0]}].method: {chain[1]}"
    n = predicate["claims"]["n_records"]
    for i, step in enumerate(methods):
        step_wrong = step_problem(step, n)
        if step_wrong:
            return f"$.predicate.methods[{i}].parameters.{step_wrong[0]}: {step_wrong[1]}"
    problem = (_counterfeits_problem(predicate) or _claims_problem(predicate, names, current)
               or _marginal_problem(predicate))
    if problem:
        return problem
    for i, name in enumerate(predicate.get("dropped_identifiers") or ()):
        if name in names:
            return f"$.predicate.dropped_identifiers[{i}]: '{literal(name)}' is dropped, yet it is a released column"
    weights = predicate.get("sampling_weights")
    if isinstance(weights, dict) and weights["column"] in names:
        return (f"$.predicate.sampling_weights.column: '{literal(weights['column'])}' is published in weights.csv, "
                "not as a released column")
    misses = target_misses(predicate.get("targets"), predicate["claims"])
    if misses:
        return (f"$.predicate.targets.{misses[0].name}: the claims miss the manifest's own target: "
                f"{misses[0].text()}")
    return None


def rows_problem(rows: int, predicate: dict[str, Any]) -> str | None:
    """Why ``rows`` released rows are not the ``claims.n_records`` the manifest signs, or None."""
    n = predicate["claims"]["n_records"]
    if rows != n:
        return f"$.predicate.claims.n_records: {n}, but the data holds {rows} rows"
    return None
