"""The verifier for notebooks: the same checks as the command line, on pandas DataFrames.

A thin front end over the same core as ``verifier`` on the command line and
the TUI. Tables are DataFrames (numeric columns int or float, categorical
columns strings or pandas categoricals); a schema is a
:class:`~verifier.data.schema.Schema`, the path of a schema file, or ``None``
(every column numeric). Results are dataclasses with a readable ``repr``, a
``to_frame()`` for per-record results and an HTML summary in notebooks.

>>> import pandas as pd, verifier
>>> x = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [10.0, 30.0, 20.0, 40.0]})
>>> y = pd.DataFrame({"a": [2.0, 1.0, 4.0, 3.0], "b": [30.0, 10.0, 40.0, 20.0]})
>>> verifier.permuted_privacy(x, y)
PermutedPrivacy(n_records=4, D=0, v={a: 0, b: 0})

Errors are the command line's: :class:`~verifier.errors.InvalidInputError`
for a bad table or record (its message names the column and rows),
:class:`~verifier.releases.verification.ReleaseError` for a release that does
not verify.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from verifier.attacks.intruder import IntruderReport, SubjectReport, run_intruder
from verifier.core.permutation import DVPrivacyResult, PermutedPrivacyReport, RankSpace, compute_permuted_privacy
from verifier.data.schema import Schema
from verifier.data.schema_file import load_schema
from verifier.data.tables import Table, table_from_frame
from verifier.errors import InvalidInputError
from verifier.releases.record import parse_record
from verifier.releases.facts import open_release as _open, release_facts
from verifier.releases.group_check import GroupCheck
from verifier.releases.joint import check_releases_jointly
from verifier.releases.plain_words import plain_text
from verifier.releases.policy import Policy, load_policy
from verifier.releases.subject import SubjectCheck, check_record as _check, prepare, random_match
from verifier.releases.verification import VerifiedRelease
from verifier.text import figure, html_table, number
from verifier.transparency.standing import Standing, log_standing, read_policy

__all__ = ["Intruder", "PermutedPrivacy", "Release", "RecordCheck", "check_jointly", "check_record", "intruder",
           "open_release", "permuted_privacy"]

Progress = Callable[[int, int], None]


def _pair(original: pd.DataFrame, released: pd.DataFrame, schema: Schema | str | Path | None) -> tuple[Table, Table]:
    """X with its schema (nominal orders from X), then Y read with X's schema."""
    if isinstance(schema, (str, Path)):
        schema = load_schema(schema)
    x = table_from_frame(original, schema, name="original")
    y = table_from_frame(released, x.schema, name="released")
    return x, y


def _per_attribute(names: Sequence[str], values: Sequence[float]) -> dict[str, float]:
    return {n: float(v) for n, v in zip(names, values)}


