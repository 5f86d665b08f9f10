"""What several verifier commands read: an original and an anonymized table, the intruder's options."""

from __future__ import annotations

import argparse
from typing import Any

from verifier.data.memory import ensure_fits
from verifier.data.schema_file import load_schema
from verifier.data.tables import Table, read_table
from verifier.frontend import UsageError, check_fraction, check_non_negative, check_positive, check_probability

__all__ = ["add_pair_args", "check_exhaustive", "intruder_options", "load_pair", "PER_CELL"]

#: bytes per cell of X and Y that distance and the intruder hold at their peak (1.1 GB at 1e6 x 5, rounded up)
PER_CELL = 120


def add_pair_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--original", required=True, metavar="X.csv", help="the original table X (CSV or Parquet)")
    p.add_argument("--anonymized", required=True, metavar="Y.csv", help="the anonymized table Y, same columns")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")


def load_pair(original: str, anonymized: str, schema_path: str | None) -> tuple[Table, Table]:
    """X with its schema (nominal orders from X), then Y read with X's schema."""
    schema = load_schema(schema_path) if schema_path else None
    columns = len(schema.names) if schema else None
    ensure_fits([(original, columns), (anonymized, columns)], PER_CELL)
    x = read_table(original, schema)
    y = read_table(anonymized, x.schema)
    return x, y


def intruder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The random-match test's options from ``--alpha``, ``--samples``, ``--exhaustive-limit``, ``--seed``."""
    check_positive("--samples", args.samples)
    if not 0 <= args.exhaustive_limit <= 2**53:
        raise UsageError(f"--exhaustive-limit must be between 0 and 2**53, got {args.exhaustive_limit}")
    check_probability("--alpha", args.alpha)
    check_non_negative("--seed", args.seed)
    check_fraction("--max-linked-share", args.max_linked_share)
    mode = "exhaustive" if args.exhaustive else "monte_carlo" if args.monte_carlo else "auto"
    return {"alpha": args.alpha, "mode": mode, "samples": args.samples,
            "exhaustive_limit": args.exhaustive_limit, "random_state": args.seed}


def check_exhaustive(n: int, m: int, args: argparse.Namespace) -> None:
    """Refuse ``--exhaustive`` before any work when ``n^m`` is over the limit."""
    if args.exhaustive and n**m > args.exhaustive_limit:
        raise UsageError(
            f"--exhaustive needs n^m = {n}^{m} random records, more than "
            f"--exhaustive-limit {args.exhaustive_limit}; raise the limit or let it sample"
        )
