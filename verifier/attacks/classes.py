"""Equivalence classes of a generalized release, read from the release alone.

A generalized release (SD k-anonymization, paper 001; two-step
generalization, paper 002) publishes cells that stand for sets of values
(docs/release-format.md, "generalized cells"). Rows with identical published
quasi-identifiers form an equivalence class. From the release alone anyone
can compute:

- ``k``, the size of the smallest class, and the number of classes;
- per sensitive attribute the group-based risk of spec/attribute-disclosure.md
  section 12: within a class, the share of rows whose published sensitive
  cell is a given value, a masked cell covering N values counting 1/N for
  each. ``max`` is the largest share of any value in any class (a table is
  l-diverse in the frequency sense iff ``max <= 1/l``), ``mean`` the average
  over rows of the share of the row's own published value, ``distinct_l`` the
  fewest distinct sensitive values in a class;
- a subject's own class: the released rows whose published cells contain her
  values, her risk among them and the attacker's best guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from verifier.attacks.counterfeits import class_counterfeits
from verifier.attacks.disclosure import CERTAIN
from verifier.attacks.generalized import Cell, parse_cell
from verifier.attacks.hierarchy import Hierarchy, build_hierarchy
from verifier.attacks.possible_classes import possible_classes
from verifier.data.schema import Attribute, Schema
from verifier.data.distinct_values import first_appearances
from verifier.data.tables import format_rows
from verifier.data.tuple_codes import first_seen, label_members, tuple_codes
from verifier.errors import InvalidInputError
from verifier.text import literal

__all__ = ["base_rate_bounds", "cell_share", "her_value", "mask_probability", "mask_problem", "mask_weights", "leaf_confidence", "PublishedCells", "value_shares", "column_hierarchy", "group_claims", "published_cell", "read_published", "subject_class"]

WILDCARD = "*"


@dataclass(frozen=True, eq=False)
class PublishedCells:
    """A generalized release as published: the text of every column and the parsed QI and sensitive cells."""

    schema: Schema
    text: dict[str, list[str]]
    cells: dict[str, list[Cell]]
    shares: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)
    """Each column's :func:`value_shares`, computed once (every subject's base rate reads them)."""
    suppressed: list = field(default_factory=list, repr=False)
    """The suppressed rows, once :func:`verifier.attacks.suppression.suppressed_rows` has found them (every
    subject's check reads them)."""
    distinct: dict[str, tuple[list[Cell], np.ndarray]] = field(default_factory=dict, repr=False)
    """Each column's distinct cells and every row's position among them, once :meth:`distinct_cells` has found
    them (every subject's class reads them)."""
    labels: list = field(default_factory=list, repr=False)
    """Each row's class, once :meth:`class_labels` has found them (the claims, the re-identification figures, the
    suppression claims and the counterfeits read them)."""
    masks: dict = field(default_factory=dict, repr=False)
    """Each sensitive column's :func:`mask_weights`, once found (every subject's risk reads them)."""

    def distinct_cells(self, name: str) -> tuple[list[Cell], np.ndarray]:
        """Column ``name``'s distinct cells, and for every row the position of its cell among them: a class is
        found by testing each distinct cell once, not every row's."""
        if name not in self.distinct:
            texts, first = _text_codes(self.text[name])  # one text, one cell: each text's cell is looked at once
            index: dict[Cell, int] = {}
            positions = np.array([index.setdefault(self.cells[name][r], len(index)) for r in first.tolist()],
                                 dtype=np.int64)
            self.distinct[name] = (list(index), positions[texts])
        return self.distinct[name]

    @property
    def n_records(self) -> int:
        return len(next(iter(self.text.values()))) if self.text else 0

    @property
    def quasi_identifiers(self) -> list[Attribute]:
        return [a for a in self.schema.attributes if a.role == "quasi_identifier"]

    @property
    def sensitive(self) -> list[Attribute]:
        return [a for a in self.schema.attributes if a.role == "sensitive"]

    def class_labels(self) -> np.ndarray:
        """Each row's class: rows with identical published quasi-identifiers share one (found once, read-only)."""
        if not self.labels:
            labels = self._class_labels()
            labels.setflags(write=False)
            self.labels.append(labels)
        return self.labels[0]

    def _class_labels(self) -> np.ndarray:
        def stripped(texts: list[str]) -> np.ndarray:  # a column's codes, texts equal but for spaces coded alike
            codes, first = _text_codes(texts)
            seen: dict[str, int] = {}
            return np.array([seen.setdefault(texts[r].strip(), len(seen)) for r in first.tolist()],
                            dtype=np.int64)[codes]

        # classes numbered as they first appear
        return first_seen(tuple_codes((stripped(self.text[a.name]) for a in self.quasi_identifiers), self.n_records))


def _text_codes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's text as a code, codes in the order the texts first appear, and each code's first row."""
    import pandas as pd  # late: a command's --help loads no pandas

    codes = pd.factorize(pd.Series(texts, dtype=object), use_na_sentinel=False)[0]
    return codes, first_appearances(codes)


def column_hierarchy(attr: Attribute, spec: Mapping[str, Any] | None) -> Hierarchy | None:
    """The published tree that names a column's internal nodes.

    A numeric column's interval labels read themselves and need none; a labelled tree over its numbers (ARX's
    ``20-24``, which may hold 21 to 25: docs/release-format.md) is read as a categorical tree whose leaves are
    the numbers' labels."""
    if spec is None:
        return None
    if attr.kind == "numeric":
        return build_hierarchy(spec, [], False) if spec.get("type") == "categorical" else None
    return build_hierarchy(spec, list(attr.categories or ()), False, on_unknown="attach_root")


