"""The manifest's published JSON Schema, enforced (SPEC section 14; docs/manifest.schema.json).

A signed manifest is trusted for what it says, never for its shape: a
dishonest or buggy publisher signs whatever it likes. Every field is typed
and bounded by ``manifest.schema.json`` (JSON Schema 2020-12), validated here
with ``jsonschema``, the reference implementation (``fastjsonschema`` is
faster but stops at draft 7, and a manifest is one small document). What a
schema cannot say is checked after it, in :func:`model_problem`: the claims
follow the model of the signed methods, name the schema's own attributes, and
the creation time is a real instant.

Every violation is one :class:`~verifier.releases.listed_files.ReleaseError`
``SCHEMA_INVALID`` naming the JSON path of the offending field.
"""

from __future__ import annotations

import datetime as _dt
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from verifier.releases.coherence import coherence_problem
from verifier.attacks.distortion import Transition, sums_to_one
from verifier.releases.family import EXTERNAL, family_of
from verifier.releases.listed_files import fail
from verifier.releases.targets import TARGETS
from verifier.text import literal

__all__ = ["MANIFEST_SCHEMA", "manifest_schema", "model_problem", "schema_problem", "transition_problem",
           "validate_manifest"]

#: the schema's file inside the package; docs/manifest.schema.json is the same bytes
MANIFEST_SCHEMA = "manifest.schema.json"
#: the attribute-disclosure modes each family's claims may use (verifier.releases.family)
MODES = {"generalized": {"group"}, "randomized_response": {"randomized_response"},
         "random_replacement": {"random_replacement"}, "permutation": {"permutation", "group", "none"}}


def _strict_integer(checker: Any, instance: Any) -> bool:
    """JSON Schema calls 5.0 an integer; a manifest's serializer never writes one, so neither do we."""
    return isinstance(instance, int) and not isinstance(instance, bool)


@lru_cache(maxsize=1)
def manifest_schema() -> dict[str, Any]:
    """The published schema, parsed once."""
    return json.loads(resources.files("verifier.releases").joinpath(MANIFEST_SCHEMA).read_text("utf-8"))


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    base = jsonschema.Draft202012Validator
    strict = jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine("integer", _strict_integer))
    return strict(manifest_schema(), format_checker=base.FORMAT_CHECKER)


def _path(error: Any) -> str:
    return error.json_path if hasattr(error, "json_path") else "$"


def schema_problem(statement: Any) -> str | None:
    """The first schema violation as ``<json path>: <what is wrong>``, or None."""
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator().iter_errors(statement))
    if error is None:
        return None
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    if error.validator == "not" and isinstance(error.instance, str):  # $defs/name: one line of plain text
        message = (f"'{literal(error.instance[:80])}' holds a control or direction-changing character; a name is "
                   "one line of plain text")
    return f"{_path(error)}: {message}"


