"""Closed on every side, third round (issue 52, item 1): each defect the red team reproduced, with a test that fails
on the code before its fix."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import resign_statement
from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.frontend.output import text_table

ROOT = Path(__file__).resolve().parents[1]
ARX = ROOT / "docs" / "examples" / "arx"
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"


COLUMNS = ["age", "education", "marital-status", "race", "sex", "salary-class"]


def _write(path: Path, rows) -> list[dict]:
    """The Adult sample's six columns ARX reads, of ``rows``, written to ``path``; the rows, as dictionaries."""
    rows = list(rows)
    with path.open("w", newline="") as handle:
        out = csv.DictWriter(handle, COLUMNS, extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)
    return rows


def _arx_release(tmp_path: Path) -> Path:
    _write(tmp_path / "input.csv", csv.DictReader(SAMPLE.open()))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    trees = [a for c in ("age", "education", "marital-status", "race", "sex")
             for a in ("--hierarchy", f"{c}={ARX / f'adult_hierarchy_{c}.csv'}")]
    assert publisher(["release", "--input", str(tmp_path / "input.csv"), "--schema", str(ARX / "adult-arx.json"),
                      "--anonymized", str(ARX / "arx_global_suppression5.csv"), "--produced-by", "ARX 3.9.2", *trees,
                      "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "adult-arx", "--out",
                      str(tmp_path / "release")]) == 0
    return tmp_path / "release"


