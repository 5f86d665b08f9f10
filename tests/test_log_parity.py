"""A release's log proof under her log policy: the command line, the TUI and the page (in Chromium) agree on every
case of issue 39, item 5 they can see (the page keeps no memory of checkpoints: the history checks are the
command line's and the TUI's, tests/test_witness.py and tests/test_transparency.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from conftest import PAPER
from publisher.cli import main as publisher
from test_page import browser  # noqa: F401 - the fixture: one Chromium on the page for the module
from test_tui import opened, pilot_test, press_button, shown
from test_witness import _key, _raw
from verifier.cli import main as verifier
from verifier.transparency.note import COSIGNATURE_TYPE, vkey

ORIGIN = "stats.example/releases"
HER = {"x1": 100.87, "x2": 902.21, "x3": 5108.54}
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """Two releases of one log, its checkpoint cosigned by two of three witnesses and the proofs refreshed; a
    policy asking two of the three, one asking none, and her record."""
    root = tmp_path_factory.mktemp("logged")
    for keys in ("keys", "logkeys"):
        assert publisher(["keygen", "--out", str(root / keys), "--unencrypted"]) == 0
    log_pem = str(root / "logkeys" / "private.pem")
    assert publisher(["log", "init", str(root / "log"), "--origin", ORIGIN, "--key", log_pem]) == 0
    log_key = serialization.load_pem_private_key(Path(log_pem).read_bytes(), None)
    (root / "log.vkey").write_text(vkey(ORIGIN, 1, _raw(log_key)) + "\n")
    for version in (1, 2):  # two seeds: two releases of their own data (a copy would count once in her joint check)
        assert publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise",
                          "--param", "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed",
                          str(4 + version), "--allow-degenerate", "--key", str(root / "keys" / "private.pem"), "--dataset-id",
                          "demo", "--release-version", str(version), "--log", str(root / "log"), "--log-key",
                          log_pem, "--out", str(root / f"r{version}")]) == 0
    witnesses = []
    for name in ("w1", "w2", "w3"):
        witnesses.append((name, _key(root / f"{name}.pem")))
    for name in ("w1", "w2"):
        assert verifier(["witness", "cosign", str(root / "log"), "--state", str(root / f"{name}-state"), "--key",
                         str(root / f"{name}.pem"), "--name", f"{name}.example/witness", "--log-key",
                         str(root / "log.vkey")]) == 0
    assert publisher(["log", "refresh", str(root / "log"), str(root / "r1.tlog-proof"),
                      str(root / "r2.tlog-proof")]) == 0
    lines = [f"log {(root / 'log.vkey').read_text().strip()}",
             *(f"witness {n} {vkey(f'{n}.example/witness', COSIGNATURE_TYPE, _raw(k))}" for n, k in witnesses)]
    (root / "two.policy").write_text("\n".join([*lines, "group two 2 w1 w2 w3", "quorum two"]) + "\n")
    (root / "none.policy").write_text("\n".join([lines[0], "quorum none"]) + "\n")
    (root / "me.json").write_text(json.dumps(HER))
    return root


def _b64_swap(text: str, old: bytes, new: bytes) -> str:
    return text.replace(base64.b64encode(old).decode(), base64.b64encode(new).decode())


def _corpus(root: Path) -> dict[str, tuple[bytes, bytes, str]]:
    """Each bad input: the proof, the policy, and the reason all three front ends give."""
    proof, policy = (root / "r1.tlog-proof").read_bytes(), (root / "two.policy").read_bytes()
    head, note = proof.split(b"\n\n", 1)
    hashed = head.split(b"\n")[2]
    text = note.decode()
    w2 = text.rstrip("\n").rsplit("\n", 1)[1]
    blob = base64.b64decode(w2.rsplit(" ", 1)[1])
    flipped = bytearray(base64.b64decode(hashed))
    flipped[0] ^= 1
    canonical = hashed.decode()
    loose = canonical[:-2] + B64[B64.index(canonical[-2]) | 1] + "="  # the same bytes, not canonically written
    loose = loose if loose != canonical else canonical[:-2] + B64[B64.index(canonical[-2]) | 2] + "="
    other = root / "elsewhere.pem"
    stranger = _key(other) if not other.exists() else serialization.load_pem_private_key(other.read_bytes(), None)
    cases = {
        "header": (proof.replace(b"tlog-proof@v1", b"tlog-proof@v2"), policy, "LOG_MALFORMED"),
        "index 00": (proof.replace(b"index 0\n", b"index 00\n"), policy, "LOG_MALFORMED"),
        "size 007": (proof.replace(f"{ORIGIN}\n2\n".encode(), f"{ORIGIN}\n007\n".encode()), policy, "LOG_MALFORMED"),
        "size -1": (proof.replace(f"{ORIGIN}\n2\n".encode(), f"{ORIGIN}\n-1\n".encode()), policy, "LOG_MALFORMED"),
        "size 2^63": (proof.replace(f"{ORIGIN}\n2\n".encode(), f"{ORIGIN}\n{2**63}\n".encode()), policy,
                      "LOG_MALFORMED"),
        "a non-canonical hash": (proof.replace(hashed, loose.encode()), policy, "LOG_MALFORMED"),
        "a control character": (proof.replace(f"{ORIGIN}\n2".encode(), f"{ORIGIN}\x01\n2".encode()), policy,
                                "LOG_MALFORMED"),
        "another release's proof": ((root / "r2.tlog-proof").read_bytes(), policy, "LOG_PROOF_INVALID"),
        "another index": (proof.replace(b"index 0\n", b"index 1\n"), policy, "LOG_PROOF_INVALID"),
        "an extra hash": (proof.replace(hashed, hashed + b"\n" + hashed), policy, "LOG_PROOF_INVALID"),
        "a missing hash": (proof.replace(hashed + b"\n", b""), policy, "LOG_PROOF_INVALID"),
        "a flipped hash": (proof.replace(hashed, base64.b64encode(bytes(flipped))), policy, "LOG_PROOF_INVALID"),
        "no log signature": (head + b"\n\n" + "\n".join(
            line for line in text.split("\n") if not line.startswith(f"\u2014 {ORIGIN} ")).encode(), policy,
            "LOG_SIGNATURE"),
        "a forged cosignature": (head + b"\n\n" + _b64_swap(text, blob, blob[:4] + bytes(72)).encode(), policy,
                                 "WITNESS_QUORUM"),
        "one witness of two": (head + b"\n\n" + text.replace(w2 + "\n", "").encode(), policy, "WITNESS_QUORUM"),
        "another log's key": (proof, policy.replace(policy.split(b"\n")[0], f"log {vkey(ORIGIN, 1, _raw(stranger))}"
                                                                            .encode()), "LOG_SIGNATURE"),
        "a policy line": (proof, policy + b"frobnicate\n", "POLICY_INVALID"),
        "a threshold no ASCII digit writes": (proof, policy.replace(b"group two 2 ", "group two \u00b2 ".encode()),
                                             "POLICY_INVALID"),
    }
    return cases


def _cli(root: Path, proof: Path, policy: Path, capsys, release: str = "r1") -> tuple[int, dict | str]:
    capsys.readouterr()
    code = verifier(["check", str(root / release), "--key", str(root / "keys" / "public.pem"), "--record",
                     str(root / "me.json"), "--no-random-match", "--json", "--proof", str(proof), "--log-policy",
                     str(policy)])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else err


PAGE = """
const [files, pem, record, proof, policy, done] = arguments;
const decode = (v) => Uint8Array.from(atob(v), c => c.charCodeAt(0));
const bytes = {};
for (const [k, v] of Object.entries(files)) bytes[k] = decode(v);
const options = {randomMatch: false, proof: decode(proof), proofName: "r1.tlog-proof", logPolicy: decode(policy),
                 logPolicyName: "p.policy"};
