"""A release's place in the log: its leaf, and its proof file (c2sp.org/tlog-proof).

The leaf is a short text any verifier rebuilds from a verified release, so that the log vouches for this
release and no other::

    permuted-privacy release
    origin stats.example/releases
    dataset "adult"
    version 1
    manifest sha256 <the signed manifest's SHA-256>
    key <the signing key's fingerprint>

The proof file is ``c2sp.org/tlog-proof@v1``, ``index <i>``, the inclusion hashes in base64 one per line (leaf
side first), a blank line, and the checkpoint's signed note as the log wrote it. :func:`verify_proof` checks it
against the log's key and origin: the checkpoint's signature, and the leaf of this release at that index in
that tree (RFC 9162 2.1.3.2). A proof for another release, another index or another tree is refused
(``LOG_PROOF_INVALID``).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass

from verifier.releases.listed_files import fail
from verifier.transparency.merkle import HASH_SIZE, leaf_hash, verify_inclusion
from verifier.transparency.note import (ED25519_TYPE, MAX_NOTE_BYTES, Checkpoint, parse_checkpoint, parse_note,
                                        parse_vkey, verify_signature)

__all__ = ["PROOF_HEADER", "Logged", "hash_lines", "leaf_identity", "logged_versions", "parse_proof", "proof_text",
           "read_log_file", "read_vkey", "verify_proof"]

PROOF_HEADER = "c2sp.org/tlog-proof@v1"
_INDEX = re.compile(r"index (0|[1-9][0-9]{0,18})")
#: the longest inclusion proof: one hash per level of a tree of 2^63 leaves
MAX_PATH = 63


def leaf_identity(origin: str, release) -> bytes:
    """The log entry of a verified release (the text of this module's docstring)."""
    return (f"permuted-privacy release\norigin {origin}\ndataset {json.dumps(release.dataset_id)}\n"
            f"version {release.release_version}\nmanifest sha256 {release.manifest_sha256}\n"
            f"key {release.key.fingerprint}\n").encode("utf-8")


def logged_versions(entries: list[bytes], origin: str, dataset_id: str) -> list[int]:
    """The release versions the log's ``entries`` hold of a dataset, one per entry (-1 for a version no release
    could have), read from the leaf :func:`leaf_identity` writes."""
    head = [f"origin {origin}", f"dataset {json.dumps(dataset_id)}"]
    out = []
    for entry in entries:
        lines = entry.decode("utf-8", "replace").splitlines()
        if lines[1:3] == head and len(lines) > 3 and lines[3].startswith("version "):
            version = lines[3][len("version "):]
            out.append(int(version) if version.isascii() and version.isdigit() else -1)
    return out


def proof_text(index: int, path: list[bytes], checkpoint_note: bytes) -> bytes:
    lines = [PROOF_HEADER, f"index {index}", *(base64.b64encode(h).decode() for h in path), ""]
    return ("\n".join(lines) + "\n").encode() + checkpoint_note


@dataclass(frozen=True)
class Logged:
    """Where a release is logged: its index in the checkpoint's tree, and the checkpoint."""

    index: int
    checkpoint: Checkpoint
    note: bytes = b""
    """The checkpoint's signed note, as the proof carries it."""

    def words(self) -> str:
        return f"logged at index {self.index} of {self.checkpoint.size} in {self.checkpoint.origin}"


def hash_lines(lines: list[str], what: str, where: str) -> list[bytes]:
    """Hashes of a proof, each 32 bytes in canonical base64 on its line (``LOG_MALFORMED`` otherwise)."""
    out = []
    for line in lines:
        try:
            hashed = base64.b64decode(line, validate=True)
        except ValueError:
            hashed = b""
        if len(hashed) != HASH_SIZE or base64.b64encode(hashed).decode() != line:
            raise fail(where, "LOG_MALFORMED", f"each {what} hash is 32 bytes in base64, one per line")
        out.append(hashed)
    return out


def parse_proof(raw: bytes, where: str) -> tuple[int, list[bytes], bytes]:
    """A proof file's index, inclusion hashes and checkpoint note, strictly (``LOG_MALFORMED``)."""
    if len(raw) > MAX_NOTE_BYTES:
        raise fail(where, "LOG_MALFORMED", f"holds more than the {MAX_NOTE_BYTES} bytes a proof may")
    head, sep, note = raw.partition(b"\n\n")
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        lines = []
    if not sep or len(lines) < 2 or lines[0] != PROOF_HEADER:
        raise fail(where, "LOG_MALFORMED", f"a proof file starts with {PROOF_HEADER}, then its index and hashes, "
                   "a blank line and the checkpoint")
    rest = lines[1:]
    if rest and rest[0].startswith("extra "):
        rest = rest[1:]  # opaque data the format allows; nothing here trusts or needs it
    index = _INDEX.fullmatch(rest[0]) if rest else None
    if index is None or len(rest) - 1 > MAX_PATH:
        raise fail(where, "LOG_MALFORMED", "the proof's index line is 'index' and a decimal without a leading zero, "
                   f"followed by at most {MAX_PATH} hashes")
    path = hash_lines(rest[1:], "inclusion", where)
    return int(index.group(1)), path, note


def verify_proof(raw: bytes, release, log_public_raw: bytes, origin: str, where: str) -> Logged:
    """Check the proof file ``raw`` of the verified ``release`` against the log's key and origin."""
    index, path, note_raw = parse_proof(raw, where)
    note = parse_note(note_raw, where)
    checkpoint = parse_checkpoint(note.text, where)
    if checkpoint.origin != origin:
        raise fail(where, "LOG_PROOF_INVALID", f"its checkpoint is of the log {checkpoint.origin!r}, not {origin!r}")
    if verify_signature(note, origin, log_public_raw, where, kind=ED25519_TYPE) is None:
        raise fail(where, "LOG_SIGNATURE", f"its checkpoint carries no signature of the log's key ({origin})")
    leaf = leaf_hash(leaf_identity(origin, release))
    if not verify_inclusion(index, checkpoint.size, leaf, path, checkpoint.root):
        raise fail(where, "LOG_PROOF_INVALID", f"it does not prove this release at index {index} of the log's tree "
                   f"of {checkpoint.size}: a proof of another release, index or tree")
    return Logged(index, checkpoint, note_raw)


def read_log_file(path: str, kind: str = "json") -> bytes:
    """A file the subject gives of a log (its key, her policy, a proof, a checkpoint), read within the bound of
    ``kind`` and refused as a key file is when it cannot be read (a FIFO, a device, a folder: exit 4)."""
    from verifier.data.bounded_files import read_bounded
    from verifier.releases.verification import KEY_READ_REASONS, KeyFileError

    return read_bounded(path, kind, error=KeyFileError, reasons=KEY_READ_REASONS)


def read_vkey(path: str, *, log_only: bool = False) -> tuple[str, int, bytes]:
    """The verifier key in the file ``path`` (one line): ``(name, type, public key)``; with ``log_only``, refused
    unless it is a log's (type 0x01) (``LOG_KEY_INVALID``)."""
    text = read_log_file(path, "key").decode("utf-8", "replace")
    name, kind, public = parse_vkey(text, path)
    if log_only and kind != ED25519_TYPE:
        raise fail(path, "LOG_KEY_INVALID", "a log's key signs with Ed25519 (type 0x01); this is a witness's")
    return name, kind, public
