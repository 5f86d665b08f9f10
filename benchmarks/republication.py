"""m-invariant re-publication (issue 40, item 2): the real ``publisher release --method m_invariant``, a first wave
and a second with ``--previous``, whole process, with its counterfeits and where its time goes.

    python -m benchmarks.republication                  # waves of 20,000 (Adult's complete records), 25% churn
    python -m benchmarks.republication --rows 1e5 --churn 0.5 --m 4 --json

The waves are drawn from the Adult training file's complete records (seed 40): the first holds ``rows`` people,
the second keeps ``1 - churn`` of them (the first rows left are the people who stay) and adds new people to the
same size. Quasi-identifiers age (numeric), education, marital-status, race and sex; occupation sensitive. Each
wave runs once timed in a fresh process (wall time, the child's peak resident memory) and once under cProfile for
its phases (:func:`benchmarks.commands.measure`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.commands import ADULT, measure

COLUMNS = ("age", "education", "marital-status", "race", "sex", "occupation")
PHASES = ("read tables", "earlier signatures", "m-invariant groups", "published cells", "group claims",
          "generalized assessment", "policy levels", "joint figures", "write output")


def waves(rows: int, churn: float, folder: Path, seed: int = 40) -> tuple[Path, Path, Path]:
    """Two waves of Adult's complete records, with a ``pid`` column that says who is who, and every record drawn
    without it (what the schema is drafted from)."""
    import pandas as pd

    adult = pd.read_csv(ADULT, dtype=str, keep_default_na=False, skipinitialspace=True)[list(COLUMNS)]
    adult = adult[((adult != "") & (adult != "?")).all(axis=1)].reset_index(drop=True)
    stay = rows - int(round(churn * rows))
    drawn = adult.iloc[np.random.default_rng(seed).integers(0, len(adult), 2 * rows - stay)].reset_index(drop=True)
    everyone = folder / "everyone.csv"
    drawn.to_csv(everyone, index=False)
    drawn.insert(0, "pid", [f"p{i}" for i in range(len(drawn))])
    first, second = folder / "wave1.csv", folder / "wave2.csv"
    drawn.iloc[:rows].to_csv(first, index=False)
    drawn.iloc[rows - stay:].to_csv(second, index=False)
    return first, second, everyone


def run(rows: int, churn: float, m: int) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory(prefix="bench-republication-") as tmp:
        folder = Path(tmp)
        first, second, everyone = waves(rows, churn, folder)
        schema = folder / "schema.json"
        subprocess.run([sys.executable, "-m", "publisher", "schema", "--input", str(everyone),
                        "--sensitive", "occupation", "--out", str(schema), "--force"], check=True, capture_output=True)
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(folder / "keys"), "--unencrypted"],
                       check=True, capture_output=True)
        for wave, table in ((1, first), (2, second)):
            release = folder / f"r{wave}"
            command = ["publisher", "release", "--input", str(table), "--schema", str(schema), "--method",
                       "m_invariant", "--param", f"m={m}", "--key", str(folder / "keys" / "private.pem"),
                       "--dataset-id", "adult-waves", "--release-version", str(wave), "--link-column", "pid",
                       "--out", str(release), *(["--previous", str(folder / "r1")] if wave == 2 else [])]
            row = measure(command, folder, f"wave{wave}")
            params = json.loads((release / "manifest.json").read_bytes())["predicate"]["methods"][0]["parameters"]
            row["phases"] = {p: row["phases"][p] for p in PHASES if p in row["phases"]}
            result = {"wave": wave, "people": rows, "returning": 0 if wave == 1 else rows - int(round(churn * rows)),
                      "m": m, "counterfeits": params["counterfeit_records"],
                      "groups_with_counterfeits": len(params["counterfeits"]), **row}
            out.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.republication", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=float, default=20000, help="people per wave (default 20,000)")
    parser.add_argument("--churn", type=float, default=0.25, help="share of the first wave's people who leave")
    parser.add_argument("--m", type=int, default=3, help="m (default 3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not ADULT.exists():
        print(f"the Adult training file is not at {ADULT}", file=sys.stderr)
        return 2
    results = run(int(args.rows), args.churn, args.m)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| wave | people | returning | m | counterfeits (groups) | seconds | peak MB | where the time goes "
          "(profiled, s) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        phases = ", ".join(f"{p} {s}" for p, s in r["phases"].items())
        print(f"| {r['wave']} | {r['people']:,} | {r['returning']:,} | {r['m']} | {r['counterfeits']:,} "
              f"({r['groups_with_counterfeits']:,}) | {r['seconds']} | {r['peak_mb']:,} | {phases} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
