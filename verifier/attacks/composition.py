"""Several releases of the same people: what an intruder who links her in every one learns from all of them.

Two figures, each computed from the releases alone (issue 40):

- **Her candidate values, intersected** (Ganta, Kasiviswanathan and Smith, KDD 2008). In each release the
  intruder who knows her quasi-identifiers has a set of candidate records (her equivalence class, her match set)
  and so a distribution of candidate sensitive values, ``P_j(v)``: their shares. Her true value is a candidate
  in every release, so only the values left in all of them remain, and :func:`joint_candidates` gives each
  ``P(v) = prod_j P_j(v) / sum_u prod_j P_j(u)``. The values left assume nothing; the probabilities are exact
  when the releases are independent given her value and her values equally likely a priori (the docs say so).
  Two 2-anonymous releases that give her {flu, HIV} and {HIV, cancer} leave {HIV}: certain, though neither
  release alone tells more than one chance in two.
- **The joint random-match test**: the share of random records that match her as closely as she is matched
  in every release at once. A random record is one draw ``u`` of ``[0, 1)^m``, the record at sorted positions
  ``floor(u_k n_j)`` of release ``j``'s columns, so that within each release it is that release's own random
  record (SPEC section 5); ``p_joint`` counts the draws within her distance ``D_j`` in every release, and each
  release's ``p_j`` is counted on the same draws, so that ``p_joint <= min_j p_j`` holds exactly. When every
  release has the same ``n`` and ``n^m`` is small, every position is enumerated and each ``p_j`` is its exact
  single-release p-value.
- **Randomized response in every release** (paper 000, Result 1 for several releases): her record is
  randomized afresh in each, with keep matrices ``P_j``, and the intruder who links her sees all of her
  randomized copies. Given her true value ``u`` the copies ``(v_1..v_m)`` have probability
  ``prod_j P_j[v_j, u]``: the releases act as one release whose distortion matrix is their *stack*
  (:func:`stacked_keep_matrix`, ``d^m`` rows by ``d`` columns), and Eq. (6)-(9) hold with the stacks in place of
  the keep matrices (:func:`joint_rr_risk`). With one release it is Eq. (6) itself; a release that publishes an
  attribute as it is (``p = 1``) makes that attribute's stack the identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Mapping, Sequence

import numpy as np

from verifier.attacks.disclosure import cell_risk, eta_of_matrices, rho_of_matrix
from verifier.attacks.distortion import Transition, distortion_matrix, unchanged

if TYPE_CHECKING:  # the rank spaces are built by the caller; importing them would load the kernels here
    from verifier.core.permutation import RankSpace

__all__ = ["JointMatch", "JointDraws", "joint_draws", "joint_candidates", "joint_random_match",
           "stacked_keep_matrix", "joint_rr_risk", "JOINT_RR_CELLS"]

#: the most cells of the joint randomized distribution (the stacks' rows over every QI combination) computed
JOINT_RR_CELLS = 5_000_000

#: draws per chunk of the joint test (a seed gives the same draws whatever the chunking)
_CHUNK = 1 << 16


def joint_candidates(shares: Sequence[Mapping[Hashable, float]],
                     prior: Mapping[Hashable, float] | None = None) -> dict[Hashable, float]:
    """Her candidate values left in every release, each with its joint probability (see the module's text);
    empty when no value is a candidate in all of them (her record is not the one the releases hold).

    With ``prior``, each value's base rate, the probabilities are Bayes' rule with that prior:
    ``prod_j P_j(v) / prior(v)^(m-1)``, normalised (each ``P_j`` already holds the prior once; docs/methods.md,
    "Several releases"); without it, a uniform prior (the plain product)."""
    left = set(shares[0]) if shares else set()
    for each in shares[1:]:
        left &= {v for v, p in each.items() if p > 0}
    power = len(shares) - 1

    def weight(v: Hashable) -> float:
        product = float(np.prod([each[v] for each in shares]))
        base = prior.get(v, 0.0) if prior is not None else 1.0
        return product / base ** power if base > 0 else 0.0

    # in the values' order, so that the total is the same sum in every run (a set's order is not)
    product = {v: w for v in sorted(left, key=str) if shares[0][v] > 0 and (w := weight(v)) > 0}
    total = sum(product.values())
    return {v: p / total for v, p in sorted(product.items(), key=lambda item: (-item[1], str(item[0])))} \
        if total > 0 else {}


@dataclass(frozen=True)
class JointMatch:
    """The joint random-match test: ``p_joint``, each release's ``p_each`` on the same random records, how many
    there were and how they were drawn (``exhaustive`` or ``monte_carlo``)."""

    p_joint: float
    p_each: tuple[float, ...]
    total: int
    method: str


@dataclass(frozen=True)
class JointDraws:
    """The random records of the joint test and each one's distance in each release (``distances``, one row a
    random record, one column a release). They depend on the releases alone, so one set serves every subject:
    :meth:`test` gives hers from her own distances."""

    distances: np.ndarray
    method: str

    def test(self, mine: Sequence[int], which: Sequence[int] | None = None) -> JointMatch:
        """Her joint test from her distance in each release (``which``: the releases she is in, all by default)."""
        columns = self.distances if which is None else self.distances[:, list(which)]
        hit = columns <= np.asarray(mine, dtype=np.int64)[None, :]
        total = columns.shape[0]
        return JointMatch(np.count_nonzero(hit.all(axis=1)) / total,
                          tuple(np.count_nonzero(hit[:, j]) / total for j in range(hit.shape[1])), total, self.method)


def _distances(spaces: Sequence[RankSpace], positions_of) -> np.ndarray:
    """Each random record's distance in each release; ``positions_of(n)`` gives its sorted positions there."""
    out = []
    for space in spaces:
        positions = positions_of(space.n_records)
        qlo = np.empty(positions.shape, dtype=np.int64)
        qhi = np.empty_like(qlo)
        for k, col in enumerate(space.columns):
            lo, hi = col.position_blocks()
            qlo[:, k], qhi[:, k] = lo[positions[:, k]], hi[positions[:, k]]
        out.append(np.asarray(space.tree.distances(qlo, qhi), dtype=np.int64))
    return np.stack(out, axis=1)


