"""``verifier joint``: her record against several releases of the same people at once (issue 40)."""

from __future__ import annotations

import argparse
import json

from verifier.frontend import ExitCode, UsageError, add_command, count, print_json
from verifier.frontend.log_args import check_log_args, log_standing_of
from verifier.releases.plain_words import POLICY_WORDS, plain_text
from verifier.releases.policy import load_policy, policy_line
from verifier.releases.record import read_record, refuse_record_on_command_line

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "joint", run=run, help="check your record against several releases of the same people",
        description="Verify each release, check your record in each, then compute what an intruder who links you "
        "in every one learns from all of them: per sensitive attribute, your candidate values left in every "
        "release and the joint probability of yours; for releases with ranks, the joint random-match test. Your "
        "level is the verdict policy's on these joint figures; the headline says when the releases together "
        "expose more than any one alone (docs/subject.md, 'Several releases of you').",
        epilog="Exit codes: 0 checked (whatever the verdict), 1 a release does not verify, 2 usage error, 3 an "
        "invalid record or policy file, or releases of different attributes, 4 a key or file unreadable.")
    p.add_argument("releases", nargs="+", metavar="DIR", help="two or more release directories (at most 17)")
    p.add_argument("--key", action="append", required=True, metavar="public.pem",
                   help="the publisher's public key, obtained out of band: once for all releases, or once per "
                   "release in their order")
    p.add_argument("--record", required=True, metavar="my_record.json", help="your own record (a file)")
    p.add_argument("--policy", metavar="policy.json", help="decide your level by this verdict policy instead of "
                   "the verifier's default")
    p.add_argument("--samples", type=count("samples"), default=10_000, metavar="N",
                   help="random records of the joint test when it cannot enumerate them all (default 10000)")
    p.add_argument("--seed", type=count("seed"), default=0, help="the joint test's own randomness (default 0)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    log = p.add_argument_group("the log", "Check that the log holds every release, as verifier check --proof does "
                               "for one: your verdict is witnessed only when each proof holds and a quorum of "
                               "witnesses cosigned.")
    log.add_argument("--proof", action="append", default=[], metavar="FILE",
                     help="a release's proof from its log (DIR.tlog-proof): once per release, in their order")
    log.add_argument("--log-policy", metavar="FILE",
                     help="your log policy: the log's verifier key, the witnesses' keys and how many must cosign")
    log.add_argument("--log-key", metavar="log.vkey",
                     help="the log's verifier key alone: a policy that asks no witness, so the verdict keeps its "
                     "unwitnessed finding")
    log.add_argument("--log", metavar="DIR", help="with --proof, the log's files, to check one history")
    log.add_argument("--checkpoint", action="append", default=[], metavar="FILE",
                     help="with --proof, a checkpoint of the log you got elsewhere; repeat for several")
    log.add_argument("--state", metavar="DIR", help="where the checkpoints you have seen are remembered")


def run(args: argparse.Namespace) -> int:
    from verifier.releases.links import MOST_EARLIER
    from verifier.releases.facts import open_release
    from verifier.releases.joint import check_releases_jointly

    refuse_record_on_command_line(args.record)
    if len(args.releases) < 2:
        raise UsageError("a joint check takes two releases or more; verifier check takes one")
    if len(args.releases) > MOST_EARLIER + 1:
        raise UsageError(f"a joint check takes at most {MOST_EARLIER + 1} releases")
    if len(args.key) not in (1, len(args.releases)):
        raise UsageError(f"give --key once for every release, or once per release ({len(args.releases)} times)")
    if args.proof and len(args.proof) != len(args.releases):
        raise UsageError(f"give --proof once per release, in their order ({len(args.releases)} times), or not at all")
    check_log_args(argparse.Namespace(**{**vars(args), "proof": args.proof or None}))
    policy = load_policy(args.policy)
    keys = args.key * len(args.releases) if len(args.key) == 1 else args.key
    releases = [open_release(directory, key) for directory, key in zip(args.releases, keys)]
    standings = [log_standing_of(argparse.Namespace(**{**vars(args), "proof": proof}), release)
                 for proof, release in zip(args.proof, releases)] or None
    joint = check_releases_jointly(releases, lambda schema: read_record(args.record, schema), policy=policy,
                                   samples=args.samples, seed=args.seed, standings=standings)
    if args.json:
        print_json(joint.to_json())
        return ExitCode.OK
    out = joint.to_json()
    for entry in out["releases"]:
        signed = (f"; its publisher checked it with {', '.join(entry['checked_with'])} (the manifest signs their "
                  "digests)" if entry["checked_with"] else "")
        print(f"OK: {entry['release']} verifies (fingerprint {entry['fingerprint']}): dataset "
              f"{json.dumps(entry['dataset_id'])}, version {entry['release_version']}; alone: "
              f"{entry['level_alone'].replace('_', ' ')}{signed}")
    for standing, entry in zip(standings or (), out["releases"]):
        print(f"  log of {entry['release']}: {standing.words()}")
    verdict = out["verdict"]
    print("\n" + plain_text(out))
    print(f"\n{POLICY_WORDS}\n{verdict['headline']}")
    print("\n".join(verdict["lines"][1:]))
    print(policy_line(verdict["policy"]))
    return ExitCode.OK
