"""Signed, transparent releases: the format and its verification (SPEC section 9).

A release is a directory holding:

- the data, ``release.csv`` or ``release.parquet``, rows shuffled, or the
  same table cut by rows into Parquet parts ``release-00000.parquet``, ...
  (:mod:`verifier.releases.data_files`);
- the files it is read with: ``datapackage.json`` (format version 2),
  ``hierarchies.json`` and ``weights.csv`` when the release has them;
- ``manifest.json``: an in-toto Statement v1 whose subject lists every one of
  those files (name, sha256, size) and whose predicate holds every parameter
  except the seeds, the schema and the protector's claims; sorted, indented
  UTF-8 JSON;
- ``manifest.dsse.json``: a DSSE envelope whose payload is the exact bytes of
  ``manifest.json``, signed with Ed25519 over the pre-authentication encoding
  ``b"DSSEv1 %d %b %d %b"``.

:func:`verify_release` checks it in the order of SPEC section 9 and fails
closed: every failure is a :class:`ReleaseError` with a reason code (exit 1),
raised before any data is parsed. It returns a :class:`VerifiedRelease` only
on success, holding the verified bytes; nothing is read from disk again,
except a part, which is checked against its digest again when it is read.

The trusted public key always comes from the user, never from the release.
The key id in the envelope is only a hint.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from verifier.data.bounded_files import read_bounded
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.errors import VerifierError
from verifier.data.sampling_weights import WEIGHTS, identifying_weights, parse_weights
from verifier.releases.data_files import (
    DATA_FILE,
    DATA_FILES,
    MAX_PARTS,
    PART_MEDIA,
    is_data,
    is_part,
    part_numbering_problem,
    read_part,
)
from verifier.releases.coherence import rows_problem
from verifier.releases.data_columns import codec_problem, columns_problem, data_shape
from verifier.releases.datapackage import DATAPACKAGE, datapackage_problem
from verifier.releases.listed_files import ReleaseError, hash_listed, open_regular, read_listed
from verifier.releases.manifest_schema import validate_manifest
from verifier.releases.listed_files import fail as _fail, read_capped as _read_capped

__all__ = [
    "STATEMENT_TYPE",
    "PREDICATE_TYPE",
    "PAYLOAD_TYPE",
    "MANIFEST",
    "ENVELOPE",
    "DATA_FILE",
    "DATA_FILES",
    "EXTRA_FILES",
    "HIERARCHIES",
    "ReleaseError",
    "KeyFileError",
    "KEY_READ_REASONS",
    "TrustedKey",
    "VerifiedRelease",
    "pae",
    "key_id",
    "fingerprint",
    "is_weak_key",
    "load_public_key",
    "verify_release",
    "dumps_manifest",
]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
#: this format's versioned URI; version 2 adds datapackage.json. Releases of version 1 still verify.
PREDICATE_TYPE = "https://permuted-privacy.dev/release/v2"
PREDICATE_TYPE_V1 = "https://permuted-privacy.dev/release/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
MANIFEST = "manifest.json"
ENVELOPE = "manifest.dsse.json"
#: files a release may list besides its data: the hierarchies its generalized cells are read with, (from
#: version 2, then always) its Frictionless data package, and its records' sampling weights
EXTRA_FILES = {"hierarchies.json": "application/json", DATAPACKAGE: "application/json", WEIGHTS: "text/csv"}
HIERARCHIES = "hierarchies.json"
#: the largest extra file (the data and weights.csv are limited only by their declared sizes)
MAX_EXTRA_BYTES = 16 << 20
#: no manifest or envelope is larger than this; a bigger file is refused unread
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


#: how the bounded reader's failures read for a key file
KEY_READ_REASONS = {"FILE_NOT_FOUND": "KEY_NOT_FOUND", "FILE_UNREADABLE": "KEY_UNREADABLE",
                    "FILE_NOT_REGULAR": "KEY_UNREADABLE", "FILE_TOO_LARGE": "KEY_INVALID"}


class KeyFileError(VerifierError):
    """A key file given by the user is unusable (exit code 4, an environment problem)."""

    exit_code = 4
    default_reason = "KEY_INVALID"


# ----------------------------------------------------------------------------- keys


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE pre-authentication encoding: ``DSSEv1 <len> <type> <len> <payload>``."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(t), t, len(payload), payload)


def key_id(raw_public: bytes) -> str:
    """The TUF / in-toto key id: sha256 of the key's canonical JSON (sorted keys, no spaces)."""
    doc = {"keytype": "ed25519", "scheme": "ed25519", "keyval": {"public": raw_public.hex()}}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def key_mismatch(trusted: str, hint: str) -> str:
    """KEY_MISMATCH's sentence, for her (issue 60, item 4): what it means, the fingerprint of the key she trusts,
    and what the release names of the one that signed it (a key id: the release holds no key, so no fingerprint)."""
    return (f"this release was not signed by the key you trust. Your key's fingerprint is {trusted}; the release "
            f"was signed by another key, key id {hint} (a release never carries its key, so its fingerprint is not "
            "known here): ask the publisher for the fingerprint of the key they sign with, and compare it with yours")


