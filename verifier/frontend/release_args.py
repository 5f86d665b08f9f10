"""The arguments that name a release and the key to verify it with, for every command that opens one."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from verifier.data.memory import ensure_fits
from verifier.errors import UsageError
from verifier.releases.facts import open_release
from verifier.releases.verification import DATA_FILES, ReleaseError, VerifiedRelease
from verifier.frontend.output import print_json
from verifier.frontend.arguments import count

__all__ = ["add_release_args", "verified"]


def add_release_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="DIR", help="the release directory")
    p.add_argument("--key", metavar="public.pem",
                   help="the publisher's public key, obtained out of band (never from the release)")
    p.add_argument("--fingerprint", metavar="SHA256", help="also require the key's fingerprint to be this")
    p.add_argument("--dataset-id", metavar="ID", help="refuse a release of another dataset")
    p.add_argument("--min-version", type=count("version"), metavar="N", help="refuse a release older than version N (rollback)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


#: bytes per cell of the release's table a command holds at its peak (docs/performance.md, rounded up)
PER_CELL = 150


def verified(args: argparse.Namespace, *, per_cell: int = PER_CELL, also: Sequence[str | None] = (),
             json_failure: bool = True) -> VerifiedRelease:
    """Verify the release directory against the user's key; the key never comes from the release.

    Once it verifies (its bytes hashed, not yet parsed), the release's table
    and the tables in ``also`` must fit in memory at ``per_cell`` bytes a cell
    (:func:`verifier.data.memory.ensure_fits`; exit 4 when they do not).
    """
    if not args.key:
        raise UsageError(
            "give the trusted public key with --key public.pem (a key inside a release proves nothing)",
            path=args.release, reason="NO_TRUSTED_KEY",
        )
    try:
        release = open_release(args.release, args.key, fingerprint=args.fingerprint, dataset_id=args.dataset_id,
                               min_version=args.min_version)
    except ReleaseError as exc:  # --json says so on stdout as well (the FAIL line follows on stderr)
        if getattr(args, "json", False) and json_failure:
            print_json({"verified": False, "reason": exc.reason, "message": exc.message})
        raise
    data = [Path(args.release) / name for name in DATA_FILES if (Path(args.release) / name).is_file()]
    ensure_fits([(path, None) for path in [*data, *[a for a in also if a]]], per_cell)
    return release