def test_an_audit_at_80_columns_lists_claims_too_long_for_a_table(tmp_path):
    """The audit of docs/methods.md's own ARX example ended in a RecursionError at 80 columns: a claim's name beside
    any one column passes the width. Each claim is now a row of its own, its figures under it."""
    release = _arx_release(tmp_path)
    done = subprocess.run([sys.executable, "-m", "verifier", "audit", str(release), "--key",
                           str(tmp_path / "keys" / "public.pem"), "--original", str(tmp_path / "input.csv")],
                          capture_output=True, text=True, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"}, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    at = lines.index("utility.attribute_disclosure_of_original_records.salary-class.mean_candidates")
    assert lines[at + 1].startswith("  manifest: ") and lines[at + 3] == "  verdict: true"
    assert any(line.startswith("AUDIT PASSED") for line in lines[-4:])  # wrapped, with what it does for people
    assert all(len(line) <= 80 for line in lines if " " in line.strip())


def test_a_table_whose_first_column_alone_is_too_wide_is_listed():
    wide = "x" * 70
    rows = [[wide, "12345", "abcdef"], ["short", "1", "2"]]
    text = text_table(rows, ["name", "manifest", "recomputed"], width=72)
    assert text.split("\n") == [wide, "  manifest: 12345", "  recomputed: abcdef", "short", "  manifest: 1",
                                "  recomputed: 2"]
    assert text_table(rows, ["name", "manifest", "recomputed"], width=None).startswith("name")  # no limit: a table


def test_a_policy_that_takes_the_defaults_name_is_refused(tmp_path):
    """A lax policy named "permuted-privacy default", version 1, turned AT RISK into PROTECTED with only its SHA-256
    to tell it apart; the default's own bytes still load, and any other name is the policy's to choose."""
    from importlib import resources

    from verifier.errors import InvalidInputError
    from verifier.releases.policy import default_policy, load_policy

    lax = {"name": "permuted-privacy default", "version": 1, "rules": [
        {"id": "alone", "figure": "class_size", "below": 2, "level": "exposed"}]}
    for name in ("permuted-privacy default", "PERMUTED-PRIVACY  DEFAULT ", "\tpermuted-privacy\ndefault"):
        (tmp_path / "p.json").write_text(json.dumps({**lax, "name": name}))
        with pytest.raises(InvalidInputError) as info:
            load_policy(tmp_path / "p.json")
        assert info.value.reason == "POLICY_INVALID" and info.value.message.startswith(
            "$.name: \"permuted-privacy default\" names the verifier's own policy, and this file is not it")
    own = resources.files("verifier.releases").joinpath("verdict-policy.json").read_bytes()
    (tmp_path / "copy.json").write_bytes(own)
    assert load_policy(tmp_path / "copy.json") == default_policy()
    (tmp_path / "mine.json").write_text(json.dumps({**lax, "name": "permuted-privacy default (lenient)"}))
    assert load_policy(tmp_path / "mine.json").name == "permuted-privacy default (lenient)"


# ----------------------------------------------------------------------------- the witness's answer (C2SP tlog-witness)


def _answering(body_for):
    """A witness on 127.0.0.1 that answers every add-checkpoint request 200 with ``body_for(checkpoint text)``."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            note = raw.partition(b"\n\n")[2]
            text = note[:note.rfind(b"\n\n") + 1].decode()
            answer = body_for(text).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _signed_log(tmp_path: Path):
    from test_witness import ORIGIN, _log, _raw
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from verifier.transparency.note import ED25519_TYPE, key_id

    log_key = Ed25519PrivateKey.generate()
    _log(tmp_path / "log", log_key, [b"entry 0\n", b"entry 1\n"])
    return log_key, key_id(ORIGIN, ED25519_TYPE, _raw(log_key))


def test_a_witness_answering_with_the_logs_name_and_key_id_cannot_unsign_the_checkpoint(tmp_path, capsys):
    """The publisher dropped every line of the answer's name and key ID and never checked the answer: a witness
    answering with the log's own name and key ID and zero bytes left the checkpoint unsigned. Now a line counts only
    when it verifies under a witness key the publisher named."""
    import base64

    from test_witness import ORIGIN, _key, _raw

    from verifier.transparency.note import COSIGNATURE_TYPE, vkey

    log_key, log_kid = _signed_log(tmp_path)
    witness = _key(tmp_path / "w.pem")
    (tmp_path / "w.vkey").write_text(vkey("w.example/witness", COSIGNATURE_TYPE, _raw(witness)) + "\n")
    before = (tmp_path / "log" / "checkpoint").read_bytes()
    forged = f"\u2014 {ORIGIN} {base64.b64encode(log_kid + bytes(72)).decode()}\n"
    server, url = _answering(lambda text: forged)
    try:
        capsys.readouterr()
        assert publisher(["log", "witness", str(tmp_path / "log"), "--witness", url, "--witness-key",
                          str(tmp_path / "w.vkey")]) == 3
        assert "WITNESS_REFUSED: no line of the witness's answer is a cosignature by a witness key you named" in \
            capsys.readouterr().err
    finally:
        server.shutdown()
    assert (tmp_path / "log" / "checkpoint").read_bytes() == before  # the log's signature stands


def test_a_witness_with_two_keys_answers_two_lines_and_unknown_keys_are_ignored(tmp_path, capsys):
    """C2SP tlog-witness: the answer is one or more signature lines, and lines of unknown keys are ignored. A
    witness signing with Ed25519 and ML-DSA-44 (tlog-cosignature's recommended type) is cosigned by both, and a
    subject's policy naming either key counts it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey
    from test_witness import ORIGIN, _key, _raw

    from verifier.transparency.cosignature import cosignature_line, mldsa_cosigned_message
    from verifier.transparency.note import (COSIGNATURE_TYPE, ED25519_TYPE, MLDSA44_COSIGNATURE_TYPE, parse_checkpoint,
                                            parse_note, signature_line, vkey)
    from verifier.transparency.policy import check_checkpoint, parse_policy

    log_key, _ = _signed_log(tmp_path)
    name = "w.example/witness"
    classic, quantum, stranger = _key(tmp_path / "w.pem"), MLDSA44PrivateKey.generate(), Ed25519PrivateKey.generate()
    quantum_raw = quantum.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    (tmp_path / "w.vkey").write_text(vkey(name, COSIGNATURE_TYPE, _raw(classic)) + "\n")
    (tmp_path / "w-mldsa.vkey").write_text(vkey(name, MLDSA44_COSIGNATURE_TYPE, quantum_raw) + "\n")

    def answer(text: str) -> str:
        checkpoint = parse_checkpoint(text, "test")
        quantum_line = signature_line(name, MLDSA44_COSIGNATURE_TYPE, quantum_raw, (1700000000).to_bytes(8, "big") +
                                      quantum.sign(mldsa_cosigned_message(name, 1700000000, checkpoint.origin,
                                                                          checkpoint.size, checkpoint.root)))
        return (cosignature_line(text, "other.example/w", _raw(stranger), stranger.sign, 1700000000)
                + cosignature_line(text, name, _raw(classic), classic.sign, 1700000000) + quantum_line)

    server, url = _answering(answer)
    try:
        capsys.readouterr()
        assert publisher(["log", "witness", str(tmp_path / "log"), "--witness", url, "--witness-key",
                          str(tmp_path / "w.vkey"), "--witness-key", str(tmp_path / "w-mldsa.vkey"), "--json"]) == 0
        said = json.loads(capsys.readouterr().out)[0]
    finally:
        server.shutdown()
    assert said["added"] is True and len(said["cosignatures"]) == 2
    note = parse_note((tmp_path / "log" / "checkpoint").read_bytes(), "checkpoint")
    assert [signer for signer, _, _ in note.signatures] == [ORIGIN, name, name]  # the stranger's line is not added
    log_vkey = vkey(ORIGIN, ED25519_TYPE, _raw(log_key))
    for key in ("w.vkey", "w-mldsa.vkey"):
        policy = parse_policy(f"log {log_vkey}\nwitness w {(tmp_path / key).read_text().strip()}\nquorum w\n".encode(),
                              "policy")
        assert check_checkpoint(note, policy, "checkpoint").cosigned == {"w": 1700000000}
    # a named key's line that does not verify refuses the answer, and adds nothing
    forged = _answering(lambda text: answer(text).replace(answer(text).splitlines()[1][-8:], "AAAAAAA="))
    try:
        before = (tmp_path / "log" / "checkpoint").read_bytes()
        assert publisher(["log", "witness", str(tmp_path / "log"), "--witness", forged[1], "--witness-key",
                          str(tmp_path / "w.vkey")]) == 3
        assert "the witness's cosignature by w.example/witness does not verify" in capsys.readouterr().err
        assert (tmp_path / "log" / "checkpoint").read_bytes() == before
    finally:
        forged[0].shutdown()


# ----------------------------------------------------------------------------- publish, then append


def _logged_setup(tmp_path: Path) -> list[str]:
    from importlib import resources

    paper = Path(str(resources.files("verifier") / "data" / "paper"))
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["log", "init", str(tmp_path / "log"), "--origin", "stats.example/releases", "--key",
                      str(tmp_path / "keys" / "private.pem")]) == 0
    return ["release", "--input", str(paper / "original.csv"), "--method", "additive_noise", "--param",
            "relative_sd=0.8", "--then", "reverse_mapping", "--samples", "100", "--allow-degenerate", "--key",
            str(tmp_path / "keys" / "private.pem"), "--dataset-id", "paper", "--log", str(tmp_path / "log")]


def _log_size(tmp_path: Path) -> int:
    return int((tmp_path / "log" / "checkpoint").read_text().splitlines()[1])


@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_a_summary_that_cannot_be_written_leaves_no_release_and_no_entry(tmp_path, stdout):
    """With stdout on a full device the release was thrown away after its entry was appended (the version burned:
    RELEASE_EXISTS on retry); with stdout closed, a traceback. The summary is written before the release is moved in
    and the entry appended after: neither is left."""
    import os

    argv = [*_logged_setup(tmp_path), "--out", str(tmp_path / "r1")]
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "publisher", *argv], stderr=subprocess.PIPE, text=True,
                              stdout=full if stdout == "full" else None, timeout=300,
                              preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None)
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr
    assert "WRITE_FAILED: cannot write the output" in done.stderr and "the release was not published" in done.stderr
    assert not (tmp_path / "r1").exists() and _log_size(tmp_path) == 0
    assert publisher(argv) == 0 and _log_size(tmp_path) == 1  # the same version goes in on a retry


