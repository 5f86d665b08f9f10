"""Drafting a schema from an original table (SPEC section 1).

A column whose every cell is an ASCII decimal number is ``numeric``; any other
column is ``nominal``, its categories in the default order (decreasing
frequency in X, ties by text). The protector then edits roles, marks ordinal
columns and their order, and keeps the file: it is published in the manifest.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from verifier.errors import InvalidInputError
from verifier.data.tables import MISSING_SENTINELS, format_rows, read_csv_cells
from verifier.data.schema import Attribute, Schema, nominal_order

__all__ = ["MISSING_POLICIES", "infer_schema", "missing_cells"]

#: what ``publisher schema --missing`` may do with a missing cell
MISSING_POLICIES = ("refuse", "category")

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def infer_schema(path: str | Path, *, sensitive: Iterable[str] = (), other: Iterable[str] = (),
                 missing: str = "refuse", cells: tuple[list[str], list[list[str]]] | None = None) -> Schema:
    """A draft schema for the CSV file at ``path``.

    ``sensitive`` and ``other`` name columns whose role is not the default
    ``quasi_identifier``. ``missing`` is what a missing cell (empty, ``NA``,
    ``?``...: :data:`~verifier.data.tables.MISSING_SENTINELS`) makes of its
    column: ``refuse`` (the default) stops with the column and rows;
    ``category`` keeps each spelling as a category of its own, listed in the
    schema like any other, and still refuses a column whose other cells are
    all numbers (a number is needed in every cell of a numeric column).
    ``cells`` is the file's header and columns when the caller read them
    already (:func:`~verifier.data.tables.read_csv_cells`).

    Raises
    ------
    InvalidInputError
        For a malformed file, a role given to a column the file lacks, or a missing cell the policy refuses.
    """
    if missing not in MISSING_POLICIES:
        raise InvalidInputError(f"--missing is one of {', '.join(MISSING_POLICIES)}", reason="PARAMETER_INVALID")
    header, columns = cells if cells is not None else read_csv_cells(path)
    sensitive, other = set(sensitive), set(other)
    unknown = sorted((sensitive | other) - set(header))
    if unknown:
        raise InvalidInputError(f"column {unknown[0]!r} is not in the file", path=str(path), reason="COLUMN_MISSING")
    attrs = []
    for name, cells in zip(header, columns):
        role = "sensitive" if name in sensitive else "other" if name in other else "quasi_identifier"
        gaps = [i + 1 for i, c in enumerate(cells) if c.strip() in MISSING_SENTINELS]
        numeric = all(_NUMBER.fullmatch(c) for c in cells if c.strip() not in MISSING_SENTINELS)
        if gaps and (missing == "refuse" or numeric):
            raise InvalidInputError(_refusal(name, cells, gaps, numeric, missing), path=str(path),
                                    reason="VALUE_MISSING")
        if numeric:
            attrs.append(Attribute(name, "numeric", role))
        else:
            attrs.append(Attribute(name, "nominal", role, nominal_order(cells)))
    return Schema(tuple(attrs))


def missing_cells(header: list[str], columns: list[list[str]]) -> dict[str, tuple[int, list[str]]]:
    """Each column with missing cells: how many, and their spellings (for the note ``publisher schema`` prints)."""
    out = {}
    for name, cells in zip(header, columns):
        gaps = [c for c in cells if c.strip() in MISSING_SENTINELS]
        if gaps:
            out[name] = (len(gaps), sorted(set(gaps)))
    return out


def _refusal(name: str, cells: list[str], gaps: list[int], numeric: bool, missing: str) -> str:
    shown = cells[gaps[0] - 1]
    where = f"column {name!r}, {format_rows(gaps)}: missing value {shown!r}"
    if numeric:
        return (f"{where}; its other cells are numbers, and a numeric column needs a number in every cell: fill "
                "them in (or drop the rows) before you draft the schema")
    return (f"{where}; pass --missing category to keep each missing spelling as a category of its own (the "
            "schema then lists it), or fill them in before you draft the schema")
