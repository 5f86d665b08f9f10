"""Another tool's output (ARX, sdcMicro, mu-ARGUS), read into the cells of a release (issue 38).

Any anonymization is a permutation of the original values plus a little
noise (paper 003), so a masked file this tool did not make is judged as its
own are, under the model that fits its cells:

- every quasi-identifier and sensitive cell a plain value (sdcMicro's or
  mu-ARGUS's microaggregated or noised numbers, swapped categories): the
  ranked family, ``permutation``, with (D, v), the intruder and rank-based
  disclosure;
- any generalized cell: the ``generalized`` family, judged by its classes
  and its groups' sensitive values.

The cells each tool writes, and the release cell each becomes
(docs/release-format.md, "Releases made with other tools"):

==============================  ===========================  =====================================
the tool writes                 in a numeric column          in a categorical column
==============================  ===========================  =====================================
a value                         the number                   the category
``*``, ``NA`` or an empty cell  ``*``: every value           ``*``: every category
``20-39``                       a node of its hierarchy,     a node of its hierarchy
                                else ``[20,39]``
``[20, 40[`` / ``[20, 40]``     ``[20,40)`` / ``[20,40]``    refused
``1234*`` (masked)              refused: declare it nominal  ``{12340,...}``: the categories of
                                                             that length agreeing where unmasked
==============================  ===========================  =====================================

A tool writes its rows in the original's order: each cell is checked
against the original value in its row, and a cell that does not contain it
(or that no rule reads) is refused naming the file, the column and the row,
never the value. A record whose every quasi-identifier is ``*`` is
suppressed: it stays in the release, as a record whose quasi-identifiers are
all unknown.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from verifier.data.arx_hierarchy import ArxHierarchy
from verifier.attacks.classes import column_hierarchy, published_cell
from verifier.data.schema import Attribute
from verifier.data.tables import Table, decimal_cell, format_rows, number_label, read_csv_cells
from verifier.errors import InvalidInputError
from verifier.text import literal

__all__ = ["SUPPRESSED_CELLS", "ToolOutput", "read_tool_output"]

#: how the tools write a cell they withheld: ARX ``*``, sdcMicro ``NA``, mu-ARGUS an empty cell
SUPPRESSED_CELLS = frozenset({"*", "NA", ""})
_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_DASHED = re.compile(rf"({_NUMBER})\s*-\s*({_NUMBER})")  # 20-39
_BRACKETED = re.compile(rf"\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\[\]\)])")  # [20, 40[ and [20, 40]


class ToolOutput:
    """A tool's output as release cells, rows in the original's order.

    ``table`` holds the quasi-identifier and sensitive columns as release
    text when ``model`` is ``generalized`` (numbers and categories
    otherwise, as every other column); ``suppressed`` counts the records
    whose every quasi-identifier is ``*``.
    """

    def __init__(self, table: pd.DataFrame, model: str, suppressed: int):
        self.table, self.model, self.suppressed = table, model, suppressed


def _fail(path: str, reason: str, message: str) -> InvalidInputError:
    return InvalidInputError(message, path=path, reason=reason)


def _numeric_cell(text: str, tree: ArxHierarchy | None) -> str:
    """A numeric column's cell in release text, or ValueError with why not."""
    if tree is not None and text in tree.leaves:  # a node of ARX's tree (its 20-24 may hold 21 to 25)
        return text
    dashed, bracketed = _DASHED.fullmatch(text), _BRACKETED.fullmatch(text)
    if bracketed:
        lo, hi, close = bracketed.groups()
        return f"[{number_label(decimal_cell(lo))},{number_label(decimal_cell(hi))}{']' if close == ']' else ')'}"
    if dashed and not text.startswith("-"):
        return f"[{number_label(decimal_cell(dashed.group(1)))},{number_label(decimal_cell(dashed.group(2)))}]"
    if text.endswith("*"):
        raise ValueError("a masked value in a numeric column: declare the column nominal in the schema")
    try:
        return number_label(decimal_cell(text))
    except InvalidInputError:
        raise ValueError("no rule reads it: a number, an interval (20-39, [20, 40[), a label of the column's "
                         "hierarchy or * was expected") from None


def _masked(text: str, categories: tuple[str, ...]) -> str:
    """ARX's masked string (``1234*``): the categories of its length that agree with it where it is not ``*``."""
    fits = [c for c in categories if len(c) == len(text) and all(m == "*" or m == v for m, v in zip(text, c))]
    if not fits:
        raise ValueError("a masked value no category of the column fits")
    if any(set(c) & set("{},") for c in fits):
        raise ValueError("a masked value over categories holding braces or commas, which a set of categories "
                         "cannot list")
    return fits[0] if len(fits) == 1 else "{" + ",".join(fits) + "}"


def _categorical_cell(text: str, attr: Attribute, tree: ArxHierarchy | None) -> str:
    categories = tuple(attr.categories or ())
    if text in categories or (tree is not None and text in tree.leaves):
        return text
    if "*" in text:
        return _masked(text, categories)
    raise ValueError("no rule reads it: a category of the schema, a label of the column's hierarchy or * was "
                     "expected")


def _release_cell(text: str, attr: Attribute, tree: ArxHierarchy | None) -> str:
    text = text.strip()
    if text in SUPPRESSED_CELLS:
        return "*"
    return _numeric_cell(text, tree) if attr.kind == "numeric" else _categorical_cell(text, attr, tree)


def _plain(cell: str, attr: Attribute) -> bool:
    """Whether a release cell is one value (a number, a category) rather than a set of them."""
    if attr.kind != "numeric":
        return cell in (attr.categories or ())
    try:
        decimal_cell(cell)
    except InvalidInputError:
        return False
    return True


