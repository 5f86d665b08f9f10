"""Choosing the amount of permutation (SPEC section 8; paper 003, end of section 5.2).

Sweep one parameter of a method over a grid. For each value the code
anonymizes X, then assesses the result: data-set (D, v), the intruder's
confidently linked share, and the utility figures. The result is the
privacy/utility frontier. The chosen value is the least distorting one that
meets the protector's targets.

Every grid value uses the same seed (common random numbers). For additive
noise, the noise at two values then differs only by its scale. The frontier
therefore shows the effect of the parameter, not the luck of separate draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from publisher.degenerate import STRENGTH, degenerate_problems, stronger_values
from publisher.methods import anonymize, frame_to_keys, known_methods, make_method
from verifier.attacks.assessment import assess
from verifier.errors import InvalidInputError
from verifier.releases.family import GENERALIZING
from verifier.data.schema import Schema

__all__ = ["Targets", "Calibration", "calibrate", "check_grid", "plot_frontier", "weakest_sound"]


@dataclass(frozen=True)
class Targets:
    """What the protector requires of a release; ``None`` is no requirement."""

    max_linked_share: float | None = None
    min_distance: int | None = None
    max_distortion: float | None = None

    def met(self, row: Mapping[str, Any]) -> bool:
        ok = True
        if self.max_linked_share is not None:
            ok &= row["confidently_linked_share"] <= self.max_linked_share
        if self.min_distance is not None:
            ok &= row["distance"] >= self.min_distance
        if self.max_distortion is not None:
            ok &= row["distortion"] is not None and row["distortion"] <= self.max_distortion
        return bool(ok)

    def to_json(self) -> dict[str, Any]:
        return {"max_linked_share": self.max_linked_share, "min_distance": self.min_distance,
                "max_distortion": self.max_distortion}


@dataclass(frozen=True)
class Calibration:
    method: str
    parameter: str
    frontier: list[dict[str, Any]]
    chosen: dict[str, Any] | None
    targets: Targets = field(default_factory=Targets)

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "parameter": self.parameter, "targets": self.targets.to_json(),
                "frontier": self.frontier, "chosen": self.chosen}


def check_grid(method: str, parameter: str, *, ranks: bool = True) -> None:
    """Refuse a method the registry lacks (``METHOD_UNKNOWN``) or a parameter it does not take
    (``PARAMETER_UNKNOWN``, listing those it takes), before any work; with ``ranks`` (the frontier of distances
    and links), a method whose cells have no ranks (``METHOD_NOT_APPLICABLE``, pointing to the level targets)."""
    methods = known_methods()
    if method not in methods:
        raise InvalidInputError(f"unknown method {method!r}; known: {', '.join(sorted(methods))}", reason="METHOD_UNKNOWN")
    if parameter not in methods[method].parsers:
        raise InvalidInputError(f"{method} has no parameter {parameter!r} (its parameters: "
                                f"{', '.join(sorted(methods[method].parsers)) or 'none'})", reason="PARAMETER_UNKNOWN")
    if ranks and method in GENERALIZING:  # its cells are intervals and sets: no ranks, so no D and no intruder
        raise InvalidInputError(f"{method} publishes generalized cells, which have no ranks: the frontier's D, linked "
                                "shares and distortion do not apply to it. Sweep it against the level targets "
                                "instead (--target max_exposed=N, max_at_risk_share=S, min_k=K, ...), which judge "
                                "a generalized release by its classes", reason="METHOD_NOT_APPLICABLE")


def calibrate(
    table: pd.DataFrame,
    schema: Schema,
    method: str,
    parameter: str,
    values: Sequence[Any],
    *,
    fixed: Mapping[str, Any] | None = None,
    then: Sequence[str] = (),
    targets: Targets = Targets(),
    seed: int | None = None,
    alpha: float = 0.01,
    samples: int = 10_000,
    allow_degenerate: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Sweep ``parameter`` of ``method`` over ``values``; ``then`` names methods chained after it.

    ``seed`` is the secret seed of the anonymization. With ``None`` it comes
    from OS entropy, once for the whole sweep, and is never reported. The
    intruder's own draws use a fixed public seed, so every grid value is
    judged against the same random records.
    """
    check_grid(method, parameter)
    if not values:
        raise InvalidInputError("the parameter grid is empty", reason="PARAMETER_INVALID")
    entropy = np.random.SeedSequence(seed).entropy
    x = frame_to_keys(table, schema)
    # build every method first, so that a bad grid value fails before any work
    chains = [
        [make_method(method, {**(fixed or {}), parameter: v}, allow_degenerate=allow_degenerate)]
        + [make_method(name, allow_degenerate=allow_degenerate) for name in then]
        for v in values
    ]
    frontier = []
    for i, (value, chain) in enumerate(zip(values, chains)):
        result = anonymize(table, schema, chain, random_state=np.random.default_rng(np.random.SeedSequence(entropy)))
        y = frame_to_keys(result.table, schema)
        a = assess(x, y, schema, paired=True, alpha=alpha, samples=samples, random_state=0).to_json()
        u = a["utility"]
        frontier.append({
            "value": chain[0].parameters()[parameter],
            "distance": a["permuted_privacy"]["distance"],
            "variances": a["permuted_privacy"]["variances"],
            "confidently_linked_share": a["intruder"]["confidently_linked_share"],
            "correct_link_share": a["intruder"]["correct_link_share"],
            "hellinger": a["intruder"]["hellinger"],
            "distortion": u["distortion"],
            "max_abs_correlation_change": u["max_abs_correlation_change"],
            "mean_rank_correlation": _mean([e.get("rank_correlation") for e in u["attributes"].values()]),
        })
        if progress is not None:
            progress(i + 1, len(values))
    for row in frontier:
        row["meets_targets"] = targets.met(row)
    meeting = [r for r in frontier if r["meets_targets"]]
    chosen = min(meeting, key=lambda r: (r["distortion"] if r["distortion"] is not None else np.inf)) if meeting else None
    return Calibration(method=method, parameter=parameter, frontier=frontier, chosen=chosen, targets=targets)


