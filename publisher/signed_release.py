"""Keys and signed releases: the protector's side of SPEC section 9.

- :func:`keygen` writes an Ed25519 key pair. The private key is PKCS#8 PEM,
  encrypted with a passphrase unless the user opts out, created with
  ``O_CREAT | O_EXCL`` and mode 0600, never overwritten.
- :func:`load_private_key` refuses a key file that others can read, maps
  each loading failure to its own reason code, and checks the key against the
  public key it must match.
- :func:`make_release` anonymizes, assesses, builds and signs the manifest,
  verifies its own signature, writes everything into a temporary directory
  beside the target and renames it into place. The release holds no key and
  no seed.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from publisher.version import __version__
from publisher.methods import Method, anonymize, frame_rows, frame_to_keys
from verifier.attacks.assessment import assess, smallest_class
from verifier.errors import InputIOError, InvalidInputError
from verifier.data.tables import Table, csv_text, current_umask
from verifier.releases.verification import (
    DATA_FILE,
    DATA_FILES,
    ENVELOPE,
    MANIFEST,
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    KeyFileError,
    TrustedKey,
    dumps_manifest,
    is_weak_key,
    key_id,
    pae,
    verify_release,
)

__all__ = ["keygen", "key_is_encrypted", "load_private_key", "SigningKey", "make_release", "release_claims"]


@dataclass(frozen=True)
class SigningKey:
    """A loaded private key. Its bytes never leave this object except as signatures."""

    _key: Any

    @property
    def public_raw(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self._key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)

    def __repr__(self) -> str:  # never print key material, even in a traceback with locals
        return f"SigningKey(fingerprint={hashlib.sha256(self.public_raw).hexdigest()})"


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create ``path`` exclusively with ``mode`` (whatever the umask), write, sync."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    except FileExistsError:
        raise InputIOError("already exists; a key is never overwritten", path=str(path), reason="OUTPUT_EXISTS") from None
    except OSError as exc:
        raise InputIOError(f"cannot create ({exc.strerror})", path=str(path), reason="WRITE_FAILED") from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise InputIOError(f"cannot write ({exc.strerror})", path=str(path), reason="WRITE_FAILED") from None


def keygen(directory: str | Path, passphrase: bytes | None) -> tuple[Path, Path, str, str]:
    """Write ``private.pem`` (0600) and ``public.pem`` into ``directory``.

    ``passphrase`` ``None`` writes an unencrypted private key (the caller
    asked for it explicitly). Returns both paths, the fingerprint and the key id.
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    root = Path(directory)
    priv_path, pub_path = root / "private.pem", root / "public.pem"
    for p in (priv_path, pub_path):
        if p.exists() or p.is_symlink():
            raise InputIOError("already exists; a key is never overwritten", path=str(p), reason="OUTPUT_EXISTS")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputIOError(f"cannot create the folder ({exc.strerror})", path=str(root), reason="WRITE_FAILED") from None
    key = Ed25519PrivateKey.generate()
    encryption = (serialization.BestAvailableEncryption(passphrase) if passphrase
                  else serialization.NoEncryption())
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    _write_new(priv_path, private_pem, 0o600)
    try:
        _write_new(pub_path, public_pem, 0o644)
    except InputIOError:
        priv_path.unlink(missing_ok=True)
        raise
    return priv_path, pub_path, hashlib.sha256(raw).hexdigest(), key_id(raw)


def _read_key_file(path: str | Path) -> tuple[os.stat_result, bytes]:
    name = str(path)
    try:
        return os.stat(path), Path(path).read_bytes()
    except FileNotFoundError:
        raise KeyFileError("no such key file", path=name, reason="KEY_NOT_FOUND") from None
    except OSError as exc:
        raise KeyFileError(f"cannot read the key file ({exc.strerror})", path=name, reason="KEY_UNREADABLE") from None


