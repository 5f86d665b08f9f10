"""Whole-process benchmarks: the real commands, as a user runs them, in a subprocess (issue 15).

    python -m benchmarks.commands             # 1e6 records (the targets apply)
    python -m benchmarks.commands --quick     # 1e5 records, a smoke test
    python -m benchmarks.commands --rows 1e7 --only distance
    python -m benchmarks.commands --json

Each row runs one command twice in a fresh Python process: once timed (wall
time, and the child's peak resident memory from getrusage(RUSAGE_CHILDREN),
which a row reads from its own short-lived runner process so that rows never
share a maximum), once under cProfile, from which the row says where the time
goes: reading the tables (CSV parsing or Parquet), verifying the release,
ranks, the nearest-neighbour tree, the spreads, writing the output (the
``startup`` row is Python and the imports alone: ``verifier --version``). Each row
also gives its time as a multiple of a numpy argsort of every column of the
same table in the same run: a yardstick for the machine.

Data: X ~ N(0, 1) per attribute, rounded to 2 decimals, with one heavily tied
column (20 distinct values); Y = X + N(0, 0.5^2) noise, shuffled, for the
commands that compare two tables; a signed release of X with additive noise
and reverse mapping for audit and check; MDAV (k 5) of X. The rows marked
"(Adult)" anonymize all 32,561 records of the Adult training file of
../shared/data/real (when it is there) with SD k-anonymity and the two-step
generalization, whatever --rows says.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: phase -> functions whose cumulative time it is (module path suffix, function name)
PHASES = {
    "read tables": [("verifier/data/tables.py", "read_table"), ("verifier/data/tables.py", "read_table_bytes")],
    "verify": [("verifier/releases/verification.py", "verify_release")],
    "ranks": [("verifier/core/permutation.py", "__init__")],
    "tree": [("verifier/core/permutation.py", "tree")],
    "distances": [("verifier/core/permutation.py", "compute_distances")],
    "spreads": [("verifier/core/permutation.py", "window_spreads")],
    "random-match test": [("verifier/attacks/intruder.py", "random_match_distribution")],
    "(D, v)": [("verifier/core/permutation.py", "compute_permuted_privacy")],
    "intruder": [("verifier/attacks/intruder.py", "run_intruder")],
    "attribute disclosure": [("verifier/attacks/assessment.py", "attribute_disclosure")],
    "published cells": [("publisher/methods/frames.py", "published_cells")],
    "generalized assessment": [("verifier/attacks/generalized.py", "assess_generalized")],
    "anonymize": [("publisher/methods/chain.py", "anonymize")],
    "MDAV": [("publisher/methods/mdav.py", "mdav_groups")],
    "SD classes": [("publisher/methods/sd_clustering.py", "sd_classes")],
    "SD recoding": [("publisher/methods/sd_anonymity.py", "recoded_cells")],
    "NCP": [("publisher/methods/sd_model.py", "ncp")],
    "group claims": [("verifier/attacks/classes.py", "group_claims")],
    "two-step": [("publisher/methods/two_step_search.py", "search")],
    "two-step masking": [("publisher/methods/two_step_search.py", "mask_counts")],
    "distinct records": [("publisher/methods/two_step_search.py", "from_columns")],
    "m-invariant groups": [("publisher/methods/m_invariance.py", "m_invariant_groups")],
    "earlier signatures": [("publisher/earlier_releases.py", "earlier_signatures")],
    "policy levels": [("verifier/releases/levels.py", "every_level")],
    "level figures": [("verifier/releases/record_figures.py", "ranked_figures"),
                      ("verifier/releases/class_figures.py", "class_figures")],
    "level disclosure": [("verifier/releases/exposure.py", "every_disclosure")],
    "joint figures": [("verifier/releases/composition.py", "composition_figures")],
    "RA draws": [("publisher/methods/random_replacement.py", "replace")],
    "RA query errors": [("publisher/methods/random_replacement.py", "query_workload"),
                        ("publisher/methods/random_replacement.py", "query_relative_errors")],
    "RA biases": [("publisher/methods/random_replacement.py", "relative_biases")],
    "RA posteriors": [("publisher/methods/random_replacement.py", "max_posteriors")],
    "write output": [("verifier/data/record_file.py", "write_record_file"),
                     ("publisher/signed_release.py", "_write")],
}
#: the attributes each row's target is set at (issue 15): the subject's check at 1e6 x 8, the rest at 1e6 x 5
TARGET_ATTRIBUTES = {"check_csv": 8, "check_parquet": 8}
TARGETS = {  # row -> (seconds, MB) at 1e6 records
    "distance": (20, 2048), "release": (45, 3072), "audit": (45, 3072), "check_csv": (5, None),
    "check_parquet": (5, None), "microaggregation": (120, None),
}
#: rows on the Adult training file (all 32,561 records, whatever --rows says), when ../shared holds it
ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "adult_uci_train_32561.csv"
ADULT_TARGETS = {"sd_k_anonymity": 15, "multi_sensitive": 15}
ADULT_OTHERS = ("fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                "occupation", "workclass", "relationship", "education")


def _write_tables(folder: Path, n: int, m: int, seed: int = 11) -> dict[str, Path]:
    import pandas as pd

    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(n, m)), 2)
    x[:, 0] = rng.integers(0, 20, n)  # heavily tied
    y = x + rng.normal(scale=0.5, size=(n, m))
    y = np.round(y[rng.permutation(n)], 4)
    names = [f"a{j}" for j in range(m)]
    paths = {"x": folder / "x.csv", "y": folder / "y.csv", "x_parquet": folder / "x.parquet"}
    pd.DataFrame(x, columns=names).to_csv(paths["x"], index=False)
    pd.DataFrame(y, columns=names).to_csv(paths["y"], index=False)
    pd.DataFrame(x, columns=names).to_parquet(paths["x_parquet"], index=False)
    return paths


def argsort_seconds(path: Path, columns: list[str] | None = None) -> float:
    """The yardstick: a stable numpy argsort of every column (or of ``columns``) of the table at ``path``."""
    import pandas as pd

    table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, usecols=columns)
    x = table[columns].to_numpy() if columns else table.to_numpy()
    start = time.perf_counter()
    for j in range(x.shape[1]):
        np.argsort(x[:, j], kind="stable")
    return time.perf_counter() - start


def _phases(profile: Path) -> dict[str, float]:
    stats = pstats.Stats(str(profile)).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
    out = {}
    for phase, functions in PHASES.items():
        total = sum(ct for (file, _, name), (_, _, _, ct, _) in stats.items()
                    if any(file.endswith(suffix) and name == fn for suffix, fn in functions))
        if total > 0.005:
            out[phase] = round(total, 3)
    return out


def _runner(argv: list[str]) -> None:
    """Run one command in a child and print its wall time and the child's peak RSS (this process runs nothing else)."""
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "code": proc.returncode,
                      "stderr": proc.stderr.decode(errors="replace")[-500:]}))


