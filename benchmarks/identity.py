"""The same results before and after a change: the commands' JSON and files at two commits, compared (issue 30).

    python -m benchmarks.identity --before 9d2f8b9             # three seeded 2e5 x 5 tables
    python -m benchmarks.identity --before HEAD~3 --rows 5e4 --seeds 1,2

For each seed a table pair is written as :mod:`benchmarks.commands` writes
it (X rounded to 2 decimals with a 20-valued column, Y = X + noise,
shuffled). Then, once with the code of ``--before`` (a git worktree put first
on ``PYTHONPATH``) and once with this checkout, the same commands run on the
same files with the same output paths:

- ``verifier distance --out d.parquet --json`` and ``--out d.csv``;
- ``publisher release`` (additive noise, then reverse mapping, ``--seed``
  fixed) and ``verifier audit --original --json`` of it.

Compared: the JSON on stdout, the per-record files (Arrow tables equal,
values and types), the release's data file (bytes) and its manifest's
claims, and the audit's report. Only fields that differ from one run to the
next of the same code are left out: the manifest's creation time and the
signature over it, and the audit's timing. The table counts every figure
compared and says where they differ.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.commands import _write_tables

#: fields that differ between two runs of the same code (a release's creation time, the signature over it)
VOLATILE = {"created", "createdAt", "signature", "signatures", "sig", "seconds", "elapsed", "timestamp", "generated"}
REPO = Path(__file__).resolve().parents[1]


def _commands(folder: Path, seed: int, out: Path) -> dict[str, list[str]]:
    x, y, keys = folder / f"x{seed}.csv", folder / f"y{seed}.csv", folder / "keys"
    return {
        "distance": ["verifier", "distance", "--original", str(x), "--anonymized", str(y),
                     "--out", str(out / "d.parquet"), "--json"],
        "distance_csv": ["verifier", "distance", "--original", str(x), "--anonymized", str(y),
                         "--out", str(out / "d.csv"), "--json"],
        "release": ["publisher", "release", "--input", str(x), "--method", "additive_noise", "--param",
                    "relative_sd=0.5", "--then", "reverse_mapping", "--seed", str(seed), "--allow-degenerate", "--key",
                    str(keys / "private.pem"), "--dataset-id", "identity", "--out", str(out / "release"), "--json"],
        "audit": ["verifier", "audit", str(out / "release"), "--key", str(keys / "public.pem"), "--original", str(x),
                  "--json"],
    }


def _run_side(code: Path, folder: Path, seed: int, out: Path) -> dict[str, Any]:
    """Run every command with the code at ``code``; returns each command's parsed JSON."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    where = subprocess.run([sys.executable, "-c", "import verifier, publisher; print(verifier.__file__)"],
                           env=env, cwd=folder, capture_output=True, text=True, check=True).stdout.strip()
    if not where.startswith(str(code)):
        raise RuntimeError(f"the code under test is {where}, not {code}")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    results = {}
    for name, argv in _commands(folder, seed, out).items():
        proc = subprocess.run([sys.executable, "-m", argv[0], *argv[1:]], env=env, cwd=folder, capture_output=True,
                              text=True)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"{name} at {code}: exit {proc.returncode}: {proc.stderr[-500:]}")
        results[name] = json.loads(proc.stdout)
    return results


def _differences(a: Any, b: Any, path: str = "") -> tuple[int, list[str]]:
    """How many leaves two JSON values hold, and the paths where they differ (volatile fields skipped)."""
    if isinstance(a, dict) and isinstance(b, dict):
        total, where = 0, []
        for key in sorted(set(a) | set(b)):
            if key in VOLATILE:
                continue
            if key not in a or key not in b:
                where.append(f"{path}.{key} (only on one side)")
                continue
            t, w = _differences(a[key], b[key], f"{path}.{key}")
            total, where = total + t, where + w
        return total, where
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        total, where = 0, []
        for k, (p, q) in enumerate(zip(a, b)):
            t, w = _differences(p, q, f"{path}[{k}]")
            total, where = total + t, where + w
        return total, where
    # floats compare by their JSON text: the same bits print the same shortest repr
    return 1, ([] if json.dumps(a) == json.dumps(b) else [path or "."])


def _same_files(before: Path, after: Path) -> dict[str, Any]:
    """The per-record files and the release, compared."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    out: dict[str, Any] = {}
    d_before, d_after = pq.read_table(before / "d.parquet"), pq.read_table(after / "d.parquet")
    out["d.parquet"] = {"rows": d_after.num_rows, "columns": d_after.num_columns, "equal": d_before.equals(d_after)}
    c_before, c_after = pcsv.read_csv(before / "d.csv"), pcsv.read_csv(after / "d.csv")
    out["d.csv"] = {"rows": c_after.num_rows, "equal": c_before.equals(c_after)
                    and (before / "d.csv").read_bytes() == (after / "d.csv").read_bytes()}
    data = sorted(p.name for p in (after / "release").iterdir() if p.name.startswith("release."))
    out["release data"] = {name: (before / "release" / name).read_bytes() == (after / "release" / name).read_bytes()
                           for name in data}
    manifest_before = json.loads((before / "release" / "manifest.json").read_text())
    manifest_after = json.loads((after / "release" / "manifest.json").read_text())
    total, where = _differences(manifest_before, manifest_after)
    out["manifest"] = {"figures": total, "differ": where}
    return out


def compare(before: str, rows: int, seeds: list[int], folder: Path) -> dict[str, Any]:
    subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(folder / "keys"), "--unencrypted"],
                   check=True, capture_output=True)
    worktree = folder / "before"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), before], check=True,
                   capture_output=True)
    try:
        report: dict[str, Any] = {"before": before, "rows": rows, "seeds": {}}
        for seed in seeds:
            paths = _write_tables(folder, rows, 5, seed=seed)
            paths["x"].rename(folder / f"x{seed}.csv")
            paths["y"].rename(folder / f"y{seed}.csv")
            outputs = {side: folder / f"{side}-{seed}" for side in ("before", "after")}
            results = {}
            for side, code in (("before", worktree), ("after", REPO)):
                results[side] = _run_side(code, folder, seed, folder / "out")
                (folder / "out").rename(outputs[side])
            entry: dict[str, Any] = {}
            for name in results["after"]:
                total, where = _differences(results["before"][name], results["after"][name])
                entry[f"{name} JSON"] = {"figures": total, "differ": where}
            entry.update(_same_files(outputs["before"], outputs["after"]))
            report["seeds"][seed] = entry
        return report
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], capture_output=True)


def identical(report: dict[str, Any]) -> bool:
    """Whether every figure and file compared is the same."""
    for entry in report["seeds"].values():
        for name, value in entry.items():
            if "differ" in value and value["differ"]:
                return False
            if "equal" in value and not value["equal"]:
                return False
            if name == "release data" and not all(value.values()):
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.identity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--rows", type=float, default=2e5, help="records per table (default 2e5)")
    parser.add_argument("--seeds", default="1,2,3", help="the tables' seeds (default 1,2,3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-identity-") as tmp:
        report = compare(args.before, int(args.rows), [int(s) for s in args.seeds.split(",")], Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for seed, entry in report["seeds"].items():
            print(f"seed {seed}, {report['rows']:,} records:")
            for name, value in entry.items():
                print(f"  {name}: {json.dumps(value)}")
        print("identical" if identical(report) else "DIFFERENT")
    return 0 if identical(report) else 1


if __name__ == "__main__":
    sys.exit(main())