class _Stdout:
    """Standard output that, as the summary is written, does ``then`` to the machine: a disk that fills or a log
    that changes between the two steps."""

    def __init__(self, then):
        self.then, self.text = then, ""

    def write(self, text: str) -> int:
        self.text += text
        if "released " in text and self.then is not None:
            self.then()
            self.then = None
        return len(text)

    def flush(self) -> None:
        pass


def test_a_failure_after_the_release_is_in_place_says_how_to_log_it(tmp_path, capsys, monkeypatch):
    """The release is complete and in place before its entry is appended: when the log cannot be appended to (its
    checkpoint damaged meanwhile), the release stands without an entry and the error says how to log it; when the
    proof cannot be written, the entry names a release that exists, and publisher log append writes the proof."""
    argv = _logged_setup(tmp_path)
    checkpoint = (tmp_path / "log" / "checkpoint").read_bytes()
    damaged = _Stdout(lambda: (tmp_path / "log" / "checkpoint").write_bytes(b"not a checkpoint\n"))
    with monkeypatch.context() as patched:
        patched.setattr(sys, "stdout", damaged)
        code = publisher([*argv, "--out", str(tmp_path / "r1")])
    err = capsys.readouterr().err
    assert code == 1 and (tmp_path / "r1" / "manifest.json").exists(), err
    assert f"the release {tmp_path / 'r1'} is published but not logged: append it with publisher log append" in err
    (tmp_path / "log" / "checkpoint").write_bytes(checkpoint)
    log_append = ["log", "append", str(tmp_path / "log"), str(tmp_path / "r1"), "--key",
                  str(tmp_path / "keys" / "private.pem"), "--release-key", str(tmp_path / "keys" / "public.pem")]
    assert publisher(log_append) == 0 and _log_size(tmp_path) == 1
    assert "is in " in capsys.readouterr().out and (tmp_path / "r1.tlog-proof").exists()
    # the proof's place taken by a folder between the steps: the entry is appended, the proof is not written
    blocked = _Stdout(lambda: (tmp_path / "r2.tlog-proof").mkdir())
    with monkeypatch.context() as patched:
        patched.setattr(sys, "stdout", blocked)
        code = publisher([*argv, "--release-version", "2", "--out", str(tmp_path / "r2")])
    err = capsys.readouterr().err
    assert code == 4 and (tmp_path / "r2" / "manifest.json").exists() and _log_size(tmp_path) == 2, err
    assert "the release is published and logged at index 1: write its proof with publisher log append" in err
    (tmp_path / "r2.tlog-proof").rmdir()
    log_append[3] = str(tmp_path / "r2")
    assert publisher(log_append) == 0 and _log_size(tmp_path) == 2  # already logged: not appended twice
    log_vkey = tmp_path / "log.vkey"
    from verifier.transparency.note import ED25519_TYPE, vkey
    from publisher.keys import load_private_key

    log_vkey.write_text(vkey("stats.example/releases", ED25519_TYPE,
                             load_private_key(tmp_path / "keys" / "private.pem", None).public_raw) + "\n")
    assert verifier(["verify", str(tmp_path / "r2"), "--key", str(tmp_path / "keys" / "public.pem"), "--proof",
                     str(tmp_path / "r2.tlog-proof"), "--log-key", str(log_vkey)]) == 0


