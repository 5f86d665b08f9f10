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
  the release (recomputed from the release alone). A subject's risk is the
  attacker's estimate at her cell.
- **random attribute replacement** (paper 004): the attacker's posterior
  probability of a subject's sensitive value
  (:mod:`verifier.attacks.replacement`), over every original record for the
  claim (recomputed with the original), for her own record in her check.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from verifier.attacks.composition import joint_rr_risk
from verifier.attacks.disclosure import CERTAIN, estimate_distribution, rr_risk
from verifier.attacks.sampling_error import CONFIDENCE, rr_sampling_error
from verifier.attacks.replacement import (distinct_release, replacement_claims, replacement_likelihood, replacement_risk,
                                         value_masses)
from verifier.data.schema import Schema

__all__ = ["rr_model", "rr_claims", "rr_record", "rr_records", "rr_joint_record", "replacement_model",
           "replacement_release_claims", "replacement_record", "replacement_records", "replacement_shares"]


def rr_model(schema: Schema, keep: Mapping[str, float]) -> tuple[list[int], int | None, list[float]]:
    """The modelled columns: categorical QIs with a published keep probability, the sensitive one, and the ps."""
    attrs = list(schema.attributes)
    qi = [j for j, a in enumerate(attrs) if a.role == "quasi_identifier" and a.kind != "numeric" and a.name in keep]
    sens = [j for j, a in enumerate(attrs) if a.role == "sensitive" and a.kind != "numeric" and a.name in keep]
    s = sens[0] if sens else None
    ps = [float(keep.get(attrs[j].name, 1.0)) for j in ([*qi, s] if s is not None else qi)]
    return qi, s, ps


def _frequencies(table: np.ndarray, schema: Schema, cols: list[int]) -> np.ndarray:
    attrs = list(schema.attributes)
    dims = [len(attrs[j].categories or ()) for j in cols]
    index = np.zeros(table.shape[0], dtype=np.int64)
    for j, d in zip(cols, dims):
        index = index * d + table[:, j].astype(np.int64)
    return np.bincount(index, minlength=int(np.prod(dims))).reshape(dims) / max(table.shape[0], 1)


def _estimate(y: np.ndarray, schema: Schema, cols: list[int], ps: list[float]) -> np.ndarray:
    """Eq. 2 on the release's frequencies (clipped), where the keep matrices can be inverted."""
    lam = _frequencies(y, schema, cols)
    invertible = all(p > 1 / d + 1e-9 for p, d in zip(ps, lam.shape))
    return estimate_distribution(lam, ps) if invertible else lam


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
    entry["estimated"] = _figures(_estimate(y, schema, cols, ps), ps)
    entry["conditioned_on"] = [schema.attributes[j].name for j in qi]
    if l is not None:
        entry.update(l=l, target=1.0 / l)
    return {schema.attributes[s].name: entry}


def rr_record(y: np.ndarray, schema: Schema, keep: Mapping[str, float], record: np.ndarray) -> dict[str, Any]:
    """Her closed-form risk at her cell, the records published with her QIs, the attacker's best guess, and the
    risk's one-sided sampling error (:mod:`verifier.attacks.sampling_error`) with the interval it spans."""
    qi, s, ps = rr_model(schema, keep)
    if s is None:
        return {}
    pi_hat = _estimate(y, schema, [*qi, s], ps)
    cell = tuple(int(record[j]) for j in qi)
    risk = float(rr_risk(pi_hat, ps[:-1], ps[-1])[cell + (int(record[s]),)])
    share = pi_hat[cell]
    candidates = int(np.all(y[:, qi] == record[qi], axis=1).sum()) if qi else int(y.shape[0])
    guess = int(np.argmax(share)) if share.sum() > 0 else None
    error = rr_sampling_error(_frequencies(y, schema, [*qi, s]), ps, cell + (int(record[s]),), int(y.shape[0]))
    return {schema.attributes[s].name: {"mode": "randomized_response", "risk": risk, "candidates": candidates,
                                        "best_guess": guess, "sampling_error": error,
                                        "interval": [max(0.0, risk - error), min(1.0, risk + error)],
                                        "confidence": CONFIDENCE}}


def rr_records(y: np.ndarray, schema: Schema, keep: Mapping[str, float], records: np.ndarray, *,
               error_above: float | None = -1.0) -> dict[str, Any]:
    """:func:`rr_record`'s ``risk`` and ``sampling_error`` for every record at once (arrays), the same floats: the
    risk is read from one table of Result 1, the error computed once per distinct cell, and only for the records
    whose risk is above ``error_above`` (None: for none; the others' error is 0), as only a risk above a bound can
    be more than its error above it."""
    qi, s, ps = rr_model(schema, keep)
    if s is None:
        return {}
    cols = [*qi, s]
    cells = np.asarray(records[:, cols], dtype=np.float64).astype(np.int64)
    risk = rr_risk(_estimate(y, schema, cols, ps), ps[:-1], ps[-1])[tuple(cells.T)].astype(np.float64)
    errors = np.zeros(risk.shape)
    wanted = np.flatnonzero(risk > error_above) if error_above is not None else np.zeros(0, np.int64)
    if wanted.size:
        lam = _frequencies(y, schema, cols)
        distinct, inverse = np.unique(cells[wanted], axis=0, return_inverse=True)
        each = [rr_sampling_error(lam, ps, tuple(row), int(y.shape[0])) for row in distinct.tolist()]
        errors[wanted] = np.array(each, dtype=np.float64)[inverse.ravel()]
    return {schema.attributes[s].name: {"mode": "randomized_response", "risk": risk, "sampling_error": errors}}