def _column(path: str, attr: Attribute, texts: list[str], original: list[Any], tree: ArxHierarchy | None,
            spec: Mapping[str, Any] | None) -> tuple[list[str], int | None]:
    """One column's release cells, and the first row (from 1) whose cell does not contain the original value in
    that row (None: every cell does)."""
    hierarchy = column_hierarchy(attr, spec)
    out, known, first = [], {}, None
    for row, (text, value) in enumerate(zip(texts, original), start=1):
        cell = known.get(text)
        if cell is None:
            try:
                released = _release_cell(text, attr, tree)
                cell = known[text] = (released, published_cell(released, attr, hierarchy))
            except (ValueError, InvalidInputError) as exc:
                why = exc.message if isinstance(exc, InvalidInputError) else str(exc)
                raise _fail(path, "CELL_INVALID", f"column {literal(attr.name)!r}, {format_rows([row])}: "
                            f"{literal(text.strip())!r}: {why}") from None
        if first is None and not cell[1].contains(value):
            first = row
        out.append(cell[0])
    return out, first


def read_tool_output(path: str, raw: bytes, original: Table, trees: Mapping[str, ArxHierarchy]) -> ToolOutput:
    """Read a tool's CSV output of ``original`` (``raw``, its bytes) with the columns' ARX hierarchies ``trees``.

    Refused, naming file, column and row: other columns than the original's
    schema, another number of records, a cell no rule reads or that does not
    contain the original value of its row.
    """
    header, columns = read_csv_cells(path, raw)
    schema = original.schema
    if sorted(header) != sorted(schema.names) or len(set(header)) != len(header):
        extra = [h for h in header if h not in schema.names]
        missing = [n for n in schema.names if n not in header]
        said = "; ".join(part for part in (
            f"columns not in the original's schema: {', '.join(repr(literal(h)) for h in extra)}" if extra else "",
            f"missing: {', '.join(repr(literal(n)) for n in missing)}" if missing else "",
            "a column is named twice" if not extra and not missing else "") if part)
        raise _fail(path, "COLUMNS_MISMATCH", f"the tool's output must hold the original's columns, each once ({said})")
    n = len(columns[0]) if columns else 0
    if n != original.n_records:
        raise _fail(path, "ROWS_MISMATCH", f"holds {n:,} records and the original {original.n_records:,}; a tool's "
                    "suppressed records stay in its output, their quasi-identifiers written * (or NA, or empty)")
    frame = original.to_frame()
    texts = dict(zip(header, columns))
    cells: dict[str, list[str]] = {}
    outside: dict[str, int] = {}
    for attr in schema.attributes:
        if attr.role == "other":
            continue
        tree = trees.get(attr.name)
        values = frame[attr.name].tolist()
        cells[attr.name], first = _column(path, attr, texts[attr.name], values, tree, tree.tree() if tree else None)
        if first is not None:
            outside[attr.name] = first
    qi = [a.name for a in schema.attributes if a.role == "quasi_identifier"]
    suppressed = int(sum(all(cells[q][r] == "*" for q in qi) for r in range(n))) if qi else 0
    generalized = any(not _plain(c, attr) for attr in schema.attributes if attr.name in cells
                      for c in dict.fromkeys(cells[attr.name]))
    if generalized and outside:  # a generalized cell stands for a set holding the truth; a changed value does not
        name, row = next(iter(outside.items()))
        tree = "" if name in trees else (f"; if the tool's labels come from a hierarchy, give it with --hierarchy "
                                         f"{literal(name)}=FILE (ARX's 20-24 may hold 21 to 25)")
        raise _fail(path, "CELL_NOT_COVERING", f"column {literal(name)!r}, {format_rows([row])}: "
                    f"{literal(texts[name][row - 1].strip())!r} does not contain the original record's value in this "
                    "row. A tool's rows are in the original's order (ARX, sdcMicro and mu-ARGUS keep it), and a file "
                    "with generalized cells keeps every other value true (a tool that also perturbs values publishes "
                    f"no generalized cell){tree}")
    out = {}
    for attr in schema.attributes:
        if attr.name in cells and generalized:
            out[attr.name] = cells[attr.name]
        elif attr.name in cells:
            out[attr.name] = ([decimal_cell(c) for c in cells[attr.name]] if attr.kind == "numeric"
                              else cells[attr.name])
        else:
            out[attr.name] = _other(path, attr, texts[attr.name], frame[attr.name].tolist())
    table = pd.DataFrame(out)
    return ToolOutput(table, "generalized" if generalized else "permutation", suppressed)


def _other(path: str, attr: Attribute, texts: list[str], original: list[Any]) -> list[Any]:
    """A column neither quasi-identifier nor sensitive: plain values of its kind, as the tool wrote them."""
    out = []
    for row, text in enumerate(texts, start=1):
        text = text.strip()
        try:
            out.append(decimal_cell(text) if attr.kind == "numeric" else _category(text, attr))
        except (InvalidInputError, ValueError):
            raise _fail(path, "CELL_INVALID", f"column {literal(attr.name)!r}, {format_rows([row])}: "
                        f"{literal(text)!r} is not a {'number' if attr.kind == 'numeric' else 'category of the schema'}"
                        "; a column that is neither quasi-identifier nor sensitive is published as values") from None
    return out if attr.kind != "numeric" else list(np.asarray(out, dtype=np.float64))


def _category(text: str, attr: Attribute) -> str:
    if text not in (attr.categories or ()):
        raise ValueError(text)
    return text
