"""Merkle tree hashing and proofs, exactly as RFC 9162 section 2.1 defines them (SHA-256).

A leaf is hashed ``SHA-256(0x00 || entry)``, two nodes ``SHA-256(0x01 || left || right)``; the tree of n leaves
splits at the largest power of two below n (2.1.1). :class:`Tree` answers the root of any size, the inclusion
proof of a leaf in a tree of any size (2.1.3.1) and the consistency proof between two sizes (2.1.4.1), from its
leaf hashes; :func:`verify_inclusion` and :func:`verify_consistency` are the verifier's algorithms of 2.1.3.2 and
2.1.4.2, step by step. tests/test_transparency.py holds them to a plain recursive reading of the RFC for every
tree up to 300 leaves.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

__all__ = ["EMPTY_ROOT", "HASH_SIZE", "Tree", "leaf_hash", "node_hash", "verify_consistency", "verify_inclusion"]

HASH_SIZE = 32
#: the root of the empty tree: the hash of no bytes
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


class Tree:
    """The Merkle tree over a sequence of leaf hashes; any prefix of it is a tree of its own size.

    The hash of each complete, aligned subtree (2^h leaves from a multiple of 2^h) is kept once computed, so a
    root or a proof costs O(log n) hashes after the first.
    """

    def __init__(self, leaves: Sequence[bytes] = ()):
        self.leaves: list[bytes] = list(leaves)
        self._complete: dict[tuple[int, int], bytes] = {}

    def append(self, leaf: bytes) -> int:
        self.leaves.append(leaf)
        return len(self.leaves) - 1

    def hash(self, lo: int, hi: int) -> bytes:
        """MTH of the leaves ``lo`` to ``hi`` (excluded), a range of the tree as RFC 9162 splits it."""
        n = hi - lo
        if n == 0:
            return EMPTY_ROOT
        if n == 1:
            return self.leaves[lo]
        complete = n & (n - 1) == 0 and lo % n == 0
        if complete and (lo, n) in self._complete:
            return self._complete[(lo, n)]
        k = _split(n)
        found = node_hash(self.hash(lo, lo + k), self.hash(lo + k, hi))
        if complete:
            self._complete[(lo, n)] = found
        return found

    def root(self, size: int | None = None) -> bytes:
        size = len(self.leaves) if size is None else size
        self._check(size)
        return self.hash(0, size)

    def inclusion(self, index: int, size: int | None = None) -> list[bytes]:
        """PATH(index, D[size]): the audit path of leaf ``index`` in the tree of ``size`` leaves, leaf side first."""
        size = len(self.leaves) if size is None else size
        self._check(size)
        if not 0 <= index < size:
            raise ValueError(f"leaf {index} is not in a tree of {size}")
        path: list[bytes] = []
        lo, hi = 0, size
        while hi - lo > 1:  # PATH's recursion, top down; its hashes come out root side first
            k = _split(hi - lo)
            if index < lo + k:
                path.append(self.hash(lo + k, hi))
                hi = lo + k
            else:
                path.append(self.hash(lo, lo + k))
                lo += k
        return path[::-1]

    def consistency(self, old: int, size: int | None = None) -> list[bytes]:
        """PROOF(old, D[size]): the consistency proof from the tree of ``old`` leaves to the one of ``size``."""
        size = len(self.leaves) if size is None else size
        self._check(size)
        if not 0 <= old <= size:
            raise ValueError(f"a tree of {old} is not a prefix of one of {size}")
        if old in (0, size):
            return []
        proof: list[bytes] = []
        lo, hi, whole = 0, size, True  # SUBPROOF(m, D[lo:hi], whole), m = old - lo
        while True:
            m = old - lo
            if m == hi - lo:
                if not whole:
                    proof.append(self.hash(lo, hi))
                break
            k = _split(hi - lo)
            if m <= k:
                proof.append(self.hash(lo + k, hi))
                hi = lo + k
            else:
                proof.append(self.hash(lo, lo + k))
                lo, whole = lo + k, False
        return proof[::-1]

    def _check(self, size: int) -> None:
        if not 0 <= size <= len(self.leaves):
            raise ValueError(f"the tree holds {len(self.leaves)} leaves, not {size}")


def verify_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes], root: bytes) -> bool:
    """RFC 9162 2.1.3.2: whether ``path`` proves leaf hash ``leaf`` at ``index`` in the tree of ``size`` with
    ``root``."""
    if not 0 <= index < size or any(len(p) != HASH_SIZE for p in path):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def consistency_roots(old: int, size: int, path: Sequence[bytes]) -> tuple[bytes, bytes] | None:
    """The roots of the trees of ``old`` and ``size`` leaves that the consistency proof ``path`` gives (RFC 9162
    2.1.4.2), where ``path`` starts with the old tree's subtree even when ``old`` is a power of 2 (RFC 9162 leaves
    it out then: it is the old root); None when the path cannot be a proof for these sizes."""
    if not 0 < old < size or not path or any(len(p) != HASH_SIZE for p in path):
        return None
    fn, sn = old - 1, size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return (fr, sr) if sn == 0 else None


def verify_consistency(old: int, size: int, old_root: bytes, root: bytes, path: Sequence[bytes]) -> bool:
    """RFC 9162 2.1.4.2: whether ``path`` proves the tree of ``old`` leaves (``old_root``) a prefix of the one of
    ``size`` (``root``). Equal sizes need an empty path and equal roots; the empty tree is a prefix of any."""
    if not 0 <= old <= size or any(len(p) != HASH_SIZE for p in path):
        return False
    if old == size:
        return not path and old_root == root
    if old == 0:
        return not path and old_root == EMPTY_ROOT
    roots = consistency_roots(old, size, [old_root, *path] if old & (old - 1) == 0 else list(path))
    return roots == (old_root, root)
