"""Every method released on a census-like table: the real ``publisher release``, whole process (issue 30, item 1).

    python -m benchmarks.census                     # 1e5, 2e5 and 1e6 records, every method and chain
    python -m benchmarks.census --rows 1e6 --only sd_k_anonymity
    python -m benchmarks.census --json

The table is the Adult training file of ../shared/data/real (where it is
absent, the 3,000-record sample in experiments/data/) resampled with
replacement to n rows (seed 30), its integer columns jittered: each cell moves
by a normal draw of 2 % of its column's standard deviation, rounded to an
integer and kept inside the column's range, so that values stay census-like
(ties, heaped zeros) without every record being a copy of one of 32,561.

Each row runs ``publisher release`` once timed in a fresh process (wall time
and the child's peak resident memory) and once under cProfile for where the
time goes, with the phases of :mod:`benchmarks.commands`. The numeric methods
anonymize the five integer columns (age, fnlwgt, education-num, capital-gain,
hours-per-week) and release the rest as they are; the categorical methods
take education, marital-status, race, sex and workclass as quasi-identifiers
and salary-class as sensitive (relationship too, for the two-step
generalization with two sensitive attributes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.commands import ADULT, argsort_seconds, measure

NUMERIC_QIS = ("age", "fnlwgt", "education-num", "capital-gain", "hours-per-week")
CATEGORICAL_QIS = ("education", "marital-status", "race", "sex", "workclass")
#: row -> (method, parameters, then, schema): every method of the project, and the chains paper 003 releases
RELEASES = {
    "additive_noise": ("additive_noise", ["relative_sd=0.5"], [], "numeric"),
    "additive_noise+reverse_mapping": ("additive_noise", ["relative_sd=0.5"], ["reverse_mapping"], "numeric"),
    "rank_swapping": ("rank_swapping", ["p=5"], [], "numeric"),
    "rank_swapping+reverse_mapping": ("rank_swapping", ["p=5"], ["reverse_mapping"], "numeric"),
    "microaggregation": ("microaggregation", ["k=5"], [], "numeric"),
    "microaggregation+reverse_mapping": ("microaggregation", ["k=5"], ["reverse_mapping"], "numeric"),
    "randomized_response": ("randomized_response", ["l=2", "scope=both"], [], "one_sensitive"),
    "random_attribute_replacement": ("random_attribute_replacement", ["k=1"], [], "one_sensitive"),
    "sd_k_anonymity": ("sd_k_anonymity", ["k=5"], [], "one_sensitive"),
    "multi_sensitive_generalization": ("multi_sensitive_generalization", ["alpha_qi=0.8", "alpha_sa=0.5"], [],
                                       "two_sensitive"),
}
#: whole process, each release at 1e6 rows: seconds, MB (issue 61: every family within a minute, 6 GB)
TARGET = (60, 6144)
#: the untimed first run of every release, large enough that every parallel kernel is compiled
WARM_UP = 40_000


#: what a clone holds of Adult: 3,000 of its complete records (CC BY 4.0, experiments/data/README.md)
SAMPLE = Path(__file__).resolve().parents[1] / "experiments" / "data" / "adult_sample_3000.csv"


def census_source() -> Path:
    """The table the census is drawn from: the Adult training file beside the repository where it is, else the
    3,000-record sample the repository ships (issue 60, item 7), so that a clone runs the benchmark as it is."""
    return ADULT if ADULT.exists() else SAMPLE


def census_table(n: int, out: Path, seed: int = 30) -> Path:
    """Write Adult (:func:`census_source`) resampled with replacement to ``n`` rows, its integer columns jittered, to
    ``out`` (CSV)."""
    import pandas as pd

    adult = pd.read_csv(census_source(), dtype=str, keep_default_na=False)
    rng = np.random.default_rng(seed)
    table = adult.iloc[rng.integers(0, len(adult), n)].reset_index(drop=True)
    for column in NUMERIC_QIS + ("capital-loss",):
        values = table[column].astype(np.int64).to_numpy()
        source = adult[column].astype(np.int64)
        jitter = np.rint(rng.normal(scale=0.02 * source.std(), size=n)).astype(np.int64)
        table[column] = np.clip(values + jitter, source.min(), source.max())
    table.to_csv(out, index=False)
    return out


def _schemas(table: Path, folder: Path) -> dict[str, Path]:
    """The three schemas of the rows, drafted by ``publisher schema`` as a protector would."""
    columns = table.open().readline().strip().split(",")
    roles = {
        "numeric": ([], [c for c in columns if c not in NUMERIC_QIS]),
        "one_sensitive": (["salary-class"], [c for c in columns if c not in CATEGORICAL_QIS + ("salary-class",)]),
        "two_sensitive": (["salary-class", "relationship"],
                          [c for c in columns if c not in CATEGORICAL_QIS + ("salary-class", "relationship")]),
    }
    out = {}
    for name, (sensitive, other) in roles.items():
        out[name] = folder / f"{name}.json"
        subprocess.run([sys.executable, "-m", "publisher", "schema", "--input", str(table), "--missing", "category",
                        *[a for c in sensitive for a in ("--sensitive", c)],
                        *[a for c in other for a in ("--other", c)], "--out", str(out[name]), "--force"],
                       check=True, capture_output=True)
    return out


def run(sizes: list[int], only: list[str] | None, profile: bool = True) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-census-") as tmp:
        folder = Path(tmp)
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(folder / "keys"), "--unencrypted"],
                       check=True, capture_output=True)
        for n in [WARM_UP, *sizes]:  # the first size fills numba's cache (a fresh install compiles), untimed
            table = census_table(n, folder / f"census-{n}.csv")
            schemas = _schemas(table, folder)
            yardstick = argsort_seconds(table, list(NUMERIC_QIS))
            for name, (method, params, then, schema) in RELEASES.items():
                if only and name not in only:
                    continue
                out = folder / f"release-{name}-{n}"
                command = ["publisher", "release", "--input", str(table), "--schema", str(schemas[schema]),
                           "--method", method, *[a for p in params for a in ("--param", p)],
                           *[a for t in then for a in ("--then", t)], "--key", str(folder / "keys" / "private.pem"),
                           "--dataset-id", "census", "--out", str(out), "--allow-degenerate"]
                if n == WARM_UP:
                    subprocess.run([sys.executable, "-m", *command], check=True, capture_output=True)
                    continue
                try:
                    row = measure(command, folder, name, fresh=out, profile=profile)
                except RuntimeError as exc:  # a release refused or failed: the row says so, the others still run
                    results.append({"n": n, "release": name, "failed": str(exc)[-300:]})
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
                    continue
                results.append({"n": n, "release": name, "argsort_seconds": round(yardstick, 3), **row,
                                "argsort_ratio": round(row["seconds"] / yardstick, 1)})
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.census", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=float, action="append", help="table size (repeatable; default 1e5, 2e5, 1e6)")
    parser.add_argument("--only", action="append", choices=list(RELEASES))
    parser.add_argument("--timed-only", action="store_true",
                        help="skip the profiled second run of each release (the rows then say nothing of where "
                        "the time goes)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not ADULT.exists():
        print(f"note: the Adult training file is not at {ADULT}; the census is drawn from the 3,000-record sample "
              f"the repository ships ({SAMPLE.name}), so its tables repeat fewer distinct records", file=sys.stderr)
    sizes = [int(r) for r in (args.rows or [1e5, 2e5, 1e6])]
    results = run(sizes, args.only, profile=not args.timed_only)
    source = census_source().name  # the rows time different tables when it is the sample
    if args.json:
        print(json.dumps({"cores": os.cpu_count(), "source": source, "rows": results}, indent=2))
        return 0
    print(f"publisher release on Adult ({source}) resampled ({os.cpu_count()} cores); target at 1e6: "
          f"{TARGET[0]} s, {TARGET[1]:,} MB\n")
    for r in results:
        if "failed" in r:
            print(f"{r['n']:>9,} {r['release']:<34} failed: {r['failed']}")
            continue
        verdict = ""
        if r["n"] == 1_000_000:
            verdict = " met" if r["seconds"] <= TARGET[0] and r["peak_mb"] <= TARGET[1] else " MISSED"
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items())
        print(f"{r['n']:>9,} {r['release']:<34} {r['seconds']:>7.1f} s {r['peak_mb']:>6,} MB{verdict}")
        print(f"{'':>9} where: {phases}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
