"""``publisher replay``: rerun a release's published methods with fresh seeds; is the release one of their runs?"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from verifier.data.tables import read_table
from verifier.frontend import (
    Phases,
    ExitCode,
    ProgressBar,
    UsageError,
    add_command,
    add_release_args,
    check_non_negative,
    check_probability,
    print_json,
    text_table,
    verified,
    count,
)
from verifier.releases.external_step import not_replayable
from verifier.releases.family import EXTERNAL
from verifier.text import figure, number

if TYPE_CHECKING:
    from publisher.replay import Replay

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "replay", run=run, help="rerun a release's published methods: is it what they make?",
        description="The auditor's third step (after verify and audit): verify the release, rerun its published "
        "methods with their published parameters and --runs fresh seeds on the original table, and test each "
        "statistic of the release (the data-set distance D, quantiles of the record distances, each attribute's "
        "spread, its rank correlation under the intruder's linkage, the change in the correlations between attributes "
        "and the distance between its released and "
        "original distributions; for a generalized release the classes and cells) against the simulated ones: "
        "two-sided p-values, Holm-corrected. A parameter the publisher derived from the data is derived again "
        "and must be equal. A deterministic chain is run once: the release must equal it.",
        epilog="Exit codes: 0 the release is plausible or inconclusive at --alpha (--json says which), 1 verification failed or the release is "
        "implausible (a published parameter was not the one used), 2 usage error, 3 invalid original table or "
        "parameters, 4 I/O failure.",
    )
    add_release_args(p)
    p.add_argument("--original", required=True, metavar="X.csv", help="the original table the release was made from")
    p.add_argument("--runs", type=count("runs"), default=50, metavar="N", help="simulated releases (default 50, from 2 to 10000)")
    p.add_argument("--alpha", type=float, default=0.01,
                   help="reject when a Holm-corrected p-value is below this (default 0.01)")
    p.add_argument("--power-runs", type=count("power_runs"), default=20, metavar="N",
                   help="runs per factor that measure the replay's own power on each published size parameter "
                   "(default 20; 0 skips it, and the verdict can then be plausible where the replay could not "
                   "tell a factor of 2)")
    p.add_argument("--seed", type=count("seed"), default=0, metavar="N",
                   help="the seed of the simulated runs (default 0; public, unrelated to the publisher's secret seed)")


def run(args: argparse.Namespace) -> int:
    from publisher.replay import replay_release  # loaded when run, not for --help

    if args.runs < 2:
        raise UsageError(f"--runs must be at least 2, got {args.runs}")
    check_probability("--alpha", args.alpha)
    check_non_negative("--seed", args.seed)
    check_non_negative("--power-runs", args.power_runs)
    phases = Phases()
    with phases(f"verifying {args.release}"):
        release = verified(args, per_cell=350, also=[args.original])  # the methods' working copies
    external = [s.get("parameters") or {} for s in release.methods if s.get("method") == EXTERNAL]
    again = "composition" in release.claims and any(s.get("method") == "m_invariant" for s in release.methods)
    if external or again:  # a run nothing here can make again from this original alone: nothing here vouches for it
        reason = not_replayable(external[0]) if external else (
            "made with earlier releases of the same people (m_invariant keeps each returning person's group from "
            "them): not replayable from this original alone, so whether the release is one of its runs is not checked")
        if args.json:
            print_json({"verdict": "not_replayable", "plausible": False, "consistent": None, "reason": reason})
        else:
            print(f"OK: {release.path} verifies (fingerprint {release.key.fingerprint})")
            print(f"Verdict: {reason}. The audit (verifier audit --original) still recomputes "
                  "every claim from the release and the original.")
        return ExitCode.OK
    with phases(f"reading {args.original}"):
        original = read_table(args.original, release.schema())
    result = replay_release(release, original, runs=args.runs, alpha=args.alpha, seed=args.seed,
                            progress=ProgressBar("replaying the methods"), power_runs=args.power_runs)
    if args.json:
        print_json(result.to_json())
    else:
        _print(result, release)
    return ExitCode.OK if result.consistent else ExitCode.CHECK_FAILED


def _print(result: "Replay", release) -> None:
    chain = " then ".join(str(m.get("method")) for m in release.methods)
    how = ("once (a deterministic chain: only the row shuffle is random)" if result.deterministic
           else f"{result.simulated_runs} times with fresh seeds (seed {result.seed})")
    print(f"OK: {release.path} verifies (fingerprint {release.key.fingerprint}); replayed {chain} {how}")
    rows = [[s.name, figure(s.published), *(figure(q) for q in s.to_json()["simulated"]),
             "-" if s.p_value is None else figure(s.p_value), "-" if s.holm_p_value is None else figure(s.holm_p_value)]
            for s in result.statistics]
    print(text_table(rows, ["statistic", "published", "runs 5%", "50%", "95%", "p-value", "Holm"]))
    for d in result.derived:
        print(f"{'OK' if d.ok else 'FALSE'}: derived parameter {d.parameter} "
              + ("recomputed equal" if d.ok else f"published {d.published}, recomputed {d.recomputed}"))
    for power in result.power:
        found = power.smallest_factor
        shown = ", ".join(f"{k} {'n/a' if v is None else number(v, share=True)}" for k, v in power.power.items())
        print(f"Power on {power.parameter} = {power.published}: "
              + (f"a factor of {found:g} either way is caught in 80% of runs" if found else
                 "no factor tried (up to 8) is caught in 80% of runs either way") + f" ({shown})")
    if result.verdict == "inconclusive":
        weak = [p.parameter for p in result.power if p.inconclusive]
        print(f"Verdict: inconclusive: no statistic is beyond chance (alpha {result.alpha:g}), but this replay cannot "
              f"tell the published {', '.join(weak)} from a value twice or half as large, so it vouches for nothing "
              "there.")
        return
    if result.plausible:
        print(f"Verdict: plausible: the release looks like a run of its published methods (alpha {result.alpha:g})"
              + ("" if result.power else "; its power was not measured (--power-runs 0)") + ".")
        return
    worst = [s.name for s in result.statistics if s.holm_p_value is not None and s.holm_p_value < result.alpha]
    print("Verdict: IMPLAUSIBLE: the release is not what its published methods make"
          + (f" ({', '.join(worst)} beyond chance at alpha {result.alpha:g})" if worst else "")
          + "; a published parameter was not the one used.")