def published_cell(text: str, attr: Attribute, hierarchy: Hierarchy | None) -> Cell:
    """What one published cell covers; ``*`` is every value of the column. A bad cell raises CELL_INVALID or
    CATEGORY_UNKNOWN, and its caller says where the cell is."""
    numeric = attr.kind == "numeric"
    if text.strip() == WILDCARD and (numeric or hierarchy is None or WILDCARD not in hierarchy.order):
        if numeric:
            return Cell(lo=-math.inf, hi=math.inf)
        if attr.categories:
            return Cell(values=frozenset(attr.categories))
        return Cell(everything=True)
    try:
        cell = parse_cell(text, numeric, hierarchy)
    except InvalidInputError as exc:
        raise InvalidInputError(exc.message, reason="CELL_INVALID") from None
    if not numeric and attr.categories is not None and cell.values is not None:
        unknown = sorted(cell.values - set(attr.categories))
        if unknown:
            raise InvalidInputError(f"{unknown[0]!r} is not one of the schema's categories", reason="CATEGORY_UNKNOWN")
    return cell


def _typed_matches(cell: Cell, typed: Mapping[str, Any]) -> bool:
    """The Parquet struct's covered values agree with its text."""
    if "values" in typed:
        return cell.values is not None and frozenset(map(str, typed["values"] or ())) == cell.values
    if cell.values is not None:  # a numeric hierarchy node: the numbers it covers
        covered = [float(v) for v in cell.values]
        return typed.get("lo") == min(covered) and typed.get("hi") == max(covered)
    return (typed.get("lo") == cell.lo and typed.get("hi") == cell.hi
            and bool(typed.get("hi_open")) == cell.open_hi)


def _column_texts(column: Any) -> tuple[list[str], tuple[list[str], np.ndarray] | None]:
    """A column's cells as text, and where the column comes as its distinct texts and each row's position among them
    (:class:`~verifier.data.csv_columns.CodedColumn`, which a release is written from) those, each made text once."""
    codes = getattr(column, "codes", None)
    if codes is None:
        return [str(t) for t in (column.cells() if hasattr(column, "cells") else column)], None
    texts = column.texts.to_pylist() if hasattr(column.texts, "to_pylist") else column.texts
    distinct = [str(t) for t in texts]
    return np.asarray(distinct, dtype=object)[codes].tolist(), (distinct, codes)


