"""What a release and the earlier releases of the same people disclose together: the protector's figures before
she publishes, the audit's recomputation of them (issue 40, items 2 and 3).

The people of the new release who were released before are found by a linking column (a person's id, never
published): each release made with ``--link-column`` leaves, beside it and never in it, a protector-only
*links file* (:class:`Links`) naming the release by its manifest's SHA-256 and listing the ids of the people it
holds, sorted, with no row of theirs. A later release given ``--previous DIR`` reads it.

Each person released before is checked as her own joint check (``verifier joint``) checks her: her record,
as the new release's input holds it, against the new release and every earlier release she is in
(:func:`verifier.releases.joint.check_jointly`, under the verdict policy, with the random-match test's public
seed). As for :mod:`verifier.releases.levels`, at most :data:`~verifier.releases.levels.MOST_CHECKED` of them are
checked, drawn uniformly with the public seed, so an auditor with the originals and the links files draws the same
ones. The manifest signs, in ``claims.composition``, the earlier releases' manifest digests, how many people each
shares with the new one, the joint levels, the largest joint risk of each sensitive attribute and how many people
are exposed together but in no release alone; a target the joint figures miss refuses the release
(``COMPOSITION_DISCLOSURE``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from verifier.attacks.composition import JointDraws, joint_draws
from verifier.attacks.disclosure import CERTAIN
from verifier.attacks.match_settings import SAMPLES
from verifier.data.bounded_files import read_bounded
from verifier.data.schema import Attribute, Schema
from verifier.data.strict_json import loads_strict
from verifier.data.tables import read_table
from verifier.errors import InvalidInputError
from verifier.releases.joint import check_jointly
from verifier.releases.levels import MOST_CHECKED, SEED, Levels
from verifier.releases.policy import Policy
from verifier.releases.subject import Prepared, check_record
from verifier.releases.verification import verify_release
from verifier.text import literal

__all__ = ["MOST_EARLIER", "Links", "links_path", "read_link_column", "read_earlier", "present_in",
           "composition_figures", "earlier_entry"]

#: the most earlier releases one release is checked with (``--previous``), as docs/release-format.md says
MOST_EARLIER = 16
_LINKS_FORMAT = "permuted-privacy/links/v1"


def links_path(release: str | Path) -> Path:
    """Where a release's links file lies: beside it, ``DIR.links.json``, never inside."""
    return Path(f"{str(release).rstrip('/')}.links.json")


def read_link_column(path: str | Path, column: str) -> list[str]:
    """The input's linking column, one id per record, each id once (``LINK_INVALID`` names the rows of a repeated
    id, never the id: it identifies a person)."""
    table = read_table(path, Schema((Attribute(column, "nominal", "other"),)))
    categories = table.schema.attributes[0].categories or ()
    codes = table.values[:, 0].astype(np.int64)
    ids = [categories[c] for c in codes]
    if len(set(ids)) < len(ids):
        order = np.argsort(codes, kind="stable")
        twice = np.flatnonzero(codes[order][1:] == codes[order][:-1])[0]
        first, second = sorted((int(order[twice]) + 1, int(order[twice + 1]) + 1))
        raise InvalidInputError(f"column {literal(column)}: rows {first} and {second} hold the same linking id; "
                                "each person is one record of a release", path=str(path), reason="LINK_INVALID")
    return ids


