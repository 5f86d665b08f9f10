"""Two checkpoints of one log compared, and the self-contained evidence that they show two histories.

Two checkpoints the log signed are one history when the smaller tree is a prefix of the larger. They are not when
they have the same size and different roots, or when hashes that give the larger tree's root give, for its first
leaves, a root other than the smaller checkpoint's. Both cases are evidence anyone can check with the log's key
alone (given that SHA-256 has no known collision): the two signed notes, and for different sizes the hashes of an
RFC 9162 consistency proof taken from the larger tree, its first hash always the prefix's subtree. The evidence is
a JSON file::

    {"evidence": "permuted-privacy log fork v1", "origin": "...", "checkpoints": ["<note>", "<note>"],
     "hashes": ["<base64>", ...]}
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.releases.listed_files import fail, read_capped
from verifier.transparency.merkle import HASH_SIZE, Tree, consistency_roots
from verifier.transparency.note import MAX_NOTE_BYTES, Checkpoint, signed_checkpoint
from verifier.transparency.policy import Policy
from verifier.transparency.tiles import checkpoint_tree

__all__ = ["EVIDENCE", "Comparison", "check_evidence", "compare"]

EVIDENCE = "permuted-privacy log fork v1"


@dataclass(frozen=True)
class Comparison:
    """Whether two checkpoints are one history, and the evidence (a JSON text) when they are not."""

    smaller: Checkpoint
    larger: Checkpoint
    evidence: str | None = None


def _prefix_path(tree: Tree, old: int, size: int) -> list[bytes]:
    """A consistency proof from ``old`` to ``size`` leaves whose first hash is always the prefix's subtree."""
    path = tree.consistency(old, size)
    return [tree.hash(0, old), *path] if old & (old - 1) == 0 else path


def _evidence(origin: str, notes: list[bytes], hashes: list[bytes]) -> str:
    return json.dumps({"evidence": EVIDENCE, "origin": origin, "checkpoints": [n.decode("utf-8") for n in notes],
                       "hashes": [base64.b64encode(h).decode() for h in hashes]}, indent=1)


def compare(a: bytes, b: bytes, policy: Policy, where: tuple[str, str], log: str | None = None) -> Comparison:
    """Compare two checkpoints the log signed (``where`` names their files); with different sizes, the log's
    files ``log`` give the larger tree's hashes."""
    first, second = (signed_checkpoint(raw, policy.origin, policy.log_public, at) for raw, at in zip((a, b), where))
    (small, small_raw), (large, large_raw) = sorted([(first, a), (second, b)], key=lambda pair: pair[0].size)
    if small.size == large.size:
        fork = small.root != large.root
        return Comparison(small, large, _evidence(policy.origin, [small_raw, large_raw], []) if fork else None)
    if log is None:
        raise fail(where[1], "LOG_INCOMPARABLE", f"checkpoints of sizes {small.size} and {large.size} are compared "
                   "on the log's hashes: give --log with the log's files")
    newest = Path(log) / "checkpoint"
    newest_checkpoint = signed_checkpoint(read_capped(newest, MAX_NOTE_BYTES, str(newest)), policy.origin,
                                          policy.log_public, str(newest))
    tree, _ = checkpoint_tree(Path(log), newest_checkpoint, str(newest))
    if large.size > len(tree.leaves) or tree.root(large.size) != large.root:
        raise fail(log, "LOG_INCOMPARABLE", f"the log's files do not hold the tree of the checkpoint of size "
                   f"{large.size}: they show yet another history, or an older one")
    if tree.root(small.size) == small.root:
        return Comparison(small, large)
    hashes = _prefix_path(tree, small.size, large.size)
    return Comparison(small, large, _evidence(policy.origin, [small_raw, large_raw], hashes))


def check_evidence(raw: bytes, policy: Policy, where: str) -> tuple[Checkpoint, Checkpoint]:
    """The two checkpoints of fork evidence, once it proves that the log signed two histories; ``LOG_MALFORMED``
    when it is not evidence, ``LOG_EVIDENCE_INVALID`` when it proves nothing."""
    try:  # strictly, as every signed input: no repeated key, no NaN, no other key
        data = loads_strict(raw, interoperable=True)
        ok = isinstance(data, dict) and set(data) == {"evidence", "origin", "checkpoints", "hashes"} \
            and isinstance(data["checkpoints"], list) and isinstance(data["hashes"], list) \
            and all(isinstance(v, str) for v in [*data["checkpoints"], *data["hashes"]])
        notes = [n.encode("utf-8") for n in data["checkpoints"]] if ok else []
        hashes = [base64.b64decode(h, validate=True) for h in data["hashes"]] if ok else []
        ok = ok and data["evidence"] == EVIDENCE and len(notes) == 2 and all(len(h) == HASH_SIZE for h in hashes)
    except (StrictJSONError, ValueError):
        ok = False
    if not ok:
        raise fail(where, "LOG_MALFORMED", f"is not {EVIDENCE} evidence (docs/release-format.md, section 7)")
    small, large = sorted((signed_checkpoint(n, policy.origin, policy.log_public, where) for n in notes),
                          key=lambda c: c.size)
    if small.size == large.size:
        proven = small.root != large.root
    else:
        roots = consistency_roots(small.size, large.size, hashes)
        proven = roots is not None and roots[1] == large.root and roots[0] != small.root
    if not proven:
        raise fail(where, "LOG_EVIDENCE_INVALID", "the checkpoints and hashes do not prove two histories")
    return small, large
