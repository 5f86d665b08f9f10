"""SpatialDistance (SD) k-anonymization without taxonomies (paper 001, Aghdam & Sonehara; spec/methods.md section 1).

Records are clustered into classes of k to 2k-1 by the distance of
:mod:`publisher.methods.sd_model`, which needs no generalization hierarchy;
:mod:`publisher.methods.sd_clustering` finds the classes.

Every interpretation and tie-break is the spec's (section 1.2-1.3); the
algorithm is deterministic, and without masks only the framework's row shuffle
uses the secret seed. Each class is then recoded locally: numeric values to
``[min,max]``, categorical values to ``{a,b}`` (a plain value where the class
agrees). Sensitive attributes are unchanged.

Metrics (section 1.4): NCP with Xu's convention and Data Utility = 1 - NCP,
the discernibility metric DM, class sizes, and a k-anonymity check.

``keep_groups=true`` (issue 41, item 3; not in the paper) lets the records whose quasi-identifiers already form a
group of at least k identical records stand as their own class, published exactly, before SD clusters the rest
(:func:`standing_groups`): less NCP, as their cells need no recoding, for more discernibility, as such groups can
be far larger than 2k-1. docs/methods.md and docs/performance.md give both on the Adult file.

``mask_probability`` q (issue 58, item 4; not in the paper) then publishes each categorical sensitive cell as
``*`` with probability q, drawn from the secret seed whatever the value: a randomized suppression with a published
probability, which tells the intruder who reruns the method nothing of the values it hides.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from publisher.methods.base import Method, MethodResult, fail, parse_bool, parse_float, parse_int, parse_names
from publisher.methods.frames import published_cells
from publisher.methods.sd_clustering import KERNELS, sd_classes
from publisher.methods.sd_model import SDModel, class_extents, discernibility, ncp, value_distances
from verifier.attacks.classes import group_claims
from verifier.data.schema import Schema
from verifier.data.tables import number_labels

__all__ = ["SDKAnonymity", "value_distances", "SDModel", "sd_classes", "ncp", "discernibility", "standing_groups",
           "recoded_cells"]


def _identical(model: SDModel, members: list[int]) -> bool:
    return all(len(set(c[members].tolist())) == 1 for c in model.columns)


def recoded_cells(model: SDModel, classes: list[list[int]],
                  extents: list[tuple[np.ndarray, np.ndarray]] | None = None) -> list[np.ndarray]:
    """Per quasi-identifier, each class's published cell: ``[min,max]`` or ``{a,b}`` (values in the domain's
    order), the plain value where the class agrees. ``extents``: :func:`class_extents` of these classes, when
    already found."""
    out = []
    for j, (num, (a, b)) in enumerate(zip(model.numeric, extents or class_extents(model, classes))):
        if num:
            lo, hi = number_labels(a), number_labels(b)
            text = [x if x == y else f"[{x},{y}]" for x, y in zip(lo, hi)]
        else:
            names = np.array(model.domain[j], dtype=object)[b].tolist()
            cuts = np.flatnonzero(np.diff(a)) + 1
            text = [part[0] if len(part) == 1 else "{" + ",".join(part) + "}"
                    for part in (names[s:e] for s, e in zip([0, *cuts.tolist()], [*cuts.tolist(), len(names)]))]
        out.append(np.array(text, dtype=object))
    return out


def standing_groups(columns: Sequence[np.ndarray], k: int) -> tuple[list[list[int]], np.ndarray]:
    """The groups of at least ``k`` records with the same values in every column (row indices, each group in row
    order, the groups by their first row), and the rows left for SD to cluster. When fewer than k rows are left
    (but some), the smallest groups go back to them, the last-found first, until k or more are left: SD needs k
    records to make a class."""
    n = len(columns[0]) if columns else 0
    if not n:
        return [], np.arange(0)
    _, inverse, counts = np.unique(np.column_stack([np.unique(c, return_inverse=True)[1].ravel() for c in columns]),
                                   axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    groups = [order[a:a + c].tolist() for a, c in zip(starts, counts) if c >= k]
    groups.sort(key=lambda g: g[0])
    rest = np.sort(np.flatnonzero(counts[inverse] < k))
    while 0 < rest.size < k and groups:
        back = min(range(len(groups)), key=lambda i: (len(groups[i]), -i))
        rest = np.sort(np.concatenate([rest, np.asarray(groups.pop(back), dtype=np.int64)]))
    return groups, rest


class SDKAnonymity(Method):
    """SD k-anonymization (paper 001) of the quasi-identifiers; sensitive attributes unchanged.

    Parameters: ``k`` (2 <= k <= n), and ``mask_probability`` q (0 <= q < 1, default 0): each categorical
    sensitive cell is published as ``*`` with probability q, independently of every value (the secret seed draws
    which), a randomized suppression with a published probability (issue 58, item 4). A mask decided from no
    value tells the intruder who reruns the method nothing of it, so a masked cell stands for the population's
    share of each value (the verifier's bound of it). Without masks the method is deterministic: the secret seed
    only shuffles the output rows (the framework does that). The output holds recoded QI values (``[25,45]``,
    ``{Japan,Korea}``) as text.
    """

    name = "sd_k_anonymity"
    kinds = ("numeric", "ordinal", "nominal")
    parsers = {"k": parse_int, "attributes": parse_names, "keep_groups": parse_bool, "mask_probability": parse_float}
    seed_use = "which sensitive cells are masked, with mask_probability; else none (only the row shuffle)"
    kernels = KERNELS
    deterministic = True

    def __init__(self, *, k: int, attributes: Sequence[str] | None = None, keep_groups: bool = False,
                 mask_probability: float = 0.0, allow_degenerate: bool = False):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise fail(f"sd_k_anonymity: k must be an integer >= 2. Got {k!r}.")
        if k == 1 and not allow_degenerate:
            raise fail("sd_k_anonymity: k = 1 groups nothing and gives no protection; pass allow_degenerate "
                        "to run it anyway", "PARAMETER_DEGENERATE")
        self.k = int(k)
        self.attributes = tuple(attributes) if attributes is not None else None
        if not isinstance(keep_groups, (bool, np.bool_)):
            raise fail(f"sd_k_anonymity: keep_groups is true or false. Got {keep_groups!r}.")
        self.keep_groups = bool(keep_groups)
        q = mask_probability
        if isinstance(q, bool) or not isinstance(q, (int, float, np.floating)) or not 0.0 <= float(q) < 1.0:
            raise fail(f"sd_k_anonymity: mask_probability is a probability below 1 (0 masks nothing). Got {q!r}.")
        self.mask_probability = float(q)
        #: masks drawn from the seed make the release a random one; without them only the row shuffle is
        self.deterministic = self.mask_probability == 0.0

    def parameters(self) -> dict[str, Any]:
        masks = {"mask_probability": self.mask_probability} if self.mask_probability else {}
        return {"k": self.k, "attributes": list(self.attributes) if self.attributes is not None else None,
                "keep_groups": self.keep_groups, **masks}

    def _classes(self, model: SDModel, numeric: list[bool], columns: list[np.ndarray]) -> list[list[int]]:
        """SD's classes of every record, or with ``keep_groups`` the standing groups and SD's classes of the rest
        (SD clusters the rest as a table of its own)."""
        if not self.keep_groups:
            return sd_classes(model)
        groups, rest = standing_groups(columns, self.k)
        if not rest.size:
            return groups
        clustered = sd_classes(SDModel(model.names, numeric, [c[rest] for c in columns], self.k))
        return groups + [rest[c].tolist() for c in clustered]

    def apply(self, table: pd.DataFrame, schema: Schema, *, random_state, original=None) -> MethodResult:
        names = list(self.attributes) if self.attributes is not None else [
            a.name for a in schema.attributes if a.role == "quasi_identifier"]
        if not names:
            raise fail("sd_k_anonymity needs quasi-identifiers, and the schema marks none: give the columns an "
                       "attacker could know the role quasi_identifier", "METHOD_NOT_APPLICABLE")
        n = len(table)
        if self.k > n:
            raise fail(f"sd_k_anonymity: k = {self.k} is larger than the number of records ({n})")
        numeric = [schema[nm].kind == "numeric" for nm in names]
        columns = [table[nm].to_numpy(dtype=float) if num else table[nm].astype(str).to_numpy()
                   for nm, num in zip(names, numeric)]
        model = SDModel(names, numeric, columns, self.k)
        classes = self._classes(model, numeric, columns)
        labels = np.empty(n, dtype=np.int64)
        for g, members in enumerate(classes):
            labels[members] = g
        extents = class_extents(model, classes)  # the recoding and NCP read the same extents
        out = table.copy()
        for nm, recoded in zip(names, recoded_cells(model, classes, extents)):
            out[nm] = recoded[labels]
        masked = _mask(out, schema, self.mask_probability, random_state)
        sizes = [len(c) for c in classes]
        loss = ncp(model, classes, extents=extents)
        # one definition per figure: the risks of the published classes, as the manifest claims them
        # (verifier.attacks.classes.group_claims); two clusters with the same generalized cells are one class
        # (the claims read the quasi-identifiers' and sensitive cells only: the other columns are not made text)
        read = [a for a in schema.attributes if a.role in ("quasi_identifier", "sensitive")] or list(schema.attributes)
        published = published_cells(out[[a.name for a in read]], Schema(tuple(read)))[1]
        methods = [{"method": self.name, "parameters": self.parameters()}]
        risk = {name: {"max": e["max"], "mean": e["mean"], "certain_share": e["certain_share"]}
                for name, e in group_claims(published, methods=methods)["attribute_disclosure"].items()}
        return MethodResult(out, {
            **({"masked_cells": masked} if self.mask_probability else {}),
            **({"standing_groups": sum(len(c) >= self.k and _identical(model, c) for c in classes)}
               if self.keep_groups else {}),
            "attributes": names, "classes": len(classes), "min_class_size": min(sizes), "max_class_size": max(sizes),
            "mean_class_size": float(np.mean(sizes)), "k_anonymous": min(sizes) >= self.k,
            "ncp": loss, "data_utility": 1.0 - loss, "discernibility": discernibility(sizes, self.k, n),
            "attribute_disclosure": risk,
        })


def _mask(out: pd.DataFrame, schema: Schema, q: float, random_state) -> int:
    """Each categorical sensitive cell of ``out`` set to ``*`` with probability ``q``, one draw per cell,
    independent of the values; how many were masked."""
    if not q:
        return 0
    masked = 0
    for a in schema.attributes:
        if a.role == "sensitive" and a.kind != "numeric":
            hit = random_state.random(len(out)) < q
            out[a.name] = np.where(hit, "*", out[a.name].astype(str).to_numpy())
            masked += int(hit.sum())
    return masked