@dataclass(frozen=True, eq=False, repr=False)
class PermutedPrivacy:
    """(d, v)-permuted privacy of a release against its original (paper 003, Def. 1-2, Algorithm 2).

    ``dataset_distance`` is D, the smallest permutation distance of any
    record; ``dataset_spread`` is v, per attribute the smallest spread of a
    window at D (variance for numbers, Gini-Simpson diversity for nominal
    columns). ``report`` keeps every record's figures.
    """

    attributes: list[str]
    spread_kinds: list[str]
    report: PermutedPrivacyReport
    space: RankSpace
    originals: np.ndarray

    @property
    def n_records(self) -> int:
        return int(self.report.distances.size)

    @property
    def dataset_distance(self) -> int:
        return int(self.report.dataset_distance)

    @property
    def dataset_spread(self) -> dict[str, float]:
        return _per_attribute(self.attributes, self.report.dataset_spread)

    @property
    def distances(self) -> np.ndarray:
        """Every original record's permutation distance, in the original's row order."""
        return self.report.distances

    def check(self, d: int, v: float | Sequence[float] | Mapping[str, float], *, record: int | None = None) -> DVPrivacyResult:
        """Whether (d, v)-permuted privacy holds for the data set, or for ``record`` (numbered from 1).

        ``v`` is one spread for every attribute, one per attribute in order, or
        a mapping from attribute name to spread.
        """
        if isinstance(v, Mapping):
            v = [float(v[a]) for a in self.attributes]
        elif np.isscalar(v):
            v = [float(v)] * len(self.attributes)  # type: ignore[arg-type]
        if record is not None and not 1 <= record <= self.n_records:
            raise ValueError(f"record must be between 1 and {self.n_records}. Got {record!r} instead.")
        return self.report.check_dv(self.space, d=d, v=v, record=None if record is None else record - 1)

    def matches(self, record: int) -> pd.DataFrame:
        """The released records closest to ``record`` (numbered from 1) with their rank deviations."""
        if not 1 <= record <= self.n_records:
            raise ValueError(f"record must be between 1 and {self.n_records}. Got {record!r} instead.")
        r = record - 1
        found = self.report.record_matches(r)
        dev = self.space.deviations(self.report.query_lo[r], self.report.query_hi[r], found)
        frame = pd.DataFrame(dev, columns=[f"deviation {a}" for a in self.attributes])
        frame.insert(0, "released_record", found + 1)
        return frame

    def to_frame(self) -> pd.DataFrame:
        """One row per original record: its distance, its matches and the spreads at D and at its own d."""
        rep = self.report
        out = pd.DataFrame({
            "record": np.arange(1, self.n_records + 1),
            "distance": rep.distances,
            "n_matches": rep.match_counts,
            "matches": [(rep.record_matches(r) + 1).tolist() for r in range(self.n_records)],
        })
        for j, a in enumerate(self.attributes):
            out[f"spread at D {a}"] = rep.spread_at_dataset_distance[:, j]
        for j, a in enumerate(self.attributes):
            out[f"spread at d {a}"] = rep.spread_at_record_distance[:, j]
        return out

    def __repr__(self) -> str:
        v = ", ".join(f"{a}: {number(s)}" for a, s in self.dataset_spread.items())
        return f"PermutedPrivacy(n_records={self.n_records}, D={self.dataset_distance}, v={{{v}}})"

    def _repr_html_(self) -> str:
        rows = [("records", str(self.n_records)), ("D (data-set distance)", str(self.dataset_distance))]
        rows += [(f"v {a} ({k.replace('_', '-')})", figure(s))
                 for (a, s), k in zip(self.dataset_spread.items(), self.spread_kinds)]
        return html_table(rows, "(d, v)-permuted privacy (paper 003, Def. 2)")


def permuted_privacy(original: pd.DataFrame, released: pd.DataFrame, schema: Schema | str | Path | None = None, *,
                     progress: Progress | None = None) -> PermutedPrivacy:
    """Every original record's permutation distance to the release, and the data set's (D, v).

    Parameters
    ----------
    original, released
        The original table X and the released table Y, same columns (Y may
        hold more; rows need not be paired).
    schema
        Column kinds and category orders; ``None`` takes every column as numeric.
    progress
        Called with ``(done, total)`` while the distances are computed.
    """
    x, y = _pair(original, released, schema)
    space = RankSpace(y.values, y.kinds)
    report = compute_permuted_privacy(space, x.values, progress=progress)
    return PermutedPrivacy(x.names, report.spread_kinds, report, space, x.values)