def _profiled(out: str, command: list[str]) -> None:
    """Run the console command ``command`` (a module and its arguments) under cProfile, its statistics written to
    ``out``. A console command ends with ``os._exit`` once its output is flushed (verifier/console.py: the
    interpreter's shutdown once aborted pyarrow), so ``python -m cProfile`` would never write them: the exit writes
    them first, then ends the process as the command asked."""
    import cProfile
    import os
    import runpy

    profiler, exit_now = cProfile.Profile(), os._exit

    def dump_then_exit(code: int) -> None:
        profiler.disable()
        profiler.dump_stats(out)
        exit_now(code)

    os._exit = dump_then_exit
    sys.argv = [command[0], *command[1:]]
    profiler.enable()
    try:
        runpy.run_module(command[0], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        dump_then_exit(exc.code if isinstance(exc.code, int) else 1)
    dump_then_exit(0)


def measure(command: list[str], folder: Path, name: str, fresh: Path | None = None, profile: bool = True) -> dict:
    """Time ``command`` (a console script and its arguments) whole, then profile it for its phases.

    ``fresh``: an output the command creates, removed before the profiled run (a release refuses to replace one).
    ``profile`` false: the timed run alone (its phases are empty).
    """
    exe = [sys.executable, "-m", command[0], *command[1:]]
    timed = json.loads(subprocess.run([sys.executable, "-m", "benchmarks.commands", "--run", json.dumps(exe)],
                                      capture_output=True, text=True, check=True).stdout)
    if timed["code"] not in (0, 1):
        raise RuntimeError(f"{name}: exit {timed['code']}: {timed['stderr']}")
    if not profile:
        return {"seconds": round(timed["seconds"], 2), "peak_mb": round(timed["peak_mb"]), "phases": {}}
    profile = folder / f"{name}.prof"
    if fresh is None and "--out" in command:  # the profiled run must not find the timed run's output: a release
        fresh = Path(command[command.index("--out") + 1])  # or a per-record file is never replaced
    if fresh is not None:  # nor the protector's report and links file beside a release
        subprocess.run(["rm", "-rf", str(fresh), f"{fresh}.protector.json", f"{fresh}.links.json"], check=True)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.commands", "--profile", json.dumps([str(profile),
                                                                                                command])],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):  # a failed profiled run would leave its row without phases, unsaid
        raise RuntimeError(f"{name} (profiled): exit {proc.returncode}: {proc.stderr[-500:]}")
    return {"seconds": round(timed["seconds"], 2), "peak_mb": round(timed["peak_mb"]), "phases": _phases(profile)}


