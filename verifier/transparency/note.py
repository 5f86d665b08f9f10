"""Signed notes (c2sp.org/signed-note) and the checkpoints they carry (c2sp.org/tlog-checkpoint), with Ed25519.

A note is UTF-8 text ending in a newline, a blank line, then one line per signature: an em dash, a space, the
key's name, a space, and the base64 of the 4-byte key ID followed by the signature. An Ed25519 key's ID is the
first four bytes of ``SHA-256(name || 0x0A || 0x01 || public key)``; a witness's timestamped cosignature
(c2sp.org/tlog-cosignature) uses type ``0x04``. A signature from a key the verifier does not know is ignored; one
from a known key that does not verify rejects the note.

A checkpoint's text is the log's origin, its size in decimal (no leading zero, at most 2^63 - 1) and its root
hash in base64, each on a line, then optional extension lines. Every failure is one ``ReleaseError`` (exit 1)
naming what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from verifier.releases.listed_files import ReleaseError, fail
from verifier.transparency.merkle import HASH_SIZE

__all__ = ["COSIGNATURE_TYPE", "ED25519_TYPE", "MAX_NOTE_BYTES", "MLDSA44_COSIGNATURE_TYPE", "MLDSA44_PUBLIC_BYTES",
           "MAX_SIZE", "Checkpoint", "Note", "checkpoint_text",
           "key_id", "parse_checkpoint", "parse_note", "parse_vkey", "signature_line", "signed_checkpoint",
           "verify_signature", "vkey"]

ED25519_TYPE = 0x01
COSIGNATURE_TYPE = 0x04
#: an ML-DSA-44 cosigner's key (c2sp.org/tlog-cosignature): 1,312 bytes of public key
MLDSA44_COSIGNATURE_TYPE, MLDSA44_PUBLIC_BYTES = 0x06, 1312
#: the largest note read (a checkpoint with a few dozen cosignatures is a few kilobytes)
MAX_NOTE_BYTES = 1 << 20
#: the most signature lines a note may carry
MAX_SIGNATURES = 100
#: the largest tree size a checkpoint may state
MAX_SIZE = 2**63 - 1
_DASH = "\u2014 "
_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")
_B64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def key_id(name: str, kind: int, public_raw: bytes) -> bytes:
    """The 4-byte key ID: ``SHA-256(name || 0x0A || type || public key)[:4]``."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([kind]) + public_raw).digest()[:4]


def vkey(name: str, kind: int, public_raw: bytes) -> str:
    """A verifier key as Go's note package and C2SP clients write it: ``name+<key ID in hex>+base64(type || key)``."""
    return f"{name}+{key_id(name, kind, public_raw).hex()}+{base64.b64encode(bytes([kind]) + public_raw).decode()}"


def parse_vkey(text: str, where: str) -> tuple[str, int, bytes]:
    """``(name, type, public key)`` of a verifier key, its key ID checked (``LOG_KEY_INVALID`` otherwise)."""
    parts = text.strip().split("+", 2)  # the base64 of the key may hold "+"; a name never does
    if len(parts) != 3 or not parts[0] or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise fail(where, "LOG_KEY_INVALID", "a verifier key reads NAME+KEYID+BASE64 (publisher log init prints it)")
    try:
        raw = _b64(parts[2], "the key", where, "LOG_KEY_INVALID")
    except ReleaseError:
        raw = b""
    mldsa = len(raw) == 1 + MLDSA44_PUBLIC_BYTES and raw[0] == MLDSA44_COSIGNATURE_TYPE
    if not mldsa and (len(raw) != 33 or raw[0] not in (ED25519_TYPE, COSIGNATURE_TYPE)):
        raise fail(where, "LOG_KEY_INVALID", "a verifier key holds an Ed25519 key (type 0x01 or 0x04) or an ML-DSA-44 "
                   "cosigner's (type 0x06) in base64")
    if key_id(parts[0], raw[0], raw[1:]).hex() != parts[1]:
        raise fail(where, "LOG_KEY_INVALID", "the key ID does not match the name and key")
    return parts[0], raw[0], raw[1:]


@dataclass(frozen=True)
class Note:
    """A parsed note: its text (what is signed) and its signatures as (key name, key ID, signature bytes)."""

    text: str
    signatures: tuple[tuple[str, bytes, bytes], ...] = field(default=())


def _b64(text: str, what: str, where: str, reason: str = "LOG_MALFORMED") -> bytes:
    """Canonical standard base64, padded: one way to write each value (the page's twin reads the same)."""
    try:
        raw = base64.b64decode(text, validate=True) if _B64.fullmatch(text) else None
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or base64.b64encode(raw).decode() != text:
        raise fail(where, reason, f"{what} is not base64")
    return raw