def weakest_sound(table: pd.DataFrame, schema: Schema, methods: Sequence[Any], *, seed: int | None, alpha: float,
                  samples: int) -> tuple[str, Any] | None:
    """The weakest stronger value of the first method's strength parameter whose output is not degenerate
    (:mod:`publisher.degenerate`), as :func:`calibrate` sweeps: one secret draw for every value tried (common
    random numbers), the intruder's own draws public. None where the method has no strength parameter or no
    value tried avoids it. The rest of the chain runs as given.
    """
    first = methods[0]
    parameter = STRENGTH.get(first.name)
    if parameter is None:
        return None
    params = first.parameters()
    entropy = np.random.SeedSequence(seed).entropy
    original = frame_to_keys(table, schema)
    for value in stronger_values(first.name, params[parameter]):
        chain = [make_method(first.name, {**params, parameter: value}), *methods[1:]]
        result = anonymize(table, schema, chain, random_state=np.random.default_rng(np.random.SeedSequence(entropy)))
        y = frame_to_keys(result.released, schema)
        x = original[result.order]
        linked = assess(x, y, schema, paired=True, alpha=alpha, samples=samples, random_state=0).intruder
        if not degenerate_problems(original, x, y, schema, result.parameters, linked.confidently_linked, result.order):
            return parameter, chain[0].parameters()[parameter]
    return None


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def plot_frontier(calibration: Calibration, path: str, *, title: str | None = None) -> None:
    """The frontier as a PNG: distortion against the confidently linked share, one point per value.

    Written atomically; the target share is drawn as a line, the chosen value ringed.
    """
    from verifier.plots import figure, label, png
    from verifier.data.tables import write_atomic_bytes

    rows = calibration.frontier
    dist = [r["distortion"] for r in rows]
    linked = [r["confidently_linked_share"] for r in rows]
    fig, ax = figure(6.4, 4.4)
    ax.plot(dist, linked, "o-", color="#1f4e79")
    for r in rows:
        ax.annotate(label(f"{calibration.parameter}={r['value']:g}"), (r["distortion"], r["confidently_linked_share"]),
                    textcoords="offset points", xytext=(6, 4), fontsize=8)
    if calibration.targets.max_linked_share is not None:
        ax.axhline(calibration.targets.max_linked_share, color="#b03a2e", ls="--", lw=1,
                   label=f"target: at most {calibration.targets.max_linked_share:g} linked")
    if calibration.chosen is not None:
        c = calibration.chosen
        ax.plot([c["distortion"]], [c["confidently_linked_share"]], "o", ms=14, mfc="none", mec="#b03a2e",
                label=f"chosen: {calibration.parameter}={c['value']:g}")
    ax.set_xlabel("distortion: mean |Y - X| / sd(X), averaged over attributes")
    ax.set_ylabel("share of records confidently linked")
    ax.set_title(title or f"{calibration.method}: privacy/utility frontier")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    write_atomic_bytes(path, png(fig))
