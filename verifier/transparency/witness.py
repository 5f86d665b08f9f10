"""A witness: it cosigns a log's checkpoint only once a consistency proof shows that the log grew from the last
checkpoint it cosigned (c2sp.org/tlog-witness).

Anyone independent of the publisher can run one (a statistics council, a library, a data protection authority):
as long as one witness of a subject's quorum is honest, a log cannot show her a history others do not see. The
witness keeps, in its state folder, the last checkpoint it cosigned of each log (by origin) and nothing else.

An add-checkpoint request is ``old <size>``, the consistency proof's hashes in base64 one per line, a blank line
and the checkpoint's signed note. It is refused, with the HTTP status the protocol names:

- 400 ``LOG_MALFORMED``: the request or checkpoint does not parse, or the old size exceeds the new;
- 404 ``LOG_UNKNOWN``: the witness does not witness that log;
- 403 ``LOG_SIGNATURE``: the log's key did not sign the checkpoint;
- 409 ``WITNESS_CONFLICT``: the old size is not the size the witness last cosigned (the answer says that size);
  ``LOG_ROLLBACK`` when the checkpoint is older than that one; ``LOG_EQUIVOCATION``: a checkpoint of the size it
  cosigned with another root (a fork; tlog-witness names 409 for it);
- 422 ``LOG_INCONSISTENT``: the proof does not show the new tree extends the one it cosigned.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from verifier.data.folder_lock import locked
from verifier.data.tables import write_atomic_bytes
from verifier.releases.listed_files import ReleaseError, fail, read_capped
from verifier.transparency.cosignature import cosignature_line
from verifier.transparency.merkle import EMPTY_ROOT, verify_consistency
from verifier.transparency.note import (MAX_NOTE_BYTES, MAX_SIZE, Checkpoint, parse_checkpoint, parse_note,
                                        signed_checkpoint, verify_signature)
from verifier.transparency.proof import hash_lines

__all__ = ["HTTP_STATUS", "MAX_REQUEST_BYTES", "Conflict", "Cosigned", "Cosigner", "add_checkpoint", "add_cosignature",
           "cosign_log", "last_cosigned", "last_cosigned_note", "request_text"]

#: the largest add-checkpoint request read
MAX_REQUEST_BYTES = 1 << 16
_OLD = re.compile(r"old (0|[1-9][0-9]{0,18})")
HTTP_STATUS = {"LOG_MALFORMED": 400, "LOG_UNKNOWN": 404, "LOG_SIGNATURE": 403, "WITNESS_CONFLICT": 409,
               "LOG_ROLLBACK": 409, "LOG_EQUIVOCATION": 409, "LOG_INCONSISTENT": 422}


@dataclass(frozen=True)
class Cosigner:
    """The witness's name, its Ed25519 public key and its signer."""

    name: str
    public_raw: bytes
    sign: Callable[[bytes], bytes]


class Conflict(ReleaseError):
    """The old size of a request is not the size the witness last cosigned, which it tells (409)."""

    def __init__(self, message: str, *, path: str, reason: str, known: int):
        super().__init__(message, path=path, reason=reason)
        self.known = known


def request_text(old: int, proof: list[bytes], note: bytes) -> bytes:
    """An add-checkpoint request's body."""
    return "".join(f"{line}\n" for line in [f"old {old}", *(base64.b64encode(h).decode() for h in proof)]).encode() \
        + b"\n" + note


def _parse(body: bytes, where: str) -> tuple[int, list[bytes], bytes]:
    head, sep, note = body.partition(b"\n\n")
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        lines = []
    old = _OLD.fullmatch(lines[0]) if lines else None
    if not sep or old is None or int(old.group(1)) > MAX_SIZE or len(lines) > 64:
        raise fail(where, "LOG_MALFORMED", "a request is 'old SIZE', at most 63 hashes, a blank line and a checkpoint")
    proof = hash_lines(lines[1:], "consistency", where)
    return int(old.group(1)), proof, note


