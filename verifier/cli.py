"""The ``verifier`` command line.

Exit codes (SPEC section 10):

====  ==========================================================
0     all checks passed
1     a check or verification failed
2     usage error (bad arguments)
3     invalid input data (a table, a schema, a record)
4     environment or I/O failure (cannot write an output)
====  ==========================================================

A failure prints one line on stderr, ``FAIL: <path>: <REASON_CODE>: <sentence>``;
a traceback only with ``--verbose``. Results go to stdout, as a readable
report or, with ``--json``, as JSON.
"""

from __future__ import annotations

import argparse
import enum
import json
import math
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from verifier import __version__
from verifier._progress import ProgressBar
from verifier.errors import InvalidInputError, VerifierError
from verifier.io import Table, read_table, write_csv_atomic
from verifier.permutation import RankSpace, compute_permuted_privacy
from verifier.ranks import reverse_map
from verifier.schema import Schema, load_schema

__all__ = ["main", "ExitCode"]


class ExitCode(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    INPUT_ERROR = 3
    IO_ERROR = 4


class UsageError(VerifierError):
    exit_code = 2
    default_reason = "USAGE"


# ----------------------------------------------------------------------------- helpers


def _finite(x: float) -> float | None:
    """JSON has no NaN or infinity: an undefined figure is ``null``."""
    x = float(x)
    return x if math.isfinite(x) else None


def _fmt(x: float | None, digits: int = 4) -> str:
    """A figure for people; ``None`` (undefined in JSON) and non-finite read ``undefined``."""
    if x is None or not math.isfinite(x := float(x)):
        return "undefined"
    return f"{x:.{digits}g}" if abs(x) >= 1e6 or (x != 0 and abs(x) < 1e-3) else f"{x:.{digits}f}"


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


def _load_pair(original: str, anonymized: str, schema_path: str | None) -> tuple[Table, Table]:
    """X with its schema (nominal orders from X), then Y read with X's schema."""
    schema = load_schema(schema_path) if schema_path else None
    x = read_table(original, schema)
    y = read_table(anonymized, x.schema)
    return x, y


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    body = ["  ".join(c.rjust(w) if k else c.ljust(w) for k, (c, w) in enumerate(zip(r, widths))) for r in rows]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


# ----------------------------------------------------------------------------- reverse-map


def _cmd_reverse_map(args: argparse.Namespace) -> int:
    for given in (args.original, args.anonymized):
        if _same_file(args.out, given):
            raise UsageError(f"--out would overwrite the input {given}", path=args.out)
    x, y = _load_pair(args.original, args.anonymized, args.schema)
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
            "rank_correlation": _finite(result.rank_correlation[j]),
            "mean_abs_noise_y_x": _finite(result.mean_abs_noise_y_x[j]),
            "mean_abs_noise_y_z": _finite(result.mean_abs_noise_y_z[j]),
        }
        for j, name in enumerate(x.names)
    ]
    if args.json:
        _print_json({"output": args.out, "n_records": x.n_records, "seed": args.seed, "attributes": attrs})
    else:
        print(f"Reverse-mapped {x.n_records} records of {args.anonymized} onto {args.original}: wrote {args.out}")
        print("Per attribute: Spearman rank correlation of X and Z (a disclosure proxy, paper 003 section 2),")
        print("and the noise left once the permutation is taken out (mean |Y-Z|) beside the noise added (mean |Y-X|).\n")
        rows = [
            [a["name"], _fmt(result.rank_correlation[j], 3), _fmt(result.mean_abs_noise_y_x[j]), _fmt(result.mean_abs_noise_y_z[j])]
            for j, a in enumerate(attrs)
        ]
        print(_table(rows, ["attribute", "rank corr X~Z", "mean |Y-X|", "mean |Y-Z|"]))
    return ExitCode.OK


# ----------------------------------------------------------------------------- distance


def _parse_v(text: str | None, m: int) -> list[float] | None:
    if text is None:
        return None
    try:
        v = [float(t) for t in text.split(",")]
    except ValueError:
        raise UsageError(f"--v takes {m} comma-separated numbers, got {text!r}") from None
    if len(v) == 1:
        v = v * m
    if len(v) != m or not all(math.isfinite(t) and t >= 0 for t in v):
        raise UsageError(f"--v takes one non-negative number or {m} comma-separated ones, got {text!r}")
    return v