window.permutedPrivacy.checkRecord({files: bytes, publicKeyPem: pem, record, options})
  .then(done, e => done({error: String(e)}));
"""


def _page(browser, root: Path, proof: bytes, policy: bytes) -> dict:  # noqa: F811 - the fixture's value
    files = {p.name: base64.b64encode(p.read_bytes()).decode() for p in (root / "r1").iterdir()}
    return browser.execute_async_script(PAGE, files, (root / "keys" / "public.pem").read_text(), HER,
                                        base64.b64encode(proof).decode(), base64.b64encode(policy).decode())


def test_a_logged_release_in_the_page_equals_the_command_line(browser, logged, capsys, tmp_path):  # noqa: F811
    """Cosigned by two of three: no unwitnessed notice; under a policy asking no witness: the notice, word for
    word; the log's place and witnesses alike (the page has no history lines)."""
    seen = {}
    for policy in ("two.policy", "none.policy"):
        code, cli = _cli(logged, logged / "r1.tlog-proof", logged / policy, capsys)
        page = _page(browser, logged, (logged / "r1.tlog-proof").read_bytes(), (logged / policy).read_bytes())
        assert code == 0 and page["verified"] is True and "reason" not in page, page
        assert page["verdict"] == cli["verdict"]
        assert {k: v for k, v in page["log"].items() if k != "history"} == {
            k: v for k, v in cli["log"].items() if k != "history"}
        seen[policy] = [f["rule"] for f in cli["verdict"]["findings"] if f["severity"] == "notice"]
    assert cli["log"]["index"] == 0 and cli["log"]["size"] == 2
    assert seen == {"two.policy": [], "none.policy": ["unwitnessed"]}