def _state_path(state: Path, origin: str) -> Path:
    return state / "cosigned" / f"{hashlib.sha256(origin.encode()).hexdigest()[:32]}.checkpoint"


def last_cosigned(state: Path, origin: str, log_public: bytes) -> Checkpoint:
    """The last checkpoint the witness cosigned of the log ``origin`` (the empty tree if none), its signature
    checked again: a state folder someone changed is refused, not trusted."""
    path = _state_path(state, origin)
    if not path.is_file():
        return Checkpoint(origin, 0, EMPTY_ROOT)
    return signed_checkpoint(read_capped(path, MAX_NOTE_BYTES, str(path)), origin, log_public, str(path))


def last_cosigned_note(state: Path, origin: str, log_public: bytes, cosigner: Cosigner, *,
                       now: int | None = None) -> bytes | None:
    """The last checkpoint the witness cosigned of the log ``origin``, as the log signed it, with a fresh
    cosignature of the witness in place of any older one of its key (``GET /<sha256(origin)>/checkpoint``); None
    when it has cosigned none."""
    path = _state_path(state, origin)
    if not path.is_file():
        return None
    raw = read_capped(path, MAX_NOTE_BYTES, str(path))
    signed_checkpoint(raw, origin, log_public, str(path))  # a state file someone changed is refused, not served
    note = parse_note(raw, str(path))
    line = cosignature_line(note.text, cosigner.name, cosigner.public_raw, cosigner.sign,
                            int(time.time()) if now is None else now)
    own = parse_note((note.text + "\n" + line).encode("utf-8"), str(path)).signatures[0][:2]
    decoded = raw.decode("utf-8")
    lines = decoded[decoded.rfind("\n\n") + 2:-1].split("\n")
    kept = [text for text, signature in zip(lines, note.signatures) if signature[:2] != own]
    return (note.text + "\n" + "".join(f"{text}\n" for text in kept) + line).encode("utf-8")


def _checked(body: bytes, logs: dict[str, bytes], where: str) -> tuple[int, list[bytes], bytes, Checkpoint]:
    """The request's old size, proof and checkpoint, checked as far as the witness's memory is not needed."""
    old, proof, raw = _parse(body, where)
    note = parse_note(raw, where)
    checkpoint = parse_checkpoint(note.text, where)
    if checkpoint.origin not in logs:
        raise fail(where, "LOG_UNKNOWN", f"this witness does not witness the log {checkpoint.origin!r}")
    if verify_signature(note, checkpoint.origin, logs[checkpoint.origin], where) is None:
        raise fail(where, "LOG_SIGNATURE", f"the checkpoint carries no signature of the log's key "
                   f"({checkpoint.origin})")
    if old > checkpoint.size:
        raise fail(where, "LOG_MALFORMED", f"the old size {old} exceeds the checkpoint's {checkpoint.size}")
    return old, proof, raw, checkpoint


