"""Attribute disclosure under the model of the method that made a release (SPEC sections 6 and 13).

One function per randomizing family, each for the data set (a release's
claim, recomputed by the audit) and for one subject (her check):

- **randomized response** (paper 000): the closed form of Result 1 on the
  distribution an attacker estimates from the release (Eq. 2, clipped) with
  the published keep probabilities. It conditions on the categorical
  quasi-identifiers the method randomized (the keys of the published
  ``keep_probabilities``). The claim's ``max`` is over every cell, as the
  method's own target ``max <= 1/l`` is, and ``mean`` weighs the cells by the
  distribution: on the original's (the paper's risk, recomputed with the
  original) and, under ``estimated``, on the one an attacker estimates from
  the release (recomputed from the release alone). The claim signs the
  sensitive attribute's ``marginal`` (each category's count in the original,
  audited with it): the population's shares, which the named intruder of
  SPEC section 16 holds. A subject's risk is the attacker's estimate at her
  cell, or where it is higher the most that intruder's exact posterior of her
  value can be whatever row is hers (:func:`rr_value_bound`), and her base
  rate her value's signed share.
- **random attribute replacement** (paper 004): the attacker's posterior
  probability of a subject's sensitive value
  (:mod:`verifier.attacks.replacement`), over every original record for the
  claim (recomputed with the original), for her own record in her check,
  where it is the higher of that posterior (``paper_risk``) and the named
  intruder's bound from matching everyone else to the released rows
  (``match_bound``).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from verifier.attacks.composition import joint_rr_risk, stacked_keep_matrix
from verifier.attacks.disclosure import CERTAIN, estimate_distribution, rr_risk
from verifier.attacks.distortion import (Transition, distortion, distortion_matrix, invertible,
                                         transition_value_bounds)
from verifier.attacks.sampling_error import CONFIDENCE, rr_sampling_error
from verifier.attacks.replacement import (distinct_release, qi_groups, reachable_index, replacement_claims,
                                         replacement_likelihood, replacement_risk, value_masses)
from verifier.core.distinct_rows import unique_rows
from verifier.data.schema import Schema

__all__ = ["rr_model", "rr_bayes_bound", "rr_claims", "rr_marginal_shares", "rr_record", "rr_records", "rr_value_bound",
           "rr_joint_record", "replacement_groups", "replacement_model", "replacement_release_claims", "replacement_record",
           "replacement_records", "replacement_shares"]


def rr_model(schema: Schema, keep: Mapping[str, Any]) -> tuple[list[int], int | None, list[float | Transition]]:
    """The modelled columns: categorical QIs with a published distortion, the sensitive one, and their
    distortions (a keep probability, or a published transition matrix: :mod:`verifier.attacks.distortion`)."""
    attrs = list(schema.attributes)
    qi = [j for j, a in enumerate(attrs) if a.role == "quasi_identifier" and a.kind != "numeric" and a.name in keep]
    sens = [j for j, a in enumerate(attrs) if a.role == "sensitive" and a.kind != "numeric" and a.name in keep]
    s = sens[0] if sens else None
    ps = [distortion(keep.get(attrs[j].name, 1.0)) for j in ([*qi, s] if s is not None else qi)]
    return qi, s, ps


def _frequencies(table: np.ndarray, schema: Schema, cols: list[int]) -> np.ndarray:
    attrs = list(schema.attributes)
    dims = [len(attrs[j].categories or ()) for j in cols]
    index = np.zeros(table.shape[0], dtype=np.int64)
    for j, d in zip(cols, dims):
        index = index * d + table[:, j].astype(np.int64)
    return np.bincount(index, minlength=int(np.prod(dims))).reshape(dims) / max(table.shape[0], 1)


def _estimate(y: np.ndarray, schema: Schema, cols: list[int], ps: list[float | Transition]) -> np.ndarray:
    """Eq. 2 on the release's frequencies (clipped), where the distortion matrices can be inverted."""
    lam = _frequencies(y, schema, cols)
    return estimate_distribution(lam, ps) if all(invertible(d, p) for p, d in zip(ps, lam.shape)) else lam


