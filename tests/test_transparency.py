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
    tiles = list(log_tiles(70_000))
    assert sum(1 for level, _, width in tiles if level == 0 and width == 256) == 273
    assert [t for t in tiles if t[2] != 256] == [(0, 273, 112), (1, 1, 17), (2, 0, 1)]
    assert [t for t in tiles if t[0] == 1 and t[2] == 256] == [(1, 0, 256)]
    assert list(log_tiles(256)) == [(0, 0, 256), (1, 0, 1)] and list(log_tiles(0)) == []


def test_a_verifier_key_whose_base64_holds_a_plus_is_read():
    """transparency-dev/formats' test key: '+' inside the key's base64 (a name never holds one)."""
    from verifier.transparency.note import parse_vkey, vkey

    key = "TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6"
    assert vkey(*parse_vkey(key, "vkey")) == key


# ----------------------------------------------------------------------------- the log as files


def test_tiles_written_for_600_entries_read_back_as_the_same_tree_at_every_checkpoint_size(tmp_path):
    """Entry bundles and tiles over three level-0 tiles and a level-1 tile: each size a checkpoint could state is
    read back as the tree it was written from; the files a later size needs are not read for an earlier one."""
    from verifier.transparency.tiles import read_log, write_tiles

    entries = [f"entry {i}".encode() * (1 + i % 3) for i in range(600)]
    tree = Tree()
    for size in range(1, 601):
        tree.append(leaf_hash(entries[size - 1]))
        if size in (1, 2, 255, 256, 257, 511, 512, 513, 600):
            write_tiles(tmp_path, tree, entries[:size])
            read, got = read_log(tmp_path, size)
            assert read.root() == tree.root(size) and got == entries[:size]
    for size in (1, 256, 257, 511):  # older sizes still read from the partial tiles their checkpoints needed
        assert read_log(tmp_path, size)[0].root() == tree.root(size)
    assert (tmp_path / "tile" / "1" / "000.p" / "2").stat().st_size == 64


@pytest.mark.parametrize("damage, reason", [
    ("a truncated tile", "LOG_MALFORMED"), ("an over-long tile", "LOG_MALFORMED"),
    ("a partial tile served for a full one", "LOG_MALFORMED"), ("an entry that is not its leaf", "LOG_INCONSISTENT"),
    ("an upper tile its level below contradicts", "LOG_INCONSISTENT"), ("a missing bundle", "LOG_MALFORMED"),
])
def test_a_log_whose_files_disagree_is_refused(tmp_path, damage, reason):
    from verifier.releases.listed_files import ReleaseError
    from verifier.transparency.tiles import read_log, write_tiles

    entries = [f"entry {i}".encode() for i in range(300)]
    tree = Tree([leaf_hash(e) for e in entries])
    write_tiles(tmp_path, tree, entries)
    full, bundle = tmp_path / "tile" / "0" / "000", tmp_path / "tile" / "entries" / "000"
    if damage == "a truncated tile":
        full.write_bytes(full.read_bytes()[:-1])
    elif damage == "an over-long tile":
        full.write_bytes(full.read_bytes() + b"\x00")
    elif damage == "a partial tile served for a full one":
        full.write_bytes(full.read_bytes()[:32 * 200])
    elif damage == "an entry that is not its leaf":
        bundle.write_bytes(bundle.read_bytes().replace(b"entry 7", b"entry X"))
    elif damage == "an upper tile its level below contradicts":
        upper = tmp_path / "tile" / "1" / "000.p" / "1"
        upper.write_bytes(bytes(32))
    else:
        bundle.unlink()
    with pytest.raises(ReleaseError) as info:
        read_log(tmp_path, 300)
    assert info.value.reason == reason


