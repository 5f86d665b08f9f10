"""The claims a manifest carries, each computed under the model of the methods that made the release.

SPEC sections 6 and 13: ``claims.model`` names the family
(``verifier.releases.family``), and every figure follows it:

- every family with ranks (``permutation``, ``randomized_response``,
  ``random_replacement``): the data-set (D, v), the intruder's figures and
  ``k``; attribute disclosure in the family's own mode (the permutation
  match set, paper 000's closed form, or paper 004's posterior);
- ``generalized``: ``k``, the classes and the group-based risks from the
  published classes, and for several sensitive attributes the alpha, Q&S
  and multi-diversity checks of paper 002. Permutation distance and the
  intruder's test do not apply to cells without ranks.

Figures that need the secret pairing of released and original rows stay in
``protector_only``. The family-specific figures come from
:mod:`verifier.releases.recompute`, the code the audit recomputes them with.
"""

from __future__ import annotations

from typing import Any

__all__ = ["permutation_claims"]


def permutation_claims(assessment: dict[str, Any], k: int) -> dict[str, Any]:
    """The claims of a release with ranks, from an assessment in the released row order.

    Every figure here can be recomputed by an auditor who has the original
    (``verifier audit --original``), except those under ``protector_only``,
    which need the secret pairing of released and original rows. ``k``, the
    smallest number of released records sharing the same quasi-identifier
    values, needs only the release.
    """
    pp, it = assessment["permuted_privacy"], assessment["intruder"]
    return {
        "n_records": assessment["n_records"],
        "k": k,
        "permuted_privacy": {"distance": pp["distance"], "variances": pp["variances"], "spread_kinds": pp["spread_kinds"]},
        "intruder": {
            "alpha": it["alpha"],
            "random_method": it["random_method"],
            "random_records": it["random_records"],
            "intruder_seed": 0,
            "confidently_linked_share": it["confidently_linked_share"],
            "hellinger": it["hellinger"],
        },
        "attribute_disclosure": assessment.get("attribute_disclosure", {}),
        "protector_only": {
            "correct_link_share": it["correct_link_share"],
            "multiple_match_share": it["multiple_match_share"],
            "misidentified_share": it["misidentified_share"],
        },
    }
