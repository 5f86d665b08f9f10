"""The log as static files (c2sp.org/tlog-tiles): a checkpoint, tiles of hashes and bundles of entries.

Any static web server hosts a log written here, and any C2SP client reads it:

- ``checkpoint``: the signed note of the log's newest tree (:mod:`~verifier.transparency.note`);
- ``tile/<L>/<N>[.p/<W>]``: 256 hashes (8,192 bytes) of level L, a partial tile of W < 256 at the right edge;
  at level 0 the leaf hashes, above each hash the root of a full tile below. ``<N>`` is written in 3-digit
  groups, all but the last led by ``x`` (1234067 is ``x001/x234/067``);
- ``tile/entries/<N>[.p/<W>]``: the entries themselves, each led by its length as a big-endian uint16.

:func:`read_log` reads what a checkpoint of a given size covers and holds every file to it: a tile of the wrong
width, a partial tile served for a full one, an upper tile or an entry its level below contradicts, are refused
(``LOG_MALFORMED``, ``LOG_INCONSISTENT``). Files past the checkpoint (a writer stopped before its checkpoint)
are never read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from verifier.releases.listed_files import ReleaseError, fail, read_capped
from verifier.transparency.merkle import HASH_SIZE, Tree, leaf_hash

__all__ = ["TILE_WIDTH", "checkpoint_tree", "entries_path", "log_tiles", "read_log", "tile_hashes", "tile_path",
           "write_tiles"]

TILE_WIDTH = 256
#: the longest entry an entry bundle can hold (its length is a uint16)
MAX_ENTRY = 0xFFFF


def _index(n: int) -> str:
    groups = []
    while True:
        groups.append(f"{n % 1000:03d}")
        n //= 1000
        if n == 0:
            break
    return "/".join([f"x{g}" for g in groups[:0:-1]] + [groups[0]])


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]``."""
    return f"tile/{level}/{_index(index)}" + ("" if width == TILE_WIDTH else f".p/{width}")


def entries_path(index: int, width: int = TILE_WIDTH) -> str:
    """``tile/entries/<N>[.p/<W>]``."""
    return f"tile/entries/{_index(index)}" + ("" if width == TILE_WIDTH else f".p/{width}")


def log_tiles(size: int) -> Iterator[tuple[int, int, int]]:
    """Every tile a tree of ``size`` leaves is served as: (level, index, width), full tiles then the partial one
    of each level, one at a time: a hostile checkpoint's size (2^40 leaves: 2^32 tiles) costs nothing until its
    tiles are read, and the first one missing ends the reading."""
    level, span = 0, 1
    while size // span:
        hashes = size // span
        for n in range(hashes // TILE_WIDTH):
            yield level, n, TILE_WIDTH
        if hashes % TILE_WIDTH:
            yield level, hashes // TILE_WIDTH, hashes % TILE_WIDTH
        level, span = level + 1, span * TILE_WIDTH


def tile_hashes(tree: Tree, level: int, index: int, width: int) -> bytes:
    """The bytes of a tile: the Merkle tree hashes of its ``width`` subtrees of 256^level leaves each."""
    span = TILE_WIDTH ** level
    start = index * TILE_WIDTH * span
    return b"".join(tree.hash(start + i * span, start + (i + 1) * span) for i in range(width))


def _capped(path: Path, limit: int) -> bytes:
    """A file of the log, at most ``limit`` bytes; missing or too long, the log is malformed."""
    try:
        return read_capped(path, limit, str(path))
    except ReleaseError as exc:
        if exc.reason not in ("FILE_MISSING", "SIZE_MISMATCH"):
            raise
        said = "is missing" if exc.reason == "FILE_MISSING" else f"holds more than the {limit} bytes"
        raise fail(str(path), "LOG_MALFORMED", f"{said}: the checkpoint's tree needs it, whole") from None


def _read(root: Path, relative: str, size: int) -> bytes:
    shown = str(root / relative)
    content = _capped(root / relative, size)
    if len(content) != size:
        raise fail(shown, "LOG_MALFORMED", f"holds {len(content)}{'+' if len(content) > size else ''} bytes; the "
                   f"checkpoint's tree needs {size}")
    return content


def _entries(raw: bytes, width: int, shown: str) -> list[bytes]:
    out, at = [], 0
    while at < len(raw):
        if at + 2 > len(raw):
            raise fail(shown, "LOG_MALFORMED", "an entry's length is cut short")
        n = int.from_bytes(raw[at:at + 2], "big")
        if at + 2 + n > len(raw):
            raise fail(shown, "LOG_MALFORMED", "an entry is cut short")
        out.append(raw[at + 2:at + 2 + n])
        at += 2 + n
    if len(out) != width:
        raise fail(shown, "LOG_MALFORMED", f"holds {len(out)} entries, not the {width} its path says")
    return out


def read_log(root: Path, size: int) -> tuple[Tree, list[bytes]]:
    """The tree of ``size`` leaves and its entries, read from the log folder ``root`` and held to each other: every
    entry hashes to its leaf, every upper tile's hash is the root of the full tile below."""
    tree, entries = Tree(), []
    for level, index, width in log_tiles(size):
        if level:
            break  # the level 0 tiles come first
        raw = _read(root, tile_path(0, index, width), width * HASH_SIZE)
        bundle_path = entries_path(index, width)
        bundle = _capped(root / bundle_path, width * (MAX_ENTRY + 2))
        found = _entries(bundle, width, str(root / bundle_path))
        for i, entry in enumerate(found):
            if leaf_hash(entry) != raw[i * HASH_SIZE:(i + 1) * HASH_SIZE]:
                raise fail(str(root / bundle_path), "LOG_INCONSISTENT", f"entry {index * TILE_WIDTH + i} does not "
                           "hash to its leaf in the level 0 tile")
            tree.append(leaf_hash(entry))
        entries += found
    for level, index, width in log_tiles(size):
        if level and _read(root, tile_path(level, index, width), width * HASH_SIZE) != tile_hashes(
                tree, level, index, width):
            raise fail(str(root / tile_path(level, index, width)), "LOG_INCONSISTENT",
                       "its hashes are not the roots of the full tiles below it")
    return tree, entries


def checkpoint_tree(root: Path, checkpoint, where: str) -> tuple[Tree, list[bytes]]:
    """The tree of ``checkpoint`` (a :class:`~verifier.transparency.note.Checkpoint`) and its entries, read from the
    log folder ``root`` by :func:`read_log` and held to the checkpoint's root (``LOG_INCONSISTENT`` otherwise)."""
    tree, entries = read_log(root, checkpoint.size)
    if tree.root() != checkpoint.root:
        raise fail(where, "LOG_INCONSISTENT", "the log's tiles do not hash to its checkpoint")
    return tree, entries


def write_tiles(root: Path, tree: Tree, entries: list[bytes]) -> None:
    """Write every entry bundle and tile of the tree of ``len(entries)`` leaves into ``root``, each atomically; a
    file already there with the same bytes is left (full tiles never change), one left past a checkpoint by a
    stopped writer is written again. The caller writes the checkpoint after, so that it covers them."""
    from verifier.data.tables import write_atomic_bytes

    def put(relative: str, content: bytes) -> None:
        path = root / relative
        if path.is_file() and not path.is_symlink() and path.read_bytes() == content:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_bytes(path, content)

    for level, n, width in log_tiles(len(entries)):
        if level == 0:
            put(entries_path(n, width), b"".join(len(e).to_bytes(2, "big") + e
                                                 for e in entries[n * TILE_WIDTH:n * TILE_WIDTH + width]))
        put(tile_path(level, n, width), tile_hashes(tree, level, n, width))
