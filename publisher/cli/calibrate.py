"""``publisher calibrate``: sweep one parameter over a grid, the privacy/utility frontier (SPEC section 8)."""

from __future__ import annotations

import argparse
from publisher.cli.common import add_intruder_args, add_method_args, load_input, secret_seed, split_param
from verifier.frontend.output_paths import check_output
from verifier.frontend import ProgressBar, UsageError, add_command, print_json, text_table, count
from verifier.text import number

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "calibrate", run=run, help="sweep a parameter: the privacy/utility frontier",
        description="For each value of one parameter, anonymize X, assess the result, and report the frontier "
        "(SPEC section 8). The chosen value is the least distorting one that meets the targets; exit 1 if none does.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    add_method_args(p)
    p.add_argument("--param-grid", required=True, metavar="NAME=V1,V2,...", help="the parameter to sweep and its values")
    add_intruder_args(p)
    p.add_argument("--max-linked-share", type=float, metavar="S", help="target: confidently linked share at most S")
    p.add_argument("--min-distance", type=count("distance"), metavar="D", help="target: data-set permutation distance D at least this")
    p.add_argument("--max-distortion", type=float, metavar="X", help="target: distortion at most X")
    p.add_argument("--plot", metavar="frontier.png", help="write the frontier as a PNG plot")
    p.add_argument("--force", action="store_true", help="replace an existing --plot file")
    p.add_argument("--json", action="store_true",
                   help='print {"frontier": [{"value": ..., "distance": ..., ...}], "chosen": ...}')


def run(args: argparse.Namespace) -> int:
    from publisher.calibrate import Targets, calibrate, check_grid, plot_frontier  # loaded when run, not for --help

    name, _, grid = args.param_grid.partition("=")
    values = [v.strip() for v in grid.split(",") if v.strip()]
    if not name or not values:
        raise UsageError(f"--param-grid takes name=v1,v2,..., got {args.param_grid!r}")
    check_grid(args.method, name)
    if args.plot:
        check_output(args.plot, option="--plot", inputs=[args.input, args.schema], force=args.force)
    fixed = dict(split_param(t) for t in args.param)
    targets = Targets(max_linked_share=args.max_linked_share, min_distance=args.min_distance,
                      max_distortion=args.max_distortion)
    table, schema = load_input(args.input, args.schema)
    result = calibrate(
        table.to_frame(), schema, args.method, name, values, fixed=fixed, then=args.then, targets=targets,
        seed=secret_seed(args), alpha=args.alpha, samples=args.samples, allow_degenerate=args.allow_degenerate,
        progress=ProgressBar("calibration"),
    )
    if args.plot:
        plot_frontier(result, args.plot)
    if args.json:
        print_json(result.to_json())
    else:
        rows = [[f"{r['value']:g}", str(r["distance"]), number(r['confidently_linked_share'], share=True),
                 number(r['correct_link_share'], share=True), number(r["hellinger"]), number(r["distortion"]),
                 number(r["max_abs_correlation_change"]), number(r["mean_rank_correlation"]),
                 "yes" if r["meets_targets"] else "no"] for r in result.frontier]
        print(f"Calibration of {args.method}{''.join(' then ' + t for t in args.then)} over {name} "
              f"({len(values)} values, {table.n_records} records):\n")
        print(text_table(rows, [name, "D", "linked", "correct", "Hellinger", "distortion", "max corr change",
                            "rank corr X~Z", "meets targets"]))
        if result.chosen is None:
            print("\nNo value meets the targets; widen the grid or relax the targets.")
        else:
            print(f"\nChosen: {name} = {result.chosen['value']:g}, the least distorting value that meets the targets.")
        if args.plot:
            print(f"Frontier plot: {args.plot}")
    return 0 if result.chosen is not None else 1

