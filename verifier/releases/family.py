"""Which model describes how a release was made: its method family (SPEC section 13).

A release's claims, its audit and a subject's check are computed under the
model of the methods that made it, read from the signed ``methods`` list:

==========================  ==================================  ===============================
family                      methods                             attribute disclosure
==========================  ==================================  ===============================
``generalized``             sd_k_anonymity,                     group-based, from the published
                            multi_sensitive_generalization,     equivalence classes (an m_invariant
                            m_invariant                         release's counterfeits subtracted
                                                                from their sizes)
``randomized_response``     randomized_response                 paper 000's closed form from the
                                                                published keep probabilities
``random_replacement``      random_attribute_replacement        the posterior under paper 004's
                                                                published replacement probabilities
``permutation``             the rank-based methods              her match set in rank space
==========================  ==================================  ===============================

A release made by another tool has one ``external`` step whose ``model``
parameter says which family its cells fit: ``generalized`` (intervals,
hierarchy nodes, masked strings, ``*``: its quasi-identifier and sensitive
columns are read as generalized cells), ``randomized_response`` (plain
values, some of them post-randomized under the published
``transition_matrices``, as sdcMicro's ``pram`` makes them) or
``permutation`` (plain values).

Permutation distance and the random-match test need ranks: they apply to
every family but ``generalized``, whose cells stand for sets of values.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["EXTERNAL", "GENERALIZING", "FAMILIES", "DERIVED_PARAMETERS", "derived_parameters", "family_of",
           "generalized_columns", "ranks_apply", "rr_distortions", "step_parameters", "NO_RANKS"]

#: method name -> the roles whose columns it publishes as generalized cells
GENERALIZING = {"sd_k_anonymity": ("quasi_identifier",),
                "multi_sensitive_generalization": ("quasi_identifier", "sensitive"),
                "m_invariant": ("quasi_identifier",)}
#: the step of a release another tool made; its ``model`` parameter names its family
EXTERNAL = "external"
#: the roles an external step's generalized cells may be in (a tool suppresses and recodes either)
EXTERNAL_ROLES = ("quasi_identifier", "sensitive")
#: method name -> (parameter the publisher derived from the original table, the parameter whose presence makes it
#: derived, or None if always): randomized response's keep probabilities, optimal for the target l (paper 000,
#: section 4); the replacement probabilities random attribute replacement used (paper 004, section 5); the
#: counterfeit records m-invariance added (Xiao and Tao 2007)
DERIVED_PARAMETERS = {"randomized_response": (("keep_probabilities", "l"),),
                      "random_attribute_replacement": (("p_used", None),),
                      "m_invariant": (("counterfeit_records", None), ("counterfeits", None))}


def derived_parameters(step: Any) -> tuple[str, ...]:
    """The names of the published parameters of one ``{"method", "parameters"}`` step that were derived from data."""
    if not isinstance(step, dict) or not isinstance(step.get("parameters"), dict):
        return ()
    params = step["parameters"]
    return tuple(name for name, when in DERIVED_PARAMETERS.get(str(step.get("method")), ())
                 if name in params and (when is None or params.get(when) is not None))
FAMILIES = ("generalized", "randomized_response", "random_replacement", "permutation")

NO_RANKS = ("This release's cells are generalized (intervals, sets of categories, hierarchy nodes) and have no "
            "ranks, so the permutation distance and the random-match test do not apply to it; what protects a record "
            "is the size and diversity of the group of released records its values fall in.")


def _names(methods: Sequence[Any]) -> list[str]:
    return [str(step.get("method")) for step in methods if isinstance(step, dict)]


def _external_model(methods: Sequence[Any], model: str) -> bool:
    """Whether the chain is another tool's output whose cells fit ``model``."""
    return any(isinstance(step, dict) and step.get("method") == EXTERNAL and isinstance(step.get("parameters"), dict)
               and step["parameters"].get("model") == model for step in methods)


def _external_generalized(methods: Sequence[Any]) -> bool:
    return _external_model(methods, "generalized")


def family_of(methods: Sequence[Any]) -> str:
    """The family of a chain of methods (a list of ``{"method", "parameters"}``)."""
    names = _names(methods)
    if any(n in GENERALIZING for n in names) or _external_generalized(methods):
        return "generalized"
    if "randomized_response" in names or _external_model(methods, "randomized_response"):
        return "randomized_response"
    if "random_attribute_replacement" in names:
        return "random_replacement"
    return "permutation"


def ranks_apply(methods: Sequence[Any]) -> bool:
    return family_of(methods) != "generalized"


def step_parameters(methods: Sequence[Any], name: str) -> dict[str, Any] | None:
    """The published parameters of the chain's last step named ``name``, or None."""
    found = None
    for step in methods:
        if isinstance(step, dict) and step.get("method") == name and isinstance(step.get("parameters"), dict):
            found = step["parameters"]
    return found


def rr_distortions(methods: Sequence[Any]) -> dict[str, Any] | None:
    """Each randomized attribute's published distortion, as signed: this tool's randomized response its
    ``keep_probabilities`` (numbers), another tool's post-randomization its ``transition_matrices`` (lists of
    rows, :mod:`verifier.attacks.distortion`), the other categorical columns it published as they are at 1; None
    where the chain publishes neither."""
    params = step_parameters(methods, "randomized_response")
    if params is not None:
        keep = params.get("keep_probabilities")
        return dict(keep) if isinstance(keep, dict) else None
    params = step_parameters(methods, EXTERNAL)
    if params is None or params.get("model") != "randomized_response":
        return None
    matrices = params.get("transition_matrices")
    if not isinstance(matrices, dict):
        return None
    return {**{str(name): 1.0 for name in params.get("kept_as_is") or ()}, **matrices}


def generalized_columns(methods: Sequence[Any], schema) -> list[str]:
    """The columns published as generalized cells: those of the roles each generalizing method generalizes."""
    roles: set[str] = set(EXTERNAL_ROLES if _external_generalized(methods) else ())
    for name in _names(methods):
        roles.update(GENERALIZING.get(name, ()))
    return [a.name for a in schema.attributes if a.role in roles]
