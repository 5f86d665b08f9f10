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
from verifier.data.tuple_codes import label_members

__all__ = ["PossibleClasses", "possible_classes"]


@dataclass(frozen=True)
class PossibleClasses:
    """The published classes among her candidates: each one's rows and people, and her worst figures."""

    candidates: np.ndarray
    """Her candidate rows (indices from 0, ascending)."""
    label: np.ndarray
    """Each candidate's class among them, numbered as the classes first appear."""
    people: np.ndarray
    """Each possible class's people: its rows less its published counterfeits."""

    @property
    def count(self) -> int:
        return int(self.people.size)

    @property
    def rows(self) -> list[np.ndarray]:
        """Each possible class's released rows (indices from 0, ascending), classes as they first appear."""
        return [self.candidates[at] for at in label_members(self.label, self.count)]

    @property
    def smallest(self) -> int:
        """The fewest people of a class she could be in (0 when none is)."""
        return int(self.people.min()) if self.people.size else 0

    def worst_share(self, row_share: np.ndarray) -> tuple[float, int | None]:
        """The largest share of her value in one possible class, and that class (the first of the largest);
        ``row_share`` is each released row's share of her value (1/N for a cell of N values holding it). Each
        class's shares are added in row order, as her candidates' are (``np.bincount`` adds in input order), and
        divided by its people: its counterfeits may all carry other values (issue 58), so her value's records may
        all be people's."""
        return self.worst_share_at(row_share[self.candidates])

    def worst_share_at(self, candidate_share: np.ndarray) -> tuple[float, int | None]:
        """:meth:`worst_share` from each candidate's share of her value alone (in the order of ``candidates``)."""
        if not self.count:
            return 0.0, None
        sums = np.bincount(self.label, weights=candidate_share, minlength=self.count)
        risk = np.minimum(1.0, sums / np.maximum(self.people, 1))  # counterfeits may all carry other values
        which = int(np.argmax(risk))
        return float(risk[which]), which


def possible_classes(published: Any, rows: np.ndarray, methods: Sequence[Any]) -> PossibleClasses:
    """The published classes (rows with identical quasi-identifier cells) among her candidate ``rows`` (indices
    from 0, ascending), with each one's people less the counterfeits ``methods`` publish for it."""
    rows = np.asarray(rows, dtype=np.int64)
    _, first, local = np.unique(published.class_labels()[rows], return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # classes as they first appear among her candidates
    label = np.argsort(order)[local.ravel()]
    sizes = np.bincount(label, minlength=order.size)
    names = [a.name for a in published.quasi_identifiers]
    entries = counterfeit_entries(methods, names)
    fakes = np.array([entries.get(tuple(published.text[n][int(rows[r])].strip() for n in names), 0) if entries else 0
                      for r in first[order].tolist()], dtype=np.int64)
    return PossibleClasses(rows, label, sizes - fakes)
