"""A release's masked classes read as the method masked them (issue 58; :mod:`verifier.attacks.mask_class`).

:func:`mask_model` reads a release of ``multi_sensitive_generalization``: its step one (``step_one``, signed), its
alpha_sa, its hierarchies and the marginal of each sensitive attribute it signs. With all of them, each class's
posterior share of each value is exact (:func:`verifier.attacks.mask_class.class_posterior`), under the publisher's
trees rebuilt over the values the marginal counts, as the publisher built them over the table's. Without them
(a release signed before step one read the quasi-identifiers alone, or without its marginal) every cell that covers
a value counts for it, the bound no posterior passes.

SD k-anonymity with ``mask_probability`` masks each cell whatever its value: where it signs the marginal, each
class's posterior is exact too, its masked cells holding each value at its signed share (without one, the
masks' bound of :func:`verifier.attacks.classes.mask_weights` stands). Every other release has no such model
(None).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from verifier.attacks.classes import mask_probability
from verifier.attacks.hierarchy import Hierarchy, build_hierarchy
from verifier.attacks.mask_class import ClassPosterior, class_posterior, covered
from verifier.errors import InvalidInputError

__all__ = ["MaskModel", "mask_model"]

METHOD = "multi_sensitive_generalization"


@dataclass(eq=False)
class MaskModel:
    """Each published class's posterior of each sensitive value, found once per distinct class."""

    published: Any
    """The release's :class:`~verifier.attacks.classes.PublishedCells`."""
    sens: list[Hierarchy] | None
    """The publisher's trees of the sensitive attributes, None where the posterior is the bound."""
    alpha: float
    marginals: list[dict[str, int]] | None
    random: bool = False
    """Masks drawn whatever the value (SD k-anonymity's ``mask_probability``): a masked cell holds each value at
    the population's share, so the class's posterior count of v is its cells naming v plus its masked cells times
    v's signed share."""
    _shown: list[Counter] = field(default_factory=list, repr=False)
    _found: dict[tuple, ClassPosterior] = field(default_factory=dict, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)
    """MaskClass's answers on completions, shared by the classes (one set of trees, one alpha)."""
    _shares: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, repr=False)
    _trees: list = field(default_factory=list, repr=False)

    @property
    def exact(self) -> bool:
        return self.sens is not None or self.random

    def shown(self) -> list[Counter]:
        """Each class's published sensitive tuples and how many rows hold each (found once)."""
        if not self._shown:
            labels = self.published.class_labels()
            texts = [self.published.text[a.name] for a in self.published.sensitive]
            self._shown.extend(Counter() for _ in range(int(labels.max()) + 1 if labels.size else 0))
            for r, c in enumerate(labels.tolist()):
                self._shown[c][tuple(t[r].strip() for t in texts)] += 1
        return self._shown

    def posterior(self, label: int) -> ClassPosterior:
        """Class ``label``'s posterior, found once per distinct published class."""
        shown = self.shown()[label]
        key = tuple(sorted(shown.items()))
        if key not in self._found:
            self._found[key] = self._posterior(shown)
        return self._found[key]

    def share(self, name: str, value: str, label: int) -> float:
        """Class ``label``'s posterior share of ``value`` in sensitive column ``name``."""
        i = [a.name for a in self.published.sensitive].index(name)
        return self.posterior(label).share(i, value, sum(self.shown()[label].values()))

    def _posterior(self, shown: Counter) -> ClassPosterior:
        if self.random:
            return self._drawn(shown)
        if self.sens is None:
            return covered(shown, self._leaf_trees())
        if any(node not in h.order for t in shown for h, node in zip(self.sens, t)):
            return covered(shown, self._leaf_trees())  # a cell the publisher's trees do not hold
        return class_posterior(shown, self.sens, self.alpha, self.marginals, memo=self._memo)

    def _drawn(self, shown: Counter) -> ClassPosterior:
        """Masks drawn whatever the value: each value's count, over the people N the marginals count, is its cells
        naming it times N plus the masked cells times its signed count (the oracle's (s + m pi(v)) / g)."""
        trees = self._leaf_trees()
        people = sum(self.marginals[0].values())
        counts: list[dict[str, int]] = [{} for _ in trees]
        for t, n in shown.items():
            for i, (h, node) in enumerate(zip(trees, t)):
                leaves = h.leaves(node)
                for v in leaves:
                    add = n * people if len(leaves) == 1 else n * self.marginals[i].get(v, 0)
                    counts[i][v] = counts[i].get(v, 0) + add
        return ClassPosterior(counts, people, "exact")

    def _leaf_trees(self) -> list[Hierarchy]:
        """Trees whose nodes cover what the published cells cover (the bound reads no tie order); read once, as
        each class read every row of its column."""
        if not self._trees:
            self._trees.extend(_CellTree(self.published, a.name) for a in self.published.sensitive)
        return self._trees

    def class_shares(self, name: str, value: str) -> np.ndarray:
        """Each class's posterior share of ``value`` in sensitive column ``name`` (classes by their label)."""
        if (name, value) not in self._shares:
            self._shares[(name, value)] = np.array([self.share(name, value, c) for c in range(len(self.shown()))],
                                                   dtype=np.float64)
        return self._shares[(name, value)]

    def guess(self, name: str, label: int) -> str | None:
        """The intruder's best guess in class ``label``: the value of the largest posterior count, the last in text
        order among equals."""
        i = [a.name for a in self.published.sensitive].index(name)
        counts = self.posterior(label).counts[i]
        return max(counts, key=lambda v: (counts[v], v)) if counts else None

    def prior(self, name: str, value: str) -> float | None:
        """Her value's share of the people by the signed marginal, where the model reads one."""
        if self.marginals is None:
            return None
        i = [a.name for a in self.published.sensitive].index(name)
        total = sum(self.marginals[i].values())
        return self.marginals[i].get(value, 0) / total if total else 0.0


