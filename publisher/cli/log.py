"""``publisher log init``: make the append-only log that releases are published into (issue 39)."""

from __future__ import annotations

import argparse
import hashlib
import json

from verifier.frontend.passphrase import load_key
from verifier.frontend import add_command
from verifier.transparency.note import ED25519_TYPE, vkey

__all__ = ["register"]


def register(sub, common) -> None:
    p = sub.add_parser("log", help="the public, append-only log of releases (C2SP tlog-tiles)",
                       description="The log releases are appended to, as static files any web server hosts "
                       "(docs/release-format.md, section 7).")
    commands = p.add_subparsers(dest="log_command", metavar="COMMAND", required=True)
    init = add_command(commands, common, "init", run=run_init, help="make an empty log",
                       description="Make an empty log in DIR named ORIGIN: a checkpoint of size 0 signed with the "
                       "log's key. Publish DIR on a static web server, and the log's public key and origin where "
                       "subjects and auditors find them; then publisher release --log DIR appends each release.")
    init.add_argument("log", metavar="DIR", help="the log's folder (new, or empty)")
    init.add_argument("--origin", required=True, metavar="NAME",
                      help="the log's name, a schema-less URL of where it is served (stats.example/releases)")
    init.add_argument("--key", required=True, metavar="log.pem", help="the log's signing key (publisher keygen)")
    init.add_argument("--passphrase-file", metavar="FILE", help="read the key's passphrase from this file")
    init.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    witness = add_command(commands, common, "witness", run=run_witness, help="ask witnesses to cosign the checkpoint",
                          description="Send the log's checkpoint, with a consistency proof from the last one each "
                          "witness cosigned, to each witness's add-checkpoint endpoint (C2SP tlog-witness), and add "
                          "the cosignatures to the log's checkpoint. Then publisher log refresh puts them into the "
                          "releases' proofs.",
                          epilog="Exit codes: 0 cosigned by every witness, 1 the log's checkpoint or tiles do not "
                          "parse or agree (LOG_MALFORMED, LOG_INCONSISTENT), 3 a witness refused (WITNESS_REFUSED), "
                          "4 a witness unreachable or the log unreadable.")
    witness.add_argument("log", metavar="DIR", help="the log's folder")
    witness.add_argument("--witness", required=True, action="append", metavar="URL",
                         help="a witness's base URL (verifier witness serve prints it); repeat for several")
    witness.add_argument("--witness-key", required=True, action="append", metavar="witness.vkey",
                         help="a witness's verifier key (verifier witness key prints it; Ed25519, type 0x04, or "
                         "ML-DSA-44, type 0x06); repeat for each key of each witness. Only cosignatures that verify "
                         "under one of them are added; lines of other keys are ignored")
    witness.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    append = add_command(commands, common, "append", run=run_append, help="append a published release to the log",
                         description="Verify the release RELEASE with the publisher's public key and append it to the "
                         "log (as publisher release --log does once the release is in place), then write its proof. "
                         "A release the log already holds is not appended again: its proof is written against the "
                         "current checkpoint.",
                         epilog="Exit codes: 0 appended (or already logged), 1 the release or log does not verify, "
                         "3 another release of this dataset id and version is logged (RELEASE_EXISTS), 4 a file "
                         "unreadable or unwritable (OUTPUT_EXISTS: the proof file is there already).")
    append.add_argument("log", metavar="DIR", help="the log's folder")
    append.add_argument("release", metavar="RELEASE", help="the published release's folder")
    append.add_argument("--key", required=True, metavar="log.pem", help="the log's signing key")
    append.add_argument("--passphrase-file", metavar="FILE", help="read the log key's passphrase from this file")
    append.add_argument("--release-key", required=True, metavar="public.pem",
                        help="the public key that signed the release (publisher keygen's public.pem)")
    append.add_argument("--proof", metavar="FILE", help="where its proof goes (default RELEASE.tlog-proof)")
    append.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    refresh = add_command(commands, common, "refresh", run=run_refresh, help="renew proofs against the checkpoint",
                          description="Write each release's proof again against the log's current checkpoint and "
                          "the cosignatures added to it, once the proof's tree is a prefix of the log's.",
                          epilog="Exit codes: 0 refreshed, 1 a proof or checkpoint that does not parse "
                          "(LOG_MALFORMED), 3 a proof not of this log (LOG_INCONSISTENT, LOG_PROOF_INVALID), 4 a file "
                          "unreadable or unwritable.")
    refresh.add_argument("log", metavar="DIR", help="the log's folder")
    refresh.add_argument("proofs", nargs="+", metavar="PROOF", help="a release's proof file (DIR.tlog-proof)")
    refresh.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run_init(args: argparse.Namespace) -> int:
    from publisher.release_log import init_log

    key = load_key(args.key, args.passphrase_file, asked="log key passphrase: ")
    init_log(args.log, args.origin, key)
    fingerprint = hashlib.sha256(key.public_raw).hexdigest()
    verifier_key = vkey(args.origin, ED25519_TYPE, key.public_raw)
    if args.json:
        print(json.dumps({"log": args.log, "origin": args.origin, "fingerprint": fingerprint, "size": 0,
                          "verifier_key": verifier_key}))
    else:
        print(f"made the log {args.log} ({args.origin}), its checkpoint of size 0 signed by fingerprint "
              f"{fingerprint}")
        print(f"the log's verifier key (save it as log.vkey, and publish it where subjects find it):\n{verifier_key}")
        print(f"Serve the folder as static files; publisher release --log {args.log} appends each release.")
    return 0


