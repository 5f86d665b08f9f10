"""Witnesses of the release log (issue 39, items 3-5): C2SP cosignatures, the subject's policy and quorum, a witness
that cosigns only a log that grew (from its files, and over HTTP on 127.0.0.1), and the evidence of a fork."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from verifier.cli import main as verifier
from verifier.releases.listed_files import ReleaseError
from verifier.transparency.cosignature import cosignature_line, verify_cosignature
from verifier.transparency.merkle import Tree, leaf_hash
from verifier.transparency.note import (COSIGNATURE_TYPE, ED25519_TYPE, checkpoint_text, parse_note, signature_line,
                                        vkey)
from verifier.transparency.policy import check_checkpoint, parse_policy
from verifier.transparency.tiles import write_tiles

ORIGIN = "stats.example/releases"


def _key(path: Path) -> Ed25519PrivateKey:
    """A new Ed25519 key, written unencrypted with mode 0600 as a witness keeps it."""
    key = Ed25519PrivateKey.generate()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return key


def _raw(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _log(root: Path, key: Ed25519PrivateKey, entries: list[bytes], origin: str = ORIGIN) -> bytes:
    """A log folder holding ``entries``, its checkpoint signed with ``key``: the files a log serves."""
    root.mkdir(parents=True, exist_ok=True)
    tree = Tree([leaf_hash(e) for e in entries])
    write_tiles(root, tree, entries)
    text = checkpoint_text(origin, len(entries), tree.root())
    note = (text + "\n" + signature_line(origin, ED25519_TYPE, _raw(key), key.sign(text.encode()))).encode()
    (root / "checkpoint").write_bytes(note)
    return note


def _vkey_file(path: Path, name: str, kind: int, key: Ed25519PrivateKey) -> str:
    path.write_text(vkey(name, kind, _raw(key)) + "\n")
    return str(path)


def _cosign(tmp_path, log: Path, witness: str = "w1", code: int = 0, capsys=None):
    assert verifier(["witness", "cosign", str(log), "--state", str(tmp_path / f"{witness}-state"), "--key",
                     str(tmp_path / f"{witness}.pem"), "--name", f"{witness}.example/witness", "--log-key",
                     str(tmp_path / "log.vkey"), "--json"]) == code
    return capsys.readouterr() if capsys else None


# ----------------------------------------------------------------------------- formats


def test_a_cosignature_is_c2sp_s_and_a_changed_one_is_refused():
    """Key ID of type 0x04, an 8-byte big-endian time, and Ed25519 over "cosignature/v1\\ntime T\\n" + the text,
    checked here with the cryptography library alone; one flipped bit refuses the checkpoint."""
    log, witness = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    text = checkpoint_text(ORIGIN, 5, bytes(range(32)))
    line = cosignature_line(text, "council.example/w", _raw(witness), witness.sign, 1_700_000_000)
    name, blob = line.removeprefix("\u2014 ").rstrip("\n").split(" ")
    raw = base64.b64decode(blob)
    assert name == "council.example/w" and len(raw) == 4 + 8 + 64
    assert raw[:4] == hashlib.sha256(b"council.example/w\n\x04" + _raw(witness)).digest()[:4]
    assert int.from_bytes(raw[4:12], "big") == 1_700_000_000
    witness.public_key().verify(raw[12:], b"cosignature/v1\ntime 1700000000\n" + text.encode())
    signed = text + "\n" + signature_line(ORIGIN, ED25519_TYPE, _raw(log), log.sign(text.encode())) + line
    note = parse_note(signed.encode(), "cp")
    assert verify_cosignature(note, "council.example/w", _raw(witness), "cp") == 1_700_000_000
    assert verify_cosignature(note, "other.example/w", _raw(witness), "cp") is None  # another name: not it
    flipped = bytearray(raw)
    flipped[-1] ^= 1
    bad = signed.replace(blob, base64.b64encode(bytes(flipped)).decode())
    with pytest.raises(ReleaseError) as info:
        verify_cosignature(parse_note(bad.encode(), "cp"), "council.example/w", _raw(witness), "cp")
    assert info.value.reason == "WITNESS_QUORUM" and "does not verify" in info.value.message


def test_a_log_entry_of_a_version_no_release_could_have_is_counted_as_none():
    from verifier.transparency.proof import logged_versions

    entry = "permuted-privacy release\norigin o\ndataset \"d\"\nversion {}\nmanifest sha256 x\nkey y\n"
    entries = [entry.format(v).encode() for v in ("3", "\u00b2", "-1", "")]
    assert logged_versions(entries, "o", "d") == [3, -1, -1, -1]


def test_a_policy_reads_strictly_and_counts_its_quorum():
    log = Ed25519PrivateKey.generate()
    witnesses = [Ed25519PrivateKey.generate() for _ in range(3)]
    lines = [f"log {vkey(ORIGIN, ED25519_TYPE, _raw(log))}  # the log",
             *(f"witness w{i} w{i}.example/w+{vkey(f'w{i}.example/w', COSIGNATURE_TYPE, _raw(k)).split('+', 1)[1]}"
               for i, k in enumerate(witnesses)),
             "group pair 2 w0 w1", "group either any pair w2", "quorum either"]
    policy = parse_policy("\n".join(lines).encode(), "policy.txt")
    assert (policy.origin, sorted(policy.witnesses), policy.quorum) == (ORIGIN, ["w0", "w1", "w2"], "either")
    assert [policy.met(s) for s in ({"w0"}, {"w0", "w1"}, {"w2"}, set())] == [False, True, True, False]
    text = checkpoint_text(ORIGIN, 1, bytes(32))
    note = text + "\n" + signature_line(ORIGIN, ED25519_TYPE, _raw(log), log.sign(text.encode()))
    with pytest.raises(ReleaseError) as info:
        check_checkpoint(parse_note(note.encode(), "cp"), policy, "cp")
    assert info.value.reason == "WITNESS_QUORUM" and "cosigned by 0 of 3 witnesses" in info.value.message
    note += cosignature_line(text, "w2.example/w", _raw(witnesses[2]), witnesses[2].sign, 7)
    assert check_checkpoint(parse_note(note.encode(), "cp"), policy, "cp").cosigned == {"w2": 7}
    bad = ["witness w9 nothing", f"log {vkey(ORIGIN, ED25519_TYPE, _raw(log))}", "group g 3 w0 w1", "group g 1 w0 w0",
           "group g 1 w7", "group w1 any w0", "group g \u00b2 w0 w1", "quorum nobody", "frobnicate"]
    for line in bad:  # each the fifth line, after the log and its three witnesses
        with pytest.raises(Exception) as info:
            parse_policy("\n".join([*lines[:4], line, "quorum none"]).encode(), "policy.txt")
        assert info.value.reason == "POLICY_INVALID" and info.value.message.startswith("line 5: "), line
    with pytest.raises(Exception) as info:
        parse_policy(f"log {vkey('w0.example/w', COSIGNATURE_TYPE, _raw(log))}\nquorum none\n".encode(), "p")
    assert info.value.reason == "POLICY_INVALID" and "line 1: the log's key signs with Ed25519" in info.value.message
    with pytest.raises(Exception) as info:
        parse_policy(lines[0].encode(), "p")
    assert info.value.reason == "POLICY_INVALID" and "names its log and its quorum" in info.value.message


# ----------------------------------------------------------------------------- the witness, from a log's files


def test_the_witness_cosigns_a_log_only_as_it_grows(tmp_path, capsys):
    """Cosigned at size 1 and then 3 (each from the tree it cosigned before); a fork at size 3, a fork grown to
    size 4 and a rollback to size 2 are refused with their codes, and its memory stays at size 3; a memory someone
    changed is refused."""
    log_key = Ed25519PrivateKey.generate()
    _vkey_file(tmp_path / "log.vkey", ORIGIN, ED25519_TYPE, log_key)
    _key(tmp_path / "w1.pem")
    entries = [f"entry {i}\n".encode() for i in range(4)]
    _log(tmp_path / "log", log_key, entries[:1])
    said = json.loads(_cosign(tmp_path, tmp_path / "log", capsys=capsys).out)
    assert (said["size"], said["cosigned_from"], said["added"]) == (1, 0, True)
    note = parse_note((tmp_path / "log" / "checkpoint").read_bytes(), "cp")
    assert [name for name, _, _ in note.signatures] == [ORIGIN, "w1.example/witness"]
    assert said["cosignature"] == (tmp_path / "log" / "checkpoint").read_text().splitlines()[-1]
    _log(tmp_path / "log", log_key, entries[:3])
    said = json.loads(_cosign(tmp_path, tmp_path / "log", capsys=capsys).out)
    assert (said["size"], said["cosigned_from"]) == (3, 1)
    said = json.loads(_cosign(tmp_path, tmp_path / "log", capsys=capsys).out)  # again: the same tree, cosigned
    assert (said["size"], said["cosigned_from"]) == (3, 3)
    assert len(parse_note((tmp_path / "log" / "checkpoint").read_bytes(), "cp").signatures) == 2  # one per witness
    memory = next((tmp_path / "w1-state" / "cosigned").iterdir())
    kept = memory.read_bytes()
    forks = {"LOG_EQUIVOCATION": [entries[0], entries[1], b"another entry\n"],
             "LOG_INCONSISTENT": [entries[0], b"another entry\n", entries[2], entries[3]],
             "LOG_ROLLBACK": entries[:2]}
    for reason, fork in forks.items():
        _log(tmp_path / reason, log_key, fork)
        err = _cosign(tmp_path, tmp_path / reason, code=1, capsys=capsys).err
        assert err.count("\n") == 1 and f": {reason}: " in err, err
        assert memory.read_bytes() == kept and len(parse_note((tmp_path / reason / "checkpoint").read_bytes(),
                                                              "cp").signatures) == 1
    memory.write_bytes(kept.replace(kept.split(b"\n")[2], base64.b64encode(bytes(32))))
    err = _cosign(tmp_path, tmp_path / "log", code=1, capsys=capsys).err
    assert "/w1-state/cosigned/" in err and ": LOG_SIGNATURE: the signature of stats.example/releases does not verify" in err


def _post(url: str, body: bytes) -> tuple[int, str, str]:
    request = urllib.request.Request(url, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read().decode()


def test_a_witness_serves_add_checkpoint_on_127_0_0_1_and_refuses_a_fork(tmp_path, capsys):
    """``verifier witness serve`` answers the publisher's add-checkpoint (after a 409 that tells its size when
    the publisher guessed wrong) and refuses a fork (409), a stale old size (409, text/x.tlog.size), an unknown
    log (404), a checkpoint the log did not sign (403) and a request that is not one (400)."""
    from publisher.cli import main as publisher
    from verifier.transparency.witness import request_text

    log_key, stranger = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    _vkey_file(tmp_path / "log.vkey", ORIGIN, ED25519_TYPE, log_key)
    named = ["--witness-key", _vkey_file(tmp_path / "w.vkey", "w.example/witness", COSIGNATURE_TYPE,
                                         _key(tmp_path / "w.pem"))]
    entries = [f"entry {i}\n".encode() for i in range(3)]
    _log(tmp_path / "log", log_key, entries[:1])
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen([sys.executable, "-m", "verifier", "witness", "serve", "--state", str(tmp_path / "st"),
                               "--key", str(tmp_path / "w.pem"), "--name", "w.example/witness", "--log-key",
                               str(tmp_path / "log.vkey"), "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    try:
        ready = server.stdout.readline()
        assert ready.startswith("witness w.example/witness serving on http://127.0.0.1:"), server.stderr.read()
        url = ready.split(" serving on ")[1].removesuffix("/add-checkpoint\n")
        assert publisher(["log", "witness", str(tmp_path / "log"), "--witness", url, *named, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["added"] is True
        _log(tmp_path / "log", log_key, entries)  # size 3: the publisher proves from 0, is told 1, proves again
        assert publisher(["log", "witness", str(tmp_path / "log"), "--witness", url, *named]) == 0
        assert "cosigned; added to the log's checkpoint" in capsys.readouterr().out
        assert [n for n, _, _ in parse_note((tmp_path / "log" / "checkpoint").read_bytes(), "c").signatures] == [
            ORIGIN, "w.example/witness"]
        fork = _log(tmp_path / "fork", log_key, [entries[0], entries[1], b"another\n"])
        assert _post(url + "/add-checkpoint", request_text(3, [], fork))[0] == 409  # tlog-witness: a fork of its size
        assert publisher(["log", "witness", str(tmp_path / "fork"), "--witness", url, *named]) == 3
        assert ": WITNESS_REFUSED: the witness refused the checkpoint of size 3 (409: LOG_EQUIVOCATION" in \
            capsys.readouterr().err
        grown = Tree([leaf_hash(e) for e in entries])
        assert _post(url + "/add-checkpoint", request_text(1, grown.consistency(1), fork)) == (
            409, "text/x.tlog.size", "3\n")
        other = _log(tmp_path / "other", log_key, entries, origin="other.example/log")
        assert _post(url + "/add-checkpoint", request_text(0, [], other))[0] == 404
        unsigned = _log(tmp_path / "unsigned", stranger, entries)
        assert _post(url + "/add-checkpoint", request_text(3, [], unsigned))[0] == 403
        assert _post(url + "/add-checkpoint", b"old 007\n\n" + fork)[0] == 400
        assert _post(url + "/add-checkpoint", request_text(4, [], fork))[0] == 400  # old size past the new
        import http.client

        connection = http.client.HTTPConnection(*url.removeprefix("http://").split(":"), timeout=30)
        connection.request("POST", "/add-checkpoint", body=b"old 0\n\n", headers={"Content-Length": "\u00b2"})
        assert connection.getresponse().status == 400  # a length no ASCII digit writes: refused, not a crash
        connection.close()
    finally:
        server.terminate()
        code = server.wait(timeout=30)
    assert code == 0 and server.stderr.read() == ""  # stopped as a witness is, not a command cut short


# ----------------------------------------------------------------------------- the subject's quorum


def _policy_file(tmp_path, witnesses: list[str], threshold: int) -> str:
    log_line = (tmp_path / "log.vkey").read_text().strip()
    lines = [f"log {log_line}"]
    for name in witnesses:
        key = serialization.load_pem_private_key((tmp_path / f"{name}.pem").read_bytes(), None)
        lines.append(f"witness {name} {vkey(f'{name}.example/witness', COSIGNATURE_TYPE, _raw(key))}")
    lines += [f"group enough {threshold} {' '.join(witnesses)}", "quorum enough"]
    (tmp_path / "policy.txt").write_text("\n".join(lines) + "\n")
    return str(tmp_path / "policy.txt")


def test_her_verdict_counts_the_witnesses_her_policy_names(tmp_path, capsys):
    """A release logged and cosigned by 1, then 2 of 3 witnesses: too few is WITNESS_QUORUM; once refreshed with
    two cosignatures it verifies, and her verdict drops its unwitnessed notice; a forged cosignature, or a
    checkpoint she got elsewhere that forks the log, fails closed."""
    from publisher.cli import main as publisher
    from test_transparency import _logged_releases

    _logged_releases(tmp_path, capsys, versions=(1,))
    for name in ("w1", "w2", "w3"):
        _key(tmp_path / f"{name}.pem")
    policy = _policy_file(tmp_path, ["w1", "w2", "w3"], 2)
    log, proof = tmp_path / "log", str(tmp_path / "r1.tlog-proof")
    verify = ["verify", str(tmp_path / "r1"), "--key", str(tmp_path / "keys" / "public.pem"), "--proof", proof,
              "--log-policy", policy, "--state", str(tmp_path / "state")]
    _cosign(tmp_path, log, "w1", capsys=capsys)
    assert publisher(["log", "refresh", str(log), proof, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"proof": proof, "index": 0, "size": 1, "signatures": 2}]
    assert verifier(verify) == 1
    assert ": WITNESS_QUORUM: the checkpoint is cosigned by 1 of 3 witnesses; the policy's quorum 'enough' is not " \
        "met" in capsys.readouterr().err
    _cosign(tmp_path, log, "w2", capsys=capsys)
    assert publisher(["log", "refresh", str(log), proof]) == 0
    capsys.readouterr()
    assert verifier([*verify, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["log"]["witnesses"] == {"cosigned": ["w1", "w2"], "of": 3, "quorum": "enough"}
    assert said["unwitnessed"] is None
    assert verifier(verify) == 0
    assert "log: logged at index 0 of 1 in stats.example/releases, cosigned by 2 of 3 witnesses" in \
        capsys.readouterr().out

    record = tmp_path / "me.json"
    record.write_text(json.dumps({"x1": 100.87, "x2": 902.21, "x3": 5108.54}))
    check = ["check", str(tmp_path / "r1"), "--key", str(tmp_path / "keys" / "public.pem"), "--record", str(record),
             "--no-random-match", "--json", "--state", str(tmp_path / "state"), "--proof", proof]
    assert verifier([*check, "--log-policy", policy]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "unwitnessed" not in [f["rule"] for f in out["verdict"]["findings"]] and out["log"]["index"] == 0
    assert verifier([*check, "--log-key", str(tmp_path / "log.vkey")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["text"] for f in out["verdict"]["findings"] if f["rule"] == "unwitnessed"] == [
        "This release is logged at index 0 of 1 in stats.example/releases, but your policy asks no witness to "
        "cosign: the log could show you a history others do not see."]

    text = Path(proof).read_bytes()
    head, blob = text.rstrip(b"\n").rsplit(b" ", 1)  # w2's line: its key ID kept, its time and signature zeroed
    forged = head + b" " + base64.b64encode(base64.b64decode(blob)[:4] + bytes(72)) + b"\n"
    Path(proof).write_bytes(forged)
    assert verifier(verify) == 1
    assert ": WITNESS_QUORUM: the cosignature of the witness w2.example/witness does not verify" in \
        capsys.readouterr().err
    Path(proof).write_bytes(text)
    log_key = serialization.load_pem_private_key((tmp_path / "logkeys" / "private.pem").read_bytes(), None)
    _log(tmp_path / "elsewhere", log_key, [b"a tree of size 1 that is not hers\n"])
    assert verifier([*verify, "--checkpoint", str(tmp_path / "elsewhere" / "checkpoint")]) == 1
    assert ": LOG_EQUIVOCATION: the log signed two trees of size 1 with different roots" in capsys.readouterr().err


# ----------------------------------------------------------------------------- two histories, and their evidence


def test_two_checkpoints_are_one_history_or_evidence_anyone_checks(tmp_path, capsys):
    """Same size, two roots: the evidence is the two signed notes. Sizes 2 and 3 whose trees differ: the evidence
    adds the hashes that give the larger root and another prefix. Each checks with the log's key alone; evidence
    changed to prove nothing is refused; a log that grew honestly is one history."""
    log_key = Ed25519PrivateKey.generate()
    vkey_path = _vkey_file(tmp_path / "log.vkey", ORIGIN, ED25519_TYPE, log_key)
    entries = [f"entry {i}\n".encode() for i in range(3)]
    _log(tmp_path / "a", log_key, entries[:2])
    _log(tmp_path / "b", log_key, [entries[0], b"another\n"])
    _log(tmp_path / "c", log_key, [entries[0], b"another\n", entries[2]])
    _log(tmp_path / "d", log_key, entries)
    a, b, c, d = (str(tmp_path / x / "checkpoint") for x in "abcd")
    for other, log, reason in ((b, None, "LOG_EQUIVOCATION"), (c, "c", "LOG_INCONSISTENT")):
        extra = ["--log", str(tmp_path / log)] if log else []
        assert verifier(["log", "compare", a, other, "--log-key", vkey_path, *extra]) == 1
        out, err = capsys.readouterr()
        assert f": {reason}: the log signed two histories" in err
        (tmp_path / "evidence.json").write_text(out)
        assert verifier(["log", "evidence", str(tmp_path / "evidence.json"), "--log-key", vkey_path, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["sizes"] == [2, 2 if log is None else 3]
    evidence = json.loads((tmp_path / "evidence.json").read_text())
    evidence["checkpoints"][1] = (tmp_path / "d" / "checkpoint").read_text()  # the honest tree: no fork to prove
    (tmp_path / "evidence.json").write_text(json.dumps(evidence))
    assert verifier(["log", "evidence", str(tmp_path / "evidence.json"), "--log-key", vkey_path]) == 1
    assert ": LOG_EVIDENCE_INVALID: " in capsys.readouterr().err
    assert verifier(["log", "compare", a, d, "--log-key", vkey_path, "--log", str(tmp_path / "d")]) == 0
    assert capsys.readouterr().out == "one history: the tree of size 2 is a prefix of the one of size 3\n"
    assert verifier(["log", "compare", a, d, "--log-key", vkey_path]) == 1
    assert ": LOG_INCOMPARABLE: " in capsys.readouterr().err
