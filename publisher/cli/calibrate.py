"""``publisher calibrate``: sweep one parameter over a grid, the privacy/utility frontier (SPEC section 8)."""

from __future__ import annotations

import argparse
from publisher.cli.common import add_intruder_args, add_method_args, load_input, secret_seed, split_param
from verifier.frontend.output_paths import check_output
from verifier.frontend import ProgressBar, UsageError, add_command, output_width, print_json, text_table, count
from verifier.frontend.output import fit_line
from verifier.text import number

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "calibrate", run=run, help="sweep a parameter: the privacy/utility frontier",
        description="For each value of one parameter, anonymize X, assess the result, and report the frontier "
        "(SPEC section 8). With --target (and for a generalizing method always), each value's release is judged as "
        "publisher release judges it: every record's level under the verdict policy against the information loss "
        "(NCP and discernibility, or the distortion). The chosen value is the least lossy one that meets the "
        "targets; exit 1 if none does.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    add_method_args(p)
    p.add_argument("--param-grid", required=True, metavar="NAME=V1,V2,...", help="the parameter to sweep and its values")
    add_intruder_args(p)
    p.add_argument("--max-linked-share", type=float, metavar="S", help="target: confidently linked share at most S")
    p.add_argument("--min-distance", type=count("distance"), metavar="D", help="target: data-set permutation distance D at least this")
    p.add_argument("--max-distortion", type=float, metavar="X", help="target: distortion at most X")
    p.add_argument("--target", action="append", default=[], metavar="NAME=VALUE",
                   help="a target each value's release is judged by, as publisher release --target takes it "
                   "(repeatable): max_exposed=N and max_at_risk_share=S (records at each level under the verdict "
                   "policy), min_k=K, min_l=L, max_attribute_risk=P, min_distance=D, max_linked_share=SHARE; "
                   "the frontier is then exposure against information loss, for every method")
    p.add_argument("--policy", metavar="policy.json",
                   help="judge the levels under this verdict policy instead of the verifier's default")
    p.add_argument("--allow-uninformative", action="store_true",
                   help="judge a generalized release that tells nothing instead of listing it as refused")
    p.add_argument("--plot", metavar="frontier.png", help="write the frontier as a PNG plot")
    p.add_argument("--force", action="store_true", help="replace an existing --plot file")
    p.add_argument("--json", action="store_true",
                   help='print {"frontier": [{"value": ..., "distance": ..., ...}], "chosen": ...}')


def run(args: argparse.Namespace) -> int:
    from publisher.calibrate import Targets, calibrate, check_grid, plot_frontier  # loaded when run, not for --help
    from verifier.releases.family import GENERALIZING

    name, _, grid = args.param_grid.partition("=")
    values = [v.strip() for v in grid.split(",") if v.strip()]
    if not name or not values:
        raise UsageError(f"--param-grid takes name=v1,v2,..., got {args.param_grid!r}")
    if args.target or args.method in GENERALIZING:
        return _run_levels(args, name, values)
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



