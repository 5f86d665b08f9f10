"""``verifier distance``: permutation distance and (d, v)-permuted privacy (paper 003, Def. 1-2)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from verifier.cli.inputs import add_pair_args, load_pair
from verifier.data.schema_file import load_schema
from verifier.frontend import (
    Phases,
    ExitCode,
    ProgressBar,
    UsageError,
    add_command,
    add_engine_args,
    check_out_file,
    check_record_number,
    engine_client,
    finite,
    parse_v,
    print_json,
    text_table,
    count,
)
from verifier.text import figure, plural


if TYPE_CHECKING:
    from verifier.core.permutation import RankSpace

__all__ = ["register"]

#: records the readable output lists before pointing to --out
SHOWN = 50


def register(sub, common) -> None:
    p = add_command(
        sub, common, "distance", run=run,
        help="permutation distance and (d,v)-permuted privacy (paper 003, Def. 1-2)",
        description="For every original record (or one), its permutation distance to Y, the matching released "
        "records and their rank deviations, and the spread of the windows around it; then the data-set level "
        "(D, v) (SPEC section 4). With --d and --v, check (d, v)-permuted privacy and exit 1 if it does not hold.",
    )
    add_pair_args(p)
    add_engine_args(p)
    p.add_argument("--record", type=count("record"), metavar="N", help="only record N of X (numbered from 1)")
    p.add_argument("--d", type=count("distance"), metavar="D", help="check: permutation distance at least D")
    p.add_argument("--v", metavar="V1,V2,...", help="check: spread above v_j for every attribute (one value for all)")
    p.add_argument("--out", metavar="FILE",
                   help="write every record's row (distance, matches, deviations, spreads) to FILE.parquet or "
                   "FILE.csv (no list columns); streamed, written whole or not at all")
    p.add_argument("--json", action="store_true",
                   help="the summary as JSON on stdout (D, v, quantiles of the distances); per-record JSON only with "
                   "--record N, every record with --out")


def run(args: argparse.Namespace) -> int:
    # the permutation core and the engine load when the command runs, not when any command starts
    from verifier.core.permutation import RankSpace, compute_permuted_privacy
    from verifier.distributed.engine import distributed_permuted_privacy
    from verifier.distributed.partitions import table_pair

    check_out_file(args.out, args.original, args.anonymized)
    if (args.d is None) != (args.v is None):
        raise UsageError("--d and --v go together: the (d, v) to check")
    phases = Phases()
    with engine_client(args) as client:
        if client is None:
            with phases(f"reading {args.original} and {args.anonymized}"):
                tables = dict(zip("xy", load_pair(args.original, args.anonymized, args.schema)))
            names = tables["x"].names
            check_record_number(args.record, tables["x"].n_records, args.original)
            with phases("ranking the anonymized records"):
                y = tables.pop("y")
                space = RankSpace(y.values, y.kinds)
            # X is handed over, not kept: freed once its query blocks are known, and the tree once searched
            report = compute_permuted_privacy(space, tables.pop("x").values, keep_tree=False,
                                              progress=ProgressBar("permutation distances"))
            return _output(args, names, report, space, phases)
        with phases(f"reading {args.original} and {args.anonymized} on the cluster"):
            xp, yp = table_pair(client, args.original, args.anonymized,
                                load_schema(args.schema) if args.schema else None)
        report, space = distributed_permuted_privacy(client, xp.parts, yp.parts, yp.schema.kinds, phase=phases)
        check_record_number(args.record, report.distances.size, args.original)
        return _output(args, xp.schema.names, report, space, phases)


def _output(args: argparse.Namespace, names: list[str], report, space, phases) -> int:
    from verifier.core.record_rows import distance_columns, distance_summary
    from verifier.data.record_file import BATCH, write_record_file

    """Write --out, print the summary (text or JSON), and the exit code of the (d, v) check."""
    n = int(report.distances.size)
    v = parse_v(args.v, len(names))
    if args.out:
        with phases(f"writing {args.out}"):
            write_record_file(args.out, distance_columns(report, space, names, batch=BATCH))
    if args.record is not None:
        wanted = [args.record - 1]
    else:
        wanted = [] if args.json else range(min(n, SHOWN))
    records = [_record(report, space, r) for r in wanted]
    out: dict[str, Any] = {
        "attributes": names,
        "spread_kinds": report.spread_kinds,
        "n_records": n,
        "dataset": {"distance": report.dataset_distance, "variances": [finite(t) for t in report.dataset_spread]},
        "distances": distance_summary(report.distances, report.match_counts),
        "out": args.out,
        "engine": args.engine,
        **({"records": records} if args.record is not None else {}),
    }
    check = None
    if args.d is not None:
        check = report.check_dv(space, d=args.d, v=v, record=None if args.record is None else args.record - 1)
        out["check"] = {
            "scope": f"record {args.record}" if args.record is not None else "dataset",
            "d": check.d,
            "v": list(check.v),
            "distance": check.distance,
            "variances_at_d": [finite(t) for t in check.spread],
            "satisfied": check.satisfied,
        }
    if args.json:
        print_json(out)
    else:
        _print_distance(names, n, report, records, check, args)
    return ExitCode.OK if check is None or check.satisfied else ExitCode.CHECK_FAILED


def _record(report, space: RankSpace, r: int) -> dict[str, Any]:
    matches = report.record_matches(r)
    return {
        "record": r + 1,
        "distance": int(report.distances[r]),
        "matches": (matches + 1).tolist(),
        "query_blocks": [[int(a), int(b)] for a, b in zip(report.query_lo[r], report.query_hi[r])],
        "deviations": space.deviations(report.query_lo[r], report.query_hi[r], matches).tolist(),
        "variances_at_dataset_distance": [finite(t) for t in report.spread_at_dataset_distance[r]],
        "variances_at_record_distance": [finite(t) for t in report.spread_at_record_distance[r]],
    }


def _print_distance(names: list[str], n: int, report, records, check, args) -> None:
    kinds = report.spread_kinds
    if any(k != "variance" for k in kinds):
        print("Spread: " + ", ".join(f"{n}: {k.replace('_', '-')}" for n, k in zip(names, kinds)) + "\n")
    if args.record is not None:
        rec = records[0]
        print(f"Record {rec['record']} of {args.original}")
        print(f"  query ranks (blocks): {', '.join(f'{n}={a}' if a == b else f'{n}={a}-{b}' for n, (a, b) in zip(names, rec['query_blocks']))}")
        print(f"  permutation distance d = {rec['distance']}; {plural(len(rec['matches']), 'matching released record')}")
        rows = [[str(mi), *[str(t) for t in dev]] for mi, dev in zip(rec["matches"][:50], rec["deviations"][:50])]
        print(text_table(rows, ["match", *[f"dev {n}" for n in names]]))
        if len(rec["matches"]) > 50:
            print(f"  ... and {len(rec['matches']) - 50} more (--json lists them all)")
        print(f"  spread at d = {rec['distance']}: " + ", ".join(f"{n}={figure(t)}" for n, t in zip(names, rec["variances_at_record_distance"])))
        print(f"  spread at D = {report.dataset_distance}: " + ", ".join(f"{n}={figure(t)}" for n, t in zip(names, rec["variances_at_dataset_distance"])))
    else:
        shown = records[:50]
        rows = [
            [str(r["record"]), str(r["distance"]), " ".join(map(str, r["matches"][:6])) + (" ..." if len(r["matches"]) > 6 else ""),
             *[figure(t) for t in r["variances_at_dataset_distance"]]]
            for r in shown
        ]
        print(text_table(rows, ["record", "d", "matches", *[f"spread@D {n}" for n in names]]))
        if n > SHOWN:
            print(f"... {n - SHOWN} more records" + (f" (every record is in {args.out})" if args.out
                                                              else " (--out FILE.parquet writes every record)"))
    print(
        f"\nData set: D = {report.dataset_distance}, v = ("
        + ", ".join(figure(t) for t in report.dataset_spread)
        + "): every record is at least D ranks from its closest match, and no window at D is less spread"
        " than v (paper 003, Def. 2; Table 4)."
    )
    if check is not None:
        verdict = "HOLDS" if check.satisfied else "DOES NOT HOLD"
        print(f"\nCheck ({check.d}, ({', '.join(figure(t) for t in check.v)}))-permuted privacy: {verdict}")
        print(f"  distance {check.distance} >= {check.d}: {'yes' if check.distance_ok else 'no'}")
        for n, s, t, ok in zip(names, check.spread, check.v, check.spread_ok):
            print(f"  spread of {n} at d = {check.d}: {figure(s)} > {figure(t)}: {'yes' if ok else 'no'}")