def add_checkpoint(state: Path, cosigner: Cosigner, logs: dict[str, bytes], body: bytes, where: str, *,
                   now: int | None = None) -> str:
    """Cosign the checkpoint of an add-checkpoint request ``body`` for the logs ``logs`` (origin to public key),
    once it extends the last one cosigned; remember it; the cosignature line. Refusals raise a ``ReleaseError``
    whose reason :data:`HTTP_STATUS` maps to the protocol's status (a :class:`Conflict` carries the size known)."""
    if len(body) > MAX_REQUEST_BYTES:
        raise fail(where, "LOG_MALFORMED", f"a request holds at most {MAX_REQUEST_BYTES} bytes")
    old, proof, raw, checkpoint = _checked(body, logs, where)
    state.mkdir(parents=True, exist_ok=True)
    with locked(state):
        known = last_cosigned(state, checkpoint.origin, logs[checkpoint.origin])
        if checkpoint.size < known.size:
            raise Conflict(f"the checkpoint (size {checkpoint.size}) is older than the one this witness cosigned "
                           f"(size {known.size}): the log was rolled back", path=where, reason="LOG_ROLLBACK",
                           known=known.size)
        if old != known.size:
            raise Conflict(f"this witness last cosigned size {known.size}, not {old}: prove consistency from it",
                           path=where, reason="WITNESS_CONFLICT", known=known.size)
        if checkpoint.size == known.size and checkpoint.root != known.root:
            raise fail(where, "LOG_EQUIVOCATION", f"the log signed two trees of size {known.size} with different "
                       "roots: this one and the one this witness cosigned; a fork, refused")
        if not verify_consistency(known.size, checkpoint.size, known.root, checkpoint.root, proof):
            raise fail(where, "LOG_INCONSISTENT", f"the proof does not show that the tree of size {checkpoint.size} "
                       f"extends the one of size {known.size} this witness cosigned; a fork, refused")
        line = cosignature_line(parse_note(raw, where).text, cosigner.name, cosigner.public_raw, cosigner.sign,
                                int(time.time()) if now is None else now)
        if checkpoint.size > known.size or not _state_path(state, checkpoint.origin).is_file():
            path = _state_path(state, checkpoint.origin)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic_bytes(path, raw)
    return line


@dataclass(frozen=True)
class Cosigned:
    """A checkpoint cosigned from a log's files: the size the witness cosigned before, its line, whether it was
    added to the log's checkpoint file."""

    checkpoint: Checkpoint
    known_size: int
    line: str
    added: bool


def add_cosignature(path: Path, raw: bytes, line: str) -> bool:
    """Add the cosignature lines ``line`` (one or more, each ending in a newline, each verified by the caller) to
    the checkpoint file ``path`` while it still holds the note ``raw``, in place of older cosignatures of the same
    keys; whether they were added (not when the log moved on meanwhile). The first signature, the log's, is never
    replaced."""
    with locked(path.parent):
        current = read_capped(path, MAX_NOTE_BYTES, str(path))
        note = parse_note(current, str(path))
        if note.text != parse_note(raw, str(path)).text:
            return False
        new = {(name, kid) for name, kid, _ in parse_note((note.text + "\n" + line).encode("utf-8"),
                                                          "the cosignature").signatures}
        decoded = current.decode("utf-8")
        lines = decoded[decoded.rfind("\n\n") + 2:-1].split("\n")  # as parse_note splits them
        kept = [text for i, (text, (signer, k, _)) in enumerate(zip(lines, note.signatures))
                if i == 0 or (signer, k) not in new]
        write_atomic_bytes(path, (note.text + "\n" + "".join(f"{text}\n" for text in kept) + line).encode("utf-8"))
    return True


def cosign_log(log: Path, state: Path, cosigner: Cosigner, logs: dict[str, bytes]) -> Cosigned:
    """Cosign the checkpoint of the log folder ``log`` once its tiles show it extends the tree last cosigned, and
    add the cosignature to its checkpoint file."""
    from verifier.transparency.tiles import checkpoint_tree

    path = log / "checkpoint"
    raw = read_capped(path, MAX_NOTE_BYTES, str(path))
    checkpoint = parse_checkpoint(parse_note(raw, str(path)).text, str(path))
    if checkpoint.origin not in logs:
        raise fail(str(path), "LOG_UNKNOWN", f"is the checkpoint of {checkpoint.origin!r}, not of the log of --log-key")
    known = last_cosigned(state, checkpoint.origin, logs[checkpoint.origin])
    proof = []
    if known.size <= checkpoint.size:
        tree, _ = checkpoint_tree(log, checkpoint, str(path))
        proof = tree.consistency(known.size)
    old = min(known.size, checkpoint.size)  # an older checkpoint is refused as a rollback, not as a bad request
    line = add_checkpoint(state, cosigner, logs, request_text(old, proof, raw), str(path))
    return Cosigned(checkpoint, known.size, line, add_cosignature(path, raw, line))
