"""Interrupt the real commands at many moments and count the runs that did not end with one INTERRUPTED line.

    python -m benchmarks.interrupts                 # 18 moments x 4 commands x SIGINT and SIGTERM, 2e5 x 5
    python -m benchmarks.interrupts --quick         # 6 moments
    python -m benchmarks.interrupts --json

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.interrupts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 moments instead of 18")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
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
