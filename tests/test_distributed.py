"""The Dask engine on a real LocalCluster of 2 worker processes: the same report as the local engine, to the bit.

Property tests on continuous and heavily tied tables cut into parts, value
ranges and slabs in several ways; the command on a directory of Parquet
parts; a worker memory limit below the table's size (it spills and
completes); a worker killed in the middle of a run (the scheduler recomputes
what it held, and the result does not change); and the one FAIL line without
the extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from verifier.cli import main as verifier
from verifier.attacks.intruder import run_intruder
from verifier.core.permutation import RankSpace, compute_distances_bruteforce, compute_permuted_privacy
from verifier.core.ranks import reverse_map
from verifier.errors import InvalidInputError

distributed = pytest.importorskip("distributed")

from verifier.distributed.engine import distributed_permuted_privacy  # noqa: E402
from verifier.distributed.intruder import distributed_intruder  # noqa: E402

REPORT_FIELDS = ("distances", "match_offsets", "matches", "query_lo", "query_hi", "spread_at_dataset_distance",
                 "spread_at_record_distance", "dataset_spread")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit="1GB") as cluster, distributed.Client(cluster) as c:
        yield c


def _same(local, dist) -> None:
    assert dist.dataset_distance == local.dataset_distance
    for name in REPORT_FIELDS:
        a, b = getattr(local, name), getattr(dist, name)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name


def _table(rng, n: int, m: int, tied: bool) -> tuple[np.ndarray, np.ndarray]:
    if tied:  # few distinct values: blocks of ties everywhere, also across part and range edges
        x = rng.integers(0, 5, (n, m)).astype(float)
        return x, rng.integers(0, 5, (n, m)).astype(float)
    x = rng.normal(size=(n, m))
    return x, x + rng.normal(scale=0.4, size=(n, m))


def _cut(rng, a: np.ndarray, parts: int) -> list[np.ndarray]:
    cuts = np.sort(rng.choice(np.arange(0, a.shape[0] + 1), size=parts - 1, replace=True))
    return np.split(a, cuts)  # empty parts included


@pytest.mark.parametrize("seed", range(12))
def test_the_dask_engine_equals_the_local_engine(client, seed):
    rng = np.random.default_rng(seed)
    n, m, tied = int(rng.integers(2, 1500)), int(rng.integers(1, 5)), bool(seed % 2)
    x, y = _table(rng, n, m, tied)
    kinds = ["nominal" if tied and j == 0 else "numeric" for j in range(m)]
    local = compute_permuted_privacy(RankSpace(y, kinds), x)
    report, space = distributed_permuted_privacy(
        client, _cut(rng, x, int(rng.integers(1, 5))), _cut(rng, y, int(rng.integers(1, 5))), kinds,
        slabs=int(rng.integers(1, 7)), ranges=int(rng.integers(1, 7)))
    _same(local, report)
    r = int(rng.integers(0, n))
    matches = report.record_matches(r)
    assert np.array_equal(space.deviations(report.query_lo[r], report.query_hi[r], matches),
                          RankSpace(y, kinds).deviations(report.query_lo[r], report.query_hi[r], matches))


@pytest.mark.parametrize("tied", [False, True])
def test_the_dask_engine_equals_brute_force(client, tied):
    rng = np.random.default_rng(7)
    x, y = _table(rng, 300, 3, tied)
    report, _ = distributed_permuted_privacy(client, _cut(rng, x, 3), _cut(rng, y, 4), ["numeric"] * 3,
                                             slabs=5, ranges=4)
    distances, matches = compute_distances_bruteforce(RankSpace(y), x)
    assert np.array_equal(report.distances, distances)
    assert all(np.array_equal(report.record_matches(r), matches[r]) for r in range(300))


INTRUDER_FIELDS = ("p_values", "p_value_low", "p_value_high", "original_counts", "outcomes", "rank_correlation")


def _same_intruder(local, dist) -> None:
    for name, a, b in zip(("distances", "offsets", "matches"), (local.linkage.distances, *local.linkage.sets.listed()),
                          (dist.linkage.distances, *dist.linkage.sets.listed())):
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert (dist.random.method, dist.random.total) == (local.random.method, local.random.total)
    assert np.array_equal(dist.random.counts, local.random.counts)
    for name in INTRUDER_FIELDS:
        a, b = getattr(local, name), getattr(dist, name)
        assert (a is None) == (b is None), name
        assert a is None or np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
    assert dist.hellinger == local.hellinger and dist.alpha == local.alpha


@pytest.mark.parametrize("seed", range(8))
def test_the_dask_intruder_equals_the_local_intruder(client, seed):
    """Reverse mapping with random tie-breaks, linkage, random draws, shares: the same seed gives the same report."""
    rng = np.random.default_rng(100 + seed)
    n, m, tied = int(rng.integers(2, 800)), int(rng.integers(1, 4)), bool(seed % 2)
    x, y = _table(rng, n, m, tied)
    kinds = ["nominal" if tied and j == 0 else "numeric" for j in range(m)]
    paired = seed % 4 < 2
    options = {"mode": "monte_carlo", "samples": 40_000} if seed % 3 else {"exhaustive_limit": 10**6}
    local = run_intruder(x, y, kinds, paired=paired, random_state=seed, **options)
    dist = distributed_intruder(client, _cut(rng, x, int(rng.integers(1, 4))), _cut(rng, y, int(rng.integers(1, 5))),
                                kinds, paired=paired, random_state=seed, slabs=int(rng.integers(1, 6)),
                                ranges=int(rng.integers(1, 6)), **options)
    _same_intruder(local, dist)
    assert dist.random.method == ("monte_carlo" if seed % 3 or n ** m > 10**6 else "exhaustive")


def test_the_dask_intruder_links_as_brute_force_does(client):
    """All-tied columns: Z from the cluster's reverse mapping, its links checked record by record by brute force."""
    rng = np.random.default_rng(21)
    x, y = _table(rng, 200, 2, True)
    dist = distributed_intruder(client, _cut(rng, x, 3), _cut(rng, y, 2), ["numeric"] * 2, paired=True,
                                random_state=4, slabs=3, ranges=3, mode="monte_carlo", samples=500)
    z = reverse_map(x, y, random_state=np.random.default_rng(4)).z
    distances, matches = compute_distances_bruteforce(RankSpace(z), x)
    assert np.array_equal(dist.linkage.distances, distances)
    assert all(np.array_equal(dist.linkage.record_matches(r), matches[r]) for r in range(200))
    assert np.all(np.sort(z, axis=0) == np.sort(x, axis=0))  # Z is a per-column permutation of X


