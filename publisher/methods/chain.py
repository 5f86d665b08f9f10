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
from verifier.core.warm_up import compiled_kernels
from verifier.data.schema import Schema
from verifier.releases.coherence import chain_problem
from verifier.text import html_table, number

__all__ = ["Anonymized", "anonymize", "anonymizing_label"]


@dataclass(frozen=True, eq=False, repr=False)
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

    def _chain(self) -> str:
        return " then ".join(f"{s['method']}({', '.join(f'{k}={v}' for k, v in s['parameters'].items() if v is not None)})"
                             for s in self.steps)

    def _metrics(self) -> list[tuple[str, str]]:
        """The steps' scalar metrics, rounded (a list or table of them is left to ``steps``)."""
        return [(f"{s['method']}.{k}" if len(self.steps) > 1 else k, number(v))
                for s in self.steps for k, v in (s.get("metrics") or {}).items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)]

    def __repr__(self) -> str:
        metrics = ", ".join(f"{k}={v}" for k, v in self._metrics()[:4])
        return (f"Anonymized({self._chain()}; {self.released.shape[0]} records x {self.released.shape[1]} "
                f"attributes" + (f"; {metrics}" if metrics else "") + ")")

    def _repr_html_(self) -> str:
        rows = [("methods", self._chain()), ("records", number(self.released.shape[0])),
                ("attributes", ", ".join(map(str, self.released.columns))), *self._metrics()]
        return html_table(rows, "Anonymized table (released rows shuffled; the seed is not kept)")


def anonymizing_label(methods: Sequence[Method]) -> str:
    """The phase a command shows while ``methods`` run: on a fresh install it says that their kernels compile
    (a first MDAV release sat 20 s on "anonymizing" with no word of why)."""
    cold = list(dict.fromkeys(m.name for m in methods if m.kernels and not compiled_kernels(m.kernels)))
    if not cold:
        return "anonymizing"
    return (f"anonymizing (compiling {' and '.join(cold)} for this machine: once after installing, up to a minute; "
            "later runs load it)")


def anonymize(table: pd.DataFrame, schema: Schema, methods: Sequence[Method], *, random_state) -> Anonymized:
    """Run ``methods`` in order on ``table``, then shuffle the rows; one generator for all.

    ``random_state`` ``None`` (production) draws from ChaCha20 keyed by the
    operating system; an int seeds PCG64 to reproduce a run (``publisher.randomness``).
    """
    if not methods:
        raise fail("give at least one method", "METHOD_UNKNOWN")
    wrong = chain_problem([m.name for m in methods])
    if wrong is not None:
        raise fail(f"{' then '.join(m.name for m in methods)}: {wrong[1]}", "METHOD_CHAIN_INVALID")
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
