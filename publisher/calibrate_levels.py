"""Calibrating against the level targets: every method, exposure against information loss (issue 60, item 6).

``publisher calibrate --target NAME=VALUE`` sweeps one parameter of any method over a grid. For each value it makes
the release ``publisher release`` would sign, with no key and no file
(:func:`publisher.signed_release.release_figures`), every value with the same secret draws (common random
numbers), and reads:

- every record's level under the verdict policy, as her own check gives it (``exposed``, ``at_risk``,
  ``protected``);
- the release's information loss: NCP (Xu et al.'s normalized certainty penalty) and discernibility for a
  generalized release, ARX's measures, with the two-step generalization's SA distortion ratio (paper 002, eq. 5:
  what its masks took); the distortion (mean |Y - X| / sd(X)) and the share of categorical cells changed for one
  with ranks;
- which of the targets it misses, as ``publisher release --target`` judges them
  (:func:`verifier.releases.targets.target_misses`).

A value whose release would be refused (an uninformative or degenerate output, alphas no class can meet) is a
row that says why. The chosen value is the least lossy one that meets every target: ARX's search for the optimal
transformation under privacy models (its lattice, its information-loss metric), on one parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from publisher.calibrate import check_grid
from publisher.methods import make_method
from publisher.signed_release import release_figures
from verifier.data.tables import Table
from verifier.errors import InvalidInputError
from verifier.releases.policy import Policy
from verifier.releases.targets import target_misses

__all__ = ["LevelCalibration", "calibrate_levels", "loss_key", "plot_level_frontier"]


@dataclass(frozen=True)
class LevelCalibration:
    method: str
    parameter: str
    targets: dict[str, Any]
    frontier: list[dict[str, Any]]
    chosen: dict[str, Any] | None
    policy: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "parameter": self.parameter, "targets": self.targets, "policy": self.policy,
                "frontier": self.frontier, "chosen": self.chosen}


def loss_key(row: Mapping[str, Any]) -> tuple[float, ...]:
    """How much a release loses, the lower the better: a generalized release's NCP (its quasi-identifiers), then
    its sensitive cells' distortion ratio (paper 002's SA.DR: what masking took), then its discernibility; else the
    distortion of its numbers, then the share of its categorical cells changed."""
    if row.get("ncp") is not None:
        return float(row["ncp"]), float(row.get("sa_distortion_ratio") or 0.0), float(row.get("discernibility") or 0)
    return (float(row["distortion"]) if row.get("distortion") is not None else np.inf,
            float(row.get("changed_share") or 0.0))


def _sa_loss(figures: Mapping[str, Any]) -> float | None:
    """The sensitive cells' distortion ratio (paper 002, eq. 5), as the utility or the method's metrics give it."""
    found = figures["utility"].get("sa_distortion_ratio")
    for step in figures.get("methods") or []:
        found = (step.get("metrics") or {}).get("sa_distortion_ratio", found) if found is None else found
    return float(found) if isinstance(found, (int, float)) else None


def _changed(utility: Mapping[str, Any]) -> float | None:
    """The share of categorical cells a release with ranks changed, over its categorical attributes (None: none)."""
    shares = [e["changed_share"] for e in (utility.get("attributes") or {}).values()
              if isinstance(e, Mapping) and isinstance(e.get("changed_share"), (int, float))]
    return float(np.mean(shares)) if shares else None


def _row(value: Any, figures: Mapping[str, Any], targets: Mapping[str, Any]) -> dict[str, Any]:
    claims, utility = figures["claims"], figures["utility"]
    levels = claims["policy_levels"]
    misses = target_misses(targets, claims)
    generalized = figures["model"] == "generalized"
    return {"value": value, "model": figures["model"], "exposed": levels["exposed"], "at_risk": levels["at_risk"],
            "protected": levels["protected"], "checked": levels["checked"], "at_risk_share": levels["at_risk_share"],
            "by_rule": levels["by_rule"],
            "ncp": utility.get("ncp") if generalized else None,
            "discernibility": utility.get("discernibility") if generalized else None,
            "sa_distortion_ratio": _sa_loss(figures) if generalized else None,
            "distortion": None if generalized else utility.get("distortion"),
            "changed_share": None if generalized else _changed(utility),
            "misses": [m.name for m in misses], "meets_targets": not misses, "refused": None}


def calibrate_levels(table: Table, method: str, parameter: str, values: Sequence[Any], *,
                     targets: Mapping[str, Any], fixed: Mapping[str, Any] | None = None, then: Sequence[str] = (),
                     seed: int | None = None, alpha: float = 0.01, samples: int = 10_000,
                     policy: Policy | None = None, allow_degenerate: bool = False, allow_uninformative: bool = False,
                     progress: Callable[[int, int], None] | None = None) -> LevelCalibration:
    """Sweep ``parameter`` of ``method`` over ``values`` against the level ``targets`` (the module's frontier);
    ``seed`` is the secret seed, one for the whole sweep (from OS entropy with None, never reported)."""
    check_grid(method, parameter, ranks=False)
    if not values:
        raise InvalidInputError("the parameter grid is empty", reason="PARAMETER_INVALID")
    # every value the same secret draws: the protector's seed, as publisher release takes it, or one from OS entropy
    draws = seed if seed is not None else int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
    chains = [[make_method(method, {**(fixed or {}), parameter: v}, allow_degenerate=allow_degenerate)]
              + [make_method(name, allow_degenerate=allow_degenerate) for name in then] for v in values]
    frontier, named = [], None
    for i, chain in enumerate(chains):
        value = chain[0].parameters()[parameter]
        try:
            figures = release_figures(table, chain, seed=draws, alpha=alpha, samples=samples, policy=policy,
                                      allow_degenerate=allow_degenerate, allow_uninformative=allow_uninformative)
        except InvalidInputError as exc:
            frontier.append({"value": value, "refused": exc.reason, "why": exc.message, "meets_targets": False})
        else:
            frontier.append(_row(value, figures, targets))
            named = figures["claims"]["policy_levels"]["policy"]
        if progress is not None:
            progress(i + 1, len(chains))
    meeting = [r for r in frontier if r["meets_targets"]]
    chosen = min(meeting, key=loss_key) if meeting else None
    return LevelCalibration(method, parameter, dict(targets), frontier, chosen, named or {})


def _loss_axis(rows: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The loss the frontier is drawn against: NCP where it moves, else the SA distortion ratio where that moves
    (the two-step generalization's alpha_sa moves only its masks), else the distortion."""
    def moves(key: str) -> bool:
        return len({r.get(key) for r in rows}) > 1 and all(r.get(key) is not None for r in rows)

    if rows and rows[0].get("ncp") is not None:
        if not moves("ncp") and moves("sa_distortion_ratio"):
            return "sa_distortion_ratio", "information loss: SA.DR, what the masks took (paper 002, eq. 5)"
        return "ncp", "information loss: NCP (0 none, 1 everything generalized)"
    return "distortion", "information loss: distortion, mean |Y - X| / sd(X)"


def plot_level_frontier(calibration: LevelCalibration, path: str) -> None:
    """The frontier as a PNG: records exposed and at risk against the information loss, one point per value, the
    target drawn as a line and the chosen value ringed. Written atomically."""
    from verifier.data.tables import write_atomic_bytes
    from verifier.plots import figure, label, png

    rows = [r for r in calibration.frontier if r.get("refused") is None]
    key, words = _loss_axis(rows)
    loss = [r[key] for r in rows]
    fig, ax = figure(6.4, 4.4)
    ax.plot(loss, [r["exposed"] for r in rows], "o-", color="#b03a2e", label="records exposed")
    ax.plot(loss, [r["at_risk"] for r in rows], "s--", color="#c98b12", label="records at risk")
    for x, r in zip(loss, rows):
        ax.annotate(label(f"{calibration.parameter}={r['value']}"), (x, r["at_risk"]), textcoords="offset points",
                    xytext=(6, 4), fontsize=8)
    if calibration.targets.get("max_exposed") is not None:
        ax.axhline(calibration.targets["max_exposed"], color="#b03a2e", ls=":", lw=1,
                   label=f"target: at most {calibration.targets['max_exposed']} exposed")
    if calibration.chosen is not None:
        c = calibration.chosen
        ax.plot([c[key]], [c["exposed"]], "o", ms=14, mfc="none", mec="#1f4e79",
                label=f"chosen: {calibration.parameter}={c['value']}")
    ax.set_xlabel(words)
    ax.set_ylabel("records, under the verdict policy")
    ax.set_title(f"{calibration.method}: exposure against information loss")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    write_atomic_bytes(path, png(fig))
