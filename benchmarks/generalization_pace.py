"""Generalization at ARX's pace (issue 41, item 1): the real ``publisher anonymize``, whole process, and where its
time goes, for SD k-anonymity and the two-step generalization; ARX's whole process beside SD when a build of ARX
is given.

    python -m benchmarks.generalization_pace                 # both methods at 30,162, 1e5, 3e5 and 1e6 records
    python -m benchmarks.generalization_pace --method sd --rows 3e5 --arx /tmp/arx --json
    python -m benchmarks.generalization_pace --method two_step --rows 2e5
    python -m benchmarks.generalization_pace --method sd --rows 3e5 --release --arx /tmp/arx

The tables are issue 41's: the Adult training file's complete records, resampled with replacement (seed 41) to
the larger sizes. SD: quasi-identifiers age (numeric), education, marital-status, race and sex, occupation
sensitive, k = 5. The two-step generalization: the same and workclass as quasi-identifiers, salary-class and
occupation sensitive, alpha_qi = 0.95, alpha_sa = 0.7. Each row runs the command once timed in a fresh process
(wall time, the child's peak resident memory) and once under cProfile for its phases
(:func:`benchmarks.commands.measure`).

``--arx DIR``: a build of ARX from its repository (``DIR/classes`` and the jars under ``DIR/lib``;
docs/performance.md says how). ``benchmarks/arx/ArxWholeProcess.java`` is compiled against it and run on the same
table, global recoding and local recoding, each timed whole, java's start included.

``--release`` (issue 51, item 2) times ``publisher release`` instead, which also gives every record its level and
signs the counts, and ARX with its risk analysis (``RiskEstimateBuilder``'s sample-based risks) after anonymizing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.commands import ADULT, measure

PROGRAM = Path(__file__).resolve().parent / "arx" / "ArxWholeProcess.java"
HIERARCHIES = ADULT.parents[1] / "external" / "arx" / "hierarchies"
QIS = ("age", "education", "marital-status", "race", "sex")
#: method -> (quasi-identifiers, sensitive attributes, parameters, the phases its row reports)
METHODS = {
    "sd": (QIS, ("occupation",), ["sd_k_anonymity", "--param", "k=5"],
           ("read tables", "SD classes", "SD recoding", "NCP", "published cells", "group claims", "write output")),
    "two_step": ((*QIS, "workclass"), ("salary-class", "occupation"),
                 ["multi_sensitive_generalization", "--param", "alpha_qi=0.95", "--param", "alpha_sa=0.7"],
                 ("read tables", "distinct records", "two-step", "two-step masking", "write output")),
}


def adult_table(n: int | None, columns: tuple[str, ...], out: Path, seed: int = 41) -> Path:
    """Adult's complete records in ``columns`` (all of them, or ``n`` drawn with replacement), as CSV."""
    import pandas as pd

    adult = pd.read_csv(ADULT, dtype=str, keep_default_na=False, skipinitialspace=True)[list(columns)]
    adult = adult[((adult != "") & (adult != "?")).all(axis=1)].reset_index(drop=True)
    if n is not None and n != len(adult):
        adult = adult.iloc[np.random.default_rng(seed).integers(0, len(adult), n)].reset_index(drop=True)
    adult.to_csv(out, index=False)
    return out


def _arx_classpath(arx: Path, folder: Path) -> str:
    """ARX's classes and jars, and the benchmark's program compiled against them."""
    jars = sorted(str(p) for p in (arx / "lib").rglob("*.jar"))
    path = ":".join([str(arx / "classes"), *jars])
    subprocess.run(["javac", "-nowarn", "-cp", path, "-d", str(folder / "arx-bench"), str(PROGRAM)], check=True)
    return f"{folder / 'arx-bench'}:{path}"


