"""``publisher log init``: make the append-only log that releases are published into (issue 39)."""

from __future__ import annotations

import argparse
import hashlib
import json

from publisher.cli.passphrase import load_key
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