def _parsed_column(texts: list[str], attr: Attribute, h: Hierarchy | None, path: str,
                   coded: tuple[list[str], np.ndarray] | None = None) -> list[Cell]:
    """Every row's cell of a column without typed cells: each distinct text is read once, in the order texts
    first appear, so a bad one is named at its first row, as a row-by-row reading names it. ``coded``: the
    column's distinct texts and each row's position among them, where known (:func:`_column_texts`): each text
    held is read once without finding them again, and read in row order only where one is bad."""
    if coded is not None:
        distinct, positions = coded
        parsed = np.empty(len(distinct), dtype=object)
        try:
            for c in np.flatnonzero(np.bincount(positions, minlength=len(distinct))).tolist():
                parsed[c] = published_cell(distinct[c], attr, h)
        except InvalidInputError:
            pass  # read again in row order below, which names the first bad row
        else:
            return parsed[positions].tolist()
    codes, first = _text_codes(texts)
    distinct = []
    for row in first.tolist():
        try:
            distinct.append(published_cell(texts[row], attr, h))
        except InvalidInputError as exc:
            raise InvalidInputError(f"column {attr.name!r}, {format_rows([row + 1])}: {exc.message}", path=path,
                                    reason=exc.reason) from None
    return [distinct[c] for c in codes.tolist()]


def read_published(schema: Schema, header: Sequence[str], columns: Sequence[Any], *,
                   typed: Mapping[str, list[dict]] | None = None, hierarchies: Mapping[str, Any] | None = None,
                   path: str = "release") -> PublishedCells:
    """Parse the quasi-identifier and sensitive cells of a generalized release; a bad cell names column and row.
    A column is its cells, or a :class:`~verifier.data.csv_columns.CodedColumn` (the publisher's, before it writes
    them)."""
    where = {h: k for k, h in enumerate(header)}
    missing = [a.name for a in schema.attributes if a.name not in where]
    if missing:
        raise InvalidInputError(f"column {missing[0]!r} of the schema is not in the file", path=path,
                                reason="COLUMN_MISSING")
    read = {a.name: _column_texts(columns[where[a.name]]) for a in schema.attributes}
    text = {name: cells for name, (cells, _) in read.items()}
    cells: dict[str, list[Cell]] = {}
    for a in schema.attributes:
        if a.role not in ("quasi_identifier", "sensitive"):
            continue
        h = column_hierarchy(a, (hierarchies or {}).get(a.name))
        if not (typed and a.name in typed):
            cells[a.name] = _parsed_column(text[a.name], a, h, path, read[a.name][1])
            continue
        parsed = []
        seen: dict[str, Cell] = {}  # a census repeats its published cells: each text is read once
        for row, t in enumerate(text[a.name]):
            cell = seen.get(t)
            if cell is None:
                try:
                    cell = seen[t] = published_cell(t, a, h)
                except InvalidInputError as exc:
                    raise InvalidInputError(f"column {a.name!r}, {format_rows([row + 1])}: {exc.message}", path=path,
                                            reason=exc.reason) from None
            if typed and a.name in typed and not _typed_matches(cell, typed[a.name][row]):
                raise InvalidInputError(f"column {a.name!r}, {format_rows([row + 1])}: the typed cell does not "
                                        "cover what its text says", path=path, reason="CELL_INVALID")
            parsed.append(cell)
        cells[a.name] = parsed
    return PublishedCells(schema, text, cells)


def mask_probability(methods: Sequence[Any]) -> float:
    """The probability with which the chain masked each sensitive cell whatever its value (``sd_k_anonymity``'s
    ``mask_probability``), 0 where it masks none that way."""
    q = 0.0
    for step in methods:
        params = step.get("parameters") if isinstance(step, Mapping) else None
        if isinstance(step, Mapping) and step.get("method") == "sd_k_anonymity" and isinstance(params, Mapping):
            value = params.get("mask_probability")
            q = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    return q


