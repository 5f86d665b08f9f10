"""The command-line contract of SPEC section 10: help, exit codes, one-line failures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import write
from publisher.cli import main as publisher_main
from verifier.cli import main


@pytest.mark.parametrize("argv", [["--help"], ["reverse-map", "--help"], ["distance", "--help"], ["intruder", "--help"], ["verify", "--help"], ["audit", "--help"],
                                  ["demo", "--help"]])
def test_verifier_help(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    assert "usage: verifier" in capsys.readouterr().out


def test_usage_error_is_exit_2(capsys, paper_paths):
    with pytest.raises(SystemExit) as info:
        main(["distance", "--original", str(paper_paths["original"])])
    assert info.value.code == 2
    code = main(["distance", "--original", str(paper_paths["original"]), "--anonymized",
                 str(paper_paths["masked"]), "--record", "21"])
    assert code == 2 and "FAIL:" in capsys.readouterr().err
    code = main(["distance", "--original", str(paper_paths["original"]), "--anonymized",
                 str(paper_paths["masked"]), "--d", "1"])
    assert code == 2 and "--d and --v go together" in capsys.readouterr().err


def test_reverse_map_refuses_to_overwrite_an_input(paper_paths, tmp_path, capsys):
    x = write(tmp_path / "x.csv", paper_paths["original"].read_bytes())
    before = x.read_bytes()
    code = main(["reverse-map", "--original", str(x), "--anonymized", str(paper_paths["masked"]), "--out", str(x)])
    assert code == 2 and "would overwrite" in capsys.readouterr().err
    assert x.read_bytes() == before


def test_unwritable_output_is_exit_4_and_leaves_nothing(paper_paths, tmp_path, capsys):
    out = tmp_path / "missing-dir" / "z.csv"
    code = main(["reverse-map", "--original", str(paper_paths["original"]), "--anonymized",
                 str(paper_paths["masked"]), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 4 and "WRITE_FAILED" in err and len(err.strip().splitlines()) == 1
    assert not out.parent.exists()


def test_verbose_shows_the_traceback(tmp_path):
    with pytest.raises(Exception, match="no such file"):
        main(["-v", "distance", "--original", str(tmp_path / "nope.csv"), "--anonymized", str(tmp_path / "y.csv")])


def test_console_scripts_run(paper_paths, tmp_path):
    out = tmp_path / "z.csv"
    proc = subprocess.run([sys.executable, "-m", "verifier", "reverse-map", "--original", str(paper_paths["original"]),
                           "--anonymized", str(paper_paths["masked"]), "--out", str(out), "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert [a["rank_correlation"] for a in json.loads(proc.stdout)["attributes"]] == pytest.approx(
        [0.7218, 0.8436, 0.7759], abs=1e-4)
    proc = subprocess.run([sys.executable, "-m", "publisher", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "schema" in proc.stdout


def test_demo_runs_end_to_end(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "permutation distance d = 4" in out and "HOLDS" in out
    assert "Confidently linked records (p-value < 0.01): 0 of 20" in out
    assert (tmp_path / "reverse_mapped.csv").exists()


def test_publisher_schema_drafts_kinds_and_orders(tmp_path, capsys):
    x = write(tmp_path / "x.csv", "age,job,disease\n30,b,flu\n40,a,flu\n35,b,cold\n")
    out = tmp_path / "schema.json"
    assert publisher_main(["schema", "--input", str(x), "--sensitive", "disease", "--out", str(out)]) == 0
    schema = json.loads(out.read_text())
    assert schema == {"attributes": [
        {"name": "age", "kind": "numeric", "role": "quasi_identifier"},
        {"name": "job", "kind": "nominal", "role": "quasi_identifier", "categories": ["b", "a"]},
        {"name": "disease", "kind": "nominal", "role": "sensitive", "categories": ["flu", "cold"]},
    ]}
    # never overwrites without --force
    assert publisher_main(["schema", "--input", str(x), "--out", str(out)]) == 4
    assert "OUTPUT_EXISTS" in capsys.readouterr().err
    assert publisher_main(["schema", "--input", str(x), "--sensitive", "nope"]) == 3


def test_publisher_schema_unwritable_output_is_exit_4(tmp_path, capsys):
    x = write(tmp_path / "x.csv", "age\n30\n")
    out = tmp_path / "missing-dir" / "schema.json"
    assert publisher_main(["schema", "--input", str(x), "--out", str(out)]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"FAIL: {out}: WRITE_FAILED: ") and len(err.strip().splitlines()) == 1
    assert not out.parent.exists()


def test_progress_bar_draws_only_on_a_terminal():
    import io

    from verifier.frontend import ProgressBar

    silent = io.StringIO()  # not a terminal: nothing is drawn
    ProgressBar("work", silent)(1, 2)
    assert silent.getvalue() == ""
    shown = io.StringIO()
    bar = ProgressBar("work", shown, force=True)  # rich.progress, drawn as on a terminal
    bar(0, 4)
    bar(4, 4)
    drawn = shown.getvalue()
    assert "work" in drawn and "100%" in drawn and "0%" in drawn
    # the finished bar is closed: a new line, and the cursor rich hid is shown again
    assert drawn.endswith("\n\x1b[?25h") and "\x1b[?25l" in drawn


def test_outputs_get_the_usual_permissions(paper_paths, tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        out = tmp_path / "z.csv"
        assert main(["reverse-map", "--original", str(paper_paths["original"]), "--anonymized",
                     str(paper_paths["masked"]), "--out", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


@pytest.mark.parametrize("command", ["anonymize", "assess", "calibrate", "schema", "keygen", "release", "demo"])
def test_publisher_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        publisher_main([command, "--help"])
    assert info.value.code == 0
    assert f"usage: publisher {command}" in capsys.readouterr().out


def test_publisher_demo_releases_verifies_audits_and_checks_a_record(tmp_path, capsys):
    assert publisher_main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"OK: {tmp_path / 'release'}" in out
    assert "FALSE" not in out and "Your p-value F_rand(" in out
    assert sorted(p.name for p in (tmp_path / "release").iterdir()) == ["manifest.dsse.json", "manifest.json", "release.csv"]
    assert (tmp_path / "audit.md").exists()
    assert "Your record is " in out and "Your p-value F_rand(" in out
    tui = out.rstrip().splitlines()[-1]
    assert tui.startswith("$ ") and tui.endswith(f"tui {tmp_path / 'release'} --key {tmp_path / 'keys' / 'public.pem'} "
                                                 f"--record {tmp_path / 'my_record.json'}")
    # refuses a folder that is not empty
    assert publisher_main(["demo", "--out", str(tmp_path)]) == 4
