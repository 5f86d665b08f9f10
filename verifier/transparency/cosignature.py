"""Witness cosignatures of a checkpoint (c2sp.org/tlog-cosignature, version 1, Ed25519).

A witness signs ``cosignature/v1\\ntime <T>\\n`` followed by the checkpoint's text, where ``T`` is the time of
signing in seconds since the epoch; its signature line carries the key ID (key type ``0x04``), ``T`` as 8 bytes
big-endian, and the 64-byte Ed25519 signature. The witness's name is not signed: a policy names each witness by
its verifier key, name and key together.
"""

from __future__ import annotations

from typing import Callable

from verifier.releases.listed_files import ReleaseError, fail
from verifier.transparency.note import COSIGNATURE_TYPE, Note, signature_line, verify_signature

__all__ = ["COSIGNATURE_LENGTH", "cosignature_line", "cosigned_message", "verify_cosignature"]

#: timestamp and Ed25519 signature, after the key ID
COSIGNATURE_LENGTH = 8 + 64
_MAX_TIME = 2**63 - 1


def cosigned_message(text: str, timestamp: int) -> bytes:
    """What a witness signs: the header, its time of signing, and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode("utf-8")


def cosignature_line(text: str, name: str, public_raw: bytes, sign: Callable[[bytes], bytes], timestamp: int) -> str:
    """The signature line of the witness ``name`` (its public key ``public_raw``, ``sign`` its Ed25519 signer) on
    the checkpoint ``text`` at ``timestamp``."""
    signature = sign(cosigned_message(text, timestamp))
    return signature_line(name, COSIGNATURE_TYPE, public_raw, timestamp.to_bytes(8, "big") + signature)


def verify_cosignature(note: Note, name: str, public_raw: bytes, where: str) -> int | None:
    """The time the witness ``name`` cosigned ``note``, once its cosignature verifies; None when the note carries
    none from that key. A cosignature from that key that does not verify, or is not 72 bytes with a time below
    2^63, rejects the note (``WITNESS_QUORUM``)."""
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
