"""The group-based baselines of papers 000 and 004: Anatomy, entropy l-diverse generalization, and what they estimate.

- Anatomy (Xiao & Tao, VLDB 2006): groups of l records with l distinct
  sensitive values; the release keeps each record's quasi-identifiers and
  each group's sensitive values, unlinked.
- Entropy l-diversity (Machanavajjhala et al., ICDE 2006): every QI-group's
  sensitive entropy is at least ln l. Paper 004 builds it with Mondrian
  (:mod:`experiments.mondrian`, with :func:`entropy_diverse` as the cut
  test); paper 000 with Incognito's full-domain generalization, which
  :func:`full_domain_l_diverse` searches the same way: every node of the
  lattice of generalization levels.

An analyst of such a release can only assume that, inside a group, values
are spread uniformly: over the cells a generalized value covers (paper 004,
Eq. 12) or over the group's sensitive values (Eq. 13). The ``*_distribution``
functions return the joint distribution that assumption gives, the
``estimate_*`` functions the answer to one count query.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Callable, Sequence

import numpy as np

__all__ = ["FullDomain", "anatomy_distribution", "anatomy_groups", "entropy_diverse", "estimate_anatomy",
           "estimate_generalized", "full_domain_l_diverse", "generalized_distribution"]


def entropy_diverse(sensitive: np.ndarray, l: float) -> Callable[[np.ndarray], bool]:  # noqa: E741 (the paper's l)
    """A test of rows: is the entropy of their sensitive values at least ln l?"""
    def accept(rows: np.ndarray) -> bool:
        p = np.bincount(sensitive[rows]) / rows.size
        p = p[p > 0]
        return float(-np.sum(p * np.log(p))) >= np.log(l) - 1e-12
    return accept


def anatomy_groups(sensitive: np.ndarray, l: int, seed: int) -> np.ndarray:  # noqa: E741
    """Anatomy's groups: l records of l distinct sensitive values each, from the l largest buckets.

    The records left when fewer than l values remain each join a group that
    does not hold their value yet. Returns each record's group number.
    """
    rng = np.random.default_rng(seed)
    buckets = {v: list(rng.permutation(np.flatnonzero(sensitive == v))) for v in np.unique(sensitive)}
    group = np.full(sensitive.size, -1, dtype=np.int64)
    held: list[set] = []
    while sum(1 for b in buckets.values() if b) >= l:
        largest = sorted((v for v in buckets if buckets[v]), key=lambda v: -len(buckets[v]))[:l]
        for v in largest:
            group[buckets[v].pop()] = len(held)
        held.append(set(largest))
    for v, rest in buckets.items():
        for r in rest:
            g = next((g for g, values in enumerate(held) if v not in values), 0)
            group[r] = g
            held[g].add(v)
    return group


def estimate_anatomy(qi: np.ndarray, group: np.ndarray, hits: np.ndarray, query: dict[int, np.ndarray]) -> float:
    """Eq. 13 over all groups at once: ``sum_p #_p(R_s) #_p(QI rows matching) / |p|``."""
    match = np.ones(qi.shape[0], dtype=bool)
    for a, wanted in query.items():
        match &= np.isin(qi[:, a], wanted)
    size = np.bincount(group)
    return float(np.sum(np.bincount(group, weights=hits, minlength=size.size)
                        * np.bincount(group, weights=match, minlength=size.size) / np.maximum(size, 1)))


def estimate_generalized(lo: np.ndarray, hi: np.ndarray, group_hits: np.ndarray, query: dict[int, np.ndarray],
                         domain_sizes: list[int]) -> float:
    """Eq. 12 over all groups at once; group g covers codes ``lo[g, a]..hi[g, a]`` of attribute a."""
    share = np.ones(lo.shape[0])
    for a, wanted in query.items():
        indicator = np.zeros(domain_sizes[a] + 1)
        indicator[np.asarray(wanted, dtype=np.int64) + 1] = 1.0
        prefix = np.cumsum(indicator)
        share *= (prefix[hi[:, a] + 1] - prefix[lo[:, a]]) / (hi[:, a] - lo[:, a] + 1)
    return float(np.sum(group_hits * share))


@dataclass(frozen=True)
class FullDomain:
    """A full-domain generalization: each attribute's level, and each leaf code's generalized code at it."""

    levels: tuple[int, ...]
    maps: tuple[np.ndarray, ...]
    groups: np.ndarray  # each record's QI-group
    minimal: tuple[tuple[int, ...], ...] = ()  # every minimal l-diverse node, of which ``levels`` is the one picked

    @property
    def n_groups(self) -> int:
        return int(self.groups.max()) + 1


