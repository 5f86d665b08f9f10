"""Signed releases: keys, publishing, verification, audit (SPEC section 9; spec/reliability.md cases 1-27).

Every negative case asserts the exit code, the reason code on the one FAIL
line, and that no file of the release changed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from conftest import PAPER, write
from publisher.cli import main as publisher
from publisher.keys import keygen, load_private_key
from verifier.cli import main as verifier
from verifier.releases.verification import (
    ENVELOPE,
    MANIFEST,
    PAYLOAD_TYPE,
    dumps_manifest,
    key_id,
    load_public_key,
    pae,
    verify_release,
)

GOLDEN = Path(__file__).parent / "data" / "golden"
ORIGINAL = PAPER / "original.csv"


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry's kind, size, mtime and (below 10 MB) digest: a huge sparse file is not read."""
    def entry(p: Path) -> tuple:
        info = p.lstat()
        small = stat.S_ISREG(info.st_mode) and info.st_size < 10 * 1024**2
        return (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns,
                hashlib.sha256(p.read_bytes()).hexdigest() if small else None)
    return {str(p.relative_to(root)): entry(p) for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    priv, pub, fp, _ = keygen(d, None)
    return {"private": priv, "public": pub, "fingerprint": fp, "dir": d}


@pytest.fixture(scope="module")
def built(keys, tmp_path_factory):
    """Two releases of the paper example, version 1 and 2, signed with the same key."""
    d = tmp_path_factory.mktemp("releases")
    for version in (1, 2):
        code = publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param",
                          "relative_sd=0.8", "--then", "reverse_mapping", "--seed", str(version),
                          "--key", str(keys["private"]), "--public-key", str(keys["public"]),
                          "--dataset-id", "paper-example", "--release-version", str(version),
                          "--out", str(d / f"v{version}")])
        assert code == 0
    return d


@pytest.fixture
def release(built, tmp_path) -> Path:
    target = tmp_path / "release"
    shutil.copytree(built / "v1", target)
    return target


