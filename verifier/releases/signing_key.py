"""A loaded Ed25519 private key, read strictly: the publisher's and the log's signing keys, a witness's cosigning key.

:func:`load_private_key` refuses a key file that others can read, maps each loading failure to its own reason
code, and checks the key against the public key it must match.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier.data.bounded_files import read_bounded
from verifier.releases.verification import KEY_READ_REASONS, KeyFileError, TrustedKey, is_weak_key

__all__ = ["SigningKey", "key_is_encrypted", "load_private_key"]


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


def _read_key_file(path: str | Path) -> tuple[os.stat_result, bytes]:
    raw = read_bounded(path, "key", error=KeyFileError, reasons=KEY_READ_REASONS)
    try:
        return os.stat(path), raw
    except OSError as exc:
        raise KeyFileError(f"cannot read the key file ({exc.strerror})", path=str(path),
                           reason="KEY_UNREADABLE") from None


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

