"""SpatialDistance (SD) k-anonymization without taxonomies (paper 001, Aghdam & Sonehara; spec/methods.md section 1).

Records are clustered into classes of k to 2k-1 by the distance of
:mod:`publisher.methods.sd_model`, which needs no generalization hierarchy;
:mod:`publisher.methods.sd_clustering` finds the classes.

Every interpretation and tie-break is the spec's (section 1.2-1.3); the
algorithm is deterministic, and only the framework's row shuffle uses the
secret seed. Each class is then recoded locally: numeric values to
``[min,max]``, categorical values to ``{a,b}`` (a plain value where the class
agrees). Sensitive attributes are unchanged.

Metrics (section 1.4): NCP with Xu's convention and Data Utility = 1 - NCP,
the discernibility metric DM, class sizes, and a k-anonymity check.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from publisher.methods.base import Method, MethodResult, fail, parse_int, parse_names
from publisher.methods.frames import published_cells
from publisher.methods.sd_clustering import KERNELS, sd_classes
from publisher.methods.sd_model import SDModel, discernibility, ncp, value_distances
from verifier.attacks.classes import group_claims
from verifier.data.schema import Schema
from verifier.data.tables import number_label

__all__ = ["SDKAnonymity", "value_distances", "SDModel", "sd_classes", "ncp", "discernibility"]


def _recode(values: np.ndarray, numeric: bool) -> Any:
    if numeric:
        lo, hi = values.min(), values.max()
        return number_label(lo) if lo == hi else f"[{number_label(lo)},{number_label(hi)}]"
    distinct = sorted(set(values.tolist()), key=str)
    return distinct[0] if len(distinct) == 1 else "{" + ",".join(distinct) + "}"


class SDKAnonymity(Method):
    """SD k-anonymization (paper 001) of the quasi-identifiers; sensitive attributes unchanged.

    Parameters: ``k`` (2 <= k <= n). Deterministic: the secret seed only
    shuffles the output rows (the framework does that). The output holds
    recoded QI values (``[25,45]``, ``{Japan,Korea}``) as text.
    """

    name = "sd_k_anonymity"
    kinds = ("numeric", "ordinal", "nominal")
    parsers = {"k": parse_int, "attributes": parse_names}
    seed_use = "none (the algorithm is deterministic; only the row shuffle uses the seed)"
    kernels = KERNELS
    deterministic = True

    def __init__(self, *, k: int, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise fail(f"sd_k_anonymity: k must be an integer >= 2. Got {k!r}.")
        if k == 1 and not allow_degenerate:
            raise fail("sd_k_anonymity: k = 1 groups nothing and gives no protection; pass allow_degenerate "
                        "to run it anyway", "PARAMETER_DEGENERATE")
        self.k = int(k)
        self.attributes = tuple(attributes) if attributes is not None else None

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k, "attributes": list(self.attributes) if self.attributes is not None else None}

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
        classes = sd_classes(model)
        labels = np.empty(n, dtype=np.int64)
        for g, members in enumerate(classes):
            labels[members] = g
        out = table.copy()
        for j, nm in enumerate(names):
            recoded = np.array([_recode(model.columns[j][members], numeric[j]) for members in classes], dtype=object)
            out[nm] = recoded[labels]
        sizes = [len(c) for c in classes]
        loss = ncp(model, classes)
        # one definition per figure: the risks of the published classes, as the manifest claims them
        # (verifier.attacks.classes.group_claims); two clusters with the same generalized cells are one class
        published = published_cells(out, schema)[1]
        risk = {name: {"max": e["max"], "mean": e["mean"], "certain_share": e["certain_share"]}
                for name, e in group_claims(published)["attribute_disclosure"].items()}
        return MethodResult(out, {
            "attributes": names, "classes": len(classes), "min_class_size": min(sizes), "max_class_size": max(sizes),
            "mean_class_size": float(np.mean(sizes)), "k_anonymous": min(sizes) >= self.k,
            "ncp": loss, "data_utility": 1.0 - loss, "discernibility": discernibility(sizes, self.k, n),
            "attribute_disclosure": risk,
        })
