"""``publisher keygen``: the Ed25519 key pair that signs releases."""

from __future__ import annotations

import argparse
from pathlib import Path

from verifier.frontend.passphrase import prompt, read_passphrase_file
from publisher.keys import keygen
from verifier.errors import InputIOError
from verifier.frontend.output_paths import release_holding
from verifier.frontend import UsageError, add_command, print_json

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "keygen", run=run, help="make the Ed25519 key pair that signs releases",
        description="Write DIR/private.pem (PKCS#8, encrypted with a passphrase unless --unencrypted, mode 0600, "
        "never overwritten) and DIR/public.pem, and print the public key's full fingerprint. The passphrase is "
        "asked for on the terminal or read from a file, never taken from the command line.",
    )
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--passphrase-file", metavar="FILE", help="read the passphrase from this file (first line)")
    p.add_argument("--unencrypted", action="store_true", help="write the private key without a passphrase")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    release = release_holding(Path(args.out) / "private.pem")
    if release is not None:  # a private key inside a published folder would be published
        raise InputIOError(f"lies inside the release {release}; a key is never written into a release",
                           path=args.out, reason="OUTPUT_INSIDE_RELEASE")
    if args.unencrypted and args.passphrase_file:
        raise UsageError("--unencrypted and --passphrase-file exclude each other")
    if args.unencrypted:
        passphrase = None
    elif args.passphrase_file:
        passphrase = read_passphrase_file(args.passphrase_file)
    else:
        passphrase = prompt("passphrase for the new private key: ")
        if passphrase != prompt("the same passphrase again: "):
            raise UsageError("the two passphrases differ")
        if not passphrase:
            raise UsageError("an empty passphrase; use --unencrypted to write an unencrypted key on purpose")
    private, public, fp, kid = keygen(args.out, passphrase)
    if args.json:
        print_json({"private_key": str(private), "public_key": str(public), "fingerprint": fp, "key_id": kid,
                     "encrypted": passphrase is not None})
    else:
        print(f"wrote {private} (mode 0600{', encrypted' if passphrase else ', NOT encrypted'}) and {public}")
        print(f"fingerprint (SHA-256 of the public key): {fp}")
        print(f"key id (in-toto / TUF): {kid}")
        print("Publish the fingerprint where subjects can check it (your web site, the release notice).")
    return 0