def fingerprint(raw_public: bytes) -> str:
    """The full SHA-256 of the raw 32-byte public key: what a person compares out of band."""
    return hashlib.sha256(raw_public).hexdigest()


_P = 2**255 - 19
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _decode_point(raw: bytes) -> tuple[int, int] | None:
    """Decode an Edwards25519 point (RFC 8032 5.1.3); ``None`` if not a canonical valid encoding."""
    if len(raw) != 32:
        return None
    y = int.from_bytes(raw, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    if y >= _P:
        return None
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x = (u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P)) % _P
    if (v * x * x - u) % _P != 0:
        x = (x * _SQRT_M1) % _P
        if (v * x * x - u) % _P != 0:
            return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = _P - x
    return x, y


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = _D * x1 * x2 * y1 * y2 % _P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, _P - 2, _P) % _P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, _P - 2, _P) % _P
    return x3, y3


def is_weak_key(raw_public: bytes) -> bool:
    """True for a public key no honest key generator produces.

    Refused: encodings that are not a canonical point, and points of small
    order (8P is the identity). With the identity point as public key, the
    signature ``R = identity, S = 0`` verifies for every message in OpenSSL,
    so such a key proves nothing (Chalkias et al., "Taming the many EdDSAs";
    libsodium refuses them too).
    """
    point = _decode_point(raw_public)
    if point is None:
        return True
    q = point
    for _ in range(3):
        q = _add(q, q)
    return q == (0, 1)


@dataclass(frozen=True)
class TrustedKey:
    """A public key the user trusts, with its fingerprint and key id."""

    raw: bytes
    path: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.raw)

    @property
    def key_id(self) -> str:
        return key_id(self.raw)

    def verify(self, signature: bytes, message: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, message)
        except InvalidSignature:
            return False
        return True


