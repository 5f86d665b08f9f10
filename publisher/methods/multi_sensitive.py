"""Multiple sensitive attributes: the two-step generalization of paper 002 (Li & Ye; spec/methods.md section 2).

Step one generalizes the quasi-identifiers globally, top-down, along
generalization hierarchies, while every QI class keeps the alpha requirement
on each raw sensitive attribute (alpha-QI). Step two masks sensitive values
inside each class, bottom-up: a value is raised to its parent node together
with its least populated sibling, until multi-diversity holds with
leaf-level confidence (alpha-SA, Def. 5-7). The specialization stops at the
first round whose distortion ratio does not improve.

Hierarchies (section 2.3) are public parameters: a JSON file mapping columns
to a categorical tree or numeric cut levels; columns without one get the
fallback (a root over all values, or an equal-frequency binary split).
Everything is deterministic; only the framework's row shuffle uses the seed.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from publisher.methods.base import Method, MethodResult, fail, parse_float, parse_int
from verifier.data.bounded_files import read_bounded
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.attacks.hierarchy import Hierarchy, build_hierarchy
from publisher.methods.two_step_search import (SLACK, STEP_ONE, DistinctRecords, Infeasible, RootInfeasible,
                                              TwoStepResult, search, two_step)
from verifier.data.tables import number_label as _num
from verifier.data.schema import Schema
from verifier.text import number

__all__ = ["Hierarchy", "build_hierarchy", "MultiSensitiveGeneralization", "mask_class", "two_step",
           "two_step_exhaustive", "Infeasible", "RootInfeasible", "TwoStepResult"]


# ----------------------------------------------------------------------------- checks with masked values


def _conf(group: Sequence[str], h: Hierarchy) -> dict[str, Fraction]:
    """Leaf-level confidence (Def. 7), exact: a published node with N leaves gives 1/N to each."""
    out: dict[str, Fraction] = {}
    for node in group:
        leaves = h.leaves(node)
        for leaf in leaves:
            out[leaf] = out.get(leaf, 0) + Fraction(1, len(leaves))
    return {leaf: c / len(group) for leaf, c in out.items()}


def _violations(rows: list[list[str]], sens: list[Hierarchy], alpha: float) -> list[tuple]:
    """(conf, i, group key, leaf) for every Q&S group of these rows (one QI class) above alpha."""
    found = []
    m = len(sens)
    for i in range(m):
        groups: dict[tuple, list[str]] = {}
        for r in rows:
            key = tuple(r[j] for j in range(m) if j != i)
            groups.setdefault(key, []).append(r[i])
        for key, members in groups.items():
            for leaf, c in _conf(members, sens[i]).items():
                if c > alpha + SLACK:
                    found.append((c, i, key, leaf))
    return found


def mask_class(rows: list[list[str]], sens: list[Hierarchy], alpha: float) -> list[dict[str, Any]]:
    """MaskClass (section 2.5): raise SA values in one QI class until MD(alpha) holds; rows change in place.

    Returns the masking log; raises :class:`Infeasible` when a violation reaches a root.
    """
    log = []
    m = len(sens)
    while True:
        found = _violations(rows, sens, alpha)
        if not found:
            return log
        c, i, key, leaf = min(found, key=lambda f: (-f[0], f[1], tuple(map(str, f[2])), sens[f[1]].order[f[3]]))
        h = sens[i]
        members = [r[i] for r in rows if tuple(r[j] for j in range(m) if j != i) == key]
        covering = [v for v in set(members) if leaf in h.leaves(v)]
        v = min(covering, key=lambda n: (h.leaf_count(n), h.order[n]))
        if v == h.root:
            raise Infeasible(f"sensitive attribute {i}: {leaf!r} keeps confidence {number(float(c))} even at the "
                             f"root, so alpha_sa must be at least {number(float(c))}")
        p = h.parent[v]
        siblings = [s for s in h.children[p] if s != v]
        company = min(siblings, key=lambda s: (sum(h.covers(s, r[i]) for r in rows), h.order[s])) if siblings else None
        changed = 0
        for r in rows:
            if h.covers(v, r[i]) or (company is not None and h.covers(company, r[i])):
                r[i] = p
                changed += 1
        log.append({"attribute": i, "value": v, "company": company, "parent": p, "tuples": changed,
                    "confidence": float(c)})


def _apply(raw_qi: list[list[str]], hier: list[Hierarchy], cuts: list[list[str]]) -> list[list[str]]:
    """Each row's values generalized to the node of the cut that covers them (each distinct value looked up once)."""
    node_of = [{v: next(c for c in cut if h.covers(c, h.leaf_of[v])) for v in {row[j] for row in raw_qi}}
               for j, (h, cut) in enumerate(zip(hier, cuts))]
    return [[node[v] for node, v in zip(node_of, row)] for row in raw_qi]