def _run_levels(args: argparse.Namespace, name: str, values: list[str]) -> int:
    """The frontier of exposure against information loss (issue 60, item 6)."""
    from publisher.calibrate import check_grid
    from publisher.calibrate_levels import calibrate_levels, plot_level_frontier
    from publisher.methods import make_method
    from verifier.releases.family import family_of
    from verifier.releases.policy import load_policy
    from verifier.releases.targets import parse_targets, target_words

    check_grid(args.method, name, ranks=False)
    old = [flag for flag, given in (("--max-linked-share", args.max_linked_share), ("--min-distance",
                                                                                     args.min_distance),
                                    ("--max-distortion", args.max_distortion)) if given is not None]
    if old:
        raise UsageError(f"{old[0]} judges the frontier of distances and links; with the level targets give it as "
                         "--target (max_linked_share=S, min_distance=D)")
    if args.plot:
        check_output(args.plot, option="--plot", inputs=[args.input, args.schema], force=args.force)
    policy = load_policy(args.policy) if args.policy else None
    fixed = dict(split_param(t) for t in args.param)
    table, schema = load_input(args.input, args.schema)
    first = make_method(args.method, {**fixed, name: values[0]}, allow_degenerate=args.allow_degenerate)
    targets = parse_targets(args.target, family=family_of([{"method": first.name, "parameters": first.parameters()}]),
                            sensitive=[a.name for a in schema.attributes if a.role == "sensitive"])
    result = calibrate_levels(table, args.method, name, values, targets=targets, fixed=fixed, then=args.then,
                              seed=secret_seed(args), alpha=args.alpha, samples=args.samples, policy=policy,
                              allow_degenerate=args.allow_degenerate, allow_uninformative=args.allow_uninformative,
                              progress=ProgressBar("calibration"))
    if args.plot:
        plot_level_frontier(result, args.plot)
    if args.json:
        print_json(result.to_json())
        return 0 if result.chosen is not None else 1
    print(_level_report(args, name, table.n_records, result, target_words(targets)))
    return 0 if result.chosen is not None else 1


def _level_report(args: argparse.Namespace, name: str, n: int, result, targets: list[str]) -> str:
    """The level frontier in words: a row per value, then the chosen value and the command that publishes it."""
    generalized = any(r.get("ncp") is not None for r in result.frontier)
    masked = any(r.get("sa_distortion_ratio") is not None for r in result.frontier)
    changed = any(r.get("changed_share") is not None for r in result.frontier)
    several = len(result.targets) > 1
    rows = []
    for r in result.frontier:
        if r.get("refused"):
            rows.append([str(r["value"]), "refused", "", "", *([""] * (1 + (1 + masked if generalized else changed))),
                         r["refused"]])
            continue
        loss = [number(r["ncp"]), *([number(r["sa_distortion_ratio"])] if masked else []),
                f"{r['discernibility']:,}"] if generalized else [
            number(r["distortion"]), *([number(r["changed_share"], share=True)] if changed else [])]
        meets = "yes" if r["meets_targets"] else "no: " + ", ".join(r["misses"]) if several else "no"
        rows.append([str(r["value"]), f"{r['exposed']:,}", f"{r['at_risk']:,}", f"{r['protected']:,}", *loss, meets])
    head = [name, "exposed", "at risk", "protected",
            *(["NCP", *(["SA.DR"] if masked else []), "discernibility"] if generalized else
              ["distortion", *(["cells changed"] if changed else [])]),
            "meets targets"]
    lines = [f"Calibration of {args.method}{''.join(' then ' + t for t in args.then)} over {name} ({len(rows)} "
             f"values, {n:,} records), each record's level under the verdict policy "
             f"\"{result.policy.get('name', 'default')}\" against the information loss; targets: "
             f"{', '.join(targets) or 'none'}:", "", text_table(rows, head)]
    for r in result.frontier:
        if r.get("refused"):
            lines.append(f"{name} = {r['value']}: {r['why']}")
    if result.chosen is None:
        lines.append("\nNo value meets the targets; widen the grid, or try another method (docs/methods.md, "
                     "\"From a refused release to a published one\").")
    else:
        lines.append(f"\nChosen: {name} = {result.chosen['value']}, the least lossy value that meets the targets"
                     f"{' (NCP, then SA.DR, then discernibility)' if masked else ''}. publisher release with the "
                     f"same parameters, --param {name}={result.chosen['value']} and the same --target publishes "
                     "it, signing these figures.")
    if args.plot:
        lines.append(f"Frontier plot: {args.plot}")
    width = output_width()  # the sentences fit the terminal; the table fits itself
    return "\n".join(line if i == 2 else "\n".join(fit_line(part, width) for part in line.split("\n"))
                     for i, line in enumerate(lines))