def rr_bayes_bound(share: np.ndarray | float, keep: float, move: float) -> np.ndarray:
    """Bayes' rule for a value of share ``share`` on released rows that all show it: share keep / (share keep +
    (1 - share) move), ``keep`` the chance that her value is shown as it is (in every release), ``move`` that
    another value is shown as hers; 0 for a value no one holds."""
    share = np.asarray(share, dtype=np.float64)
    kept = share * keep
    moved = (1.0 - share) * move
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(kept > 0, kept / (kept + moved), 0.0)


def rr_value_bound(share: np.ndarray | float, p: float, d: int) -> np.ndarray:
    """The named intruder's posterior of a value v of the randomized sensitive attribute, at the most (SPEC
    section 16): pi_v p / (pi_v p + (1 - pi_v) (1 - p) / (d - 1)), Bayes' rule with the population's share pi_v
    on a released row showing v (:func:`rr_bayes_bound`). Whatever row is hers, his exact posterior is a mixture,
    over the rows he weighs as hers, of Bayes' rule on each (the values are drawn and randomized person by
    person, and a row's quasi-identifiers weigh every value of hers alike), and a row showing v gives v the most,
    as p >= 1/d."""
    if d <= 1:
        return np.where(np.asarray(share, dtype=np.float64) > 0, 1.0, 0.0)
    return rr_bayes_bound(share, p, (1.0 - p) / (d - 1))


def rr_marginal_shares(entry: Mapping[str, Any] | None, categories: Sequence[str]) -> np.ndarray | None:
    """Each category's share in a randomized-response claim's signed ``marginal``, in the schema's order; None
    where the claim signs none (a release made before it did)."""
    marginal = (entry or {}).get("marginal") if isinstance(entry, Mapping) else None
    if not isinstance(marginal, Mapping):
        return None
    counts = np.array([float(marginal.get(c, 0)) for c in categories], dtype=np.float64)
    total = counts.sum()
    return counts / total if total > 0 else None


def _figures(pi: np.ndarray, ps: list[float]) -> dict[str, float]:
    risk = rr_risk(pi, ps[:-1], ps[-1])
    return {"max": float(risk.max()), "mean": float(np.sum(pi * risk))}


def rr_claims(x: np.ndarray | None, y: np.ndarray, schema: Schema, keep: Mapping[str, float], *,
              l: float | None = None) -> dict[str, Any]:
    """The closed-form risk of a randomized-response release; ``{}`` without a sensitive column.

    ``max`` and ``mean`` are Result 1 on the original's distribution (the
    paper's risk, which the method's target ``1/l`` bounds; recomputable with
    the original); ``estimated`` the same on the distribution an attacker
    estimates from the release (recomputable from the release alone). With
    ``x`` None only ``estimated`` is computed.
    """
    qi, s, ps = rr_model(schema, keep)
    if s is None:
        return {}
    cols = [*qi, s]
    entry: dict[str, Any] = {"mode": "randomized_response"}
    if x is not None:
        pi = _frequencies(x, schema, cols)
        entry.update(_figures(pi, ps))
        entry["certain_share"] = float(np.sum(pi[rr_risk(pi, ps[:-1], ps[-1]) >= CERTAIN]))
        counts = np.bincount(x[:, s].astype(np.int64), minlength=len(schema.attributes[s].categories or ()))
        entry["marginal"] = {c: int(n) for c, n in zip(schema.attributes[s].categories or (), counts.tolist())}
    entry["estimated"] = _figures(_estimate(y, schema, cols, ps), ps)
    entry["conditioned_on"] = [schema.attributes[j].name for j in qi]
    if l is not None:
        entry.update(l=l, target=1.0 / l)
    return {schema.attributes[s].name: entry}


