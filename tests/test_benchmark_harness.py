"""The benchmarks' harness times and profiles the real console commands (benchmarks/commands.py's ``measure``).

A console command ends with ``os._exit`` once its output is flushed (verifier/console.py), which ``python -m
cProfile`` never survives to write its statistics: the harness's profiled run writes them before the exit. Every
benchmark table's "where the time goes" column reads them.
"""

from __future__ import annotations

import pstats

from benchmarks.commands import measure


def test_a_console_command_is_timed_and_its_profile_written(tmp_path):
    found = measure(["publisher", "keygen", "--out", str(tmp_path / "keys"), "--unencrypted"], tmp_path, "keygen")
    assert found["seconds"] > 0 and found["peak_mb"] > 0 and isinstance(found["phases"], dict)
    stats = pstats.Stats(str(tmp_path / "keygen.prof")).stats
    # the command's own work is in the profile, not only the interpreter's start
    assert any(file.endswith("publisher/keys.py") for file, _, _ in stats), sorted(stats)[:5]
    assert (tmp_path / "keys" / "public.pem").exists()


def test_the_sdcmicro_peer_says_how_to_install_it_where_r_is_missing(tmp_path):
    """Issue 61, item 2: the sdcMicro rows run where R and sdcMicro are installed; elsewhere the benchmark says how
    to install them, exit 2, instead of a traceback."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(root)}  # no Rscript on it
    done = subprocess.run([sys.executable, "-m", "benchmarks", "sdcmicro"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "R and sdcMicro are not installed here; install them with sh ../shared/tools/sdcmicro/install.sh" in \
        done.stderr