def verify(path: Path, key: Path | None, capsys, *extra: str) -> tuple[int, str, str]:
    argv = ["verify", str(path), *([] if key is None else ["--key", str(key)]), *extra]
    code = verifier(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def expect_fail(path, key, capsys, reason, code=1, *extra):
    before = snapshot(path) if path.exists() else None
    got, out, err = verify(path, key, capsys, *extra)
    lines = err.strip().splitlines()
    assert got == code, err
    assert len(lines) == 1 and lines[0].startswith("FAIL: ") and f": {reason}: " in lines[0], err
    assert "Traceback" not in err and "OK:" not in out and "verified" not in out.lower()
    if before is not None:
        assert snapshot(path) == before
    return lines[0]


def resign(path: Path, private: Path, manifest: bytes, *, keep_manifest_file: bool = False) -> None:
    """Write a validly signed envelope (and manifest.json) around any manifest bytes."""
    key = load_private_key(private, None)
    envelope = {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(manifest).decode(),
                "signatures": [{"keyid": key_id(key.public_raw), "sig": base64.b64encode(key.sign(pae(PAYLOAD_TYPE, manifest))).decode()}]}
    (path / ENVELOPE).write_bytes(dumps_manifest(envelope))
    if not keep_manifest_file:
        (path / MANIFEST).write_bytes(manifest)


def edit_statement(path: Path, private: Path, change) -> None:
    statement = json.loads((path / MANIFEST).read_bytes())
    change(statement)
    resign(path, private, dumps_manifest(statement))


# ----------------------------------------------------------------------------- the good path


def test_round_trip_on_the_paper_example(release, keys, capsys):
    code, out, err = verify(release, keys["public"], capsys)
    assert code == 0 and err == ""
    assert out.startswith(f"OK: {release}") and keys["fingerprint"] in out
    assert "additive_noise(correlated=false, relative_sd=0.8)" in out and "reverse_mapping()" in out
    assert sorted(os.listdir(release)) == ["datapackage.json", "manifest.dsse.json", "manifest.json", "release.csv"]
    code = verifier(["audit", str(release), "--key", str(keys["public"]), "--original", str(ORIGINAL), "--json",
                     "--report", str(release.parent / "audit.md")])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["passed"] is True and result["with_original"] is True
    names = {c["claim"] for c in result["checks"]}
    assert {"n_records", "k", "permuted_privacy.distance", "permuted_privacy.variances",
            "intruder.confidently_linked_share", "intruder.hellinger"} <= names
    report = (release.parent / "audit.md").read_text()
    assert "every checked claim is true" in report
    for png in ("audit-distances.png", "audit-random-match.png", "audit-spreads.png"):
        assert (release.parent / png).read_bytes()[:4] == b"\x89PNG"
        assert f"![{png}]({png})" in report
    assert "SPEC" not in report and "## Not checked" in report
    # the table rounds to 4 significant digits; --json keeps every digit
    hellinger = next(c for c in result["checks"] if c["claim"] == "intruder.hellinger")["computed"]
    assert f"| intruder.hellinger | {float(f'{hellinger:.4g}'):g} |" in report.replace("\\", "")


def test_release_is_a_pure_permutation_with_claims(release):
    statement = json.loads((release / MANIFEST).read_text())
    predicate = statement["predicate"]
    assert predicate["withheld"] == ["random_seed"] and predicate["datasetId"] == "paper-example"
    assert [m["method"] for m in predicate["methods"]] == ["additive_noise", "reverse_mapping"]
    x = pd.read_csv(ORIGINAL)
    y = pd.read_csv(release / "release.csv")
    for c in x.columns:
        assert sorted(x[c]) == sorted(y[c])  # reverse mapping: X's values, permuted
    assert predicate["claims"]["n_records"] == 20 and predicate["claims"]["permuted_privacy"]["distance"] >= 0
    # the manifest is written once, as sorted indented UTF-8 JSON
    raw = (release / MANIFEST).read_bytes()
    assert dumps_manifest(json.loads(raw)) == raw


def test_golden_release_verifies(capsys):
    key = load_public_key(GOLDEN / "public.pem")
    result = verify_release(GOLDEN / "release", key, dataset_id="paper-example", min_version=1)
    assert key.fingerprint == "beebd58ce6419555bf6bfd1143c5e7685c45412f3569a6b1c576c53e7e61deba"
    assert result.release_version == 1 and result.created_at == "2026-11-22T00:00:00Z"
    assert result.claims["n_records"] == 20 and result.claims["k"] == 1
    table = result.table()
    assert table.n_records == 20 and table.names == ["x1", "x2", "x3"]
    # and through the command line, auditing with the original
    assert verifier(["audit", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"), "--original", str(ORIGINAL)]) == 0


def test_golden_release_of_format_version_2_verifies(capsys):
    """The frozen release of format version 2 (with datapackage.json): verified, audited, its package valid."""
    key = load_public_key(GOLDEN / "v2" / "public.pem")
    result = verify_release(GOLDEN / "v2" / "release", key, dataset_id="paper-example", min_version=1)
    assert key.fingerprint == "46077fcd70ce8130e7778d0ddf95eba5610f5ffe43e8452dac8e155039d5b243"
    assert result.statement["predicateType"] == "https://permuted-privacy.dev/release/v2"
    assert result.created_at == "2026-11-23T00:00:00Z" and result.claims["n_records"] == 20
    assert set(result.extras) == {"datapackage.json"}
    assert verifier(["audit", str(GOLDEN / "v2" / "release"), "--key", str(GOLDEN / "v2" / "public.pem"),
                     "--original", str(ORIGINAL)]) == 0
    capsys.readouterr()


def test_round_trip_on_a_10000_record_table(keys, tmp_path, capsys):
    rng = np.random.default_rng(10)
    x = pd.DataFrame(rng.normal(size=(10_000, 4)) * [1, 10, 100, 1000], columns=["a", "b", "c", "d"])
    xp = tmp_path / "x.csv"
    x.to_csv(xp, index=False)
    out = tmp_path / "rel"
    assert publisher(["release", "--input", str(xp), "--method", "rank_swapping", "--param", "p=5", "--seed", "271828182845",
                      "--key", str(keys["private"]), "--dataset-id", "synthetic", "--out", str(out)]) == 0
    capsys.readouterr()
    code = verifier(["audit", str(out), "--key", str(keys["public"]), "--original", str(xp), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["passed"], result
    statement = json.loads((out / MANIFEST).read_text())
    assert statement["predicate"]["claims"]["intruder"]["random_method"] == "monte_carlo"
    blob = b"".join(p.read_bytes() for p in out.iterdir())
    assert b"271828182845" not in blob


def test_release_rows_are_shuffled(keys, tmp_path):
    """With noise too small to change any rank, each released row is traceable to its original row
    through its rank on one attribute: its position in the release must say nothing of the original order."""
    rng = np.random.default_rng(11)
    x = pd.DataFrame(rng.normal(size=(2000, 2)), columns=["a", "b"])
    xp = tmp_path / "x.csv"
    x.to_csv(xp, index=False)
    out = tmp_path / "rel"
    assert publisher(["release", "--input", str(xp), "--method", "additive_noise", "--param", "relative_sd=1e-12",
                      "--key", str(keys["private"]), "--dataset-id", "s", "--out", str(out)]) == 0
    y = pd.read_csv(out / "release.csv")
    original_row = np.empty(2000, dtype=int)
    original_row[np.argsort(y["a"].to_numpy())] = np.argsort(x["a"].to_numpy())
    assert sorted(original_row) == list(range(2000))
    assert abs(np.corrcoef(np.arange(2000), original_row)[0, 1]) < 0.1


# ----------------------------------------------------------------------------- tampering (cases 1-21)


def test_case_01_bit_flip_in_data(release, keys, capsys):
    data = bytearray((release / "release.csv").read_bytes())
    data[-3] ^= 0x01
    (release / "release.csv").write_bytes(bytes(data))
    expect_fail(release, keys["public"], capsys, "DIGEST_MISMATCH")


def test_case_02_byte_appended(release, keys, capsys):
    with open(release / "release.csv", "ab") as handle:
        handle.write(b"1")
    expect_fail(release, keys["public"], capsys, "SIZE_MISMATCH")


def test_case_03_parameter_edited_old_signature_kept(release, keys, capsys):
    # in the envelope's payload and in manifest.json alike: the signature no longer holds
    manifest = (release / MANIFEST).read_bytes().replace(b'"relative_sd": 0.8', b'"relative_sd": 0.9')
    env = json.loads((release / ENVELOPE).read_bytes())
    env["payload"] = base64.b64encode(manifest).decode()
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    (release / MANIFEST).write_bytes(manifest)
    expect_fail(release, keys["public"], capsys, "SIGNATURE_INVALID")


def test_case_03b_manifest_file_edited_alone(release, keys, capsys):
    manifest = (release / MANIFEST).read_bytes().replace(b'"relative_sd": 0.8', b'"relative_sd": 0.9')
    (release / MANIFEST).write_bytes(manifest)
    expect_fail(release, keys["public"], capsys, "MANIFEST_MISMATCH")


def test_case_04_manifest_only_reformatted(release, keys, capsys):
    compact = json.dumps(json.loads((release / MANIFEST).read_bytes()), separators=(",", ":")).encode()
    env = json.loads((release / ENVELOPE).read_bytes())
    env["payload"] = base64.b64encode(compact).decode()
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    (release / MANIFEST).write_bytes(compact)
    expect_fail(release, keys["public"], capsys, "SIGNATURE_INVALID")


def test_case_05_v1_signature_with_v2_manifest(built, tmp_path, keys, capsys):
    mixed = tmp_path / "mixed"
    shutil.copytree(built / "v2", mixed)
    v1 = json.loads((built / "v1" / ENVELOPE).read_bytes())
    env = json.loads((mixed / ENVELOPE).read_bytes())
    env["signatures"] = v1["signatures"]
    (mixed / ENVELOPE).write_bytes(dumps_manifest(env))
    expect_fail(mixed, keys["public"], capsys, "SIGNATURE_INVALID")


@pytest.mark.parametrize("mutate", [
    lambda s: [{"keyid": s[0]["keyid"], "sig": ""}],
    lambda s: [{"keyid": s[0]["keyid"], "sig": base64.b64encode(b"x" * 63).decode()}],
    lambda s: [{"keyid": s[0]["keyid"], "sig": "not base64!"}],
    lambda s: s + s,
    lambda s: [],
])
def test_case_06_malformed_signatures(release, keys, capsys, mutate):
    env = json.loads((release / ENVELOPE).read_bytes())
    env["signatures"] = mutate(env["signatures"])
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    expect_fail(release, keys["public"], capsys, "SIGNATURE_MALFORMED")


def test_case_07_another_valid_key(release, keys, tmp_path, capsys):
    other = tmp_path / "other"
    _, pub, fp, _ = keygen(other, None)
    line = expect_fail(release, pub, capsys, "KEY_MISMATCH")
    assert fp in line  # the trusted key's full fingerprint, beside the signer's key id, and what it means for her
    assert f"this release was not signed by the key you trust. Your key's fingerprint is {fp}" in line
    assert key_id(load_private_key(keys["private"], None).public_raw) in line


def test_case_08_no_trusted_key(release, keys, capsys):
    shutil.copy(keys["public"], release / "public.pem")  # a key shipped inside the release proves nothing
    line = expect_fail(release, None, capsys, "NO_TRUSTED_KEY", code=2)
    assert "--key" in line


def test_case_09_small_order_key_and_forged_signature(release, tmp_path, capsys):
    identity = b"\x01" + b"\x00" * 31
    forged = b"\x01" + b"\x00" * 31 + b"\x00" * 32  # R = identity, S = 0
    manifest = (release / MANIFEST).read_bytes()
    # the hazard: OpenSSL accepts this signature for any message under the identity key
    Ed25519PublicKey.from_public_bytes(identity).verify(forged, pae(PAYLOAD_TYPE, manifest))
    pem = Ed25519PublicKey.from_public_bytes(identity).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    weak = write(tmp_path / "weak.pem", pem)
    env = json.loads((release / ENVELOPE).read_bytes())
    env["signatures"] = [{"keyid": key_id(identity), "sig": base64.b64encode(forged).decode()}]
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    expect_fail(release, weak, capsys, "WEAK_KEY")


def test_case_10_data_file_renamed(release, keys, capsys):
    (release / "release.csv").rename(release / "data2.csv")
    expect_fail(release, keys["public"], capsys, "FILE_MISSING")


@pytest.mark.parametrize("extra", ["claims_override.json", "original.csv", ".hidden"])
def test_case_11_unlisted_file(release, keys, capsys, extra):
    write(release / extra, "x\n")
    expect_fail(release, keys["public"], capsys, "UNLISTED_FILE")


@pytest.mark.parametrize("name", ["../x.csv", "/etc/passwd", "a/../../x", "C:\\x", "x\x00.csv", "x\n.csv", "manifest.json"])
def test_case_12_unsafe_names(release, keys, capsys, name):
    edit_statement(release, keys["private"], lambda s: s["subject"][0].update(name=name))
    expect_fail(release, keys["public"], capsys, "UNSAFE_PATH")


def test_case_13_symlink_with_matching_digest(release, keys, tmp_path, capsys):
    outside = tmp_path / "outside.csv"
    shutil.copy(release / "release.csv", outside)
    (release / "release.csv").unlink()
    (release / "release.csv").symlink_to(outside)
    expect_fail(release, keys["public"], capsys, "UNSAFE_PATH")


def test_case_14_v2_manifest_with_v1_data(built, tmp_path, keys, capsys):
    mixed = tmp_path / "mixed"
    shutil.copytree(built / "v2", mixed)
    shutil.copy(built / "v1" / "release.csv", mixed / "release.csv")
    expect_fail(mixed, keys["public"], capsys, "DIGEST_MISMATCH")


def test_case_15_rollback_and_wrong_dataset(built, keys, capsys):
    v1 = built / "v1"
    expect_fail(v1, keys["public"], capsys, "ROLLBACK", 1, "--min-version", "2")
    expect_fail(v1, keys["public"], capsys, "WRONG_DATASET", 1, "--dataset-id", "another")
    assert verify(built / "v2", keys["public"], capsys, "--min-version", "2", "--dataset-id", "paper-example")[0] == 0


@pytest.mark.parametrize("payload", [
    b'{"_type": "a", "_type": "b"}',
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": ' + b"9" * 5000 + b"}",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a": 1} trailing',
    b'["not", "an", "object"]',
    b'{"a": "\\ud800"}',
    b"\xff\xfe not utf-8",
])
def test_case_16_validly_signed_malformed_json(release, keys, capsys, payload):
    resign(release, keys["private"], payload)
    expect_fail(release, keys["public"], capsys, "MANIFEST_MALFORMED")


@pytest.mark.parametrize("change", [
    lambda s: s.update(subject=[]),
    lambda s: s["subject"][0].update(digest={}),
    lambda s: s["subject"][0].update(digest={"md5": "0" * 32}),
    lambda s: s["subject"][0].update(digest={"sha256": "0" * 8}),
    lambda s: s["subject"][0]["digest"].update(sha256=s["subject"][0]["digest"]["sha256"].upper()),
    lambda s: s["subject"][0]["digest"].update(sha256="g" * 64),
    lambda s: s["subject"][0]["annotations"].update(size=-1),
    lambda s: s["predicate"].update(withheld=[]),
    lambda s: s["predicate"].update(releaseVersion=0),
])
def test_case_17_vacuous_or_broken_statement(release, keys, capsys, change):
    edit_statement(release, keys["private"], change)
    expect_fail(release, keys["public"], capsys, "SCHEMA_INVALID")


@pytest.mark.parametrize("change", [
    lambda s: s.update(_type="https://in-toto.io/Statement/v0.1"),
    lambda s: s.update(predicateType="https://slsa.dev/provenance/v1"),
])
def test_case_18_another_signed_document_type(release, keys, capsys, change):
    edit_statement(release, keys["private"], change)
    expect_fail(release, keys["public"], capsys, "SCHEMA_INVALID")


def test_case_18b_wrong_payload_type(release, keys, capsys):
    key = load_private_key(keys["private"], None)
    manifest = (release / MANIFEST).read_bytes()
    env = {"payloadType": "application/json", "payload": base64.b64encode(manifest).decode(),
           "signatures": [{"keyid": key_id(key.public_raw), "sig": base64.b64encode(key.sign(pae("application/json", manifest))).decode()}]}
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    expect_fail(release, keys["public"], capsys, "SCHEMA_INVALID")


@pytest.mark.parametrize("name", [ENVELOPE, MANIFEST])
def test_case_19_huge_manifest_or_envelope(release, keys, capsys, name):
    with open(release / name, "r+b") as handle:
        handle.truncate(100 * 1024**2)  # 100 MB, sparse: refused from its size, never parsed
    expect_fail(release, keys["public"], capsys, "SIZE_MISMATCH")


def test_case_19_huge_sparse_data_file(release, keys, capsys):
    with open(release / "release.csv", "r+b") as handle:
        handle.truncate(20 * 1024**3)  # 20 GB, sparse: refused from its size, never read
    expect_fail(release, keys["public"], capsys, "SIZE_MISMATCH")


def test_case_20_only_the_hashed_bytes_are_parsed(release, keys):
    verified = verify_release(release, load_public_key(keys["public"]))
    (release / "release.csv").write_text("x1,x2,x3\n1,2,3\n")  # swapped after verification
    assert verified.table().n_records == 20


# ----------------------------------------------------------------------------- audit catches false claims


@pytest.mark.parametrize("change, claim", [
    (lambda c: c["permuted_privacy"].update(distance=c["permuted_privacy"]["distance"] + 3), "permuted_privacy.distance"),
    (lambda c: c.update(k=c["k"] + 2), "k"),
    (lambda c: c["intruder"].update(confidently_linked_share=0.45), "intruder.confidently_linked_share"),
])
def test_audit_catches_false_claims(release, keys, capsys, change, claim):
    edit_statement(release, keys["private"], lambda s: change(s["predicate"]["claims"]))
    assert verify(release, keys["public"], capsys)[0] == 0  # the signature is fine: the claim is not
    code = verifier(["audit", str(release), "--key", str(keys["public"]), "--original", str(ORIGINAL), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and not result["passed"]
    failed = [c["claim"] for c in result["checks"] if not c["ok"]]
    # a lie about D also changes the subjects' own checks (their distance against the claimed D), so the signed
    # counts of records at each level, checked last, no longer match either; nothing else fails
    assert failed[0] == claim and all(f.startswith("policy_levels.") for f in failed[1:])
    assert len(failed) == 1 or claim == "permuted_privacy.distance"


def test_audit_without_the_original_checks_what_the_release_allows(release, keys, capsys):
    edit_statement(release, keys["private"], lambda s: s["predicate"]["claims"].update(k=5))
    code = verifier(["audit", str(release), "--key", str(keys["public"])])
    out = capsys.readouterr().out
    assert code == 1 and "FALSE: k" in out and "not checked (needs the original table (--original)): permuted_privacy.distance" in out
    last = out.strip().splitlines()[-1]  # the line a reader acts on comes last
    assert last.startswith("AUDIT FAILED: 1 of ") and "checked claims are false (k); " in last and "not checked" in last
    edit_statement(release, keys["private"], lambda s: s["predicate"]["claims"].update(k=1))
    assert verifier(["audit", str(release), "--key", str(keys["public"])]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("AUDIT PASSED: all ")
    # ...and what the release does for people, under the policy its manifest names (issue 60, item 5)
    levels = json.loads((release / "manifest.json").read_text())["predicate"]["claims"]["policy_levels"]
    assert last.endswith(f'What it does for people, under the verdict policy "permuted-privacy default" (as the '
                         f"publisher signed them): exposed {levels['exposed']:,}, at risk {levels['at_risk']:,}, "
                         f"protected {levels['protected']:,} of {levels['records']:,} records."), last


# ----------------------------------------------------------------------------- keys and publishing (22-27)


def test_case_22_keygen_permissions_and_no_overwrite(tmp_path, capsys):
    old = os.umask(0)
    try:
        assert publisher(["keygen", "--out", str(tmp_path / "k"), "--unencrypted"]) == 0
    finally:
        os.umask(old)
    out = capsys.readouterr().out
    private = tmp_path / "k" / "private.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    fp = hashlib.sha256(load_private_key(private, None).public_raw).hexdigest()
    assert fp in out
    before = private.read_bytes()
    assert publisher(["keygen", "--out", str(tmp_path / "k"), "--unencrypted"]) == 4
    assert "OUTPUT_EXISTS" in capsys.readouterr().err and private.read_bytes() == before
    os.chmod(private, 0o644)
    with pytest.raises(Exception) as info:
        load_private_key(private, None)
    assert info.value.reason == "KEY_PERMISSIONS" and info.value.exit_code == 4


def test_case_23_encrypted_keys(tmp_path, capsys):
    passfile = write(tmp_path / "pass", "correct horse\n")
    assert publisher(["keygen", "--out", str(tmp_path / "k"), "--passphrase-file", str(passfile)]) == 0
    out = capsys.readouterr()
    assert "correct horse" not in out.out + out.err
    private = tmp_path / "k" / "private.pem"
    assert private.read_bytes().startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    load_private_key(private, b"correct horse")
    cases = [(private, None, "KEY_ENCRYPTED"), (private, b"wrong", "KEY_PASSPHRASE"),
             (tmp_path / "k" / "public.pem", None, "KEY_TYPE")]
    plain_dir = tmp_path / "plain"
    keygen(plain_dir, None)
    cases.append((plain_dir / "private.pem", b"x", "KEY_NOT_ENCRYPTED"))
    rsa_pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    rsa_path = write(tmp_path / "rsa.pem", rsa_pem)
    os.chmod(rsa_path, 0o600)
    cases.append((rsa_path, None, "KEY_TYPE"))
    for path, passphrase, reason in cases:
        with pytest.raises(Exception) as info:
            load_private_key(path, passphrase)
        assert info.value.reason == reason, (path, reason)
        assert b"correct horse".decode() not in str(info.value)


def test_case_24_key_not_matching_the_public_key(keys, tmp_path, capsys):
    _, other_pub, _, _ = keygen(tmp_path / "other", None)
    out = tmp_path / "rel"
    code = publisher(["release", "--input", str(ORIGINAL), "--method", "rank_swapping", "--param", "p=20",
                      "--key", str(keys["private"]), "--public-key", str(other_pub), "--dataset-id", "d",
                      "--out", str(out)])
    assert code == 4 and "KEY_MISMATCH" in capsys.readouterr().err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["other"]


def test_case_25_failure_while_publishing_leaves_nothing(keys, tmp_path, monkeypatch, capsys):
    key_before = keys["private"].read_bytes()

    def broken_rename(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", broken_rename)  # the OS fails; our code is real
    out = tmp_path / "rel"
    code = publisher(["release", "--input", str(ORIGINAL), "--method", "rank_swapping", "--param", "p=20",
                      "--key", str(keys["private"]), "--dataset-id", "d", "--out", str(out)])
    assert code == 4 and "WRITE_FAILED" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no release, no temporary directory
    assert keys["private"].read_bytes() == key_before


def test_case_26_leak_scan(keys, tmp_path, capsys):
    out = tmp_path / "rel"
    seed = "918273645031"
    code = publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param", "relative_sd=0.5",
                      "--then", "reverse_mapping", "--seed", seed, "--key", str(keys["private"]),
                      "--dataset-id", "d", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    private = serialization.load_pem_private_key(keys["private"].read_bytes(), None)
    raw = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    secrets = [seed.encode(), raw, raw.hex().encode(), base64.b64encode(raw), keys["private"].read_bytes()[30:80],
               b"PRIVATE KEY"]
    files = b"".join(p.read_bytes() for p in out.iterdir())
    decoded = base64.b64decode(json.loads((out / ENVELOPE).read_bytes())["payload"])
    for secret in secrets:  # not in the release, nor in anything printed
        assert secret not in files + decoded + (captured.out + captured.err).encode(), secret[:20]
    # no path of the protector's machine, no user name in the release
    for private_text in (str(tmp_path), str(ORIGINAL.parent), "/tmp/", "/home/", os.environ.get("USER") or "\x00"):
        assert private_text.encode() not in files + decoded


def test_case_27_degenerate_parameters_refused(keys, tmp_path, capsys):
    out = tmp_path / "rel"
    code = publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param", "relative_sd=0",
                      "--key", str(keys["private"]), "--dataset-id", "d", "--out", str(out)])
    assert code == 3 and "PARAMETER_DEGENERATE" in capsys.readouterr().err and not out.exists()


def test_private_key_repr_shows_no_key_material(keys):
    key = load_private_key(keys["private"], None)
    assert "fingerprint=" in repr(key) and "PRIVATE" not in repr(key)


def test_production_key_of_the_noise_stream_never_leaks(keys, tmp_path, capsys, monkeypatch):
    """spec/reliability.md P0: the OS entropy behind an unseeded release is set to a canary (the stdlib's
    secrets.randbits, not our code) and searched for in the release and in everything printed."""
    import secrets as stdlib_secrets

    canary = int.from_bytes(b"CANARY-KEY-0123456789-abcdefghij", "big")  # 256 bits
    asked = []

    def randbits(k: int) -> int:
        asked.append(k)
        return canary

    monkeypatch.setattr(stdlib_secrets, "randbits", randbits)
    out = tmp_path / "rel"
    assert publisher(["release", "--input", str(ORIGINAL), "--method", "rank_swapping", "--param", "p=20",
                      "--key", str(keys["private"]), "--dataset-id", "d", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert asked == [256]
    files = b"".join(p.read_bytes() for p in out.iterdir())
    decoded = base64.b64decode(json.loads((out / ENVELOPE).read_bytes())["payload"])
    forms = [str(canary).encode(), f"{canary:x}".encode(), canary.to_bytes(32, "big"), b"CANARY-KEY",
             base64.b64encode(canary.to_bytes(32, "big"))[:24]]
    for form in forms:
        assert form not in files + decoded + (captured.out + captured.err).encode(), form[:16]
    toolkit = json.loads(decoded)["predicate"]["toolkit"]
    assert toolkit["randomness"].startswith("ChaCha20") and "randomness: ChaCha20" in captured.out


# ----------------------------------------------------------------------------- Parquet releases (SPEC 9: release.parquet)


def test_parquet_release_carries_the_same_data_as_the_csv_release(keys, tmp_path, capsys):
    """Same seed, two formats: the same values, so the same checks; only the data file differs."""
    outs = {}
    for fmt in ("csv", "parquet"):
        outs[fmt] = tmp_path / fmt
        assert publisher(["release", "--input", str(ORIGINAL), "--method", "additive_noise", "--param",
                          "relative_sd=0.8", "--then", "reverse_mapping", "--seed", "7", "--format", fmt,
                          "--key", str(keys["private"]), "--dataset-id", "paper-example",
                          "--out", str(outs[fmt])]) == 0
    assert sorted(os.listdir(outs["parquet"])) == ["datapackage.json", "manifest.dsse.json", "manifest.json",
                                                   "release.parquet"]
    statement = json.loads((outs["parquet"] / MANIFEST).read_bytes())
    assert statement["subject"][0]["mediaType"] == "application/vnd.apache.parquet"
    tables = {fmt: verify_release(outs[fmt], load_public_key(keys["public"])).table() for fmt in outs}
    np.testing.assert_array_equal(tables["parquet"].values, tables["csv"].values)
    record = write(tmp_path / "me.json", '{"x1": 100.87, "x2": 902.21, "x3": 5108.54}')
    reports = {}
    for fmt, out in outs.items():
        capsys.readouterr()
        assert verifier(["check", str(out), "--key", str(keys["public"]), "--record", str(record), "--json"]) == 0
        reports[fmt] = {k: v for k, v in json.loads(capsys.readouterr().out).items() if k != "release"}
    assert reports["parquet"] == reports["csv"]
    assert verifier(["audit", str(outs["parquet"]), "--key", str(keys["public"]), "--original", str(ORIGINAL)]) == 0


def test_parquet_release_tampering_and_wrong_media_type_are_refused(keys, tmp_path, capsys):
    out = tmp_path / "rel"
    assert publisher(["release", "--input", str(ORIGINAL), "--method", "rank_swapping", "--param", "p=20",
                      "--format", "parquet", "--key", str(keys["private"]), "--dataset-id", "d", "--out", str(out)]) == 0
    capsys.readouterr()
    data = out / "release.parquet"
    original = data.read_bytes()
    data.write_bytes(original[:100] + bytes([original[100] ^ 1]) + original[101:])
    expect_fail(out, keys["public"], capsys, "DIGEST_MISMATCH")
    data.write_bytes(original)
    edit_statement(out, keys["private"], lambda s: s["subject"][0].update(mediaType="text/csv"))
    expect_fail(out, keys["public"], capsys, "SCHEMA_INVALID")
    edit_statement(out, keys["private"], lambda s: s["subject"][0].update(
        name="release.txt", mediaType="application/vnd.apache.parquet"))
    data.rename(out / "release.txt")
    expect_fail(out, keys["public"], capsys, "SCHEMA_INVALID")


def _recode(text: str, url: bool, pad: bool) -> str:
    out = (base64.urlsafe_b64encode if url else base64.b64encode)(base64.b64decode(text)).decode()
    return out if pad else out.rstrip("=")


@pytest.mark.parametrize("url", [False, True], ids=["standard", "url-safe"])
@pytest.mark.parametrize("pad", [True, False], ids=["padded", "unpadded"])
def test_envelope_in_either_base64_alphabet_verifies(tmp_path, capsys, url, pad):
    """The DSSE spec allows standard and URL-safe base64; padding may be left off.

    The frozen golden release is used because its envelope holds both '+' and '/', so the URL-safe
    recoding changes it on every run; a freshly keyed signature has neither about once in 15 runs.
    """
    release = shutil.copytree(GOLDEN / "release", tmp_path / "release")
    env = json.loads((release / ENVELOPE).read_bytes())
    encoded = env["payload"] + env["signatures"][0]["sig"]
    assert {"+", "/"} <= set(encoded)  # the test means it
    env["payload"] = _recode(env["payload"], url, pad)
    env["signatures"][0]["sig"] = _recode(env["signatures"][0]["sig"], url, pad)
    assert (set("-_") <= set(env["payload"] + env["signatures"][0]["sig"])) is url
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    assert verifier(["verify", str(release), "--key", str(GOLDEN / "public.pem")]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("sig", ["mixed", "three pads", "stray pad", "one char over", "space", "newline"])
def test_envelope_base64_refusals(release, keys, capsys, sig):
    env = json.loads((release / ENVELOPE).read_bytes())
    good = env["signatures"][0]["sig"]
    body = good.rstrip("=")
    env["signatures"][0]["sig"] = {
        "mixed": "-+" + good[2:],
        "three pads": body + "===",
        "stray pad": body + "AA" + "=",
        "one char over": body + "A" * ((1 - len(body)) % 4 or 4),
        "space": good[:8] + " " + good[8:],
        "newline": good[:8] + "\n" + good[8:],
    }[sig]
    (release / ENVELOPE).write_bytes(dumps_manifest(env))
    expect_fail(release, keys["public"], capsys, "SIGNATURE_MALFORMED")


def test_a_degenerate_refusal_says_how_many_which_rows_and_what_avoids_it(tmp_path, capsys):
    """Issue 36, item 6: on the paper's 20 records, noise of 0.3 leaves a record unchanged and linked on some draws.

    The refusal counts it out of 20, names its input row, and the weakest stronger relative_sd that avoids it
    on the same secret draws; that setting then publishes, and the allowed release holds the row unchanged."""
    from conftest import PAPER
    from publisher.cli import main as publisher

    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    source = PAPER / "original.csv"

    def release(sd: str, *extra: str) -> int:
        return publisher(["release", "--input", str(source), "--method", "additive_noise", "--param",
                          f"relative_sd={sd}", "--then", "reverse_mapping", "--seed", "5", "--key",
                          str(tmp_path / "keys" / "private.pem"), "--dataset-id", "paper", "--out",
                          str(tmp_path / f"r{sd}{len(extra)}"), *extra])

    capsys.readouterr()
    assert release("0.3") == 3
    err = capsys.readouterr().err.strip()
    found = re.fullmatch(r"FAIL: -: OUTPUT_DEGENERATE: this release exposes records: 1 of 20 records would be "
                         r"published unchanged and linked by the intruder with confidence \(input row (\d+)\)\. The "
                         r"weakest stronger setting that avoids it on the same secret draws, as publisher calibrate "
                         r"sweeps, is --param relative_sd=([0-9.]+); or pass --allow-degenerate to publish it "
                         r"anyway; nothing was written", err)
    assert found, err
    row, weakest = int(found.group(1)), found.group(2)
    assert weakest == "0.45" and not (tmp_path / "r0.30").exists()
    assert release(weakest) == 0  # what the refusal named does publish
    assert release("0.3", "--allow-degenerate") == 0
    original = source.read_text().splitlines()[row].split(",")
    released = [line.split(",") for line in (tmp_path / "r0.31" / "release.csv").read_text().splitlines()[1:]]
    assert [float(v) for v in original] in [[float(v) for v in r] for r in released]  # that row, unchanged