def test_every_bad_log_input_fails_in_the_page_as_on_the_command_line(browser, logged, capsys, tmp_path):  # noqa: F811
    for name, (proof, policy, reason) in _corpus(logged).items():
        (tmp_path / "p.tlog-proof").write_bytes(proof)
        (tmp_path / "p.policy").write_bytes(policy)
        code, err = _cli(logged, tmp_path / "p.tlog-proof", tmp_path / "p.policy", capsys)
        assert code == (3 if reason == "POLICY_INVALID" else 1) and err.count("\n") == 1, (name, err)
        assert err.split(": ")[2] == reason, (name, err)
        page = _page(browser, logged, proof, policy)
        assert page["verified"] is False and page["reason"] == reason, (name, page)


@pilot_test
async def test_the_tui_shows_the_log_and_refuses_every_bad_log_input(logged, tmp_path):
    """Her proof and policy in the release tab: 'logged at index 0 of 2, cosigned by 2 of 3 witnesses', then the
    first bad input of the corpus of each reason refused with the command line's reason, in one session (the TUI
    calls the command line's core, standing.py; the page, its own twin, takes every case above)."""
    from textual.widgets import Input

    async with opened(logged / "r1", logged / "keys" / "public.pem", size=(100, 40),
                      proof=str(logged / "r1.tlog-proof"), log_policy=str(logged / "two.policy")) as (app, pilot):
        text = " ".join(shown(app, "#verification").split())
        assert text.startswith("VERIFIED") and (f"log logged at index 0 of 2 in {ORIGIN}, cosigned by 2 of 3 "
                                                "witnesses") in text
        assert app.query_one("#results-scroll").unwitnessed is None
        firsts = {}
        for name, case in _corpus(logged).items():
            firsts.setdefault(case[2], (name, case))
        assert len(firsts) == 5
        for name, (proof, policy, reason) in firsts.values():
            (tmp_path / f"{len(name)}.tlog-proof").write_bytes(proof)
            (tmp_path / f"{len(name)}.policy").write_bytes(policy)
            app.query_one("#proof-path", Input).value = str(tmp_path / f"{len(name)}.tlog-proof")
            app.query_one("#log-policy-path", Input).value = str(tmp_path / f"{len(name)}.policy")
            await press_button(pilot, "#verify")
            text = shown(app, "#verification")
            assert text.startswith("NOT VERIFIED") and f": {reason}: " in text, (name, text)


