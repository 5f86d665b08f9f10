"""Rank swapping (Moore 1996)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from publisher.methods.base import Method, MethodResult, fail, parse_float, parse_names
from publisher.methods.frames import frame_to_keys, keys_to_frame
from publisher.methods.kernels import KERNELS, rank_swap_partners
from verifier.core.validation import as_generator

__all__ = ["RankSwapping"]


class RankSwapping(Method):
    """Rank swapping (Moore 1996): swap values whose ranks are at most p% of n apart.

    Per attribute, in increasing rank order, each value not yet swapped is
    exchanged with a value chosen uniformly among those not yet swapped whose
    rank is higher by at most ``floor(p n / 100)``. Every column keeps its
    multiset of values exactly. Secret draws: the choice of partners.
    """

    name = "rank_swapping"
    kinds = ("numeric", "ordinal")
    parsers = {"p": parse_float, "attributes": parse_names}
    seed_use = "the choice of swap partners"
    kernels = KERNELS

    def __init__(self, *, p: float, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        if not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0 or p > 100:
            raise fail(f"rank_swapping: p must be in (0, 100], a percentage of the number of records. Got {p!r}.")
        if p == 0 and not allow_degenerate:
            raise fail("rank_swapping: p = 0 swaps nothing and gives no protection; "
                        "pass allow_degenerate to run it anyway", "PARAMETER_DEGENERATE")
        self.p = float(p)
        self.attributes = tuple(attributes) if attributes is not None else None

    def parameters(self) -> dict[str, Any]:
        return {"p": self.p, "attributes": list(self.attributes) if self.attributes is not None else None}

    def window(self, n: int) -> int:
        """The largest rank distance of a swap: ``floor(p n / 100)``."""
        return int(math.floor(self.p * n / 100.0 + 1e-9))

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        rng = as_generator(random_state)
        cols = self._targets(schema, self.attributes)
        keys = frame_to_keys(table, schema)
        n = keys.shape[0]
        window = self.window(n)
        shift, swapped = {}, {}
        for j in cols:
            order = np.argsort(keys[:, j], kind="stable")
            partner = rank_swap_partners(n, window, rng.random(n))
            new = np.empty(n)
            new[order] = keys[order[partner], j]
            keys[:, j] = new
            name = schema.names[j]
            shift[name] = int(np.abs(partner - np.arange(n)).max()) if n else 0
            swapped[name] = float(np.mean(partner != np.arange(n))) if n else 0.0
        out = keys_to_frame(keys, schema)
        untouched = [a.name for k, a in enumerate(schema.attributes) if k not in cols]
        out[untouched] = table[untouched].to_numpy()
        return MethodResult(out, {"window_ranks": window, "max_rank_shift": shift, "swapped_share": swapped})
