"""What a subject's client remembers of each log, and the log's files checked against it (issue 39, item 4).

As Go's checksum database client does, the verifier keeps the newest checkpoint it has verified of each log (by
origin and key, so that a look-alike log of the same origin never spoils the genuine log's memory) in her state
folder: ``$PERMUTED_PRIVACY_STATE``, else ``$XDG_STATE_HOME/permuted-privacy``, else
``~/.local/state/permuted-privacy``. A log that shows her two histories is caught:

- a checkpoint of the size she saw before with another root: ``LOG_EQUIVOCATION``;
- a log whose newest checkpoint is older than one she saw: ``LOG_ROLLBACK``;
- a tree that does not extend the one she saw (the roots its leaves give differ): ``LOG_INCONSISTENT``.

With the log's files (``--log DIR``) every comparison is made on the leaves themselves: the release's proof, the
checkpoint she remembers and the log's newest checkpoint must all be prefixes of one tree, and the release's
entry must be the only one of its dataset id and version. Without them, a checkpoint of another size than the
one she remembers cannot be compared, and the verifier says so rather than remember it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from verifier.data.tables import write_atomic_bytes
from verifier.releases.listed_files import ReleaseError, fail, read_capped
from verifier.transparency.merkle import Tree
from verifier.transparency.note import MAX_NOTE_BYTES, Checkpoint, signed_checkpoint
from verifier.transparency.proof import logged_versions
from verifier.transparency.tiles import checkpoint_tree

__all__ = ["LogView", "check_history", "state_folder"]


def state_folder() -> Path:
    """Where the verifier remembers the checkpoints she has seen."""
    if os.environ.get("PERMUTED_PRIVACY_STATE"):
        return Path(os.environ["PERMUTED_PRIVACY_STATE"])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "permuted-privacy"


def _remembered_path(state: Path, origin: str, public_raw: bytes) -> Path:
    """Where she remembers the newest checkpoint of the log of ``origin`` and key ``public_raw``: a look-alike log
    (its origin, another key) has a memory of its own, and never spoils the genuine log's (issue 59, item 4)."""
    name = hashlib.sha256(origin.encode() + b"\n" + public_raw).hexdigest()[:32]
    return state / "logs" / f"{name}.checkpoint"


def _origin_only_path(state: Path, origin: str) -> Path:
    """Where a verifier before issue 59 remembered a log's checkpoint: by its origin alone."""
    return state / "logs" / f"{hashlib.sha256(origin.encode()).hexdigest()[:32]}.checkpoint"


def _remembered(state: Path, origin: str, public_raw: bytes, view: LogView) -> tuple[Path, Checkpoint | None]:
    """Her memory of this log (origin and key), and the checkpoint in it. A memory kept by the origin alone is
    read when this log's key signed it; one another key signed is set aside, and she is told."""
    kept = _remembered_path(state, origin, public_raw)
    if kept.is_file():
        return kept, signed_checkpoint(read_capped(kept, MAX_NOTE_BYTES, str(kept)), origin, public_raw, str(kept))
    legacy = _origin_only_path(state, origin)
    if not legacy.is_file():
        return kept, None
    try:
        return kept, signed_checkpoint(read_capped(legacy, MAX_NOTE_BYTES, str(legacy)), origin, public_raw,
                                       str(legacy))
    except ReleaseError as exc:
        if exc.reason != "LOG_SIGNATURE":
            raise
        view.lines.append(f"a checkpoint remembered for {origin} in {legacy} was signed by another key (another log "
                          "with the same origin): it is not this log's, and it is set aside, not compared")
        return kept, None


@dataclass
class LogView:
    """What the checks found: lines for people, and the log's other entries of the release's dataset."""

    lines: list[str] = field(default_factory=list)
    newer_versions: list[int] = field(default_factory=list)


def _same_history(tree: Tree, checkpoint: Checkpoint, newest: Checkpoint, what: str, where: str) -> None:
    """``checkpoint`` is a prefix of the log's tree: older than its newest, and with the root its leaves give."""
    if checkpoint.size > newest.size:
        raise fail(where, "LOG_ROLLBACK", f"the log's newest checkpoint (size {newest.size}) is older than {what} "
                   f"(size {checkpoint.size}): the log was rolled back, or shows you an old copy")
    if tree.root(checkpoint.size) != checkpoint.root:
        reason = "LOG_EQUIVOCATION" if checkpoint.size == newest.size else "LOG_INCONSISTENT"
        raise fail(where, reason, f"{what} (size {checkpoint.size}) is not a prefix of the log's tree: the log has "
                   "signed two histories; keep both checkpoints, they prove it")