def key_is_encrypted(path: str | Path) -> bool:
    """Whether the PEM private key at ``path`` needs a passphrase."""
    return b"ENCRYPTED PRIVATE KEY" in _read_key_file(path)[1]


def load_private_key(path: str | Path, passphrase: bytes | None, *, expected: TrustedKey | None = None) -> SigningKey:
    """Load an Ed25519 private key, strictly (``spec/reliability.md`` cases 22-24)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    name = str(path)
    info, data = _read_key_file(path)
    if b"PRIVATE KEY" not in data:
        raise KeyFileError("not a PEM private key (a public key cannot sign)", path=name, reason="KEY_TYPE")
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"others can read this private key (mode {stat.S_IMODE(info.st_mode):04o}); "
                           "run chmod 600 on it first", path=name, reason="KEY_PERMISSIONS")
    encrypted = b"ENCRYPTED PRIVATE KEY" in data
    if encrypted and not passphrase:
        raise KeyFileError("the private key is encrypted; give its passphrase (--passphrase-file or the prompt)",
                           path=name, reason="KEY_ENCRYPTED")
    if passphrase and not encrypted:
        raise KeyFileError("the private key is not encrypted, but a passphrase was given", path=name,
                           reason="KEY_NOT_ENCRYPTED")
    try:
        key = serialization.load_pem_private_key(data, password=passphrase if encrypted else None)
    except ValueError:
        if encrypted:
            raise KeyFileError("wrong passphrase for this private key", path=name, reason="KEY_PASSPHRASE") from None
        raise KeyFileError("not a readable PEM private key", path=name, reason="KEY_INVALID") from None
    except TypeError:
        raise KeyFileError("not a readable PEM private key", path=name, reason="KEY_INVALID") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"a {type(key).__name__} key; releases are signed with Ed25519", path=name, reason="KEY_TYPE")
    signing = SigningKey(key)
    if is_weak_key(signing.public_raw):
        raise KeyFileError("the key's public half is a weak Ed25519 point", path=name, reason="WEAK_KEY")
    if expected is not None and signing.public_raw != expected.raw:
        raise KeyFileError(
            f"this private key (fingerprint {hashlib.sha256(signing.public_raw).hexdigest()}) does not match "
            f"the public key {expected.path} (fingerprint {expected.fingerprint})", path=name, reason="KEY_MISMATCH")
    return signing


def release_claims(assessment: dict[str, Any], k: int) -> dict[str, Any]:
    """The claims a manifest carries, from an assessment in the released row order.

    Every figure here can be recomputed by an auditor who has the original
    (``verifier audit --original``), except those under ``protector_only``,
    which need the secret pairing of released and original rows. ``k``, the
    smallest number of released records sharing the same quasi-identifier
    values, needs only the release.
    """
    pp, it = assessment["permuted_privacy"], assessment["intruder"]
    return {
        "n_records": assessment["n_records"],
        "k": k,
        "permuted_privacy": {"distance": pp["distance"], "variances": pp["variances"], "spread_kinds": pp["spread_kinds"]},
        "intruder": {
            "alpha": it["alpha"],
            "random_method": it["random_method"],
            "random_records": it["random_records"],
            "intruder_seed": 0,
            "confidently_linked_share": it["confidently_linked_share"],
            "hellinger": it["hellinger"],
        },
        "attribute_disclosure": assessment.get("attribute_disclosure", {}),
        "protector_only": {
            "correct_link_share": it["correct_link_share"],
            "multiple_match_share": it["multiple_match_share"],
            "misidentified_share": it["misidentified_share"],
        },
    }


def _parquet_bytes(keys: np.ndarray, schema) -> bytes:
    """The released rows as Parquet: float64 numeric columns, string categorical ones, no pandas metadata."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = []
    for j, attr in enumerate(schema.attributes):
        if attr.kind == "numeric":
            columns.append(pa.array(keys[:, j], type=pa.float64()))
        else:
            categories = np.asarray(attr.categories, dtype=object)
            columns.append(pa.array(categories[keys[:, j].astype(np.int64)].tolist(), type=pa.string()))
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns, names=schema.names), buffer)
    return buffer.getvalue()


