"""A subject's attribute disclosure risk, under the model of the method that made her release (SPEC section 13).

- randomized response: paper 000's closed form at her cell, from the
  published keep probabilities and the release's frequencies;
- random attribute replacement: paper 004's posterior of her sensitive value
  under the published replacement probabilities;
- every other release with ranks: the share of her candidates (her match set
  on the quasi-identifiers, or the records with exactly her categorical
  quasi-identifiers) whose released sensitive value is hers.

Generalized releases have their own, from her equivalence class
(:func:`verifier.attacks.classes.subject_class`).

Beside each risk (the attacker's posterior) stands its base rate, the
``prior``: her value's share among all released records, what anyone guesses
knowing nothing about her (within the same tolerance for a number), and the
gain between them (:func:`with_base_rate`).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from verifier.attacks.disclosure import record_disclosure
from verifier.attacks.models import replacement_record, rr_record
from verifier.data.schema import Schema
from verifier.releases.family import family_of, step_parameters

__all__ = ["base_rate", "her_disclosure", "with_base_rate"]


def with_base_rate(entry: dict[str, Any], prior: float) -> dict[str, Any]:
    """``entry`` with its ``prior`` and the gains of its ``risk`` over it: ``beta`` = (risk - prior) / prior
    (beta-likeness, Cao & Karras 2012) and ``delta`` = |ln(risk / prior)| (delta-disclosure, Brickell & Shmatikov
    2008); each None where it is undefined (a prior of 0, or a risk of 0 for delta)."""
    risk = float(entry["risk"])
    beta = (risk - prior) / prior if prior > 0 else None
    delta = abs(math.log(risk / prior)) if prior > 0 and risk > 0 else None
    return {**entry, "prior": prior, "beta": beta, "delta": delta}


def base_rate(values: np.ndarray, schema: Schema, record: np.ndarray, s: int, tolerance: float | None) -> float:
    """Her value's share among all released records in column ``s`` (within ``tolerance`` where it is given)."""
    column = values[:, s]
    if not column.size:
        return 0.0
    hit = np.abs(column - record[s]) <= tolerance if tolerance is not None else column == record[s]
    return int(np.count_nonzero(hit)) / column.size


def her_disclosure(methods: list[dict[str, Any]], values: np.ndarray, schema: Schema, record: np.ndarray) -> dict[str, Any]:
    """Per sensitive attribute: ``mode``, ``risk``, ``candidates`` and ``best_guess`` (a category position or a value)."""
    out = record_disclosure(values, schema, record)
    family = family_of(methods)
    if family == "randomized_response":
        keep = (step_parameters(methods, "randomized_response") or {}).get("keep_probabilities")
        if isinstance(keep, dict):
            out.update(rr_record(values, schema, {str(k): float(v) for k, v in keep.items()}, record))
    elif family == "random_replacement":
        out.update(replacement_record(values, schema, step_parameters(methods, "random_attribute_replacement") or {},
                                      record))
    for name, entry in out.items():  # the same event as the risk's: within its tolerance where it has one
        out[name] = with_base_rate(entry, base_rate(values, schema, record, schema.names.index(name),
                                                    entry.get("tolerance")))
    return out