def _timed(argv: list[str]) -> dict:
    """One whole process, timed by :mod:`benchmarks.commands`'s runner (wall time, the child's peak memory)."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.commands", "--run", json.dumps(argv)],
                         capture_output=True, text=True, check=True).stdout
    timed = json.loads(out)
    if timed["code"] != 0:
        raise RuntimeError(f"{argv[0]}: exit {timed['code']}: {timed['stderr']}")
    return {"seconds": round(timed["seconds"], 2), "peak_mb": round(timed["peak_mb"])}


#: the phases of ``publisher release`` beyond ``publisher anonymize``'s
RELEASE_PHASES = ("generalized assessment", "policy levels", "level figures")


def run(method: str, sizes: list[int | None], arx: Path | None, release: bool = False) -> list[dict]:
    qis, sensitive, params, phases = METHODS[method]
    phases = (*phases, *RELEASE_PHASES) if release else phases
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-generalization-") as tmp:
        folder = Path(tmp)
        classpath = _arx_classpath(arx, folder) if arx and method == "sd" else None
        if release:
            subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(folder / "keys"),
                            "--unencrypted"], check=True, capture_output=True)
        for n in sizes:
            table = adult_table(n, (*qis, *sensitive), folder / f"adult-{n}.csv")
            schema = folder / "schema.json"
            subprocess.run([sys.executable, "-m", "publisher", "schema", "--input", str(table),
                            *[a for s in sensitive for a in ("--sensitive", s)], "--out", str(schema), "--force"],
                           check=True, capture_output=True)
            if release:
                out = folder / f"release-{n}"
                command = ["publisher", "release", "--input", str(table), "--schema", str(schema), "--method",
                           *params, "--key", str(folder / "keys" / "private.pem"), "--dataset-id", "adult", "--out",
                           str(out)]
                row = measure(command, folder, method, fresh=out)
            else:
                command = ["publisher", "anonymize", "--input", str(table), "--schema", str(schema), "--method",
                           *params, "--out", str(folder / "out.csv"), "--force"]
                row = measure(command, folder, method)
            row["phases"] = {p: row["phases"][p] for p in phases if p in row["phases"]}
            result = {"method": method, "n": sum(1 for _ in table.open()) - 1, **row}
            if classpath:
                for mode in ("global", "local"):
                    result[f"arx_{mode}"] = _timed(["java", "-cp", classpath, "ArxWholeProcess", str(table),
                                                    str(HIERARCHIES), str(folder / f"arx-{mode}.csv"), mode,
                                                    *(["risk"] if release else [])])
            results.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.generalization_pace",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", choices=sorted(METHODS), action="append",
                        help="the method (repeatable; default both)")
    parser.add_argument("--rows", type=float, action="append",
                        help="table size (repeatable; default 30162, the complete records, then 1e5, 3e5 and 1e6)")
    parser.add_argument("--arx", type=Path, metavar="DIR", help="a build of ARX to time beside SD (needs javac)")
    parser.add_argument("--release", action="store_true",
                        help="time publisher release (with every record's level) and ARX with its risk analysis")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not ADULT.exists():
        print(f"the Adult training file is not at {ADULT}", file=sys.stderr)
        return 2
    if args.arx and (not (args.arx / "classes").is_dir() or not shutil.which("javac")):
        print(f"--arx: no ARX classes under {args.arx / 'classes'}, or no javac", file=sys.stderr)
        return 2
    sizes = [int(r) for r in (args.rows or [30162, 1e5, 3e5, 1e6])]
    results = [r for method in (args.method or sorted(METHODS, reverse=True)) for r in run(method, sizes, args.arx, args.release)]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| method | records | seconds | peak MB | ARX global / local, seconds | where the time goes (profiled, s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        arx = (f"{r['arx_global']['seconds']} / {r['arx_local']['seconds']}" if "arx_global" in r else "not run")
        phases = ", ".join(f"{p} {s}" for p, s in r["phases"].items())
        print(f"| {r['method']} | {r['n']:,} | {r['seconds']} | {r['peak_mb']:,} | {arx} | {phases} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
