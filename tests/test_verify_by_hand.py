"""docs/release-format.md section 5: the hand check with bash, jq and OpenSSL works, and fails where it must (issue 18).

The script is docs/verify-by-hand.sh, shown verbatim in the section. Each
test runs it with bash from a folder that is not the release's, on a copy
of the golden release, with the key kept outside the release.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from verifier.releases.verification import is_weak_key

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "verify-by-hand.sh"
GOLDEN = ROOT / "tests" / "data" / "golden"
FINGERPRINT = "beebd58ce6419555bf6bfd1143c5e7685c45412f3569a6b1c576c53e7e61deba"
FINGERPRINT_V2 = "46077fcd70ce8130e7778d0ddf95eba5610f5ffe43e8452dac8e155039d5b243"
ED25519_SPKI = bytes.fromhex("302a300506032b6570032100")
#: the eight points of small order (libsodium's list) and the sign-flipped forms of the two with x = 0
SMALL_ORDER = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    "0100000000000000000000000000000000000000000000000000000000000080",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
]
P = 2**255 - 19

pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in ("bash", "jq", "openssl")),
                                reason="the hand check needs bash, jq and openssl")


def _run(release: Path, key: Path, *more: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), str(release), str(key), *more], capture_output=True, text=True,
                          cwd=cwd)


@pytest.fixture(params=["v1", "v2"])
def golden(tmp_path, request):
    """The golden release of format version 1, or of version 2 (with datapackage.json)."""
    source = GOLDEN if request.param == "v1" else GOLDEN / "v2"
    release = tmp_path / "release"
    shutil.copytree(source / "release", release)
    key = tmp_path / "keys" / "public.pem"
    key.parent.mkdir()
    shutil.copy(source / "public.pem", key)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return release, key, elsewhere


def _pem(raw: bytes) -> str:
    return ("-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(ED25519_SPKI + raw).decode()
            + "\n-----END PUBLIC KEY-----\n")


def test_the_section_shows_the_script_verbatim():
    doc = (ROOT / "docs" / "release-format.md").read_text()
    section = doc[doc.index("## 5. Verifying by hand"):doc.index("## 6.")]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    assert SCRIPT.read_text() in blocks


def test_golden_release_verifies_by_hand_and_still_with_the_verifier(golden):
    from verifier.cli import main

    release, key, elsewhere = golden
    before = sorted(p.name for p in release.iterdir())
    fingerprint = FINGERPRINT if not (release / "datapackage.json").exists() else FINGERPRINT_V2
    done = _run(release, key, fingerprint, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert f"fingerprint {fingerprint}" in done.stdout
    assert "dataset paper-example, version 1" in done.stdout
    assert sorted(p.name for p in release.iterdir()) == before  # nothing written into the release
    assert list(elsewhere.iterdir()) == []
    assert main(["verify", str(release), "--key", str(key)]) == 0


def test_url_safe_unpadded_envelope_verifies_by_hand(golden):
    release, key, elsewhere = golden
    env_path = release / "manifest.dsse.json"
    env = json.loads(env_path.read_text())
    for holder, field in ((env, "payload"), (env["signatures"][0], "sig")):
        holder[field] = base64.urlsafe_b64encode(base64.b64decode(holder[field])).decode().rstrip("=")
    env_path.write_text(json.dumps(env))
    assert _run(release, key, cwd=elsewhere).returncode == 0


@pytest.mark.parametrize("damage, message", [
    ("data byte", "release.csv: sha256 differs"),
    ("data size", "release.csv: size"),
    ("extra file", "files the statement does not list: public.pem"),
    ("payload type", "payloadType is not application/vnd.in-toto+json"),
    ("manifest", "manifest.json is not the signed payload"),
    ("signature", "the signature does not verify"),
    ("missing key", "no key file"),
    ("wrong fingerprint", "is not the announced"),
])
def test_each_defect_fails_with_one_line_and_exit_1(golden, damage, message):
    release, key, elsewhere = golden
    data = release / "release.csv"
    env_path = release / "manifest.dsse.json"
    env = json.loads(env_path.read_text())
    more: list[str] = []
    if damage == "data byte":
        raw = bytearray(data.read_bytes())
        raw[40] ^= 1
        data.write_bytes(bytes(raw))
    elif damage == "data size":
        data.write_bytes(data.read_bytes() + b"1,2,3\n")
    elif damage == "extra file":
        shutil.copy(key, release / "public.pem")
    elif damage == "payload type":
        env["payloadType"] = "application/json"
    elif damage == "manifest":
        (release / "manifest.json").write_text((release / "manifest.json").read_text() + " ")
    elif damage == "signature":
        sig = bytearray(base64.b64decode(env["signatures"][0]["sig"]))
        sig[5] ^= 1
        env["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    elif damage == "missing key":
        key = key.with_name("absent.pem")
    elif damage == "wrong fingerprint":
        more = ["0" * 64]
    env_path.write_text(json.dumps(env))
    done = _run(release, key, *more, cwd=elsewhere)
    assert done.returncode == 1
    assert done.stderr.startswith("FAIL: ") and message in done.stderr and done.stderr.count("\n") == 1
    assert "OK" not in done.stdout
    assert "e3b0c442" not in done.stdout + done.stderr  # never the sha256 of nothing, posing as a fingerprint


@pytest.mark.parametrize("raw_hex", SMALL_ORDER + [
    (y + (s << 255)).to_bytes(32, "little").hex() for y in range(P, 2**255) for s in (0, 1)])
def test_small_order_and_non_canonical_keys_are_refused(golden, tmp_path, raw_hex):
    """Every key the verifier calls weak (WEAK_KEY) the script refuses too, before any signature."""
    release, _, elsewhere = golden
    raw = bytes.fromhex(raw_hex)
    assert is_weak_key(raw)
    key = tmp_path / "weak.pem"
    key.write_text(_pem(raw))
    done = _run(release, key, cwd=elsewhere)
    assert done.returncode == 1
    assert "small-order or non-canonical" in done.stderr, done.stderr


def test_a_weighted_release_verifies_by_hand_and_a_changed_weight_fails(tmp_path):
    """weights.csv is one more listed file: the script checks it like the data."""
    from publisher.cli import main as publisher

    source = tmp_path / "w.csv"
    source.write_text("a,b,w\n" + "".join(f"{i % 7},{(i * 5) % 11},{1 + i % 4}\n" for i in range(30)))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    release = tmp_path / "rel"
    assert publisher(["release", "--input", str(source), "--method", "additive_noise", "--param", "relative_sd=0.3",
                      "--weight-column", "w", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "w",
                      "--out", str(release)]) == 0
    done = _run(release, tmp_path / "keys" / "public.pem", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("OK:"), done.stderr
    weights = release / "weights.csv"
    weights.write_text(weights.read_text().replace("\n1.0\n", "\n9.0\n", 1))
    done = _run(release, tmp_path / "keys" / "public.pem", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [
        "FAIL: weights.csv: sha256 differs from the statement's"], done.stderr
