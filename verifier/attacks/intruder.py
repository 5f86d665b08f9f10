"""The maximum-knowledge intruder and the random-match test (SPEC section 5).

Paper 003, Definition 3: the intruder knows the original table X and the
release Y. He reverse-maps Y to Z (Algorithm 1), which takes the noise out and
leaves him a pure permutation of X to undo. He then links every original
record x to its closest records in Z (section 5.1): the match set at the
permutation distance ``d_Z(x)``.

He cannot tell a right link from a wrong one, but he can tell whether a link
is better than chance (section 5.2): draw synthetic records, each attribute
independently from the values of X_j (the same multiset as Z_j), and compute
their distance to Z. The share of random records matching at distance ``<= d``
is ``F_rand(d)``. A link at distance ``d_Z(x)`` with ``p = F_rand(d_Z(x))``
below ``alpha`` is one that chance rarely produces: the record is
*confidently linked*. The share of such records is the headline risk of a
release.

The random distribution is exact when the ``n^m`` combinations can be
enumerated (paper Table 6: all 8,000 records of the running example) and a
Monte Carlo estimate with Clopper-Pearson 95% intervals otherwise.

A data subject runs the same test from her own record and the release alone
(:func:`subject_test`): random records from the columns of Y, her distance to
Y. For a pure-permutation release this is exactly the intruder's test for her.
"""

from __future__ import annotations

import importlib
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np

from verifier.attacks.match_settings import ALPHA, EXHAUSTIVE_LIMIT, MAX_SAMPLES, SAMPLES
from verifier.core.validation import as_generator, check_matrix, check_same_shape
from verifier.errors import InvalidInputError
from verifier.core.match_sets import MatchSets
from verifier.core.permutation import RankSpace, RecordDistance, compute_record_distance
from verifier.core.ranks import ReverseMappingResult, reverse_map

__all__ = [
    "EXHAUSTIVE_LIMIT",
    "SAMPLES",
    "ALPHA",
    "RandomMatchDistribution",
    "Linkage",
    "IntruderReport",
    "SubjectReport",
    "count_combinations",
    "random_match_distribution",
    "random_match_distribution_bruteforce",
    "link_records",
    "check_alpha",
    "hellinger",
    "intruder_report",
    "intruder_test",
    "run_intruder",
    "subject_report",
    "subject_test",
    "MAX_SAMPLES",
]

#: a float holds every count up to here exactly; enumeration stops short of it
_MAX_ENUMERATION = 2**53
_CHUNK = 1 << 15

Mode = Literal["auto", "exhaustive", "monte_carlo"]
Progress = Callable[[int, int], None]


def _import_special_meanwhile() -> None:
    """Import scipy.special (a quarter of a second) in a thread, while the search runs in compiled code.

    The interval's own import then finds it loaded, or waits for it; a
    failure here is left for that import to report.
    """
    def load() -> None:
        try:
            importlib.import_module("scipy.special")
        except BaseException:  # noqa: BLE001 - reported by the import in _clopper_pearson
            pass

    if "scipy.special" not in sys.modules:
        threading.Thread(target=load, name="import-scipy-special", daemon=True).start()