def mask_problem(published: PublishedCells, methods: Sequence[Any]) -> str | None:
    """Why the data cannot be an ``sd_k_anonymity`` run's (a manifest that is ``MANIFEST_INCOHERENT`` with its data):
    a masked sensitive cell where the step signs no ``mask_probability``, which would have the verifier read the
    masks as a method's decision (1/N to each value) rather than as drawn at random (issue 58). None otherwise."""
    where = next((i for i, step in enumerate(methods) if isinstance(step, Mapping)
                  and step.get("method") == "sd_k_anonymity"), None)
    if where is None or mask_probability(methods) > 0.0:
        return None
    for a in published.sensitive:
        if a.kind != "numeric" and any(c.everything or c.values is None or len(c.values) != 1
                                       for c in published.distinct_cells(a.name)[0]):
            return (f"$.predicate.methods[{where}].parameters: an sd_k_anonymity step that signs no mask_probability "
                    f"publishes every sensitive value as it is, and '{literal(a.name)}' holds a masked cell")
    return None


def mask_weights(published: PublishedCells, name: str, methods: Sequence[Any] = ()) -> dict[str, float] | None:
    """What a cell masked whatever its value stands for (issue 58, item 4): each value's share of the table's
    people at the most, as the release proves it (its cells naming the value, and every masked cell, over the
    people). A mask drawn independently of the values tells the intruder who reruns the method nothing of the
    value behind it, so its expected share of a value is the population's, which this bounds. None where the
    chain masks no cell that way (a cell of N values then gives 1/N, the masks being the method's decision)."""
    if mask_probability(methods) <= 0.0:
        return None
    if name not in published.masks:
        cells = published.cells[name]
        masked = sum(1 for c in cells if c.values is None or len(c.values) != 1)
        shown: dict[str, int] = {}
        for c in cells:
            if c.values is not None and len(c.values) == 1:
                v = next(iter(c.values))
                shown[v] = shown.get(v, 0) + 1
        n = max(len(cells), 1)
        categories = published.schema[name].categories or sorted(shown)
        published.masks[name] = {v: min(1.0, (shown.get(v, 0) + masked) / n) for v in categories}
    return published.masks[name]


def cell_share(cell: Cell, value: str, weights: Mapping[str, float] | None = None) -> float:
    """The share of ``value`` a published cell gives: 1 where it names the value alone; where it covers N values,
    1/N, or under masks drawn whatever the value (``weights``, :func:`mask_weights`), the value's bound."""
    values = cell.values
    if not values or value not in values:
        return 0.0
    if len(values) == 1:
        return 1.0
    return weights.get(value, 0.0) if weights is not None else 1.0 / len(values)


