"""The distortion matrix of a randomized attribute (paper 000, Eq. 1; issue 61, item 3).

Randomized response publishes, per randomized attribute, how a value is
moved: this tool's method one keep probability ``p`` (keep the value with
probability p, else move it to each other value alike: :func:`keep_matrix`),
another tool's post-randomization (sdcMicro's ``pram``, its ``Rs``) a whole
transition matrix (:class:`Transition`). Either is the attribute's
*distortion*: every figure of the randomized-response model (Result 1, Eq. 2,
the sampling error, the named intruder's bound) reads it through
:func:`distortion_matrix` and :func:`distortion_inverse`, so a keep
probability gives the same floats it always gave.

Conventions: a distortion matrix is column-stochastic, ``P[u, v] =
Pr(published = u | true = v)`` (spec section 1). A published transition
matrix is written as sdcMicro writes it, one row per true value, each row
summing to 1 (``rows[v][u]``), in the schema's category order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from verifier.errors import InvalidInputError

__all__ = ["Transition", "checked_keep", "distortion", "distortion_matrix", "distortion_inverse", "invertible",
           "keep_matrix", "keep_matrix_inverse", "matrix_inverse", "sums_to_one", "transition_value_bounds",
           "unchanged", "ROW_SUM_TOLERANCE"]

#: how far a published transition matrix's row may sum from 1 (a tool writes 15 significant digits)
ROW_SUM_TOLERANCE = 1e-9
#: a pivot below this leaves the matrix singular: nothing can be estimated through it
SINGULAR = 1e-12


def sums_to_one(row: Sequence[float]) -> bool:
    """Whether a transition matrix's row sums to 1 within :data:`ROW_SUM_TOLERANCE`, added left to right as the
    page adds it (the publisher's reader, the manifest's check and :class:`Transition` all ask this)."""
    return abs(sum(row) - 1.0) <= ROW_SUM_TOLERANCE


@dataclass(frozen=True)
class Transition:
    """A published transition matrix: ``rows[v][u] = Pr(published = u | true = v)``, each row summing to 1."""

    rows: tuple[tuple[float, ...], ...]

    @classmethod
    def of(cls, rows: Any) -> "Transition":
        """The matrix of a manifest's list of rows, refused (PARAMETER_INVALID) unless square, with entries in
        [0, 1] and rows summing to 1."""
        bad = InvalidInputError("a transition matrix is a square list of rows of probabilities, each row summing "
                                "to 1", reason="PARAMETER_INVALID")
        if not isinstance(rows, (list, tuple)) or not rows:
            raise bad
        out = []
        for row in rows:
            if not isinstance(row, (list, tuple)) or len(row) != len(rows) or any(
                    isinstance(x, bool) or not isinstance(x, (int, float)) or not 0.0 <= x <= 1.0 for x in row):
                raise bad
            if not sums_to_one(row):
                raise bad
            out.append(tuple(float(x) for x in row))
        return cls(tuple(out))

    @property
    def size(self) -> int:
        return len(self.rows)

    def identity(self) -> bool:
        return all(x == (1.0 if u == v else 0.0) for v, row in enumerate(self.rows) for u, x in enumerate(row))

    @cached_property
    def matrix(self) -> np.ndarray:
        """The column-stochastic distortion matrix ``P[u, v]`` (read-only: every figure of one release shares it)."""
        out = np.array(self.rows, dtype=np.float64).T.copy()
        out.setflags(write=False)
        return out

    @cached_property
    def inverse(self) -> np.ndarray | None:
        """``P^{-1}`` by :func:`matrix_inverse`, computed once (read-only), or None where singular."""
        out = matrix_inverse(self.matrix)
        if out is not None:
            out.setflags(write=False)
        return out


def distortion(value: Any) -> float | Transition:
    """A published distortion: a keep probability (a number) or a :class:`Transition` (a list of rows)."""
    if isinstance(value, Transition):
        return value
    if isinstance(value, (list, tuple)):
        return Transition.of(value)
    return float(value)


def checked_keep(d: int, p: float) -> float:
    p = float(p)
    if d < 1 or not (1.0 / d - 1e-12 <= p <= 1.0):
        raise InvalidInputError(f"a keep probability for {d} categories lies in [1/{d}, 1]. Got {p!r} instead.",
                                reason="PARAMETER_INVALID")
    return p


def _check_size(d: int, t: Transition) -> Transition:
    if t.size != d:
        raise InvalidInputError(f"a transition matrix of {t.size} rows for an attribute of {d} categories",
                                reason="PARAMETER_INVALID")
    return t


def keep_matrix(d: int, p: float) -> np.ndarray:
    """Eq. (1): keep a value with probability p, else move to each other value with (1-p)/(d-1)."""
    p = checked_keep(d, p)
    if d == 1:
        return np.ones((1, 1))
    q = (1.0 - p) / (d - 1)
    return np.full((d, d), q) + (p - q) * np.eye(d)


def keep_matrix_inverse(d: int, p: float) -> np.ndarray:
    """Lemma 4 (Sherman-Morrison): ``((d-1) I - (1-p) 1 1^T) / (d p - 1)``; refused at p = 1/d."""
    p = checked_keep(d, p)
    if abs(d * p - 1.0) < 1e-12:
        raise InvalidInputError(f"the distortion matrix is singular at p = 1/{d}: nothing can be estimated",
                                reason="PARAMETER_INVALID")
    return ((d - 1) * np.eye(d) - (1.0 - p) * np.ones((d, d))) / (d * p - 1.0)


def matrix_inverse(m: np.ndarray) -> np.ndarray | None:
    """Gauss-Jordan elimination with partial pivoting, one float operation at a time in a fixed order (the page's
    twin does the same, to the bit); None where a pivot falls below :data:`SINGULAR`."""
    d = len(m)
    a = [[float(x) for x in row] + [1.0 if i == j else 0.0 for j in range(d)] for i, row in enumerate(np.asarray(m))]
    for col in range(d):
        pivot = max(range(col, d), key=lambda r: (abs(a[r][col]), -r))
        if abs(a[pivot][col]) < SINGULAR:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        lead = a[col][col]
        a[col] = [x / lead for x in a[col]]
        for r in range(d):
            if r != col and a[r][col] != 0.0:
                factor = a[r][col]
                a[r] = [x - factor * y for x, y in zip(a[r], a[col])]
    return np.array([row[d:] for row in a], dtype=np.float64)


def unchanged(spec: float | Transition) -> bool:
    """Whether the distortion publishes every value as it is (keep probability 1, or the identity)."""
    return spec.identity() if isinstance(spec, Transition) else spec == 1.0


def distortion_matrix(d: int, spec: float | Transition) -> np.ndarray:
    """The column-stochastic ``P[u, v]`` of a keep probability (Eq. 1) or of a published transition matrix."""
    if isinstance(spec, Transition):
        return _check_size(d, spec).matrix
    return keep_matrix(d, spec)


def invertible(d: int, spec: float | Transition) -> bool:
    """Whether Eq. 2 can estimate through this distortion (a keep probability above 1/d, a regular matrix)."""
    if isinstance(spec, Transition):
        return _check_size(d, spec).inverse is not None
    return spec > 1 / d + 1e-9


def distortion_inverse(d: int, spec: float | Transition) -> np.ndarray:
    """``P^{-1}`` (Lemma 4 for a keep probability, Gauss-Jordan for a transition matrix); refused where singular."""
    if not isinstance(spec, Transition):
        return keep_matrix_inverse(d, spec)
    inverse = _check_size(d, spec).inverse
    if inverse is None:
        raise InvalidInputError("the published transition matrix is singular: nothing can be estimated",
                                reason="PARAMETER_INVALID")
    return inverse


def transition_value_bounds(shares: Sequence[float], P: np.ndarray) -> np.ndarray:
    """Per true value v, the most Bayes' rule gives v on any one published row: ``max_u shares[v] P[u, v] /
    sum_w shares[w] P[u, w]`` over the published values u (the rows of the column-stochastic ``P``, or of a stack
    of them over several releases); the denominator added in w's order, as the page adds it. 0 for a value no one
    holds."""
    shares = [float(x) for x in shares]
    P = np.asarray(P, dtype=np.float64)
    best = [0.0] * len(shares)
    for u in range(P.shape[0]):
        row = [float(x) for x in P[u]]
        total = 0.0
        for w, share in enumerate(shares):
            total += share * row[w]
        if total <= 0.0:
            continue
        for v, share in enumerate(shares):
            if share > 0.0 and row[v] > 0.0:
                best[v] = max(best[v], share * row[v] / total)
    return np.array(best, dtype=np.float64)
