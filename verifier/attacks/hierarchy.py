"""Generalization hierarchies (spec/methods.md section 2.3): the public trees that generalized values come from.

A hierarchy file is JSON, mapping a column to a categorical tree or to numeric
cut levels::

    {"Workclass": {"type": "categorical", "tree": {"*": ["Private",
         {"Self-employed": ["Self-emp-not-inc", "Self-emp-inc"]}]}},
     "Age": {"type": "numeric", "bounds": [20, 60], "cuts": [[40], [30, 50]]}}

A column without one gets the fallback: a root ``*`` over all values, or an
equal-frequency binary split of the distinct numeric values. The publisher
builds releases along these trees, and the verifier reads generalized values
(``[20,40)``, ``Government``) back through them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from verifier.data.tables import number_label
from verifier.errors import InvalidInputError

__all__ = ["Hierarchy", "build_hierarchy", "number_label"]


def _invalid(message: str, reason: str = "HIERARCHY_INVALID") -> InvalidInputError:
    return InvalidInputError(message, reason=reason)


@dataclass
class Hierarchy:
    """A generalization tree: node labels, parents, children in listed order, leaves in pre-order."""

    root: str
    children: dict[str, list[str]] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)  # pre-order position
    leaf_of: dict[Any, str] = field(default_factory=dict)  # raw value -> leaf label
    _leaves: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def add(self, label: str, parent: str | None) -> None:
        if label in self.order:
            raise _invalid(f"hierarchy labels must be unique; {label!r} appears twice", "HIERARCHY_INVALID")
        self._leaves.clear()
        self.order[label] = len(self.order)
        self.children.setdefault(label, [])
        if parent is not None:
            self.parent[label] = parent
            self.children[parent].append(label)

    def leaves(self, label: str) -> tuple[str, ...]:
        """The leaves under ``label`` in pre-order (remembered until the tree changes)."""
        found = self._leaves.get(label)
        if found is None:
            kids = self.children.get(label, [])
            found = (label,) if not kids else tuple(leaf for k in kids for leaf in self.leaves(k))
            self._leaves[label] = found
        return found

    def leaf_count(self, label: str) -> int:
        return len(self.leaves(label))

    def covers(self, node: str, label: str) -> bool:
        """Whether ``label`` lies in the subtree of ``node``."""
        while True:
            if label == node:
                return True
            if label not in self.parent:
                return False
            label = self.parent[label]

    def info_loss(self, label: str) -> float:
        """Eq. 1: ``(leaves(v) - 1) / leaves(root)``; 0 for a leaf."""
        return (self.leaf_count(label) - 1) / self.leaf_count(self.root)


def _categorical(tree: Mapping[str, Any], values: Sequence[Any], on_unknown: str) -> Hierarchy:
    (root, kids), = tree.items()
    h = Hierarchy(root=str(root))
    h.add(str(root), None)

    def walk(node: Any, parent: str) -> None:
        if isinstance(node, str):
            h.add(node, parent)
        elif isinstance(node, dict) and len(node) == 1:
            (label, sub), = node.items()
            h.add(str(label), parent)
            for child in sub:
                walk(child, str(label))
        else:
            raise _invalid(f"a hierarchy node is a leaf string or {{label: [children]}}; got {node!r}", "HIERARCHY_INVALID")

    for child in kids:
        walk(child, h.root)
    leaves = set(h.leaves(h.root))
    for v in sorted(set(map(str, values))):
        if v not in leaves:
            if on_unknown != "attach_root":
                raise _invalid(f"value {v!r} is not a leaf of its hierarchy", "HIERARCHY_INVALID")
            h.add(v, h.root)
        h.leaf_of[v] = v
    return h


def _numeric_cuts(values: np.ndarray, bounds: Sequence[float] | None, cuts: Sequence[Sequence[float]]) -> Hierarchy:
    lo, hi = (float(bounds[0]), float(bounds[1])) if bounds else (float(values.min()), float(values.max()))
    closed = not bounds

    def label(a: float, b: float) -> str:
        return f"[{number_label(a)},{number_label(b)}]" if closed and b == hi else f"[{number_label(a)},{number_label(b)})"

    def inside(v: float, a: float, b: float) -> bool:
        return a <= v < b or (closed and b == hi and v == hi)

    h = Hierarchy(root=label(lo, hi))
    h.add(h.root, None)
    level = [(lo, hi, h.root)]
    points: list[float] = []
    for cut in cuts:
        points = sorted(set(points) | {float(c) for c in cut if lo < float(c) < hi})
        edges = [lo, *points, hi]
        nxt = []
        for a, b in zip(edges, edges[1:]):
            if not any(inside(v, a, b) for v in values):
                continue  # empty intervals are dropped
            parent = next(p for (pa, pb, p) in level if pa <= a and b <= pb)
            lab = label(a, b)
            if lab != parent:
                h.add(lab, parent)
            nxt.append((a, b, lab))
        level = nxt
    for v in sorted(set(values.tolist())):
        parent = next(p for (a, b, p) in level if inside(v, a, b))
        h.add(number_label(v), parent)
        h.leaf_of[number_label(v)] = number_label(v)
    return h


def _numeric_fallback(values: np.ndarray) -> Hierarchy:
    """Equal-frequency recursive binary split (MSA-4); labels ``[v_a,v_b]``, leaves the distinct values."""
    distinct, counts = np.unique(values, return_counts=True)

    def name(a: int, b: int) -> str:
        return number_label(distinct[a]) if a == b else f"[{number_label(distinct[a])},{number_label(distinct[b])}]"

    h = Hierarchy(root=name(0, len(distinct) - 1))
    h.add(h.root, None)

    def split(a: int, b: int, label: str) -> None:
        if a == b:
            h.leaf_of[number_label(distinct[a])] = label
            return
        best, where = None, a
        for s in range(a, b):
            gap = abs(int(counts[a : s + 1].sum()) - int(counts[s + 1 : b + 1].sum()))
            if best is None or gap < best:
                best, where = gap, s
        for lo, hi in ((a, where), (where + 1, b)):
            child = name(lo, hi)
            h.add(child, label)
            split(lo, hi, child)

    split(0, len(distinct) - 1, h.root)
    return h


def build_hierarchy(spec: Mapping[str, Any] | None, values: Sequence[Any], numeric: bool, *,
                    on_unknown: str = "error") -> Hierarchy:
    """A column's hierarchy from its spec (section 2.3), or the fallback."""
    if numeric:
        arr = np.asarray(values, dtype=float)
        if spec is None:
            return _numeric_fallback(arr)
        if spec.get("type") != "numeric":
            raise _invalid("a numeric column needs a hierarchy of type numeric", "HIERARCHY_INVALID")
        return _numeric_cuts(arr, spec.get("bounds"), spec.get("cuts", []))
    if spec is None:
        observed = sorted(set(map(str, values)))
        return _categorical({"*": observed}, observed, "error")
    if spec.get("type") != "categorical":
        raise _invalid("a categorical column needs a hierarchy of type categorical", "HIERARCHY_INVALID")
    return _categorical(spec["tree"], values, on_unknown)
