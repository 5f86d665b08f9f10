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
from verifier.data.tables import read_csv_cells
from verifier.data.schema import Attribute, Schema, nominal_order

__all__ = ["infer_schema"]

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def infer_schema(path: str | Path, *, sensitive: Iterable[str] = (), other: Iterable[str] = ()) -> Schema:
    """A draft schema for the CSV file at ``path``.

    ``sensitive`` and ``other`` name columns whose role is not the default
    ``quasi_identifier``.

    Raises
    ------
    InvalidInputError
        For a malformed file, or a role given to a column the file lacks.
    """
    header, columns = read_csv_cells(path)
    sensitive, other = set(sensitive), set(other)
    unknown = sorted((sensitive | other) - set(header))
    if unknown:
        raise InvalidInputError(f"column {unknown[0]!r} is not in the file", path=str(path), reason="COLUMN_MISSING")
    attrs = []
    for name, cells in zip(header, columns):
        role = "sensitive" if name in sensitive else "other" if name in other else "quasi_identifier"
        if all(_NUMBER.fullmatch(c) for c in cells):
            attrs.append(Attribute(name, "numeric", role))
        else:
            attrs.append(Attribute(name, "nominal", role, nominal_order(cells)))
    return Schema(tuple(attrs))
