"""Who is in a release, for the protector alone (issue 40): the links file a release made with ``--link-column``
leaves beside it, and the earlier releases a later one is checked with (docs/release-format.md, section 8).

A links file names its release by the SHA-256 of the signed manifest, the linking column (a person's id, never
published), and the sorted ids of the release's people: which row is whose stays secret even from it. This module
reads and writes it and finds the people of a new release in earlier ones; :mod:`verifier.releases.composition`
checks them together.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from verifier.data.bounded_files import read_bounded
from verifier.data.schema import Attribute, Schema
from verifier.data.strict_json import loads_strict
from verifier.data.tables import read_table
from verifier.errors import InvalidInputError
from verifier.releases.verification import verify_release
from verifier.text import literal

__all__ = ["MOST_EARLIER", "Links", "links_commitment", "links_path", "read_link_column", "read_earlier", "present_in"]

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
    linking column's name and the sorted ids of its people; for an m-invariant release, each person's signature
    (the sensitive values of her group, which a re-publication keeps: Xiao and Tao 2007)."""

    dataset_id: str
    release_version: int
    manifest_sha256: str
    column: str
    ids: tuple[str, ...]
    signatures: dict[str, tuple[str, ...]] | None = None
    salt: str | None = None
    """64 hex digits drawn when the release was made: with the ids, the commitment its manifest signs
    (``predicate.links_commitment``; None in a links file written before it was signed)."""

    def holds(self, ids: Sequence[str]) -> np.ndarray:
        """Whether each of ``ids`` is a person of this release."""
        held = set(self.ids)
        return np.fromiter((i in held for i in ids), dtype=bool, count=len(ids))

    def to_bytes(self) -> bytes:
        doc = {"format": _LINKS_FORMAT, "datasetId": self.dataset_id, "releaseVersion": self.release_version,
               "manifest_sha256": self.manifest_sha256, "link_column": self.column, "ids": sorted(self.ids)}
        if self.signatures is not None:
            doc["signatures"] = {i: sorted(self.signatures[i]) for i in sorted(self.signatures)}
        if self.salt is not None:
            doc["salt"] = self.salt
        return json.dumps(doc, ensure_ascii=False).encode("utf-8")

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
        if not isinstance(doc, dict) or set(doc) - {"signatures", "salt"} != fields or doc["format"] != _LINKS_FORMAT:
            raise bad(f"it holds the fields {', '.join(sorted(fields))} of {_LINKS_FORMAT}, its salt, and signatures "
                      "of an m-invariant release")
        salt = doc.get("salt")
        if salt is not None and (not isinstance(salt, str) or len(salt) != 64 or set(salt) - set("0123456789abcdef")):
            raise bad("its salt is 64 lowercase hex digits")
        ids, digest = doc["ids"], doc["manifest_sha256"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(set(ids)) != len(ids):
            raise bad("its ids are a list of distinct texts")
        if not isinstance(digest, str) or len(digest) != 64 or set(digest) - set("0123456789abcdef"):
            raise bad("manifest_sha256 is 64 lowercase hex digits")
        if not isinstance(doc["releaseVersion"], int) or not isinstance(doc["datasetId"], str) \
                or not isinstance(doc["link_column"], str):
            raise bad("datasetId and link_column are texts, releaseVersion an integer")
        return cls(doc["datasetId"], doc["releaseVersion"], digest, doc["link_column"], tuple(ids),
                   _signatures(doc.get("signatures"), set(ids), bad), salt)


def links_commitment(salt: str, ids: Sequence[str]) -> str:
    """The SHA-256 commitment a release's manifest signs to its people: a domain label, the salt, then each id
    (sorted) as its UTF-8 length in 4 bytes and its bytes. Hiding (the salt is secret, in the links file alone)
    and binding: a links file whose ids were changed after the release was signed no longer matches it."""
    import hashlib

    out = hashlib.sha256(b"permuted-privacy links commitment v1\n" + bytes.fromhex(salt))
    for i in sorted(ids):
        raw = i.encode("utf-8")
        out.update(len(raw).to_bytes(4, "big") + raw)
    return out.hexdigest()


def _signatures(given: Any, ids: set[str], bad) -> dict[str, tuple[str, ...]] | None:
    """An m-invariant release's signatures, each a person of the release's with a list of distinct texts."""
    if given is None:
        return None
    if not isinstance(given, dict) or not set(given) <= ids or not all(
            isinstance(v, list) and v and all(isinstance(t, str) for t in v) and len(set(v)) == len(v)
            for v in given.values()):
        raise bad("its signatures give people of the release each a list of distinct sensitive values")
    return {i: tuple(v) for i, v in given.items()}


def read_earlier(folder: str, key: Any) -> tuple[Any, Links]:
    """An earlier release verified with ``key`` and its links file, which must name it by its manifest's digest."""
    release = verify_release(folder, key)
    links = Links.read(links_path(folder))
    if links.manifest_sha256 != release.manifest_sha256:
        raise InvalidInputError(f"names another release (manifest SHA-256 {links.manifest_sha256[:16]}...), not "
                                f"{folder}", path=str(links_path(folder)), reason="LINKS_MISMATCH")
    signed = release.predicate.get("links_commitment")
    if signed is not None and (links.salt is None or links_commitment(links.salt, links.ids) != signed):
        raise InvalidInputError(f"its people are not the ones {folder} committed to when it was signed (its manifest's "
                                "links_commitment): the ids were changed, or the file is another's",
                                path=str(links_path(folder)), reason="LINKS_MISMATCH")
    return release, links


def present_in(ids: Sequence[str], earlier: Sequence[Links]) -> np.ndarray:
    """``present[i, j]``: whether person ``i`` of the new release is in release ``j`` (0, the new one; then the
    earlier ones in order)."""
    return np.column_stack([np.ones(len(ids), dtype=bool), *[links.holds(ids) for links in earlier]])
