"""The named intruder's exact posterior on a small table: the oracle every verdict is held to (SPEC section 16).

The intruder the project names knows every person's quasi-identifiers q, the method M with its published
parameters theta, and the population's shares pi of the sensitive values; not the values s and not the seed w.
For person i and value v (SPEC section 16)::

    P(s_i = v | R) = sum over s with s_i = v of pi(s) L(R | s)  /  sum over s of pi(s) L(R | s),
    pi(s) = prod_j pi(s_j),    L(R | s) = P_w[ M(q, s; theta, w) = R ].

:func:`exact_posteriors` computes it by enumeration, every assignment of sensitive values with a positive share
(|V|^n of them), so it is for small tables only (:data:`MOST_RUNS`):

- a method deterministic up to the seed's row shuffle (SD k-anonymity, two-step generalization, an external
  generalization read as the one it declares) is rerun on every assignment, with the release's seed, and
  L is 1 where its output equals the release as a multiset of rows *and* its published parameters (counterfeit
  counts, masks) are the release's, else 0; a refusal is L = 0 (nothing would have been published);
- a randomized method (:data:`LIKELIHOODS`: randomized response, random attribute replacement, SD k-anonymity
  with masks drawn at random) weighs each
  assignment by its own likelihood of the release: the rows were shuffled uniformly, so L is, up to a constant,
  the permanent of the matrix of each person's likelihood of producing each released row
  (:func:`permanent`), times whether the parameters the method derives from that table are the published ones;
- a method whose only draw is the order it takes the people in (:data:`ORDERED`: m-invariance, whose seed
  shuffles the people before grouping them) is rerun in every one of the n! orders: L is the share of the orders
  whose output equals the release. It publishes every person's sensitive value as it is, so an assignment whose
  values are not among the release's is L = 0 without a run.

Her oracle level (:meth:`OracleResult.levels`) is the verdict policy applied to the oracle's posterior of her
true value beside its base rate pi(v): the rules on ``posterior``, ``prior``, ``beta`` and ``delta``. A verdict is
sound when no person's level is milder than the oracle's (``tests/test_exact_oracle.py``,
``python -m experiments kerckhoffs``). This module runs only in tests and the experiment: never in a release.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from publisher.methods import anonymize, make_method
from publisher.methods.random_replacement import distributions
from verifier.data.schema import Schema
from verifier.errors import InvalidInputError
from verifier.releases.exposure import with_base_rate
from verifier.releases.policy import Policy
from verifier.releases.verdict import HerFigures, policy_verdict

__all__ = ["LIKELIHOODS", "MOST_ORDERED_RUNS", "MOST_RUNS", "ORDERED", "OracleResult", "exact_posteriors", "permanent", "population_shares"]

#: assignments enumerated at the most (3^9 = 19,683: nine people with three values, or fourteen with two)
MOST_RUNS = 20_000
#: runs of a method rerun in every order (:data:`ORDERED`) at the most: assignments left times n!
MOST_ORDERED_RUNS = 60_000
#: the methods whose only draw is the order they take the people in; each has ``in_order(order)``
ORDERED = frozenset({"m_invariant"})


def permanent(a: np.ndarray) -> float:
    """The permanent of a square matrix, by Ryser's formula (2^n terms): the sum over every bijection of rows to
    columns of the product of the entries it picks."""
    n = a.shape[0]
    if n == 0:
        return 1.0
    masks = (np.arange(1, 2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
    sums = a @ masks.T.astype(np.float64)  # each row's sum over each subset of columns
    signs = np.where((n - masks.sum(axis=1)) % 2 == 0, 1.0, -1.0)
    return float(np.sum(signs * np.prod(sums, axis=0)))


def population_shares(table: pd.DataFrame, names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each sensitive attribute's shares in the table: the prior the intruder holds (the population's)."""
    return {n: {str(v): c / len(table) for v, c in table[n].astype(str).value_counts().items()} for n in names}


