"""``publisher anonymize``: run a method chain on a table, for experiments (never the published form)."""

from __future__ import annotations

import argparse
import json
import sys

from publisher.cli.common import add_method_args, load_input, route_params, secret_seed
from verifier.frontend.output_paths import check_output
from verifier.data.tables import write_csv_atomic
from verifier.frontend import Phases, add_command, print_json

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "anonymize", run=run, help="anonymize a table (for experiments)",
        description="Run a method (and the methods chained after it with --then) on X and write Y, rows shuffled "
        "with the secret seed (SPEC section 7). For experiments: a release is made with 'publisher release'.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    add_method_args(p)
    p.add_argument("--out", required=True, metavar="Y.csv", help="written atomically")
    p.add_argument("--keep-order", action="store_true",
                   help="keep X's row order, so that 'publisher assess --paired' can score the links (never publish it)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--json", action="store_true", help='print {"parameters": ..., "metrics": ..., "steps": [...]}')


def run(args: argparse.Namespace) -> int:
    from publisher.methods import anonymize, anonymizing_label, frame_rows, make_method  # loaded when run, not for --help

    methods = [args.method, *args.then]
    check_output(args.out, inputs=[args.input, args.schema], force=args.force)
    routed = route_params(methods, args.param)
    chain = [make_method(m, p, allow_degenerate=args.allow_degenerate) for m, p in zip(methods, routed)]
    phases = Phases()
    with phases(f"reading {args.input}"):
        table, schema = load_input(args.input, args.schema)
    with phases(anonymizing_label(chain)):
        result = anonymize(table.to_frame(), schema, chain, random_state=secret_seed(args))
    frame = result.table if args.keep_order else result.released
    with phases(f"writing {args.out}"):
        write_csv_atomic(args.out, schema.names, frame_rows(frame, schema))
    first = result.steps[0]
    out = {"method": first["method"], "parameters": first["parameters"], "metrics": first["metrics"],
           "steps": result.steps, "output": args.out, "rows_shuffled": not args.keep_order,
           "randomness": result.randomness}
    if args.keep_order:
        print(f"note: {args.out} keeps the original row order for experiments; never publish it", file=sys.stderr)
    if args.json:
        print_json(out)
    else:
        print(f"wrote {args.out}: {len(frame)} records, {'original row order' if args.keep_order else 'rows shuffled'}")
        print(f"  randomness: {result.randomness}")
        for step in result.steps:
            params = ", ".join(f"{k}={json.dumps(v)}" for k, v in step["parameters"].items() if v is not None)
            print(f"  {step['method']}({params})")
            for k, v in step["metrics"].items():
                print(f"    {k}: {json.dumps(v)}")
    return 0

