"""Re-identification risk from the equivalence classes on the quasi-identifiers, as an SDC report gives it.

sdcMicro and ARX report, for a table and its release, how many records share
their quasi-identifier values with how many others. A record in a class of
``f`` records (the sample frequency) is re-identified with probability
``1/f`` by an intruder who knows it is in the table (the prosecutor); the
journalist, who only knows it is in the population, faces the population
frequency ``F``; the marketer wants as many correct links as possible and
gets ``1/F`` per record on average. With sampling weights ``F`` is
estimated as the sum of the weights of the class's records (never below
``f``: a population class holds at least the sample's records); without them
the table is its own population (``F = f``), and the three coincide, as the
report says.

These are the classic measures for categorical quasi-identifiers. For a
table whose numeric quasi-identifiers were perturbed nearly every record is
unique (k = 1), which says nothing about linkage: its risk is the
permutation distance and the intruder's test (SPEC sections 4 and 5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier.data.schema import Schema
from verifier.data.distinct_values import distinct_values
from verifier.data.tuple_codes import tuple_codes

__all__ = ["NO_WEIGHTS", "WEIGHTED", "class_codes", "class_population", "class_sizes", "quasi_identifier_columns", "reidentification_risk",
           "table_risk"]

#: how the risks estimate the population frequency F, as the manifest states it
NO_WEIGHTS = "the table itself (no sampling weights)"
WEIGHTED = "estimated from the sampling weights: F is the sum of the weights of the class's records, at least f"


def quasi_identifier_columns(schema: Schema) -> list[int]:
    """The columns classes are formed on: the quasi-identifiers, or every column when none is one."""
    return [j for j, a in enumerate(schema.attributes) if a.role == "quasi_identifier"] or list(range(len(schema)))


def class_codes(keys: np.ndarray, columns: list[int]) -> np.ndarray:
    """One integer code per distinct combination of ``keys[:, columns]`` (rank keys; ``-0.0`` is ``0.0``): each
    column's values ranked, the combinations numbered densely in their order by
    :func:`~verifier.data.tuple_codes.tuple_codes`."""
    return tuple_codes((distinct_values(keys[:, j] + 0.0, return_inverse=True)[1] for j in columns), keys.shape[0])


def class_sizes(codes: np.ndarray) -> np.ndarray:
    """Each record's class size, from its class code (or label)."""
    _, where, counts = distinct_values(np.asarray(codes), return_inverse=True, return_counts=True)
    return counts[where]


def class_population(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each record's estimated population frequency: the sum of the weights of its class's records."""
    _, where = distinct_values(np.asarray(codes), return_inverse=True)
    return np.bincount(where, weights=np.asarray(weights, dtype=np.float64))[where]


def reidentification_risk(sizes: np.ndarray, population: np.ndarray | None = None) -> dict[str, Any]:
    """The SDC report's risk figures from each record's class size ``f`` and population frequency ``F``.

    ``k`` the smallest class; ``records_below_2`` / ``records_below_3`` the
    records in classes of fewer than 2 / 3 records (those that break 2- and
    3-anonymity); ``prosecutor.max`` the highest ``1/f`` and ``.mean`` its
    mean over records; ``journalist`` the same against the population;
    ``marketer`` the expected share of records re-identified, ``mean(1/F)``;
    ``expected_reidentifications`` the expected number, ``sum(1/F)`` (the
    number of classes without weights). ``population`` (per record, from
    :func:`class_population`) is ``F``; without it ``F = f``.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size == 0:
        return {"k": 0, "records_below_2": 0, "records_below_3": 0}
    inverse = 1.0 / sizes
    prosecutor = {"max": float(inverse.max()), "mean": float(inverse.mean())}
    if population is None:
        against, journalist = inverse, dict(prosecutor)
    else:
        against = 1.0 / np.maximum(np.asarray(population, dtype=np.float64), sizes)
        journalist = {"max": float(against.max()), "mean": float(against.mean())}
    return {
        "k": int(sizes.min()),
        "records_below_2": int(np.count_nonzero(sizes < 2)),
        "records_below_3": int(np.count_nonzero(sizes < 3)),
        "prosecutor": prosecutor,
        "journalist": journalist,
        "marketer": float(against.mean()),
        "expected_reidentifications": float(against.sum()),
        "population": NO_WEIGHTS if population is None else WEIGHTED,
    }


def table_risk(keys: np.ndarray, schema: Schema, weights: np.ndarray | None = None) -> dict[str, Any]:
    """:func:`reidentification_risk` of a table of rank keys, classes on its quasi-identifiers (``F`` by ``weights``)."""
    codes = class_codes(keys, quasi_identifier_columns(schema))
    return reidentification_risk(class_sizes(codes), None if weights is None else class_population(codes, weights))
