"""Additive noise (paper 003's running example), optionally correlated with the data."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from publisher.methods.base import Method, MethodResult, fail, parse_bool, parse_names, parse_per_attribute
from verifier.data.magnitudes import MAX_MAGNITUDE
from verifier.core.validation import as_generator

__all__ = ["AdditiveNoise"]


def _column_sd(x: np.ndarray) -> np.ndarray:
    return x.std(axis=0, ddof=1) if x.shape[0] > 1 else np.zeros(x.shape[1])


class AdditiveNoise(Method):
    """Add normal noise with sd ``relative_sd`` times each attribute's sd (paper 003's running example).

    ``correlated=True`` draws the noise with covariance ``relative_sd**2``
    times the data's covariance matrix, so the correlations of the data are
    kept in expectation (one ``relative_sd`` for all attributes). Secret
    draws: the noise.
    """

    name = "additive_noise"
    kinds = ("numeric",)
    parsers = {"relative_sd": parse_per_attribute, "correlated": parse_bool, "attributes": parse_names}
    seed_use = "the noise values"

    def __init__(self, *, relative_sd: float | Mapping[str, float], correlated: bool = False,
                 attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        values = list(relative_sd.values()) if isinstance(relative_sd, Mapping) else [relative_sd]
        if not values or any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in values):
            raise fail(f"additive_noise: relative_sd must be a non-negative number (per attribute or for all). Got {relative_sd!r}.")
        if correlated and isinstance(relative_sd, Mapping):
            raise fail("additive_noise: correlated noise takes one relative_sd for all attributes")
        if all(v == 0 for v in values) and not allow_degenerate:
            raise fail("additive_noise: relative_sd = 0 adds no noise and gives no protection; "
                        "pass allow_degenerate to run it anyway", "PARAMETER_DEGENERATE")
        self.relative_sd = dict(relative_sd) if isinstance(relative_sd, Mapping) else float(relative_sd)
        self.correlated = bool(correlated)
        self.attributes = tuple(attributes) if attributes is not None else None

    def parameters(self) -> dict[str, Any]:
        return {"relative_sd": self.relative_sd, "correlated": self.correlated,
                "attributes": list(self.attributes) if self.attributes is not None else None}

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        rng = as_generator(random_state)
        named = self.attributes
        if named is None and isinstance(self.relative_sd, dict):
            named = tuple(self.relative_sd)
        cols = self._targets(schema, named)
        names = [schema.names[j] for j in cols]
        if isinstance(self.relative_sd, dict):
            unknown = sorted(set(self.relative_sd) - set(names))
            if unknown:
                raise fail(f"additive_noise: relative_sd names {unknown[0]!r}, which it does not change")
            rel = np.array([self.relative_sd.get(n, 0.0) for n in names])
        else:
            rel = np.full(len(cols), self.relative_sd)
        x = table[names].to_numpy(dtype=np.float64)
        sd = _column_sd(x)
        if self.correlated:
            cov = np.atleast_2d(np.cov(x, rowvar=False)) if x.shape[0] > 1 else np.zeros((len(cols), len(cols)))
            noise = rng.multivariate_normal(np.zeros(len(cols)), (rel[0] ** 2) * cov, size=x.shape[0], method="eigh")
        else:
            noise = rng.standard_normal(x.shape) * (rel * sd)
        noised = x + noise
        for k, n in enumerate(names):  # the noised values stay within what every later sum can hold
            if not (np.abs(noised[:, k]) <= MAX_MAGNITUDE).all():
                raise fail(f"additive_noise: relative_sd {rel[k]:g} takes column {n!r} beyond 1e150 in absolute "
                           "value, where variances and sums overflow; choose a smaller relative_sd")
        out = table.copy()
        for k, n in enumerate(names):
            out[n] = noised[:, k]
        realized = _column_sd(noise)
        return MethodResult(out, {
            "attributes": names,
            "noise_sd": {n: float(v) for n, v in zip(names, realized)},
            "realized_relative_sd": {n: (float(v / s) if s > 0 else None) for n, v, s in zip(names, realized, sd)},
        })
