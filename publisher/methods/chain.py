"""A chain of methods run with one generator, then the rows shuffled (SPEC section 7).

The published order says nothing about the original order. The un-shuffled
result and the permutation stay in the protector's process for the assessment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from publisher.methods.base import Method, fail
from publisher.randomness import noise_generator
from verifier.data.schema import Schema

__all__ = ["Anonymized", "anonymize"]


@dataclass(frozen=True, eq=False)
class Anonymized:
    """A chain's result.

    ``table`` is in the original row order (the protector's, for assessment);
    ``released`` is the same rows shuffled, ``released.iloc[i]`` being
    ``table.iloc[order[i]]``. ``steps`` lists each method's name, parameters
    and metrics, in order.
    """

    table: pd.DataFrame
    released: pd.DataFrame
    order: np.ndarray
    steps: list[dict[str, Any]]
    randomness: str = ""
    """Which generator drew the randomness (public; the key or seed never is)."""

    @property
    def parameters(self) -> list[dict[str, Any]]:
        return [{"method": s["method"], "parameters": s["parameters"]} for s in self.steps]


def anonymize(table: pd.DataFrame, schema: Schema, methods: Sequence[Method], *, random_state) -> Anonymized:
    """Run ``methods`` in order on ``table``, then shuffle the rows; one generator for all.

    ``random_state`` ``None`` (production) draws from ChaCha20 keyed by the
    operating system; an int seeds PCG64 to reproduce a run (``publisher.randomness``).
    """
    if not methods:
        raise fail("give at least one method", "METHOD_UNKNOWN")
    rng, randomness = noise_generator(random_state)
    current = table
    steps = []
    for method in methods:
        result = method.apply(current, schema, random_state=rng, original=table)
        current = result.table.reset_index(drop=True)
        steps.append({"method": method.name, "parameters": method.parameters(), "metrics": result.metrics})
    order = rng.permutation(len(current))
    released = current.iloc[order].reset_index(drop=True)
    return Anonymized(table=current, released=released, order=order, steps=steps, randomness=randomness)
