"""Reverse mapping as a release step (paper 003, Algorithm 1)."""

from __future__ import annotations

import math
from typing import Any, Sequence

from publisher.methods.base import Method, MethodResult, fail, parse_names
from publisher.methods.frames import frame_to_keys, keys_to_frame
from verifier.core.ranks import reverse_map
from verifier.core.validation import as_generator

__all__ = ["ReverseMapping"]


class ReverseMapping(Method):
    """Release Z instead of Y: Y's ranks carrying X's values (paper 003, Algorithm 1).

    A final step after any method: the release becomes a pure permutation of
    the original values per attribute, the form whose protection each subject
    can check exactly. Secret draws: the order of tied values of Y.
    """

    name = "reverse_mapping"
    kinds = ("numeric", "ordinal")
    parsers = {"attributes": parse_names}
    seed_use = "the order among tied anonymized values"

    def __init__(self, *, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        self.attributes = tuple(attributes) if attributes is not None else None
        self.allow_degenerate = allow_degenerate

    def parameters(self) -> dict[str, Any]:
        return {"attributes": list(self.attributes) if self.attributes is not None else None}

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        if original is None or (original is table and not self.allow_degenerate):
            raise fail("reverse_mapping maps an anonymized table back onto the original: run it after another "
                        "method (alone it would publish the original)", "PARAMETER_DEGENERATE")
        cols = self._targets(schema, self.attributes)
        x = frame_to_keys(original, schema)[:, cols]
        y = frame_to_keys(table, schema)
        result = reverse_map(x, y[:, cols], random_state=as_generator(random_state))
        y[:, cols] = result.z
        out = keys_to_frame(y, schema)
        names = [schema.names[j] for j in cols]
        return MethodResult(out, {
            "attributes": names,
            "rank_correlation": {n: _none_if_nan(v) for n, v in zip(names, result.rank_correlation)},
            "mean_abs_noise_y_z": {n: float(v) for n, v in zip(names, result.mean_abs_noise_y_z)},
        })


def _none_if_nan(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None