def test_the_dask_intruder_refuses_tables_of_other_sizes(client):
    x = np.arange(12.0).reshape(6, 2)
    with pytest.raises(InvalidInputError, match="has 5 records and the original 6") as failed:
        distributed_intruder(client, [x], [x[:5]], ["numeric"] * 2, where="y.parquet")
    assert failed.value.reason == "SHAPE_MISMATCH" and failed.value.path == "y.parquet"


def _parts(folder: Path, y: np.ndarray, sizes: list[int]) -> Path:
    folder.mkdir()
    start = 0
    for i, size in enumerate(sizes):
        block = y[start:start + size]
        pq.write_table(pa.table({f"a{j}": block[:, j] for j in range(y.shape[1])}), folder / f"part-{i:03d}.parquet")
        start += size
    return folder


def _csv(path: Path, a: np.ndarray) -> Path:
    path.write_text(",".join(f"a{j}" for j in range(a.shape[1])) + "\n"
                    + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in a))
    return path


def test_the_command_on_a_directory_of_parquet_parts(tmp_path, capsys):
    rng = np.random.default_rng(3)
    x, y = _table(rng, 3000, 3, False)
    y[::7, 1] = 0.25  # one large block of ties
    original = _csv(tmp_path / "x.csv", x)
    parts = _parts(tmp_path / "y", y, [1000, 1500, 500])
    base = ["distance", "--original", str(original), "--json"]
    assert verifier([*base, "--anonymized", str(_csv(tmp_path / "y.csv", y)), "--out", str(tmp_path / "l.parquet")]) == 0
    local = json.loads(capsys.readouterr().out)
    assert verifier([*base, "--anonymized", str(parts), "--engine", "dask", "--workers", "2",
                     "--out", str(tmp_path / "d.parquet")]) == 0
    dist = json.loads(capsys.readouterr().out)
    assert dist.pop("engine") == "dask" and local.pop("engine") == "local"
    assert dist["dataset"] == local["dataset"] and dist == {**local, "out": str(tmp_path / "d.parquet")}
    assert pq.read_table(tmp_path / "d.parquet").equals(pq.read_table(tmp_path / "l.parquet"))