def _created_problem(created: str) -> str | None:
    try:
        _dt.datetime.fromisoformat(created.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return "$.predicate.createdAt: not a real RFC 3339 date and time"
    return None


def model_problem(predicate: dict[str, Any]) -> str | None:
    """What a schema cannot check: the claims under the model of the signed methods, of the schema's attributes.

    Called on a predicate that passed :func:`schema_problem`.
    """
    claims, names = predicate["claims"], [a["name"] for a in predicate["schema"]["attributes"]]
    sensitive = [a["name"] for a in predicate["schema"]["attributes"] if a["role"] == "sensitive"]
    family = family_of(predicate["methods"])
    if "model" in claims and claims["model"] != family:
        return (f"$.predicate.claims.model: {claims['model']!r}, but the signed methods make a {family!r} release; "
                "its claims must be computed under that model")
    if len(set(names)) != len(names):
        return "$.predicate.schema.attributes: an attribute is listed twice"
    for i, a in enumerate(predicate["schema"]["attributes"]):  # a reader ranks a category by its place in the list
        if a["kind"] != "numeric" and not a.get("categories"):
            return f"$.predicate.schema.attributes[{i}].categories: a signed {a['kind']} attribute lists its categories"
    disclosure = claims.get("attribute_disclosure")
    if disclosure is not None:
        for name, entry in disclosure.items():
            if name not in sensitive:
                return f"$.predicate.claims.attribute_disclosure: {name!r} is not a sensitive attribute of the schema"
            if entry["mode"] not in MODES[family]:
                return (f"$.predicate.claims.attribute_disclosure.{name}.mode: {entry['mode']!r} is not a mode of the "
                        f"{family!r} model")
            if "max" not in entry or "mean" not in entry:
                return f"$.predicate.claims.attribute_disclosure.{name}: a claimed risk has its max and mean"
        # randomized response claims its closed form for the one sensitive attribute it randomizes
        missing = [s for s in sensitive if s not in disclosure and family != "randomized_response"]
        if missing and "model" in claims:
            return f"$.predicate.claims.attribute_disclosure: no claim for the sensitive attribute {missing[0]!r}"
    pp = claims.get("permuted_privacy")
    if pp is not None and not (len(pp["variances"]) == len(pp["spread_kinds"]) == len(names)):
        return (f"$.predicate.claims.permuted_privacy: {len(pp['variances'])} variances and "
                f"{len(pp['spread_kinds'])} spread kinds for {len(names)} attributes")
    if claims["k"] > claims["n_records"]:
        return f"$.predicate.claims.k: {claims['k']} is more than the {claims['n_records']} records"
    if "suppression" in claims and (family != "generalized" or
                                    not any(step["method"] == EXTERNAL for step in predicate["methods"])):
        return ("$.predicate.claims.suppression: only a generalized release another tool made claims its suppression "
                "figures")
    for name in predicate.get("targets") or {}:
        families = TARGETS[name][1]
        if families is not None and family not in families:
            return f"$.predicate.targets.{name}: a {family!r} release has no such figure to promise"
    risks = (predicate.get("targets") or {}).get("max_attribute_risk") or {}
    for name in risks:
        if name not in sensitive:
            return f"$.predicate.targets.max_attribute_risk: {name!r} is not a sensitive attribute of the schema"
    for i, step in enumerate(predicate["methods"]):
        for name in step["parameters"].get("attributes") or ():
            if name not in names:
                return f"$.predicate.methods[{i}].parameters.attributes: {name!r} is not an attribute of the schema"
        if step["method"] == EXTERNAL:
            problem = transition_problem(step["parameters"], predicate["schema"]["attributes"])
            if problem is not None:
                return f"$.predicate.methods[{i}].parameters.{problem}"
    return _created_problem(predicate["createdAt"])


def transition_problem(params: dict[str, Any], attributes: list[dict[str, Any]]) -> str | None:
    """What no post-randomized output of another tool publishes (issue 61): a ``randomized_response`` model without
    a transition matrix, or one on a column that is not a categorical quasi-identifier or sensitive attribute, of
    another size than its categories, with a row not summing to 1; matrices beside another model; a column kept as
    it is that is not categorical or is also randomized. The parameter's name, then what is wrong."""
    matrices, kept = params.get("transition_matrices"), params.get("kept_as_is") or []
    if params["model"] != "randomized_response":
        return None if matrices is None and not kept else (
            "transition_matrices: only a post-randomized output (model randomized_response) publishes them")
    if not matrices:
        return "transition_matrices: a post-randomized output publishes the matrix of each column it randomized"
    by_name = {a["name"]: a for a in attributes}
    for name, rows in matrices.items():
        attr = by_name.get(name)
        if attr is None or attr["kind"] == "numeric" or attr["role"] not in ("quasi_identifier", "sensitive"):
            return (f"transition_matrices.{name}: not a categorical quasi-identifier or sensitive attribute of the "
                    "schema")
        d = len(attr.get("categories") or ())
        if len(rows) != d or any(len(row) != d for row in rows):
            return f"transition_matrices.{name}: not {d} rows of {d} probabilities, one per category"
        if not all(sums_to_one(row) for row in rows):
            return f"transition_matrices.{name}: a row does not sum to 1"
    if all(Transition.of(rows).identity() for rows in matrices.values()):
        return "transition_matrices: every one publishes each value as it is, so nothing is randomized"
    for name in kept:
        attr = by_name.get(name)
        if name in matrices or attr is None or attr["kind"] == "numeric":
            return f"kept_as_is: {name!r} is not a categorical attribute published as it is"
    return None


def validate_manifest(statement: Any, shown: str, *, current: bool = False) -> None:
    """Raise ``SCHEMA_INVALID`` naming the JSON path of the first violation of the schema, then
    ``MANIFEST_INCOHERENT`` for what no run of the published methods produces
    (:mod:`verifier.releases.coherence`; ``current``: a manifest of this format), then ``SCHEMA_INVALID`` for claims
    outside the model."""
    problem = schema_problem(statement)
    if problem:
        raise fail(shown, "SCHEMA_INVALID", problem)
    incoherent = coherence_problem(statement["predicate"], current=current)
    if incoherent:
        raise fail(shown, "MANIFEST_INCOHERENT", incoherent)
    problem = model_problem(statement["predicate"])
    if problem:
        raise fail(shown, "SCHEMA_INVALID", problem)
