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