@pytest.mark.parametrize("paired", [False, True])
def test_the_intruder_command_on_parquet_parts(tmp_path, capsys, paired):
    """``verifier intruder --engine dask`` on directories of parts: the local command's JSON and --out file."""
    rng = np.random.default_rng(13)
    x, y = _table(rng, 2500, 3, False)
    y[::5, 0] = 1.5  # ties in Y: the reverse mapping draws its permutation
    base = ["intruder", "--json", "--seed", "9", "--samples", "3000", *(["--paired"] if paired else [])]
    assert verifier([*base, "--original", str(_csv(tmp_path / "x.csv", x)), "--anonymized",
                     str(_csv(tmp_path / "y.csv", y)), "--out", str(tmp_path / "l.parquet")]) == 0
    local = json.loads(capsys.readouterr().out)
    assert verifier([*base, "--original", str(_parts(tmp_path / "x", x, [1200, 1300])), "--anonymized",
                     str(_parts(tmp_path / "y", y, [700, 900, 900])), "--engine", "dask", "--workers", "2",
                     "--out", str(tmp_path / "d.parquet")]) == 0
    dist = json.loads(capsys.readouterr().out)
    assert (dist.pop("engine"), local.pop("engine")) == ("dask", "local")
    assert dist == {**local, "out": str(tmp_path / "d.parquet")}
    assert ("rank_correlation" in dist) is paired and local["random"]["method"] == "monte_carlo"
    assert pq.read_table(tmp_path / "d.parquet").equals(pq.read_table(tmp_path / "l.parquet"))


