"""What every anonymization method shares (SPEC section 7): the Method ABC, its result, parameter parsing.

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

Tables are pandas DataFrames in schema order: numeric columns float64,
ordinal and nominal columns their category text.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Sequence

import pandas as pd

from verifier.data.schema import Schema
from verifier.errors import InvalidInputError
from verifier.text import literal

__all__ = ["Method", "MethodResult", "fail", "parse_bool", "parse_float", "parse_int", "parse_names",
           "parse_per_attribute"]


def fail(message: str, reason: str = "PARAMETER_INVALID") -> InvalidInputError:
    return InvalidInputError(message, reason=reason)


# ----------------------------------------------------------------------------- parameters


def parse_float(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise fail(f"parameter {name}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise fail(f"parameter {name}: {text!r} is not a finite number")
    return value


def parse_int(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise fail(f"parameter {name}: {text!r} is not an integer") from None


def parse_bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise fail(f"parameter {name}: {text!r} is not true or false")


def parse_names(name: str, text: str) -> tuple[str, ...]:
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if not names:
        raise fail(f"parameter {name}: give one or more attribute names, comma-separated")
    return names


def parse_per_attribute(name: str, text: str) -> float | dict[str, float]:
    """``0.5`` for every attribute, or ``age:0.5,income:0.2``."""
    if ":" not in text:
        return parse_float(name, text)
    out: dict[str, float] = {}
    for part in text.split(","):
        attr, sep, value = part.partition(":")
        if not sep or not attr.strip():
            raise fail(f"parameter {name}: write attribute:value pairs, comma-separated; got {part!r}")
        if attr.strip() in out:
            raise fail(f"parameter {name}: {literal(attr.strip())} is given twice; give each attribute once")
        out[attr.strip()] = parse_float(name, value)
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
    #: the same table and parameters always give the same rows (only the release's row shuffle is random)
    deterministic: ClassVar[bool] = False
    #: the compiled (numba) kernels it calls: a fresh install compiles them on the first run, which says so
    kernels: ClassVar[tuple] = ()

    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """Every parameter except random seeds (it goes into the manifest)."""

    @abstractmethod
    def apply(self, table: pd.DataFrame, schema: Schema, *, random_state, original: pd.DataFrame | None = None) -> MethodResult:
        """The anonymized table, rows in input order, and the method's own metrics."""

    @classmethod
    def changed_columns(cls, schema: Schema, parameters: Mapping[str, Any]) -> list[str]:
        """The columns a published step of this method changed: its ``attributes``, or every column of its kinds."""
        named = parameters.get("attributes")
        if named is not None:
            return [str(a) for a in named]
        return [a.name for a in schema.attributes if a.kind in cls.kinds]

    def _targets(self, schema: Schema, attributes: Sequence[str] | None) -> list[int]:
        """Column indices this method changes: the named ones, or every column of a supported kind."""
        names = schema.names
        if attributes is None:
            cols = [j for j, a in enumerate(schema.attributes) if a.kind in self.kinds]
            if not cols:
                kinds = sorted({a.kind for a in schema.attributes})
                raise fail(f"{self.name} changes {' or '.join(self.kinds)} columns and the table has none (its "
                           f"columns are {' and '.join(kinds)}); docs/methods.md says which methods change those",
                           "METHOD_NOT_APPLICABLE")
            return cols
        cols = []
        for a in attributes:
            fit = [b.name for b in schema.attributes if b.kind in self.kinds]
            if a not in names:
                raise fail(f"{self.name}: attribute {a!r} is not in the table (those it can change: "
                           f"{', '.join(fit) or 'none'})", "PARAMETER_INVALID")
            if schema[a].kind not in self.kinds:
                raise fail(f"{self.name} cannot change {schema[a].kind} attribute {a!r}; those it can change: "
                           f"{', '.join(fit) or 'none'}", "METHOD_NOT_APPLICABLE")
            cols.append(names.index(a))
        return cols
