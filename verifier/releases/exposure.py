"""A subject's attribute disclosure risk, under the model of the method that made her release (SPEC section 13).

- randomized response: paper 000's closed form at her cell, from the
  published keep probabilities and the release's frequencies;
- random attribute replacement: paper 004's posterior of her sensitive value
  under the published replacement probabilities;
- every other release with ranks: the share of her candidates (her match set
  on the quasi-identifiers, or the records with exactly her categorical
  quasi-identifiers) whose released sensitive value is hers.

Generalized releases have their own, from her equivalence class
(:func:`verifier.attacks.classes.subject_class`).

Beside each risk (the attacker's posterior) stands its base rate, the
``prior``: her value's share among all released records, what anyone guesses
knowing nothing about her (within the same tolerance for a number), and the
gain between them (:func:`with_base_rate`).
"""

from __future__ import annotations

from typing import Any, Callable

import json
import math

import numpy as np

from verifier.attacks.class_models import class_model_violations
from verifier.attacks.classes import base_rate_bounds, value_shares
from verifier.attacks.disclosure import record_disclosure
from verifier.attacks.candidate_sets import candidate_risks, value_shares_of
from verifier.attacks.models import (replacement_record, replacement_records, rr_marginal_shares, rr_model, rr_record,
                                     rr_records)
from verifier.data.schema import Schema
from verifier.releases.family import family_of, rr_distortions, step_parameters
from verifier.releases.verdict import SLACK
from verifier.text import literal, number

__all__ = ["base_rate", "base_rates", "class_models", "class_model_lines", "every_disclosure", "her_disclosure",
           "rr_shares", "with_base_rate"]


def with_base_rate(entry: dict[str, Any], prior: float) -> dict[str, Any]:
    """``entry`` with its ``prior`` and the gains of its ``risk`` over it: ``beta`` = (risk - prior) / prior
    (beta-likeness, Cao & Karras 2012) and ``delta`` = |ln(risk / prior)| (delta-disclosure, Brickell & Shmatikov
    2008); each None where it is undefined (a prior of 0, or a risk of 0 for delta)."""
    risk = float(entry["risk"])
    beta = (risk - prior) / prior if prior > 0 else None
    delta = abs(math.log(risk / prior)) if prior > 0 and risk > 0 else None
    return {**entry, "prior": prior, "beta": beta, "delta": delta}


def base_rate(values: np.ndarray, record: np.ndarray, s: int, tolerance: float | None) -> float:
    """Her value's share among all released records in column ``s`` (within ``tolerance`` where it is given)."""
    column = values[:, s]
    if not column.size:
        return 0.0
    hit = np.abs(column - record[s]) <= tolerance if tolerance is not None else column == record[s]
    return int(np.count_nonzero(hit)) / column.size


def _model(methods: list[dict[str, Any]]) -> tuple[str | None, dict[str, Any]]:
    """The randomizing model whose risk replaces the candidates' share, with its published parameters: randomized
    response's keep probabilities, random replacement's step; None for every other release."""
    family = family_of(methods)
    if family == "randomized_response":
        keep = rr_distortions(methods)
        if isinstance(keep, dict):
            return family, keep
    elif family == "random_replacement":
        return family, step_parameters(methods, "random_attribute_replacement") or {}
    return None, {}


def rr_shares(claims: Any, schema: Schema, keep: dict[str, Any]) -> np.ndarray | None:
    """The randomized sensitive attribute's signed shares (its claim's ``marginal``), None where none is signed."""
    s = rr_model(schema, keep)[1]
    claimed = claims.get("attribute_disclosure") if isinstance(claims, dict) else None
    if s is None or not isinstance(claimed, dict):
        return None
    attr = schema.attributes[s]
    return rr_marginal_shares(claimed.get(attr.name), attr.categories or ())


def her_disclosure(methods: list[dict[str, Any]], values: np.ndarray, schema: Schema, record: np.ndarray, *,
                   claims: Any = None) -> dict[str, Any]:
    """Per sensitive attribute: ``mode``, ``risk``, ``candidates`` and ``best_guess`` (a category position or a
    value). ``claims``: the release's, whose signed marginal a randomized-response risk and base rate read."""
    out = record_disclosure(values, schema, record)
    model, params = _model(methods)
    if model == "randomized_response":
        out.update(rr_record(values, schema, params, record, rr_shares(claims, schema, params)))
    elif model is not None:
        out.update(replacement_record(values, schema, params, record))
    for name, entry in out.items():  # the same event as the risk's: within its tolerance where it has one
        prior = entry["prior"] if "value_bound" in entry else base_rate(values, record, schema.names.index(name),
                                                                         entry.get("tolerance"))
        out[name] = with_base_rate(entry, prior)
    return out


def every_disclosure(methods: list[dict[str, Any]], values: np.ndarray, schema: Schema, records: np.ndarray, *,
                     bounds: dict[str, float] | None = None, claims: Any = None) -> dict[str, dict[str, np.ndarray]]:
    """:func:`her_disclosure` for every row of ``records`` at once: per sensitive attribute, arrays of ``risk``,
    ``prior`` and ``sampling_error`` (0 for a risk computed exactly), each record's to the last bit.

    ``bounds``: per sensitive attribute, the lowest bound a risk of it is held to (the others have none). A
    sampling error is then computed only where the risk is above its bound, the only place it can decide
    whether the risk breaks it; elsewhere it is 0. Without ``bounds``, everywhere.
    """
    model, params = _model(methods)
    out: dict[str, Any] = {}
    if model == "randomized_response":
        s = rr_model(schema, params)[1]
        name = None if s is None else schema.attributes[s].name
        above = -1.0 if bounds is None else (bounds[name] + SLACK if name in bounds else None)
        out = rr_records(values, schema, params, records, error_above=above, shares=rr_shares(claims, schema, params))
    elif model is not None:
        out = replacement_records(values, schema, params, records)
    rest = [a.name for a in schema.attributes if a.role == "sensitive" and a.name not in out]
    out = {**candidate_risks(values, schema, records, rest), **out}
    every = {}
    for attr in schema.attributes:  # in schema order, as her check lists them
        if attr.name not in out:
            continue
        entry, s = out[attr.name], schema.names.index(attr.name)
        risk = np.asarray(entry["risk"], dtype=np.float64)
        prior = entry["prior"] if "prior" in entry else value_shares_of(values[:, s], records[:, s],
                                                                        entry.get("tolerance"))
        every[attr.name] = {"risk": risk, "prior": prior, "paper_risk": entry.get("paper_risk", risk),
                            "sampling_error": np.asarray(entry.get("sampling_error", np.zeros(risk.shape)), np.float64)}
    return every