def _rr_likelihood(schema: Schema, table: pd.DataFrame, released: pd.DataFrame,
                   parameters: Mapping[str, Any]) -> np.ndarray:
    """Randomized response (paper 000, Eq. 1): a value kept with probability p, else moved to one of the other
    d - 1 categories uniformly; an attribute it does not randomize is published as it is."""
    keep = parameters["keep_probabilities"]
    like = np.ones((len(table), len(released)))
    for name in schema.names:
        mine = table[name].astype(str).to_numpy()[:, None]
        shown = released[name].astype(str).to_numpy()[None, :]
        p = float(keep.get(name, 1.0)) if isinstance(keep, Mapping) else 1.0
        d = len(schema[name].categories or ())
        moved = (1.0 - p) / (d - 1) if d > 1 else 0.0
        like *= np.where(mine == shown, p, moved)
    return like


def _ra_likelihood(schema: Schema, table: pd.DataFrame, released: pd.DataFrame,
                   parameters: Mapping[str, Any]) -> np.ndarray:
    """Random attribute replacement (paper 004, Algorithms 1 and 2): k of the replaced attributes chosen (one by
    the published p when k = 1, every k-subset alike otherwise), each re-drawn from its distribution in the table;
    every other attribute, the sensitive ones included, is published as it is."""
    names = list(parameters.get("attributes") or [a.name for a in schema.attributes if a.role == "quasi_identifier"])
    k = int(parameters["k"])
    dists = distributions(list(table[names].itertuples(index=False, name=None)))
    mine = {n: table[n].astype(str).to_numpy()[:, None] for n in schema.names}
    shown = {n: released[n].astype(str).to_numpy()[None, :] for n in schema.names}
    same = {n: mine[n] == shown[n] for n in schema.names}
    drawn = {n: np.vectorize(lambda t, d=d: sum(p for v, p in zip(d.values, d.probs) if str(v) == t))(shown[n])
             for n, d in zip(names, dists)}
    kept = np.ones((len(table), len(released)), dtype=bool)
    for n in schema.names:
        if n not in names:
            kept &= same[n]
    if k == 1:
        subsets, weights = [(i,) for i in range(len(names))], [float(p) for p in parameters["p_used"]]
    else:
        subsets = list(itertools.combinations(range(len(names)), k))
        weights = [1.0 / len(subsets)] * len(subsets)
    like = np.zeros((len(table), len(released)))
    for subset, w in zip(subsets, weights):
        term = np.full(like.shape, w)
        for i, n in enumerate(names):
            term = term * (drawn[n] if i in subset else same[n])
        like += term
    return like * kept


def _masked_sd_likelihood(schema: Schema, table: pd.DataFrame, released: pd.DataFrame,
                          parameters: Mapping[str, Any]) -> np.ndarray:
    """SD k-anonymity with masks (``mask_probability`` q): the classes are SD's on the quasi-identifiers alone, the
    same for every assignment; each categorical sensitive cell is then ``*`` with probability q whatever its value,
    else the person's own value."""
    q = float(parameters["mask_probability"])
    plain = {k: v for k, v in parameters.items() if k != "mask_probability"}
    recoded = make_method("sd_k_anonymity", plain, allow_degenerate=True).apply(table, schema, random_state=None).table
    like = np.ones((len(table), len(released)))
    for a in schema.attributes:
        mine = table[a.name].astype(str).to_numpy()[:, None]
        shown = released[a.name].astype(str).to_numpy()[None, :]
        if a.role == "sensitive" and a.kind != "numeric":
            like *= np.where(shown == "*", q, np.where(mine == shown, 1.0 - q, 0.0))
        else:
            like *= recoded[a.name].astype(str).to_numpy()[:, None] == shown
    return like


def _rows_multiset(table: pd.DataFrame) -> str:
    """A table's rows as a multiset: what randomized response derives its keep probabilities from (the
    contingency table, for a target l)."""
    return "\x1f".join(sorted(table.astype(str).agg("\x1e".join, axis=1)))


def _quasi_identifiers_only(table: pd.DataFrame) -> str:
    """Random replacement derives its parameters (the attribute probabilities p) from the quasi-identifiers alone,
    which the intruder knows: the same for every assignment of sensitive values."""
    return ""


@dataclass(frozen=True)
class Likelihood:
    """A randomized method's likelihood of every released row for every person, ``rows(schema, table, released,
    parameters)`` -> people x rows (a person's row reads her own values and the public parameters alone), and
    ``derived(table)``, what the parameters it publishes are computed from (equal keys, equal parameters)."""

    rows: Callable[..., np.ndarray]
    derived: Callable[[pd.DataFrame], str]