def joint_draws(spaces: Sequence[RankSpace], *, samples: int = 10_000, seed: int = 0,
                exhaustive_limit: int = 10**6) -> JointDraws:
    """The random records of the joint test in the rank spaces ``spaces`` of releases with the same attributes:
    every position tuple when every release has the same ``n`` and ``n^m <= exhaustive_limit``, else ``samples``
    draws of ``u`` with ``seed``."""
    m = spaces[0].n_attributes
    sizes = {space.n_records for space in spaces}
    chunks = []
    if len(sizes) == 1 and next(iter(sizes)) ** m <= exhaustive_limit:
        n = next(iter(sizes))
        for start in range(0, n ** m, _CHUNK):
            flat = np.arange(start, min(n ** m, start + _CHUNK), dtype=np.int64)
            positions = np.stack(np.unravel_index(flat, (n,) * m), axis=1)
            chunks.append(_distances(spaces, lambda _n, p=positions: p))
        return JointDraws(np.concatenate(chunks), "exhaustive")
    rng = np.random.default_rng(seed)
    for start in range(0, samples, _CHUNK):
        u = rng.random((min(samples, start + _CHUNK) - start, m))
        chunks.append(_distances(spaces, lambda n, u=u: np.minimum((u * n).astype(np.int64), n - 1)))
    return JointDraws(np.concatenate(chunks), "monte_carlo")


def joint_random_match(spaces: Sequence[RankSpace], distances: Sequence[int], *, samples: int = 10_000,
                       seed: int = 0, exhaustive_limit: int = 10**6) -> JointMatch:
    """The joint test of her distances ``distances`` (one per release) in the rank spaces ``spaces`` of releases
    with the same attributes (:func:`joint_draws`)."""
    return joint_draws(spaces, samples=samples, seed=seed, exhaustive_limit=exhaustive_limit).test(distances)


def stacked_keep_matrix(d: int, ps: Sequence[float | Transition]) -> np.ndarray:
    """One attribute's keep matrices in several releases stacked: ``M[(v_1..v_m), u] = prod_j P_j[v_j, u]``, the
    chance that a true ``u`` is published as ``v_j`` in release ``j`` for every ``j`` (row-major over the ``v``).
    An attribute any release publishes as it is (``p = 1``) is known: its stack is the identity. Each ``p`` may be
    a published transition matrix instead (:mod:`verifier.attacks.distortion`)."""
    if any(unchanged(p) for p in ps):
        return np.eye(d)
    out = np.ones((1, d))
    for p in ps:
        out = (out[:, None, :] * distortion_matrix(d, p)[None, :, :]).reshape(-1, d)
    return out


def joint_rr_risk(pi: np.ndarray, p_qi: Sequence[Sequence[float]], p_s: Sequence[float]) -> np.ndarray | None:
    """Result 1 over several randomized-response releases of the same records: ``c[a, u] eta(a) rho(a, u)`` with
    each attribute's keep matrices stacked over the releases (the module's text). ``p_qi[k]`` holds the keep
    probabilities of QI attribute ``k`` in each release, ``p_s`` the sensitive attribute's. None when the joint
    distribution has more than :data:`JOINT_RR_CELLS` cells (its size is the product of the stacks' rows)."""
    pi = np.asarray(pi, dtype=np.float64)
    qi_stacks = [stacked_keep_matrix(d, ps) for d, ps in zip(pi.shape[:-1], p_qi)]
    s_stack = stacked_keep_matrix(pi.shape[-1], p_s)
    qi_rows = int(np.prod([m.shape[0] for m in qi_stacks]))
    if max(qi_rows, (pi.size // pi.shape[-1]) * s_stack.shape[0]) > JOINT_RR_CELLS:
        return None
    eta = eta_of_matrices(pi.sum(axis=-1), qi_stacks)
    return cell_risk(pi, eta, rho_of_matrix(pi, s_stack))