def _bounded(paper: np.ndarray, values: np.ndarray, shares: np.ndarray | None, p: float | Transition,
             d: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Her risk, the paper's or the named intruder's bound where it is higher, and that bound (None without
    signed shares). Under a published transition matrix the bound is Bayes' rule on the published value that
    gives hers the most (:func:`verifier.attacks.distortion.transition_value_bounds`): with a keep probability
    that value is hers, and the two agree."""
    if shares is None:
        return paper, None
    values = values.astype(np.int64)
    if isinstance(p, Transition):
        bound = transition_value_bounds(shares, distortion_matrix(d, p))[values]
    else:
        bound = rr_value_bound(shares[values], p, d)
    return np.maximum(paper, bound), bound


def rr_record(y: np.ndarray, schema: Schema, keep: Mapping[str, float], record: np.ndarray,
              shares: np.ndarray | None = None) -> dict[str, Any]:
    """Her closed-form risk at her cell, the records published with her QIs, the attacker's best guess, and the
    risk's one-sided sampling error (:mod:`verifier.attacks.sampling_error`) with the interval it spans.

    With ``shares`` (the signed marginal, :func:`rr_marginal_shares`) her ``risk`` is the higher of that risk
    (``paper_risk``, the figure the claims and targets are about) and :func:`rr_value_bound` at her value
    (``value_bound``), and ``prior`` her value's signed share."""
    qi, s, ps = rr_model(schema, keep)
    if s is None:
        return {}
    pi_hat = _estimate(y, schema, [*qi, s], ps)
    cell = tuple(int(record[j]) for j in qi)
    paper = float(rr_risk(pi_hat, ps[:-1], ps[-1])[cell + (int(record[s]),)])
    share = pi_hat[cell]
    candidates = int(np.all(y[:, qi] == record[qi], axis=1).sum()) if qi else int(y.shape[0])
    guess = int(np.argmax(share)) if share.sum() > 0 else None
    error = rr_sampling_error(_frequencies(y, schema, [*qi, s]), ps, cell + (int(record[s]),), int(y.shape[0]))
    entry = {"mode": "randomized_response", "risk": paper, "candidates": candidates, "best_guess": guess,
             "sampling_error": error, "interval": [max(0.0, paper - error), min(1.0, paper + error)],
             "confidence": CONFIDENCE}
    risk, bound = _bounded(np.array([paper]), np.array([record[s]]), shares, ps[-1],
                           len(schema.attributes[s].categories or ()))
    if bound is not None:
        entry.update(risk=float(risk[0]), paper_risk=paper, value_bound=float(bound[0]),
                     prior=float(shares[int(record[s])]))
    return {schema.attributes[s].name: entry}


def rr_records(y: np.ndarray, schema: Schema, keep: Mapping[str, float], records: np.ndarray, *,
               error_above: float | None = -1.0, shares: np.ndarray | None = None) -> dict[str, Any]:
    """:func:`rr_record`'s ``risk``, ``sampling_error`` (and with ``shares``, ``paper_risk`` and ``prior``) for
    every record at once (arrays), the same floats: the risk is read from one table of Result 1, the error
    computed once per distinct cell, and only for the records whose paper risk is above ``error_above`` (None: for
    none; the others' error is 0), as only a risk above a bound can be more than its error above it."""
    qi, s, ps = rr_model(schema, keep)
    if s is None:
        return {}
    cols = [*qi, s]
    cells = np.asarray(records[:, cols], dtype=np.float64).astype(np.int64)
    paper = rr_risk(_estimate(y, schema, cols, ps), ps[:-1], ps[-1])[tuple(cells.T)].astype(np.float64)
    errors = np.zeros(paper.shape)
    wanted = np.flatnonzero(paper > error_above) if error_above is not None else np.zeros(0, np.int64)
    if wanted.size:
        lam = _frequencies(y, schema, cols)
        distinct, inverse = np.unique(cells[wanted], axis=0, return_inverse=True)
        each = [rr_sampling_error(lam, ps, tuple(row), int(y.shape[0])) for row in distinct.tolist()]
        errors[wanted] = np.array(each, dtype=np.float64)[inverse.ravel()]
    entry = {"mode": "randomized_response", "risk": paper, "sampling_error": errors}
    risk, bound = _bounded(paper, cells[:, -1], shares, ps[-1], len(schema.attributes[s].categories or ()))
    if bound is not None:
        entry.update(risk=risk, paper_risk=paper, prior=shares[cells[:, -1]])
    return {schema.attributes[s].name: entry}


def rr_joint_record(ys: Sequence[np.ndarray], schema: Schema, keeps: Sequence[Mapping[str, float]],
                    record: np.ndarray, shares: np.ndarray | None = None) -> dict[str, Any]:
    """Her risk when the intruder links her in several randomized-response releases of the same records
    (:func:`verifier.attacks.composition.joint_rr_risk`): conditioned on every QI some release randomized, on
    the distribution the releases estimate (the mean of their Eq. 2 estimates). ``risk`` is None when the joint
    distribution is too large to compute; ``{}`` without a sensitive attribute randomized in every release.

    With ``shares`` (the signed marginal), each release's risk is :func:`rr_record`'s with them, and the joint
    risk the higher of the paper's and the named intruder's bound over the releases, Bayes' rule with her
    value's share on rows that all show it: pi_v P / (pi_v P + (1 - pi_v) Q), P the product of the keep
    probabilities and Q of the moves to one other value (each release randomizes her anew)."""
    models = [rr_model(schema, keep) for keep in keeps]
    s = models[0][1]
    if s is None or any(model[1] != s for model in models):
        return {}
    qi = sorted({j for model in models for j in model[0]})
    names = [schema.attributes[j].name for j in [*qi, s]]
    ps = [[distortion(keep.get(name, 1.0)) for name in names] for keep in keeps]
    pi_hat = np.mean([_estimate(y, schema, [*qi, s], p) for y, p in zip(ys, ps)], axis=0)
    joint = joint_rr_risk(pi_hat, [list(each) for each in zip(*(p[:-1] for p in ps))], [p[-1] for p in ps])
    cell = tuple(int(record[j]) for j in [*qi, s])
    share = pi_hat[cell[:-1]]
    entry = {"mode": "randomized_response", "risk": None if joint is None else float(joint[cell]),
             "each": [rr_record(y, schema, keep, record, shares)[schema.attributes[s].name]["risk"]
                      for y, keep in zip(ys, keeps)],
             "best_guess": int(np.argmax(share)) if share.sum() > 0 else None, "conditioned_on": names[:-1]}
    if shares is not None and entry["risk"] is not None:
        pi_v = float(shares[int(record[s])])
        bound = _joint_value_bound(shares, [p[-1] for p in ps], len(schema.attributes[s].categories or ()),
                                   int(record[s]))
        entry.update(risk=max(entry["risk"], bound), paper_risk=entry["risk"], value_bound=bound, prior=pi_v)
    return {schema.attributes[s].name: entry}


def _joint_value_bound(shares: np.ndarray, each: Sequence[float | Transition], d: int, value: int) -> float:
    """The named intruder's bound on her value over several releases, each randomizing her anew: with keep
    probabilities, Bayes' rule on rows that all show it, pi_v P / (pi_v P + (1 - pi_v) Q), P the product of the
    keep probabilities and Q of the moves to one other value; with a transition matrix among them, Bayes' rule on
    the published values that give hers the most, over the releases' stacked matrices."""
    if any(isinstance(p, Transition) for p in each):
        return float(transition_value_bounds(shares, stacked_keep_matrix(d, each))[value])
    pi_v = float(shares[value])
    return float(rr_bayes_bound(pi_v, math.prod(p for p in each),
                                math.prod((1.0 - p) / (d - 1) if d > 1 else 0.0 for p in each)))


def replacement_model(schema: Schema, params: Mapping[str, Any]) -> tuple[list[int], list[float], int]:
    """The replaced QI columns, their published probabilities and k."""
    names = params.get("attributes") or [a.name for a in schema.attributes if a.role == "quasi_identifier"]
    cols = [schema.names.index(n) for n in names if n in schema.names]
    k = int(params.get("k") or 1)
    p = params.get("p_used") or params.get("p")
    p = [float(v) for v in p] if isinstance(p, list) and len(p) == len(cols) else [1.0 / max(len(cols), 1)] * len(cols)
    return cols, p, k


def replacement_release_claims(x: np.ndarray, y: np.ndarray, schema: Schema, params: Mapping[str, Any]) -> dict[str, Any]:
    """Every original record's posterior risk, per sensitive attribute (needs the original ``x``)."""
    cols, p, k = replacement_model(schema, params)
    out = {}
    for s, attr in enumerate(schema.attributes):
        if attr.role == "sensitive" and cols:
            out[attr.name] = {"mode": "random_replacement", **replacement_claims(x[:, cols], x[:, s], y[:, cols], y[:, s], p, k)}
    return out


def replacement_record(y: np.ndarray, schema: Schema, params: Mapping[str, Any], record: np.ndarray) -> dict[str, Any]:
    """Her risk per sensitive attribute, from the release and the published parameters: the higher of paper 004's
    posterior (``paper_risk``, the figure the claims and targets are about) and the named intruder's
    :func:`~verifier.attacks.replacement.match_bound` (``match_bound``)."""
    every = replacement_records(y, schema, params, np.asarray(record, dtype=np.float64)[None])
    out = {}
    for name, entry in every.items():
        guess = float(entry["best_guess"][0])
        out[name] = {"mode": "random_replacement", "risk": float(entry["risk"][0]),
                     "paper_risk": float(entry["paper_risk"][0]), "match_bound": float(entry["match_bound"][0]),
                     "candidates": int(entry["candidates"][0]), "best_guess": None if np.isnan(guess) else guess}
    return out


def replacement_records(y: np.ndarray, schema: Schema, params: Mapping[str, Any],
                        records: np.ndarray) -> dict[str, dict[str, Any]]:
    """Every record's risk per sensitive attribute (arrays of ``risk``, ``paper_risk``, ``match_bound``,
    ``candidates`` and ``best_guess``, NaN where there is none), weighed against the release's distinct rows with
    their counts, as the claims are (:func:`~verifier.attacks.replacement.replacement_claims`): records with the
    same quasi-identifiers and value are one computation, and one record's figure is :func:`replacement_record`'s
    to the last bit."""
    cols, p, k = replacement_model(schema, params)
    out: dict[str, dict[str, Any]] = {}
    if not cols:
        return out
    for s, attr in enumerate(schema.attributes):
        if attr.role != "sensitive":
            continue
        rows, weights, F = distinct_release(y[:, cols], y[:, s])
        keys = np.column_stack([records[:, cols], records[:, s]]).astype(np.float64) + 0.0
        distinct, inverse = unique_rows(keys, return_inverse=True)
        groups, index = qi_groups(rows[:, :-1]), reachable_index(rows[:, :-1], k)
        found = [replacement_risk(row[:-1], row[-1], rows[:, :-1], rows[:, -1], p, k, F=F, weights=weights,
                                  groups=groups, index=index) for row in distinct]
        pick = inverse.ravel()
        paper = np.array([f["risk"] for f in found], dtype=np.float64)[pick]
        bound = np.array([f["match_bound"] for f in found], dtype=np.float64)[pick]
        out[attr.name] = {
            "mode": "random_replacement", "risk": np.maximum(paper, bound), "paper_risk": paper, "match_bound": bound,
            "candidates": np.array([f["candidates"] for f in found], dtype=np.int64)[pick],
            "best_guess": np.array([np.nan if f["best_guess"] is None else f["best_guess"] for f in found],
                                   dtype=np.float64)[pick]}
    return out


def replacement_groups(y: np.ndarray, schema: Schema, params: Mapping[str, Any], record: np.ndarray,
                       s: int) -> list[np.ndarray]:
    """The values of sensitive column ``s`` in each group of released rows alike in their quasi-identifiers that she
    could have become (:func:`~verifier.attacks.replacement.match_bound`'s groups), in the groups' sorted order:
    the named intruder's posterior of her value is a mixture of their shares, whatever the matching."""
    cols, p, k = replacement_model(schema, params)
    if not cols:
        return []
    L = replacement_likelihood(record[cols], y[:, cols], p, k)
    groups = qi_groups(y[:, cols])
    return [y[groups == g, s] for g in np.unique(groups[L > 0]).tolist()]


def replacement_shares(y: np.ndarray, schema: Schema, params: Mapping[str, Any], record: np.ndarray,
                       s: int) -> dict[float, float]:
    """The attacker's posterior over her value of sensitive column ``s`` (each published value, its probability):
    the distribution whose value at hers is :func:`replacement_record`'s risk."""
    cols, p, k = replacement_model(schema, params)
    L = replacement_likelihood(record[cols], y[:, cols], p, k)
    values, mass = value_masses(L, y[:, s])
    total = float(mass.sum())
    return {float(v): float(m) / total for v, m in zip(values, mass) if m > 0} if total > 0 else {}