def load_public_key(path: str | Path) -> TrustedKey:
    """Read a trusted Ed25519 public key (PEM) given by the user; refuse weak keys."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    name = str(path)
    data = read_bounded(path, "key", error=KeyFileError, reasons=KEY_READ_REASONS)
    if b"PRIVATE KEY" in data:
        raise KeyFileError("this is a private key; give the public key (public.pem) to verify with",
                        path=name, reason="KEY_TYPE")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise KeyFileError("not a PEM public key", path=name, reason="KEY_INVALID") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"a {type(key).__name__.removesuffix('PublicKey').removeprefix('_')} key; releases are signed with Ed25519",
                        path=name, reason="KEY_TYPE")
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    if is_weak_key(raw):
        raise ReleaseError("the trusted key is a small-order or non-canonical Ed25519 point, for which forged "
                           "signatures verify; it cannot vouch for anything", path=name, reason="WEAK_KEY")
    return TrustedKey(raw=raw, path=name)


# ----------------------------------------------------------------------------- manifest


def dumps_manifest(statement: dict[str, Any]) -> bytes:
    """The one serialization of a manifest: sorted keys, indent 2, UTF-8, final newline, no NaN."""
    return (json.dumps(statement, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


@dataclass(frozen=True, eq=False)
class VerifiedRelease:
    """A release that passed every check. ``data`` holds the verified bytes of the data file."""

    path: str
    key: TrustedKey
    statement: dict[str, Any]
    data_name: str
    data: bytes
    extras: dict[str, bytes] = field(default_factory=dict)
    """The verified bytes of the other listed files (``hierarchies.json``)."""
    parts: tuple[tuple[str, str, int], ...] = ()
    """A partitioned release's parts (name, sha256, size), in order; ``data`` is then empty, and each part is read
    again, and checked again, when it is parsed (:mod:`verifier.releases.data_files`)."""
    root: str = ""
    """The folder the release was read from (a link to it resolved once): where its parts are read again."""
    manifest_sha256: str = ""
    """The SHA-256 of the signed manifest (manifest.json, the envelope's payload): what a release log records."""
    cells: list = field(default_factory=list, init=False, repr=False)
    """A generalized release's cells, once :meth:`published` has parsed them (the subject's check, the summary's
    base rates and class-level models, the audit read them)."""

    @property
    def content_key(self) -> str:
        """What two releases of the same data share, whatever else they sign: every listed file's name and SHA-256
        but ``datapackage.json`` (derived from the manifest), sorted. A copy of a release re-signed as a new version
        is new evidence of nothing (issue 59, item 5)."""
        return "\n".join(sorted(f"{s['name']} {s['digest']['sha256']}" for s in self.statement["subject"]
                                 if s["name"] != DATAPACKAGE))

    @property
    def data_files(self) -> list[str]:
        """The data's file names: the one data file, or the parts in order."""
        return [p[0] for p in self.parts] or [self.data_name]

    @property
    def data_size(self) -> int:
        """The data's bytes, over every part."""
        return sum(p[2] for p in self.parts) if self.parts else len(self.data)

    @property
    def predicate(self) -> dict[str, Any]:
        return self.statement["predicate"]

    @property
    def dataset_id(self) -> str:
        return self.predicate["datasetId"]

    @property
    def release_version(self) -> int:
        return self.predicate["releaseVersion"]

    @property
    def created_at(self) -> str:
        return self.predicate["createdAt"]

    @property
    def methods(self) -> list[dict[str, Any]]:
        return self.predicate["methods"]

    @property
    def claims(self) -> dict[str, Any]:
        return self.predicate["claims"]

    @property
    def family(self) -> str:
        """The method family whose model describes this release (``verifier.releases.family``)."""
        from verifier.releases.family import family_of

        return family_of(self.methods)

    @property
    def hierarchies(self) -> dict[str, Any] | None:
        """The published hierarchy file, parsed strictly, or None when the release lists none."""
        raw = self.extras.get(HIERARCHIES)
        if raw is None:
            return None
        return _strict_object(raw, f"{self.path}/{HIERARCHIES}", "DATA_MALFORMED", "the hierarchy file")

    def weights(self, n_records: int):
        """The released records' sampling weights (``weights.csv``), or None when the release carries none."""
        raw = self.extras.get(WEIGHTS)
        return None if raw is None else parse_weights(raw, f"{self.path}/{WEIGHTS}", n_records)

    def published(self):
        """A generalized release's cells, parsed from the verified bytes (``verifier.attacks.classes``) once."""
        if not self.cells:
            self.cells.append(self._parsed_cells())
        return self.cells[0]

    def _parsed_cells(self):
        from verifier.attacks.classes import mask_problem, read_published
        from verifier.attacks.counterfeits import counterfeit_problem
        from verifier.data.tables import read_text_cells

        shown = f"{self.path}/{self.data_name}"
        if self.parts:
            raise _fail(shown, "SCHEMA_INVALID", "a generalized release is published as one data file, not in parts")
        header, columns, typed = read_text_cells(shown, self.data)
        published = read_published(self.schema(), header, columns, typed=typed, hierarchies=self.hierarchies,
                                   path=shown)
        self._counted(published, published.n_records)
        problem = counterfeit_problem(published, self.methods) or mask_problem(published, self.methods)
        if problem:
            raise _fail(f"{self.path}/{MANIFEST}", "MANIFEST_INCOHERENT", problem)
        return published

    def schema(self):
        from verifier.data.schema import Schema

        return Schema.from_dict(self.predicate["schema"])

    def table(self):
        """The data, parsed from the verified bytes (a part is read again and checked again before it is parsed)."""
        from verifier.data.tables import Table, read_table_bytes

        if not self.parts:
            table = read_table_bytes(f"{self.path}/{self.data_name}", self.data, self.schema())
        else:
            schema = self.schema()
            values = [self._part_values(p, schema) for p in self.parts]
            table = Table(path=self.path, schema=schema, values=np.concatenate(values))
        return self._counted(table, int(table.values.shape[0]))

    def _counted(self, parsed, rows: int):
        """``parsed``, when the data holds the ``claims.n_records`` rows the manifest signs."""
        problem = rows_problem(rows, self.predicate)
        if problem:
            raise _fail(f"{self.path}/{MANIFEST}", "MANIFEST_INCOHERENT", problem)
        return parsed

    def _part_values(self, part: tuple[str, str, int], schema) -> np.ndarray:
        """One part's rows, from bytes checked against the signed digest, holding exactly the signed columns."""
        from verifier.data.tables import read_table_bytes

        shown = f"{self.path}/{part[0]}"
        raw = read_part(self.root, part, self.path)
        shape = data_shape(part[0], raw)
        problem = columns_problem(None if shape is None else shape.names, schema.names)
        if problem:
            raise _fail(shown, "DATA_COLUMNS_MISMATCH", problem)
        return read_table_bytes(shown, raw, schema).values


def _strict_object(raw: bytes, shown: str, reason: str, what: str) -> dict[str, Any]:
    """``raw`` parsed as strict JSON that must be an object; otherwise ``reason`` naming ``what``."""
    try:
        parsed = loads_strict(raw, interoperable=True)
    except StrictJSONError as exc:
        raise _fail(shown, reason, f"{what} is not strict JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise _fail(shown, reason, f"{what} is not a JSON object")
    return parsed


def _read_listed(path: Path, sha256: str, size: int, shown: str) -> bytes:
    """A listed file other than a part: extra files are capped, data files and weights only by their declared size."""
    if path.name not in DATA_FILES and path.name != WEIGHTS and size > MAX_EXTRA_BYTES:
        raise _fail(shown, "SIZE_MISMATCH", f"is declared with {size} bytes, more than the {MAX_EXTRA_BYTES} allowed")
    return read_listed(path, sha256, size, shown, data=path.name in DATA_FILES)


def _b64(text: Any, what: str, shown: str, reason: str) -> bytes:
    """Standard or URL-safe base64, as the DSSE spec allows; padding optional, but correct when present.

    One alphabet per string (``+/`` or ``-_``, never both), no whitespace, no
    other character.
    """
    if not isinstance(text, str):
        raise _fail(shown, reason, f"{what} is not a base64 string")
    body = text.rstrip("=")
    padding = len(text) - len(body)
    if "-" in body or "_" in body:
        if "+" in body or "/" in body:
            raise _fail(shown, reason, f"{what} mixes the standard and URL-safe base64 alphabets")
        body = body.translate(_URL_SAFE)
    if len(body) % 4 == 1 or (padding and (len(text) % 4 or padding > 2)):
        raise _fail(shown, reason, f"{what} is not valid base64 (its length or padding is wrong)")
    try:
        return base64.b64decode((body + "=" * (-len(body) % 4)).encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise _fail(shown, reason, f"{what} is not valid base64") from None


_URL_SAFE = str.maketrans("-_", "+/")


def _check_statement(statement: Any, shown: str) -> list[tuple[str, str, int]]:
    """The statement's shape; returns every listed file's name, sha256 and size, the data file (or its parts) first."""
    def bad(message: str) -> ReleaseError:
        return _fail(shown, "SCHEMA_INVALID", message)

    if not isinstance(statement, dict):
        raise bad("the manifest is not a JSON object")
    if statement.get("_type") != STATEMENT_TYPE:
        raise bad(f"_type is not {STATEMENT_TYPE}: this is not an in-toto statement of a release")
    if statement.get("predicateType") not in (PREDICATE_TYPE, PREDICATE_TYPE_V1):
        raise bad(f"predicateType is not {PREDICATE_TYPE} (or {PREDICATE_TYPE_V1}): another kind of signed document")
    subject = statement.get("subject")
    if not isinstance(subject, list) or not 1 <= len(subject) <= MAX_PARTS + len(EXTRA_FILES) \
            or not all(isinstance(e, dict) for e in subject):
        raise bad(f"subject must list the data file (or its parts), and at most {', '.join(EXTRA_FILES)} besides")
    entries = [_subject_entry(e, shown) for e in subject]
    names = [e[0] for e in entries]
    data = [e for e in entries if is_data(e[0])]
    whole = [e for e in data if e[0] in DATA_FILES]
    if not data or (whole and len(data) > 1) or len(set(names)) != len(names) \
            or any(n not in EXTRA_FILES for n in names if not is_data(n)):
        shown_names = json.dumps(names if len(names) <= 8 else [*names[:8], "..."])
        raise bad(f"subject must list exactly one data file ({', '.join(DATA_FILES)}) or its parts "
                  f"(release-00000.parquet, ...), and at most {', '.join(EXTRA_FILES)} besides; it lists {shown_names}")
    problem = None if whole else part_numbering_problem([e[0] for e in data])
    if problem:
        raise bad(problem)
    if (DATAPACKAGE in names) != (statement["predicateType"] == PREDICATE_TYPE):
        raise bad(f"a release of format version 2 lists {DATAPACKAGE}, and one of version 1 does not")
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict):
        raise bad("predicate is missing")
    weighted = predicate.get("sampling_weights")
    if weighted is not None and not (isinstance(weighted, dict) and isinstance(weighted.get("column"), str)):
        raise bad("predicate.sampling_weights names the input's weight column, or is null")
    if (WEIGHTS in names) != (weighted is not None):
        raise bad(f"a release lists {WEIGHTS} exactly when predicate.sampling_weights names the weight column")
    checks = {
        "datasetId": lambda v: isinstance(v, str) and v != "",
        "releaseVersion": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "createdAt": lambda v: isinstance(v, str),
        "schema": lambda v: isinstance(v, dict),
        "methods": lambda v: isinstance(v, list) and v != [],
        "withheld": lambda v: v == ["random_seed"],
        "claims": lambda v: isinstance(v, dict),
        "toolkit": lambda v: isinstance(v, dict),
    }
    for field_name, ok in checks.items():
        if not ok(predicate.get(field_name)):
            raise bad(f"predicate.{field_name} is missing or malformed")
    # every other field, typed and bounded, and the claims under their model
    validate_manifest(statement, shown, current=statement["predicateType"] == PREDICATE_TYPE)
    return data + [e for e in entries if e not in data]


def _subject_entry(entry: dict, shown: str) -> tuple[str, str, int]:
    """One listed file: its plain name, sha256 and size, with the media type its name requires."""
    def bad(message: str) -> ReleaseError:
        return _fail(shown, "SCHEMA_INVALID", message)

    name, digest = entry.get("name"), entry.get("digest")
    size = (entry.get("annotations") or {}).get("size") if isinstance(entry.get("annotations"), dict) else None
    if not isinstance(name, str) or _SAFE_NAME.fullmatch(name) is None or name in (MANIFEST, ENVELOPE):
        raise _fail(shown, "UNSAFE_PATH", "a listed file's name is not a plain file name "
                    "(letters, digits, '.', '_', '-'; no path)")
    if not isinstance(digest, dict) or set(digest) != {"sha256"}:
        raise bad(f"the digest of {name} must be exactly one sha256")
    if not isinstance(digest["sha256"], str) or _HEX64.fullmatch(digest["sha256"]) is None:
        raise bad("the sha256 digest must be 64 lowercase hexadecimal characters")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise bad(f"the size of {name} (annotations.size) must be a non-negative integer")
    media = {**DATA_FILES, **EXTRA_FILES}
    wanted = PART_MEDIA if is_part(name) else media.get(name)
    if wanted is not None and entry.get("mediaType") != wanted:
        raise bad(f"the media type of {name} must be {wanted}")
    return name, digest["sha256"], size


def _release_root(given: Path, shown: str) -> Path:
    """The folder to read. A link to a folder (``latest -> release-v3``) is followed here, once.

    Its real path is used from then on, so the link cannot be swapped midway;
    every file inside is still read without following links.
    """
    try:
        root = given.resolve(strict=True) if given.is_symlink() else given
        root.stat()
    except RuntimeError:  # pathlib's word for a loop of links
        raise _fail(shown, "FILE_UNREADABLE", "is a loop of symbolic links, not a release directory") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _fail(shown, "FILE_UNREADABLE", "is a loop of symbolic links, not a release directory") from None
        if exc.errno == errno.ENAMETOOLONG:
            raise _fail(shown, "FILE_UNREADABLE", "is a path longer than this system allows") from None
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise _fail(shown, "FILE_UNREADABLE", f"cannot be read ({exc.strerror})") from None
        root = Path(os.path.realpath(given)) if given.is_symlink() else given
    if not root.exists():
        where = f"is a link to {root}, which does not exist" if root != given else "no such directory"
        raise _fail(shown, "FILE_MISSING", where)
    if not root.is_dir():
        where = f"is a link to {root}, which is" if root != given else "is"
        raise _fail(shown, "NOT_A_DIRECTORY", f"{where} a file, not a release directory")
    return root


def _envelope(root: Path, shown: str) -> tuple[bytes, Any, bytes, str]:
    """The envelope's one signature, its key id hint, the payload and its type (``SIGNATURE_MALFORMED`` otherwise)."""
    env_bytes = _read_capped(root / ENVELOPE, MAX_MANIFEST_BYTES * 2, f"{shown}/{ENVELOPE}")
    env_shown = f"{shown}/{ENVELOPE}"
    try:
        envelope = loads_strict(env_bytes, interoperable=True)
    except StrictJSONError as exc:
        raise _fail(env_shown, "SIGNATURE_MALFORMED", f"the envelope is not valid JSON: {exc}") from None
    if not isinstance(envelope, dict) or set(envelope) != {"payloadType", "payload", "signatures"}:
        raise _fail(env_shown, "SIGNATURE_MALFORMED", "a DSSE envelope holds exactly payloadType, payload and signatures")
    sigs = envelope["signatures"]
    if not isinstance(sigs, list) or len(sigs) != 1 or not isinstance(sigs[0], dict):
        raise _fail(env_shown, "SIGNATURE_MALFORMED", "the envelope must hold exactly one signature")
    signature = _b64(sigs[0].get("sig"), "the signature", env_shown, "SIGNATURE_MALFORMED")
    if len(signature) != 64:
        raise _fail(env_shown, "SIGNATURE_MALFORMED", f"an Ed25519 signature has 64 bytes, this one {len(signature)}")
    hint = sigs[0].get("keyid")
    payload = _b64(envelope["payload"], "the payload", env_shown, "SIGNATURE_MALFORMED")
    payload_type = envelope["payloadType"]
    if not isinstance(payload_type, str):
        raise _fail(env_shown, "SIGNATURE_MALFORMED", "payloadType is not a string")
    return signature, hint, payload, payload_type


def _check_columns(root: Path, shown: str, predicate: dict[str, Any], files: list[tuple[str, bytes | int]]) -> None:
    """The data holds exactly the signed schema's columns (:mod:`verifier.releases.data_columns`), in Parquet
    the ``claims.n_records`` rows and only the codecs every reader decodes. ``files`` are (name, bytes), or (name,
    declared size) for a part, which is read from its footer alone, without following a link (its digest was
    checked as it streamed, and is checked again when it is parsed)."""
    names = [a["name"] for a in predicate["schema"]["attributes"]]
    rows: int | None = 0
    for name, raw in files:
        if isinstance(raw, int):
            try:
                with open_regular(root / name, raw, f"{shown}/{name}") as handle:
                    raw = _parquet_footer(handle)
            except OSError as exc:
                raise _fail(f"{shown}/{name}", "FILE_UNREADABLE", f"cannot be read ({exc.strerror})") from None
        shape = data_shape(name, raw)
        problem = columns_problem(None if shape is None else shape.names, names)
        if problem:
            raise _fail(f"{shown}/{name}", "DATA_COLUMNS_MISMATCH", problem)
        problem = codec_problem(shape)
        if problem:
            raise _fail(f"{shown}/{name}", "DATA_MALFORMED", problem)
        rows = None if shape is None or shape.rows is None or rows is None else rows + shape.rows
    # Parquet says its rows in the footer: checked here, before a row is decoded (a small file can hold millions);
    # a CSV file's rows are counted by the table reader as it reads them (VerifiedRelease._counted)
    problem = None if rows is None else rows_problem(rows, predicate)
    if problem:
        raise _fail(f"{shown}/{MANIFEST}", "MANIFEST_INCOHERENT", problem)


def _parquet_footer(handle) -> bytes:
    """A Parquet file's footer with its magic bytes before it: what its schema is read from, whatever its size."""
    size = handle.seek(0, os.SEEK_END)
    if size < 12:
        return b""
    handle.seek(size - 8)
    tail = handle.read(8)
    length = int.from_bytes(tail[:4], "little")
    if tail[4:] != b"PAR1" or length + 12 > size:
        return b""
    handle.seek(size - 8 - length)
    return b"PAR1" + handle.read(length) + tail


def verify_release(
    directory: str | Path,
    key: TrustedKey,
    *,
    dataset_id: str | None = None,
    min_version: int | None = None,
) -> VerifiedRelease:
    """Verify a release directory against a trusted key, in the order of SPEC section 9.

    Raises :class:`ReleaseError` (reason code, exit 1) at the first failed
    check; returns only on success.
    """
    shown = str(directory)
    root = _release_root(Path(directory), shown)
    # 1. the envelope, exactly one signature
    signature, hint, payload, payload_type = _envelope(root, shown)
    env_shown = f"{shown}/{ENVELOPE}"
    # 2-3. the trusted key (weak keys were refused when it was loaded); the signature over the PAE
    if not key.verify(signature, pae(payload_type, payload)):
        if isinstance(hint, str) and hint != key.key_id:
            raise _fail(env_shown, "KEY_MISMATCH", key_mismatch(key.fingerprint, hint))
        raise _fail(env_shown, "SIGNATURE_INVALID", "the signature does not verify with the trusted key "
                    f"(fingerprint {key.fingerprint}): the manifest was changed or signed by another key")
    if payload_type != PAYLOAD_TYPE:
        raise _fail(env_shown, "SCHEMA_INVALID", f"payloadType is {payload_type!r}, not {PAYLOAD_TYPE!r}")
    # 4. the statement, strictly
    statement = _strict_object(payload, f"{shown}/{MANIFEST}", "MANIFEST_MALFORMED", "the signed manifest")
    try:  # a lone surrogate parses, then breaks every later use of the text
        json.dumps(statement, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(f"{shown}/{MANIFEST}", "MANIFEST_MALFORMED", "the signed manifest holds a lone surrogate") from None
    listed = _check_statement(statement, f"{shown}/{MANIFEST}")
    data_name = listed[0][0]
    # 5. exactly the listed files, safe, with the right sizes and digests
    try:
        present = sorted(os.listdir(root))
    except OSError as exc:
        raise _fail(shown, "FILE_UNREADABLE", f"cannot list the release ({exc.strerror})") from None
    expected = sorted([MANIFEST, ENVELOPE, *(name for name, _, _ in listed)])
    missing = [p for p in expected if p not in present]
    if missing:
        raise _fail(f"{shown}/{missing[0]}", "FILE_MISSING", "is listed in the manifest but not in the release")
    extra = [p for p in present if p not in expected]
    if extra:
        raise _fail(f"{shown}/{extra[0]}", "UNLISTED_FILE", "is not listed in the manifest; a release holds only its listed files")
    parts = tuple(e for e in listed if is_part(e[0]))
    for name, sha256, size in parts:  # streamed through the hash, none of it kept
        hash_listed(root / name, sha256, size, f"{shown}/{name}")
    contents = {name: _read_listed(root / name, sha256, size, f"{shown}/{name}")
                for name, sha256, size in listed if not is_part(name)}
    data = b"" if parts else contents.pop(data_name)
    _check_columns(root, shown, statement["predicate"], [(data_name, data)] if not parts else
                   [(name, size) for name, _, size in parts])
    if DATAPACKAGE in contents:
        problem = datapackage_problem(statement["predicate"], listed, contents[DATAPACKAGE])
        if problem:
            raise _fail(f"{shown}/{DATAPACKAGE}", "DATAPACKAGE_MISMATCH", problem)
    if WEIGHTS in contents:  # signed is not the same as sound: one number above zero per released record
        try:
            weights = parse_weights(contents[WEIGHTS], f"{shown}/{WEIGHTS}", statement["predicate"]["claims"]["n_records"])
        except VerifierError as exc:
            raise _fail(f"{shown}/{WEIGHTS}", "DATA_MALFORMED", exc.message) from None
        naming = identifying_weights(weights)  # published beside their records, unique weights name them
        if naming:
            raise _fail(f"{shown}/{WEIGHTS}", "WEIGHT_IDENTIFYING", naming)
    # 6. manifest.json is the signed payload, byte for byte
    manifest = _read_capped(root / MANIFEST, MAX_MANIFEST_BYTES, f"{shown}/{MANIFEST}")
    if manifest != payload:
        raise _fail(f"{shown}/{MANIFEST}", "MANIFEST_MISMATCH", "differs from the signed payload of the envelope")
    # 7. rollback and wrong dataset
    predicate = statement["predicate"]
    if dataset_id is not None and predicate["datasetId"] != dataset_id:
        raise _fail(shown, "WRONG_DATASET", f"is a release of dataset {predicate['datasetId']!r}, not {dataset_id!r}")
    if min_version is not None and predicate["releaseVersion"] < min_version:
        raise _fail(shown, "ROLLBACK", f"is release version {predicate['releaseVersion']}, older than the "
                    f"version {min_version} you asked for at least")
    return VerifiedRelease(path=shown, key=key, statement=statement, data_name=data_name, data=data,
                           extras=contents, parts=parts, root=str(root),
                           manifest_sha256=hashlib.sha256(payload).hexdigest())