def _commands(paths: dict[str, Path], folder: Path, only: list[str] | None) -> dict[str, list[str]]:
    keys, release = folder / "keys", folder / "release"
    out = {
        "distance": ["verifier", "distance", "--original", str(paths["x"]), "--anonymized", str(paths["y"]),
                     "--out", str(folder / "distances.parquet"), "--json"],
        "release": ["publisher", "release", "--input", str(paths["x"]), "--method", "additive_noise", "--param",
                    "relative_sd=0.5", "--then", "reverse_mapping", "--key", str(keys / "private.pem"),
                    "--dataset-id", "bench", "--out", str(release)],
        "audit": ["verifier", "audit", str(release), "--key", str(keys / "public.pem"), "--original", str(paths["x"]),
                  "--json"],
        "microaggregation": ["publisher", "anonymize", "--input", str(paths["x"]), "--method", "microaggregation",
                             "--param", "k=5", "--out", str(folder / "mdav.csv"), "--force"],
        "check_csv": ["verifier", "check", str(release), "--key", str(keys / "public.pem"), "--record",
                      str(folder / "me.json"), "--json"],
        "check_parquet": ["verifier", "check", str(folder / "release-pq"), "--key", str(keys / "public.pem"),
                          "--record", str(folder / "me.json"), "--json"],
    }
    return {k: v for k, v in out.items() if not only or k in only}


def _adult_commands(folder: Path, only: list[str] | None) -> dict[str, list[str]]:
    """SD k-anonymity (k 5), the two-step generalization (alpha 0.8) and random attribute replacement (RA, k 1) of
    Adult: QIs age, marital status, race, sex."""
    if not ADULT.exists():
        return {}
    schema = folder / "adult-schema.json"
    subprocess.run([sys.executable, "-m", "publisher", "schema", "--input", str(ADULT), "--sensitive", "salary-class",
                    *[a for c in ADULT_OTHERS for a in ("--other", c)], "--missing", "category", "--out", str(schema)],
                   check=True, capture_output=True)
    common = ["publisher", "anonymize", "--input", str(ADULT), "--schema", str(schema), "--force"]
    out = {"sd_k_anonymity": [*common, "--method", "sd_k_anonymity", "--param", "k=5", "--out", str(folder / "sd.csv")],
           "multi_sensitive": [*common, "--method", "multi_sensitive_generalization", "--param", "alpha_qi=0.8",
                               "--param", "alpha_sa=0.8", "--out", str(folder / "msg.csv")],
           "random_replacement": [*common, "--method", "random_attribute_replacement", "--param", "k=1",
                                  "--out", str(folder / "ra.csv")]}
    return {k: v for k, v in out.items() if not only or k in only}


