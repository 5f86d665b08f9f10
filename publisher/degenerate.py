"""Outputs that protect nothing, judged on what came out (SPEC section 14), and what a release exposes.

A parameter can look protective and still change nothing: noise relative to
a spread of zero (one record), a swap window of zero ranks (p = 2 on 20
records). So the publisher looks at the output, in the released row order
beside its original (the secret pairing, which the protector has):

- every released record equals an original record, on a table with a
  numeric attribute (on categories alone many people share every value, and
  the disclosure risks measure that);
- a record published unchanged (equal to its own original on every
  attribute) that the intruder links with confidence;
- a column that a noise step was to noise, released equal to its original on
  every record: the noise's realized spread is zero.

Each is refused (``OUTPUT_DEGENERATE``, exit 3) unless ``--allow-degenerate``,
saying how many records and which input rows, and "protects nothing" only
where the whole output is the original's (:class:`Degenerate`). The refusal
names what avoids it: the weakest stronger value of the method's strength
parameter (:data:`STRENGTH`) whose output is not degenerate on the same
secret draws, found as ``publisher calibrate`` sweeps
(:func:`publisher.calibrate.weakest_sound`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from verifier.core.distinct_rows import rows_in
from verifier.data.schema import Schema
from verifier.errors import InvalidInputError
from verifier.releases.coherence import chain_problem, step_problem
from verifier.text import literal

__all__ = ["NOISING", "STRENGTH", "Degenerate", "all_original", "degenerate_problems", "releasable_chain",
           "stronger_values", "unchanged_rows"]

def releasable_chain(chain: Sequence[Any]) -> None:
    """Refuse, before anything runs, a chain of methods no verifier accepts in a signed release
    (:mod:`verifier.releases.coherence`): one in an order no run makes (``METHOD_CHAIN_INVALID``), or a parameter
    that protects nothing (``PARAMETER_DEGENERATE``, even with ``--allow-degenerate``, which lets a release publish
    a degenerate *output*, not a parameter that changes nothing)."""
    names = [m.name for m in chain]
    chain_wrong = chain_problem(names)
    if chain_wrong is not None:
        raise InvalidInputError(f"{' then '.join(names)}: {chain_wrong[1]}", reason="METHOD_CHAIN_INVALID")
    for method in chain:
        wrong = step_problem({"method": method.name, "parameters": method.parameters()}, None)
        if wrong is not None:
            raise InvalidInputError(f"{method.name}: {wrong[0]}: {wrong[1]}; a signed release never publishes it "
                                    "(publisher anonymize --allow-degenerate runs it for a test)",
                                    reason="PARAMETER_DEGENERATE")


#: method -> the column kinds it noises when it names no attributes
NOISING = {"additive_noise": ("numeric",)}
#: method -> the parameter that makes it stronger as it grows, and the factors a refusal tries it at
STRENGTH = {"additive_noise": "relative_sd", "rank_swapping": "p", "microaggregation": "k"}
_FACTORS = (1.5, 2.0, 3.0, 5.0, 8.0)
#: input rows a refusal names before it says how many more there are
_ROWS_SHOWN = 5


def stronger_values(method: str, value: Any) -> list[Any]:
    """Stronger values of ``method``'s strength parameter than ``value``, weakest first (within its bounds)."""
    if method == "additive_noise":
        if isinstance(value, dict):
            return [{k: v * f for k, v in value.items()} for f in _FACTORS]
        return [value * f for f in _FACTORS] if value else []
    if method == "rank_swapping":  # a percentage of the records: at most 100
        return sorted({min(100.0, value * f) for f in _FACTORS} - {value}) if 0 < value < 100 else []
    if method == "microaggregation":
        return sorted({max(value + 1, int(round(value * f))) for f in _FACTORS})
    return []


@dataclass(frozen=True)
class Degenerate:
    """What an output gives away: its sentences, and whether it protects nothing at all (every record)."""

    problems: tuple[str, ...]
    everything: bool

    def __bool__(self) -> bool:
        return bool(self.problems)

    def sentence(self) -> str:
        return ("this release protects nothing: " if self.everything else "this release exposes records: ") + \
            "; ".join(self.problems)


def unchanged_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Which released rows equal their own original on every attribute (both in the released row order)."""
    return np.all((y + 0.0) == (x + 0.0), axis=1) if y.size else np.zeros(y.shape[0], dtype=bool)


def all_original(original: np.ndarray, y: np.ndarray) -> bool:
    """Every row of ``y`` is some row of ``original`` (``-0.0`` is ``0.0``; a NaN equals nothing), through each
    row's hash (:func:`~verifier.core.distinct_rows.rows_in`). A sort of the rows as tuples took 3.7 s of a
    1e6 x 5 release, a sort per column 4.3 s of a 1e6 x 15 one; the hashes 1.7 s."""
    if y.shape[0] == 0 or original.shape[0] == 0 or np.isnan(y).any():
        return False
    return bool(rows_in(y, original).all())


def _noised_columns(methods: Sequence[dict[str, Any]], schema: Schema) -> list[int]:
    out: set[int] = set()
    for step in methods:
        kinds = NOISING.get(step["method"])
        if kinds is None:
            continue
        named = step["parameters"].get("attributes")
        relative = step["parameters"].get("relative_sd")
        if named is None and isinstance(relative, dict):
            named = list(relative)
        out.update(j for j, a in enumerate(schema.attributes)
                   if (a.name in named if named is not None else a.kind in kinds))
    return sorted(out)


def _rows(order: np.ndarray, released: np.ndarray) -> str:
    """The input rows (numbered from 1, after the header) of the released rows ``released``."""
    rows = sorted(int(order[i]) + 1 for i in np.flatnonzero(released))
    shown = ", ".join(map(str, rows[:_ROWS_SHOWN])) + (f" and {len(rows) - _ROWS_SHOWN} more"
                                                      if len(rows) > _ROWS_SHOWN else "")
    return f"input {'row' if len(rows) == 1 else 'rows'} {shown}"


def degenerate_problems(original: np.ndarray, x: np.ndarray, y: np.ndarray, schema: Schema,
                        methods: Sequence[dict[str, Any]], linked: np.ndarray, order: np.ndarray) -> Degenerate:
    """Every way the output protects nothing; ``x`` is the original in ``y``'s row order (``order[i]`` the input
    row of released row ``i``), ``linked`` which released rows the intruder links with confidence."""
    n = y.shape[0]
    problems = []
    whole = "numeric" in schema.kinds and all_original(original, y)
    if whole:
        problems.append(f"every one of the {n} released records equals an original record")
    same = unchanged_rows(x, y)
    exposed = same & np.asarray(linked, dtype=bool)
    count = int(np.count_nonzero(exposed))
    if count:
        problems.append(f"{count} of {n} records would be published unchanged and linked by the intruder with "
                        f"confidence ({_rows(order, exposed)})")
    flat = [schema.names[j] for j in _noised_columns(methods, schema) if n and np.all(y[:, j] == x[:, j])]
    if flat:
        problems.append(f"the noise's realized spread is zero on {', '.join(map(literal, flat))}: every record's "
                        "released value equals its original")
    return Degenerate(tuple(problems), whole or bool(n and same.all()))