@dataclass(frozen=True, eq=False, repr=False)
class Intruder:
    """The maximum-knowledge intruder and the random-match test (paper 003, Def. 3, section 5).

    The intruder reverse-maps the release onto the original and links every
    original record to its closest records; a link whose distance random
    records reach less often than ``alpha`` is confident.
    """

    attributes: list[str]
    report: IntruderReport
    paired: bool

    @property
    def n_records(self) -> int:
        return self.report.n_records

    @property
    def confidently_linked_share(self) -> float:
        return float(self.report.confidently_linked_share)

    @property
    def hellinger(self) -> float:
        """Hellinger distance between the link distances and the random ones (0 indistinguishable, 1 disjoint)."""
        return float(self.report.hellinger)

    @property
    def correct_link_share(self) -> float | None:
        """With ``paired=True`` only: the share of records linked to their own released record alone."""
        return self.report.correct_link_share

    @property
    def random_distribution(self) -> pd.Series:
        """The share of random records at each permutation distance."""
        return pd.Series(self.report.random.pmf, name="random records", index=pd.RangeIndex(
            self.report.random.pmf.size, name="distance"))

    def to_frame(self) -> pd.DataFrame:
        """One row per original record: its link distance, matches, p-value and whether the link is confident."""
        rep, link = self.report, self.report.linkage
        out = pd.DataFrame({
            "record": np.arange(1, self.n_records + 1),
            "distance": link.distances,
            "matches": [(link.record_matches(r) + 1).tolist() for r in range(self.n_records)],
            "p_value": rep.p_values,
            "confidently_linked": rep.confidently_linked,
        })
        if rep.outcomes is not None:
            out["outcome"] = rep.outcomes
        return out

    def __repr__(self) -> str:
        shares = f", correctly_linked={number(self.correct_link_share, share=True)}" if self.paired else ""
        return (f"Intruder(n_records={self.n_records}, alpha={self.report.alpha:g}, confidently_linked="
                f"{number(self.confidently_linked_share, share=True)}, hellinger={number(self.hellinger)}{shares})")

    def _repr_html_(self) -> str:
        rows = [("records", str(self.n_records)), ("alpha", f"{self.report.alpha:g}"),
                ("confidently linked", number(self.confidently_linked_share, share=True)),
                ("Hellinger distance", figure(self.hellinger)),
                ("random distribution", f"{self.report.random.method.replace('_', ' ')}, "
                                        f"{self.report.random.total} random records")]
        if self.paired:
            rows.append(("correctly linked", number(self.correct_link_share or 0.0, share=True)))
        return html_table(rows, "Maximum-knowledge intruder (paper 003, Def. 3)")


def intruder(original: pd.DataFrame, released: pd.DataFrame, schema: Schema | str | Path | None = None, *,
             paired: bool = False, alpha: float = 0.01, samples: int = 10_000, exhaustive_limit: int = 10**6,
             seed: int = 0, progress: Progress | None = None) -> Intruder:
    """The intruder's attack on a release, as ``verifier intruder`` runs it.

    ``paired=True`` says row i of ``released`` anonymizes row i of
    ``original`` (the protector's own un-shuffled output, never a published
    release); only then are the correct-link shares computed. ``seed`` is the
    intruder's own randomness (Y's tie-break and the random draws), not a secret.
    """
    x, y = _pair(original, released, schema)
    if x.n_records != y.n_records:
        raise InvalidInputError(f"has {y.n_records} records and the original {x.n_records}; the intruder "
                                "reverse-maps the release onto the original, which needs the same number",
                                path="released", reason="SHAPE_MISMATCH")
    report = run_intruder(x.values, y.values, x.kinds, paired=paired, alpha=alpha, samples=samples,
                          exhaustive_limit=exhaustive_limit, random_state=seed, progress=progress)
    return Intruder(x.names, report, paired)


@dataclass(frozen=True, eq=False, repr=False)
class Release:
    """A release verified with a key you trust; nothing here was read before the signature checked out."""

    verified: VerifiedRelease

    @property
    def claims(self) -> dict[str, Any]:
        return self.verified.claims

    @property
    def methods(self) -> list[dict[str, Any]]:
        return self.verified.methods

    @property
    def predicate(self) -> dict[str, Any]:
        """The whole signed manifest's predicate: schema, methods, claims, utility, metadata."""
        return self.verified.predicate

    @property
    def weights(self) -> np.ndarray | None:
        """The released records' sampling weights, row for row with :attr:`data`, or None without them."""
        return self.verified.weights(len(self.data))

    @property
    def schema(self) -> Schema:
        return self.verified.schema()

    @property
    def data(self) -> pd.DataFrame:
        """The released table, as signed."""
        return self.verified.table().to_frame()

    def __repr__(self) -> str:
        v = self.verified
        return (f"Release({v.path!r}, dataset_id={v.dataset_id!r}, version={v.release_version}, "
                f"fingerprint={v.key.fingerprint[:16]}...)")

    def _repr_html_(self) -> str:
        return html_table(release_facts(self.verified), "Verified release")


