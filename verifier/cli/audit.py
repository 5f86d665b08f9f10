"""``verifier audit``: verify a release, then recompute its claims (SPEC section 9)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from verifier.frontend.output_paths import check_output
from verifier.data.sampling_weights import read_weight_column
from verifier.data.tables import column_names, read_table
from verifier.frontend import (
    ExitCode,
    Phases,
    UsageError,
    add_command,
    add_engine_args,
    add_release_args,
    check_out_file,
    engine_client,
    print_json,
    text_table,
    verified,
)
from verifier.releases.policy import load_policy
from verifier.text import literal, number

__all__ = ["register"]


def _original_weights(path: str, weighted) -> np.ndarray | None:
    """The original's sampling weights, from the column the manifest names, when the file has it."""
    column = weighted.get("column") if isinstance(weighted, dict) else None
    if not isinstance(column, str) or column not in column_names(path):
        return None
    return read_weight_column(path, column)


def _earlier(args: argparse.Namespace, release, phases) -> list:
    """Each ``--previous`` release, verified with the key that verified this one, and its links file."""
    from verifier.releases.links import MOST_EARLIER, read_earlier
    if args.previous and not args.original:
        raise UsageError("--previous recomputes the joint figures from the original: give --original X.csv too")
    if len(args.previous) > MOST_EARLIER:
        raise UsageError(f"--previous is given {len(args.previous)} times; a release is checked with at most "
                         f"{MOST_EARLIER} earlier ones")
    out = []
    for folder in args.previous:
        with phases(f"verifying {folder}"):
            out.append(read_earlier(folder, release.key))
    columns = {links.column for _, links in out}
    if len(columns) > 1:
        raise UsageError(f"the links files of --previous link people by different columns ({', '.join(sorted(columns))}"
                         "); a release is checked with earlier ones linked by one column")
    return out


def register(sub, common) -> None:
    p = add_command(
        sub, common, "audit", run=run, help="verify a release and recompute its claims",
        description="Verify, then recompute every figure of the manifest that the given data allow: from the release "
        "alone the record count, k, the released means, variances and correlations and a generalized release's "
        "groups; with --original also (D, v), the intruder's figures, the attribute-disclosure risks and the "
        "original's figures. Every other figure is listed as not checked, with the reason.",
        epilog="Exit codes: 0 every checked claim is true, 1 verification failed or a claim is false, 2 usage error, "
        "3 invalid original table, --policy file or links file, 4 I/O failure.",
    )
    add_release_args(p)
    p.add_argument("--original", metavar="X.csv", help="the original table, for an auditor entitled to it; for a "
                   "release made with sampling weights, with the weight column the manifest names")
    p.add_argument("--report", metavar="audit.md", help="write a Markdown report with PNG plots beside it")
    p.add_argument("--policy", metavar="policy.json", help="the verdict policy the manifest's policy_levels name, "
                   "where it is not the verifier's default: with --original, every record's level is recomputed "
                   "under it")
    p.add_argument("--previous", action="append", default=[], metavar="DIR",
                   help="with --original, an earlier release the manifest's composition names, with its links file "
                   "DIR.links.json beside it (repeatable, at most 16): the joint figures of the people released "
                   "before are recomputed; the original needs the linking column the links files name")
    p.add_argument("--out", metavar="FILE",
                   help="with --original, write every original record's row (her distance, matches, deviations and "
                   "spreads, and the intruder's link and p-value) to FILE.parquet or FILE.csv (no list columns)")
    add_engine_args(p, what="with --original, the permutation distances and the intruder run on the cluster, with "
                    "the same results; "
                    "the tables and the figures computed from the results stay here")