class _CellTree:
    """What a published cell of a column covers, as a tree's ``leaves`` (the only thing :func:`covered` reads)."""

    def __init__(self, published: Any, name: str):
        self.published, self.name = published, name
        self.cells = {t.strip(): c for t, c in zip(published.text[name], published.cells[name])}

    def leaves(self, node: str) -> tuple[str, ...]:
        cell = self.cells.get(node)
        return tuple(sorted(cell.values)) if cell is not None and cell.values is not None else (node,)


def _marginals(claims: Mapping[str, Any], names: Sequence[str]) -> list[dict[str, int]] | None:
    """Each sensitive attribute's signed counts, or None where one is not signed."""
    out = []
    for name in names:
        entry = ((claims or {}).get("attribute_disclosure") or {}).get(name) or {}
        marginal = entry.get("marginal") if isinstance(entry, Mapping) else None
        if not isinstance(marginal, Mapping):
            return None
        out.append({str(v): int(n) for v, n in marginal.items()})
    return out


def mask_model(published: Any, methods: Sequence[Any], claims: Mapping[str, Any] | None,
               hierarchies: Mapping[str, Any] | None) -> MaskModel | None:
    """The masks' model of a release's cells (the module's rules), None for a release without one; found once per
    published cells and what it reads (the publisher's claims and every record's level share it)."""
    names = [a.name for a in published.sensitive]
    key = ("model", json.dumps([methods, _marginals(claims or {}, names), hierarchies], sort_keys=True, default=str))
    if key not in published.masks:
        published.masks[key] = _mask_model(published, methods, claims, hierarchies)
    return published.masks[key]


def _mask_model(published: Any, methods: Sequence[Any], claims: Mapping[str, Any] | None,
                hierarchies: Mapping[str, Any] | None) -> MaskModel | None:
    step = next((s for s in methods or () if isinstance(s, Mapping) and s.get("method") == METHOD), None)
    if step is None and published.sensitive and mask_probability(methods or ()) > 0:
        marginals = _marginals(claims or {}, [a.name for a in published.sensitive])
        if marginals is None or not sum(marginals[0].values()):  # no signed prior: the masks' bound (mask_weights)
            return None
        return MaskModel(published, None, 1.0, marginals, random=True)
    if step is None or not published.sensitive:
        return None
    params = step.get("parameters") or {}
    alpha = params.get("alpha_sa")
    names = [a.name for a in published.sensitive]
    marginals = _marginals(claims or {}, names)
    sens = None
    if (params.get("step_one") == "quasi_identifiers" and marginals is not None and isinstance(alpha, (int, float))
            and not isinstance(alpha, bool)):
        try:
            sens = [build_hierarchy((hierarchies or {}).get(n), [v for v, c in m.items() if c > 0], False)
                    for n, m in zip(names, marginals)]
        except InvalidInputError:
            sens = None  # trees the publisher could not have built over these values: the bound
    return MaskModel(published, sens, float(alpha) if sens is not None else 1.0, marginals if sens else None)
