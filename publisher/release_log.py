"""The publisher's side of the release log (issue 39): make a log, and append a release to it.

``publisher log init DIR --origin NAME --key log.pem`` writes the empty log: a checkpoint of size 0 signed
with the log's key. ``publisher release ... --log DIR`` appends the verified release's leaf
(:func:`verifier.transparency.proof.leaf_identity`) and writes its proof beside the release.

Appending never leaves the log's checkpoint covering a file that is not there: the entry bundles and tiles of
the new tree are written first, each atomically, and the checkpoint last. A run stopped between them leaves
files past the checkpoint, which no reader fetches (a client reads only what a checkpoint it verified needs)
and the next append writes again. One append at a time holds the log's lock. A second leaf for a dataset id
and version already logged is refused (``RELEASE_EXISTS``).
"""

from __future__ import annotations

from pathlib import Path

from publisher.keys import SigningKey
from verifier.data.folder_lock import locked
from verifier.data.tables import write_atomic_bytes
from verifier.errors import InputIOError, InvalidInputError
from verifier.releases.listed_files import read_capped
from verifier.transparency.merkle import Tree, leaf_hash
from verifier.transparency.note import (ED25519_TYPE, MAX_NOTE_BYTES, checkpoint_text, parse_checkpoint, parse_note,
                                        signature_line, verify_signature)
from verifier.transparency.proof import leaf_identity, logged_versions, proof_text
from verifier.transparency.tiles import read_log, write_tiles

__all__ = ["append_leaf", "init_log", "refresh_proof", "refuse_logged"]

CHECKPOINT = "checkpoint"


def _signed_checkpoint(origin: str, tree: Tree, key: SigningKey) -> bytes:
    text = checkpoint_text(origin, len(tree.leaves), tree.root())
    return (text + "\n" + signature_line(origin, ED25519_TYPE, key.public_raw, key.sign(text.encode()))).encode()


def init_log(directory: str | Path, origin: str, key: SigningKey) -> Path:
    """A new, empty log in ``directory`` (which must not exist, or be empty) named ``origin``."""
    root = Path(directory)
    if not origin or any(c.isspace() or c == "+" for c in origin) or len(origin) > 255:
        raise InvalidInputError("--origin names the log without spaces or '+' (a schema-less URL such as "
                                "stats.example/releases), in at most 255 characters", reason="PARAMETER_INVALID")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InputIOError("already exists and is not an empty folder; a log is never made over another",
                           path=str(root), reason="OUTPUT_EXISTS")
    root.mkdir(parents=True, exist_ok=True)
    write_atomic_bytes(root / CHECKPOINT, _signed_checkpoint(origin, Tree(), key))
    return root


def _current(root: Path, key: SigningKey) -> tuple[str, Tree, list[bytes]]:
    """The log's origin, tree and entries, its checkpoint verified with the log's own key."""
    shown = str(root / CHECKPOINT)
    note = parse_note(read_capped(root / CHECKPOINT, MAX_NOTE_BYTES, shown), shown)
    checkpoint = parse_checkpoint(note.text, shown)
    if verify_signature(note, checkpoint.origin, key.public_raw, shown) is None:
        raise InvalidInputError(f"the checkpoint is not signed by this key as {checkpoint.origin}: is it the log's "
                                "key?", path=shown, reason="KEY_MISMATCH")
    tree, entries = read_log(root, checkpoint.size)
    if tree.root() != checkpoint.root:
        raise InvalidInputError("the tiles do not hash to the checkpoint's root", path=shown,
                                reason="LOG_INCONSISTENT")
    return checkpoint.origin, tree, entries


