"""The log's options of ``verifier verify`` and ``verifier check`` (issue 39, item 4), and the standing they give."""

from __future__ import annotations

import argparse
from pathlib import Path

from verifier.errors import UsageError

__all__ = ["add_log_args", "check_log_args", "log_standing_of"]


def add_log_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--proof", metavar="FILE",
                   help="the release's proof from its log (DIR.tlog-proof): check that the log holds this release, "
                   "in a tree its checkpoint signs, cosigned by the witnesses your policy asks for")
    p.add_argument("--log-policy", metavar="FILE",
                   help="your log policy: the log's verifier key, the witnesses' keys and how many must cosign "
                   "(docs/subject.md shows one); needed with --proof, unless --log-key")
    p.add_argument("--log-key", metavar="log.vkey",
                   help="the log's verifier key alone (one line, as publisher log init prints it): a policy that "
                   "asks no witness, so the verdict keeps its unwitnessed finding")
    p.add_argument("--log", metavar="DIR",
                   help="with --proof, the log's files (its folder, as its web server serves it): check that the "
                   "proof, the checkpoints you saw before and the log's newest are one history, and that this "
                   "release is the only entry of its dataset id and version")
    p.add_argument("--checkpoint", action="append", default=[], metavar="FILE",
                   help="with --proof, a checkpoint of the log you got elsewhere (from a witness, a friend, a "
                   "newspaper): it must be of the same history; repeat for several")
    p.add_argument("--state", metavar="DIR",
                   help="where the checkpoints you have seen are remembered (default: $PERMUTED_PRIVACY_STATE, "
                   "else $XDG_STATE_HOME/permuted-privacy, else ~/.local/state/permuted-privacy)")


def check_log_args(args: argparse.Namespace) -> None:
    """The log's options make sense together, before any work."""
    keys = (args.log_policy is not None) + (args.log_key is not None)
    if args.proof is not None and keys != 1:
        raise UsageError("--proof takes the log's trust: --log-policy FILE (the log and its witnesses) or "
                         "--log-key log.vkey (the log alone), one of them")
    if args.proof is None and (keys or args.log or args.state or args.checkpoint):
        raise UsageError("--log-policy, --log-key, --log, --checkpoint and --state go with --proof FILE")


def log_standing_of(args: argparse.Namespace, release):
    """The release's :class:`~verifier.transparency.standing.Standing` under the log's options (no proof: a
    standing that says so)."""
    from verifier.transparency.standing import Standing, log_standing, read_policy

    if args.proof is None:
        return Standing()
    policy = read_policy(args.log_policy, args.log_key)
    return log_standing(release, args.proof, policy, log=args.log, state=Path(args.state) if args.state else None,
                        seen=args.checkpoint)
