"""Randomized response on categorical attributes (paper 000; spec/attribute-disclosure.md sections 2-11).

Each randomized attribute keeps a record's value with probability p and
otherwise moves it to one of the other categories, uniformly (Eq. 1). The
keep probabilities are published (they are the method's parameters); the
coin flips use the secret seed.

The protector either gives the keep probabilities, or a target ``l`` (every
record's attribute disclosure risk at most 1/l) and a scope (``qi``,
``sensitive``, ``both``: which attributes to randomize). In the second case
:func:`optimal_keep_probabilities` finds the least distorting ones (Problem 1,
Result 2): minimize ``J = prod ||P_i^{-1}||_F^2 / d_i`` under the risk
constraint; infeasible targets are reported as such (Property 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from publisher.methods.base import Method, MethodResult, fail, parse_names, parse_per_attribute
from publisher.methods.frames import category_positions
from verifier.core.validation import as_generator
from verifier.attacks.disclosure import (
    chi_square,
    estimate_distribution,
    expected_squared_error,
    kl_divergence,
    rr_risk,
    utility_cost,
)
from verifier.data.schema import Schema
from verifier.text import number

__all__ = ["RandomizedResponse", "OptimalKeep", "optimal_keep_probabilities", "contingency"]

SCOPES = ("qi", "sensitive", "both")


@dataclass(frozen=True)
class OptimalKeep:
    """The result of the parameter search: keep probabilities, J and the largest risk they give."""

    p_qi: tuple[float, ...]
    p_s: float
    utility_cost: float
    max_risk: float
    feasible: bool
    reason: str = ""


def _max_risk(pi: np.ndarray, p_qi: Sequence[float], p_s: float) -> float:
    return float(rr_risk(pi, p_qi, p_s).max())


def optimal_keep_probabilities(pi: np.ndarray, scope: str, l: float) -> OptimalKeep:  # noqa: E741 (the paper's l)
    """Problem 1 with squared Euclidean utility: the largest keep probabilities with max risk <= 1/l.

    ``pi``: proportions, shape ``(d_1..d_m, d_s)``. Follows spec section 11:
    return p = 1 if the target already holds; report infeasible if it fails
    even at p = 1/d (Property 1); bisect with one parameter (the risk is
    monotone); SLSQP on log J with several starts otherwise. Only cells whose
    unrandomized risk exceeds 1/l can ever violate the target (the risk never
    grows as p falls towards 1/d), so only they are constraints.
    """
    if scope not in SCOPES:
        raise fail(f"randomized_response: scope must be one of {', '.join(SCOPES)}. Got {scope!r}.")
    if not (isinstance(l, (int, float)) and math.isfinite(l) and l >= 1):
        raise fail(f"randomized_response: l must be a number >= 1 (the target risk is 1/l). Got {l!r}.")
    tau = 1.0 / l
    dims = pi.shape
    m = len(dims) - 1
    free_qi = scope in ("qi", "both")
    free_s = scope in ("sensitive", "both")

    def unpack(x: Sequence[float]) -> tuple[list[float], float]:
        it = iter(x)
        p_qi = [next(it) if free_qi else 1.0 for _ in range(m)]
        p_s = next(it) if free_s else 1.0
        return p_qi, p_s

    lows = [1.0 / d for d in dims[:m]] * free_qi + [1.0 / dims[-1]] * free_s
    n_free = len(lows)
    sizes = list(dims[:m]) * free_qi + [dims[-1]] * free_s

    def cost(x: Sequence[float]) -> float:
        return utility_cost(sizes, x)

    top = _max_risk(pi, [1.0] * m, 1.0)
    if top <= tau + 1e-12:
        return OptimalKeep(tuple([1.0] * m), 1.0, 1.0, top, True)
    bottom = _max_risk(pi, *unpack(lows))
    if bottom > tau + 1e-12 or n_free == 0:
        return OptimalKeep(tuple(unpack(lows)[0]), unpack(lows)[1], math.inf, bottom, False,
                           f"even the most randomization ({scope}) leaves a risk of {number(bottom)} > 1/l = {number(tau)}")
    if n_free == 1:
        lo, hi = lows[0], 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if _max_risk(pi, *unpack([mid])) <= tau:
                lo = mid
            else:
                hi = mid
        p_qi, p_s = unpack([lo])
        return OptimalKeep(tuple(p_qi), p_s, cost([lo]), _max_risk(pi, p_qi, p_s), True)
    # several parameters: constraints on the cells that can exceed tau
    mask = rr_risk(pi, [1.0] * m, 1.0) > tau

    def margins(x: np.ndarray) -> np.ndarray:
        return tau - rr_risk(pi, *unpack(np.clip(x, lows, 1.0)))[mask]

    from scipy.optimize import minimize  # late: 0.3 s of imports that every other method's release would pay

    eps = 1e-6
    bounds = [(lo + eps, 1.0) for lo in lows]
    best = None
    starts = [np.full(n_free, 0.999), np.array([(lo + 1) / 2 for lo in lows]), np.array([lo + 0.2 * (1 - lo) for lo in lows])]
    for start in starts:
        result = minimize(lambda x: math.log(cost(np.clip(x, [b[0] for b in bounds], 1.0))), start, method="SLSQP",
                          bounds=bounds, constraints=[{"type": "ineq", "fun": margins}],
                          options={"maxiter": 300, "ftol": 1e-12})
        x = np.clip(result.x, [b[0] for b in bounds], 1.0)
        x = _make_feasible(x, lows, lambda y: margins(y).min() >= -1e-10)
        if x is None:
            continue
        if best is None or cost(x) < cost(best):
            best = x
    if best is None:  # the uniform point is feasible (checked above); fall back to it
        best = np.array(lows) + eps
    p_qi, p_s = unpack(best)
    return OptimalKeep(tuple(float(p) for p in p_qi), float(p_s), cost(best), _max_risk(pi, p_qi, p_s), True)


def _make_feasible(x: np.ndarray, lows: Sequence[float], ok) -> np.ndarray | None:
    """Move x towards the uniform point until the constraints hold (they hold there)."""
    if ok(x):
        return x
    lows = np.array(lows) + 1e-9
    lo, hi = 0.0, 1.0  # fraction of the way from x to the uniform point
    if not ok(lows):
        return None
    for _ in range(60):
        mid = (lo + hi) / 2
        if ok(x + mid * (lows - x)):
            hi = mid
        else:
            lo = mid
    return x + hi * (lows - x)


def contingency(table: pd.DataFrame, schema: Schema, qi: Sequence[str], sensitive: str) -> np.ndarray:
    """``pi``: proportions of records per (QI categories..., sensitive category), schema category order."""
    names = [*qi, sensitive]
    dims = [len(schema[n].categories) for n in names]
    index = np.zeros(len(table), dtype=np.int64)
    for n, d in zip(names, dims):
        index = index * d + category_positions(table[n], schema[n].categories, n)
    counts = np.bincount(index, minlength=int(np.prod(dims))).reshape(dims)
    return counts / max(len(table), 1)


def _parse_scope(name: str, text: str) -> str:
    return text.strip()


def _parse_l(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise fail(f"parameter {name}: {text!r} is not a number") from None


class RandomizedResponse(Method):
    """Randomized response (paper 000): per attribute, keep with probability p, else another category uniformly.

    Parameters: ``keep_probabilities`` (``0.8`` for every randomized
    attribute of the scope, or ``age:0.8,disease:0.7``), or ``l`` and
    ``scope`` to compute the utility-optimal ones. The QI attributes are the
    schema's categorical quasi-identifiers, the sensitive one its single
    categorical sensitive attribute. Secret draws: the coin flips.
    """

    name = "randomized_response"
    kinds = ("ordinal", "nominal")
    parsers = {"keep_probabilities": parse_per_attribute, "l": _parse_l, "scope": _parse_scope,
               "attributes": parse_names}
    seed_use = "the coin flips of every randomized value"

    def __init__(self, *, keep_probabilities: float | Mapping[str, float] | None = None, l: float | None = None,
                 scope: str | None = None, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        if (keep_probabilities is None) == (l is None):
            raise fail("randomized_response: give keep_probabilities, or l (target risk 1/l) with scope", "PARAMETER_MISSING")
        if l is not None:
            if scope is None:
                scope = "both"
            if scope not in SCOPES:
                raise fail(f"randomized_response: scope must be one of {', '.join(SCOPES)}. Got {scope!r}.")
            if not (math.isfinite(l) and l >= 1):
                raise fail(f"randomized_response: l must be a number >= 1. Got {l!r}.")
        values = (list(keep_probabilities.values()) if isinstance(keep_probabilities, Mapping)
                  else [keep_probabilities] if keep_probabilities is not None else [])
        if any(not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 < v <= 1 for v in values):
            raise fail(f"randomized_response: a keep probability lies in (0, 1]. Got {keep_probabilities!r}.")
        if values and all(v == 1 for v in values) and not allow_degenerate:
            raise fail("randomized_response: keep probability 1 randomizes nothing and gives no protection; "
                        "pass allow_degenerate to run it anyway", "PARAMETER_DEGENERATE")
        self.keep_probabilities = keep_probabilities
        self.l, self.scope = l, scope
        self.attributes = tuple(attributes) if attributes is not None else None
        self.allow_degenerate = allow_degenerate
        self._used: dict[str, float] | None = None

    def parameters(self) -> dict[str, Any]:
        out: dict[str, Any] = {"keep_probabilities": self._used if self._used is not None else self.keep_probabilities}
        if self.l is not None:
            out.update(l=self.l, scope=self.scope)
        return out

    def _roles(self, schema: Schema) -> tuple[list[str], str | None]:
        cats = [a for a in schema.attributes if a.kind in self.kinds]
        if self.attributes is not None:
            cats = [a for a in cats if a.name in self.attributes]
        qi = [a.name for a in cats if a.role == "quasi_identifier"]
        sens = [a.name for a in cats if a.role == "sensitive"]
        if len(sens) > 1:
            qis = [a.name for a in schema.attributes if a.kind in self.kinds and a.role == "quasi_identifier"]
            raise fail(f"randomized_response handles one sensitive attribute, and {', '.join(sens)} are; name the "
                       f"one to use with attributes=, with the quasi-identifiers to randomize beside it (for example "
                       f"attributes={','.join([sens[0], *qis[:2]])})", "METHOD_NOT_APPLICABLE")
        return qi, (sens[0] if sens else None)

    def _what_works(self, schema: Schema, qi: list[str], sens: str | None) -> str:
        """Why l cannot be aimed at with these attributes, and what can: the schema's categorical attributes by
        role, and the scope that needs no quasi-identifier."""
        cats = [a for a in schema.attributes if a.kind in self.kinds]
        all_qi = [a.name for a in cats if a.role == "quasi_identifier"]
        all_sens = [a.name for a in cats if a.role == "sensitive"]
        if sens is None:
            if not all_sens:
                return ("randomized_response with l needs a categorical sensitive attribute, and the schema marks "
                        "none: give one the role sensitive and a category list")
            return (f"randomized_response with l needs a categorical sensitive attribute among its attributes; "
                    f"the schema's are {', '.join(all_sens)}: add one to attributes=")
        if not all_qi:
            return (f"randomized_response with l and scope {self.scope} randomizes quasi-identifiers, and the schema "
                    f"has no categorical one: use scope=sensitive to randomize {sens} alone")
        return (f"randomized_response with l and scope {self.scope} randomizes quasi-identifiers, and attributes= "
                f"names none; the schema's categorical ones are {', '.join(all_qi)}")

    def feasible_settings(self, table, schema: Schema, sens: str, *, most: int = 3) -> list[str]:
        """Settings that meet this l on this table: attributes= (the sensitive one with the quasi-identifiers of
        fewest categories, one to three) and scope=, found by trying them in that order; at most ``most``."""
        cats = [a for a in schema.attributes if a.kind in self.kinds and a.role == "quasi_identifier"
                and a.categories is not None]
        by_size = [a.name for a in sorted(cats, key=lambda a: len(a.categories))]
        tries = [([], "sensitive")] + [(by_size[:k], scope) for k in range(1, min(3, len(by_size)) + 1)
                                        for scope in ("both", "qi")]
        found = []
        for qi, scope in tries:
            pi = contingency(table, schema, qi, sens)
            if optimal_keep_probabilities(pi, scope, self.l).feasible:
                found.append(f"attributes={','.join([sens, *qi])} scope={scope}")
                if len(found) == most:
                    break
        return found

    def _with_settings(self, message: str, table, schema: Schema, sens: str | None) -> str:
        """``message``, then the settings that work on this table (or that none of those tried does)."""
        if sens is None:
            return message
        works = self.feasible_settings(table, schema, sens)
        if works:
            return f"{message}. On this table l = {self.l:g} is met with: " + "; ".join(works)
        return (f"{message}. No setting tried meets l = {self.l:g} on this table ({sens} alone, or with up to "
                "three quasi-identifiers, every scope): choose a smaller l")

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        rng = as_generator(random_state)
        qi, sens = self._roles(schema)
        for name in qi + ([sens] if sens else []):
            if schema[name].categories is None:
                raise fail(f"randomized_response: attribute {name!r} has no category list", "SCHEMA_INVALID")
        metrics: dict[str, Any] = {}
        if self.l is not None:
            if sens is None or not qi and self.scope != "sensitive":
                raise fail(self._with_settings(self._what_works(schema, qi, sens), table, schema, sens),
                           "METHOD_NOT_APPLICABLE")
            pi = contingency(table, schema, qi, sens)
            found = optimal_keep_probabilities(pi, self.scope, self.l)
            if not found.feasible:
                raise fail(self._with_settings(f"randomized_response: the target l = {self.l:g} cannot be met with "
                                               f"scope {self.scope}: {found.reason}", table, schema, sens),
                           "TARGET_INFEASIBLE")
            used = {n: p for n, p in zip(qi, found.p_qi)}
            used[sens] = found.p_s
            if all(p == 1.0 for p in used.values()) and not self.allow_degenerate:
                raise fail(f"randomized_response: the table already meets l = {self.l:g} without randomization; "
                            "pass allow_degenerate to release it unrandomized", "PARAMETER_DEGENERATE")
        else:
            names = qi + ([sens] if sens else [])
            if isinstance(self.keep_probabilities, Mapping):
                unknown = [n for n in self.keep_probabilities if n not in schema.names]
                if unknown:
                    raise fail(f"randomized_response: {unknown[0]!r} is not an attribute of the table")
                used = {n: float(self.keep_probabilities.get(n, 1.0)) for n in names}
                used.update({n: float(p) for n, p in self.keep_probabilities.items() if n not in used})
            else:
                used = {n: float(self.keep_probabilities) for n in names}
        for n, p in used.items():
            d = len(schema[n].categories or ())
            if p < 1.0 / d - 1e-12:
                raise fail(f"randomized_response: keep probability of {n!r} is {p:g}, below 1/{d} "
                            "(below it the risk rises again)")
        self._used = used
        out = table.copy()
        for n, p in used.items():
            if p >= 1.0:
                continue
            cats = list(schema[n].categories)
            d = len(cats)
            pos = category_positions(table[n], cats, n)
            move = rng.random(len(pos)) >= p
            shift = rng.integers(1, d, size=len(pos)) if d > 1 else np.zeros(len(pos), dtype=np.int64)
            new = np.where(move, (pos + shift) % d, pos)
            out[n] = np.array(cats, dtype=object)[new]
        if sens is not None:
            pi = contingency(table, schema, qi, sens)
            p_qi, p_s = [used.get(n, 1.0) for n in qi], used.get(sens, 1.0)
            risk = rr_risk(pi, p_qi, p_s)
            metrics["attribute_disclosure"] = {sens: {"max": float(risk.max()), "mean": float(np.sum(pi * risk))}}
            ps = [*p_qi, p_s]
            metrics["utility_cost_J"] = utility_cost(pi.shape, ps)
            if all(p > 1.0 / d + 1e-9 for d, p in zip(pi.shape, ps)):
                metrics["expected_squared_error"] = expected_squared_error(pi, ps, len(table))
                lam = contingency(out, schema, qi, sens)
                est = estimate_distribution(lam, ps)
                kl = kl_divergence(est, pi)  # infinite where the estimate puts mass on an empty original cell
                metrics["reconstruction"] = {"kl": kl if math.isfinite(kl) else None, "chi_square": chi_square(est, pi)}
        metrics["keep_probabilities"] = used
        return MethodResult(out, metrics)
