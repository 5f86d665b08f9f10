"""The published classes a subject could belong to, and the worst of them for her (issue 50, item 1).

Her *candidates* are the released rows whose every published quasi-identifier
cell contains her value (:func:`verifier.attacks.classes.subject_class`). An
intruder who knows only her quasi-identifiers cannot tell them apart, and her
candidate-set figures (her value's share among them) are his.

The project's intruder knows more: every subject's quasi-identifiers and, by
Kerckhoffs' principle, the published method and its parameters. Where the
method is deterministic given those (SD k-anonymity, m-invariance's groups,
an ARX recoding), he reruns it and reads which published class is hers. Where
cells overlap (local recoding) her candidates fall in several classes, and
she cannot rerun the method without everyone's records, so her sound figure is
the worst class she could be in: the fewest people of any of them, and per
sensitive attribute the largest share of her value in one of them. Her true
class is one of them, so its figures are never worse than these
(docs/subject.md, "Her figures against the maximum-knowledge intruder").

Counterfeit records (m-invariance) are counted as the method's model counts
them: a class's people are its rows less its published counterfeits, and the
shares of sensitive values count every row, as a counterfeit looks like a
real record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from verifier.attacks.counterfeits import counterfeit_entries

__all__ = ["PossibleClasses", "possible_classes"]


@dataclass(frozen=True)
class PossibleClasses:
    """The published classes among her candidates: each one's rows and people, and her worst figures."""

    rows: list[np.ndarray]
    """Each possible class's released rows (indices from 0, ascending), classes as they first appear."""
    people: np.ndarray
    """Each possible class's people: its rows less its published counterfeits."""

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def smallest(self) -> int:
        """The fewest people of a class she could be in (0 when none is)."""
        return int(self.people.min()) if self.people.size else 0

    def worst_share(self, row_share: np.ndarray) -> tuple[float, int | None]:
        """The largest share of her value in one possible class, and that class (the first of the largest);
        ``row_share`` is each released row's share of her value (1/N for a cell of N values holding it). Each
        class's shares are added in row order, as her candidates' are (``np.bincount`` adds in input order)."""
        if not self.rows:
            return 0.0, None
        sizes = np.array([m.size for m in self.rows], dtype=np.int64)
        label = np.concatenate([np.full(m.size, c, dtype=np.int64) for c, m in enumerate(self.rows)])
        where = np.concatenate(self.rows)
        order = np.argsort(where, kind="stable")  # every candidate in row order, with its class
        sums = np.bincount(label[order], weights=row_share[where[order]], minlength=sizes.size)
        risk = np.minimum(1.0, sums / sizes)
        which = int(np.argmax(risk))
        return float(risk[which]), which


def possible_classes(published: Any, rows: np.ndarray, methods: Sequence[Any]) -> PossibleClasses:
    """The published classes (rows with identical quasi-identifier cells) among her candidate ``rows`` (indices
    from 0, ascending), with each one's people less the counterfeits ``methods`` publish for it."""
    rows = np.asarray(rows, dtype=np.int64)
    labels = published.class_labels()[rows]
    _, first, local = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # classes as they first appear among her candidates
    local = np.argsort(order)[local.ravel()]
    members = [rows[local == c] for c in range(order.size)]
    sizes = np.array([m.size for m in members], dtype=np.int64)
    names = [a.name for a in published.quasi_identifiers]
    entries = counterfeit_entries(methods, names)
    fakes = np.array([entries.get(tuple(published.text[n][int(m[0])].strip() for n in names), 0) if entries else 0
                      for m in members], dtype=np.int64)
    return PossibleClasses(members, sizes - fakes)