def run_witness(args: argparse.Namespace) -> int:
    from pathlib import Path

    from publisher.witness_client import ask_witness

    keys = _witness_keys(args.witness_key)
    answers = [(url, *ask_witness(Path(args.log), url, keys)) for url in args.witness]
    if args.json:
        print(json.dumps([{"witness": url, "cosignature": line.rstrip("\n"), "cosignatures": line.splitlines(),
                           "added": added} for url, line, added in answers]))
    for url, line, added in [] if args.json else answers:
        print(f"{url}: cosigned; " + ("added to the log's checkpoint" if added else
                                      "not added: the log's checkpoint changed meanwhile; run again"))
    return 0


def _witness_keys(paths: list[str]) -> list[tuple[str, bytes]]:
    """The witness keys of ``--witness-key``: (name, public key) of each cosigner's verifier key."""
    from verifier.frontend import UsageError
    from verifier.transparency.note import ED25519_TYPE
    from verifier.transparency.proof import read_vkey

    keys = []
    for path in paths:
        name, kind, public = read_vkey(path)
        if kind == ED25519_TYPE:
            raise UsageError(f"{path} is a log's key (type 0x01); --witness-key takes a witness's (0x04 or 0x06)")
        keys.append((name, public))
    return keys


def run_append(args: argparse.Namespace) -> int:
    from pathlib import Path

    from publisher.keys import write_new
    from publisher.release_log import append_leaf
    from verifier.frontend.output_paths import check_output
    from verifier.releases.verification import load_public_key, verify_release

    proof_path = args.proof or f"{str(args.release).rstrip('/')}.tlog-proof"
    check_output(proof_path, option="--proof")
    release = verify_release(Path(args.release), load_public_key(args.release_key))
    key = load_key(args.key, args.passphrase_file, asked="log key passphrase: ")
    index, size, proof = append_leaf(args.log, release, key, again=True)
    write_new(Path(proof_path), proof, 0o644)
    if args.json:
        print(json.dumps({"log": args.log, "release": args.release, "index": index, "size": size,
                          "proof": proof_path}))
    else:
        print(f"{args.release} is in {args.log} at index {index} of {size}; its proof: {proof_path}")
    return 0


def run_refresh(args: argparse.Namespace) -> int:
    from pathlib import Path

    from publisher.release_log import refresh_proof
    from verifier.data.tables import write_atomic_bytes

    made = [(proof, *refresh_proof(args.log, proof)) for proof in args.proofs]
    for proof, *_, text in made:  # every proof checked before any is written
        write_atomic_bytes(Path(proof), text)
    if args.json:
        print(json.dumps([{"proof": proof, "index": index, "size": size, "signatures": signatures}
                          for proof, index, size, signatures, _ in made]))
    for proof, index, size, signatures, _ in [] if args.json else made:
        print(f"{proof}: index {index} of {size}, its checkpoint with {signatures} signature"
              f"{'s' if signatures != 1 else ''} (the log's and its witnesses')")
    return 0