def make_release(
    table: Table,
    methods: Sequence[Method],
    key: SigningKey,
    out: str | Path,
    *,
    dataset_id: str,
    release_version: int = 1,
    seed: int | None = None,
    alpha: float = 0.01,
    samples: int = 10_000,
    created_at: str | None = None,
    progress=None,
    data_format: str = "csv",
) -> Path:
    """Anonymize ``table``, assess, sign, verify, and move the release into ``out`` atomically.

    ``data_format`` is ``csv`` (``release.csv``) or ``parquet`` (``release.parquet``).
    """
    if data_format not in ("csv", "parquet"):
        raise InvalidInputError(f"the data format is csv or parquet, not {data_format!r}", reason="PARAMETER_INVALID")
    target = Path(out)
    if target.exists() or target.is_symlink():
        raise InputIOError("already exists; a release is never overwritten", path=str(target), reason="OUTPUT_EXISTS")
    if not dataset_id or any(c in dataset_id for c in "\n\r\x00"):
        raise InvalidInputError("--dataset-id must be a non-empty single line", reason="PARAMETER_INVALID")
    if isinstance(release_version, bool) or not isinstance(release_version, int) or release_version < 1:
        raise InvalidInputError("the release version is an integer from 1 up", reason="PARAMETER_INVALID")
    schema = table.schema
    frame = table.to_frame()
    result = anonymize(frame, schema, methods, random_state=seed)
    released = result.released
    y = frame_to_keys(released, schema)
    x_in_release_order = table.values[result.order]
    assessment = assess(x_in_release_order, y, schema, paired=True, alpha=alpha, samples=samples,
                        random_state=0, progress=progress).to_json()
    if data_format == "parquet":
        data_name, data = "release.parquet", _parquet_bytes(y, schema)
    else:
        data_name, data = DATA_FILE, csv_text(schema.names, frame_rows(released, schema)).encode("utf-8")
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": data_name, "digest": {"sha256": hashlib.sha256(data).hexdigest()},
                     "mediaType": DATA_FILES[data_name], "annotations": {"size": len(data)}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "datasetId": dataset_id,
            "releaseVersion": release_version,
            "createdAt": created_at or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "schema": schema.to_dict(),
            "methods": result.parameters,
            "withheld": ["random_seed"],
            "claims": release_claims(assessment, smallest_class(y, schema)),
            "utility": assessment["utility"],
            "toolkit": {"name": "permuted-privacy", "version": __version__, "randomness": result.randomness},
        },
    }
    manifest = dumps_manifest(statement)
    signature = key.sign(pae(PAYLOAD_TYPE, manifest))
    trusted = TrustedKey(raw=key.public_raw, path="(the signing key)")
    if not trusted.verify(signature, pae(PAYLOAD_TYPE, manifest)):  # sign, then check before writing anything
        raise InputIOError("the signature just made does not verify", reason="SIGNING_FAILED")
    envelope = dumps_manifest({
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(manifest).decode("ascii"),
        "signatures": [{"keyid": key_id(key.public_raw), "sig": base64.b64encode(signature).decode("ascii")}],
    })
    parent = target.parent if str(target.parent) else Path(".")
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise InputIOError(f"cannot write here ({exc.strerror})", path=str(target), reason="WRITE_FAILED") from None
    try:
        os.chmod(staging, 0o755 & ~current_umask())
        for name, content in ((data_name, data), (MANIFEST, manifest), (ENVELOPE, envelope)):
            _write_new(staging / name, content, 0o644 & ~current_umask())
        verify_release(staging, trusted)
        os.rename(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise InputIOError(f"cannot write the release ({exc.strerror})", path=str(target), reason="WRITE_FAILED") from None
        raise
    return target