def rr_joint_record(ys: Sequence[np.ndarray], schema: Schema, keeps: Sequence[Mapping[str, float]],
                    record: np.ndarray) -> dict[str, Any]:
    """Her risk when the intruder links her in several randomized-response releases of the same records
    (:func:`verifier.attacks.composition.joint_rr_risk`): conditioned on every QI some release randomized, on
    the distribution the releases estimate (the mean of their Eq. 2 estimates). ``risk`` is None when the joint
    distribution is too large to compute; ``{}`` without a sensitive attribute randomized in every release."""
    models = [rr_model(schema, keep) for keep in keeps]
    s = models[0][1]
    if s is None or any(model[1] != s for model in models):
        return {}
    qi = sorted({j for model in models for j in model[0]})
    names = [schema.attributes[j].name for j in [*qi, s]]
    ps = [[float(keep.get(name, 1.0)) for name in names] for keep in keeps]
    pi_hat = np.mean([_estimate(y, schema, [*qi, s], p) for y, p in zip(ys, ps)], axis=0)
    joint = joint_rr_risk(pi_hat, [list(each) for each in zip(*(p[:-1] for p in ps))], [p[-1] for p in ps])
    cell = tuple(int(record[j]) for j in [*qi, s])
    share = pi_hat[cell[:-1]]
    return {schema.attributes[s].name: {
        "mode": "randomized_response", "risk": None if joint is None else float(joint[cell]),
        "each": [rr_record(y, schema, keep, record)[schema.attributes[s].name]["risk"] for y, keep in zip(ys, keeps)],
        "best_guess": int(np.argmax(share)) if share.sum() > 0 else None, "conditioned_on": names[:-1]}}


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
    """Her posterior risk per sensitive attribute, from the release and the published parameters."""
    every = replacement_records(y, schema, params, np.asarray(record, dtype=np.float64)[None])
    out = {}
    for name, entry in every.items():
        guess = float(entry["best_guess"][0])
        out[name] = {"mode": "random_replacement", "risk": float(entry["risk"][0]),
                     "candidates": int(entry["candidates"][0]), "best_guess": None if np.isnan(guess) else guess}
    return out


def replacement_records(y: np.ndarray, schema: Schema, params: Mapping[str, Any],
                        records: np.ndarray) -> dict[str, dict[str, Any]]:
    """Every record's posterior per sensitive attribute (arrays of ``risk``, ``candidates`` and ``best_guess``,
    NaN where there is none), weighed against the release's distinct rows with their counts, as the claims are
    (:func:`~verifier.attacks.replacement.replacement_claims`): records with the same quasi-identifiers and
    value are one computation, and one record's figure is :func:`replacement_record`'s to the last bit."""
    cols, p, k = replacement_model(schema, params)
    out: dict[str, dict[str, Any]] = {}
    if not cols:
        return out
    for s, attr in enumerate(schema.attributes):
        if attr.role != "sensitive":
            continue
        rows, weights, F = distinct_release(y[:, cols], y[:, s])
        keys = np.column_stack([records[:, cols], records[:, s]]).astype(np.float64) + 0.0
        distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
        found = [replacement_risk(row[:-1], row[-1], rows[:, :-1], rows[:, -1], p, k, F=F, weights=weights)
                 for row in distinct]
        pick = inverse.ravel()
        out[attr.name] = {
            "mode": "random_replacement",
            "risk": np.array([f["risk"] for f in found], dtype=np.float64)[pick],
            "candidates": np.array([f["candidates"] for f in found], dtype=np.int64)[pick],
            "best_guess": np.array([np.nan if f["best_guess"] is None else f["best_guess"] for f in found],
                                   dtype=np.float64)[pick]}
    return out


def replacement_shares(y: np.ndarray, schema: Schema, params: Mapping[str, Any], record: np.ndarray,
                       s: int) -> dict[float, float]:
    """The attacker's posterior over her value of sensitive column ``s`` (each published value, its probability):
    the distribution whose value at hers is :func:`replacement_record`'s risk."""
    cols, p, k = replacement_model(schema, params)
    L = replacement_likelihood(record[cols], y[:, cols], p, k)
    values, mass = value_masses(L, y[:, s])
    total = float(mass.sum())
    return {float(v): float(m) / total for v, m in zip(values, mass) if m > 0} if total > 0 else {}
