"""Every anonymization method by name, and a method made from ``name=value`` parameters."""

from __future__ import annotations

from typing import Any, Mapping

from publisher.methods.additive_noise import AdditiveNoise
from publisher.methods.base import Method, fail
from publisher.methods.m_invariant import MInvariant
from publisher.methods.microaggregation import Microaggregation
from publisher.methods.names import NUMERIC_METHODS
from publisher.methods.multi_sensitive import MultiSensitiveGeneralization
from publisher.methods.random_replacement import RandomAttributeReplacement
from publisher.methods.randomized_response import RandomizedResponse
from publisher.methods.rank_swapping import RankSwapping
from publisher.methods.reverse_mapping import ReverseMapping
from publisher.methods.sd_anonymity import SDKAnonymity

__all__ = ["METHODS", "NUMERIC_METHODS", "known_methods", "make_method"]

#: the rank-based methods of paper 003's setting, then the categorical ones of papers 000, 001, 002 and 004
METHODS: dict[str, type[Method]] = {
    cls.name: cls
    for cls in (AdditiveNoise, RankSwapping, Microaggregation, ReverseMapping, RandomizedResponse,
                RandomAttributeReplacement, SDKAnonymity, MultiSensitiveGeneralization, MInvariant)
}


def known_methods() -> dict[str, type[Method]]:
    """Every method by name."""
    return METHODS


def make_method(name: str, params: Mapping[str, Any] | None = None, *, allow_degenerate: bool = False) -> Method:
    """A method by name; ``params`` values may be text (``name=value`` from a command line) or typed."""
    if name not in METHODS:
        raise fail(f"unknown method {name!r}; known: {', '.join(sorted(METHODS))}", "METHOD_UNKNOWN")
    cls = METHODS[name]
    typed = {}
    for key, value in (params or {}).items():
        if key not in cls.parsers:
            known = ", ".join(sorted(cls.parsers)) or "none"
            raise fail(f"{name} has no parameter {key!r} (its parameters: {known})", "PARAMETER_UNKNOWN")
        typed[key] = cls.parsers[key](key, value) if isinstance(value, str) else value
    try:
        return cls(**typed, allow_degenerate=allow_degenerate)
    except TypeError as exc:
        missing = str(exc).split("argument")[-1].strip(": '")
        raise fail(f"{name} needs the parameter {missing}", "PARAMETER_MISSING") from None