def _clopper_pearson(k: np.ndarray, total: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) two-sided interval of a binomial share ``k / total``."""
    from scipy.special import betaincinv  # only here: the commands start without scipy

    shape = np.shape(k)
    k, where = np.unique(np.asarray(k, dtype=np.float64).ravel(), return_inverse=True)  # few counts, many records
    a = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, betaincinv(k, total - k + 1, a), 0.0)
        hi = np.where(k < total, betaincinv(k + 1, total - k, 1 - a), 1.0)
    return lo[where].reshape(shape), hi[where].reshape(shape)


@dataclass(frozen=True, eq=False)
class RandomMatchDistribution:
    """The distribution of the permutation distance of random records.

    ``counts[d]`` random records (of ``total``) match at distance ``d``.
    ``method`` is ``exhaustive`` (every combination of column values, each
    weighted by how often it can be drawn: the exact distribution) or
    ``monte_carlo`` (``total`` independent draws, with ``confidence``
    intervals).
    """

    method: str
    counts: np.ndarray
    total: int
    confidence: float = 0.95

    @property
    def exact(self) -> bool:
        return self.method == "exhaustive"

    @property
    def pmf(self) -> np.ndarray:
        """Share of random records at each distance 0, 1, ..., max."""
        return self.counts / self.total

    @property
    def cdf(self) -> np.ndarray:
        """``F_rand(d)``: share of random records at distance ``<= d``."""
        return np.cumsum(self.counts) / self.total

    def _cumulative_counts(self, d: np.ndarray) -> np.ndarray:
        cum = np.cumsum(self.counts)
        d = np.asarray(d, dtype=np.int64)
        return np.where(d >= cum.size, self.total, cum[np.clip(d, 0, cum.size - 1)])

    def p_value(self, d) -> np.ndarray:
        """``F_rand(d)``: the chance that a random record matches at distance ``<= d``."""
        return self._cumulative_counts(d) / self.total

    def p_value_interval(self, d) -> tuple[np.ndarray, np.ndarray]:
        """The interval of :meth:`p_value`: a point for the exact distribution."""
        k = self._cumulative_counts(d)
        if self.exact:
            return k / self.total, k / self.total
        return _clopper_pearson(k, self.total, self.confidence)

    def pmf_interval(self) -> tuple[np.ndarray, np.ndarray]:
        """The interval of each share of :attr:`pmf`."""
        if self.exact:
            return self.pmf, self.pmf
        return _clopper_pearson(self.counts, self.total, self.confidence)

    def cdf_interval(self) -> tuple[np.ndarray, np.ndarray]:
        """The interval of each point of :attr:`cdf`."""
        return self.p_value_interval(np.arange(self.counts.size))


def count_combinations(space: RankSpace) -> int:
    """``n^m``: how many random records there are to enumerate (an exact int)."""
    return space.n_records ** space.n_attributes


def _distinct_combinations(space: RankSpace) -> int:
    out = 1
    for col in space.columns:
        out *= int(col.unique.size)
    return out


def _bincount_into(counts: np.ndarray, d: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    add = np.bincount(d, weights=weights)
    if add.size > counts.size:
        counts = np.concatenate((counts, np.zeros(add.size - counts.size, counts.dtype)))
    counts[: add.size] += add.astype(counts.dtype) if weights is None else np.rint(add).astype(counts.dtype)
    return counts


def _exhaustive(space: RankSpace, progress: Progress | None) -> np.ndarray:
    """Exact counts over all ``n^m`` combinations.

    A combination depends only on which value it takes in each column, so the
    distinct values are enumerated once each, weighted by their multiplicity:
    ``prod_j |distinct values of column j|`` searches instead of ``n^m``.
    """
    cols = space.columns
    shape = tuple(int(c.unique.size) for c in cols)
    total = _distinct_combinations(space)
    counts = np.zeros(1, dtype=np.int64)
    for s in range(0, total, _CHUNK):
        flat = np.arange(s, min(total, s + _CHUNK), dtype=np.int64)
        which = np.unravel_index(flat, shape)
        qlo = np.empty((flat.size, len(cols)), dtype=np.int64)
        qhi = np.empty_like(qlo)
        weight = np.ones(flat.size, dtype=np.int64)
        for j, col in enumerate(cols):
            qlo[:, j] = col.lo[which[j]]
            qhi[:, j] = col.hi[which[j]]
            weight *= qhi[:, j] - qlo[:, j] + 1
        d = space.tree.distances(qlo, qhi)
        counts = _bincount_into(counts, d, weight.astype(np.float64))
        if progress is not None:
            progress(int(flat[-1]) + 1, total)
    return counts


def _monte_carlo(space: RankSpace, samples: int, rng: np.random.Generator, progress: Progress | None) -> np.ndarray:
    """Counts over ``samples`` random records, each column drawn independently.

    Drawing a uniform row of column j is drawing a uniform sorted position; the
    record's query block on j is that position's block. The draws come in
    fixed-size chunks, so a seed gives the same records whatever the progress
    display does.
    """
    n, m = space.n_records, space.n_attributes
    blocks = [col.position_blocks() for col in space.columns]
    counts = np.zeros(1, dtype=np.int64)
    for s in range(0, samples, _CHUNK):
        size = min(samples, s + _CHUNK) - s
        pos = rng.integers(0, n, size=(size, m))
        qlo = np.empty((size, m), dtype=np.int64)
        qhi = np.empty_like(qlo)
        for j, (lo, hi) in enumerate(blocks):
            qlo[:, j] = lo[pos[:, j]]
            qhi[:, j] = hi[pos[:, j]]
        counts = _bincount_into(counts, space.tree.distances(qlo, qhi))
        if progress is not None:
            progress(s + size, samples)
    return counts


def _check_options(samples: int, exhaustive_limit: int, confidence: float) -> None:
    if int(samples) != samples or not 1 <= samples <= MAX_SAMPLES:
        raise InvalidInputError(f"samples must be a whole number from 1 to {MAX_SAMPLES:,}. Got {samples!r} instead.")
    if int(exhaustive_limit) != exhaustive_limit or not 0 <= exhaustive_limit <= _MAX_ENUMERATION:
        raise InvalidInputError(
            f"exhaustive_limit must be an integer from 0 to 2**53. Got {exhaustive_limit!r} instead."
        )
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be strictly between 0 and 1. Got {confidence!r} instead.")


def random_match_distribution(
    space: RankSpace,
    *,
    mode: Mode = "auto",
    samples: int = SAMPLES,
    exhaustive_limit: int = EXHAUSTIVE_LIMIT,
    random_state: int | np.random.Generator | None = 0,
    confidence: float = 0.95,
    progress: Progress | None = None,
) -> RandomMatchDistribution:
    """The distance to ``space`` of random records drawn from its own columns.

    Each attribute of a random record is drawn independently and uniformly
    from the n values of that column of the table in ``space`` (for the
    intruder, Z, whose columns are X's values; for a subject, Y). ``mode``
    ``auto`` enumerates all ``n^m`` combinations when there are at most
    ``exhaustive_limit`` and draws ``samples`` records otherwise;
    ``exhaustive`` refuses to estimate; ``monte_carlo`` always draws.
    """
    _check_options(samples, exhaustive_limit, confidence)
    if mode not in ("auto", "exhaustive", "monte_carlo"):
        raise InvalidInputError(f"mode must be auto, exhaustive or monte_carlo. Got {mode!r} instead.")
    combos = count_combinations(space)
    if mode == "exhaustive" and combos > exhaustive_limit:
        raise InvalidInputError(
            f"exhaustive enumeration needs n^m = {space.n_records}^{space.n_attributes} combinations, "
            f"more than the limit {exhaustive_limit}",
            reason="TOO_MANY_COMBINATIONS",
        )
    _import_special_meanwhile()
    if mode == "exhaustive" or (mode == "auto" and combos <= exhaustive_limit):
        return RandomMatchDistribution("exhaustive", _exhaustive(space, progress), combos, confidence)
    rng = as_generator(random_state)
    return RandomMatchDistribution("monte_carlo", _monte_carlo(space, int(samples), rng, progress), int(samples), confidence)


def random_match_distribution_bruteforce(space: RankSpace) -> RandomMatchDistribution:
    """The plain reference: every one of the ``n^m`` row combinations, one O(n m) scan each."""
    import itertools

    values = space.values
    n, m = values.shape
    counts = np.zeros(1, dtype=np.int64)
    for rows in itertools.product(range(n), repeat=m):
        record = values[list(rows), np.arange(m)]
        counts = _bincount_into(counts, np.array([compute_record_distance(space, record).distance]))
    return RandomMatchDistribution("exhaustive", counts, n**m)


def hellinger(p: np.ndarray, q: np.ndarray) -> float:
    """Hellinger distance ``sqrt(1 - sum_d sqrt(p_d q_d))`` of two distributions over 0, 1, 2, ...

    0 for identical distributions, 1 for disjoint ones.
    """
    size = max(p.size, q.size)
    p = np.pad(np.asarray(p, dtype=np.float64), (0, size - p.size))
    q = np.pad(np.asarray(q, dtype=np.float64), (0, size - q.size))
    return float(np.sqrt(max(0.0, 1.0 - float(np.sum(np.sqrt(p * q))))))


@dataclass(frozen=True, eq=False)
class Linkage:
    """Every original record linked to its closest records (paper 003 section 5.1, Table 5).

    Records are 0-based; the match set of original r is ``sets.of(r)``,
    ascending (:class:`~verifier.core.match_sets.MatchSets`).
    """

    distances: np.ndarray
    sets: MatchSets

    def record_matches(self, r: int) -> np.ndarray:
        return self.sets.of(r)

    @property
    def match_counts(self) -> np.ndarray:
        return self.sets.counts

    def outcomes(self, true_rows: np.ndarray) -> np.ndarray:
        """Per record: ``correct`` (the match set is exactly the true record),
        ``multiple`` (the true record among several) or ``misidentified``.

        ``true_rows[r]`` is the row of the release that really holds record r:
        known to the protector only.
        """
        true_rows = np.asarray(true_rows, dtype=np.int64)
        if true_rows.shape != self.distances.shape:
            raise InvalidInputError(f"true_rows must give one row per original record ({self.distances.size})")
        hit = self.sets.contains(true_rows)
        single = self.match_counts == 1
        return np.where(hit & single, "correct", np.where(hit, "multiple", "misidentified"))


def link_records(space: RankSpace, originals: np.ndarray) -> Linkage:
    """Link every original record to its match set in the table of ``space``."""
    qlo, qhi = space.query_blocks(originals)
    for blocks in (qlo, qhi):  # nobody writes them: the search remembers them without a copy
        blocks.setflags(write=False)
    d, sets = space.match_sets(qlo, qhi)
    return Linkage(distances=d, sets=sets)


@dataclass(frozen=True, eq=False)
class IntruderReport:
    """What the maximum-knowledge intruder learns, and what the protector sees of it.

    ``p_values[r] = F_rand(d_Z(x_r))``; a record is confidently linked when
    its p-value is below ``alpha``. ``outcomes`` (correct / multiple /
    misidentified) are there only when the true pairing was known;
    ``rank_correlation`` (Spearman's rho of X_j and Z_j) only when, besides,
    the intruder reverse-mapped Y himself: it measures disclosure only where
    row i of Z stands for record i.
    """

    linkage: Linkage
    random: RandomMatchDistribution
    p_values: np.ndarray
    p_value_low: np.ndarray
    p_value_high: np.ndarray
    alpha: float
    original_counts: np.ndarray
    hellinger: float
    outcomes: np.ndarray | None = None
    reverse_mapping: ReverseMappingResult | None = None
    rank_correlation: np.ndarray | None = None

    @property
    def n_records(self) -> int:
        return int(self.linkage.distances.size)

    @property
    def original_pmf(self) -> np.ndarray:
        return self.original_counts / self.n_records

    @property
    def confidently_linked(self) -> np.ndarray:
        return self.p_values < self.alpha

    @property
    def confidently_linked_share(self) -> float:
        return float(np.mean(self.confidently_linked))

    def _share(self, label: str) -> float | None:
        return None if self.outcomes is None else float(np.mean(self.outcomes == label))

    @property
    def correct_link_share(self) -> float | None:
        return self._share("correct")

    @property
    def multiple_match_share(self) -> float | None:
        return self._share("multiple")

    @property
    def misidentified_share(self) -> float | None:
        return self._share("misidentified")

    @property
    def ambiguous_share(self) -> float:
        """Share of records linked to several records at once (true one or not)."""
        return float(np.mean(self.linkage.match_counts > 1))


def check_alpha(alpha: float) -> float:
    """``alpha`` as a float strictly between 0 and 1, or :class:`~verifier.errors.InvalidInputError`."""
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise InvalidInputError(f"alpha must be strictly between 0 and 1. Got {alpha!r} instead.")
    return alpha


def intruder_report(linkage: Linkage, random: RandomMatchDistribution, *, alpha: float = ALPHA,
                    true_rows: np.ndarray | None = None, **extra) -> IntruderReport:
    """The report of a linkage and a random-match distribution: p-values, shares, the Hellinger distance.

    ``extra`` (``reverse_mapping``, ``rank_correlation``) is kept in the report.
    """
    alpha = check_alpha(alpha)
    p = random.p_value(linkage.distances)
    low, high = random.p_value_interval(linkage.distances)
    original_counts = np.bincount(linkage.distances)
    return IntruderReport(
        linkage=linkage,
        random=random,
        p_values=p,
        p_value_low=low,
        p_value_high=high,
        alpha=alpha,
        original_counts=original_counts,
        hellinger=hellinger(original_counts / linkage.distances.size, random.pmf),
        outcomes=None if true_rows is None else linkage.outcomes(true_rows),
        **extra,
    )


def intruder_test(
    space: RankSpace,
    originals: np.ndarray,
    *,
    alpha: float = ALPHA,
    true_rows: np.ndarray | None = None,
    random_state: int | np.random.Generator | None = 0,
    **options,
) -> IntruderReport:
    """Linkage and random-match test of X against an already reverse-mapped Z.

    ``space`` holds Z (a per-column permutation of X, so random records drawn
    from Z's columns are drawn from X's). ``true_rows`` is the row of Z that
    really holds each original record, if the caller knows it. ``options``
    (``mode``, ``samples``, ``exhaustive_limit``, ``confidence``,
    ``progress``) go to :func:`random_match_distribution`.
    """
    alpha = check_alpha(alpha)
    x = check_matrix(originals, "the original table X")
    check_same_shape(x, space.values, "X", "Z", rows=False)
    linkage = link_records(space, x)
    random = random_match_distribution(space, random_state=random_state, **options)
    return intruder_report(linkage, random, alpha=alpha, true_rows=true_rows)


def run_intruder(
    original: np.ndarray,
    anonymized: np.ndarray,
    kinds: Sequence[str] | None = None,
    *,
    paired: bool = True,
    alpha: float = ALPHA,
    random_state: int | np.random.Generator | None = 0,
    space: RankSpace | Callable[[], RankSpace] | None = None,
    **options,
) -> IntruderReport:
    """The whole attack of paper 003 Def. 3 on X and Y: reverse-map, link, test.

    ``paired``: row i of Y is the anonymized version of row i of X (true for
    the protector's own un-shuffled output, never for a published release),
    so the report says which links are correct. One generator, seeded by
    ``random_state``, first breaks Y's ties for the reverse mapping (exactly
    as ``verifier reverse-map --seed`` does) and then draws the random records.
    ``options`` go to :func:`random_match_distribution`.

    ``space``: Y's own space, where the caller has searched it. Where Z holds
    exactly Y's values (Y is a permutation of X's values in every column, as
    rank swapping and reverse mapping publish) Z's space is Y's, and X's
    search there is the one already made. It may be given as a function that
    returns it, asked only where Z is Y (the space of a search still running
    beside this one, :func:`verifier.core.side_by_side.side_by_side`).
    """
    check_alpha(alpha)
    rng = as_generator(random_state)
    mapped = reverse_map(original, anonymized, random_state=rng)
    x = np.asarray(original, dtype=np.float64)
    if callable(space):
        space = space() if np.array_equal(np.asarray(anonymized), mapped.z) else None
    same = space is not None and space.values.shape == mapped.z.shape and np.array_equal(space.values, mapped.z)
    report = intruder_test(
        space if same else RankSpace(mapped.z, kinds), x, alpha=alpha,
        true_rows=np.arange(x.shape[0]) if paired else None, random_state=rng, **options,
    )
    return IntruderReport(**{**report.__dict__, "reverse_mapping": mapped, "rank_correlation": mapped.rank_correlation if paired else None})


@dataclass(frozen=True, eq=False)
class SubjectReport:
    """A subject's own random-match test (SPEC section 5, subject's version).

    ``record`` is her permutation distance and match set in Y; ``p_value`` is
    the chance that a random record built from Y's columns matches Y at a
    distance no larger than hers.
    """

    record: RecordDistance
    random: RandomMatchDistribution
    p_value: float
    p_value_low: float
    p_value_high: float
    alpha: float

    @property
    def distance(self) -> int:
        return self.record.distance

    @property
    def confidently_linked(self) -> bool:
        return self.p_value < self.alpha


def subject_test(
    space: RankSpace,
    record: np.ndarray,
    *,
    alpha: float = ALPHA,
    random_state: int | np.random.Generator | None = 0,
    mine: RecordDistance | None = None,
    **options,
) -> SubjectReport:
    """Her distance to Y against the distance of random records drawn from Y's columns.

    ``mine`` is her record's distance when the caller has it already (it is
    then not computed again); ``options`` go to :func:`random_match_distribution`.
    """
    alpha = check_alpha(alpha)
    if mine is None:
        mine = compute_record_distance(space, np.asarray(record, dtype=np.float64))
    return subject_report(random_match_distribution(space, random_state=random_state, **options), mine, alpha)


def subject_report(random: RandomMatchDistribution, mine: RecordDistance, alpha: float = ALPHA) -> SubjectReport:
    """Her test from a random-match distribution of Y: it depends on the release alone, so one serves every
    subject (:mod:`verifier.releases.levels` checks every record with one)."""
    low, high = random.p_value_interval(mine.distance)
    return SubjectReport(record=mine, random=random, p_value=float(random.p_value(mine.distance)),
                         p_value_low=float(low), p_value_high=float(high), alpha=check_alpha(alpha))
