"""A release of people released before (``publisher release --previous DIR --link-column COL``, issue 40).

Each earlier release is verified with the publisher's own key, and its links file
(:class:`verifier.releases.composition.Links`, written beside it when it was made with ``--link-column``) must
name it by its manifest's SHA-256 and the same linking column. The new release then signs the earlier ones'
digests and the joint figures (:func:`verifier.releases.composition.composition_figures`), and is refused when
they miss a target (``COMPOSITION_DISCLOSURE``).

**Fresh noise on people released before.** Two copies of a person's values, each with its own independent
noise, average to a value with half the noise variance, and m copies to 1/m of it: the noise a method
calibrated for one release no longer protects. A release that adds fresh noise (``additive_noise``) to people an
earlier noisy release holds is therefore refused (``COMPOSITION_FRESH_NOISE``). Randomized response and random
replacement draw afresh too, but their joint risk is modelled exactly (Result 1 on the stacked keep matrices; the
product of paper 004's posteriors) and bounded by the targets through the joint figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from verifier.attacks.classes import subject_class
from verifier.errors import InputIOError, InvalidInputError, UsageError
from verifier.releases.links import MOST_EARLIER, Links, links_path, read_earlier
from verifier.releases.subject import Prepared, prepare
from verifier.releases.verification import TrustedKey, VerifiedRelease
from verifier.text import literal, plural

__all__ = ["Earlier", "NOISY_METHODS", "require_link_column", "load_earlier", "fresh_noise_problem",
           "check_links_output", "earlier_signatures", "republishing"]

#: methods that add fresh independent noise to every released value
NOISY_METHODS = ("additive_noise",)


@dataclass(frozen=True)
class Earlier:
    """An earlier release of the same people: verified, parsed, and who is in it."""

    release: VerifiedRelease
    prepared: Prepared
    links: Links


def require_link_column(folders: Sequence[str], column: str | None) -> None:
    """``--previous`` finds its people by ``--link-column``: refused at once without it, or past the most."""
    if folders and column is None:
        raise UsageError("--previous needs --link-column COL: the input's column that says who each person is, "
                         "as the earlier release's links file records it")
    if len(folders) > MOST_EARLIER:
        raise UsageError(f"--previous is given {len(folders)} times; a release is checked with at most "
                         f"{MOST_EARLIER} earlier ones")


def load_earlier(folders: Sequence[str], key: TrustedKey, schema, column: str | None) -> list[Earlier]:
    """Each ``--previous`` folder verified with the publisher's key, with its links file; refused before any
    work when a folder is repeated, its links file is missing or of another release or column, or its schema is not
    the new release's."""
    require_link_column(folders, column)
    out: list[Earlier] = []
    for folder in folders:
        release, links = read_earlier(folder, key)
        if any(e.release.manifest_sha256 == release.manifest_sha256 for e in out):
            raise UsageError(f"--previous {folder} is given twice")
        if links.column != column:
            raise InvalidInputError(f"links people by {literal(links.column)}, not by --link-column "
                                    f"{literal(column)}", path=str(links_path(folder)), reason="LINKS_MISMATCH")
        if release.schema().attributes != schema.attributes:
            raise InvalidInputError("its schema is not the new release's: people are checked together across "
                                    "releases of the same attributes, kinds and categories", path=folder,
                                    reason="SCHEMA_MISMATCH")
        out.append(Earlier(release, prepare(release), links))
    return out


def fresh_noise_problem(methods: Sequence[dict[str, Any]], earlier: Sequence[Earlier],
                        ids: Sequence[str]) -> str | None:
    """Why this release may not add fresh noise to people an earlier noisy release holds (the module's text)."""
    noisy = [step["method"] for step in methods if step.get("method") in NOISY_METHODS]
    if not noisy:
        return None
    for each in earlier:
        theirs = [step.get("method") for step in each.release.methods if step.get("method") in NOISY_METHODS]
        shared = int(np.count_nonzero(each.links.holds(ids)))
        if theirs and shared:
            people = plural(shared, "person", plural_form="people")
            return (f"{noisy[0]} would add fresh noise to the values of {people} that "
                    f"{literal(each.release.dataset_id)!r} version {each.release.release_version} published with "
                    f"{theirs[0]}: averaging the two noisy copies of a person's values halves the noise's variance. "
                    "Publish them with a method that adds no fresh noise (rank_swapping, microaggregation, a "
                    "generalization), or leave out --previous if these are not the same people; nothing was written")
    return None


