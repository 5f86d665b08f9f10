"""Interrupt the real commands at many moments and count the runs that did not end with one INTERRUPTED line.

    python -m benchmarks.interrupts                 # 18 moments x 4 commands x SIGINT and SIGTERM, 2e5 x 5
    python -m benchmarks.interrupts --quick         # 6 moments
    python -m benchmarks.interrupts --json
    python -m benchmarks.interrupts --waits 1e7     # the longest kernel call of a tree's build at 1e7 x 5

Each run starts the command in a subprocess, sends the signal after the
moment, and reads how it ended. A run is good when it exited 130 with
exactly one ``FAIL: -: INTERRUPTED`` line on stderr and no traceback, or
when it had finished (exit 0) before the signal came. Anything else (a
crash, a silent kill, a traceback) is listed with the end of its stderr.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MOMENTS = (0.3, 0.45, 0.6, 0.75, 0.9, 1.05, 1.2, 1.35, 1.5, 1.65, 1.8, 1.95, 2.1, 2.25, 2.4, 2.7, 3.0, 3.3)


def _commands(table: Path, key: Path, out: Path) -> dict[str, list[str]]:
    return {
        "publisher release": ["publisher", "release", "--input", str(table), "--method", "additive_noise", "--param",
                              "relative_sd=0.5", "--then", "reverse_mapping", "--key", str(key), "--dataset-id", "b",
                              "--out", str(out)],
        "verifier distance": ["verifier", "distance", "--original", str(table), "--anonymized", str(table)],
        "verifier intruder": ["verifier", "intruder", "--original", str(table), "--anonymized", str(table)],
        "publisher assess": ["publisher", "assess", "--original", str(table), "--anonymized", str(table)],
    }


def _one(argv: list[str], sig: int, after: float, cwd: Path) -> dict:
    proc = subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, stdin=subprocess.DEVNULL)
    time.sleep(after)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    lines = err.strip().splitlines()
    good = proc.returncode == 0 or (proc.returncode == 130 and len(lines) == 1
                                    and lines[0].startswith("FAIL: -: INTERRUPTED: "))
    return {"code": proc.returncode, "good": good, "stderr": lines[-6:]}


def longest_waits(n: int) -> dict:
    """The longest single kernel call of a tree's build over ``n x 5`` random blocks (an interrupt waits at most
    this long, signals being held only during one call), and the whole build's time, in seconds."""
    from verifier.core import kdtree

    lo = np.random.default_rng(0).integers(1, n, size=(n, 5)).astype(np.int64)
    kdtree.RankTree(lo[:1000], lo[:1000])  # load the kernels first
    calls: list[float] = []
    original = kdtree.held_signals

    def timed():
        class Held:
            def __enter__(self):
                self.inner = original()
                self.inner.__enter__()
                self.t = time.perf_counter()

            def __exit__(self, *exc):
                calls.append(time.perf_counter() - self.t)
                return self.inner.__exit__(*exc)
        return Held()

    kdtree.held_signals = timed
    try:
        t = time.perf_counter()
        kdtree.RankTree(lo, lo)
        whole = time.perf_counter() - t
    finally:
        kdtree.held_signals = original
    return {"records": n, "calls": len(calls), "longest_call": max(calls), "build": whole}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.interrupts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 moments instead of 18")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--waits", type=float, metavar="N", help="instead: the longest kernel call of a tree build")
    args = parser.parse_args(argv)
    if args.waits:
        waits = longest_waits(int(args.waits))
        print(json.dumps(waits, indent=2) if args.json else
              f"{waits['records']:.0e} x 5: build {waits['build']:.2f} s in {waits['calls']} kernel calls, the "
              f"longest {waits['longest_call']:.3f} s")
        return 0
    moments = MOMENTS[::3] if args.quick else MOMENTS
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        rng = np.random.default_rng(1)
        x = rng.normal(size=(args.rows, 5)) * [10, 100, 1000, 5, 50] + [100, 1000, 5000, 50, 500]
        np.savetxt(root / "x.csv", x, delimiter=",", header="a,b,c,d,e", comments="", fmt="%.4f")
        subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(root / "keys"), "--unencrypted"],
                       check=True, capture_output=True)
        results = []
        for after in moments:
            for name, command in _commands(root / "x.csv", root / "keys" / "private.pem", root / "rel").items():
                for sig in (signal.SIGINT, signal.SIGTERM):
                    run = _one(command, sig, after, root)
                    results.append({"command": name, "signal": sig.name, "after": after, **run})
                    for leftover in root.glob("rel*"):
                        subprocess.run(["rm", "-rf", str(leftover)], check=True)
    bad = [r for r in results if not r["good"]]
    if args.json:
        print(json.dumps({"runs": len(results), "bad": bad}, indent=2))
        return 0
    for r in bad:
        print(f"{r['command']} {r['signal']} after {r['after']} s: exit {r['code']}: {' | '.join(r['stderr'])}")
    print(f"{len(results)} runs, {len(bad)} not ended by one INTERRUPTED line (or finished)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
