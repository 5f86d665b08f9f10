"""``verifier check``: a subject's report on her own record against a verified release."""

from __future__ import annotations

import argparse
from contextlib import contextmanager, nullcontext
import json

from verifier.cli.inputs import check_exhaustive, intruder_options
from verifier.frontend import (ExitCode, Phases, ProgressBar, add_command, add_release_args, count, print_json,
                               text_table, verified)
from verifier.frontend.log_args import add_log_args, check_log_args, log_standing_of
from verifier.releases.facts import formula_warning
from verifier.releases.plain_words import POLICY_WORDS, plain_text
from verifier.releases.policy import load_policy, policy_line
from verifier.releases.record import read_record, refuse_record_on_command_line
from verifier.releases.verdict import not_verifiable
from verifier.releases.verification import ReleaseError
from verifier.text import figure, number

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "check", run=run, help="check your own record against a verified release",
        description="Verify the release, then compute your permutation distance, the released records that match "
        "you and their deviations, the variances around your record against the publisher's claimed (D, v), "
        "your attribute disclosure risk, and your random-match test, with a verdict in plain words. Your record "
        "is read from a file (JSON object or one-row CSV), never from the command line, and never written.",
        epilog="Exit codes: 0 checked (whatever the verdict: protected, at_risk or exposed), 1 the release, or its log "
        "proof, does not verify (with --json, {\"verified\": false, \"reason\", \"message\", \"verdict\"} with level not_verifiable), "
        "2 usage error, 3 invalid record or policy file, 4 key or policy file unreadable.",
    )
    add_release_args(p)
    p.add_argument("--record", required=True, metavar="my_record.json", help="your own record (a file)")
    p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a match is confident")
    p.add_argument("--samples", type=count("samples"), default=10_000, metavar="N", help="Monte Carlo draws (default 10000, at most 10000000)")
    p.add_argument("--exhaustive-limit", type=count("exhaustive_limit"), default=10**6, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=count("seed"), default=0, help="the random-match test's own randomness (default 0)")
    p.add_argument("--no-random-match", action="store_true", help="skip the random-match test")
    p.add_argument("--policy", metavar="policy.json", help="decide your level by this verdict policy instead of "
                   "the verifier's default (docs/subject.md, 'The verdict policy')")
    add_log_args(p)
    p.set_defaults(exhaustive=False, monte_carlo=False, max_linked_share=None)


@contextmanager
def _refusal_in_json(args: argparse.Namespace, *, verified: bool):
    """With --json, a release refused here is her 'not_verifiable' verdict on stdout, with the reason (whether it
    verified: its data may be refused once signed); the FAIL line follows on stderr."""
    try:
        yield
    except ReleaseError as exc:
        if args.json:
            print_json({"verified": verified, "reason": exc.reason, "message": exc.message,
                        "verdict": not_verifiable(exc.reason, exc.message).to_json()})
        raise


def run(args: argparse.Namespace) -> int:
    """A subject's report on her own record (SPEC sections 4, 5 subject's version, 6)."""
    # the kernels and the subject's check load when a check runs, not when any command starts
    from verifier.core.warm_up import COLD_NOTICE, KernelWarmUp
    from verifier.releases.subject import check_record, prepare, random_match

    refuse_record_on_command_line(args.record)
    check_log_args(args)
    policy = load_policy(args.policy)  # before any work: a policy that cannot be read decides nothing
    phases = Phases()
    with phases(f"verifying {args.release}"), _refusal_in_json(args, verified=False):
        release = verified(args, json_failure=False)
        standing = log_standing_of(args, release)
    kernels = KernelWarmUp(release.claims["n_records"])  # loads (or compiles) the kernels while the release is read
    # signed, but its data cannot be read: --json still says so, as the page does
    with phases("reading and ranking the release"), _refusal_in_json(args, verified=True):
        prepared = prepare(release)
    record = read_record(args.record, prepared.schema)
    with phases(COLD_NOTICE) if kernels.cold else nullcontext():
        kernels.wait()
    testing = not args.no_random_match and prepared.ranks_apply
    if testing:
        check_exhaustive(prepared.n_records, len(prepared.kinds), args)
    check = check_record(prepared, record, whole_space=testing)  # the test needs the whole rank space anyway
    options = intruder_options(args)
    if not testing:
        report = None
    else:
        report = random_match(prepared, check, alpha=options["alpha"], samples=options["samples"],
                              seed=options["random_state"], progress=ProgressBar("random-match test"))
    out = {**check.to_json(report, policy, unwitnessed=standing.unwitnessed), "log": standing.to_json()}
    if args.json:
        print_json(out)
        return ExitCode.OK
    print(f"OK: {release.path} verifies (fingerprint {release.key.fingerprint}): dataset "
          f"{json.dumps(release.dataset_id)}, version {release.release_version}")
    if standing.logged is not None:
        print(f"log: {standing.words()}")
    warning = formula_warning(release, prepared.formula_cells)
    if warning:
        print(warning)
    verdict = out["verdict"]
    print("\n" + plain_text(out))
    print(f"\n{POLICY_WORDS}\n{verdict['headline']}")
    print("\n".join(verdict["lines"][1:]))
    print(policy_line(verdict["policy"]) + "\n")
    if check.ranks_apply:
        _print_ranks(check, out, report)
    else:
        _print_group(check, out)
    return ExitCode.OK


def _print_ranks(check, out: dict, report) -> None:
    """Her matches with their deviations, and the spreads around her record against the claimed (D, v)."""
    names = check.names
    rows = [[str(m), *[str(t) for t in dev]] for m, dev in zip(out["matches"][:20], out["deviations"][:20])]
    print(text_table(rows, ["match", *[f"dev {json.dumps(n)}" for n in names]]))
    if len(out["matches"]) > 20:
        print(f"... and {len(out['matches']) - 20} more (use --json)")
    claimed = out["claimed"]
    spread_rows = []
    for j, n in enumerate(names):
        at_d = out["variances_at_claimed_distance"][j] if out["variances_at_claimed_distance"] else None
        v = claimed["variances"][j] if claimed["variances"] and j < len(claimed["variances"]) else None
        spread_rows.append([json.dumps(n), figure(out["variances"][j]), figure(at_d), figure(v)])
    print("\n" + text_table(spread_rows, ["attribute", f"spread at your d = {check.distance}",
                                         f"at claimed D = {claimed['distance']}", "claimed v"]))
    if report is not None:
        print(f"\nYour p-value F_rand({check.distance}) = {number(report.p_value)} "
              f"({report.random.method.replace('_', ' ')}, {report.random.total} random records)")


def _print_group(check, out: dict) -> None:
    """Her group in a generalized release: its size, and per sensitive attribute her risk and the best guess."""
    shown = " ".join(map(str, out["class_rows"][:20])) + (" ..." if len(out["class_rows"]) > 20 else "")
    print(f"Released rows consistent with your values ({out['class_size']}): {shown or '-'}")
    if out.get("classes", 1) > 1:
        print(f"They fall in {out['classes']} published groups; the smallest holds {out['smallest_class']}.")
    rows = [[json.dumps(n), figure(r["risk"]), figure(r["candidate_set"]["risk"]), str(r["candidates"]),
             json.dumps(r["best_guess"])] for n, r in out["attribute_disclosure"].items()]
    if rows:
        print("\n" + text_table(rows, ["sensitive attribute", "your risk (worst group)", "among your candidates",
                                        "candidates", "attacker's best guess"]))
