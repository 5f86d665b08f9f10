"""Re-identification risk from the equivalence classes on the quasi-identifiers, as an SDC report gives it.

sdcMicro and ARX report, for a table and its release, how many records share
their quasi-identifier values with how many others. A record in a class of
``f`` records (the sample frequency) is re-identified with probability
``1/f`` by an intruder who knows it is in the table (the prosecutor); the
journalist, who only knows it is in the population, faces the population
frequency ``F``; the marketer wants as many correct links as possible and
gets ``1/F`` per record on average. Without sampling weights the table is
its own population (``F = f``), and the three coincide, as the report says.

These are the classic measures for categorical quasi-identifiers. For a
table whose numeric quasi-identifiers were perturbed nearly every record is
unique (k = 1), which says nothing about linkage: its risk is the
permutation distance and the intruder's test (SPEC sections 4 and 5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from verifier.data.schema import Schema

__all__ = ["class_codes", "class_sizes", "quasi_identifier_columns", "reidentification_risk", "table_risk"]


def quasi_identifier_columns(schema: Schema) -> list[int]:
    """The columns classes are formed on: the quasi-identifiers, or every column when none is one."""
    return [j for j, a in enumerate(schema.attributes) if a.role == "quasi_identifier"] or list(range(len(schema)))


def class_codes(keys: np.ndarray, columns: list[int]) -> np.ndarray:
    """One integer code per distinct combination of ``keys[:, columns]`` (rank keys; ``-0.0`` is ``0.0``)."""
    code = np.zeros(keys.shape[0], np.int64)
    distinct = 1
    for j in columns:
        values, column = np.unique(keys[:, j] + 0.0, return_inverse=True)
        if distinct * values.size >= 2**62:  # re-number before the codes could overflow
            code = np.unique(code, return_inverse=True)[1].ravel()
            distinct = int(code.max()) + 1
        code = code * values.size + column.ravel()
        distinct *= values.size
    return code


def class_sizes(codes: np.ndarray) -> np.ndarray:
    """Each record's class size, from its class code (or label)."""
    _, where, counts = np.unique(codes, return_inverse=True, return_counts=True)
    return counts[where.ravel()]


def reidentification_risk(sizes: np.ndarray) -> dict[str, Any]:
    """The SDC report's risk figures from each record's class size (no sampling weights: F = f).

    ``k`` the smallest class; ``records_below_2`` / ``records_below_3`` the
    records in classes of fewer than 2 / 3 records (those that break 2- and
    3-anonymity); ``prosecutor.max`` the highest ``1/f`` and ``.mean`` its
    mean over records; ``journalist`` the same against the population;
    ``marketer`` the expected share of records re-identified, ``mean(1/F)``;
    ``expected_reidentifications`` the expected number, ``sum(1/F)`` (the
    number of classes without weights).
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size == 0:
        return {"k": 0, "records_below_2": 0, "records_below_3": 0}
    inverse = 1.0 / sizes
    prosecutor = {"max": float(inverse.max()), "mean": float(inverse.mean())}
    return {
        "k": int(sizes.min()),
        "records_below_2": int(np.count_nonzero(sizes < 2)),
        "records_below_3": int(np.count_nonzero(sizes < 3)),
        "prosecutor": prosecutor,
        "journalist": dict(prosecutor),
        "marketer": float(inverse.mean()),
        "expected_reidentifications": float(inverse.sum()),
        "population": "the table itself (no sampling weights)",
    }


def table_risk(keys: np.ndarray, schema: Schema) -> dict[str, Any]:
    """:func:`reidentification_risk` of a table of rank keys, classes on its quasi-identifiers."""
    return reidentification_risk(class_sizes(class_codes(keys, quasi_identifier_columns(schema))))
