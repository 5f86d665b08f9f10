"""A table that cannot fit is refused before it is read: one FAIL line, exit 4 (issue 15, item 6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from publisher.cli import main as publisher
from verifier.cli import main as verifier
from verifier.data.memory import ENV, START_UP, available_memory, parse_size, table_shape
from verifier.errors import UsageError

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.mark.parametrize("text, size", [("8G", 8 * 2**30), ("512M", 512 * 2**20), ("1.5GB", int(1.5 * 2**30)),
                                         ("2GiB", 2 * 2**30), ("1000", 1000), (" 64k ", 64 * 2**10)])
def test_budget_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1G", "1 PB", "1e9"])
def test_bad_budget_sizes(text):
    with pytest.raises(UsageError, match=ENV):
        parse_size(text)


def test_the_budget_comes_from_the_environment_or_the_machine(monkeypatch):
    monkeypatch.setenv(ENV, "3G")
    assert available_memory() == (3 * 2**30, f"{ENV}=3G")
    monkeypatch.delenv(ENV)
    budget, source = available_memory()
    assert 0 < budget and source  # MemAvailable, the cgroup's room or ulimit -v, whichever is least


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("memory")
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(np.round(rng.normal(size=(100_000, 5)), 3), columns=[f"a{j}" for j in range(5)])
    paths = {"csv": folder / "x.csv", "parquet": folder / "x.parquet"}
    frame.to_csv(paths["csv"], index=False)
    frame.to_parquet(paths["parquet"], index=False)
    return paths


def test_the_shape_is_estimated_without_reading_the_table(big):
    n, m = table_shape(big["csv"])
    assert m == 5 and abs(n - 100_000) < 2_000  # from the mean length of the first MiB of lines
    assert table_shape(big["parquet"]) == (100_000, 5)  # from the metadata: exact
    assert table_shape(big["csv"], 3) == (n, 3)  # the columns the command takes
    assert table_shape(big["csv"].with_name("absent.csv")) is None  # the reader will say what is wrong


def test_distance_refuses_tables_that_do_not_fit_and_says_what_would(big, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, f"{(START_UP >> 20) + 50}M")
    out = tmp_path / "d.parquet"
    code = verifier(["distance", "--original", str(big["csv"]), "--anonymized", str(big["parquet"]), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 4 and "\n" not in err
    assert err.startswith(f"FAIL: {big['csv']}: MEMORY_EXCEEDED: about ")
    # 1e6 cells at 120 bytes (114 MB) above the start-up, 50 MB of room: about 43,700 of the 100,000 records fit
    fit = int(err.split("about ")[3].split(" records would fit")[0].replace(",", ""))
    assert 40_000 < fit < 48_000
    assert f"is available ({ENV}=" in err and not out.exists()
    monkeypatch.setenv(ENV, "8G")
    assert verifier(["distance", "--original", str(big["csv"]), "--anonymized", str(big["parquet"]),
                     "--out", str(out), "--json"]) == 0


def test_the_publisher_refuses_before_it_writes_anything(big, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, f"{(START_UP >> 20) + 10}M")
    out = tmp_path / "y.csv"
    code = publisher(["anonymize", "--input", str(big["parquet"]), "--method", "additive_noise", "--param",
                      "relative_sd=0.5", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 4 and "MEMORY_EXCEEDED" in err and "about 100,000 records x 5 columns" in err
    assert not out.exists()


def test_check_and_audit_estimate_the_release_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV, f"{START_UP >> 20}M")  # no room for any table
    record = tmp_path / "me.json"
    record.write_text('{"x1": 100.87, "x2": 902.21, "x3": 5108.54}')
    assert verifier(["check", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem"), "--record",
                     str(record)]) == 4
    assert f"{GOLDEN / 'release' / 'release.csv'}: MEMORY_EXCEEDED" in capsys.readouterr().err
    assert verifier(["audit", str(GOLDEN / "release"), "--key", str(GOLDEN / "public.pem")]) == 4
    assert "MEMORY_EXCEEDED" in capsys.readouterr().err


def test_a_real_process_exits_4_with_one_line_and_no_traceback(big, tmp_path):
    env = {**os.environ, ENV: "100M"}
    proc = subprocess.run([sys.executable, "-m", "verifier", "distance", "--original", str(big["csv"]),
                           "--anonymized", str(big["csv"]), "--json"], capture_output=True, text=True, env=env)
    assert proc.returncode == 4 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr and "MEMORY_EXCEEDED" in proc.stderr
