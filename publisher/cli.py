"""The ``publisher`` command line: what a data protector runs.

Exit codes as the verifier's (SPEC section 10): 0 done, 1 a check failed,
2 usage error, 3 invalid input data, 4 environment or I/O failure. A failure
prints one line ``FAIL: <path>: <REASON_CODE>: <sentence>`` on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from publisher import __version__
from publisher.schema_infer import infer_schema
from verifier.cli import run_parsed
from verifier.errors import InputIOError
from verifier.io import write_atomic

__all__ = ["main"]


def _cmd_schema(args: argparse.Namespace) -> int:
    schema = infer_schema(args.input, sensitive=args.sensitive, other=args.other)
    text = json.dumps(schema.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        if Path(args.out).exists() and not args.force:
            raise InputIOError("already exists; pass --force to replace it", path=args.out, reason="OUTPUT_EXISTS")
        write_atomic(args.out, lambda handle: handle.write(text))
        kinds = ", ".join(f"{a.name}: {a.kind}" for a in schema.attributes)
        print(f"wrote {args.out} ({kinds}); review the kinds, roles and category orders before you publish it",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # SUPPRESS: a subcommand must not reset a -v given before it
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show a traceback on failure")
    parser = argparse.ArgumentParser(
        prog="publisher", allow_abbrev=False, parents=[common],
        description="Prepare an anonymized release of microdata that its subjects can check.",
        epilog="Exit codes: 0 done, 1 a check failed, 2 usage error, 3 invalid input data, 4 I/O failure.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(required=True, dest="command", metavar="COMMAND")
    p = sub.add_parser(
        "schema", parents=[common], allow_abbrev=False, help="draft the schema of an original table",
        description="Draft a schema (SPEC section 1) from a CSV file: all-number columns are numeric, others "
        "nominal with categories by decreasing frequency. Every column is a quasi-identifier unless named "
        "with --sensitive or --other.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--sensitive", action="append", default=[], metavar="COLUMN", help="a sensitive column (repeatable)")
    p.add_argument("--other", action="append", default=[], metavar="COLUMN", help="a column that is neither (repeatable)")
    p.add_argument("--out", metavar="schema.json", help="write here (default: stdout)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=_cmd_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_parsed(build_parser().parse_args(argv))