# ----------------------------------------------------------------------------- a hostile log's size


@pytest.mark.parametrize("command", ["cosign", "compare"])
def test_a_checkpoint_of_2_to_the_40_leaves_costs_no_memory_before_its_tiles_are_read(tmp_path, command):
    """A checkpoint signed by the log with size 2^40 made verifier witness cosign and verifier log compare list one
    entry per tile before reading any file (3.8 GB and rising). Under a 1 GB address-space limit each now reads the
    first tile the size needs, finds it missing, and says so in one line."""
    import resource

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from test_witness import ORIGIN, _key, _log, _raw, _vkey_file

    from verifier.transparency.note import ED25519_TYPE, checkpoint_text, signature_line

    log_key = Ed25519PrivateKey.generate()
    _vkey_file(tmp_path / "log.vkey", ORIGIN, ED25519_TYPE, log_key)
    small = _log(tmp_path / "log", log_key, [b"entry 0\n"])
    (tmp_path / "small.checkpoint").write_bytes(small)
    text = checkpoint_text(ORIGIN, 2**40, bytes(32))
    (tmp_path / "log" / "checkpoint").write_bytes(
        (text + "\n" + signature_line(ORIGIN, ED25519_TYPE, _raw(log_key), log_key.sign(text.encode()))).encode())
    _key(tmp_path / "w.pem")
    argv = (["witness", "cosign", str(tmp_path / "log"), "--state", str(tmp_path / "state"), "--key",
             str(tmp_path / "w.pem"), "--name", "w.example/witness", "--log-key", str(tmp_path / "log.vkey")]
            if command == "cosign" else
            ["log", "compare", str(tmp_path / "small.checkpoint"), str(tmp_path / "log" / "checkpoint"), "--log",
             str(tmp_path / "log"), "--log-key", str(tmp_path / "log.vkey")])

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-m", "verifier", *argv], capture_output=True, text=True, timeout=120,
                          preexec_fn=limited)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert "LOG_MALFORMED" in done.stderr and "is missing: the checkpoint's tree needs it" in done.stderr


