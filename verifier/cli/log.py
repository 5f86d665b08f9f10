"""``verifier log``: compare two checkpoints of a log, and check the evidence of a fork (issue 39, item 4)."""

from __future__ import annotations

import argparse
import json

from verifier.frontend import ExitCode, UsageError, add_command, print_json

__all__ = ["register"]


def _trust_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--log-policy", metavar="FILE", help="your log policy (its log line names the log's key)")
    p.add_argument("--log-key", metavar="log.vkey", help="the log's verifier key (one line)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def register(sub, common) -> None:
    p = sub.add_parser("log", help="compare checkpoints of a release log; check the evidence of a fork",
                       description="Two checkpoints the log signed must be one history: the smaller tree a prefix "
                       "of the larger (docs/release-format.md, section 7).")
    commands = p.add_subparsers(dest="log_command", metavar="COMMAND", required=True)
    compare = add_command(
        commands, common, "compare", run=run_compare, help="are two checkpoints one history?",
        description="Check both checkpoints' signatures, then whether the smaller tree is a prefix of the larger "
        "(of two sizes, on the hashes of the log's files, --log). When they are two histories, print the evidence "
        "on stdout (save it: anyone with the log's key checks it with verifier log evidence) and exit 1.",
        epilog="Exit codes: 0 one history, 1 two histories (LOG_EQUIVOCATION or LOG_INCONSISTENT, the evidence on "
        "stdout) or a checkpoint that does not verify, 2 usage error, 3 a bad policy, 4 a file unreadable.",
        data_stdout=True)
    compare.add_argument("first", metavar="A", help="a checkpoint file (a signed note)")
    compare.add_argument("second", metavar="B", help="another checkpoint file of the same log")
    compare.add_argument("--log", metavar="DIR", help="the log's files, to compare checkpoints of different sizes")
    _trust_args(compare)
    evidence = add_command(
        commands, common, "evidence", run=run_evidence, help="check the evidence that a log signed two histories",
        description="Check evidence verifier log compare printed: both checkpoints signed by the log's key, and "
        "hashes that show their trees are not one history.",
        epilog="Exit codes: 0 the evidence proves a fork, 1 it proves nothing (LOG_EVIDENCE_INVALID) or does not "
        "verify, 2 usage error, 3 a bad policy, 4 a file unreadable.")
    evidence.add_argument("evidence", metavar="FILE", help="the evidence (JSON)")
    _trust_args(evidence)


def _policy(args: argparse.Namespace):
    from verifier.transparency.standing import read_policy

    if (args.log_policy is None) == (args.log_key is None):
        raise UsageError("give the log's trust: --log-policy FILE or --log-key log.vkey, one of them")
    return read_policy(args.log_policy, args.log_key)


def run_compare(args: argparse.Namespace) -> int:
    from verifier.releases.listed_files import fail
    from verifier.transparency.fork import compare
    from verifier.transparency.proof import read_log_file

    policy = _policy(args)
    found = compare(read_log_file(args.first), read_log_file(args.second), policy, (args.first, args.second), args.log)
    small, large = found.smaller, found.larger
    if found.evidence is None:
        said = f"one history: the tree of size {small.size} is a prefix of the one of size {large.size}"
        print_json({"one_history": True, "sizes": [small.size, large.size]}) if args.json else print(said)
        return ExitCode.OK
    print_json({"one_history": False, "sizes": [small.size, large.size], "evidence": json.loads(found.evidence)}) \
        if args.json else print(found.evidence)
    same = small.size == large.size
    raise fail(args.second, "LOG_EQUIVOCATION" if same else "LOG_INCONSISTENT",
               f"the log signed two histories: {'two roots for' if same else 'a tree that does not extend'} the tree "
               f"of size {small.size}; the evidence is on stdout")


def run_evidence(args: argparse.Namespace) -> int:
    from verifier.transparency.fork import check_evidence
    from verifier.transparency.proof import read_log_file

    small, large = check_evidence(read_log_file(args.evidence), _policy(args), args.evidence)
    if args.json:
        print_json({"fork": True, "origin": small.origin, "sizes": [small.size, large.size]})
    else:
        print(f"the evidence holds: {small.origin} signed two histories (checkpoints of sizes {small.size} and "
              f"{large.size} that are not one tree)")
    return ExitCode.OK
