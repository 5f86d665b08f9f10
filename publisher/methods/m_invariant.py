"""m-invariant generalization (Xiao and Tao, SIGMOD 2007): a release, or a re-publication of people released
before, in groups of m distinct sensitive values that keep each returning person's signature (issue 40).

:mod:`publisher.methods.m_invariance` forms the groups; this step generalizes each group's quasi-identifiers to
its extent, as SD k-anonymity recodes a class (``[min,max]``, ``{a,b}``, a plain value where the group agrees),
adds the counterfeit records, which carry their group's cells and a sensitive value of its signature, and lists
the counterfeit count of every group that holds some in its published parameters, as the method requires: the
signed manifest carries them, and :mod:`verifier.attacks.counterfeits` reads them.

Each person's earlier signature comes from ``publisher release --previous DIR --link-column COL``
(:func:`publisher.earlier_releases.earlier_signatures`); without earlier releases every record is new and the
release is m-unique, the first of an m-invariant sequence. The step publishes the quasi-identifiers and one
sensitive attribute: a counterfeit has no value for any other column, so a schema with one is refused.
The order the groups are formed in is the secret seed's: a uniform shuffle of the people, never their
quasi-identifiers' order (issue 58). Rerun on every table the release allows, a grouping that followed the
quasi-identifiers would tell the intruder which record of a group holds which value; one that follows a uniform
shuffle gives every assignment of a group's values to its members the same chance, so her group's share is all
the release tells (the exact oracle, :mod:`publisher.exact_oracle`, holds the verdict to it). The price is
wider groups: members are not chosen for being close.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from publisher.methods.base import Method, MethodResult, fail, parse_int
from publisher.methods.m_invariance import Group, m_invariant_groups
from publisher.methods.m_invariant_rounds import KERNELS
from publisher.methods.sd_anonymity import recoded_cells
from publisher.methods.sd_model import SDModel, class_extents, ncp
from verifier.data.schema import Schema

__all__ = ["MInvariant"]


class MInvariant(Method):
    """m-invariant generalization of the quasi-identifiers, with counterfeit records; the sensitive attribute is
    published as it is. Parameters: ``m`` (2 or more). Earlier signatures: :meth:`given_signatures`."""

    name = "m_invariant"
    kinds = ("numeric", "ordinal", "nominal")
    parsers = {"m": parse_int}
    seed_use = "the order the people are grouped in (a uniform shuffle), and the row shuffle"
    deterministic = False
    #: the release passes each record's signature in the earlier releases (``--previous``)
    needs_earlier = True
    kernels = KERNELS

    def __init__(self, *, m: int, allow_degenerate: bool = False):
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise fail(f"m_invariant: m must be an integer >= 2. Got {m!r}.")
        if m == 1 and not allow_degenerate:
            raise fail("m_invariant: m = 1 lets a group hold one sensitive value and gives no protection; pass "
                       "allow_degenerate to run it anyway", "PARAMETER_DEGENERATE")
        self.m = int(m)
        self.signatures: Sequence[frozenset | None] | None = None
        #: the grouping order, where it is given rather than drawn from the seed (:meth:`in_order`)
        self.order: np.ndarray | None = None
        self._counterfeits: list[dict[str, Any]] = []
        #: after :meth:`apply`, each record's signature in this release (for the protector's links file)
        self.kept: list[frozenset] | None = None

    def given_signatures(self, signatures: Sequence[frozenset | None]) -> "MInvariant":
        """This step for a re-publication: each record's signature in the earlier releases, None for a new one."""
        out = MInvariant(m=self.m, allow_degenerate=True)
        out.signatures = list(signatures)
        out.order = self.order
        return out

    def in_order(self, order: Sequence[int]) -> "MInvariant":
        """This step with the grouping order given (row i's place in it) instead of drawn from the seed: how the
        exact oracle weighs every order the seed could draw."""
        out = MInvariant(m=self.m, allow_degenerate=True)
        out.signatures = self.signatures
        out.order = np.asarray(order, dtype=np.int64)
        return out

    def parameters(self) -> dict[str, Any]:
        return {"m": self.m, "counterfeit_records": sum(e["count"] for e in self._counterfeits),
                "counterfeits": [dict(e) for e in self._counterfeits]}

    def _columns(self, schema: Schema) -> tuple[list[str], str]:
        names = [a.name for a in schema.attributes if a.role == "quasi_identifier"]
        sensitive = [a for a in schema.attributes if a.role == "sensitive"]
        others = [a.name for a in schema.attributes if a.role not in ("quasi_identifier", "sensitive")]
        if not names or len(sensitive) != 1:
            raise fail("m_invariant needs quasi-identifiers and exactly one sensitive attribute; the schema marks "
                       f"{len(names)} and {len(sensitive)}", "METHOD_NOT_APPLICABLE")
        if sensitive[0].kind == "numeric":
            raise fail(f"m_invariant: the sensitive attribute {sensitive[0].name!r} is numeric; a signature is a set "
                       "of categories, so declare it nominal or ordinal", "METHOD_NOT_APPLICABLE")
        if others:
            raise fail(f"m_invariant publishes quasi-identifiers and one sensitive attribute, and a counterfeit record "
                       f"has no value for {others[0]!r}; leave it out of the schema", "METHOD_NOT_APPLICABLE")
        return names, sensitive[0].name

    def apply(self, table: pd.DataFrame, schema: Schema, *, random_state, original=None) -> MethodResult:
        names, sensitive = self._columns(schema)
        n = len(table)
        signatures = self.signatures if self.signatures is not None else [None] * n
        if len(signatures) != n:
            raise fail(f"m_invariant: {len(signatures)} earlier signatures for {n} records")
        numeric = [schema[nm].kind == "numeric" for nm in names]
        columns = [table[nm].to_numpy(dtype=float) if num else table[nm].astype(str).to_numpy()
                   for nm, num in zip(names, numeric)]
        order = self.order if self.order is not None else random_state.permutation(n)
        values = table[sensitive].astype(str).tolist()
        groups = m_invariant_groups(values, signatures, order, self.m, _domain(values, schema[sensitive].categories))
        model = SDModel(names, numeric, columns, self.m)
        classes = [list(g.members) for g in groups]
        extents = class_extents(model, classes)
        cells = recoded_cells(model, classes, extents)
        out = table.copy()
        labels = np.empty(n, dtype=np.int64)
        for g, members in enumerate(classes):
            labels[members] = g
        for nm, recoded in zip(names, cells):
            out[nm] = recoded[labels]
        fakes = _counterfeit_rows(groups, names, sensitive, cells)
        self.kept = [frozenset()] * n
        for g in groups:
            signature = frozenset([*(values[i] for i in g.members), *g.counterfeits])
            for i in g.members:
                self.kept[i] = signature
        self._counterfeits = _counts(groups, names, cells)
        released = pd.concat([out, fakes], ignore_index=True) if len(fakes) else out
        sizes = [len(g.members) + len(g.counterfeits) for g in groups]
        loss = ncp(model, classes, extents=extents)
        return MethodResult(released, {
            "m": self.m, "groups": len(groups), "counterfeit_records": len(fakes),
            "returning_records": sum(s is not None for s in signatures),
            "min_group_size": min(sizes), "max_group_size": max(sizes), "ncp": loss, "data_utility": 1.0 - loss,
        })


def _domain(values: list[str], categories: Sequence[str] | None) -> list[str]:
    """The sensitive values, most frequent first (ties by text), then the schema's categories the table lacks."""
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    held = sorted(counts, key=lambda v: (-counts[v], v))
    return held + sorted(set(categories or ()) - set(held))


def _counterfeit_rows(groups: list[Group], names: list[str], sensitive: str, cells: list[np.ndarray]) -> pd.DataFrame:
    rows = [{**{nm: cells[j][g] for j, nm in enumerate(names)}, sensitive: v}
            for g, group in enumerate(groups) for v in group.counterfeits]
    return pd.DataFrame(rows, columns=[*names, sensitive])


def _counts(groups: list[Group], names: list[str], cells: list[np.ndarray]) -> list[dict[str, Any]]:
    """Each group's counterfeit count by its published cells (groups of the same cells added up), in cell order."""
    counts: dict[tuple[str, ...], int] = {}
    for g, group in enumerate(groups):
        if group.counterfeits:
            key = tuple(str(cells[j][g]) for j in range(len(names)))
            counts[key] = counts.get(key, 0) + len(group.counterfeits)
    return [{"cells": dict(zip(names, key)), "count": c} for key, c in sorted(counts.items())]