def test_fork_evidence_is_read_strictly(tmp_path, capsys):
    """verifier log evidence read its JSON leniently: a repeated key (the last one wins in one reader, the first in
    another) or NaN passed. It is read as every signed input is: strict JSON, its four keys and no other."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from test_witness import ORIGIN, _log, _vkey_file

    from verifier.transparency.note import ED25519_TYPE

    log_key = Ed25519PrivateKey.generate()
    vkey_path = _vkey_file(tmp_path / "log.vkey", ORIGIN, ED25519_TYPE, log_key)
    _log(tmp_path / "a", log_key, [b"entry 0\n", b"entry 1\n"])
    _log(tmp_path / "b", log_key, [b"entry 0\n", b"another\n"])
    assert verifier(["log", "compare", str(tmp_path / "a" / "checkpoint"), str(tmp_path / "b" / "checkpoint"),
                     "--log-key", vkey_path]) == 1
    good = capsys.readouterr().out
    (tmp_path / "e.json").write_text(good)
    assert verifier(["log", "evidence", str(tmp_path / "e.json"), "--log-key", vkey_path]) == 0
    capsys.readouterr()
    head = good.rstrip().rstrip("}")
    for bad in (head + ', "evidence": "other"}', head + ', "extra": NaN}', head + ', "note": 1}',
                good.replace('"hashes": []', '"hashes": [1]')):
        (tmp_path / "e.json").write_text(bad)
        assert verifier(["log", "evidence", str(tmp_path / "e.json"), "--log-key", vkey_path]) == 1, bad
        assert ": LOG_MALFORMED: is not " in capsys.readouterr().err


def test_a_bad_bound_in_another_tools_interval_names_the_real_column(tmp_path, capsys):
    """An external cell's error named a column 'cell' that does not exist: '[1e400, 90]' in age said "column 'cell',
    row 1". It names the output's column and row, and the bound."""
    rows = _write(tmp_path / "input.csv", list(csv.DictReader(SAMPLE.open()))[:40])
    published = [{**r, "age": "[1e400, 90]" if i == 2 else "[0, 90]"} for i, r in enumerate(rows)]
    _write(tmp_path / "tool.csv", published)
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    capsys.readouterr()
    assert publisher(["release", "--input", str(tmp_path / "input.csv"), "--schema", str(ARX / "adult-arx.json"),
                      "--anonymized", str(tmp_path / "tool.csv"), "--produced-by", "a tool 1.0", "--key",
                      str(tmp_path / "keys" / "private.pem"), "--dataset-id", "t", "--out", str(tmp_path / "r")]) == 3
    err = capsys.readouterr().err.strip()
    assert "column 'cell'" not in err
    assert "CELL_INVALID: column 'age', row 3: '[1e400, 90]': '1e400' is too large for a 64-bit float" in err
    assert not (tmp_path / "r").exists()


