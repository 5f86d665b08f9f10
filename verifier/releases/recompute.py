"""The figures of a release's claims under its model: the publisher computes them with this code, the
auditor recomputes them with the same code (SPEC sections 9 and 13).

- :func:`group_release_claims`: a generalized release's ``k``, classes,
  group risks and, for two-step generalization or several sensitive
  attributes, paper 002's single and multi-diversity at the method's alpha;
  all from the published cells alone.
- :func:`family_disclosure`: attribute disclosure of a release with ranks in
  its family's mode (randomized response's closed form, random replacement's
  posterior), or the permutation/group fallback.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from verifier.attacks.reidentification import class_population, class_sizes, reidentification_risk
from verifier.attacks.classes import PublishedCells, group_claims, leaf_confidence
from verifier.attacks.counterfeits import class_counterfeits
from verifier.attacks.models import replacement_release_claims, rr_claims
from verifier.attacks.suppression import suppression_claims
from verifier.data.schema import Schema
from verifier.releases.family import EXTERNAL, rr_distortions, step_parameters

__all__ = ["diversity_claims", "family_disclosure", "group_release_claims", "rr_keep", "sensitive_marginals"]


def diversity_claims(published: PublishedCells, alpha: float | None) -> dict[str, Any]:
    """Paper 002's checks on the published classes at ``alpha``, with leaf-level confidences.

    ``single_diversity``: every sensitive attribute's largest confidence
    within the QI classes (Def. 3-4); ``multi_diversity``: the same within the
    classes of the QIs and the other sensitive attributes as published, which
    an attacker who learns one sensitive value can use (Q&S diversity, Def. 5-6).
    ``alpha`` is the method's own target; without one (``None``, a method
    that sets no alpha) the confidences are reported and nothing is passed or failed.
    """
    qi = [a.name for a in published.quasi_identifiers]
    sens = [a.name for a in published.sensitive]
    single = {s: leaf_confidence(published, qi, s) for s in sens}
    multi = {s: leaf_confidence(published, qi + [o for o in sens if o != s], s) for s in sens}
    out: dict[str, Any] = {"alpha": alpha}
    for key, conf in (("single_diversity", single), ("multi_diversity", multi)):
        top = max(conf.values(), default=0.0)
        out[key] = {"max_confidence": top} if alpha is None else {"passed": bool(top <= alpha + 1e-9),
                                                                   "max_confidence": top}
    return out


def group_release_claims(published: PublishedCells, methods: list[dict[str, Any]],
                         weights: np.ndarray | None = None, masks: Any = None) -> dict[str, Any]:
    """The claims of a generalized release, every one computable from the release and its ``weights`` alone;
    ``masks``: a two-step release's masks' model (:mod:`verifier.attacks.mask_model`), which its risks read."""
    labels = published.class_labels()
    fakes = class_counterfeits(published, labels, methods)
    claims = group_claims(published, fakes, methods, masks)
    claims["reidentification"] = reidentification_risk(  # each class's real people (its counterfeits are nobody)
        class_sizes(labels) - fakes[labels], None if weights is None else class_population(labels, weights))
    msg = step_parameters(methods, "multi_sensitive_generalization")
    if msg is not None or len(published.sensitive) > 1:
        alpha = (msg or {}).get("alpha_sa")  # only a method that sets alpha has it as a target
        claims["diversity"] = diversity_claims(published, float(alpha) if isinstance(alpha, (int, float)) else None)
    if step_parameters(methods, EXTERNAL) is not None:  # another tool's output: ARX's figures, to compare with its own
        claims["suppression"] = suppression_claims(published)
    return claims


def sensitive_marginals(x: np.ndarray, schema: Schema) -> dict[str, dict[str, int]]:
    """Each categorical sensitive attribute's count of every category in the original ``x`` (rank keys, one row a
    record): the marginal a two-step release signs, the prior its MaskClass model reads (issue 58)."""
    out = {}
    for j, a in enumerate(schema.attributes):
        if a.role == "sensitive" and a.kind != "numeric":
            counts = np.bincount(x[:, j].astype(np.int64), minlength=len(a.categories or ()))
            out[a.name] = {c: int(n) for c, n in zip(a.categories or (), counts.tolist())}
    return out


def rr_keep(methods: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, float | None]:
    """The published distortions (keep probabilities, or another tool's transition matrices:
    :func:`verifier.releases.family.rr_distortions`) and the target l of a randomized-response step."""
    keep = rr_distortions(methods)
    l = (step_parameters(methods, "randomized_response") or {}).get("l")
    return keep, float(l) if isinstance(l, (int, float)) and not isinstance(l, bool) else None


def family_disclosure(family: str, methods: list[dict[str, Any]], x: np.ndarray | None, y: np.ndarray,
                      schema: Schema, fallback: Mapping[str, Any] | None) -> dict[str, Any]:
    """Attribute disclosure in the family's mode; ``fallback`` (permutation/group, needs ``x``) for the rest.

    ``x`` is the original in the released row order or any order (None: from the release alone, where the
    family allows it).
    """
    if family == "randomized_response":
        keep, l = rr_keep(methods)
        if keep is not None:
            return rr_claims(x, y, schema, keep, l=l)
    if family == "random_replacement":
        if x is None:
            return {}
        return replacement_release_claims(x, y, schema, step_parameters(methods, "random_attribute_replacement") or {})
    return dict(fallback or {})
