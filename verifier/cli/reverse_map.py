"""``verifier reverse-map``: Z, Y's ranks carrying X's values (paper 003, Algorithm 1)."""

from __future__ import annotations

import argparse

import numpy as np

from verifier.frontend.output_paths import check_output
from verifier.cli.inputs import add_pair_args, load_pair
from verifier.data.tables import write_csv_atomic
from verifier.errors import InvalidInputError
from verifier.frontend import ExitCode, add_command, finite, print_json, text_table, count
from verifier.text import figure

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "reverse-map", run=run, help="reverse-map Y onto X (paper 003, Algorithm 1)",
        description="Write Z: each value of Y replaced by the value of X with the same rank (SPEC section 3). "
        "Prints per attribute the rank correlation of X and Z and the noise |Y-Z| beside |Y-X|.",
    )
    add_pair_args(p)
    p.add_argument("--out", required=True, metavar="Z.csv", help="where to write Z (written atomically)")
    p.add_argument("--seed", type=count("seed"), default=0, help="breaks ties among Y's values: the intruder's own randomness")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def run(args: argparse.Namespace) -> int:
    from verifier.core.ranks import reverse_map  # the kernels load when the command runs

    check_output(args.out, inputs=[args.original, args.anonymized, args.schema])
    x, y = load_pair(args.original, args.anonymized, args.schema)
    if x.n_records != y.n_records:
        raise InvalidInputError(
            f"has {y.n_records} records and the original {x.n_records}; reverse mapping needs the same number",
            path=args.anonymized, reason="SHAPE_MISMATCH",
        )
    result = reverse_map(x.values, y.values, random_state=args.seed)
    text = x.cell_text()
    cols = np.arange(x.n_attributes)
    z_text = text[result.source_rows, cols]
    write_csv_atomic(args.out, x.names, z_text.tolist())
    attrs = [
        {
            "name": name,
            "rank_correlation": finite(result.rank_correlation[j]),
            "mean_abs_noise_y_x": finite(result.mean_abs_noise_y_x[j]),
            "mean_abs_noise_y_z": finite(result.mean_abs_noise_y_z[j]),
        }
        for j, name in enumerate(x.names)
    ]
    if args.json:
        print_json({"output": args.out, "n_records": x.n_records, "seed": args.seed, "attributes": attrs})
    else:
        print(f"Reverse-mapped {x.n_records} records of {args.anonymized} onto {args.original}: wrote {args.out}")
        print("Per attribute: Spearman rank correlation of X and Z (a disclosure proxy, paper 003 section 2),")
        print("and the noise left once the permutation is taken out (mean |Y-Z|) beside the noise added (mean |Y-X|).\n")
        rows = [
            [a["name"], figure(result.rank_correlation[j]), figure(result.mean_abs_noise_y_x[j]), figure(result.mean_abs_noise_y_z[j])]
            for j, a in enumerate(attrs)
        ]
        print(text_table(rows, ["attribute", "rank corr X~Z", "mean |Y-X|", "mean |Y-Z|"]))
    return ExitCode.OK
