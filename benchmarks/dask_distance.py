"""Whole-command benchmark of ``verifier distance`` (or ``intruder``) ``--engine dask`` on a LocalCluster, against ``--engine local``.

Writes X and Y (n x m, one heavily tied column) as directories of Parquet
parts, runs each command in a subprocess, and samples the resident memory of
the command and of every process it starts (the scheduler and the workers)
every 0.1 s: the client's peak, the largest worker's peak, and the peak of
their sum. Then the same computation in this process with a stage timer, to
say where the time goes. ``python -m benchmarks.dask_distance --rows 1e6``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa
import pyarrow.parquet as pq


def _write(folder: Path, name: str, a: np.ndarray, parts: int) -> Path:
    out = folder / name
    out.mkdir()
    for i, block in enumerate(np.array_split(a, parts)):
        pq.write_table(pa.table({f"a{j}": block[:, j] for j in range(a.shape[1])}), out / f"part-{i:04d}.parquet")
    return out


def _tables(folder: Path, n: int, m: int, parts: int, seed: int = 11) -> tuple[Path, Path]:
    """X and Y as directories of parts, and as single Parquet files (``x.parquet``) for the local engine."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(n, m)), 2)
    x[:, 0] = rng.integers(0, 20, n)  # heavily tied
    y = np.round(x + rng.normal(scale=0.5, size=(n, m)), 4)[rng.permutation(n)]
    _write(folder, "x.parquet", x, 1), _write(folder, "y.parquet", y, 1)
    for name in ("x.parquet", "y.parquet"):
        (folder / name / "part-0000.parquet").rename(folder / f"{name}.tmp")
        (folder / name).rmdir()
        (folder / f"{name}.tmp").rename(folder / name)
    return _write(folder, "x", x, parts), _write(folder, "y", y, parts)


def _watch(argv: list[str]) -> dict:
    """Run ``argv``; wall time, exit code and peak RSS (MB) of the command, its largest child, and all together."""
    start = time.perf_counter()
    # files, not pipes: a pipe left unread while the command runs fills up and stops it
    stdout, stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr)
    top = psutil.Process(proc.pid)
    client = child = total = 0
    while proc.poll() is None:
        try:
            mine = top.memory_info().rss
            kids = [c.memory_info().rss for c in top.children(recursive=True)]
        except psutil.Error:
            kids, mine = [], client
        client, child, total = max(client, mine), max([child, *kids]), max(total, mine + sum(kids))
        time.sleep(0.1)
    stdout.seek(0), stderr.seek(0)
    out, err = stdout.read(), stderr.read()
    mb = 1 / 2**20
    return {"seconds": round(time.perf_counter() - start, 2), "code": proc.returncode,
            "client_peak_mb": round(client * mb), "largest_worker_peak_mb": round(child * mb),
            "all_processes_peak_mb": round(total * mb), "stderr": err.decode(errors="replace")[-300:],
            "result": _result(out) if proc.returncode == 0 else None}


def _result(out: bytes) -> dict:
    """The headline of the command's JSON: D (distance) or the confidently linked share (intruder)."""
    got = json.loads(out)
    if "dataset" in got:
        return {"D": got["dataset"]["distance"]}
    return {"confidently_linked_share": got["confidently_linked_share"], "random": got["random"]["method"]}


def _stages(x: Path, y: Path, workers: int, memory_limit: str) -> dict[str, float]:
    """The engine's stages timed in this process, on a cluster like the command's."""
    from distributed import Client, LocalCluster

    from verifier.distributed.engine import distributed_permuted_privacy
    from verifier.distributed.partitions import table_parts

    seconds: dict[str, float] = {}

    @contextmanager
    def phase(label: str):
        start = time.perf_counter()
        yield
        seconds[label] = round(time.perf_counter() - start, 2)

    with LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit=memory_limit,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        with phase("reading the parts (graph)"):
            xp = table_parts(client, str(x), None, pieces=2 * workers)
            yp = table_parts(client, str(y), xp.schema, pieces=2 * workers)
        distributed_permuted_privacy(client, xp.parts, yp.parts, yp.schema.kinds, phase=phase)
    return seconds


def run(n: int, m: int, parts: int, workers: int, memory_limit: str, local: bool, command: str = "distance",
        stages: bool = True) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp:
        x, y = _tables(Path(tmp), n, m, parts)
        base = [sys.executable, "-m", "verifier", command, "--original", str(x), "--anonymized", str(y), "--json"]
        rows = {"dask": _watch([*base, "--engine", "dask", "--workers", str(workers), "--memory-limit", memory_limit])}
        if local:
            rows["local"] = _watch([*base[:5], str(x) + ".parquet", base[6], str(y) + ".parquet", *base[8:]])
        if stages and command == "distance":
            rows["dask"]["stages"] = _stages(x, y, workers, memory_limit)
        return {"command": command, "n": n, "m": m, "parts": parts, "workers": workers, "memory_limit": memory_limit,
                "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dask_distance", description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=float, default=1e6)
    p.add_argument("--attributes", type=int, default=5)
    p.add_argument("--parts", type=int, default=8, help="Parquet parts of each table")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="8GB")
    p.add_argument("--no-local", action="store_true", help="skip the local engine (a table that does not fit)")
    p.add_argument("--command", choices=("distance", "intruder"), default="distance",
                   help="the command to time: the data-set (D, v) or the intruder's test (default distance)")
    p.add_argument("--no-stages", action="store_true", help="skip the in-process rerun that times each stage")
    args = p.parse_args(argv)
    print(json.dumps(run(int(args.rows), args.attributes, args.parts, args.workers, args.memory_limit,
                         not args.no_local, args.command, not args.no_stages), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
