"""Attribute disclosure risk (SPEC section 6; paper 000, Guo, Ying & Wu; spec/attribute-disclosure.md).

The risk of record r is ``Pr(S_r | QI_r)``: the chance that an attacker who
knows her quasi-identifiers predicts her sensitive value. Three ways to
compute it, by the kind of release:

1. **Randomized response** (:func:`rr_risk`): the closed form of paper 000,
   Result 1 (Eq. 6-8), from the published keep probabilities. It is
   evaluated with Kronecker-structured products (Eq. 9, Lemma 2,
   :func:`kron_matvec`) and never builds the dense Kronecker matrix.
2. **Group-based** (:func:`group_risk`): the share of her QI-group that shares
   her sensitive value (spec section 12).
3. **Permutation-based** (:func:`permutation_risk`): the same share among the
   match set of SPEC section 4 computed on the QI attributes only.
   Where the candidates are whole released groups (categorical QIs, or no
   QI at all), :func:`released_group_risk` counts them per group instead of
   listing every candidate of every record (n^2 / groups of them: 4 GB at
   1e5 census records), with the same risks.

Also: the distortion matrix and its inverse (Eq. 1, Lemma 4), the attacker's
posterior and reconstruction probability (Eq. 4-5), the estimate of the
original distribution (Eq. 2), its expected squared error (Result 2), and
the KL, chi-square and uncertainty-coefficient figures of spec section 13.

Conventions (spec section 1): ``pi`` is a tensor of *proportions* of all
records, shape ``(d_1, ..., d_m, d_s)``, the sensitive attribute last.
Distortion matrices are column-stochastic: ``P[u, v] = Pr(randomized = u |
original = v)``. A keep probability of 1 means the attribute is not
randomized.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from verifier.attacks.distortion import (Transition, checked_keep, distortion, distortion_inverse, distortion_matrix,
                                         invertible, keep_matrix, keep_matrix_inverse, unchanged)
from verifier.core.match_sets import MatchSets
from verifier.data.schema import Schema
from verifier.errors import InvalidInputError

#: a risk this close to 1 is certainty (the rest is rounding): the share of records at it is ``certain_share``
CERTAIN = 1.0 - 1e-9

__all__ = [
    "CERTAIN",
    "candidate_rows",
    "record_disclosure",
    "keep_matrix",
    "keep_matrix_inverse",
    "inverse_frobenius_sq",
    "kron_matvec",
    "ordered_sum",
    "posterior",
    "reconstruction_probability",
    "eta_qi",
    "eta_of_matrices",
    "rho_s",
    "rho_of_matrix",
    "rr_risk",
    "cell_risk",
    "utility_cost",
    "expected_squared_error",
    "estimate_distribution",
    "kl_divergence",
    "chi_square",
    "uncertainty_coefficient",
    "group_risk",
    "permutation_risk",
    "released_group_risk",
]


def inverse_frobenius_sq(d: int, p: float) -> float:
    """``||P^{-1}||_F^2 = 1 + (d-1)^3 / (d p - 1)^2`` (Lemma 4); ``d`` at p = 1."""
    p = checked_keep(d, p)
    if d == 1:
        return 1.0
    return 1.0 + (d - 1) ** 3 / (d * p - 1.0) ** 2


def kron_matvec(mats: Sequence[np.ndarray], x: np.ndarray) -> np.ndarray:
    """``(M_1 (x) ... (x) M_k) x`` for x a tensor of shape ``(d_1, ..., d_k)`` (Eq. 9, Lemma 2).

    Each factor is applied along its own axis: O((sum d_i) prod d_i) time,
    never the ``prod d_i^2`` Kronecker matrix. Returns a tensor of x's shape.
    """
    out = np.asarray(x, dtype=np.float64)
    for axis, m in enumerate(mats):
        if m is None:
            continue
        m = np.asarray(m, dtype=np.float64)
        moved = np.moveaxis(out, axis, 0)
        column = (m.shape[0],) + (1,) * (moved.ndim - 1)
        acc = np.zeros((m.shape[0],) + moved.shape[1:])
        for j in range(m.shape[1]):  # in the column order, one product added at a time, as the page's loop adds
            acc = acc + m[:, j].reshape(column) * moved[j][None]
        out = np.moveaxis(acc, 0, axis)
    return out


def ordered_sum(a: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """The sum of ``a`` (along ``axis``, or of every element in row-major order) added left to right, one term at a
    time: what the page's loops add, to the last bit (numpy's own sum adds in pairs, and a BLAS product in blocks;
    issue 59, item 1)."""
    a = np.asarray(a, dtype=np.float64)
    if axis is None:
        flat = a.ravel()
        return float(np.add.accumulate(flat)[-1]) if flat.size else 0.0
    if a.shape[axis] == 0:
        return np.zeros(np.delete(a.shape, axis))
    return np.take(np.add.accumulate(a, axis=axis), -1, axis=axis)


def _safe_inverse(v: np.ndarray) -> np.ndarray:
    """Component-wise 1/v with 1/0 := 0 (spec section 7: empty randomized cells)."""
    out = np.zeros_like(v, dtype=np.float64)
    np.divide(1.0, v, out=out, where=v > 0)
    return out


def posterior(P: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Eq. (4): ``Pr(X = mu | X~ = nu)``, rows indexed by the observed nu."""
    lam = P @ prior
    return P * prior[None, :] * _safe_inverse(lam)[:, None]


