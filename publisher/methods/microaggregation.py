"""MDAV microaggregation (Domingo-Ferrer & Torra)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from publisher.methods.base import Method, MethodResult, fail, parse_int, parse_names
from publisher.methods.mdav import KERNELS, mdav_groups

__all__ = ["Microaggregation"]


class Microaggregation(Method):
    """MDAV microaggregation: groups of k to 2k-1 similar records share their mean.

    Records are grouped by MDAV (Domingo-Ferrer & Torra) on the attributes
    standardized to mean 0 and sd 1; each value is replaced by its group's
    mean on the original scale. Deterministic: no secret draw (the release's
    row shuffle still uses the seed).
    """

    name = "microaggregation"
    kinds = ("numeric",)
    parsers = {"k": parse_int, "attributes": parse_names}
    seed_use = "none (MDAV is deterministic)"
    deterministic = True
    kernels = KERNELS

    def __init__(self, *, k: int, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise fail(f"microaggregation: k must be a positive integer. Got {k!r}.")
        if k == 1 and not allow_degenerate:
            raise fail("microaggregation: k = 1 leaves every record alone and gives no protection; "
                        "pass allow_degenerate to run it anyway", "PARAMETER_DEGENERATE")
        self.k = int(k)
        self.attributes = tuple(attributes) if attributes is not None else None

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k, "attributes": list(self.attributes) if self.attributes is not None else None}

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        cols = self._targets(schema, self.attributes)
        names = [schema.names[j] for j in cols]
        x = table[names].to_numpy(dtype=np.float64)
        n = x.shape[0]
        if self.k > n:
            raise fail(f"microaggregation: k = {self.k} is larger than the number of records ({n})")
        sd = x.std(axis=0)
        z = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        group = mdav_groups(z, self.k)
        sizes = np.bincount(group)
        means = np.zeros((sizes.size, x.shape[1]))
        np.add.at(means, group, x)
        means /= sizes[:, None]
        y = means[group]
        out = table.copy()
        for k, name in enumerate(names):
            out[name] = y[:, k]
        sst = float(((z - z.mean(axis=0)) ** 2).sum())
        zy = (y - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        sse = float(((z - zy) ** 2).sum())
        return MethodResult(out, {
            "attributes": names, "groups": int(sizes.size), "min_group_size": int(sizes.min()),
            "max_group_size": int(sizes.max()), "information_loss_sse_sst": sse / sst if sst > 0 else 0.0,
        })
