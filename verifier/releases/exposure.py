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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier.attacks.disclosure import record_disclosure
from verifier.attacks.models import replacement_record, rr_record
from verifier.data.schema import Schema
from verifier.releases.family import family_of, step_parameters

__all__ = ["her_disclosure"]


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
    return out
