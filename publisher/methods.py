"""Anonymization methods and the framework they share (SPEC section 7).

Every method is a small object:

- built with keyword-only parameters, validated at once (a bad value is an
  :class:`~verifier.errors.InvalidInputError`, exit code 3 on the command
  line);
- ``parameters()`` returns every parameter, never a seed: it goes into the
  release's manifest (paper 003, Def. 4: only the randomness stays secret);
- ``apply(table, schema, *, random_state, original)`` returns the anonymized
  table, rows in input order, and the method's own metrics.

A parameter that gives no protection (noise sd 0, k = 1, p = 0, reverse mapping
of the original onto itself) is refused unless ``allow_degenerate=True``.

:func:`anonymize` runs a chain of methods with one generator and then shuffles
the rows with it: the published order says nothing about the original order.
The un-shuffled result and the permutation stay in the protector's process for
the assessment.

Tables are pandas DataFrames in schema order: numeric columns float64,
ordinal and nominal columns their category text.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from publisher._kernels import mdav_groups, rank_swap_partners
from publisher._random import noise_generator
from verifier._validation import as_generator
from verifier.errors import InvalidInputError
from verifier.hierarchy import number_label
from verifier.ranks import reverse_map
from verifier.schema import Schema

__all__ = [
    "Method",
    "MethodResult",
    "AdditiveNoise",
    "RankSwapping",
    "Microaggregation",
    "ReverseMapping",
    "METHODS",
    "known_methods",
    "make_method",
    "Anonymized",
    "anonymize",
    "frame_rows",
    "frame_to_keys",
    "keys_to_frame",
]


def _fail(message: str, reason: str = "PARAMETER_INVALID") -> InvalidInputError:
    return InvalidInputError(message, reason=reason)


# ----------------------------------------------------------------------------- tables


def frame_to_keys(frame: pd.DataFrame, schema: Schema) -> np.ndarray:
    """``(n, m)`` rank keys: numeric values, or category positions."""
    out = np.empty((len(frame), len(schema)), dtype=np.float64)
    for j, attr in enumerate(schema.attributes):
        col = frame[attr.name]
        if attr.kind == "numeric":
            out[:, j] = col.to_numpy(dtype=np.float64)
        else:
            index = {c: k for k, c in enumerate(attr.categories or ())}
            try:
                out[:, j] = [index[c] for c in col]
            except KeyError as exc:
                raise _fail(f"column {attr.name!r}: {exc.args[0]!r} is not one of its categories", "CATEGORY_UNKNOWN") from None
    return out


def frame_rows(frame: pd.DataFrame, schema: Schema) -> list[list[str]]:
    """The rows of a table as CSV cells, exactly as a release file holds them."""
    cols = []
    for attr in schema.attributes:
        col = frame[attr.name]
        # a generalized numeric cell ("[25,45]") is already text
        cols.append([v if isinstance(v, str) else number_label(float(v)) for v in col] if attr.kind == "numeric"
                    else [str(v) for v in col])
    return [list(r) for r in zip(*cols)]


def keys_to_frame(keys: np.ndarray, schema: Schema) -> pd.DataFrame:
    """The inverse of :func:`frame_to_keys`."""
    data = {}
    for j, attr in enumerate(schema.attributes):
        if attr.kind == "numeric":
            data[attr.name] = keys[:, j].astype(np.float64)
        else:
            cats = np.array(attr.categories, dtype=object)
            data[attr.name] = cats[keys[:, j].astype(np.int64)]
    return pd.DataFrame(data)


# ----------------------------------------------------------------------------- parameters


def _parse_float(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _fail(f"parameter {name}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise _fail(f"parameter {name}: {text!r} is not a finite number")
    return value


def _parse_int(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _fail(f"parameter {name}: {text!r} is not an integer") from None


def _parse_bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise _fail(f"parameter {name}: {text!r} is not true or false")


def _parse_names(name: str, text: str) -> tuple[str, ...]:
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if not names:
        raise _fail(f"parameter {name}: give one or more attribute names, comma-separated")
    return names


def _parse_per_attribute(name: str, text: str) -> float | dict[str, float]:
    """``0.5`` for every attribute, or ``age:0.5,income:0.2``."""
    if ":" not in text:
        return _parse_float(name, text)
    out: dict[str, float] = {}
    for part in text.split(","):
        attr, sep, value = part.partition(":")
        if not sep or not attr.strip():
            raise _fail(f"parameter {name}: write attribute:value pairs, comma-separated; got {part!r}")
        out[attr.strip()] = _parse_float(name, value)
    return out


@dataclass(frozen=True)
class MethodResult:
    """The anonymized table (rows in input order) and the method's own figures."""

    table: pd.DataFrame
    metrics: dict[str, Any] = field(default_factory=dict)


