"""The publisher asks witnesses to cosign its log's checkpoint (C2SP tlog-witness's add-checkpoint, over HTTP).

The request carries a consistency proof from the size the witness last cosigned; the publisher does not know that
size, so it starts from 0 and, on the witness's ``409 Conflict`` (which states its size), proves again from there.

The answer is one or more note signature lines (a witness may sign with several keys: Ed25519 beside ML-DSA-44,
as c2sp.org/tlog-cosignature recommends). A line is kept only when it is a cosignature that verifies under a
witness key the publisher named (``--witness-key``); lines of other keys are ignored, as the protocol asks, and an
answer with none that verifies is refused. A witness's answer can therefore never replace or remove the log's own
signature. The lines kept are added to the log's checkpoint file while that still holds the same checkpoint.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence

from verifier.errors import InputIOError, InvalidInputError
from verifier.releases.listed_files import ReleaseError, read_capped
from verifier.transparency.cosignature import verify_cosignature
from verifier.transparency.note import (COSIGNATURE_TYPE, MAX_NOTE_BYTES, MLDSA44_COSIGNATURE_TYPE,
                                        MLDSA44_PUBLIC_BYTES, key_id, parse_checkpoint, parse_note)
from verifier.transparency.tiles import checkpoint_tree
from verifier.transparency.witness import MAX_REQUEST_BYTES, add_cosignature, request_text

__all__ = ["ask_witness", "verified_lines"]

TIMEOUT = 30


def _post(url: str, body: bytes) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "text/plain"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 - the URL the publisher gave
            return answer.status, answer.headers.get("Content-Type", ""), answer.read(MAX_REQUEST_BYTES)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read(MAX_REQUEST_BYTES)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputIOError(f"cannot reach the witness ({reason})", path=url, reason="WITNESS_UNREACHABLE") from None


def _refused(url: str, why: str) -> InvalidInputError:
    return InvalidInputError(why, path=url, reason="WITNESS_REFUSED")


def verified_lines(text: str, said: str, keys: Sequence[tuple[str, bytes]], url: str) -> str:
    """The lines of the witness's answer ``said`` that are cosignatures of the checkpoint ``text`` verifying under
    one of ``keys`` (name, public key), in the answer's order; lines of other keys are left out. Refused
    (``WITNESS_REFUSED``) when the answer is not signature lines, when a named key's line does not verify, or when
    none is a named key's."""
    if not said.endswith("\n") or not said.strip():
        raise _refused(url, "the witness's answer is not note signature lines")
    try:
        note = parse_note((text + "\n" + said).encode("utf-8"), url)
    except ReleaseError:
        raise _refused(url, "the witness's answer is not note signature lines") from None
    lines = said[:-1].split("\n")
    good = []
    for line, signature in zip(lines, note.signatures):
        key = _named(signature, keys)
        if key is None:
            continue  # a key the publisher did not name: ignored, as the protocol asks
        try:  # each line on its own: a second line of a named key is verified too
            verify_cosignature(parse_note((text + "\n" + line + "\n").encode("utf-8"), url), *key, url)
        except ReleaseError as exc:
            raise _refused(url, f"the witness's cosignature by {key[0]} does not verify ({exc.reason})") from None
        good.append(line)
    if not good:
        raise _refused(url, "no line of the witness's answer is a cosignature by a witness key you named "
                       "(--witness-key)")
    return "".join(f"{line}\n" for line in good)


def _named(signature: tuple[str, bytes, bytes], keys: Sequence[tuple[str, bytes]]) -> tuple[str, bytes] | None:
    """The named witness key a signature line is by (its name and key ID), or None."""
    signer, kid, _ = signature
    for name, public in keys:
        kind = MLDSA44_COSIGNATURE_TYPE if len(public) == MLDSA44_PUBLIC_BYTES else COSIGNATURE_TYPE
        if signer == name and kid == key_id(name, kind, public):
            return name, public
    return None


def ask_witness(log: Path, url: str, keys: Sequence[tuple[str, bytes]]) -> tuple[str, bool]:
    """The cosignature lines of the witness at ``url`` (its base URL) on the log's checkpoint that verify under the
    witness keys ``keys``, and whether they were added to the checkpoint file."""
    path = log / "checkpoint"
    raw = read_capped(path, MAX_NOTE_BYTES, str(path))
    note = parse_note(raw, str(path))
    checkpoint = parse_checkpoint(note.text, str(path))
    tree, _ = checkpoint_tree(log, checkpoint, str(path))
    endpoint, old = url.rstrip("/") + "/add-checkpoint", 0
    for _ in range(2):
        proof = tree.consistency(old) if old <= checkpoint.size else []
        status, kind, body = _post(endpoint, request_text(old, proof, raw))
        said = body.decode("utf-8", "replace")
        if status == 409 and kind.startswith("text/x.tlog.size") and said.strip().isascii() and said.strip().isdigit() \
                and int(said) != old and int(said) <= checkpoint.size:
            old = int(said)
            continue
        if status != 200:
            raise _refused(url, f"the witness refused the checkpoint of size {checkpoint.size} ({status}: "
                           f"{said.strip().splitlines()[0] if said.strip() else 'no reason given'})")
        lines = verified_lines(note.text, said, keys, url)
        return lines, add_cosignature(path, raw, lines)
    raise _refused(url, "the witness answered 409 twice: it does not say a size this log can prove from")