def _cmd_distance(args: argparse.Namespace) -> int:
    x, y = _load_pair(args.original, args.anonymized, args.schema)
    m = x.n_attributes
    v = _parse_v(args.v, m)
    if (args.d is None) != (v is None):
        raise UsageError("--d and --v go together: the (d, v) to check")
    if args.record is not None and not 1 <= args.record <= x.n_records:
        raise UsageError(f"--record must be between 1 and {x.n_records}, got {args.record}", path=args.original)
    space = RankSpace(y.values, y.kinds)
    report = compute_permuted_privacy(space, x.values, progress=ProgressBar("permutation distances"))
    wanted = [args.record - 1] if args.record is not None else range(x.n_records)
    records = []
    for r in wanted:
        matches = report.record_matches(r)
        records.append(
            {
                "record": r + 1,
                "distance": int(report.distances[r]),
                "matches": (matches + 1).tolist(),
                "query_blocks": [[int(a), int(b)] for a, b in zip(report.query_lo[r], report.query_hi[r])],
                "deviations": space.deviations(report.query_lo[r], report.query_hi[r], matches).tolist(),
                "variances_at_dataset_distance": [_finite(t) for t in report.spread_at_dataset_distance[r]],
                "variances_at_record_distance": [_finite(t) for t in report.spread_at_record_distance[r]],
            }
        )
    out: dict[str, Any] = {
        "attributes": x.names,
        "spread_kinds": report.spread_kinds,
        "records": records,
        "dataset": {"distance": report.dataset_distance, "variances": [_finite(t) for t in report.dataset_spread]},
    }
    check = None
    if args.d is not None:
        check = report.check_dv(space, d=args.d, v=v, record=None if args.record is None else args.record - 1)
        out["check"] = {
            "scope": f"record {args.record}" if args.record is not None else "dataset",
            "d": check.d,
            "v": list(check.v),
            "distance": check.distance,
            "variances_at_d": [_finite(t) for t in check.spread],
            "satisfied": check.satisfied,
        }
    if args.json:
        _print_json(out)
    else:
        _print_distance(x, report, records, check, args)
    return ExitCode.OK if check is None or check.satisfied else ExitCode.CHECK_FAILED


def _print_distance(x: Table, report, records, check, args) -> None:
    names = x.names
    kinds = report.spread_kinds
    if any(k != "variance" for k in kinds):
        print("Spread: " + ", ".join(f"{n}: {k.replace('_', '-')}" for n, k in zip(names, kinds)) + "\n")
    if args.record is not None:
        rec = records[0]
        print(f"Record {rec['record']} of {args.original}")
        print(f"  query ranks (blocks): {', '.join(f'{n}={a}' if a == b else f'{n}={a}-{b}' for n, (a, b) in zip(names, rec['query_blocks']))}")
        print(f"  permutation distance d = {rec['distance']}; {len(rec['matches'])} matching released record(s)")
        rows = [[str(mi), *[str(t) for t in dev]] for mi, dev in zip(rec["matches"][:50], rec["deviations"][:50])]
        print(_table(rows, ["match", *[f"dev {n}" for n in names]]))
        if len(rec["matches"]) > 50:
            print(f"  ... and {len(rec['matches']) - 50} more (use --json for all)")
        print(f"  spread at d = {rec['distance']}: " + ", ".join(f"{n}={_fmt(t)}" for n, t in zip(names, rec["variances_at_record_distance"])))
        print(f"  spread at D = {report.dataset_distance}: " + ", ".join(f"{n}={_fmt(t)}" for n, t in zip(names, rec["variances_at_dataset_distance"])))
    else:
        shown = records[:50]
        rows = [
            [str(r["record"]), str(r["distance"]), " ".join(map(str, r["matches"][:6])) + (" ..." if len(r["matches"]) > 6 else ""),
             *[_fmt(t) for t in r["variances_at_dataset_distance"]]]
            for r in shown
        ]
        print(_table(rows, ["record", "d", "matches", *[f"spread@D {n}" for n in names]]))
        if len(records) > 50:
            print(f"... {len(records) - 50} more records (use --json for all)")
    print(
        f"\nData set: D = {report.dataset_distance}, v = ("
        + ", ".join(_fmt(t) for t in report.dataset_spread)
        + "): every record is at least D ranks from its closest match, and no window at D is less spread"
        " than v (paper 003, Def. 2; Table 4)."
    )
    if check is not None:
        verdict = "HOLDS" if check.satisfied else "DOES NOT HOLD"
        print(f"\nCheck ({check.d}, ({', '.join(_fmt(t) for t in check.v)}))-permuted privacy: {verdict}")
        print(f"  distance {check.distance} >= {check.d}: {'yes' if check.distance_ok else 'no'}")
        for n, s, t, ok in zip(names, check.spread, check.v, check.spread_ok):
            print(f"  spread of {n} at d = {check.d}: {_fmt(s)} > {_fmt(t)}: {'yes' if ok else 'no'}")


# ----------------------------------------------------------------------------- demo


