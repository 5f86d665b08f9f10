"""Run the benchmarks of SPEC section 11 and print a table.

    python -m benchmarks            # every row, full sizes
    python -m benchmarks --quick    # the same rows at a tenth of the size
    python -m benchmarks --json     # machine-readable

Each row runs in its own process, so that its peak memory (ru_maxrss) is its
own; compiled kernels are warmed up on a small table first and not timed.
Times are the best of three runs, except the 1e6 data-set level, the
pairwise scan and the whole intruder attack, which run once (a single run of the slow side makes the
speed-up conservative).
Data: X ~ N(0, 1) per attribute, Y = X + N(0, 0.5^2) noise (rank correlation
about 0.9), generated with a fixed seed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

ROWS = {
    "subject": "one subject's report (section 4), n=1,000,000, m=8; target < 0.5 s",
    "dataset": "data-set level (d, v) (section 4), n=1,000,000, m=5; target < 60 s, < 2 GB",
    "pairwise": "data-set level vs the O(n^2 m) pairwise scan, n=20,000, m=5; target >= 100x, identical",
    "random_match": "random-match test (section 5), n=1,000,000, m=5, 100,000 random records; target < 30 s",
    "linkage": "intruder linkage of every record (section 5), n=50,000, m=3; target < 1 s",
    "assess": "pre-release assessment (sections 4, 5, 8), n=100,000, m=5; no SPEC target (issue 4)",
    "methods": "anonymization methods: noise and rank swapping n=100,000, MDAV n=20,000, m=5; no SPEC target",
    "rr": "randomized response risk and parameter search, 5 QI x 8 categories, S with 10; no SPEC target",
    "reverse_map": "reverse mapping (section 3), n=1,000,000, m=8; target < 2 s",
}


def _tables(n: int, m: int, seed: int = 11) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, m))
    return x, x + rng.normal(scale=0.5, size=(n, m))


def _warm_up() -> None:
    from verifier import RankSpace, compute_permuted_privacy

    x, y = _tables(500, 3, seed=1)
    compute_permuted_privacy(RankSpace(y), x)


def _timed(fn, repeat: int = 3):
    """Best wall time of ``repeat`` runs (as timeit reports), and the last result."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def row_subject(scale: float) -> dict:
    from verifier import RankSpace, compute_record_distance, compute_window_spread
    from verifier.core.permutation import SingleRecord

    n, m = int(1_000_000 * scale), 8
    x, y = _tables(n, m)

    def report():
        # what `verifier check` and the TUI compute: no full sort (linear selection around her ranks)
        view = SingleRecord(y, None, x[123])
        return view.result, view.spread_at(view.result.distance)

    def sorted_report():
        # the same report through a full RankSpace (one sort per column), for the ratio and the check
        space = RankSpace(y)
        r = compute_record_distance(space, x[123])
        return r, compute_window_spread(space, r.query_lo[None], r.query_hi[None], r.distance)[0]

    seconds, (r, spread) = _timed(report)
    sorted_seconds, (ref, ref_spread) = _timed(sorted_report, repeat=1)
    identical = (r.distance == ref.distance and np.array_equal(r.matches, ref.matches)
                 and bool(np.allclose(spread, ref_spread, rtol=1e-9)))
    return {"n": n, "m": m, "seconds": seconds, "sorted_seconds": sorted_seconds, "identical": identical,
            "distance": r.distance, "matches": int(r.matches.size), "target_seconds": 0.5}


def row_dataset(scale: float) -> dict:
    from verifier import RankSpace, compute_permuted_privacy

    n, m = int(1_000_000 * scale), 5
    x, y = _tables(n, m)
    seconds, report = _timed(lambda: compute_permuted_privacy(RankSpace(y), x), repeat=1)
    return {"n": n, "m": m, "seconds": seconds, "D": report.dataset_distance,
            "v": [round(float(t), 8) for t in report.dataset_spread], "target_seconds": 60, "target_mb": 2048}


def row_pairwise(scale: float) -> dict:
    from verifier import RankSpace, compute_distances
    from verifier.core.permutation import compute_distances_bruteforce

    n, m = int(20_000 * scale), 5
    x, y = _tables(n, m)
    fast_s, (d_fast, offsets, matches) = _timed(lambda: compute_distances(RankSpace(y), x))
    slow_s, (d_slow, m_slow) = _timed(lambda: compute_distances_bruteforce(RankSpace(y), x), repeat=1)
    identical = bool((d_fast == d_slow).all()) and all(
        np.array_equal(matches[offsets[r]:offsets[r + 1]], m_slow[r]) for r in range(n))
    return {"n": n, "m": m, "seconds": fast_s, "pairwise_seconds": slow_s, "speedup": slow_s / fast_s,
            "identical": identical, "target_speedup": 100}