def run(args: argparse.Namespace) -> int:
    # the audit's modules load when it runs, not when any command starts (they bring the kernels and numba)
    from verifier.data.record_file import BATCH, write_record_file
    from verifier.distributed.searches import ClusterSearches
    from verifier.releases.audit import audit_release, audit_rows
    from verifier.releases.audit_report import report_paths, rounded, write_report
    from verifier.releases.links import read_link_column
    from verifier.releases.exposure import base_rate_line, base_rates, class_model_lines, class_models

    if args.out and not args.original:
        raise UsageError("--out lists every original record's figures: give --original X.csv too")
    check_out_file(args.out, args.original)
    policy = load_policy(args.policy) if args.policy else None
    for path in report_paths(args.report):  # the report and every plot it may write beside it
        option = "--report" if path == args.report else (f"the plot {Path(path).name} that --report {args.report} "
                                                         "writes beside itself")
        check_output(path, option=option, inputs=[args.original, args.out])
    if args.engine != "local" and not args.original:
        raise UsageError("--engine dask runs the searches an audit with --original makes: give --original X.csv")
    phases = Phases()
    with phases(f"verifying {args.release}"):
        release = verified(args, per_cell=160, also=[args.original])  # X and Y, both trees: 1.5 GB at 1e6 x 5
    if args.out and release.family == "generalized":
        raise UsageError("--out lists permutation distances, which a generalized release does not have; "
                         "its groups are in the audit and --report")
    original = weights = ids = None
    earlier = _earlier(args, release, phases)
    if args.original:
        with phases(f"reading {args.original}"):
            original = read_table(args.original, release.schema())
            weights = _original_weights(args.original, release.predicate.get("sampling_weights"))
            ids = read_link_column(args.original, earlier[0][1].column) if earlier else None
    with engine_client(args) as client:
        with phases("recomputing the claims"):
            searches = None if client is None else ClusterSearches(client, phase=phases)
            result = audit_release(release, original, weights, searches=searches, policy=policy, earlier=earlier,
                                   ids=ids)
        out = args.out if args.out and "assessment" in result.figures else None  # not when X and Y differ in size
        if out:
            with phases(f"writing {out}"):
                write_record_file(out, audit_rows(result, batch=BATCH))
    written = []
    if args.report:
        with phases(f"writing {args.report}"):
            written = write_report(result, args.report)
    rates, models = base_rates(release), class_models(release)
    if args.json:
        print_json({**result.to_json(), "base_rates": rates, "class_models": models, "report": written, "out": out,
                    "engine": args.engine})
    else:
        print(f"OK: {release.path} verifies (fingerprint {release.key.fingerprint}); auditing its claims"
              + (" with the original" if original is not None else " from the release alone"))
        rows = [[c.name, rounded(c.claimed), rounded(c.computed), "true" if c.ok else "FALSE"] for c in result.checks]
        whole = [max(len(r[1]), len(r[2])) <= LONGEST_CELL for r in rows]
        print(text_table([r for r, fits in zip(rows, whole) if fits], ["claim", "manifest", "recomputed", "verdict"]))
        for line in long_claim_lines([r for r, fits in zip(rows, whole) if not fits]):
            print(line)
        for c in result.checks:
            if not c.ok:
                print(f"FALSE: {c.name}: {c.note or 'the figures differ'}")
        by_reason: dict[str, list[str]] = {}
        for figure_path, reason in result.unchecked.items():
            by_reason.setdefault(reason, []).append(figure_path)
        for reason, paths in by_reason.items():
            print(f"not checked ({reason}): " + ", ".join(paths))
        for name, rate in rates.items():  # beside the risks above: what anyone guesses knowing nothing
            print(f"base rate of {json.dumps(name)}: {base_rate_line(name, rate, json.dumps)}")
        for line in class_model_lines(models):  # the release class by class, as ARX's models judge it
            print(line)
        for path in written + ([out] if out else []):
            print(f"wrote {path}")
        print(audit_verdict(result, release.claims))
    return ExitCode.OK if result.passed else ExitCode.CHECK_FAILED


#: a figure longer than this (a sentence, a list of variances) is shown whole below the table, never cut in it
LONGEST_CELL = 16


def long_claim_lines(rows: list[list[str]]) -> list[str]:
    """The claims whose values would be cut in the table ("the table i…"), each whole on its own lines."""
    if not rows:
        return []
    lines = ["claims too long for the table, whole:"]
    for name, claimed, computed, verdict in rows:
        if claimed == computed:
            lines.append(f"  {name} ({verdict}): {claimed}")
        else:
            lines += [f"  {name} ({verdict}):", f"    manifest:   {claimed}", f"    recomputed: {computed}"]
    return lines


def audit_verdict(result, claims: dict | None = None) -> str:
    """The audit's last line, what a reader acts on: passed or not, how many claims were checked, and what was not;
    then what the release does for people (issue 60, item 5): its records' levels under the verdict policy its
    manifest names, recomputed where the audit had the original, else as signed."""
    false = [c.name for c in result.checks if not c.ok]
    unchecked = f"; {len(result.unchecked)} not checked (listed above, with why)" if result.unchecked else ""
    people = levels_sentence(result, claims)
    if result.passed:
        return f"AUDIT PASSED: all {len(result.checks)} checked claims hold{unchecked}.{people}"
    named = ", ".join(false[:3]) + (f" and {len(false) - 3} more" if len(false) > 3 else "")
    return f"AUDIT FAILED: {len(false)} of {len(result.checks)} checked claims are false ({named}){unchecked}.{people}"


def levels_sentence(result, claims: dict | None) -> str:
    """The sentence " What it does for people: ..." from the levels the audit recomputed (``policy_levels.*``
    checks), else the manifest's signed ones; empty where it signs none."""
    signed = (claims or {}).get("policy_levels")
    if not isinstance(signed, dict):
        return ""
    computed = {c.name.split(".", 1)[1]: c.computed for c in result.checks if c.name.startswith("policy_levels.")}
    levels = {k: computed.get(k, signed.get(k)) for k in ("exposed", "at_risk", "protected", "records")}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in levels.values()):
        return ""
    whose = "recomputed with the original" if "exposed" in computed else "as the publisher signed them"
    name = literal((signed.get("policy") or {}).get("name"))
    return (f" What it does for people, under the verdict policy \"{name}\" ({whose}): exposed {levels['exposed']:,}, "
            f"at risk {levels['at_risk']:,}, protected {levels['protected']:,} of {levels['records']:,} records.")
