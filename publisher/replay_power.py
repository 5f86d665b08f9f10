"""How small a lie ``publisher replay`` can catch on the release at hand: its power, measured by its own runs.

"Plausible" means only that the release looks like a run of its published
methods. Whether a different parameter would have looked different is
another question, and the answer depends on the release: reverse mapping
after noise puts the original values back, so a noise level 6 times the one
used can look the same. For each published parameter that sets how much a
method changes (:data:`SCALED`), the replay runs the chain again with the
parameter multiplied and divided by a factor, as if the publisher had used
that value, and counts how often its own test (the same statistics, p-values
against the published value's runs, Holm at alpha) rejects: the power at that
factor. The power is measured at 2 first, then at smaller factors while both
directions reach 80%, or at larger ones while they do not.

A release is **inconclusive** when, for some parameter, the published value
and a factor of 2 from it cannot be told apart (power below 80% in either
direction): the replay then does not say "plausible".
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from verifier.releases.family import derived_parameters

__all__ = ["SCALED", "FACTORS", "NEEDED_POWER", "ParameterPower", "scaled_methods", "measure_power"]

#: the power at which a factor counts as detected
NEEDED_POWER = 0.8

#: method -> the parameters whose size sets how much it changes the data (the ones a dishonest manifest would shade)
SCALED = {"additive_noise": ("relative_sd",), "rank_swapping": ("p",), "microaggregation": ("k",),
          "sd_k_anonymity": ("k",), "random_attribute_replacement": ("k",), "randomized_response": ("l",),
          "multi_sensitive_generalization": ("k",)}
#: the factors tried, smallest first; 2 is always measured
FACTORS = (1.25, 1.5, 2.0, 4.0, 8.0)
#: where a parameter must stay for the method to run
_BOUNDS = {"p": (0.0, 100.0), "l": (1.0, math.inf)}


@dataclass(frozen=True)
class ParameterPower:
    """The replay's power on one published parameter: the share of runs it rejects, per factor and direction."""

    parameter: str
    published: Any
    power: dict[str, float | None] = field(default_factory=dict)
    """``x2`` and ``/2`` and so on -> the share of runs rejected (None: that value cannot be run)."""

    def _both(self, factor: float) -> list[float]:
        return [p for p in (self.power.get(f"x{factor:g}"), self.power.get(f"/{factor:g}")) if p is not None]

    @property
    def smallest_factor(self) -> float | None:
        """The smallest factor detected with at least 80% power in every direction it can be run; None if none."""
        found = [f for f in FACTORS if self._both(f) and min(self._both(f)) >= NEEDED_POWER]
        return min(found) if found else None

    @property
    def inconclusive(self) -> bool:
        """A factor of 2 either way goes undetected too often (or cannot be run at all)."""
        both = self._both(2.0)
        return not both or min(both) < NEEDED_POWER

    def to_json(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "published": self.published, "power": self.power,
                "smallest_factor_detected": self.smallest_factor, "inconclusive": self.inconclusive}


def _scale(value: Any, factor: float, name: str) -> Any:
    """``value`` times ``factor`` as the method takes it, or None when that is no other runnable value."""
    if isinstance(value, Mapping):
        scaled = {k: _scale(v, factor, name) for k, v in value.items()}
        return None if any(v is None for v in scaled.values()) else scaled
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0:
        return None
    new: float | int = value * factor
    if isinstance(value, int):
        new = max(1, int(round(new)))
        if new == value:
            return None
    low, high = _BOUNDS.get(name, (0.0, math.inf))
    return new if low <= new <= high else None


def scaled_methods(methods: Sequence[Mapping[str, Any]], step: int, name: str,
                   factor: float) -> list[dict[str, Any]] | None:
    """The published chain with one parameter multiplied by ``factor`` (its derived parameters dropped, to be
    derived again from the scaled value), or None when the scaled value cannot be run."""
    out = copy.deepcopy([dict(m) for m in methods])
    params = dict(out[step]["parameters"])
    value = _scale(params.get(name), factor, name)
    if value is None:
        return None
    for derived in derived_parameters(out[step]):
        params.pop(derived, None)
    params[name] = value
    out[step]["parameters"] = params
    return out


def _targets(methods: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    return [(i, name) for i, step in enumerate(methods) for name in SCALED.get(str(step.get("method")), ())
            if step["parameters"].get(name) is not None]


def measure_power(methods: Sequence[Mapping[str, Any]], rejects: Callable[[list[dict[str, Any]], int], float | None],
                  ) -> list[ParameterPower]:
    """The power on every scaled parameter; ``rejects(chain, seed)`` is the share of the replay's runs of
    ``chain`` that its test rejects (None when the chain cannot run on this table)."""
    out = []
    for step, name in _targets(methods):
        power: dict[str, float | None] = {}

        def measure(factor: float) -> list[float]:
            for label, f in ((f"x{factor:g}", factor), (f"/{factor:g}", 1 / factor)):
                chain = scaled_methods(methods, step, name, f)
                power[label] = None if chain is None else rejects(chain, len(power))
            return [p for p in (power[f"x{factor:g}"], power[f"/{factor:g}"]) if p is not None]

        found = measure(2.0)
        order = (1.5, 1.25) if found and min(found) >= NEEDED_POWER else (4.0, 8.0)
        for factor in order:
            found = measure(factor)
            if (order[0] < 2) != bool(found and min(found) >= NEEDED_POWER):
                break
        out.append(ParameterPower(f"methods.{step}.parameters.{name}", methods[step]["parameters"][name],
                                  dict(sorted(power.items(), key=lambda kv: (kv[0][0], float(kv[0][1:]))))))
    return out