def row_random_match(scale: float) -> dict:
    from verifier import RankSpace, random_match_distribution, run_intruder

    n, m, samples = int(1_000_000 * scale), 5, int(100_000 * scale)
    x, y = _tables(n, m)

    def test():
        # everything a subject does once the release is loaded: rank it, index it, draw and search
        return random_match_distribution(RankSpace(y), samples=samples, random_state=5)

    seconds, random = _timed(test)
    full_seconds, report = _timed(lambda: run_intruder(x, y, samples=samples, random_state=5), repeat=1)
    return {"n": n, "m": m, "samples": samples, "seconds": seconds, "method": random.method,
            "median_random_distance": int(np.searchsorted(random.cdf, 0.5)),
            "full_intruder_seconds": full_seconds, "confidently_linked_share": report.confidently_linked_share,
            "hellinger": round(report.hellinger, 4), "target_seconds": 30.0}


def row_linkage(scale: float) -> dict:
    from verifier import RankSpace, compute_distances, reverse_map

    n, m = int(50_000 * scale), 3
    x, y = _tables(n, m)
    z = reverse_map(x, y).z  # the intruder's Z; linkage is then every record of X against Z
    seconds, (d, offsets, _) = _timed(lambda: compute_distances(RankSpace(z), x))
    return {"n": n, "m": m, "seconds": seconds, "mean_match_set": float(np.diff(offsets).mean()),
            "median_distance": float(np.median(d)), "target_seconds": 1.0}


def row_assess(scale: float) -> dict:
    from verifier.attacks.assessment import assess
    from verifier.data.schema import Schema

    n, m = int(100_000 * scale), 5
    x, y = _tables(n, m)
    schema = Schema.all_numeric([f"a{j}" for j in range(m)])
    seconds, result = _timed(lambda: assess(x, y, schema, paired=True), repeat=1)
    out = result.to_json()
    return {"n": n, "m": m, "seconds": seconds, "D": out["permuted_privacy"]["distance"],
            "confidently_linked_share": out["intruder"]["confidently_linked_share"],
            "distortion": round(out["utility"]["distortion"], 4)}


