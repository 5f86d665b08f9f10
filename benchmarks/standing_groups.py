"""SD k-anonymity with and without ``keep_groups`` on issue 41's rows: the real ``publisher release``, whole process.

    python -m benchmarks.standing_groups                 # 30,162, 1e5 and 3e5 records
    python -m benchmarks.standing_groups --rows 30162 --json

The table is issue 41's: the Adult training file's 30,162 complete records, and the same resampled with
replacement (seed 41, no jitter, so that copies of records stay copies) to larger sizes; quasi-identifiers age
(numeric), education, marital-status, race and sex, occupation sensitive, k = 5. Each row runs ``publisher release``
once in a fresh process (wall time and the child's peak resident memory, :func:`benchmarks.commands.measure`)
and reads the information loss the manifest signs (``predicate.utility``), and the records each level holds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.commands import ADULT, measure
from benchmarks.generalization_pace import adult_table

QIS = ("age", "education", "marital-status", "race", "sex")
SENSITIVE = "occupation"


def adult_rows(n: int | None, out: Path, seed: int = 41) -> Path:
    """Adult's complete records (all of them, or ``n`` drawn with replacement) in the rows' columns, as CSV."""
    return adult_table(n, (*QIS, SENSITIVE), out, seed)


def _schema(table: Path, folder: Path) -> Path:
    out = folder / "schema.json"
    subprocess.run([sys.executable, "-m", "publisher", "schema", "--input", str(table), "--sensitive", SENSITIVE,
                    "--out", str(out), "--force"], check=True, capture_output=True)
    return out


def run(sizes: list[int | None]) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-standing-") as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(folder / "keys"), "--unencrypted"],
                       check=True, capture_output=True)
        for n in sizes:
            table = adult_rows(n, folder / f"adult-{n}.csv")
            schema = _schema(table, folder)
            for keep in ("false", "true"):
                out = folder / f"release-{n}-{keep}"
                command = ["publisher", "release", "--input", str(table), "--schema", str(schema), "--method",
                           "sd_k_anonymity", "--param", "k=5", "--param", f"keep_groups={keep}", "--key",
                           str(folder / "keys" / "private.pem"), "--dataset-id", "adult", "--out", str(out),
                           "--allow-uninformative"]
                row = measure(command, folder, f"sd-{keep}", profile=False)
                predicate = json.loads((out / "manifest.json").read_text())["predicate"]
                utility, claims = predicate["utility"], predicate["claims"]
                levels = claims["policy_levels"]
                results.append({"n": claims["n_records"], "keep_groups": keep == "true", **row,
                                "ncp": round(utility["ncp"], 4), "discernibility": utility["discernibility"],
                                "average_class_size": round(utility["average_class_size"], 2),
                                "exact_cell_share": round(utility["exact_cell_share"], 4),
                                "exposed_share": round(levels["exposed_share"], 4),
                                "at_risk_share": round(levels["at_risk_share"], 4)})
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.standing_groups", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=float, action="append",
                        help="table size (repeatable; default 30162, the complete records, then 1e5 and 3e5)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not ADULT.exists():
        print(f"the Adult training file is not at {ADULT}", file=sys.stderr)
        return 2
    sizes = [int(r) for r in (args.rows or [30162, 1e5, 3e5])]
    results = run(sizes)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| records | keep_groups | seconds | peak MB | NCP | discernibility | average class | cells exact | "
          "exposed | at risk |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| {r['n']:,} | {'yes' if r['keep_groups'] else 'no'} | {r['seconds']} | {r['peak_mb']:,} | "
              f"{r['ncp']} | "
              f"{r['discernibility']:,} | {r['average_class_size']} | {r['exact_cell_share']:.2%} | "
              f"{r['exposed_share']:.2%} | {r['at_risk_share']:.2%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