def base_rates(release: Any, released: Any = None) -> dict[str, dict[str, Any]]:
    """Per categorical sensitive attribute of a verified release, what anyone guesses right about a person
    knowing nothing of her: its most common released ``value`` and that value's ``share`` of the released
    records (randomized response and two-step generalization: of the people, by the signed marginal, ``signed``).
    In a generalized release whose cells
    mask or generalize a value, or that holds counterfeits, the share is the least of the people the release
    proves (:func:`~verifier.attacks.classes.base_rate_bounds`, the base rate her check reads), and ``least`` says
    so (issue 58); ``value`` is None where no cell names one value. The protector's summary and the audit show it
    beside the release's risks.

    ``released``: what the release's data file holds, where the caller already has it in memory (the publisher,
    whose release was just written from it): a generalized release's parsed cells, or the released rank keys
    (``n x m``, schema order). By default they are read from the release."""
    schema = release.schema()
    names = [a.name for a in schema.attributes if a.role == "sensitive" and a.kind != "numeric"]
    if not names:
        return {}
    out = {}
    if release.family == "generalized":
        published = released if released is not None else release.published()
        for name in names:
            marginal = ((release.claims.get("attribute_disclosure") or {}).get(name) or {}).get("marginal")
            if isinstance(marginal, dict) and sum(marginal.values()) > 0:  # a two-step release's, as signed
                value = max(marginal, key=lambda v: (marginal[v], v))
                out[name] = {"value": value, "share": marginal[value] / sum(marginal.values()), "signed": True}
                continue
            shares, bounds = value_shares(published, name), base_rate_bounds(published, name, release.methods)
            least = any(abs(bounds.get(v, 0.0) - shares.get(v, 0.0)) > SLACK for v in {*shares, *bounds})
            value = max(bounds, key=lambda v: (bounds[v], v)) if bounds else None
            out[name] = {"value": value, "share": bounds.get(value, 0.0) if value is not None else 0.0}
            if least:
                out[name]["least"] = True
        return out
    values = released if released is not None else release.table().values
    for name in names:
        attr = schema.attributes[schema.names.index(name)]
        counts = np.bincount(values[:, schema.names.index(name)].astype(np.int64),
                             minlength=len(attr.categories or ()))
        marginal = ((release.claims.get("attribute_disclosure") or {}).get(name) or {}).get("marginal")
        if release.family == "randomized_response" and isinstance(marginal, dict):  # the people's, as signed
            counts = np.array([marginal.get(c, 0) for c in attr.categories or ()], dtype=np.int64)
        top = int(np.argmax(counts)) if counts.size else None
        out[name] = {"value": None if top is None else (attr.categories or ())[top],
                     "share": float(counts[top] / counts.sum()) if top is not None and counts.sum() else 0.0}
    return out


def base_rate_line(name: str, rate: dict[str, Any], show: Callable[[str], str] = literal) -> str:
    """:func:`base_rates`' entry for ``name`` in words: what anyone guesses right knowing nothing of a person
    (``show`` writes a name or value: escaped, or quoted)."""
    if rate.get("value") is None:
        return f"no cell of {show(name)} names one value, so the release proves no base rate of it"
    whose = "of the people in this release" if rate.get("least") or rate.get("signed") else "of the released records"
    signed = " (the publisher's signed count)" if rate.get("signed") else ""
    return (f"{'at least ' if rate.get('least') else ''}{number(rate['share'], share=True)} {whose} are "
            f"{show(rate['value'])}{signed}, so anyone guesses that right for them knowing nothing")


def class_models(release: Any, released: Any = None) -> dict[str, dict[str, Any]]:
    """A generalized release under ARX's class-level models (:mod:`verifier.attacks.class_models`): per
    categorical sensitive attribute, the classes violating enhanced beta-likeness and delta-disclosure privacy
    and the records they hold; empty for every other family (it has no classes). ``released``: the release's
    cells where the caller holds them, as for :func:`base_rates`."""
    if release.family != "generalized":
        return {}
    return class_model_violations(released if released is not None else release.published())


def class_model_lines(models: dict[str, dict[str, Any]], indent: str = "") -> list[str]:
    """The class-level models in words, as the protector's summary and the audit print them."""
    out = []
    for name, entry in models.items():
        beta, delta = entry["enhanced_beta_likeness"], entry["delta_disclosure"]
        out.append(f"{indent}{json.dumps(name)} under ARX's class-level models: enhanced beta-likeness "
                   f"(beta = {number(beta['beta'])}): {beta['classes']:,} of {entry['classes']:,} classes violate it "
                   f"({beta['records']:,} records); delta-disclosure (delta = {number(delta['delta'])}, log base 2): "
                   f"{delta['classes']:,} classes ({delta['records']:,} records)")
    return out