def open_release(directory: str | Path, key: str | Path, *, fingerprint: str | None = None,
                 dataset_id: str | None = None, min_version: int | None = None) -> Release:
    """Verify a release directory with the publisher's public key file (never a key from the release)."""
    return Release(_open(str(directory), str(key), fingerprint=fingerprint, dataset_id=dataset_id,
                         min_version=min_version))


@dataclass(frozen=True, eq=False, repr=False)
class RecordCheck:
    """A subject's results on her own record; ``repr`` never shows her values."""

    check: SubjectCheck | GroupCheck
    random: SubjectReport | None
    policy: Policy | None = None
    """The verdict policy her level is decided by (None: the verifier's default)."""
    standing: Standing = field(default_factory=Standing)
    """The release's standing in its log (no proof: her verdict's unwitnessed notice says so)."""

    @property
    def distance(self) -> int | None:
        """Her permutation distance; None in a generalized release, whose cells have no ranks."""
        return self.check.distance if self.check.ranks_apply else None

    @property
    def class_size(self) -> int | None:
        """In a generalized release, how many released records are consistent with her values."""
        return None if self.check.ranks_apply else self.check.class_size

    @property
    def smallest_class(self) -> int | None:
        """In a generalized release, the fewest people of a published group she could be in: her anonymity set
        against the intruder who knows everyone's quasi-identifiers (docs/subject.md)."""
        return None if self.check.ranks_apply else self.check.smallest_class

    @property
    def verdict(self) -> dict[str, Any]:
        """Her verdict as ``verifier check --json`` gives it: ``level``, ``headline`` (her worst finding),
        ``findings`` and the report's ``lines``; the CLI's, the TUI's and the page's."""
        return self.check.verdict(self.random, self.policy, unwitnessed=self.standing.unwitnessed).to_json()

    @property
    def level(self) -> str:
        """``protected``, ``at_risk`` or ``exposed`` (a release that does not verify raises instead)."""
        return self.verdict["level"]

    @property
    def plain(self) -> dict[str, Any]:
        """Her verdict in plain words (``summary``), each technical figure with its meaning and whether it is good
        or bad (``details``), and what she can do (``steps``): :func:`verifier.releases.plain_words.plain_words`."""
        return self.to_dict()["plain"]

    @property
    def text(self) -> str:
        """Her verdict as ``verifier check`` prints it first: the level and the plain summary, what she can do,
        then the details."""
        return plain_text(self.to_dict())

    @property
    def p_value(self) -> float | None:
        return None if self.random is None else float(self.random.p_value)

    @property
    def attribute_disclosure(self) -> dict[str, Any]:
        return self.check.disclosure

    def to_dict(self) -> dict[str, Any]:
        """The object ``verifier check --json`` prints."""
        return {**self.check.to_json(self.random, self.policy, unwitnessed=self.standing.unwitnessed),
                "log": self.standing.to_json()}

    def to_frame(self) -> pd.DataFrame:
        """The released records that match her, with their rank deviations per attribute; in a generalized
        release, the released records consistent with her values as published."""
        if not self.check.ranks_apply:
            published = self.check.prepared.published
            frame = pd.DataFrame({n: [published.text[n][r - 1] for r in self.check.rows] for n in self.check.names})
            frame.insert(0, "released_record", self.check.rows)
            return frame
        result = self.check.result
        frame = pd.DataFrame(result.deviations, columns=[f"deviation {a}" for a in self.check.names])
        frame.insert(0, "released_record", result.matches + 1)
        return frame

    def __repr__(self) -> str:
        if not self.check.ranks_apply:
            return f"RecordCheck(class_size={self.class_size})"
        p = "" if self.random is None else f", p_value={number(self.random.p_value)}"
        return f"RecordCheck(distance={self.distance}, matches={self.check.result.matches.size}{p})"

    def _repr_html_(self) -> str:
        rows = [("verdict", f"{self.level.replace('_', ' ')}: {self.verdict['headline']}")]
        if self.check.ranks_apply:
            rows += [("permutation distance", str(self.distance)),
                     ("matching released records", str(self.check.result.matches.size))]
        else:
            rows.append(("released records consistent with her values", str(self.class_size)))
            if self.check.classes > 1:
                rows.append(("published groups among them, the smallest", f"{self.check.classes}, "
                             f"{self.smallest_class}"))
        if self.random is not None:
            rows.append(("random-match p-value", number(self.random.p_value)))
        rows += [(f"disclosure risk of {k}", figure(r["risk"])) for k, r in self.attribute_disclosure.items()]
        return html_table(rows, "Your record in the release")


