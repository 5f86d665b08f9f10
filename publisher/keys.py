"""The protector's signing key (SPEC section 9): Ed25519, made once, kept private.

- :func:`keygen` writes an Ed25519 key pair. The private key is PKCS#8 PEM,
  encrypted with a passphrase unless the user opts out, created with
  ``O_CREAT | O_EXCL`` and mode 0600, never overwritten.
- :func:`load_private_key` (:mod:`verifier.releases.signing_key`, which a
  witness's key shares) refuses a key file that others can read, maps each
  loading failure to its own reason code, and checks the key against the
  public key it must match.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from verifier.errors import InputIOError
from verifier.releases.signing_key import SigningKey, key_is_encrypted, load_private_key
from verifier.releases.verification import key_id

__all__ = ["SigningKey", "keygen", "key_is_encrypted", "load_private_key", "write_new"]


def write_new(path: Path, data: bytes, mode: int) -> None:
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
    except BaseException as exc:  # a full disk, or Ctrl-C mid-write: never a half-written file
        path.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputIOError(f"cannot write ({exc.strerror})", path=str(path), reason="WRITE_FAILED") from None
        raise


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
    write_new(priv_path, private_pem, 0o600)
    try:
        write_new(pub_path, public_pem, 0o644)
    except InputIOError:
        priv_path.unlink(missing_ok=True)
        raise
    return priv_path, pub_path, hashlib.sha256(raw).hexdigest(), key_id(raw)
