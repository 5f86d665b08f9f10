"""The release log's Merkle tree (issue 39): RFC 9162 section 2.1, held to a plain recursive reading of the RFC."""

from __future__ import annotations

import base64
import functools
import hashlib

import pytest

from verifier.transparency.merkle import (EMPTY_ROOT, Tree, leaf_hash, node_hash, verify_consistency,
                                          verify_inclusion)

LIMIT = 300


ENTRIES = [f"release {i}".encode() for i in range(LIMIT)]


@functools.lru_cache(maxsize=None)
def _mth(lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) as RFC 9162 2.1.1 writes it, on the entries themselves (remembered: the proofs ask again)."""
    if hi == lo:
        return hashlib.sha256(b"").digest()
    if hi - lo == 1:
        return hashlib.sha256(b"\x00" + ENTRIES[lo]).digest()
    k = 1 << ((hi - lo - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + _mth(lo, lo + k) + _mth(lo + k, hi)).digest()


def _path(m: int, lo: int, hi: int) -> list[bytes]:
    """PATH(m, D[lo:hi]), 2.1.3.1."""
    if hi - lo == 1:
        return []
    k = 1 << ((hi - lo - 1).bit_length() - 1)
    return _path(m, lo, lo + k) + [_mth(lo + k, hi)] if m < k else _path(m - k, lo + k, hi) + [_mth(lo, lo + k)]


def _subproof(m: int, lo: int, hi: int, b: bool) -> list[bytes]:
    """SUBPROOF(m, D[lo:hi], b), 2.1.4.1."""
    if m == hi - lo:
        return [] if b else [_mth(lo, hi)]
    k = 1 << ((hi - lo - 1).bit_length() - 1)
    return (_subproof(m, lo, lo + k, b) + [_mth(lo + k, hi)] if m <= k
            else _subproof(m - k, lo + k, hi, False) + [_mth(lo, lo + k)])


TREE = Tree([leaf_hash(e) for e in ENTRIES])


def test_hashes_are_rfc_9162_s():
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert node_hash(b"a" * 32, b"b" * 32) == hashlib.sha256(b"\x01" + b"a" * 32 + b"b" * 32).digest()
    assert Tree().root() == EMPTY_ROOT


@pytest.mark.parametrize("block", range(6))
def test_every_root_and_inclusion_proof_up_to_300_leaves_is_the_rfc_s(block):
    """For every size n up to 300 (in six blocks) and every leaf i < n: the root, the path, and the verifier accepts
    it; a flipped bit, a hash more or a hash less is refused."""
    for n in range(1 + block * LIMIT // 6, 1 + (block + 1) * LIMIT // 6):
        root = _mth(0, n)
        assert TREE.root(n) == root
        for i in range(n):
            path = TREE.inclusion(i, n)
            assert path == _path(i, 0, n)
            leaf = TREE.leaves[i]
            assert verify_inclusion(i, n, leaf, path, root)
            if path:
                flipped = [bytes([path[0][0] ^ 1]) + path[0][1:], *path[1:]]
                assert not verify_inclusion(i, n, leaf, flipped, root)
                assert not verify_inclusion(i, n, leaf, path[:-1], root)
            assert not verify_inclusion(i, n, leaf, [*path, root], root)
            assert not verify_inclusion(i, n, TREE.leaves[(i + 1) % LIMIT], path, root)  # another leaf
        assert not verify_inclusion(n, n, TREE.leaves[0], [], root)


@pytest.mark.parametrize("block", range(6))
def test_every_consistency_proof_up_to_300_leaves_is_the_rfc_s(block):
    """For every size n up to 300 and every older size m <= n: the proof is SUBPROOF(m, D[n], true) and verifies;
    altered, it does not; another old root does not."""
    for n in range(1 + block * LIMIT // 6, 1 + (block + 1) * LIMIT // 6):
        root = TREE.root(n)
        for m in range(0, n + 1):
            proof = TREE.consistency(m, n)
            assert proof == ([] if m in (0, n) else _subproof(m, 0, n, True))
            old = TREE.root(m)
            assert verify_consistency(m, n, old, root, proof)
            if proof:
                flipped = [*proof[:-1], bytes([proof[-1][0] ^ 1]) + proof[-1][1:]]
                assert not verify_consistency(m, n, old, root, flipped)
                assert not verify_consistency(m, n, old, root, proof[:-1])
                assert not verify_consistency(m, n, old, root, [*proof, root])
            if 0 < m < n:
                assert not verify_consistency(m, n, TREE.root(m - 1) if m > 1 else root, root, proof)
        assert not verify_consistency(n + 1, n, root, root, [])


# ----------------------------------------------------------------------------- signed notes and checkpoints

GO_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_NOTE = ("If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n"
           "\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n")


def test_go_s_signed_note_example_verifies_and_a_changed_one_does_not():
    """The example of Go's sumdb/note (the C2SP signed-note format's origin): its key ID and signature."""
    from verifier.releases.listed_files import ReleaseError
    from verifier.transparency.note import parse_note, parse_vkey, verify_signature, vkey

    name, kind, public = parse_vkey(GO_VKEY, "vkey")
    assert (name, kind) == ("PeterNeumann", 1) and vkey(name, kind, public) == GO_VKEY
    note = parse_note(GO_NOTE.encode(), "note")
    assert note.text.startswith("If you think") and verify_signature(note, name, public, "note") is not None
    assert verify_signature(note, "SomeoneElse", public, "note") is None  # an unknown key is ignored
    changed = parse_note(GO_NOTE.replace("answer", "ANSWER").encode(), "note")
    with pytest.raises(ReleaseError) as info:
        verify_signature(changed, name, public, "note")
    assert info.value.reason == "LOG_SIGNATURE"
    for bad in (GO_VKEY.replace("c74f20a3", "c74f20a4"), "PeterNeumann+c74f20a3", GO_VKEY[:-4]):
        with pytest.raises(ReleaseError):
            parse_vkey(bad, "vkey")


@pytest.mark.parametrize("size, ok", [("0", True), ("7", True), (str(2**63 - 1), True), ("007", False),
                                      ("-1", False), (str(2**63), False), ("1e3", False), ("", False)])
def test_a_checkpoint_size_is_a_decimal_without_a_leading_zero_up_to_2_63_minus_1(size, ok):
    from verifier.releases.listed_files import ReleaseError
    from verifier.transparency.note import parse_checkpoint

    text = f"stats.example/releases\n{size}\n{base64.b64encode(EMPTY_ROOT).decode()}\n"
    if ok:
        assert parse_checkpoint(text, "checkpoint").size == int(size)
    else:
        with pytest.raises(ReleaseError) as info:
            parse_checkpoint(text, "checkpoint")
        assert info.value.reason == "LOG_MALFORMED"


def test_tile_paths_and_the_tiles_of_a_70000_leaf_tree_are_the_c2sp_examples():
    from verifier.transparency.tiles import entries_path, log_tiles, tile_path

    assert tile_path(4, 1234067, 8) == "tile/4/x001/x234/067.p/8" and tile_path(0, 0) == "tile/0/000"
    assert entries_path(1234067) == "tile/entries/x001/x234/067"
    tiles = log_tiles(70_000)
    assert sum(1 for level, _, width in tiles if level == 0 and width == 256) == 273
    assert [t for t in tiles if t[2] != 256] == [(0, 273, 112), (1, 1, 17), (2, 0, 1)]
    assert [t for t in tiles if t[0] == 1 and t[2] == 256] == [(1, 0, 256)]
    assert log_tiles(256) == [(0, 0, 256), (1, 0, 1)] and log_tiles(0) == []