def test_the_intruder_command_refuses_parts_of_other_sizes(tmp_path, capsys):
    rng = np.random.default_rng(2)
    x, y = _table(rng, 100, 2, False)
    code = verifier(["intruder", "--original", str(_parts(tmp_path / "x", x, [50, 50])), "--anonymized",
                     str(_parts(tmp_path / "y", y[:90], [90])), "--engine", "dask", "--workers", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "SHAPE_MISMATCH" in err[0] and "has 90 records and the original 100" in err[0]
    assert verifier(["intruder", "--anonymized", str(tmp_path / "y"), "--subject-record", str(tmp_path / "me.json"),
                     "--engine", "dask"]) == 2
    assert "a subject's test reads Y here" in capsys.readouterr().err


def test_audit_and_assess_on_the_cluster_give_the_local_figures(client, tmp_path, capsys):
    """``verifier audit --engine dask`` and ``publisher assess --engine dask``: the local JSON and --out file."""
    from publisher.cli import main as publisher
    from publisher.keys import keygen

    rng = np.random.default_rng(17)
    x, _ = _table(rng, 1500, 3, False)
    x[::4, 2] = 7.0  # ties
    original = _csv(tmp_path / "x.csv", x)
    private, public, _, _ = keygen(tmp_path / "keys", None)
    assert publisher(["release", "--input", str(original), "--method", "additive_noise", "--param", "relative_sd=0.5",
                      "--seed", "3", "--samples", "1000", "--format", "parquet", "--part-rows", "400", "--key",
                      str(private), "--dataset-id", "d", "--out", str(tmp_path / "rel")]) == 0
    capsys.readouterr()
    # the module's cluster serves the three runs on Dask (the commands that start their own are tested below)
    engines = {"local": ["--engine", "local"], "dask": ["--engine", "dask", "--scheduler", client.scheduler.address]}
    got = {}
    for engine, chosen in engines.items():
        assert verifier(["audit", str(tmp_path / "rel"), "--key", str(public), "--original", str(original),
                         "--json", "--out", str(tmp_path / f"{engine}.parquet"), *chosen]) == 0
        got[engine] = json.loads(capsys.readouterr().out)
    assert (got["dask"].pop("engine"), got["local"].pop("engine")) == ("dask", "local")
    assert got["dask"] == {**got["local"], "out": str(tmp_path / "dask.parquet")}
    assert got["local"]["passed"] is True and any(c["claim"] == "intruder.hellinger" for c in got["local"]["checks"])
    assert pq.read_table(tmp_path / "dask.parquet").equals(pq.read_table(tmp_path / "local.parquet"))
    y = _csv(tmp_path / "y.csv", np.round(x + rng.normal(scale=0.3, size=x.shape), 3))
    for paired in ([], ["--paired"]):
        runs = {}
        for engine, chosen in engines.items():
            assert publisher(["assess", "--original", str(original), "--anonymized", str(y), "--json",
                              "--samples", "1000", *paired, *chosen]) == 0
            runs[engine] = json.loads(capsys.readouterr().out)
        assert (runs["dask"].pop("engine"), runs["local"].pop("engine")) == ("dask", "local")
        assert runs["dask"] == runs["local"]
    assert verifier(["audit", str(tmp_path / "rel"), "--key", str(public), "--engine", "dask"]) == 2
    assert "give --original" in capsys.readouterr().err


def test_a_worker_memory_limit_below_the_table_spills_and_completes(tmp_path):
    """Workers of 16 MB each hold a 24 MB table and its ranks (60 MB more): they spill to disk."""
    rng = np.random.default_rng(5)
    x, y = _table(rng, 300_000, 5, False)
    assert x.nbytes + y.nbytes > 16e6
    local = compute_permuted_privacy(RankSpace(y), x)
    config = {"distributed.worker.memory.target": 0.5, "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": False}
    with __import__("dask").config.set(config), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     memory_limit="16MB", local_directory=str(tmp_path)) as cluster, \
            distributed.Client(cluster) as c:
        report, _ = distributed_permuted_privacy(c, np.array_split(x, 4), np.array_split(y, 4), ["numeric"] * 5)
        spilled = c.run(lambda dask_worker: dask_worker.data.spilled_total.disk)
    _same(local, report)
    assert sum(spilled.values()) > 0


def test_a_worker_killed_in_the_middle_of_a_run_changes_nothing(tmp_path):
    rng = np.random.default_rng(11)
    x, y = _table(rng, 20_000, 3, False)
    parts = _parts(tmp_path / "y", y, [5000] * 4)
    local = compute_permuted_privacy(RankSpace(y), x)
    killed = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  memory_limit="1GB") as cluster, distributed.Client(cluster) as c:
        from contextlib import contextmanager

        from verifier.distributed.partitions import table_parts

        @contextmanager
        def phase(label):
            if label.startswith("searching"):  # the ranks are on the workers now: kill the one holding most
                holders = c.who_has()
                counts = {}
                for where in holders.values():
                    for w in where:
                        counts[w] = counts.get(w, 0) + 1
                victim = max(counts, key=counts.get)
                try:
                    c.run(os._exit, 1, workers=[victim])
                except Exception:  # the worker dies before it answers
                    pass
                killed.append(victim)
            yield

        xp = table_parts(c, str(_parts(tmp_path / "x", x, [8000, 12000])), None, pieces=2)
        yp = table_parts(c, str(parts), xp.schema, pieces=2)
        report, _ = distributed_permuted_privacy(c, xp.parts, yp.parts, yp.schema.kinds, phase=phase)
        assert killed and killed[0] not in c.scheduler_info()["workers"]  # it died; its nanny started another
    _same(local, report)


def test_without_dask_the_engine_is_one_fail_line(tmp_path):
    """A Python where dask.distributed cannot be imported: one line naming the extra, exit 4."""
    x = _csv(tmp_path / "x.csv", np.arange(12.0).reshape(4, 3))
    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None; "
            "sys.modules['dask.distributed'] = None; from verifier.cli import main; "
            f"sys.exit(main(['distance', '--original', {str(x)!r}, '--anonymized', {str(x)!r}, '--engine', 'dask']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        "FAIL: -: DASK_MISSING: --engine dask needs Dask's distributed scheduler: pip install "
        "'permuted-privacy[dask]'"]