def _without_log(proof: Checkpoint, seen: list[tuple[str, Checkpoint]], before: Checkpoint | None,
                 view: LogView) -> bool:
    """Compare the proof's checkpoint with the ones she saw, without the log's hashes: equal sizes must have equal
    roots (``LOG_EQUIVOCATION``); other sizes are said to be not compared. Whether all were compared."""
    compared = True
    for where, checkpoint in seen:
        what = "you saw before" if checkpoint is before else f"in {where}"
        if checkpoint.size == proof.size and checkpoint.root != proof.root:
            raise fail(where, "LOG_EQUIVOCATION", f"the log signed two trees of size {proof.size} with different "
                       f"roots: the checkpoint {what} and the release's proof's; keep both, they prove it")
        if checkpoint.size != proof.size:
            compared = False
            view.lines.append(f"not compared with the checkpoint of size {checkpoint.size} {what}: give --log "
                              "with the log's files to check that both are one history")
    return compared


def check_history(release, proof_checkpoint: Checkpoint, proof_note: bytes, origin: str, public_raw: bytes, *,
                  log: str | None = None, state: Path | None = None,
                  seen: Sequence[tuple[str, bytes]] = ()) -> LogView:
    """Hold the release's proof checkpoint, the checkpoint she saw before, the checkpoints ``seen`` (file, signed
    note) and (with ``log``) the log's files to one history; remember the newest checkpoint verified. Raises
    ``LOG_EQUIVOCATION``, ``LOG_ROLLBACK``, ``LOG_INCONSISTENT`` or ``RELEASE_EXISTS`` (two leaves of one dataset
    id and version)."""
    state = state or state_folder()
    view = LogView()
    kept, before = _remembered(state, origin, public_raw, view)
    given = [(where, signed_checkpoint(raw, origin, public_raw, where)) for where, raw in seen]
    if before is not None:
        given.insert(0, (str(kept), before))
    if log is None:
        newest, newest_raw = proof_checkpoint, proof_note
        if not _without_log(proof_checkpoint, given, before, view):
            return view
    else:
        root = Path(log)
        newest_raw = read_capped(root / "checkpoint", MAX_NOTE_BYTES, str(root / "checkpoint"))
        newest = signed_checkpoint(newest_raw, origin, public_raw, str(root / "checkpoint"))
        tree, entries = checkpoint_tree(root, newest, str(root / "checkpoint"))
        _same_history(tree, proof_checkpoint, newest, "the release's proof", str(root / "checkpoint"))
        for where, checkpoint in given:
            what = "the checkpoint you saw before" if checkpoint is before else f"the checkpoint in {where}"
            _same_history(tree, checkpoint, newest, what, where)
        view.newer_versions = _only_entry(release, entries, origin, str(root))
        view.lines.append(f"the only entry of its dataset and version in the log's {newest.size} entries"
                          + (f"; newer versions logged: {', '.join(map(str, view.newer_versions))}"
                             if view.newer_versions else ""))
    kept.parent.mkdir(parents=True, exist_ok=True)
    if before is None or newest.size > before.size:
        write_atomic_bytes(kept, newest_raw)
    view.lines.append(f"one history with every checkpoint of this log you have seen; remembered: size "
                      f"{max(newest.size, before.size if before else 0)} (in {state})")
    return view


def _only_entry(release, entries: list[bytes], origin: str, where: str) -> list[int]:
    """The newer versions the log holds of the release's dataset, once its entry is the only one of its version."""
    versions = logged_versions(entries, origin, release.dataset_id)
    if versions.count(release.release_version) > 1:
        raise fail(where, "RELEASE_EXISTS", f"the log holds {versions.count(release.release_version)} entries "
                   f"for dataset {release.dataset_id!r} version {release.release_version}: it shows different "
                   "releases under one name")
    return sorted(v for v in versions if v > release.release_version)