def refuse_logged(directory: str | Path, dataset_id: str, version: int, key: SigningKey) -> None:
    """``RELEASE_EXISTS`` before any work when the log already holds this dataset id and version; ``LOG_MISSING``
    when ``directory`` is no log, and ``KEY_MISMATCH`` when ``key`` does not sign it."""
    root = Path(directory)
    if not (root / CHECKPOINT).is_file():
        raise InputIOError("is not a release log (no checkpoint): make one with publisher log init", path=str(root),
                           reason="LOG_MISSING")
    origin, _, entries = _current(root, key)
    if version in logged_versions(entries, origin, dataset_id):
        raise InvalidInputError(f"dataset {dataset_id!r} version {version} is already in the log; a new release "
                                "takes a new --release-version", path=str(root), reason="RELEASE_EXISTS")


def append_leaf(directory: str | Path, release, key: SigningKey, *, again: bool = False) -> tuple[int, int, bytes]:
    """Append the leaf of the verified ``release`` to the log in ``directory``; its index, the log's new size and
    the release's proof file. With ``again``, a release the log already holds (its very leaf: the same manifest
    and key) is not appended twice: its index and a proof against the current checkpoint are returned (``publisher
    log append`` after an append whose proof was never written)."""
    root = Path(directory)
    if not (root / CHECKPOINT).is_file():
        raise InputIOError("is not a release log (no checkpoint): make one with publisher log init", path=str(root),
                           reason="LOG_MISSING")
    with locked(root):
        origin, tree, entries = _current(root, key)
        leaf = leaf_identity(origin, release)
        if again and leaf in entries:
            index = entries.index(leaf)
            current = read_capped(root / CHECKPOINT, MAX_NOTE_BYTES, str(root / CHECKPOINT))
            return index, len(tree.leaves), proof_text(index, tree.inclusion(index), current)
        if release.release_version in logged_versions(entries, origin, release.dataset_id):
            raise InvalidInputError(f"dataset {release.dataset_id!r} version {release.release_version} is already in "
                                    "the log; a new release takes a new --release-version", path=str(root),
                                    reason="RELEASE_EXISTS")
        index = tree.append(leaf_hash(leaf))
        entries.append(leaf)
        write_tiles(root, tree, entries)
        checkpoint = _signed_checkpoint(origin, tree, key)
        write_atomic_bytes(root / CHECKPOINT, checkpoint)  # last: it now covers every file written above
    return index, len(tree.leaves), proof_text(index, tree.inclusion(index), checkpoint)



def refresh_proof(directory: str | Path, proof_path: str | Path) -> tuple[int, int, int, bytes]:
    """The proof file at ``proof_path`` made again against the log's current checkpoint, with the cosignatures
    witnesses have added to it: its index, the log's size, the checkpoint's signature count, and the new file.
    The old proof's tree must be a prefix of the log's (``LOG_INCONSISTENT``); nothing is trusted here that the
    subject's verifier does not check again."""
    from verifier.transparency.merkle import leaf_hash, verify_inclusion
    from verifier.transparency.proof import parse_proof

    root, shown = Path(directory), str(proof_path)
    index, path, old_note = parse_proof(read_capped(Path(proof_path), MAX_NOTE_BYTES, shown), shown)
    old = parse_checkpoint(parse_note(old_note, shown).text, shown)
    with locked(root):
        raw = read_capped(root / CHECKPOINT, MAX_NOTE_BYTES, str(root / CHECKPOINT))
        note = parse_note(raw, str(root / CHECKPOINT))
        checkpoint = parse_checkpoint(note.text, str(root / CHECKPOINT))
        tree, entries = read_log(root, checkpoint.size)
    if checkpoint.origin != old.origin or tree.root() != checkpoint.root or old.size > checkpoint.size \
            or tree.root(old.size) != old.root:
        raise InvalidInputError(f"the proof's tree of size {old.size} is not a prefix of this log's tree of size "
                                f"{checkpoint.size}", path=shown, reason="LOG_INCONSISTENT")
    if index >= old.size or not verify_inclusion(index, old.size, leaf_hash(entries[index]), path, old.root):
        raise InvalidInputError(f"does not prove entry {index} of this log", path=shown, reason="LOG_PROOF_INVALID")
    return index, checkpoint.size, len(note.signatures), proof_text(index, tree.inclusion(index), raw)