def _shares(cells: Sequence[Cell], rows: np.ndarray, weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Summed share of each value over ``rows`` (:func:`cell_share`): a cell covering N values gives 1/N to each,
    or under masks drawn whatever the value, each value's bound."""
    acc: dict[str, float] = {}
    for t in rows:
        values = cells[t].values or frozenset()
        for v in values:
            acc[v] = acc.get(v, 0.0) + (1.0 / len(values) if weights is None or len(values) == 1 else weights.get(v, 0.0))
    return acc


def value_shares(published: PublishedCells, name: str) -> dict[str, float]:
    """Each value's share of the released records in column ``name``, a cell covering N values giving 1/N."""
    if name not in published.shares:
        n = published.n_records
        published.shares[name] = ({v: share / n for v, share in _shares(published.cells[name], range(n)).items()}
                                  if n else {})
    return published.shares[name]


def base_rate_bounds(published: PublishedCells, name: str, methods: Sequence[Any] = ()) -> dict[str, float]:
    """Each value's base rate in column ``name`` as the release proves it (SPEC section 16): the least share of the
    table's people that can hold it. A cell naming one value counts for it; a masked or generalized cell counts for
    none of its values, as it may hold any of them; a class's published counterfeits (``methods``) are taken from
    its rows of the value first, as they may carry it. Where no cell is masked and no record is counterfeit, it is
    the value's share among the released records. A masked cell never raises a base rate: the lower the rate, the
    larger her gain over it, so the bound is the one least favourable to her."""
    key = f"{name}\x00bound"
    if key not in published.shares:
        labels = published.class_labels()
        classes = int(labels.max()) + 1 if labels.size else 0
        fakes = class_counterfeits(published, labels, methods) if classes else np.zeros(0, np.int64)
        people = published.n_records - int(fakes.sum())
        cells, where = published.distinct_cells(name)
        named = [next(iter(c.values)) if c.values is not None and len(c.values) == 1 else None for c in cells]
        out: dict[str, float] = {}
        for value in sorted({v for v in named if v is not None}):
            held = np.array([v == value for v in named], dtype=bool)[where]
            per_class = np.bincount(labels[held], minlength=classes)
            out[value] = float(np.maximum(per_class - fakes, 0).sum()) / people if people > 0 else 0.0
        published.shares[key] = out
    return published.shares[key]


def leaf_confidence(published: PublishedCells, keys: Sequence[str], target: str) -> float:
    """The largest share of one ``target`` value within the groups of identical published ``keys`` columns.

    Shares are counted at the leaf level (a masked cell covering N values gives
    1/N to each), so a masked value protects as it should and ``*`` is no value
    of its own. With the quasi-identifiers as ``keys`` this is paper 002's
    alpha requirement (Def. 3); with the other sensitive attributes added, its
    Q&S diversity (Def. 5).
    """
    index: dict[tuple, int] = {}
    labels = np.array([index.setdefault(tuple(published.text[k][r].strip() for k in keys), len(index))
                       for r in range(published.n_records)], dtype=np.int64)
    top = 0.0
    for rows in (label_members(labels, len(index)) if index else []):  # each group's rows, ascending: one sort
        shares = _shares(published.cells[target], rows)
        top = max(top, min(1.0, max(shares.values(), default=0.0) / len(rows)))
    return top


def _one_value_each(published: PublishedCells, name: str) -> np.ndarray | None:
    """Each row's value of column ``name`` as a code, when every published cell of it names one value (a column
    published as it is); None when some cell covers several values or none."""
    cells, where = published.distinct_cells(name)
    if any(c.values is None or len(c.values) != 1 for c in cells):
        return None
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(next(iter(c.values)), len(codes)) for c in cells], dtype=np.int64)[where]


