"""The sampling error of her risk estimated from a randomized-response release (issue 50, item 3).

Her risk under randomized response is paper 000's closed form (Result 1,
Eq. 6) at her cell, on the distribution an attacker estimates from the
release (Eq. 2: ``pi_hat = P^-1 lambda_hat``, clipped). The publisher signs
the same risk on the original's distribution. The two differ by the
randomization's noise alone, so an estimate above the signed bound is a broken
promise only when it is above it by more than that noise can explain.

The noise is measured by the delta method. ``lambda_hat``, the release's
frequencies over the modelled cells, is a mean of ``n`` independent draws, so
its covariance is at most the multinomial one, ``(diag(lambda) - lambda
lambda^T) / n`` (each record's draw has its own mean; their spread only
shrinks the covariance). With ``g`` the gradient of her risk with respect to
``lambda`` (exact, by the chain rule through Eq. 2 and Eq. 6-9), the
estimate's standard error is ``sqrt(g^T Sigma g)``, and its one-sided 99%
sampling error ``z_0.99`` times that. docs/attribute-disclosure.md gives the
derivation.

Her risk is ``A B C`` at her cell ``(a, u)``: ``A = pi(a, u)``, ``B = sum_b
K2[a, b] / lambda_QI(b)`` (``lambda_QI = K pi_QI``, ``K`` the Kronecker product
of the QIs' keep matrices, ``K2[a, b] = K[b, a]^2``: Eq. 9's eta divided by
``pi_QI(a)``) and ``C = pi(a, u) sum_v P_s[v, u]^2 / lambda_S(a, v)`` (Eq. 8's
rho). It is unchanged by scaling ``pi``, so the normalisation after clipping
adds nothing to the gradient but a factor; a clipped cell adds nothing.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from verifier.attacks.disclosure import kron_matvec, ordered_sum
from verifier.attacks.distortion import Transition, distortion_inverse, distortion_matrix, invertible, unchanged

__all__ = ["CONFIDENCE", "Z_ONE_SIDED", "risk_gradient", "rr_sampling_error"]

#: the one-sided confidence of the sampling error
CONFIDENCE = 0.99
#: the standard normal quantile at CONFIDENCE
Z_ONE_SIDED = 2.3263478740408408


def _inverse(v: np.ndarray) -> np.ndarray:
    out = np.zeros_like(v, dtype=np.float64)
    np.divide(1.0, v, out=out, where=v > 0)
    return out


def _pi_gradient(pi: np.ndarray, ps: Sequence[float | Transition], cell: tuple[int, ...]) -> np.ndarray:
    """The gradient of her raw risk ``A B C`` with respect to ``pi`` at her ``cell`` (QI positions, then her
    sensitive value); 0 where the risk is 0 or clipped at 1."""
    a, u = cell[:-1], cell[-1]
    dims = pi.shape
    grad = np.zeros(dims)
    p_qi, p_s = list(ps[:-1]), ps[-1]
    A = float(pi[cell])
    if A <= 0:
        return grad
    mats = [distortion_matrix(d, p) for d, p in zip(dims[:-1], p_qi)]
    pi_qi = ordered_sum(pi, axis=-1)  # every sum here adds in index order, as the page's twin does (issue 59)
    if all(unchanged(p) for p in p_qi):  # eta is 1: B = 1 / pi_QI(a)
        B = 1.0 / float(pi_qi[a])
        grad_qi = np.zeros(dims[:-1])
        grad_qi[a] = -B * B
    else:
        inv = _inverse(kron_matvec(mats, pi_qi))
        row = np.ones(())  # K2[a, :] as a tensor: the outer product of each keep matrix's column a_i, squared
        for m, ai in zip(mats, a):
            row = np.multiply.outer(row, m[:, ai] ** 2)
        B = ordered_sum(row * inv)
        grad_qi = -kron_matvec([m.T for m in mats], row * inv * inv)
    if unchanged(p_s):  # rho is 1
        C, grad_c = 1.0, np.zeros(dims[-1])
    else:
        P = distortion_matrix(dims[-1], p_s)
        inv_s = _inverse(np.array([ordered_sum(P[v] * pi[a]) for v in range(P.shape[0])]))
        weights = P[:, u] ** 2
        total = ordered_sum(weights * inv_s)
        C = A * total
        grad_c = -A * ordered_sum(((weights * inv_s) * inv_s)[:, None] * P, axis=0)
        grad_c[u] += total
    if A * B * C >= 1.0:  # the risk is clipped at 1 there: no small change moves it
        return grad
    grad += (A * C) * grad_qi[..., None]
    grad[a] += (A * B) * grad_c
    grad[cell] += B * C
    return grad


def risk_gradient(lam: np.ndarray, ps: Sequence[float | Transition], cell: tuple[int, ...]) -> np.ndarray:
    """The gradient of her estimated risk with respect to the release's frequencies ``lam`` (shape of the
    modelled cells), through Eq. 2 (clipped and renormalised) where the keep matrices can be inverted, as
    :func:`verifier.attacks.models.rr_record` estimates."""
    dims = lam.shape
    if not all(invertible(d, p) for p, d in zip(ps, dims)):
        return _pi_gradient(lam, ps, cell)
    mats = [distortion_inverse(d, p) for d, p in zip(dims, ps)]
    raw = kron_matvec(mats, lam)
    kept = np.clip(raw, 0.0, None)
    total = ordered_sum(kept)
    if total <= 0:
        return np.zeros(dims)
    grad = _pi_gradient(kept / total, ps, cell) / total * (raw > 0)
    return kron_matvec([m.T for m in mats], grad)


def rr_sampling_error(lam: np.ndarray, ps: Sequence[float | Transition], cell: tuple[int, ...], n: int) -> float:
    """The one-sided :data:`CONFIDENCE` sampling error of her estimated risk: ``z`` times its delta-method
    standard error under the multinomial covariance of the release's ``n`` records."""
    if n <= 0:
        return 0.0
    g = risk_gradient(lam, ps, cell).ravel()
    weights = lam.ravel()
    first = ordered_sum(weights * g)
    variance = (ordered_sum(weights * g * g) - first * first) / n
    return Z_ONE_SIDED * math.sqrt(max(variance, 0.0))
