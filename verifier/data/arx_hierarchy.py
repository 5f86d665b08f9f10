"""ARX's generalization hierarchies, read as ARX writes them (docs/release-format.md, "Releases made with other tools").

An ARX hierarchy is a CSV file separated by semicolons, one row per value
of the column: the value, then its generalization at each level from the
lowest to the root (``49;45-49;40-49;40-59;*``). The tree it describes is
the release's reading of the tool's labels: a published ``40-59`` stands for
every value whose row passes through it. It becomes a categorical tree of
``hierarchies.json`` (:mod:`verifier.attacks.hierarchy`), which the verifier,
the page and the TUI already read; the file itself is published as it is, in
the external step's parameters (Kerckhoffs' principle).

A row that repeats its value at the next level (``Male;Male;*``: not
generalized there) is one node; a label under two parents, rows of
different lengths or roots, an empty label, or a value listed twice are
refused (``HIERARCHY_INVALID``) naming the file and the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier.errors import InvalidInputError
from verifier.text import literal

__all__ = ["ArxHierarchy", "read_arx_hierarchy"]

#: the largest hierarchy file read (ARX's own Adult hierarchies are a few kilobytes)
MAX_HIERARCHY_BYTES = 4 << 20


@dataclass(frozen=True)
class ArxHierarchy:
    """One column's ARX hierarchy: its rows as read, and each label's parent and leaves."""

    column: str
    name: str
    rows: tuple[tuple[str, ...], ...]
    parent: dict[str, str]
    leaves: dict[str, tuple[str, ...]]

    @property
    def root(self) -> str:
        return self.rows[0][-1]

    def tree(self) -> dict[str, Any]:
        """The categorical tree of ``hierarchies.json``: ``{"type": "categorical", "tree": {root: [...]}}``."""
        children: dict[str, list[str]] = {}
        for label, parent in self.parent.items():
            children.setdefault(parent, []).append(label)

        def node(label: str) -> Any:
            kids = children.get(label)
            return label if not kids else {label: [node(k) for k in kids]}

        return {"type": "categorical", "tree": {self.root: [node(k) for k in children.get(self.root, [])]}}


def _invalid(name: str, row: int | None, message: str) -> InvalidInputError:
    where = f"row {row}: " if row is not None else ""
    return InvalidInputError(f"{where}{message}", path=name, reason="HIERARCHY_INVALID")


def read_arx_hierarchy(column: str, name: str, raw: bytes) -> ArxHierarchy:
    """Read the ARX hierarchy file ``name`` (its bytes ``raw``) of ``column``."""
    if len(raw) > MAX_HIERARCHY_BYTES:
        raise _invalid(name, None, f"holds {len(raw)} bytes, more than the {MAX_HIERARCHY_BYTES >> 20} MiB a "
                       "hierarchy may have")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _invalid(name, None, f"is not UTF-8 text (byte {exc.start})") from None
    rows: list[tuple[str, ...]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cells = tuple(c.strip() for c in line.split(";"))
        if any(not c for c in cells):
            raise _invalid(name, number, "a label is empty; every level of a row names its generalization")
        if rows and len(cells) != len(rows[0]):
            raise _invalid(name, number, f"has {len(cells)} levels and the first row {len(rows[0])}; every value "
                           "climbs the same levels")
        if rows and cells[-1] != rows[0][-1]:
            raise _invalid(name, number, f"ends in {literal(cells[-1])!r} and the first row in "
                           f"{literal(rows[0][-1])!r}; a hierarchy has one root")
        rows.append(cells)
    if not rows:
        raise _invalid(name, None, "holds no rows")
    parent: dict[str, str] = {}
    leaves: dict[str, list[str]] = {}
    seen_values: set[str] = set()
    for number, cells in enumerate(rows, start=1):
        if cells[0] in seen_values:
            raise _invalid(name, number, f"lists the value {literal(cells[0])!r} a second time")
        seen_values.add(cells[0])
        path = [c for i, c in enumerate(cells) if i == 0 or c != cells[i - 1]]  # a repeated level is one node
        for child, up in zip(path, path[1:]):
            if parent.setdefault(child, up) != up:
                raise _invalid(name, number, f"puts {literal(child)!r} under {literal(up)!r}, and an earlier row "
                               f"under {literal(parent[child])!r}; each label has one parent")
        for label in path:
            leaves.setdefault(label, []).append(cells[0])
    roots = {cells[-1] for cells in rows}
    if roots & set(parent):
        raise _invalid(name, None, "its root is also a label below the root")
    return ArxHierarchy(column=column, name=name, rows=tuple(rows), parent=parent,
                        leaves={k: tuple(v) for k, v in leaves.items()})