def parse_note(raw: bytes, where: str) -> Note:
    """A signed note, strictly: UTF-8, no control character but newline, text and signatures apart."""
    if len(raw) > MAX_NOTE_BYTES:
        raise fail(where, "LOG_MALFORMED", f"holds {len(raw)} bytes, more than the {MAX_NOTE_BYTES} a note may")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise fail(where, "LOG_MALFORMED", "a signed note is UTF-8 text") from None
    if any(c < " " and c != "\n" for c in text):
        raise fail(where, "LOG_MALFORMED", "a signed note holds no control character but newline")
    cut = text.rfind("\n\n")
    if cut < 0 or not text.endswith("\n"):
        raise fail(where, "LOG_MALFORMED", "a signed note is text, a blank line, then its signature lines")
    body, signed = text[:cut + 1], text[cut + 2:]
    lines = signed[:-1].split("\n") if signed else []
    if not lines or len(lines) > MAX_SIGNATURES:
        raise fail(where, "LOG_MALFORMED", f"a signed note carries 1 to {MAX_SIGNATURES} signatures")
    signatures = []
    for line in lines:
        if not line.startswith(_DASH) or line.count(" ") != 2:
            raise fail(where, "LOG_MALFORMED", "a signature line is an em dash, the key's name and the signature")
        name, sig = line[len(_DASH):].split(" ")
        if not name or "+" in name:
            raise fail(where, "LOG_MALFORMED", "a key name is not empty and holds no '+'")
        raw_sig = _b64(sig, f"the signature of {name}", where)
        if len(raw_sig) < 5:
            raise fail(where, "LOG_MALFORMED", f"the signature of {name} is shorter than its key ID")
        signatures.append((name, raw_sig[:4], raw_sig[4:]))
    return Note(body, tuple(signatures))


def signature_line(name: str, kind: int, public_raw: bytes, signature: bytes) -> str:
    """One signature line: em dash, name, base64(key ID || signature)."""
    return f"{_DASH}{name} {base64.b64encode(key_id(name, kind, public_raw) + signature).decode()}\n"


def verify_signature(note: Note, name: str, public_raw: bytes, where: str, *, kind: int = ED25519_TYPE,
                     message: Callable[[bytes], bytes] | None = None) -> bytes | None:
    """The signature bytes of the key ``name`` (its public key ``public_raw``) on ``note`` once verified, or None
    when the note carries none from that key. ``message`` turns a signature into the bytes it signs (a
    cosignature signs its timestamp with the text); by default the note's text."""
    wanted = key_id(name, kind, public_raw)
    key = Ed25519PublicKey.from_public_bytes(public_raw)
    for signer, kid, sig in note.signatures:
        if signer != name or kid != wanted:
            continue  # an unknown key, even one sharing a name or an ID, is ignored
        signed, ed = (message(sig) if message else note.text.encode("utf-8")), sig[-64:]
        try:
            if len(sig) < 64:
                raise InvalidSignature
            key.verify(ed, signed)
        except InvalidSignature:
            raise fail(where, "LOG_SIGNATURE", f"the signature of {name} does not verify: the note was changed or "
                       "signed by another key") from None
        return sig
    return None


@dataclass(frozen=True)
class Checkpoint:
    """A log's signed tree head: its origin, its size and its root hash."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()


def checkpoint_text(origin: str, size: int, root: bytes) -> str:
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"


def parse_checkpoint(text: str, where: str) -> Checkpoint:
    """A checkpoint's text: origin, size (decimal, no leading zero, at most 2^63 - 1), base64 root, extensions."""
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
        raise fail(where, "LOG_MALFORMED", "a checkpoint is its origin, size and root hash, each on a line")
    origin, size, root = lines[0], lines[1], lines[2]
    if not _SIZE.fullmatch(size) or int(size) > MAX_SIZE:
        raise fail(where, "LOG_MALFORMED", f"the tree size {size!r} is not a decimal from 0 to 2^63 - 1 without a "
                   "leading zero")
    hashed = _b64(root, "the root hash", where)
    if len(hashed) != HASH_SIZE:
        raise fail(where, "LOG_MALFORMED", f"the root hash holds {len(hashed)} bytes, not {HASH_SIZE}")
    return Checkpoint(origin, int(size), hashed, tuple(lines[3:-1]))


def signed_checkpoint(raw: bytes, origin: str, public_raw: bytes, where: str) -> Checkpoint:
    """The checkpoint of the signed note ``raw``, once it is of the log ``origin`` and carries that log's
    signature (``LOG_SIGNATURE`` otherwise); cosignatures are the policy's to count."""
    note = parse_note(raw, where)
    checkpoint = parse_checkpoint(note.text, where)
    if checkpoint.origin != origin or verify_signature(note, origin, public_raw, where) is None:
        raise fail(where, "LOG_SIGNATURE", f"carries no signature of the log's key ({origin})")
    return checkpoint
