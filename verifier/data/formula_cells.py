"""Text cells a spreadsheet would run as formulas (CSV injection).

Excel, LibreOffice and Google Sheets read a cell that starts with ``=``,
``+``, ``-`` or ``@`` as a formula (``=HYPERLINK(...)``, ``=cmd|' /C calc'!A0``),
and a leading tab or carriage return can hide such a start. A release is
opened by people who never meant to run anything, so the publisher refuses
these cells (``FORMULA_LIKE_CELL``, unless ``--allow-formula-cells``) and the
verifier counts them. Only text is looked at: the categories of ordinal and
nominal columns, the column names, and in a generalized release a numeric
column's cells that are no number (a hierarchy's labels). Numbers are not
text: ``-1.5`` in a numeric column is a number in every reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from verifier.data.schema import Schema
from verifier.text import literal

__all__ = ["FORMULA_STARTS", "FormulaCells", "is_formula_like", "formula_cells_in_keys", "formula_cells_in_text"]

#: what a cell may not start with
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def is_formula_like(text: str) -> bool:
    return text.startswith(FORMULA_STARTS)


@dataclass(frozen=True)
class FormulaCells:
    """How many text cells look like formulas, and where the first is.

    ``first`` is ``(column, row)``: row 0 is the header (the column's name),
    rows from 1 are the data rows of the file.
    """

    count: int
    first: tuple[str, int] | None = None

    def where(self) -> str:
        """Where the first one is: ``column 'job', row 17`` or ``the name of column '=x'``; never the cell's text."""
        if self.first is None:
            return "nowhere"
        column, row = self.first
        name = "'" + literal(column) + "'"  # the name as published: controls and direction marks escaped
        return f"the name of column {name}" if row == 0 else f"column {name}, row {row}"

    def describe(self) -> str:
        """One sentence for a FAIL line."""
        if self.first is None:
            return "no text cell starts with =, +, -, @, a tab or a carriage return"
        more = f" (and {self.count - 1} more)" if self.count > 1 else ""
        return (f"{self.where()}{more} starts with =, +, -, @, a tab or a carriage return: a spreadsheet would run "
                "it as a formula")


def _header(schema: Schema) -> FormulaCells:
    bad = [name for name in schema.names if is_formula_like(name)]
    return FormulaCells(len(bad), (bad[0], 0) if bad else None)


def _merge(parts: Sequence[FormulaCells]) -> FormulaCells:
    first = min((p.first for p in parts if p.first is not None), key=lambda f: (f[1], 0), default=None)
    return FormulaCells(sum(p.count for p in parts), first)


def formula_cells_in_keys(schema: Schema, keys: np.ndarray) -> FormulaCells:
    """Formula-like cells of a table held as keys (category positions in the categorical columns)."""
    parts = [_header(schema)]
    for j, attr in enumerate(schema.attributes):
        if attr.kind == "numeric" or not attr.categories:
            continue
        bad = [i for i, c in enumerate(attr.categories) if is_formula_like(c)]
        if bad:
            rows = np.flatnonzero(np.isin(keys[:, j], bad))
            if rows.size:
                parts.append(FormulaCells(int(rows.size), (attr.name, int(rows[0]) + 1)))
    return _merge(parts)


def _number(cell: str) -> bool:
    from verifier.data.tables import decimal_cell
    from verifier.errors import InvalidInputError

    try:
        decimal_cell(cell)
    except InvalidInputError:
        return False
    return True


def formula_cells_in_text(schema: Schema, text: Mapping[str, Sequence[str]]) -> FormulaCells:
    """Formula-like cells of a table held as the text of each column (a generalized release's cells). In a
    numeric column a cell is text when it is no number: a hierarchy's label (ARX's ``=HYPERLINK(...)`` over ages)
    is looked at as a category is, and ``-5`` is a number."""
    parts = [_header(schema)]
    for attr in schema.attributes:
        cells = text[attr.name]
        suspect = {c for c in set(cells) if is_formula_like(c)}
        if attr.kind == "numeric":
            suspect = {c for c in suspect if not _number(c)}
        rows = [i for i, cell in enumerate(cells) if cell in suspect] if suspect else []
        if rows:
            parts.append(FormulaCells(len(rows), (attr.name, rows[0] + 1)))
    return _merge(parts)