#: the randomized methods the oracle weighs by their likelihood
LIKELIHOODS: dict[str, Likelihood] = {
    "randomized_response": Likelihood(_rr_likelihood, _rows_multiset),
    "random_attribute_replacement": Likelihood(_ra_likelihood, _quasi_identifiers_only),
    "sd_k_anonymity": Likelihood(_masked_sd_likelihood, _quasi_identifiers_only),
}


def _likelihood(method: str, params: Mapping[str, Any]) -> Likelihood | None:
    """The likelihood the oracle weighs ``method`` by, or None for a method it reruns: SD k-anonymity is rerun
    unless it masks cells at random."""
    if method == "sd_k_anonymity" and not params.get("mask_probability"):
        return None
    return LIKELIHOODS.get(method)


@dataclass(frozen=True)
class OracleResult:
    """Each person's exact posterior of each value of each sensitive attribute, and how it was found."""

    values: dict[str, tuple[str, ...]]
    """Per sensitive attribute, its values with a positive share (the columns of ``posteriors``)."""
    posteriors: dict[str, np.ndarray]
    """Per sensitive attribute, people x values: P(s_i = v | R)."""
    prior: dict[str, dict[str, float]]
    runs: int
    consistent: int
    """How many assignments the release allows (L > 0); the true one always among them."""

    def posterior_of(self, name: str, truths: Sequence[Any]) -> np.ndarray:
        """Each person's posterior of her own value ``truths[i]``."""
        at = {v: j for j, v in enumerate(self.values[name])}
        return np.array([self.posteriors[name][i, at[str(t)]] for i, t in enumerate(truths)])

    def levels(self, policy: Policy, table: pd.DataFrame) -> list[str]:
        """Each person's level: ``policy`` on the oracle's posterior of her true value and its base rate pi(v)."""
        found = {n: self.posterior_of(n, table[n].astype(str).tolist()) for n in self.values}
        out = []
        for i in range(len(table)):
            figures = {n: with_base_rate({"risk": float(found[n][i])}, self.prior[n][str(table[n].iloc[i])])
                       for n in self.values}
            out.append(policy_verdict(policy, HerFigures(figures)).level)
        return out


@dataclass(frozen=True)
class Declared:
    """A declared generalization's output, shaped as a method's run."""

    released: pd.DataFrame
    steps: list


def _canonical(released: pd.DataFrame, steps: Sequence[Mapping[str, Any]]) -> tuple:
    """A release as the intruder compares it: its rows as a multiset, and every published parameter."""
    rows = sorted(tuple(str(c) for c in row) for row in released.itertuples(index=False, name=None))
    return tuple(rows), json.dumps([s["parameters"] for s in steps], sort_keys=True, default=str)


def _run(table: pd.DataFrame, schema: Schema, method: str | Callable[[pd.DataFrame], pd.DataFrame],
         params: Mapping[str, Any], seed: int, allow_degenerate: bool):
    """The method's release of ``table`` with ``seed``, or None where the method refuses it. A callable method is
    another tool's output read as the generalization it declares: the table's cells as it recodes them, with no
    parameter of its own (the row shuffle aside, which a multiset does not see)."""
    if callable(method):
        return Declared(method(table), [{"parameters": {}}])
    try:
        chain = [make_method(method, dict(params), allow_degenerate=allow_degenerate)]
        return anonymize(table, schema, chain, random_state=seed)
    except InvalidInputError:
        return None


def _ordered_share(trial: pd.DataFrame, schema: Schema, method: str, params: Mapping[str, Any], seed: int,
                   allow_degenerate: bool, target: tuple) -> float:
    """The share of the n! orders in which ``method`` (one of :data:`ORDERED`) turns ``trial`` into the release
    ``target``: its L, the seed drawing every order alike. A refusal in an order counts as no release."""
    n, hit = len(trial), 0
    step = make_method(method, dict(params), allow_degenerate=allow_degenerate)
    for order in itertools.permutations(range(n)):
        try:
            run = anonymize(trial, schema, [step.in_order(order)], random_state=seed)
        except InvalidInputError:
            continue
        hit += _canonical(run.released, run.steps) == target
    return hit / math.factorial(n)