class Method(ABC):
    """Base of every method. Subclasses set ``name``, ``kinds``, ``parsers`` and ``seed_use``."""

    name: ClassVar[str]
    #: column kinds the method changes; columns of other kinds pass through
    kinds: ClassVar[tuple[str, ...]]
    #: how to read each parameter from ``name=value`` text
    parsers: ClassVar[dict[str, Callable[[str, str], Any]]]
    #: which random draws use the secret seed (documentation, and ``publisher methods``)
    seed_use: ClassVar[str]

    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """Every parameter except random seeds (it goes into the manifest)."""

    @abstractmethod
    def apply(self, table: pd.DataFrame, schema: Schema, *, random_state, original: pd.DataFrame | None = None) -> MethodResult:
        """The anonymized table, rows in input order, and the method's own metrics."""

    def _targets(self, schema: Schema, attributes: Sequence[str] | None) -> list[int]:
        """Column indices this method changes: the named ones, or every column of a supported kind."""
        names = schema.names
        if attributes is None:
            cols = [j for j, a in enumerate(schema.attributes) if a.kind in self.kinds]
            if not cols:
                raise _fail(f"{self.name} changes {' or '.join(self.kinds)} columns and the table has none",
                            "METHOD_NOT_APPLICABLE")
            return cols
        cols = []
        for a in attributes:
            if a not in names:
                raise _fail(f"{self.name}: attribute {a!r} is not in the table", "PARAMETER_INVALID")
            if schema[a].kind not in self.kinds:
                raise _fail(f"{self.name} cannot change {schema[a].kind} attribute {a!r}", "METHOD_NOT_APPLICABLE")
            cols.append(names.index(a))
        return cols


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
    parsers = {"relative_sd": _parse_per_attribute, "correlated": _parse_bool, "attributes": _parse_names}
    seed_use = "the noise values"

    def __init__(self, *, relative_sd: float | Mapping[str, float], correlated: bool = False,
                 attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        values = list(relative_sd.values()) if isinstance(relative_sd, Mapping) else [relative_sd]
        if not values or any(not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 for v in values):
            raise _fail(f"additive_noise: relative_sd must be a non-negative number (per attribute or for all). Got {relative_sd!r}.")
        if correlated and isinstance(relative_sd, Mapping):
            raise _fail("additive_noise: correlated noise takes one relative_sd for all attributes")
        if all(v == 0 for v in values) and not allow_degenerate:
            raise _fail("additive_noise: relative_sd = 0 adds no noise and gives no protection; "
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
                raise _fail(f"additive_noise: relative_sd names {unknown[0]!r}, which it does not change")
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
        out = table.copy()
        for k, n in enumerate(names):
            out[n] = x[:, k] + noise[:, k]
        realized = _column_sd(noise)
        return MethodResult(out, {
            "attributes": names,
            "noise_sd": {n: float(v) for n, v in zip(names, realized)},
            "realized_relative_sd": {n: (float(v / s) if s > 0 else None) for n, v, s in zip(names, realized, sd)},
        })


class RankSwapping(Method):
    """Rank swapping (Moore 1996): swap values whose ranks are at most p% of n apart.

    Per attribute, in increasing rank order, each value not yet swapped is
    exchanged with a value chosen uniformly among those not yet swapped whose
    rank is higher by at most ``floor(p n / 100)``. Every column keeps its
    multiset of values exactly. Secret draws: the choice of partners.
    """

    name = "rank_swapping"
    kinds = ("numeric", "ordinal")
    parsers = {"p": _parse_float, "attributes": _parse_names}
    seed_use = "the choice of swap partners"

    def __init__(self, *, p: float, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        if not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0 or p > 100:
            raise _fail(f"rank_swapping: p must be in (0, 100], a percentage of the number of records. Got {p!r}.")
        if p == 0 and not allow_degenerate:
            raise _fail("rank_swapping: p = 0 swaps nothing and gives no protection; "
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


class Microaggregation(Method):
    """MDAV microaggregation: groups of k to 2k-1 similar records share their mean.

    Records are grouped by MDAV (Domingo-Ferrer & Torra) on the attributes
    standardized to mean 0 and sd 1; each value is replaced by its group's
    mean on the original scale. Deterministic: no secret draw (the release's
    row shuffle still uses the seed).
    """

    name = "microaggregation"
    kinds = ("numeric",)
    parsers = {"k": _parse_int, "attributes": _parse_names}
    seed_use = "none (MDAV is deterministic)"

    def __init__(self, *, k: int, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise _fail(f"microaggregation: k must be a positive integer. Got {k!r}.")
        if k == 1 and not allow_degenerate:
            raise _fail("microaggregation: k = 1 leaves every record alone and gives no protection; "
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
            raise _fail(f"microaggregation: k = {self.k} is larger than the number of records ({n})")
        sd = x.std(axis=0)
        z = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        group = mdav_groups(np.ascontiguousarray(z), self.k)
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


class ReverseMapping(Method):
    """Release Z instead of Y: Y's ranks carrying X's values (paper 003, Algorithm 1).

    A final step after any method: the release becomes a pure permutation of
    the original values per attribute, the form whose protection each subject
    can check exactly. Secret draws: the order of tied values of Y.
    """

    name = "reverse_mapping"
    kinds = ("numeric", "ordinal")
    parsers = {"attributes": _parse_names}
    seed_use = "the order among tied anonymized values"

    def __init__(self, *, attributes: Sequence[str] | None = None, allow_degenerate: bool = False):
        self.attributes = tuple(attributes) if attributes is not None else None
        self.allow_degenerate = allow_degenerate

    def parameters(self) -> dict[str, Any]:
        return {"attributes": list(self.attributes) if self.attributes is not None else None}

    def apply(self, table, schema, *, random_state, original=None) -> MethodResult:
        if original is None or (original is table and not self.allow_degenerate):
            raise _fail("reverse_mapping maps an anonymized table back onto the original: run it after another "
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


METHODS: dict[str, type[Method]] = {
    cls.name: cls for cls in (AdditiveNoise, RankSwapping, Microaggregation, ReverseMapping)
}


def known_methods() -> dict[str, type[Method]]:
    """Every method by name. The categorical ones live in their own modules (which import this
    one), so they join the registry on first use rather than at import."""
    from publisher.multi_sensitive import MultiSensitiveGeneralization
    from publisher.random_replacement import RandomAttributeReplacement
    from publisher.randomized_response import RandomizedResponse
    from publisher.sd_anonymity import SDKAnonymity

    for cls in (RandomizedResponse, RandomAttributeReplacement, SDKAnonymity, MultiSensitiveGeneralization):
        METHODS.setdefault(cls.name, cls)
    return METHODS


def make_method(name: str, params: Mapping[str, Any] | None = None, *, allow_degenerate: bool = False) -> Method:
    """A method by name; ``params`` values may be text (``name=value`` from a command line) or typed."""
    known_methods()
    if name not in METHODS:
        raise _fail(f"unknown method {name!r}; known: {', '.join(sorted(METHODS))}", "METHOD_UNKNOWN")
    cls = METHODS[name]
    typed = {}
    for key, value in (params or {}).items():
        if key not in cls.parsers:
            known = ", ".join(sorted(cls.parsers)) or "none"
            raise _fail(f"{name} has no parameter {key!r} (its parameters: {known})", "PARAMETER_UNKNOWN")
        typed[key] = cls.parsers[key](key, value) if isinstance(value, str) else value
    try:
        return cls(**typed, allow_degenerate=allow_degenerate)
    except TypeError as exc:
        missing = str(exc).split("argument")[-1].strip(": '")
        raise _fail(f"{name} needs the parameter {missing}", "PARAMETER_MISSING") from None


@dataclass(frozen=True, eq=False)
class Anonymized:
    """A chain's result.

    ``table`` is in the original row order (the protector's, for assessment);
    ``released`` is the same rows shuffled, ``released.iloc[i]`` being
    ``table.iloc[order[i]]``. ``steps`` lists each method's name, parameters
    and metrics, in order.
    """

    table: pd.DataFrame
    released: pd.DataFrame
    order: np.ndarray
    steps: list[dict[str, Any]]
    randomness: str = ""
    """Which generator drew the randomness (public; the key or seed never is)."""

    @property
    def parameters(self) -> list[dict[str, Any]]:
        return [{"method": s["method"], "parameters": s["parameters"]} for s in self.steps]


def anonymize(table: pd.DataFrame, schema: Schema, methods: Sequence[Method], *, random_state) -> Anonymized:
    """Run ``methods`` in order on ``table``, then shuffle the rows; one generator for all.

    ``random_state`` ``None`` (production) draws from ChaCha20 keyed by the
    operating system; an int seeds PCG64 to reproduce a run (``publisher._random``).
    """
    if not methods:
        raise _fail("give at least one method", "METHOD_UNKNOWN")
    rng, randomness = noise_generator(random_state)
    current = table
    steps = []
    for method in methods:
        result = method.apply(current, schema, random_state=rng, original=table)
        current = result.table.reset_index(drop=True)
        steps.append({"method": method.name, "parameters": method.parameters(), "metrics": result.metrics})
    order = rng.permutation(len(current))
    released = current.iloc[order].reset_index(drop=True)
    return Anonymized(table=current, released=released, order=order, steps=steps, randomness=randomness)