def _group_risk_of_values(labels: np.ndarray, sizes: np.ndarray, value: np.ndarray) -> tuple[float, float, int, int]:
    """:func:`_group_risk` where every cell names one value: the shares are counts, so each figure is the loop's
    float (the rows' own risks added in the loop's order: class by class, rows ascending)."""
    width = int(value.max()) + 1
    pairs, inverse, held = np.unique(labels * width + value, return_inverse=True, return_counts=True)
    first = np.flatnonzero(np.diff(pairs // width, prepend=-1))  # each class's first (class, value) pair
    top = float(np.minimum(1.0, np.maximum.reduceat(held, first) / sizes).max())
    mine = np.minimum(1.0, held[inverse.ravel()] / sizes[labels])
    own = float(np.cumsum(mine[np.argsort(labels, kind="stable")])[-1])
    return top, own, int(np.diff(np.append(first, pairs.size)).min()), int((mine >= CERTAIN).sum())


def _group_risk(cells: Sequence[Cell], members: list[np.ndarray], people: np.ndarray,
                weights: Mapping[str, float] | None = None) -> tuple[float, float, int, int]:
    """One sensitive column's group risks: the largest share of one value in a class, the rows' own risks added,
    the fewest distinct values of a class, and the rows certain of theirs (shares of a class's ``people``;
    ``weights``: what a cell masked whatever its value stands for)."""
    top, own, distinct, certain = 0.0, 0.0, None, 0
    for rows, size in zip(members, people.tolist()):
        shares = _shares(cells, rows, weights)
        top = max(top, min(1.0, max(shares.values(), default=0.0) / size))
        distinct = len(shares) if distinct is None else min(distinct, len(shares))
        for t in rows:
            values = cells[t].values or frozenset()
            mine = min(1.0, sum(shares[v] for v in values) / len(values) / size) if values else 0.0
            own += mine
            certain += mine >= CERTAIN
    return top, own, distinct or 0, certain


def _masked_group_risk(published: PublishedCells, masks: Any, name: str) -> tuple[float, float, int, int]:
    """:func:`_group_risk` under a two-step release's masks' model: each class's posterior share of each value,
    a row's own risk the mean of its cell's values' shares (rows added in row order)."""
    labels = published.class_labels()
    cells = published.cells[name]
    values = sorted({v for c in published.distinct_cells(name)[0] for v in (c.values or ())})
    shares = {v: masks.class_shares(name, v) for v in values}
    classes = int(labels.max()) + 1 if labels.size else 0
    top = max((float(shares[v].max()) for v in values if classes), default=0.0)
    held = np.zeros(classes, dtype=np.int64)
    for v in values:
        held += shares[v] > 0
    own, certain = 0.0, 0
    for r, c in enumerate(labels.tolist()):
        covered = cells[r].values or frozenset()
        mine = min(1.0, sum(float(shares[v][c]) for v in sorted(covered)) / len(covered)) if covered else 0.0
        own += mine
        certain += mine >= CERTAIN
    return top, own, int(held.min()) if classes else 0, certain


def group_claims(published: PublishedCells, counterfeits: np.ndarray | None = None,
                 methods: Sequence[Any] = (), masks: Any = None) -> dict[str, Any]:
    """``k``, ``classes`` and per sensitive attribute the group risk ``max``, ``mean`` and ``distinct_l``.
    ``counterfeits``: each class's counterfeit records (:mod:`verifier.attacks.counterfeits`), which ``k`` does not
    count; a value's share of a class is of its people, as the counterfeits may all carry other values (the
    intruder who reruns the method may tell which do; issue 58). ``methods``: the chain, whose masks drawn
    whatever the value stand for each value's bound (:func:`mask_weights`). ``masks``: a two-step release's
    :class:`~verifier.attacks.mask_model.MaskModel`, whose posterior shares the risks are then of."""
    labels = published.class_labels()
    n = published.n_records
    sizes = np.bincount(labels) if n else np.zeros(0, dtype=np.int64)
    people = sizes if counterfeits is None else sizes - counterfeits
    members = None
    risks: dict[str, Any] = {}
    for s in published.sensitive:
        value = _one_value_each(published, s.name) if n else None
        if masks is not None and n:
            top, own, distinct, certain = _masked_group_risk(published, masks, s.name)
        elif value is not None:
            top, own, distinct, certain = _group_risk_of_values(labels, np.maximum(people, 1), value)
        else:
            if members is None:  # each class's rows, ascending
                members = label_members(labels, sizes.size) if n else []
            top, own, distinct, certain = _group_risk(published.cells[s.name], members, np.maximum(people, 1),
                                                      mask_weights(published, s.name, methods))
        risks[s.name] = {"mode": "group", "max": top, "mean": own / n if n else 0.0, "distinct_l": distinct,
                         "certain_share": certain / n if n else 0.0}
    return {"n_records": n, "k": int(people.min()) if people.size else 0, "classes": int(sizes.size),
            "attribute_disclosure": risks}


def her_value(attr: Attribute, key: float) -> str | float:
    """A subject's value of ``attr`` from its rank key: the number, or the category's text."""
    if attr.kind == "numeric":
        return float(key)
    return (attr.categories or ())[int(key)]


def _guess(shares: Mapping[str, float]) -> str | None:
    """The attacker's best guess: the value of the largest share, the last in text order among equals."""
    return max(shares, key=lambda v: (shares[v], v)) if shares else None


def subject_class(published: PublishedCells, record: np.ndarray, methods: Sequence[Any] = (),
                  masks: Any = None) -> dict[str, Any]:
    """Her class: the released rows whose every published quasi-identifier contains hers (``record``: rank keys).

    Returns ``class_size``, the candidate rows (numbered from 1), the
    published ``classes`` among them and the fewest people of one
    (``smallest_class``, counterfeits that ``methods`` publish apart:
    :mod:`verifier.attacks.possible_classes`; ``possible``, those classes),
    and per sensitive attribute:

    - ``risk``: the largest share of her value in one class she could be in,
      what the maximum-knowledge intruder, who can rebuild which class is
      hers, learns at worst (``bound`` says ``own_class`` where her
      candidates are one class, so the figure is exact, else ``worst_class``);
      ``best_guess`` his guess in that class, ``worst_class_rows`` its rows;
    - ``candidate_set``: the share of her value among all her candidates
      (``risk``) and the guess of an intruder who knows only her
      quasi-identifiers (``best_guess``);
    - ``candidates``, her candidate rows, and ``prior``, her value's share of
      every released record.

    ``masks``: a two-step release's :class:`~verifier.attacks.mask_model.MaskModel`, whose posterior share of
    her value in each class replaces the cells' shares, and whose signed marginal gives her base rate.
    """
    names = published.schema.names
    inside = np.ones(published.n_records, dtype=bool)
    for a in published.quasi_identifiers:
        mine = her_value(a, record[names.index(a.name)])
        distinct, where = published.distinct_cells(a.name)
        inside &= np.fromiter((c.contains(mine) for c in distinct), dtype=bool, count=len(distinct))[where]
    rows = np.flatnonzero(inside)
    possible = possible_classes(published, rows, methods)
    out: dict[str, Any] = {"class_size": int(rows.size), "rows": (rows + 1).tolist(), "classes": possible.count,
                           "smallest_class": possible.smallest, "possible": possible, "attribute_disclosure": {}}
    for s in published.sensitive:
        mine = str(her_value(s, record[names.index(s.name)]))
        if masks is not None:
            out["attribute_disclosure"][s.name] = _masked_class(published, possible, rows, masks, s.name, mine,
                                                                methods)
            continue
        weights = mask_weights(published, s.name, methods)
        shares = _shares(published.cells[s.name], rows, weights)
        distinct, where = published.distinct_cells(s.name)
        row_share = np.array([cell_share(c, mine, weights) for c in distinct],
                             dtype=np.float64)[where] if distinct else np.zeros(0)
        worst, which = possible.worst_share(row_share)
        members = possible.candidates[possible.label == which] if which is not None else rows[:0]
        out["attribute_disclosure"][s.name] = {
            "mode": "group", "risk": worst, "candidates": int(rows.size),
            "best_guess": None if which is None else _guess(_shares(published.cells[s.name], members, weights)),
            "bound": "own_class" if possible.count <= 1 else "worst_class", "classes": possible.count,
            "worst_class_rows": int(members.size),
            "candidate_set": {"risk": shares.get(mine, 0.0) / rows.size if rows.size else 0.0,
                              "best_guess": _guess(shares)},
            # her value's base rate: the least share of the table's people the release shows holding it
            "prior": base_rate_bounds(published, s.name, methods).get(mine, 0.0),
        }
    return out


def _masked_class(published: PublishedCells, possible: Any, rows: np.ndarray, masks: Any, name: str, mine: str,
                  methods: Sequence[Any]) -> dict[str, Any]:
    """:func:`subject_class`'s figures of one sensitive attribute under a two-step release's masks' model."""
    labels = published.class_labels()
    classes = possible.rows if possible.count else []
    shares = [masks.share(name, mine, int(labels[m[0]])) for m in classes]  # her classes' only
    which, worst = None, 0.0
    for c, share in enumerate(shares):  # the first of the largest
        if which is None or share > worst:
            which, worst = c, share
    members = classes[which] if which is not None else rows[:0]
    held = sum(share * int(m.size) for share, m in zip(shares, classes))
    prior = masks.prior(name, mine)
    guess = None if which is None else masks.guess(name, int(labels[members[0]]))
    return {
        "mode": "group", "risk": worst, "candidates": int(rows.size), "best_guess": guess,
        "bound": "own_class" if possible.count <= 1 else "worst_class", "classes": possible.count,
        "worst_class_rows": int(members.size), "masks": "exact" if masks.exact else "covered",
        "candidate_set": {"risk": min(1.0, held / rows.size) if rows.size else 0.0, "best_guess": guess},
        "prior": prior if prior is not None else base_rate_bounds(published, name, methods).get(mine, 0.0),
    }
