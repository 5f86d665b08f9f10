"""A first run against a warm one: the real commands, with numba's cache empty and then full.

    python -m benchmarks.cold_start            # --help, and a subject's check on the paper example and on 1e5 x 5
    python -m benchmarks.cold_start --json

A fresh install has no compiled kernels. Each cold run gets a new, empty
``NUMBA_CACHE_DIR`` (what a fresh install has); the warm runs that follow use
the cache it filled. Times are whole processes (``/usr/bin/time``-like:
wall clock from start to exit), the warm one the best of three.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _timed(argv: list[str], env: dict, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", *argv], env=env, cwd=cwd, check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def _release(root: Path, name: str, table: Path, env: dict) -> list[str]:
    """A release of ``table`` (noise then reverse mapping) and the check of its first record."""
    subprocess.run([sys.executable, "-m", "publisher", "release", "--input", str(table), "--method", "additive_noise",
                    "--param", "relative_sd=0.8", "--then", "reverse_mapping", "--seed", "1", "--key",
                    str(root / "keys" / "private.pem"), "--dataset-id", name, "--out", str(root / name)],
                   env=env, check=True, capture_output=True)
    header, first = table.read_text().splitlines()[:2]
    (root / f"{name}.json").write_text(json.dumps(dict(zip(header.split(","), map(float, first.split(","))))))
    return ["verifier", "check", str(root / name), "--key", str(root / "keys" / "public.pem"), "--record",
            str(root / f"{name}.json")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_start", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="the larger release's records (default 1e5)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        env["NUMBA_CACHE_DIR"] = str(root / "prepare-cache")
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(root / "keys"), "--unencrypted"],
                       env=env, check=True, capture_output=True)
        from verifier.data.paper import example_folder

        # not the noise's seed (1): noise drawn from the very normals of the data would keep every rank
        x = np.random.default_rng(7).normal(size=(args.rows, 5)) * [10, 100, 1000, 5, 50] + [100, 1000, 5000, 50, 500]
        np.savetxt(root / "big.csv", x, delimiter=",", header="a,b,c,d,e", comments="", fmt="%.3f")
        with example_folder() as paper:
            commands = {
                "publisher --help": ["publisher", "--help"],
                "verifier --help": ["verifier", "--help"],
                "verifier check, paper example (20 x 3)": _release(root, "paper", Path(paper) / "original.csv", env),
                f"verifier check, {args.rows:.0e} x 5": _release(root, "big", root / "big.csv", env),
            }
            for k, (label, command) in enumerate(commands.items()):
                run_env = {**env, "NUMBA_CACHE_DIR": str(root / f"cache-{k}")}  # empty: a fresh install
                cold = _timed(command, run_env, root)
                warm = min(_timed(command, run_env, root) for _ in range(3))
                rows.append({"command": label, "cold_s": round(cold, 2), "warm_s": round(warm, 2),
                             "ratio": round(cold / warm, 1)})
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "rows": rows}, indent=2))
        return 0
    print(f"{'command':45} {'cold':>7} {'warm':>7} {'cold/warm':>9}")
    for r in rows:
        print(f"{r['command']:45} {r['cold_s']:6.2f}s {r['warm_s']:6.2f}s {r['ratio']:8.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