def test_a_release_log_from_the_command_line(tmp_path, capsys):
    """publisher log init, three releases appended with --log, each proof checked by verifier verify --proof; a
    proof of another release, a dataset id and version logged twice, and a changed tile are refused."""
    import json

    from publisher.cli import main as publisher
    from verifier.cli import main as verifier
    from conftest import PAPER

    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["keygen", "--out", str(tmp_path / "logkeys"), "--unencrypted"]) == 0
    capsys.readouterr()
    log = tmp_path / "log"
    assert publisher(["log", "init", str(log), "--origin", "stats.example/releases", "--key",
                      str(tmp_path / "logkeys" / "private.pem"), "--json"]) == 0
    (tmp_path / "log.vkey").write_text(json.loads(capsys.readouterr().out)["verifier_key"] + "\n")
    release = ["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param",
               "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed", "5", "--allow-degenerate",
               "--key",
               str(tmp_path / "keys" / "private.pem"), "--dataset-id", "demo", "--log", str(log), "--log-key",
               str(tmp_path / "logkeys" / "private.pem")]
    for version in (1, 2, 3):
        assert publisher([*release, "--release-version", str(version), "--out", str(tmp_path / f"r{version}")]) == 0
        assert f"logged in {log} at index {version - 1} of {version}; its proof: " in capsys.readouterr().out
    key, vkey = str(tmp_path / "keys" / "public.pem"), str(tmp_path / "log.vkey")
    for version in (1, 2, 3):
        assert verifier(["verify", str(tmp_path / f"r{version}"), "--key", key, "--proof",
                         str(tmp_path / f"r{version}.tlog-proof"), "--log-key", vkey, "--json"]) == 0
        said = json.loads(capsys.readouterr().out)["log"]
        assert {k: said[k] for k in ("origin", "index", "size")} == {"origin": "stats.example/releases",
                                                                      "index": version - 1, "size": version}
        assert len(said["history"]) == 1  # remembered, or not comparable with the size remembered
    assert verifier(["verify", str(tmp_path / "r1"), "--key", key, "--proof", str(tmp_path / "r2.tlog-proof"),
                     "--log-key", vkey]) == 1
    assert ": LOG_PROOF_INVALID: it does not prove this release at index 1" in capsys.readouterr().err
    assert publisher([*release, "--release-version", "2", "--out", str(tmp_path / "again")]) == 3
    assert "RELEASE_EXISTS" in capsys.readouterr().err and not (tmp_path / "again").exists()
    assert not (tmp_path / "again.tlog-proof").exists()
    other = tmp_path / "other.vkey"  # the proof checked with another log's key: its signature is not there
    assert publisher(["log", "init", str(tmp_path / "log2"), "--origin", "stats.example/releases", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--json"]) == 0
    other.write_text(json.loads(capsys.readouterr().out)["verifier_key"])
    assert verifier(["verify", str(tmp_path / "r1"), "--key", key, "--proof", str(tmp_path / "r1.tlog-proof"),
                     "--log-key", str(other)]) == 1
    assert ": LOG_SIGNATURE: its checkpoint carries no signature of the log's key" in capsys.readouterr().err
    assert verifier(["verify", str(tmp_path / "r1"), "--key", key, "--proof", str(tmp_path / "r1.tlog-proof")]) == 2
    assert "--proof takes the log's trust: --log-policy FILE" in capsys.readouterr().err
    tile = log / "tile" / "0" / "000.p" / "3"
    tile.write_bytes(bytes(len(tile.read_bytes())))
    assert publisher([*release, "--release-version", "4", "--out", str(tmp_path / "r4")]) == 1
    assert "LOG_INCONSISTENT" in capsys.readouterr().err and not (tmp_path / "r4").exists()


# ----------------------------------------------------------------------------- her memory of the log


def _logged_releases(tmp_path, capsys, versions=(1, 2)):
    """A log, its verifier key and releases of dataset 'demo' appended to it, as the command line makes them."""
    import json

    from publisher.cli import main as publisher
    from conftest import PAPER

    for keys in ("keys", "logkeys"):
        assert publisher(["keygen", "--out", str(tmp_path / keys), "--unencrypted"]) == 0
    capsys.readouterr()
    assert publisher(["log", "init", str(tmp_path / "log"), "--origin", "stats.example/releases", "--key",
                      str(tmp_path / "logkeys" / "private.pem"), "--json"]) == 0
    (tmp_path / "log.vkey").write_text(json.loads(capsys.readouterr().out)["verifier_key"] + "\n")
    for version in versions:
        assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param",
                          "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed", "5",
                          "--allow-degenerate", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id",
                          "demo", "--release-version", str(version), "--log", str(tmp_path / "log"), "--log-key",
                          str(tmp_path / "logkeys" / "private.pem"), "--out", str(tmp_path / f"r{version}")]) == 0
    capsys.readouterr()


def _verify(tmp_path, capsys, version, *extra, code=0):
    from verifier.cli import main as verifier

    assert verifier(["verify", str(tmp_path / f"r{version}"), "--key", str(tmp_path / "keys" / "public.pem"),
                     "--proof", str(tmp_path / f"r{version}.tlog-proof"), "--log-key", str(tmp_path / "log.vkey"),
                     "--state", str(tmp_path / "state"), *extra]) == code
    return capsys.readouterr()


def test_her_client_remembers_the_log_and_catches_two_histories(tmp_path, capsys):
    """The first proof is remembered; a later one of a larger tree is checked against it with the log's files; a
    log that signs another tree of the same size (a fork), or serves an older checkpoint than she saw, is
    refused with the code of its kind; her release is the only entry of its dataset id and version."""
    import shutil

    from publisher.keys import load_private_key
    from verifier.transparency.note import checkpoint_text, signature_line

    _logged_releases(tmp_path, capsys)
    out = _verify(tmp_path, capsys, 1).out
    assert "log: logged at index 0 of 1 in stats.example/releases" in out
    assert "remembered: size 1" in out
    out = _verify(tmp_path, capsys, 2).out  # size 2, not comparable with size 1 without the log's files
    assert "not compared with the checkpoint of size 1 you saw before: give --log" in out
    out = _verify(tmp_path, capsys, 2, "--log", str(tmp_path / "log")).out
    assert "the only entry of its dataset and version in the log's 2 entries" in out and "remembered: size 2" in out
    out = _verify(tmp_path, capsys, 1, "--log", str(tmp_path / "log")).out
    assert "newer versions logged: 2" in out

    # a fork: the log signs a tree of size 2 with another root; her memory of size 2 catches it
    key = load_private_key(tmp_path / "logkeys" / "private.pem", None)
    text = checkpoint_text("stats.example/releases", 2, bytes(32))
    forged = (text + "\n" + signature_line("stats.example/releases", 1, key.public_raw, key.sign(text.encode()))).encode()
    proof = (tmp_path / "r2.tlog-proof").read_bytes()
    (tmp_path / "r2.tlog-proof").write_bytes(proof.split(b"\n\n", 1)[0] + b"\n\n" + forged)
    err = _verify(tmp_path, capsys, 2, code=1).err
    assert ": LOG_PROOF_INVALID: " in err  # its leaf is not under that root either
    (tmp_path / "r2.tlog-proof").write_bytes(proof)

    # a rollback: the log's files put back to their state at size 1, after she saw size 2
    old = tmp_path / "old-log"
    shutil.copytree(tmp_path / "log", old)
    (old / "checkpoint").write_bytes((tmp_path / "r1.tlog-proof").read_bytes().split(b"\n\n", 1)[1])
    err = _verify(tmp_path, capsys, 1, "--log", str(old), code=1).err
    assert ": LOG_ROLLBACK: the log's newest checkpoint (size 1) is older than the checkpoint you saw before" in err