def row_methods(scale: float) -> dict:
    import pandas as pd

    from publisher.methods import AdditiveNoise, Microaggregation, RankSwapping
    from verifier.data.schema import Schema

    n, m = int(100_000 * scale), 5
    x, _ = _tables(n, m)
    schema = Schema.all_numeric([f"a{j}" for j in range(m)])
    frame = pd.DataFrame(x, columns=schema.names)
    small = frame.iloc[: n // 5].reset_index(drop=True)
    noise_s, _ = _timed(lambda: AdditiveNoise(relative_sd=0.5).apply(frame, schema, random_state=1))
    swap_s, _ = _timed(lambda: RankSwapping(p=5).apply(frame, schema, random_state=1))
    mdav_s, result = _timed(lambda: Microaggregation(k=5).apply(small, schema, random_state=1), repeat=1)
    return {"n": n, "m": m, "seconds": noise_s + swap_s + mdav_s, "additive_noise_seconds": noise_s,
            "rank_swapping_seconds": swap_s, "mdav_n": len(small), "mdav_seconds": mdav_s,
            "mdav_groups": result.metrics["groups"]}


def row_rr(scale: float) -> dict:
    from publisher.methods.randomized_response import optimal_keep_probabilities
    from verifier.attacks.disclosure import rr_risk

    dims = (8,) * 5 + (10,)
    rng = np.random.default_rng(1)
    n = int(1_000_000 * scale)
    pi = rng.multinomial(n, rng.dirichlet(np.full(int(np.prod(dims)), 0.3))).reshape(dims) / n
    risk_s, risk = _timed(lambda: rr_risk(pi, [0.8] * 5, 0.7))
    searches = {}
    for scope, l in (("qi", 2), ("both", 2), ("both", 5)):
        seconds, found = _timed(lambda: optimal_keep_probabilities(pi, scope, l), repeat=1)
        searches[f"{scope} l={l}"] = {"seconds": seconds, "J": found.utility_cost, "max_risk": found.max_risk,
                                      "p_qi": [round(p, 4) for p in found.p_qi], "p_s": round(found.p_s, 4)}
    return {"n": n, "m": 6, "cells": int(pi.size), "seconds": risk_s, "max_risk": float(risk.max()),
            "searches": searches}


def row_reverse_map(scale: float) -> dict:
    from verifier import reverse_map

    n, m = int(1_000_000 * scale), 8
    x, y = _tables(n, m)
    seconds, result = _timed(lambda: reverse_map(x, y))
    return {"n": n, "m": m, "seconds": seconds, "rank_correlation": round(float(result.rank_correlation[0]), 4),
            "target_seconds": 2.0}


def _run_row(name: str, scale: float) -> dict:
    _warm_up()
    result = globals()[f"row_{name}"](scale)
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def _verdict(name: str, r: dict) -> str:
    if not any(k.startswith("target_") for k in r):
        return "-"
    ok = True
    if "target_seconds" in r:
        ok &= r["seconds"] < r["target_seconds"]
    if "target_mb" in r:
        ok &= r["peak_mb"] < r["target_mb"]
    if "target_speedup" in r:
        ok &= r["speedup"] >= r["target_speedup"] and r["identical"]
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["fuzz"]:  # python -m benchmarks fuzz --cases N: the command line and the page on one contract
        from benchmarks.fuzz import main as fuzz

        return fuzz(argv[1:])
    if argv[:1] == ["sdcmicro"]:  # python -m benchmarks sdcmicro [--rows N]: sdcMicro's rows beside ours
        from benchmarks.sdcmicro_peer import main as sdcmicro

        return sdcmicro(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                     epilog="python -m benchmarks fuzz --cases N [--seed S] [--json]: the differential "
                                     "fuzz of the command line and the page (benchmarks/fuzz.py). python -m "
                                     "benchmarks sdcmicro [--rows N ...] [--json]: sdcMicro's measure_risk, "
                                     "localSuppression, MDAV and PRAM beside this tool's, where R and sdcMicro are "
                                     "installed (benchmarks/sdcmicro_peer.py).")
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes (targets do not apply)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--row", choices=sorted(ROWS), help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=sorted(ROWS), action="append", help="run only these rows")
    args = parser.parse_args(argv)
    scale = 0.1 if args.quick else 1.0
    if args.row:
        print(json.dumps(_run_row(args.row, scale)))
        return 0
    results = {}
    for name in args.only or ROWS:
        cmd = [sys.executable, "-m", "benchmarks", "--row", name] + (["--quick"] if args.quick else [])
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name}: done", file=sys.stderr)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"
    if args.json:
        print(json.dumps({"machine": machine, "results": results}, indent=2))
        return 0
    print(f"machine: {machine}\n")
    print(f"{'row':<12} {'size':<14} {'seconds':>9} {'peak MB':>8}  {'other':<44} verdict")
    for name, r in results.items():
        other = ""
        if name == "pairwise":
            other = f"pairwise {r['pairwise_seconds']:.2f} s, speed-up {r['speedup']:.0f}x, identical {r['identical']}"
        elif name == "dataset":
            other = f"D = {r['D']}"
        elif name == "subject":
            other = (f"d = {r['distance']}, {r['matches']} match(es); full sort path {r['sorted_seconds']:.2f} s, "
                     f"{'identical' if r['identical'] else 'DIFFERENT'}")
        elif name == "random_match":
            other = (f"{r['samples']:,} draws; whole attack on X and Y {r['full_intruder_seconds']:.1f} s, "
                     f"linked {r['confidently_linked_share']:.4f}")
        elif name == "linkage":
            other = f"median d = {r['median_distance']:.0f}, mean match set {r['mean_match_set']:.2f}"
        elif name == "assess":
            other = f"D = {r['D']}, linked {r['confidently_linked_share']:.4f}, distortion {r['distortion']}"
        elif name == "methods":
            other = (f"noise {r['additive_noise_seconds']:.3f} s, swapping p=5 {r['rank_swapping_seconds']:.3f} s, "
                     f"MDAV k=5 on {r['mdav_n']:,}: {r['mdav_seconds']:.2f} s")
        elif name == "rr":
            other = f"{r['cells']:,} cells; search " + ", ".join(
                f"{k} {v['seconds']:.1f} s" for k, v in r["searches"].items())
        elif name == "reverse_map":
            other = f"rank corr x1 = {r['rank_correlation']}"
        verdict = "-" if args.quick else _verdict(name, r)
        print(f"{name:<12} {r['n']:>9,} x {r['m']:<2} {r['seconds']:>9.3f} {r['peak_mb']:>8.0f}  {other:<44} {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