def reconstruction_probability(P: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Lemma 1 / Eq. (5): ``R(mu) = sum_nu P[nu, mu]^2 prior[mu] / lambda[nu]`` (the attacker samples his guess)."""
    lam = P @ prior
    return prior * ((P ** 2).T @ _safe_inverse(lam))


def eta_qi(pi_qi: np.ndarray, p_qi: Sequence[float | Transition]) -> np.ndarray:
    """Eq. (7) evaluated by Eq. (9): ``Pr(QI^ = a | QI = a)`` for every QI combination a; ``p_qi`` each QI
    attribute's distortion (a keep probability or a published transition matrix, :mod:`.distortion`)."""
    dims = pi_qi.shape
    if all(unchanged(p) for p in p_qi):
        return np.ones(dims)
    return eta_of_matrices(pi_qi, [distortion_matrix(d, p) for d, p in zip(dims, p_qi)])


def eta_of_matrices(pi_qi: np.ndarray, mats: Sequence[np.ndarray]) -> np.ndarray:
    """Eq. (9) for any column-stochastic factors ``mats`` (one per QI attribute, each ``(rows, d_k)``): the
    keep matrices of one release, or their stacks over several (:mod:`verifier.attacks.composition`)."""
    lam = kron_matvec(mats, pi_qi)
    squares = [(m ** 2).T for m in mats]
    return pi_qi * kron_matvec(squares, _safe_inverse(lam))


def rho_s(pi: np.ndarray, p_s: float | Transition) -> np.ndarray:
    """Eq. (8): ``Pr(S^ = u | S = u, QI = a)`` for every cell (a, u); O(D d_s)."""
    if unchanged(p_s):
        return np.ones(pi.shape)
    return rho_of_matrix(pi, distortion_matrix(pi.shape[-1], p_s))


def rho_of_matrix(pi: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Eq. (8) for any column-stochastic ``P`` of shape ``(rows, d_s)``: one keep matrix, or a stack of them."""
    d_s = pi.shape[-1]
    flat = pi.reshape(-1, d_s)
    P = np.asarray(P, dtype=np.float64)
    lam_s = np.zeros((flat.shape[0], P.shape[0]))  # lambda_S[a, v] = sum_w P[v, w] pi[a, w], in w's order
    for w in range(d_s):
        lam_s = lam_s + P[:, w][None, :] * flat[:, w][:, None]
    inv = _safe_inverse(lam_s)
    acc = np.zeros(flat.shape)  # sum_v inv[a, v] P[v, u] P[v, u], in v's order
    for v in range(P.shape[0]):
        acc = acc + (inv[:, v][:, None] * P[v][None, :]) * P[v][None, :]
    return (flat * acc).reshape(pi.shape)


def rr_risk(pi: np.ndarray, p_qi: Sequence[float | Transition], p_s: float | Transition) -> np.ndarray:
    """Result 1, Eq. (6): ``Pr(S_r | QI_r) = c[a, u] eta_QI(a) rho_S(a, u)`` for every cell (a, u).

    ``pi`` holds proportions, shape ``(d_1..d_m, d_s)``; ``p_qi`` one keep
    probability per QI attribute (1 = not randomized); ``p_s`` the sensitive
    attribute's; each may be a published transition matrix instead. Empty cells get 0. With every p = 1 it is
    the no-randomization risk ``c[a, u]`` (Sec. 6).
    """
    pi = np.asarray(pi, dtype=np.float64)
    if len(p_qi) != pi.ndim - 1:
        raise InvalidInputError(f"give one keep probability per QI attribute ({pi.ndim - 1})", reason="PARAMETER_INVALID")
    return cell_risk(pi, eta_qi(ordered_sum(pi, axis=-1), p_qi), rho_s(pi, p_s))


def cell_risk(pi: np.ndarray, eta: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Eq. (6) from its factors: ``c[a, u] eta(a) rho(a, u)`` for every cell, 0 where no record is."""
    sums = ordered_sum(pi, axis=-1)[..., None]
    c = np.divide(pi, sums, out=np.zeros(pi.shape), where=sums > 0)
    risk = c * eta[..., None] * rho
    risk[pi <= 0] = 0.0
    return np.minimum(risk, 1.0)  # a probability: a product of rounded factors may pass 1 by an ulp


def utility_cost(dims: Sequence[int], ps: Sequence[float]) -> float:
    """J = prod_i ||P_i^{-1}||_F^2 / d_i (Result 2): 1 without randomization, larger the more is randomized."""
    return float(np.prod([inverse_frobenius_sq(d, p) / d for d, p in zip(dims, ps)]))


def expected_squared_error(pi: np.ndarray, ps: Sequence[float], n: int) -> float:
    """Result 2 / Lemma 3: ``E||pi_hat - pi||^2 = (prod ||P_i^{-1}||_F^2 / D - ||pi||^2) / N``."""
    dims = pi.shape
    D = int(np.prod(dims))
    norm = float(np.prod([inverse_frobenius_sq(d, p) for d, p in zip(dims, ps)]))
    return (norm / D - float(np.sum(pi ** 2))) / n


def estimate_distribution(lam: np.ndarray, ps: Sequence[float | Transition], *, clip: bool = True) -> np.ndarray:
    """Eq. (2): ``pi_hat = P^{-1} lambda_hat``; clipped to >= 0 and renormalized unless ``clip=False``."""
    mats = [distortion_inverse(d, p) for d, p in zip(lam.shape, ps)]
    est = kron_matvec(mats, lam)
    if clip:
        est = np.clip(est, 0.0, None)
        total = ordered_sum(est)
        est = est / total if total > 0 else est
    return est


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """``sum_{p_i > 0} p_i ln(p_i / q_i)``; infinite where q is 0 and p is not."""
    p, q = np.ravel(p).astype(float), np.ravel(q).astype(float)
    mask = p > 0
    if np.any(q[mask] <= 0):
        return math.inf
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def chi_square(p: np.ndarray, q: np.ndarray) -> float:
    """``sum_i (p_i - q_i)^2 / q_i`` over q_i > 0 (q the original distribution)."""
    p, q = np.ravel(p).astype(float), np.ravel(q).astype(float)
    mask = q > 0
    return float(np.sum((p[mask] - q[mask]) ** 2 / q[mask]))


def uncertainty_coefficient(table: np.ndarray, *, symmetric: bool = False) -> float:
    """Theil's U(C|R) of a two-way table (rows R, columns C the response), in [0, 1]."""
    t = np.asarray(table, dtype=float)
    t = t / t.sum()
    r, c = t.sum(axis=1), t.sum(axis=0)
    nz = t > 0
    mutual = float(np.sum(t[nz] * np.log(t[nz] / np.outer(r, c)[nz])))
    h_c = -float(np.sum(c[c > 0] * np.log(c[c > 0])))
    h_r = -float(np.sum(r[r > 0] * np.log(r[r > 0])))
    if symmetric:
        return 2 * mutual / (h_r + h_c) if h_r + h_c > 0 else 0.0
    return mutual / h_c if h_c > 0 else 0.0


def group_risk(groups: np.ndarray, sensitive: np.ndarray) -> np.ndarray:
    """Spec section 12: per record, the share of its group whose sensitive value equals its own.

    ``groups`` labels each record's QI-group (equivalence class, anatomy
    bucket, or the records with the same published QI values).
    """
    groups = np.asarray(groups)
    sensitive = np.asarray(sensitive)
    _, g = np.unique(groups, return_inverse=True, axis=0 if groups.ndim > 1 else None)
    _, s = np.unique(sensitive, return_inverse=True)
    g, s = g.ravel(), s.ravel()
    pair = g.astype(np.int64) * (int(s.max()) + 1 if s.size else 1) + s
    _, pair_inverse, pair_counts = np.unique(pair, return_inverse=True, return_counts=True)
    group_counts = np.bincount(g)
    return pair_counts[pair_inverse.ravel()] / group_counts[g]


def permutation_risk(
    sets: MatchSets,
    own_sensitive: np.ndarray,
    released_sensitive: np.ndarray,
    *,
    tolerance: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """SPEC section 6, mode 3: per record, the share of its QI match set whose sensitive value is hers.

    ``sets`` holds every record's match set (:class:`~verifier.core.match_sets.MatchSets`; ``MatchSets.each``
    for sets listed record by record). For a numeric sensitive attribute, pass ``tolerance`` (default in the
    callers: 5% of its range): a candidate counts when within it. Returns the risks and the number of
    candidates.
    """
    counts = sets.counts
    hits = sets.value_hits(own_sensitive, released_sensitive, tolerance)
    return np.where(counts > 0, hits / np.maximum(counts, 1), 0.0), counts


def released_group_risk(
    original_groups: np.ndarray,
    released_groups: np.ndarray,
    own_sensitive: np.ndarray,
    released_sensitive: np.ndarray,
    *,
    tolerance: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`permutation_risk` where each record's candidates are the released records of her group.

    ``original_groups[r]`` and ``released_groups[i]`` are integer group
    labels (the same label for the same QI values). Returns the same risks
    and candidate counts as :func:`permutation_risk` given every released
    record of her group as her match set, bit for bit, in O(n log n): the
    released records are sorted by group and sensitive value, and each
    record's hits are a range of that order. With ``tolerance``, the range
    is found by the very test ``|theirs - mine| <= tolerance`` (it holds on
    an interval of sorted values, since rounding is monotone).
    """
    original_groups = np.asarray(original_groups, dtype=np.int64)
    released_groups = np.asarray(released_groups, dtype=np.int64)
    mine = np.asarray(own_sensitive, dtype=np.float64)
    values, code = np.unique(np.asarray(released_sensitive, dtype=np.float64), return_inverse=True)
    width = np.int64(values.size + 1)
    keys = np.sort(released_groups * width + code.ravel())
    base = original_groups * width
    counts = np.searchsorted(keys, base + width, "left") - np.searchsorted(keys, base, "left")
    if tolerance is None:
        lo = np.searchsorted(values, mine, "left")
        hi = np.searchsorted(values, mine, "right")
    else:
        lo = _edge(values, mine, tolerance, np.searchsorted(values, mine - tolerance, "left"), inside_before=True)
        hi = _edge(values, mine, tolerance, np.searchsorted(values, mine + tolerance, "right"), inside_before=False)
        hi = np.maximum(hi, lo)
    hits = np.searchsorted(keys, base + hi, "left") - np.searchsorted(keys, base + lo, "left")
    return np.where(counts > 0, hits.astype(np.float64) / np.maximum(counts, 1), 0.0), counts


def _edge(values: np.ndarray, mine: np.ndarray, tolerance: float, guess: np.ndarray, *,
          inside_before: bool) -> np.ndarray:
    """Move each ``guess`` (an index into sorted ``values``) to the exact edge of ``|v - mine| <= tolerance``.

    ``inside_before``: the edge is the first value inside (moving down while
    the value below is inside, up while the value at it is outside);
    otherwise the first value past the inside. Rounding differs from the
    searched bound by an ulp at most, so a step or two settles it.
    """
    def inside(at: np.ndarray) -> np.ndarray:
        return np.abs(values[np.clip(at, 0, values.size - 1)] - mine) <= tolerance

    edge = guess.copy()
    if values.size == 0:
        return edge
    while True:
        if inside_before:
            down = (edge > 0) & inside(edge - 1)
            up = ~down & (edge < values.size) & ~inside(edge) & (values[np.clip(edge, 0, values.size - 1)] < mine)
        else:
            up = (edge < values.size) & inside(edge)
            down = ~up & (edge > 0) & ~inside(edge - 1) & (values[np.clip(edge - 1, 0, values.size - 1)] > mine)
        if not (up.any() or down.any()):
            return edge
        edge += up.astype(np.int64) - down.astype(np.int64)


def candidate_rows(y: np.ndarray, schema: Schema, record: np.ndarray) -> tuple[np.ndarray, str]:
    """Her candidate records in a release with ranks, and how they were found (``mode``): every record when
    there is no quasi-identifier (``none``), those with exactly her categorical quasi-identifiers (``group``),
    else her match set on them (``permutation``)."""
    from verifier.core.permutation import SingleRecord

    attrs = list(schema.attributes)
    qi = [j for j, a in enumerate(attrs) if a.role == "quasi_identifier"]
    if not qi:
        return np.arange(y.shape[0]), "none"
    if all(attrs[j].kind != "numeric" for j in qi):
        return np.flatnonzero(np.all(y[:, qi] == record[qi], axis=1)), "group"
    return SingleRecord(y[:, qi], [attrs[j].kind for j in qi], record[qi]).result.matches, "permutation"


def record_disclosure(
    y: np.ndarray,
    schema: Schema,
    record: np.ndarray,
    *,
    keep_probabilities: dict[str, float] | None = None,
    tolerance: float = 0.05,
) -> dict[str, Any]:
    """A subject's own attribute disclosure risk from the release alone (SPEC section 6), per sensitive attribute.

    ``record`` holds her rank keys in schema order. For a randomized response
    release (``keep_probabilities`` from its manifest), the closed form of
    paper 000 on the distribution estimated from the release (Eq. 2, clipped):
    the attacker's view, since nobody but the protector knows the true one.
    Otherwise the group-based (categorical QIs) or permutation-based share.
    Each entry holds the risk, the number of candidates and the attacker's
    best guess (the most frequent sensitive value among the candidates, as a
    category position or a value).
    """
    attrs = list(schema.attributes)
    qi = [j for j, a in enumerate(attrs) if a.role == "quasi_identifier"]
    out: dict[str, Any] = {}
    members = mode = None
    for s, attr in enumerate(attrs):
        if attr.role != "sensitive":
            continue
        cat_qi = [j for j in qi if attrs[j].kind != "numeric"]
        if keep_probabilities and attr.kind != "numeric" and len(cat_qi) == len(qi):
            dims = [len(attrs[j].categories or ()) for j in cat_qi] + [len(attr.categories or ())]
            index = np.zeros(y.shape[0], dtype=np.int64)
            for j, d in zip([*cat_qi, s], dims):
                index = index * d + y[:, j].astype(np.int64)
            lam = np.bincount(index, minlength=int(np.prod(dims))).reshape(dims) / max(y.shape[0], 1)
            ps = [distortion(keep_probabilities.get(attrs[j].name, 1.0)) for j in [*cat_qi, s]]
            pi_hat = estimate_distribution(lam, ps) if all(invertible(d, p) for p, d in zip(ps, dims)) else lam
            cell = tuple(int(record[j]) for j in cat_qi)
            risk = float(rr_risk(pi_hat, ps[:-1], ps[-1])[cell + (int(record[s]),)])
            share = pi_hat[cell]
            candidates = int(np.all(y[:, cat_qi] == record[cat_qi], axis=1).sum()) if cat_qi else y.shape[0]
            guess = int(np.argmax(share)) if share.sum() > 0 else None
            out[attr.name] = {"mode": "randomized_response", "risk": risk, "candidates": candidates,
                              "best_guess": guess}
            continue
        members, mode = candidate_rows(y, schema, record) if members is None else (members, mode)
        theirs = y[members, s]
        if attr.kind == "numeric":
            tol = tolerance * float(y[:, s].max() - y[:, s].min()) if y.shape[0] else 0.0
            hit = np.abs(theirs - record[s]) <= tol
        else:
            tol = None
            hit = theirs == record[s]
        values, counts = np.unique(theirs, return_counts=True)
        out[attr.name] = {
            "mode": mode,
            "risk": float(hit.mean()) if members.size else 0.0,
            "candidates": int(members.size),
            "best_guess": float(values[np.argmax(counts)]) if members.size else None,
            **({"tolerance": tol} if tol is not None else {}),
        }
    return out