def run(n: int, m: int, only: list[str] | None, profile: bool = True) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as tmp:
        folder = Path(tmp)
        paths = _write_tables(folder, n, m)
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(folder / "keys"), "--unencrypted"],
                       check=True, capture_output=True)
        first = paths["x"].read_text().splitlines()[:2]
        (folder / "me.json").write_text(json.dumps(dict(zip(first[0].split(","), map(float, first[1].split(","))))))
        yardstick = argsort_seconds(paths["x_parquet"])
        rows = {"startup": measure(["verifier", "--version"], folder, "startup", profile=profile)}
        for name, command in _commands(paths, folder, only).items():
            if name in ("audit", "check_csv") and not (folder / "release").exists():
                rows["release (setup)"] = measure(_commands(paths, folder, ["release"])["release"], folder, "release",
                                                  profile=profile)
            if name == "release" and (folder / "release").exists():
                continue
            if name == "check_parquet":  # a release of the same table as release.parquet
                setup = _commands(paths, folder, ["release"])["release"]
                setup[setup.index("--out") + 1] = str(folder / "release-pq")
                rows["release --format parquet (setup)"] = measure([*setup, "--format", "parquet"], folder, "release",
                                                                   profile=profile)
            rows[name] = measure(command, folder, name, profile=profile)
            rows[name]["argsort_ratio"] = round(rows[name]["seconds"] / yardstick, 1)
        for name, command in _adult_commands(folder, only).items():
            rows[f"{name} (Adult)"] = measure(command, folder, name, profile=profile)
        return {"n": n, "m": m, "argsort_seconds": round(yardstick, 3), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.commands", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1e5 records (targets do not apply)")
    parser.add_argument("--rows", type=float, help="number of records (default 1e6)")
    parser.add_argument("--attributes", type=int, default=5)
    parser.add_argument("--only", action="append",
                        choices=["distance", "release", "audit", "check_csv", "check_parquet", "microaggregation",
                                 "sd_k_anonymity", "multi_sensitive", "random_replacement"])
    parser.add_argument("--timed-only", action="store_true", help="skip each row's profiled second run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        _runner(json.loads(args.run))
        return 0
    if args.profile:
        _profiled(*json.loads(args.profile))
        return 0
    n = int(args.rows or (1e5 if args.quick else 1e6))
    result = run(n, args.attributes, args.only, profile=not args.timed_only)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"n = {n:,}, m = {args.attributes}; numpy argsort of every column: {result['argsort_seconds']} s "
          f"({os.cpu_count()} cores)\n")
    for name, r in result["rows"].items():
        row = name.split(" ")[0]
        target = TARGETS.get(row) if n == 1_000_000 and TARGET_ATTRIBUTES.get(row, 5) == args.attributes else None
        if name.endswith("(Adult)"):
            target = (ADULT_TARGETS[name.split(" ")[0]], None)
        verdict = "" if target is None else (" met" if r["seconds"] <= target[0] and (
            target[1] is None or r["peak_mb"] <= target[1]) else " MISSED") + f" (target {target[0]} s" + (
            f", {target[1]} MB)" if target[1] else ")")
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items())
        print(f"{name:<16} {r['seconds']:>8.2f} s {r['peak_mb']:>7,} MB  x{r.get('argsort_ratio', '-')} argsort{verdict}")
        print(f"{'':<16} where: {phases}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