def test_a_formula_label_of_a_numeric_hierarchy_is_refused_as_a_categorys_is(tmp_path, capsys):
    """An ARX hierarchy label in a numeric column (=HYPERLINK(...), @SUM(1)) was published without
    --allow-formula-cells and without a warning, while the same label in a categorical column was refused."""
    rows = _write(tmp_path / "input.csv", list(csv.DictReader(SAMPLE.open()))[:60])
    tree = (ARX / "adult_hierarchy_age.csv").read_text().replace(";20-24;", ";@SUM(1);").replace(";15-19;", ";=1+1;")
    (tmp_path / "age.csv").write_text(tree)
    levels = {line.split(";")[0]: line.split(";")[1] for line in tree.splitlines()}
    _write(tmp_path / "tool.csv", ({**r, "age": levels[r["age"]]} for r in rows))
    assert any(levels[r["age"]] == "@SUM(1)" for r in rows)
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    argv = ["release", "--input", str(tmp_path / "input.csv"), "--schema", str(ARX / "adult-arx.json"),
            "--anonymized", str(tmp_path / "tool.csv"), "--produced-by", "ARX 3.9.2", "--hierarchy",
            f"age={tmp_path / 'age.csv'}", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "f",
            "--out", str(tmp_path / "r")]
    capsys.readouterr()
    assert publisher(argv) == 3
    err = capsys.readouterr().err
    assert "FORMULA_LIKE_CELL" in err and "column 'age', row " in err and not (tmp_path / "r").exists()
    assert publisher([*argv, "--allow-formula-cells"]) == 0
    record = {c: rows[0][c] for c in COLUMNS}
    (tmp_path / "me.json").write_text(json.dumps({**record, "age": int(record["age"])}))
    capsys.readouterr()
    assert verifier(["check", str(tmp_path / "r"), "--key", str(tmp_path / "keys" / "public.pem"), "--record",
                     str(tmp_path / "me.json"), "--json"]) == 0
    counted = sum(levels[r["age"]] in ("@SUM(1)", "=1+1") for r in rows)
    assert json.loads(capsys.readouterr().out)["formula_like_cells"] == counted > 0


