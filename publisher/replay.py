"""The auditor's third step: is a release what its published methods make from the original? (paper 003, Def. 4)

Transparency discloses every parameter but the seed. With the original table
an auditor can rerun the published chain with fresh seeds and ask whether the
published release looks like one of those runs. ``publisher replay``:

1. rebuilds the chain from the signed parameters (a parameter the publisher
   derived from the data, such as randomized response's keep probabilities,
   is derived again on the original and must equal the published one);
2. runs it ``runs`` times with fresh seeds (once for a deterministic chain,
   whose only randomness is the row shuffle) and computes the statistics of
   :mod:`publisher.replay_statistics` for every simulated release and for the
   published one;
3. gives each statistic a two-sided p-value against its simulated values:
   empirical, ``2 min(#{s <= t} + 1, #{s >= t} + 1) / (runs + 1)``; when the
   published value t lies beyond every simulated one and the runs show a
   continuous statistic (at least half of them different), from a normal
   model fitted to them (the predictive Student t with runs - 1 degrees of
   freedom, so that tens of runs can reject at 0.01). A statistic whose runs
   tie (a discrete one, such as D, a spread or a distance quantile, or one
   the method fixes) keeps the empirical value: a normal model fitted to a
   few repeated values claims tails it does not have, and flagged honest
   releases. A deterministic chain, replayed once, gives 1 if t equals the
   run and 0 otherwise;
4. corrects the p-values for their number (Holm's step-down) and calls the
   release implausible when one corrected p-value is below alpha, or a derived
   parameter differs;
5. measures its own power on the release at hand (:mod:`publisher.replay_power`):
   the chain rerun with each published size parameter off by a factor, tested
   the same way; a release it cannot tell from a factor of 2 is called
   inconclusive, never plausible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from publisher.methods import Method, anonymize, frame_to_keys, make_method
from publisher.methods.frames import published_cells
from publisher.replay_power import ParameterPower, measure_power
from publisher.replay_statistics import generalized_statistics, ranked_statistics
from verifier.data.tables import Table
from verifier.errors import InvalidInputError
from verifier.releases.family import derived_parameters, family_of
from verifier.releases.verification import HIERARCHIES, VerifiedRelease

__all__ = ["Statistic", "DerivedCheck", "Replay", "replay_release", "replay_table", "replay_methods",
           "release_statistics", "two_sided_p_value", "holm"]

_REL = 1e-9


@dataclass(frozen=True)
class Statistic:
    name: str
    published: float
    simulated: np.ndarray
    p_value: float | None
    """Two-sided, before correction; None when the statistic is undefined (a constant column's correlation)."""
    holm_p_value: float | None = None

    def to_json(self) -> dict[str, Any]:
        finite = self.simulated[np.isfinite(self.simulated)]
        # quantiles that are values some run gave: a distance over runs is a whole number, never 0.45 of one
        quantiles = (np.quantile(finite, [0.05, 0.5, 0.95], method="inverted_cdf").tolist() if finite.size
                     else [None] * 3)
        return {"name": self.name, "published": _finite(self.published), "simulated": quantiles,
                "p_value": self.p_value, "holm_p_value": self.holm_p_value}


@dataclass(frozen=True)
class DerivedCheck:
    """A parameter the publisher derived from the data, derived again from the original."""

    parameter: str
    published: Any
    recomputed: Any
    ok: bool

    def to_json(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "published": self.published, "recomputed": self.recomputed, "ok": self.ok}


@dataclass(frozen=True, eq=False)
class Replay:
    runs: int
    simulated_runs: int
    alpha: float
    seed: int
    statistics: list[Statistic]
    derived: list[DerivedCheck] = field(default_factory=list)
    power: list[ParameterPower] = field(default_factory=list)
    """The replay's power on each published size parameter (empty when not measured)."""

    @property
    def consistent(self) -> bool:
        """No statistic beyond chance and every derived parameter derived again equal: not ``implausible``
        (the verdict may still be ``inconclusive``; see :attr:`verdict`)."""
        return all(d.ok for d in self.derived) and all(
            s.holm_p_value is None or s.holm_p_value >= self.alpha for s in self.statistics)

    @property
    def verdict(self) -> str:
        """``implausible``; ``inconclusive`` when the replay cannot tell the published value from a factor of 2;
        else ``plausible``."""
        if not self.consistent:
            return "implausible"
        return "inconclusive" if any(p.inconclusive for p in self.power) else "plausible"

    @property
    def plausible(self) -> bool:
        """The verdict is ``plausible``: consistent, and the replay could tell a factor of 2 from the published
        value. An ``inconclusive`` replay is not plausible (its JSON said so before this version)."""
        return self.verdict == "plausible"

    @property
    def deterministic(self) -> bool:
        return self.simulated_runs == 1

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "plausible": self.plausible, "consistent": self.consistent, "runs": self.runs,
                "simulated_runs": self.simulated_runs, "power": [p.to_json() for p in self.power],
                "deterministic": self.deterministic, "alpha": self.alpha, "seed": self.seed,
                "statistics": [s.to_json() for s in self.statistics],
                "derived_parameters": [d.to_json() for d in self.derived]}


