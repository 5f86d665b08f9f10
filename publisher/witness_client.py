"""The publisher asks witnesses to cosign its log's checkpoint (C2SP tlog-witness's add-checkpoint, over HTTP).

The request carries a consistency proof from the size the witness last cosigned; the publisher does not know that
size, so it starts from 0 and, on the witness's ``409 Conflict`` (which states its size), proves again from there.
The witness's cosignature line is added to the log's checkpoint file while that still holds the same checkpoint.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from verifier.errors import InputIOError, InvalidInputError
from verifier.releases.listed_files import read_capped
from verifier.transparency.note import MAX_NOTE_BYTES, parse_checkpoint, parse_note
from verifier.transparency.tiles import checkpoint_tree
from verifier.transparency.witness import MAX_REQUEST_BYTES, add_cosignature, request_text

__all__ = ["ask_witness"]

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


def ask_witness(log: Path, url: str) -> tuple[str, bool]:
    """The cosignature line of the witness at ``url`` (its base URL) on the log's checkpoint, and whether it was
    added to the checkpoint file."""
    path = log / "checkpoint"
    raw = read_capped(path, MAX_NOTE_BYTES, str(path))
    checkpoint = parse_checkpoint(parse_note(raw, str(path)).text, str(path))
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
            raise InvalidInputError(f"the witness refused the checkpoint of size {checkpoint.size} ({status}: "
                                    f"{said.strip().splitlines()[0] if said.strip() else 'no reason given'})",
                                    path=url, reason="WITNESS_REFUSED")
        if said.count("\n") != 1 or not said.endswith("\n"):
            break
        return said, add_cosignature(path, raw, said)
    raise InvalidInputError("the witness's answer is not one cosignature line", path=url, reason="WITNESS_REFUSED")