@dataclass(frozen=True)
class Links:
    """Who is in a release, for the protector alone: the release (its dataset, version and manifest SHA-256), the
    linking column's name and the sorted ids of its people."""

    dataset_id: str
    release_version: int
    manifest_sha256: str
    column: str
    ids: tuple[str, ...]

    def holds(self, ids: Sequence[str]) -> np.ndarray:
        """Whether each of ``ids`` is a person of this release."""
        held = set(self.ids)
        return np.fromiter((i in held for i in ids), dtype=bool, count=len(ids))

    def to_bytes(self) -> bytes:
        return json.dumps({"format": _LINKS_FORMAT, "datasetId": self.dataset_id,
                           "releaseVersion": self.release_version, "manifest_sha256": self.manifest_sha256,
                           "link_column": self.column, "ids": sorted(self.ids)}, ensure_ascii=False).encode("utf-8")

    @classmethod
    def read(cls, path: str | Path) -> "Links":
        """A links file, read strictly: anything but the format's fields, or an id twice, is ``LINKS_INVALID``."""
        if not Path(path).exists() and not Path(path).is_symlink():
            raise InvalidInputError("no links file here: a release records who is in it only when it is made with "
                                    "--link-column", path=str(path), reason="LINKS_MISSING")
        raw = read_bounded(path, "links")

        def bad(why: str) -> InvalidInputError:
            return InvalidInputError(f"is not a links file: {why}", path=str(path), reason="LINKS_INVALID")

        try:
            doc = loads_strict(raw)
        except (ValueError, UnicodeDecodeError):
            raise bad("it is not JSON") from None
        fields = {"format", "datasetId", "releaseVersion", "manifest_sha256", "link_column", "ids"}
        if not isinstance(doc, dict) or set(doc) != fields or doc["format"] != _LINKS_FORMAT:
            raise bad(f"it holds the fields {', '.join(sorted(fields))} of {_LINKS_FORMAT}")
        ids, digest = doc["ids"], doc["manifest_sha256"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(set(ids)) != len(ids):
            raise bad("its ids are a list of distinct texts")
        if not isinstance(digest, str) or len(digest) != 64 or set(digest) - set("0123456789abcdef"):
            raise bad("manifest_sha256 is 64 lowercase hex digits")
        if not isinstance(doc["releaseVersion"], int) or not isinstance(doc["datasetId"], str) \
                or not isinstance(doc["link_column"], str):
            raise bad("datasetId and link_column are texts, releaseVersion an integer")
        return cls(doc["datasetId"], doc["releaseVersion"], digest, doc["link_column"], tuple(ids))


def read_earlier(folder: str, key: Any) -> tuple[Any, Links]:
    """An earlier release verified with ``key`` and its links file, which must name it by its manifest's digest."""
    release = verify_release(folder, key)
    links = Links.read(links_path(folder))
    if links.manifest_sha256 != release.manifest_sha256:
        raise InvalidInputError(f"names another release (manifest SHA-256 {links.manifest_sha256[:16]}...), not "
                                f"{folder}", path=str(links_path(folder)), reason="LINKS_MISMATCH")
    return release, links


def present_in(ids: Sequence[str], earlier: Sequence[Links]) -> np.ndarray:
    """``present[i, j]``: whether person ``i`` of the new release is in release ``j`` (0, the new one; then the
    earlier ones in order)."""
    return np.column_stack([np.ones(len(ids), dtype=bool), *[links.holds(ids) for links in earlier]])


def earlier_entry(release: Any, linked: int) -> dict[str, Any]:
    """An earlier release as the manifest signs it: which release, its manifest's digest, its size, and how many
    of its people the new release holds again."""
    return {"datasetId": release.dataset_id, "releaseVersion": release.release_version,
            "manifest_sha256": release.manifest_sha256, "records": int(release.claims["n_records"]),
            "linked": int(linked)}


def _chosen(linked: np.ndarray) -> np.ndarray:
    """The people checked: every linked one, or :data:`MOST_CHECKED` of them drawn with the public seed."""
    if linked.size <= MOST_CHECKED:
        return linked
    return np.sort(np.random.default_rng(SEED).choice(linked, size=MOST_CHECKED, replace=False))


def composition_figures(releases: Sequence[Prepared], records: np.ndarray, present: np.ndarray,
                        policy: Policy) -> dict[str, Any]:
    """The joint figures of the new release ``releases[0]`` with the earlier ``releases[1:]`` (same schema):
    ``records`` are the new release's originals (rank keys), ``present[i, j]`` whether person ``i`` is in release
    ``j`` (column 0, the new one, all true). Returns ``linked``, ``policy_levels``, ``attribute_disclosure``
    (per sensitive attribute, the largest joint risk and the share certain) and ``newly_exposed``."""
    linked = np.flatnonzero(present[:, 1:].any(axis=1)) if present.shape[1] > 1 else np.zeros(0, dtype=np.int64)
    chosen = _chosen(linked)
    keys = np.column_stack([records[chosen], present[chosen]]) if chosen.size else np.zeros((0, 1))
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True) if chosen.size else (keys, np.zeros(0, int))
    draws: dict[tuple[int, ...], JointDraws] = {}
    per: list[tuple[str, str | None, bool, dict[str, float]]] = []
    m = records.shape[1]
    for row in distinct:
        record, where = row[:m], [j for j in range(len(releases)) if row[m + j]]
        checks = [check_record(releases[j], record, whole_space=releases[j].ranks_apply) for j in where]
        ranked = tuple(j for j in where if releases[j].ranks_apply)
        if len(ranked) >= 2 and ranked not in draws:
            draws[ranked] = joint_draws([releases[j].space for j in ranked], samples=SAMPLES, seed=SEED)
        joint = check_jointly(checks, policy=policy, draws=draws.get(ranked))
        own = joint.own_levels()
        verdict = joint.verdict(own)
        risks = {name: float(entry["risk"]) for name, entry in joint.candidates.items()}
        per.append((verdict.level, verdict.rule, verdict.level == "exposed" and "exposed" not in own, risks))
    counts, by_rule, newly, risks = {"exposed": 0, "at_risk": 0, "protected": 0}, {}, 0, {}
    for k in np.asarray(inverse).ravel():
        level, rule, new, theirs = per[k]
        counts[level] += 1
        newly += new
        if rule is not None:
            by_rule[rule] = by_rule.get(rule, 0) + 1
        for name, risk in theirs.items():
            risks.setdefault(name, []).append(risk)
    levels = Levels(policy.to_json(), int(linked.size), int(chosen.size), counts, by_rule)
    return {"linked": int(linked.size), "policy_levels": levels.to_json(), "newly_exposed": int(newly),
            "attribute_disclosure": {name: {"max": max(values), "certain_share": sum(v >= CERTAIN for v in values)
                                            / len(values)} for name, values in risks.items()}}