def _assignments(table: pd.DataFrame, names: Sequence[str],
                 prior: Mapping[str, Mapping[str, float]]) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """Every joint sensitive value a person can hold (the product of each attribute's values with a positive
    share) and its prior, the product of the shares."""
    domains = [sorted(prior[n]) for n in names]
    joint = list(itertools.product(*domains))
    return joint, np.array([math.prod(prior[n][v] for n, v in zip(names, t)) for t in joint])


def _row_likelihoods(table: pd.DataFrame, schema: Schema, names: Sequence[str], joint: Sequence[tuple[str, ...]],
                     truth: Any, likelihood: Likelihood) -> np.ndarray:
    """For each joint sensitive value t, each person's likelihood of each released row were t hers (values x people
    x rows): a person's row of the matrix whose permanent is L depends on her own values alone."""
    out = []
    for t in joint:
        trial = table.copy()
        for j, name in enumerate(names):
            trial[name] = t[j]
        out.append(likelihood.rows(schema, trial, truth.released, truth.steps[0]["parameters"]))
    return np.array(out)


def exact_posteriors(table: pd.DataFrame, schema: Schema, method: str | Callable[[pd.DataFrame], pd.DataFrame],
                     params: Mapping[str, Any], *, seed: int, allow_degenerate: bool = False) -> OracleResult:
    """The named intruder's exact posterior of every person's sensitive values in the release of ``table`` by
    ``method`` with ``params`` and ``seed`` (the module's formula); ``table`` holds the true values. ``method`` is
    a method's name, or a function that recodes a table as another tool's output declares it did."""
    names = [a.name for a in schema.attributes if a.role == "sensitive"]
    prior = population_shares(table, names)
    joint, weight = _assignments(table, names, prior)
    n = len(table)
    runs = len(joint) ** n
    if runs > MOST_RUNS:
        raise ValueError(f"the oracle enumerates {len(joint)}^{n} = {runs:,} assignments; at most {MOST_RUNS:,}")
    truth = _run(table, schema, method, params, seed, allow_degenerate)
    if truth is None:
        raise ValueError(f"{method} refuses the true table: there is no release to attack")
    target = _canonical(truth.released, truth.steps)
    likelihood = None if callable(method) else _likelihood(method, params)
    picks = list(itertools.product(range(len(joint)), repeat=n))
    ordered = not callable(method) and method in ORDERED
    if ordered:
        shown = Counter(truth.released[names].astype(str).itertuples(index=False, name=None))
        picks = [p for p in picks if not Counter(joint[c] for c in p) - shown]
        if len(picks) * math.factorial(n) > MOST_ORDERED_RUNS:
            raise ValueError(f"the oracle reruns {method} on {len(picks):,} assignments in {n}! orders each; at most "
                             f"{MOST_ORDERED_RUNS:,} runs")
    mass = np.zeros((n, len(joint)))
    consistent = 0
    memo: dict[str, Any] = {}
    rows = _row_likelihoods(table, schema, names, joint, truth, likelihood) if likelihood is not None else None
    for pick in picks:
        trial = table.copy()
        for j, name in enumerate(names):
            trial[name] = [joint[c][j] for c in pick]
        if ordered:
            hit = _ordered_share(trial, schema, method, params, seed, allow_degenerate, target)
        elif likelihood is None:
            run = _run(trial, schema, method, params, seed, allow_degenerate)
            hit = 1.0 if run is not None and _canonical(run.released, run.steps) == target else 0.0
        else:
            key = likelihood.derived(trial)
            if key not in memo:
                run = _run(trial, schema, method, params, seed, allow_degenerate)
                memo[key] = None if run is None else _canonical(run.released, run.steps)[1]
            hit = permanent(rows[list(pick), np.arange(n)]) if memo[key] == target[1] else 0.0
        if hit > 0:
            consistent += 1
            mass[np.arange(n), list(pick)] += hit * math.prod(weight[c] for c in pick)
    total = mass.sum(axis=1, keepdims=True)
    posteriors = {}
    values = {}
    for j, name in enumerate(names):
        values[name] = tuple(sorted(prior[name]))
        cols = np.array([[joint[c][j] == v for v in values[name]] for c in range(len(joint))], dtype=np.float64)
        posteriors[name] = (mass @ cols) / total
    return OracleResult(values, posteriors, prior, runs, consistent)