def _finite(v: float) -> float | None:
    return float(v) if v is not None and math.isfinite(v) else None


def _distinct(sims: np.ndarray, tol: float) -> int:
    """How many different values the runs took (values within ``tol`` counted as one)."""
    ordered = np.sort(sims)
    return 1 + int(np.count_nonzero(np.diff(ordered) > tol))


def two_sided_p_value(published: float, simulated: np.ndarray) -> float | None:
    """The two-sided p-value of ``published`` against the simulated values (module docstring, step 3)."""
    sims = np.asarray(simulated, dtype=np.float64)
    if not math.isfinite(published) or not np.all(np.isfinite(sims)) or sims.size == 0:
        return None
    lo, hi = float(sims.min()), float(sims.max())
    tol = _REL * max(1.0, abs(published), abs(lo), abs(hi))
    n = sims.size
    if n == 1:  # a deterministic chain, replayed once: the release must equal the run
        return 1.0 if abs(published - lo) <= tol else 0.0
    below = (np.count_nonzero(sims <= published + tol) + 1) / (n + 1)
    above = (np.count_nonzero(sims >= published - tol) + 1) / (n + 1)
    empirical = float(min(1.0, 2 * min(below, above)))
    beyond = published < lo - tol or published > hi + tol
    if not beyond or 2 * _distinct(sims, tol) < n:  # inside the runs, or a statistic whose runs tie
        return empirical
    scale = float(sims.std(ddof=1)) * math.sqrt(1 + 1 / n)
    return float(min(1.0, 2 * student_t.sf(abs(published - float(sims.mean())) / scale, n - 1)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values times m - i + 1, kept monotone, capped at 1."""
    p = np.asarray(p_values, dtype=np.float64)
    adjusted = np.empty_like(p)
    running = 0.0
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        running = max(running, min(1.0, (p.size - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def replay_methods(methods: Sequence[Mapping[str, Any]], hierarchies: Mapping | None = None) -> list[Method]:
    """The chain rebuilt from its published parameters, leaving out what the publisher derived from the data."""
    chain = []
    for step in methods:
        derived = derived_parameters(step)
        params = {k: v for k, v in step["parameters"].items() if k not in derived}
        if params.get("hierarchies") == HIERARCHIES:
            params["hierarchies"] = hierarchies or {}
        chain.append(make_method(step["method"], params, allow_degenerate=True))
    return chain


def release_statistics(original: Table, released: pd.DataFrame, family: str,
                       hierarchies: Mapping | None = None) -> dict[str, float]:
    """The statistics of an anonymized table (rows in any order) against the original."""
    if family == "generalized":
        return generalized_statistics(published_cells(released, original.schema, hierarchies)[1])
    return ranked_statistics(original.values, frame_to_keys(released, original.schema), original.schema)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=_REL, abs_tol=1e-12)
    return a == b


def _derived_checks(methods: Sequence[Mapping[str, Any]], steps: list[dict[str, Any]]) -> list[DerivedCheck]:
    out = []
    for i, (step, rerun) in enumerate(zip(methods, steps)):
        for name in derived_parameters(step):
            published, recomputed = step["parameters"][name], rerun["parameters"].get(name)
            out.append(DerivedCheck(f"methods.{i}.parameters.{name}", published, recomputed, _same(published, recomputed)))
    return out


def _runs(original: Table, chain: list[Method], family: str, hierarchies: Mapping | None, seeds: Sequence[int],
          names: Sequence[str], on_run: Callable[[int, Any], None] | None = None) -> dict[str, list[float]]:
    """Each statistic of ``names`` over runs of ``chain`` with the given seeds."""
    frame = original.to_frame()
    values: dict[str, list[float]] = {name: [] for name in names}
    for r, run_seed in enumerate(seeds):
        result = anonymize(frame, original.schema, chain, random_state=int(run_seed))
        stats = release_statistics(original, result.released, family, hierarchies)
        for name in values:
            values[name].append(stats.get(name, math.nan))
        if on_run is not None:
            on_run(r, result)
    return values


def _rejects(original: Table, statistics: list[Statistic], family: str, hierarchies: Mapping | None, *,
             alpha: float, runs: int, seed: int) -> Callable[[list[dict[str, Any]], int], float | None]:
    """The share of runs of a (scaled) chain that the replay's test, against ``statistics``' runs, rejects."""
    def rejects(methods: list[dict[str, Any]], k: int) -> float | None:
        try:
            chain = replay_methods(methods, hierarchies)
            n = 1 if all(m.deterministic for m in chain) else runs
            seeds = np.random.default_rng([seed, 1 + k]).integers(0, 2**63 - 1, size=n)
            values = _runs(original, chain, family, hierarchies, seeds, [s.name for s in statistics])
        except InvalidInputError:  # the scaled value cannot run on this table (k above n, an infeasible target)
            return None
        rejected = []
        for r in range(n):
            p = [two_sided_p_value(values[s.name][r], s.simulated) for s in statistics]
            tested = [v for v in p if v is not None]
            rejected.append(bool(tested) and min(holm(tested)) < alpha)
        return float(np.mean(rejected))
    return rejects


def replay_table(original: Table, methods: Sequence[Mapping[str, Any]], published: Mapping[str, float], *,
                 hierarchies: Mapping | None = None, runs: int = 50, alpha: float = 0.01, seed: int = 0,
                 progress: Callable[[int, int], None] | None = None, power_runs: int = 0) -> Replay:
    """Replay the published ``methods`` on ``original`` and test the ``published`` statistics against the runs.

    ``power_runs`` runs per factor measure the replay's power on each published size parameter (0: not measured).
    """
    if runs < 2:
        raise InvalidInputError(f"replay needs at least 2 runs, got {runs}", reason="PARAMETER_INVALID")
    chain = replay_methods(methods, hierarchies)
    family = family_of(list(methods))
    simulated_runs = 1 if all(m.deterministic for m in chain) else runs
    seeds = np.random.default_rng(seed).integers(0, 2**63 - 1, size=simulated_runs)
    derived: list[DerivedCheck] = []

    def on_run(r: int, result) -> None:
        nonlocal derived
        if r == 0:
            derived = _derived_checks(methods, result.steps)
        if progress is not None:
            progress(r + 1, simulated_runs)

    values = _runs(original, chain, family, hierarchies, seeds, list(published), on_run)
    statistics = [Statistic(name, float(published[name]), np.asarray(v), two_sided_p_value(float(published[name]), v))
                  for name, v in values.items()]
    tested = [s for s in statistics if s.p_value is not None]
    adjusted = dict(zip([s.name for s in tested], holm([s.p_value for s in tested])))
    statistics = [Statistic(s.name, s.published, s.simulated, s.p_value, adjusted.get(s.name)) for s in statistics]
    power = [] if power_runs < 1 else measure_power(methods, _rejects(
        original, statistics, family, hierarchies, alpha=alpha, runs=power_runs, seed=seed))
    return Replay(runs, simulated_runs, alpha, seed, statistics, derived, power)


def replay_release(release: VerifiedRelease, original: Table, *, runs: int = 50, alpha: float = 0.01, seed: int = 0,
                   progress: Callable[[int, int], None] | None = None, power_runs: int = 0) -> Replay:
    """Replay a verified release on the original table (read with the release's schema)."""
    if release.family == "generalized":
        cells = release.published()
        published, n = generalized_statistics(cells), cells.n_records
    else:
        table = release.table()
        published = ranked_statistics(original.values, table.values, original.schema) if (
            table.n_records == original.n_records) else {}
        n = table.n_records
    if n != original.n_records:
        raise InvalidInputError(f"has {original.n_records} records and the release {n}; a release has one row per "
                                "record of the table it was made from", reason="SHAPE_MISMATCH")
    return replay_table(original, release.methods, published, hierarchies=release.hierarchies, runs=runs,
                        alpha=alpha, seed=seed, progress=progress, power_runs=power_runs)
