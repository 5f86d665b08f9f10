"""Witness cosignatures of a checkpoint (c2sp.org/tlog-cosignature, version 1): Ed25519 and ML-DSA-44.

An Ed25519 witness (key type ``0x04``) signs ``cosignature/v1\\ntime <T>\\n`` followed by the checkpoint's text,
where ``T`` is the time of signing in seconds since the epoch; its signature line carries the key ID, ``T`` as 8
bytes big-endian, and the 64-byte Ed25519 signature. The witness's name is not signed: a policy names each witness
by its verifier key, name and key together.

An ML-DSA-44 witness (key type ``0x06``, a 1,312-byte public key) signs the ``subtree/v1`` message: the label
``subtree/v1\\n\\0``, its name and the log's origin each with a one-byte length, ``T``, the start 0 and end (the tree
size) as 8-byte big-endian numbers, and the root hash; its line carries ``T`` and the 2,420-byte signature. It is
verified where the installed ``cryptography`` has ML-DSA, and refused in one line where it has not
(``WITNESS_KEY_UNSUPPORTED``).
"""

from __future__ import annotations

from typing import Callable

from verifier.releases.listed_files import ReleaseError, fail
from verifier.transparency.note import (COSIGNATURE_TYPE, MLDSA44_COSIGNATURE_TYPE, MLDSA44_PUBLIC_BYTES, Note, key_id,
                                        parse_checkpoint, signature_line, verify_signature)

__all__ = ["COSIGNATURE_LENGTH", "MLDSA44_SIGNATURE_BYTES", "cosignature_line", "cosigned_message",
           "mldsa_cosigned_message", "mldsa_supported", "verify_cosignature"]

#: timestamp and Ed25519 signature, after the key ID
COSIGNATURE_LENGTH = 8 + 64
#: an ML-DSA-44 signature's bytes (FIPS 204)
MLDSA44_SIGNATURE_BYTES = 2420
_MAX_TIME = 2**63 - 1
_SUBTREE_LABEL = b"subtree/v1\n\x00"


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What an Ed25519 witness signs: the header, its time of signing, and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode("utf-8")


def mldsa_cosigned_message(name: str, timestamp: int, origin: str, size: int, root: bytes) -> bytes:
    """What an ML-DSA-44 witness signs of a checkpoint: the ``subtree/v1`` message from leaf 0 to ``size``."""
    def short(text: str) -> bytes:
        raw = text.encode("utf-8")
        if not 0 < len(raw) < 256:
            raise ValueError("a cosigner's name and a log's origin hold 1 to 255 bytes")
        return bytes([len(raw)]) + raw

    return (_SUBTREE_LABEL + short(name) + timestamp.to_bytes(8, "big") + short(origin) + (0).to_bytes(8, "big")
            + size.to_bytes(8, "big") + root)


def cosignature_line(text: str, name: str, public_raw: bytes, sign: Callable[[bytes], bytes], timestamp: int) -> str:
    """The signature line of the Ed25519 witness ``name`` (its public key ``public_raw``, ``sign`` its signer) on
    the checkpoint ``text`` at ``timestamp``."""
    signature = sign(cosigned_message(text, timestamp))
    return signature_line(name, COSIGNATURE_TYPE, public_raw, timestamp.to_bytes(8, "big") + signature)


def mldsa_supported() -> bool:
    """Whether the installed ``cryptography`` verifies ML-DSA-44 signatures."""
    try:
        from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PublicKey  # noqa: F401
    except ImportError:
        return False
    return True


def _verify_mldsa(note: Note, name: str, public_raw: bytes, where: str) -> int | None:
    wanted = key_id(name, MLDSA44_COSIGNATURE_TYPE, public_raw)
    found = [sig for signer, kid, sig in note.signatures if signer == name and kid == wanted]
    if not found:
        return None
    if not mldsa_supported():
        raise fail(where, "WITNESS_KEY_UNSUPPORTED", f"the witness {name} cosigns with ML-DSA-44, which this "
                   "installation's cryptography cannot verify (it needs a release with ML-DSA): its cosignature is "
                   "not counted")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PublicKey

    checkpoint = parse_checkpoint(note.text, where)
    signature = found[0]
    timestamp = int.from_bytes(signature[:8], "big")
    try:
        if len(signature) != 8 + MLDSA44_SIGNATURE_BYTES or timestamp > _MAX_TIME:
            raise InvalidSignature
        message = mldsa_cosigned_message(name, timestamp, checkpoint.origin, checkpoint.size, checkpoint.root)
        MLDSA44PublicKey.from_public_bytes(public_raw).verify(signature[8:], message)
    except (InvalidSignature, ValueError):
        raise fail(where, "WITNESS_QUORUM", f"the cosignature of the witness {name} does not verify: the checkpoint "
                   "was changed, or the cosignature forged") from None
    return timestamp


def verify_cosignature(note: Note, name: str, public_raw: bytes, where: str) -> int | None:
    """The time the witness ``name`` cosigned ``note``, once its cosignature verifies; None when the note carries
    none from that key. A cosignature from that key that does not verify, or is not of the length its type
    signs with a time below 2^63, rejects the note (``WITNESS_QUORUM``). The key's type follows its length: 32
    bytes Ed25519, 1,312 bytes ML-DSA-44."""
    if len(public_raw) == MLDSA44_PUBLIC_BYTES:
        return _verify_mldsa(note, name, public_raw, where)

    def message(signature: bytes) -> bytes:
        if len(signature) != COSIGNATURE_LENGTH or int.from_bytes(signature[:8], "big") > _MAX_TIME:
            return b""  # verifies under no key: refused below as a bad cosignature
        return cosigned_message(note.text, int.from_bytes(signature[:8], "big"))

    try:
        found = verify_signature(note, name, public_raw, where, kind=COSIGNATURE_TYPE, message=message)
    except ReleaseError as exc:  # LOG_SIGNATURE, said as the witness's
        if exc.reason != "LOG_SIGNATURE":
            raise
        raise fail(where, "WITNESS_QUORUM", f"the cosignature of the witness {name} does not verify: the checkpoint "
                   "was changed, or the cosignature forged") from None
    return None if found is None else int.from_bytes(found[:8], "big")