TWINS = """
const [proofs, notes, vkeyText, done] = arguments;
const pp = window.permutedPrivacy;
const decode = (v) => Uint8Array.from(atob(v), c => c.charCodeAt(0));
(async () => {
  const included = [];
  for (const [i, n, leaf, path, root] of proofs) {
    included.push(await pp.verify_inclusion(BigInt(i), BigInt(n), decode(leaf), path.map(decode), decode(root)));
  }
  const read = [];
  for (const note of notes) {
    try {
      const parsed = pp.parse_note(decode(note), "note");
      const [name, kind, pub] = await pp.parse_vkey(vkeyText, "vkey");
      read.push([(await pp.verify_signature(parsed, name, pub, "note")) !== null, pp.parse_checkpoint(parsed.text, "note").size.toString()]);
    } catch (e) {
      read.push(e.reason || String(e));
    }
  }
  return { included, read };
})().then(done, e => done({error: String(e)}));
"""


def _python_read(raw: bytes, vkey_text: str):
    from verifier.releases.listed_files import ReleaseError
    from verifier.transparency.note import parse_checkpoint, parse_note, parse_vkey, verify_signature

    try:
        note = parse_note(raw, "note")
        name, _, public = parse_vkey(vkey_text, "vkey")
        return [verify_signature(note, name, public, "note") is not None, str(parse_checkpoint(note.text, "note").size)]
    except ReleaseError as exc:
        return exc.reason


def test_the_pages_merkle_and_note_twins_answer_as_python(browser):  # noqa: F811
    """verify_inclusion on every leaf of every tree up to 24 leaves, with a flipped bit, an extra and a missing
    hash; parse_note, parse_vkey, verify_signature and parse_checkpoint on good and hostile notes: the same
    answers, or the same reason, in the page and in Python."""
    import random

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from verifier.transparency.merkle import Tree, leaf_hash, verify_inclusion
    from verifier.transparency.note import checkpoint_text, signature_line

    b = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
    rng = random.Random(39)
    proofs = []
    for n in range(1, 25):
        tree = Tree([leaf_hash(f"entry {k}".encode()) for k in range(n)])
        for i in range(n):
            path = tree.inclusion(i)
            flipped = [bytes(h) for h in path]
            if flipped:
                j = rng.randrange(len(flipped))
                flipped[j] = bytes([flipped[j][0] ^ 1]) + flipped[j][1:]
            for p, index in ((path, i), (flipped, i), (path + [tree.root()], i), (path[:-1], i), (path, n - 1 - i)):
                proofs.append([index, n, b(tree.leaves[i]), [b(h) for h in p], b(tree.root())])
    key = Ed25519PrivateKey.generate()
    text = checkpoint_text(ORIGIN, 5, bytes(range(32)))
    good = text + "\n" + signature_line(ORIGIN, 1, _raw(key), key.sign(text.encode()))
    notes = [good, good.replace("\n5\n", "\n6\n"), good.replace("\n5\n", "\n05\n"), good + "\u2014 other AAAAAA==\n",
             good.replace(ORIGIN, ORIGIN + "\u2028", 1), "\ufeff" + good, good[:-1], good.replace("\n\n", "\n"),
             good.replace("\u2014 ", "- "), good + "\u2014 a+b AAAAAA==\n", good + "\u2014 x AAAA\n",
             good + "\u2014 x AAAAA=\n", good.replace(ORIGIN, "x\ty", 1), text + "\n",
             good.replace("\n5\n", f"\n{2**63}\n")]
    raw = [n.encode() for n in notes] + [b"\xff" + good.encode()]
    vkey_text = vkey(ORIGIN, 1, _raw(key))
    page = browser.execute_async_script(TWINS, proofs, [b(r) for r in raw], vkey_text)
    assert "error" not in page, page
    expected = [verify_inclusion(i, n, base64.b64decode(leaf), [base64.b64decode(h) for h in path],
                                 base64.b64decode(root)) for i, n, leaf, path, root in proofs]
    # every true path (300); the mirrored index where it is the same leaf (odd n: 12); n = 1, whose empty path
    # has no bit to flip and no hash to lose (2)
    assert page["included"] == expected and sum(expected) == sum(range(1, 25)) + 12 + 2
    assert page["read"] == [_python_read(r, vkey_text) for r in raw]
    assert page["read"][0] == [True, "5"] and page["read"][1] == "LOG_SIGNATURE"


