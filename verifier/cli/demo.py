"""``verifier demo``: the paper's running example through the paper-level commands."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from verifier.data.paper import example_folder
from verifier.frontend import add_command, run_steps
from verifier.errors import InputIOError
from verifier.frontend.output_paths import release_holding

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "demo", run=run, help="run the paper's running example with the commands above",
        description="Reverse-map, compute the permutation distance of record 3 and of the whole data set, then run "
        "the maximum-knowledge intruder's test, on the running example of paper 003 shipped with the package.",
    )
    p.add_argument("--out", metavar="DIR", help="where to write the demo's outputs (default: a new temporary folder)")


def run(args: argparse.Namespace) -> int:
    """Run the paper's running example end to end with the real commands."""
    with example_folder() as folder:
        original, masked = str(folder / "original.csv"), str(folder / "masked.csv")
        out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="permuted-privacy-demo-"))
        if release_holding(out_dir / "reverse_mapped.csv") is not None:  # refused before a folder is made in it
            raise InputIOError(f"lies inside the release {release_holding(out_dir / 'reverse_mapped.csv')}, which "
                               "would stop verifying; the demo writes elsewhere", path=str(out_dir),
                               reason="OUTPUT_INSIDE_RELEASE")
        out_dir.mkdir(parents=True, exist_ok=True)
        z_path = str(out_dir / "reverse_mapped.csv")
        code = run_steps([
            ("Reverse mapping (paper 003, Algorithm 1): what is left of the masking once the permutation is taken out",
             "verifier", ["reverse-map", "--original", original, "--anonymized", masked, "--out", z_path]),
            ("The subject who contributed record 3 computes her permutation distance (Algorithm 2, Table 3)",
             "verifier", ["distance", "--original", original, "--anonymized", masked, "--record", "3"]),
            ("The protector checks (1, v)-permuted privacy of the whole data set (Definition 2, Table 4)",
             "verifier", ["distance", "--original", original, "--anonymized", masked, "--d", "1", "--v", "0.001,10,30"]),
            ("The maximum-knowledge intruder links every record and tests the links against chance (Tables 5-6)",
             "verifier", ["intruder", "--original", original, "--anonymized", masked, "--paired", "--max-linked-share", "0.01"]),
        ])
    if code == 0:
        print(f"\nThe reverse-mapped table is in {z_path}.")
    return code
