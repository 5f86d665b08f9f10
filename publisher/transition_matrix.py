"""A post-randomized column's transition matrix, as another tool wrote it (issue 61, item 3).

sdcMicro's ``pram`` moves each value of a column by a transition matrix
``Rs`` (``get.sdcMicroObj(obj, "pram")$params$COLUMN$Rs``): a row per true
category, a column per published one, each row summing to 1. R's
``write.csv(Rs)`` writes it with the categories as the first row and the
first column::

    "","Divorced","Married-civ-spouse",...
    "Divorced",0.8696,0.0157,...

:func:`read_transition_matrix` reads that file into the rows of
:class:`verifier.attacks.distortion.Transition` in the schema's category
order. A category the tool's matrix does not list (no record held it, so the
tool never moved it or moved anything to it) keeps its value. Refused, naming
the file and the row: another layout, a category the schema does not list, a
probability outside [0, 1], a row not summing to 1.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Mapping

import numpy as np

from publisher.external_output import ToolOutput
from publisher.methods.frames import category_positions
from verifier.attacks.distortion import sums_to_one
from verifier.data.schema import Attribute, Schema
from verifier.data.tables import Table, format_rows
from verifier.errors import InvalidInputError
from verifier.text import literal

__all__ = ["modelled_columns", "post_randomized", "read_transition_matrix"]


def modelled_columns(schema: Schema) -> list[Attribute]:
    """The columns randomized response models, each post-randomized by a matrix or published as it is: the
    categorical quasi-identifiers and sensitive attributes."""
    return [a for a in schema.attributes if a.kind != "numeric" and a.role in ("quasi_identifier", "sensitive")]


def _fail(path: str, message: str) -> InvalidInputError:
    return InvalidInputError(message, path=path, reason="TRANSITION_MATRIX_INVALID")


def _probability(path: str, row: int, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _fail(path, f"row {row}: {literal(text)!r} is not a probability") from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise _fail(path, f"row {row}: {literal(text)!r} is not a probability in [0, 1]")
    return value


def read_transition_matrix(path: str, raw: bytes, attr: Attribute) -> list[list[float]]:
    """The transition matrix of the categorical ``attr`` in the file ``path`` (its bytes ``raw``): ``rows[v][u] =
    Pr(published = category u | true = category v)`` over the schema's categories, in their order."""
    categories = list(attr.categories or ())
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _fail(path, "is not UTF-8 text") from None
    lines = [line for line in csv.reader(io.StringIO(text)) if line]
    if len(lines) < 2:
        raise _fail(path, "holds no matrix: a header row of categories, then a row per category")
    header = [cell.strip() for cell in lines[0][1:]]
    names = [line[0].strip() for line in lines[1:]]
    if sorted(header) != sorted(names) or len(set(header)) != len(header):
        raise _fail(path, "the rows and the columns name different categories (or one twice): a transition matrix "
                    "has a row and a column per category")
    unknown = [c for c in header if c not in categories]
    if unknown:
        raise _fail(path, f"{literal(unknown[0])!r} is not a category of {literal(attr.name)!r} in the schema")
    at = {name: categories.index(name) for name in header}
    rows = {name: [1.0 if u == v else 0.0 for u in range(len(categories))]  # no record held it: the tool kept it
            for v, name in enumerate(categories)}
    for number, line in enumerate(lines[1:], start=2):
        if len(line) != len(header) + 1:
            raise _fail(path, f"row {number}: {len(line) - 1} probabilities for {len(header)} categories")
        row = rows[line[0].strip()] = [0.0] * len(categories)
        for name, cell in zip(header, line[1:]):
            row[at[name]] = _probability(path, number, cell.strip())
        if not sums_to_one(row):  # in the schema's order, as every verifier adds it
            raise _fail(path, f"row {number}: its probabilities add up to {math.fsum(row):.12g}, not 1")
    return [rows[name] for name in categories]


def post_randomized(path: str, output: ToolOutput, original: Table, matrices: Mapping[str, list[list[float]]]) -> \
        ToolOutput:
    """The tool's output ``output`` (file ``path``) of ``original`` judged under randomized response with the
    transition ``matrices`` by column (:func:`read_transition_matrix`'s rows), its ``model`` then
    ``randomized_response``.

    Refused, naming the file, the column and the row, never a value: generalized or suppressed cells (a
    post-randomized output publishes values), a numeric quasi-identifier (the model conditions on categories) or
    a second categorical sensitive attribute (it models one), a
    published value the matrix gives probability 0 from the original's in that row, a change in a categorical
    column no matrix describes.
    """
    schema = original.schema
    if output.model == "generalized":
        raise InvalidInputError("holds generalized or suppressed cells, and a post-randomized output (given with "
                                "--transition-matrix) publishes values: judge it without the matrices, or publish "
                                "the randomized output alone", path=path, reason="CELL_INVALID")
    numeric = [a.name for a in schema.attributes if a.role == "quasi_identifier" and a.kind == "numeric"]
    if numeric:
        raise InvalidInputError(f"column {literal(numeric[0])!r} is a numeric quasi-identifier, and randomized "
                                "response conditions on categories: code it in bands (a nominal or ordinal column) "
                                "in the schema", path=path, reason="METHOD_NOT_APPLICABLE")
    sensitive = [a.name for a in schema.attributes if a.role == "sensitive" and a.kind != "numeric"]
    if len(sensitive) > 1:
        raise InvalidInputError(f"randomized response models one categorical sensitive attribute, and "
                                f"{', '.join(repr(literal(n)) for n in sensitive)} are: publish each with its "
                                "quasi-identifiers in a release of its own", path=path,
                                reason="METHOD_NOT_APPLICABLE")
    frame = original.to_frame()
    for attr in modelled_columns(schema):
        categories = list(attr.categories or ())
        true = category_positions(frame[attr.name], categories, attr.name)
        shown = category_positions(output.table[attr.name], categories, attr.name)
        rows = matrices.get(attr.name)
        if rows is None:
            wrong = np.flatnonzero(true != shown)
            why = "changed, and no --transition-matrix says how"
        else:
            wrong = np.flatnonzero(np.asarray(rows, dtype=np.float64)[true, shown] <= 0.0)
            why = "published a value its transition matrix gives probability 0 from the original's"
        if wrong.size:
            raise InvalidInputError(f"column {literal(attr.name)!r}, {format_rows([int(wrong[0]) + 1])}: {why}",
                                    path=path, reason="CELL_INVALID")
    return ToolOutput(output.table, "randomized_response", output.suppressed)