def test_a_fork_at_the_size_she_remembers_is_equivocation(tmp_path, capsys):
    """Two logs of one origin and key, each with one release: the second proof has her remembered size and
    another root (LOG_EQUIVOCATION), and its tree does not extend hers (LOG_INCONSISTENT with the files)."""
    import shutil

    _logged_releases(tmp_path, capsys, versions=(1,))
    assert "remembered: size 1" in _verify(tmp_path, capsys, 1).out
    other = tmp_path / "other"
    other.mkdir()
    for name in ("keys", "logkeys", "log.vkey"):
        (shutil.copytree if (tmp_path / name).is_dir() else shutil.copy)(tmp_path / name, other / name)
    from publisher.cli import main as publisher
    from publisher.release_log import init_log
    from publisher.keys import load_private_key
    from conftest import PAPER

    init_log(other / "log", "stats.example/releases", load_private_key(other / "logkeys" / "private.pem", None))
    assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "rank_swapping", "--param",
                      "p=10", "--samples", "200", "--seed", "3", "--allow-degenerate", "--key",
                      str(other / "keys" / "private.pem"), "--dataset-id", "other", "--log", str(other / "log"),
                      "--log-key", str(other / "logkeys" / "private.pem"), "--out", str(other / "r1")]) == 0
    capsys.readouterr()
    (other / "state").symlink_to(tmp_path / "state")  # her one memory
    err = _verify(other, capsys, 1, code=1).err
    assert ": LOG_EQUIVOCATION: the log signed two trees of size 1 with different roots" in err


def test_a_look_alike_log_never_spoils_the_genuine_log_s_memory(tmp_path, capsys):
    """Issue 59, item 4: she once verifies a release of a look-alike log (the genuine origin, another key); her
    memory of the genuine log is kept apart, so every proof of the genuine log still verifies. A memory kept by the
    origin alone (before issue 59) that another key signed is set aside, and she is told."""
    import json
    import shutil

    from publisher.cli import main as publisher
    from conftest import PAPER

    _logged_releases(tmp_path, capsys, versions=(1,))
    fake = tmp_path / "fake"
    fake.mkdir()
    assert publisher(["keygen", "--out", str(fake / "logkeys"), "--unencrypted"]) == 0
    capsys.readouterr()
    assert publisher(["log", "init", str(fake / "log"), "--origin", "stats.example/releases", "--key",
                      str(fake / "logkeys" / "private.pem"), "--json"]) == 0
    (fake / "log.vkey").write_text(json.loads(capsys.readouterr().out)["verifier_key"] + "\n")
    assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed", "5",
                      "--allow-degenerate", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "demo",
                      "--release-version", "7", "--log", str(fake / "log"), "--log-key",
                      str(fake / "logkeys" / "private.pem"), "--out", str(fake / "r7")]) == 0
    capsys.readouterr()
    from verifier.cli import main as verifier

    assert verifier(["verify", str(fake / "r7"), "--key", str(tmp_path / "keys" / "public.pem"), "--proof",
                     str(fake / "r7.tlog-proof"), "--log-key", str(fake / "log.vkey"), "--state",
                     str(tmp_path / "state")]) == 0
    out = _verify(tmp_path, capsys, 1).out  # the genuine log's proof, after the look-alike's
    assert "remembered: size 1" in out
    # a memory kept by the origin alone, signed by the look-alike's key: set aside, in words
    legacy = tmp_path / "state" / "logs"
    for path in legacy.iterdir():
        path.unlink()
    import hashlib

    old = legacy / f"{hashlib.sha256(b'stats.example/releases').hexdigest()[:32]}.checkpoint"
    shutil.copyfile(fake / "log" / "checkpoint", old)
    out = _verify(tmp_path, capsys, 1).out
    assert "was signed by another key (another log with the same origin): it is not this log's, and it is set " \
           "aside, not compared" in out and "remembered: size 1" in out