def _alpha_qi(qi_rows: list[list[str]], raw_sa: list[list[str]], alpha: float, k: int | None) -> bool:
    classes: dict[tuple, list[int]] = {}
    for t, r in enumerate(qi_rows):
        classes.setdefault(tuple(r), []).append(t)
    for members in classes.values():
        if k is not None and len(members) < k:
            return False
        for i in range(len(raw_sa[0]) if raw_sa else 0):
            values = [raw_sa[t][i] for t in members]
            top = max(values.count(v) for v in set(values))
            if top / len(values) > alpha + SLACK:
                return False
    return True


def _mask_all(qi_rows, raw_sa, sens, alpha):
    sa = [list(r) for r in raw_sa]
    classes: dict[tuple, list[int]] = {}
    for t, r in enumerate(qi_rows):
        classes.setdefault(tuple(r), []).append(t)
    log = []
    for key in sorted(classes, key=lambda k: tuple(map(str, k))):
        rows = [sa[t] for t in classes[key]]
        for entry in mask_class(rows, sens, alpha):
            log.append({"class": list(key), **entry})
    return sa, log


def _dr(qi_rows, sa_rows, qh, sh) -> tuple[float, float]:
    """The distortion ratios: the cells' information losses summed exactly and rounded once (each label's loss
    computed once)."""
    def loss(rows, hier) -> float:
        known = [{v: h.info_loss(v) for v in {r[j] for r in rows}} for j, h in enumerate(hier)]
        return math.fsum(loss_of[v] for r in rows for loss_of, v in zip(known, r))

    n = len(qi_rows)
    qi = loss(qi_rows, qh) / (n * len(qh)) if qh else 0.0
    sa = loss(sa_rows, sh) / (n * len(sh)) if sh else 0.0
    return qi, sa


class RowRecords:
    """The search's steps on the rows themselves, one by one (:class:`publisher.methods.two_step_search.Records`):
    the plain version :class:`publisher.methods.two_step_search.DistinctRecords` is held to."""

    def __init__(self, raw_qi: list[list[str]], raw_sa: list[list[str]], qh: list[Hierarchy], sh: list[Hierarchy]):
        self.raw_qi, self.raw_sa, self.qh, self.sh = raw_qi, raw_sa, qh, sh

    def value_counts(self, q: int) -> Counter:
        return Counter(r[q] for r in self.raw_qi)

    def generalize(self, cuts: list[list[str]]) -> list[list[str]]:
        return _apply(self.raw_qi, self.qh, cuts)

    def alpha_qi(self, state, alpha: float, k: int | None) -> bool:
        return _alpha_qi(state, self.raw_sa, alpha, k)

    def mask(self, state, alpha: float):
        return _mask_all(state, self.raw_sa, self.sh, alpha)

    def unmasked(self):
        return [list(r) for r in self.raw_sa]

    def distortion(self, state, masked) -> tuple[float, float]:
        return _dr(state, masked, self.qh, self.sh)

    def rows(self, state, masked):
        return state, masked


def two_step_exhaustive(raw_qi: list[list[str]], raw_sa: list[list[str]], qh: list[Hierarchy], sh: list[Hierarchy],
                        alpha_qi: float, alpha_sa: float, k: int | None = None,
                        max_rounds: int | None = None, step_one: str = "alpha_qi") -> TwoStepResult:
    """The greedy two-step algorithm (Fig. 2, made deterministic; spec section 2.5), row by row."""
    return search(RowRecords(raw_qi, raw_sa, qh, sh), qh, sh, alpha_qi, alpha_sa, k, max_rounds, step_one)


def _parse_path(name: str, text: str) -> str:
    return text


def _parse_step_one(name: str, text: str) -> str:
    """Only the step one that reads the quasi-identifiers alone is released (issue 58)."""
    if text != "quasi_identifiers":
        raise fail(f"multi_sensitive_generalization: step_one is quasi_identifiers in a release. Got {text!r}: "
                   "paper 002's alpha-QI step one decides the classes from the sensitive values, and the intruder "
                   "who reruns it reads them from its refusals", "PARAMETER_INVALID")
    return text