def check_links_output(out: str | Path) -> Path:
    """Where the new release's links file goes (beside it), refused at once when something is there."""
    path = links_path(out)
    if path.exists() or path.is_symlink():
        raise InputIOError("already exists; a links file is never overwritten", path=str(path),
                           reason="OUTPUT_EXISTS")
    return path


def earlier_signatures(earlier: Sequence[Earlier], records: np.ndarray, ids: Sequence[str],
                       sensitive: str) -> list[frozenset | None]:
    """Each person's signature for m-invariant re-publication (:mod:`publisher.methods.m_invariance`), intersected
    over every earlier release that holds her: in an m-invariant release, her own group's sensitive values, which
    its links file records for the protector; in another, the values among her candidates there, found as her
    joint check finds them (the released rows whose every quasi-identifier cell contains her values, ``records``
    her rank keys as the new input holds them). None for a person in no earlier release. Her candidates in a
    release hold her group, so a new group of exactly these values leaves her joint check all of them. Only a
    generalized earlier release with its sensitive values published as they are has signatures: another is refused
    (``M_INVARIANCE_IMPOSSIBLE``)."""
    out: list[frozenset | None] = [None] * len(ids)
    found: dict[tuple[int, bytes], frozenset] = {}
    for j, each in enumerate(earlier):
        published = each.prepared.published
        if published is None or any(c.values is None or len(c.values) != 1 for c in published.cells[sensitive]):
            raise InvalidInputError("m_invariant keeps the signature of each returning person's group, and this "
                                    "earlier release has no groups of published sensitive values (it is not a "
                                    "generalized release with its sensitive attribute as it is)",
                                    path=each.release.path, reason="M_INVARIANCE_IMPOSSIBLE")
        kept = each.links.signatures or {}
        for i in np.flatnonzero(each.links.holds(ids)).tolist():
            key = (j, records[i].tobytes())
            if ids[i] in kept:  # her own group's, which an m-invariant release recorded for its protector
                signature = frozenset(kept[ids[i]])
            else:
                if key not in found:
                    rows = np.asarray(subject_class(published, records[i])["rows"], dtype=np.int64) - 1
                    found[key] = frozenset(next(iter(published.cells[sensitive][r].values)) for r in rows.tolist())
                signature = found[key]
            out[i] = signature if out[i] is None else out[i] & signature
    return out


def republishing(methods: Sequence[Any], earlier: Sequence[Earlier], records: np.ndarray,
                 ids: Sequence[str] | None, schema, weighted: bool) -> list[Any]:
    """The methods, a step that keeps each returning person's signature (``needs_earlier``: m_invariant) given
    them from the earlier releases (:func:`earlier_signatures`); without earlier releases it makes a first,
    m-unique release. Refused with sampling weights: its counterfeit records have none."""
    keeping = [m for m in methods if getattr(m, "needs_earlier", False)]
    if not keeping:
        return list(methods)
    if weighted:
        raise UsageError(f"{keeping[0].name} adds counterfeit records, which stand for nobody and have no sampling "
                         "weight; publish it without --weight-column")
    sensitive = [a.name for a in schema.attributes if a.role == "sensitive"]
    if not earlier or ids is None or len(sensitive) != 1:
        return list(methods)  # a first release, or a schema the step itself refuses with its own words
    signatures = earlier_signatures(earlier, records, ids, sensitive[0])
    return [m.given_signatures(signatures) if getattr(m, "needs_earlier", False) else m for m in methods]
