"""The arguments that name a release and the key to verify it with, for every command that opens one."""

from __future__ import annotations

import argparse

from verifier.errors import UsageError
from verifier.releases.facts import open_release
from verifier.releases.verification import VerifiedRelease

__all__ = ["add_release_args", "verified"]


def add_release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="DIR", help="the release directory")
    p.add_argument("--key", metavar="public.pem",
                   help="the publisher's public key, obtained out of band (never from the release)")
    p.add_argument("--fingerprint", metavar="SHA256", help="also require the key's fingerprint to be this")
    p.add_argument("--dataset-id", metavar="ID", help="refuse a release of another dataset")
    p.add_argument("--min-version", type=int, metavar="N", help="refuse a release older than version N (rollback)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def verified(args: argparse.Namespace) -> VerifiedRelease:
    """Verify the release directory against the user's key; the key never comes from the release."""
    if not args.key:
        raise UsageError(
            "give the trusted public key with --key public.pem (a key inside a release proves nothing)",
            path=args.release, reason="NO_TRUSTED_KEY",
        )
    return open_release(args.release, args.key, fingerprint=args.fingerprint, dataset_id=args.dataset_id,
                        min_version=args.min_version)