def _node(qi: np.ndarray, hierarchies: Sequence[Sequence[np.ndarray]], levels: tuple[int, ...]) -> FullDomain:
    maps = tuple(np.asarray(hierarchies[a][h]) for a, h in enumerate(levels))
    generalized = np.column_stack([maps[a][qi[:, a]] for a in range(len(levels))])
    _, groups = np.unique(generalized, axis=0, return_inverse=True)
    return FullDomain(levels, maps, groups.reshape(-1))


def _diverse(groups: np.ndarray, sensitive: np.ndarray, l: float) -> bool:  # noqa: E741
    width = int(sensitive.max()) + 1
    counts = np.bincount(groups * width + sensitive, minlength=(int(groups.max()) + 1) * width)
    counts = counts.reshape(-1, width).astype(float)
    p = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
    return bool(np.all(entropy[counts.sum(axis=1) > 0] >= np.log(l) - 1e-12))


def full_domain_l_diverse(qi: np.ndarray, sensitive: np.ndarray, hierarchies: Sequence[Sequence[np.ndarray]],
                          l: float) -> FullDomain:  # noqa: E741
    """The entropy l-diverse full-domain generalization Incognito would pick, without suppression.

    ``qi`` holds leaf codes, one column per attribute; ``hierarchies[a][h]``
    maps attribute a's leaf codes to its codes at level h (level 0 the
    leaves, the last level one root). Every node of the lattice is tested;
    of the minimal l-diverse ones (no l-diverse node below them) the one
    with the least discernibility (the sum of squared group sizes) is
    returned, ties to the lowest total level. Entropy l-diversity holds at
    the top node when the whole table's entropy is at least ln l; otherwise
    ValueError.
    """
    nodes = [levels for levels in product(*(range(len(h)) for h in hierarchies))]
    diverse = {levels: found for levels in nodes
               if _diverse((found := _node(qi, hierarchies, levels)).groups, sensitive, l)}
    if not diverse:
        raise ValueError(f"no full-domain generalization is entropy {l}-diverse: the table's own entropy is below ln l")
    minimal = [levels for levels in diverse
               if not any(other != levels and all(o <= v for o, v in zip(other, levels)) for other in diverse)]

    def cost(levels: tuple[int, ...]) -> tuple[float, int, tuple[int, ...]]:
        return float(np.sum(np.bincount(diverse[levels].groups).astype(float) ** 2)), sum(levels), levels
    picked = diverse[min(minimal, key=cost)]
    return FullDomain(picked.levels, picked.maps, picked.groups, tuple(sorted(minimal)))


def generalized_distribution(qi: np.ndarray, sensitive: np.ndarray, found: FullDomain,
                             shape: Sequence[int]) -> np.ndarray:
    """The joint of (QI..., sensitive) an analyst rebuilds from the generalized release: each generalized cell's
    records spread uniformly over the leaf cells it covers (Eq. 12's assumption). ``shape`` gives every domain's size."""
    *qi_shape, d_s = shape
    width = [np.bincount(found.maps[a], minlength=found.maps[a].max() + 1) for a in range(len(qi_shape))]
    counts = np.zeros([int(m.max()) + 1 for m in found.maps] + [d_s])
    np.add.at(counts, (*(found.maps[a][qi[:, a]] for a in range(len(qi_shape))), sensitive), 1.0)
    spread = counts[np.ix_(*found.maps, np.arange(d_s))]
    for a, m in enumerate(found.maps):
        spread /= width[a][m].reshape([-1 if b == a else 1 for b in range(len(shape))])
    return spread / qi.shape[0]


def anatomy_distribution(qi: np.ndarray, sensitive: np.ndarray, group: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """The joint an analyst rebuilds from Anatomy's tables: each record's QI cell takes its group's sensitive
    values in their shares (Eq. 13's uniform associations). ``shape`` gives every domain's size."""
    *qi_shape, d_s = shape
    held = np.zeros((int(group.max()) + 1, d_s))
    np.add.at(held, (group, sensitive), 1.0)
    held /= held.sum(axis=1, keepdims=True)
    out = np.zeros(shape)
    np.add.at(out, tuple(qi[:, a] for a in range(len(qi_shape))), held[group])
    return out / qi.shape[0]