class MultiSensitiveGeneralization(Method):
    """Two-step generalization for several sensitive attributes (paper 002).

    Parameters: ``alpha_qi`` and ``alpha_sa`` in (0, 1) (default 0.5),
    ``hierarchies`` (a JSON file, section 2.3; columns without one get the
    fallback), ``k`` (optional minimum class size). Deterministic; only the
    row shuffle uses the seed. Published values are hierarchy node labels.

    Step one decides the classes on the quasi-identifiers alone (``step_one``
    ``quasi_identifiers``, signed): every class holds at least k and 1/alpha_qi
    rows, and the search stops where the QI distortion ratio stops falling.
    Paper 002's step one reads the sensitive values (alpha-QI, and the whole
    distortion ratio), and the intruder who reruns it learns from which finer
    classes it refused (issue 58); ``step_one="alpha_qi"`` runs it for the
    paper's experiments, never in a release (the manifest's schema signs only
    the first).
    """

    name = "multi_sensitive_generalization"
    kinds = ("numeric", "ordinal", "nominal")
    parsers = {"alpha_qi": parse_float, "alpha_sa": parse_float, "hierarchies": _parse_path, "k": parse_int,
               "step_one": _parse_step_one}
    seed_use = "none (the algorithm is deterministic; only the row shuffle uses the seed)"
    deterministic = True

    def __init__(self, *, alpha_qi: float = 0.5, alpha_sa: float = 0.5, hierarchies: str | Mapping | None = None,
                 k: int | None = None, step_one: str = "quasi_identifiers", allow_degenerate: bool = False):
        for name, a in (("alpha_qi", alpha_qi), ("alpha_sa", alpha_sa)):
            if not (isinstance(a, (int, float)) and 0 < a < 1):
                raise fail(f"multi_sensitive_generalization: {name} lies in (0, 1). Got {a!r}.")
        if k is not None and (isinstance(k, bool) or k < 2):
            raise fail(f"multi_sensitive_generalization: k is an integer >= 2. Got {k!r}.")
        if isinstance(hierarchies, (str, Path)):
            try:
                hierarchies = loads_strict(read_bounded(hierarchies, "hierarchies"))
            except StrictJSONError as exc:
                raise fail(f"multi_sensitive_generalization: the hierarchy file {hierarchies} is not strict JSON: "
                           f"{exc}", "HIERARCHY_INVALID") from None
            if not isinstance(hierarchies, dict):
                raise fail("multi_sensitive_generalization: a hierarchy file is a JSON object", "HIERARCHY_INVALID")
        if step_one not in STEP_ONE:
            raise fail(f"multi_sensitive_generalization: step_one is one of {', '.join(STEP_ONE)}. Got {step_one!r}.")
        self.alpha_qi, self.alpha_sa, self.k, self.step_one = float(alpha_qi), float(alpha_sa), k, step_one
        self.hierarchies = dict(hierarchies or {})

    def parameters(self) -> dict[str, Any]:
        return {"alpha_qi": self.alpha_qi, "alpha_sa": self.alpha_sa, "k": self.k, "hierarchies": self.hierarchies,
                "step_one": self.step_one}

    def _least_alpha_qi(self, table: pd.DataFrame, sa: list) -> str:
        """Where alpha-QI fails at the root (one class of every record), the least alpha_qi that passes there:
        the largest share of one sensitive value in the whole table (alpha-QI only gets harder below the root)."""
        if self.step_one == "quasi_identifiers":
            return ""
        if self.k is not None and len(table) < self.k:
            return f": the table has {len(table)} records, fewer than k = {self.k}"
        shares = {a.name: table[a.name].astype(str).value_counts(normalize=True) for a in sa}
        name = max(shares, key=lambda n: shares[n].iloc[0])
        top = shares[name]
        return (f": in the whole table {top.index[0]!r} is {number(top.iloc[0], share=True)} of {name}, so alpha_qi "
                f"must be at least {number(top.iloc[0])} (the closer to it, the fewer and larger the classes)")

    def apply(self, table: pd.DataFrame, schema: Schema, *, random_state, original=None) -> MethodResult:
        qi = [a for a in schema.attributes if a.role == "quasi_identifier"]
        sa = [a for a in schema.attributes if a.role == "sensitive"]
        if not qi or not sa:
            lacking = " and ".join(w for w, have in (("quasi-identifiers", qi), ("sensitive attributes", sa))
                                   if not have)
            raise fail(f"multi_sensitive_generalization needs quasi-identifiers and sensitive attributes, and the "
                       f"schema marks no {lacking}: give columns those roles", "METHOD_NOT_APPLICABLE")
        numeric = [a.name for a in sa if a.kind == "numeric"]
        if numeric:
            raise fail(f"multi_sensitive_generalization masks categorical sensitive attributes only, and "
                       f"{', '.join(numeric)} {'is' if len(numeric) == 1 else 'are'} numeric: bin {'it' if len(numeric) == 1 else 'them'} "
                       "into categories, or give the role other", "METHOD_NOT_APPLICABLE")
        qh = [build_hierarchy(self.hierarchies.get(a.name), table[a.name].tolist(), a.kind == "numeric") for a in qi]
        sh = [build_hierarchy(self.hierarchies.get(a.name), table[a.name].tolist(), False) for a in sa]
        records = DistinctRecords.from_columns([table[a.name].to_numpy() for a in qi],
                                               [table[a.name].to_numpy() for a in sa], qh, sh,
                                               [_num if a.kind == "numeric" else str for a in qi])
        try:
            result = search(records, qh, sh, self.alpha_qi, self.alpha_sa, self.k, step_one=self.step_one)
        except Infeasible as exc:
            hint = self._least_alpha_qi(table, sa) if isinstance(exc, RootInfeasible) else ""
            raise fail(f"multi_sensitive_generalization: {exc}{hint}", "TARGET_INFEASIBLE") from None
        out = table.copy()
        for j, a in enumerate(qi):
            out[a.name] = [r[j] for r in result.qi]
        for j, a in enumerate(sa):
            out[a.name] = [r[j] for r in result.sa]
        return MethodResult(out, {
            "cuts": {a.name: c for a, c in zip(qi, result.cuts)},
            "qi_distortion_ratio": result.qi_dr, "sa_distortion_ratio": result.sa_dr,
            "distortion_ratio": result.dr, "rounds": result.rounds,
        })
