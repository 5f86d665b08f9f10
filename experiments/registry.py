"""The experiments by name: one per seed paper, each a function ``run(quick: bool) -> Outcome``."""

from __future__ import annotations

from typing import Callable

from experiments import (
    attack_truth,
    composition,
    kerckhoffs,
    paper000_randomized_response,
    paper001_sd_anonymity,
    paper002_multi_sensitive,
    paper003_permutation,
    paper004_random_replacement,
)
from experiments.outcome import Outcome

__all__ = ["EXPERIMENTS"]

EXPERIMENTS: dict[str, tuple[str, Callable[[bool], Outcome]]] = {
    "paper000": ("randomized response on Adult, and against l-diversity and Anatomy: keep probabilities, distances, "
                 "count queries and uncertainty coefficients (Tables 3-5, Figs. 3-7)",
                 paper000_randomized_response.run),
    "paper001": ("SD k-anonymization against Mondrian: total NCP and data utility against k (Figs. 4-5)",
                 paper001_sd_anonymity.run),
    "paper002": ("two-step generalization for several sensitive attributes: distortion ratios (Figs. 4-5)",
                 paper002_multi_sensitive.run),
    "paper003": ("the permutation paradigm: the intruder's linkage and the random-match test (Tables 5-7, Figs. 1-3)",
                 paper003_permutation.run),
    "paper004": ("random attribute replacement against entropy l-diversity and Anatomy: count queries (Fig. 6)",
                 paper004_random_replacement.run),
    "composition": ("Ganta et al. 2008: two k-anonymous releases of overlapping people intersected, with and "
                    "without l-diversity (issue 40)", composition.run),
    "attack_truth": ("the named intruder simulated on SD, m-invariant, randomized-response and random-replacement "
                     "releases of Adult: his success at each verdict level beside a base-rate guesser (issue 50)",
                     attack_truth.run),
    "kerckhoffs": ("the verdict against the exact oracle of the intruder who reruns the method, on random tiny "
                   "tables of every family: subjects rated milder and harsher (issue 58)", kerckhoffs.run),
}