def _cmd_demo(args: argparse.Namespace) -> int:
    """Run the paper's running example end to end with the real commands."""
    data = resources.files("verifier") / "data" / "paper"
    with resources.as_file(data) as folder:
        original, masked = str(folder / "original.csv"), str(folder / "masked.csv")
        out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="permuted-privacy-demo-"))
        out_dir.mkdir(parents=True, exist_ok=True)
        z_path = str(out_dir / "reverse_mapped.csv")
        steps = [
            ("Reverse mapping (paper 003, Algorithm 1): what is left of the masking once the permutation is taken out",
             ["reverse-map", "--original", original, "--anonymized", masked, "--out", z_path]),
            ("The subject who contributed record 3 computes her permutation distance (Algorithm 2, Table 3)",
             ["distance", "--original", original, "--anonymized", masked, "--record", "3"]),
            ("The protector checks (1, v)-permuted privacy of the whole data set (Definition 2, Table 4)",
             ["distance", "--original", original, "--anonymized", masked, "--d", "1", "--v", "0.001,10,30"]),
        ]
        for title, argv in steps:
            print(f"\n=== {title}\n$ verifier {' '.join(argv)}\n", flush=True)
            code = main(argv)
            if code != ExitCode.OK:
                return code
    print(f"\nThe reverse-mapped table is in {z_path}.")
    return ExitCode.OK


# ----------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # SUPPRESS: a subcommand must not reset a -v given before it
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show a traceback on failure")
    parser = argparse.ArgumentParser(
        prog="verifier",
        allow_abbrev=False,
        description="Check an anonymized release: permutation distance, (d,v)-permuted privacy, reverse mapping.",
        epilog="Exit codes: 0 passed, 1 a check failed, 2 usage error, 3 invalid input data, 4 I/O failure.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(required=True, dest="command", metavar="COMMAND")

    def pair(p: argparse.ArgumentParser) -> None:
        p.add_argument("--original", required=True, metavar="X.csv", help="the original table X (CSV or Parquet)")
        p.add_argument("--anonymized", required=True, metavar="Y.csv", help="the anonymized table Y, same columns")
        p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")

    p = sub.add_parser(
        "reverse-map", parents=[common], allow_abbrev=False, help="reverse-map Y onto X (paper 003, Algorithm 1)",
        description="Write Z: each value of Y replaced by the value of X with the same rank (SPEC section 3). "
        "Prints per attribute the rank correlation of X and Z and the noise |Y-Z| beside |Y-X|.",
    )
    pair(p)
    p.add_argument("--out", required=True, metavar="Z.csv", help="where to write Z (written atomically)")
    p.add_argument("--seed", type=int, default=0, help="breaks ties among Y's values: the intruder's own randomness")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_reverse_map)

    p = sub.add_parser(
        "distance", parents=[common], allow_abbrev=False, help="permutation distance and (d,v)-permuted privacy (paper 003, Def. 1-2)",
        description="For every original record (or one), its permutation distance to Y, the matching released "
        "records and their rank deviations, and the spread of the windows around it; then the data-set level "
        "(D, v) (SPEC section 4). With --d and --v, check (d, v)-permuted privacy and exit 1 if it does not hold.",
    )
    pair(p)
    p.add_argument("--record", type=int, metavar="N", help="only record N of X (numbered from 1)")
    p.add_argument("--d", type=int, metavar="D", help="check: permutation distance at least D")
    p.add_argument("--v", metavar="V1,V2,...", help="check: spread above v_j for every attribute (one value for all)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_distance)

    p = sub.add_parser(
        "demo", parents=[common], allow_abbrev=False, help="run the paper's running example with the commands above",
        description="Reverse-map, then compute the permutation distance of record 3 and of the whole data set, "
        "on the running example of paper 003 shipped with the package.",
    )
    p.add_argument("--out", metavar="DIR", help="where to write the demo's outputs (default: a new temporary folder)")
    p.set_defaults(func=_cmd_demo)
    return parser


def run_parsed(args: argparse.Namespace) -> int:
    """Run a parsed subcommand: ``FAIL:`` line and exit code on our own errors.

    Shared with the ``publisher`` command line. Only the project's own errors
    are caught; a traceback is shown for them only with ``--verbose``.
    """
    args.verbose = getattr(args, "verbose", False)
    try:
        return int(args.func(args))
    except VerifierError as exc:
        if args.verbose:
            raise
        print(exc.diagnostic(), file=sys.stderr)
        return exc.exit_code
    except MemoryError:
        if args.verbose:
            raise
        print("FAIL: -: OUT_OF_MEMORY: not enough memory for this table", file=sys.stderr)
        return ExitCode.IO_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    return run_parsed(build_parser().parse_args(argv))