def check_record(release: Release | str | Path, key: str | Path | None = None, record: Mapping[str, Any] | None = None,
                 *, random_match_test: bool = True, alpha: float = 0.01, samples: int = 10_000,
                 seed: int = 0, policy: Policy | str | Path | None = None, proof: str | Path | None = None,
                 log_policy: str | Path | None = None, log_key: str | Path | None = None,
                 log: str | Path | None = None, state: str | Path | None = None) -> RecordCheck:
    """A subject's check of her own record, as ``verifier check`` gives it.

    ``release`` is a :class:`Release` from :func:`open_release`, or a release
    directory verified here with ``key``. ``record`` maps every column of the
    signed schema to her value (numbers, or category names). ``policy`` is a
    verdict policy file (or a :class:`~verifier.releases.policy.Policy`) to decide
    her level by instead of the verifier's default. ``proof`` is the release's
    log proof, checked under ``log_policy`` (or the log's key alone, ``log_key``),
    with the log's files ``log`` and her memory of the log in ``state``, as
    ``verifier check --proof`` does.
    """
    if policy is not None and not isinstance(policy, Policy):
        policy = load_policy(policy)
    if not isinstance(release, Release):
        if key is None:
            raise TypeError("check_record needs the publisher's public key file when given a release directory")
        release = open_release(release, key)
    if record is None:
        raise TypeError("check_record needs her record: a mapping from column to value")
    standing = Standing()
    if proof is not None:
        if (log_policy is None) == (log_key is None):
            raise TypeError("check_record's proof takes log_policy or log_key, one of them")
        trust = read_policy(None if log_policy is None else str(log_policy), None if log_key is None else str(log_key))
        standing = log_standing(release.verified, str(proof), trust, log=None if log is None else str(log),
                                state=None if state is None else Path(state))
    prepared = prepare(release.verified)
    keys = parse_record(dict(record), prepared.schema, source="the record")
    check = _check(prepared, keys)
    run = random_match_test and check.ranks_apply
    report = random_match(prepared, check, alpha=alpha, samples=samples, seed=seed) if run else None
    return RecordCheck(check, report, policy, standing)


def check_jointly(releases: Sequence[Release | str | Path], key: str | Path | Sequence[str | Path] | None = None,
                  record: Mapping[str, Any] | None = None, *, policy: Policy | str | Path | None = None,
                  samples: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Her record against several releases of the same people at once, as ``verifier joint --json`` prints it:
    her candidate values left in every release with their joint probabilities, the joint random-match test, each
    release's level alone and her joint verdict (docs/methods.md, section 6).

    ``releases`` are :class:`Release` objects, or release directories verified here with ``key`` (one file for
    all, or one per release).
    """
    if policy is not None and not isinstance(policy, Policy):
        policy = load_policy(policy)
    if record is None:
        raise TypeError("check_jointly needs her record: a mapping from column to value")
    keys = [key] * len(releases) if key is None or isinstance(key, (str, Path)) else list(key)
    opened = []
    for release, k in zip(releases, keys):
        if not isinstance(release, Release):
            if k is None:
                raise TypeError("check_jointly needs the publisher's public key file for a release directory")
            release = open_release(release, k)
        opened.append(release.verified)
    joint = check_releases_jointly(opened, lambda schema: parse_record(dict(record), schema, source="the record"),
                                   policy=policy, samples=samples, seed=seed)
    return joint.to_json()