@pytest.mark.parametrize("depth", [1, 499, 500, 501, 900])
def test_one_nesting_limit_and_numbers_of_any_length_in_both_readers(depth):
    """The command line accepted nesting of 500 to 1,000 levels (Python's stack decided) where the page refused past
    500, and the page cut a number at 1,000 characters: both readers now refuse past 500 levels, counted alike, and
    read a number whole, held to each other in Node.js (the page's reader, as it ships)."""
    import shutil

    from verifier.data.strict_json import StrictJSONError, loads_strict
    from verifier.page import SCRIPTS  # noqa: F401 - the page's scripts, as the page is written

    node = shutil.which("node")
    if node is None:
        pytest.skip("needs Node.js (installed on this project's machines)")
    docs = ["[" * depth + "]" * depth, "[" * (depth - 1) + "[1]" + "]" * (depth - 1),
            '{"a": ' * depth + '"[[["' + "}" * depth, "[1." + "5" * 1500 + "]", '["' + "[" * 800 + '"]']
    python = []
    for doc in docs:
        try:
            loads_strict(doc)
            python.append(True)
        except StrictJSONError:
            python.append(False)
    script = (ROOT / "verifier" / "page" / "strict_json.js").read_text()
    run = ("globalThis.permutedPrivacy = {};\n" + script + "\nconst docs = " + json.dumps(docs) + ";\n"
           "console.log(JSON.stringify(docs.map((d) => { try { permutedPrivacy.loads_strict(d); return true; } "
           "catch (e) { return false; } })));")
    done = subprocess.run([node, "-e", run], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == python
    assert python[0] == (depth <= 500) and python[3] is True


def test_a_links_file_whose_ids_were_swapped_is_refused_by_the_publisher_and_the_audit(tmp_path, capsys):
    """Swapped ids with the same count made the publisher sign linked: 0 and the audit with --previous pass every
    claim. The manifest now signs a salted commitment to the release's people (the salt in the links file alone),
    and a links file whose ids no longer match it is refused (LINKS_MISMATCH) by both."""
    from verifier.releases.links import Links, links_commitment

    (tmp_path / "schema.json").write_text(json.dumps({"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "sex", "kind": "nominal", "role": "quasi_identifier", "categories": ["F", "M"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["cold", "flu", "hiv"]}]}))
    first = "".join(f"p{i},{20 + i},{'FM'[i % 2]},{('cold', 'flu', 'hiv')[i % 3]}\n" for i in range(12))
    second = "".join(f"p{i},{20 + i},{'FM'[i % 2]},{('cold', 'flu', 'hiv')[i % 3]}\n" for i in range(4, 16))
    for name, rows in (("r1", first), ("r2", second)):
        (tmp_path / f"{name}.csv").write_text("pid,age,sex,disease\n" + rows)
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    common = ["--schema", str(tmp_path / "schema.json"), "--method", "sd_k_anonymity", "--param", "k=3", "--samples",
              "100", "--allow-degenerate", "--key", str(tmp_path / "keys" / "private.pem"), "--dataset-id", "ward",
              "--link-column", "pid"]
    assert publisher(["release", "--input", str(tmp_path / "r1.csv"), *common, "--out", str(tmp_path / "r1")]) == 0
    links = Links.read(tmp_path / "r1.links.json")
    signed = json.loads((tmp_path / "r1" / "manifest.json").read_text())["predicate"]["links_commitment"]
    assert links.salt is not None and links_commitment(links.salt, links.ids) == signed
    assert links.salt not in (tmp_path / "r1" / "manifest.json").read_text()  # the salt never leaves the links file
    assert publisher(["release", "--input", str(tmp_path / "r2.csv"), *common, "--release-version", "2", "--previous",
                      str(tmp_path / "r1"), "--out", str(tmp_path / "r2")]) == 0
    assert json.loads((tmp_path / "r2" / "manifest.json").read_text())["predicate"]["claims"]["composition"][
        "earlier"][0]["linked"] == 8
    honest = (tmp_path / "r1.links.json").read_bytes()
    doc = json.loads(honest)
    doc["ids"] = sorted(f"x{i}" for i in range(len(doc["ids"])))  # the same count, nobody of the new release
    (tmp_path / "r1.links.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert publisher(["release", "--input", str(tmp_path / "r2.csv"), *common, "--release-version", "3", "--previous",
                      str(tmp_path / "r1"), "--out", str(tmp_path / "r3")]) != 0
    assert "LINKS_MISMATCH: its people are not the ones" in capsys.readouterr().err
    assert not (tmp_path / "r3").exists()
    assert verifier(["audit", str(tmp_path / "r2"), "--key", str(tmp_path / "keys" / "public.pem"), "--original",
                     str(tmp_path / "r2.csv"), "--previous", str(tmp_path / "r1")]) != 0
    assert "LINKS_MISMATCH" in capsys.readouterr().err
    (tmp_path / "r1.links.json").write_bytes(honest)
    assert verifier(["audit", str(tmp_path / "r2"), "--key", str(tmp_path / "keys" / "public.pem"), "--original",
                     str(tmp_path / "r2.csv"), "--previous", str(tmp_path / "r1")]) == 0


def test_a_log_size_beyond_2_to_the_53_is_given_exactly_by_both():
    """The page's log JSON lost precision above 2^53 (a size of 2^63 - 1 is valid C2SP): both give an index or size
    as a JSON number up to 2^53 and as its decimal text beyond, held to each other in Node.js."""
    import shutil

    from verifier.transparency.standing import exact

    node = shutil.which("node")
    if node is None:
        pytest.skip("needs Node.js (installed on this project's machines)")
    sizes = [0, 2, 2**53, 2**53 + 1, 2**63 - 1]
    assert [exact(n) for n in sizes] == [0, 2, 2**53, "9007199254740993", "9223372036854775807"]
    scripts = "".join((ROOT / "verifier" / "page" / name).read_text() for name in ("dsse.js", "transparency.js"))
    run = (scripts + "\nconsole.log(JSON.stringify(" + json.dumps([str(n) for n in sizes])
           + ".map((s) => permutedPrivacy.exact(BigInt(s)))));")
    done = subprocess.run([node, "-e", run], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [exact(n) for n in sizes]