def test_her_joint_check_takes_each_release_s_proof(logged, capsys, tmp_path):
    """verifier joint with a proof per release: cosigned by two of three, her joint verdict carries no unwitnessed
    notice and names each release's place in the log; under a policy asking no witness, or with no proof, the
    notice stays. A proof of another release, or too few proofs, is refused."""
    base = ["joint", str(logged / "r1"), str(logged / "r2"), "--key", str(logged / "keys" / "public.pem"),
            "--record", str(logged / "me.json"), "--json"]
    proofs = ["--proof", str(logged / "r1.tlog-proof"), "--proof", str(logged / "r2.tlog-proof")]
    found = {}
    for name, extra in (("two", [*proofs, "--log-policy", str(logged / "two.policy")]),
                        ("none", [*proofs, "--log-policy", str(logged / "none.policy")]), ("no proof", [])):
        capsys.readouterr()
        assert verifier([*base, *extra, "--state", str(tmp_path / name)] if extra else base) == 0
        out = json.loads(capsys.readouterr().out)
        found[name] = ([f["rule"] for f in out["verdict"]["findings"] if f["severity"] == "notice"],
                       [None if r["log"] is None else (r["log"]["index"], r["log"]["size"]) for r in out["releases"]])
    assert found == {"two": ([], [(0, 2), (1, 2)]), "none": (["unwitnessed"], [(0, 2), (1, 2)]),
                     "no proof": (["unwitnessed"], [None, None])}
    capsys.readouterr()
    assert verifier([*base[:-1], "--proof", str(logged / "r1.tlog-proof"), "--log-policy",
                     str(logged / "two.policy")]) == 2
    assert "give --proof once per release" in capsys.readouterr().err
    assert verifier([*base[:-1], "--proof", str(logged / "r2.tlog-proof"), "--proof", str(logged / "r2.tlog-proof"),
                     "--log-policy", str(logged / "two.policy"), "--state", str(tmp_path / "swapped")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("FAIL: ") and err.count("\n") == 1
    capsys.readouterr()
    assert verifier([*base[:-1], *proofs, "--log-policy", str(logged / "two.policy"), "--state",
                     str(tmp_path / "text")]) == 0
    out = capsys.readouterr().out
    assert f"  log of {logged / 'r2'}: " in out and "This release was checked without a log proof" not in out


def test_the_protector_s_report_is_refused_inside_a_log_folder(logged, capsys):
    """Issue 59, item 7: a transparency log's folder is published whole, so the protector's private report is
    refused there as inside a release, before any work; beside the log it is written."""
    root = logged
    for report in (root / "log" / "report.json", root / "log" / "tile" / "report.json"):
        capsys.readouterr()
        code = publisher(["release", "--input", str(PAPER / "original.csv"), "--method", "additive_noise", "--param",
                          "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "200", "--seed", "5",
                          "--allow-degenerate", "--key", str(root / "keys" / "private.pem"), "--dataset-id", "demo",
                          "--out", str(root / "r-private"), "--protector-report", str(report)])
        err = capsys.readouterr().err
        assert code == 4 and "OUTPUT_INSIDE_LOG" in err and "published whole" in err, err
        assert not report.exists() and not (root / "r-private").exists()
