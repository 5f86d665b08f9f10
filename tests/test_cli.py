"""The command-line contract of SPEC section 10: help, exit codes, one-line failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
    assert main(["distance", "--original", str(paper_paths["original"])]) == 2  # argparse's error, one FAIL line
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("FAIL: -: USAGE: verifier distance: the following arguments are "
                                                    "required: --anonymized (see verifier distance --help)"), err
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
    assert code == 4 and "OUTPUT_FOLDER_MISSING" in err and len(err.strip().splitlines()) == 1  # before any work
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
    assert err.startswith(f"FAIL: {out}: OUTPUT_FOLDER_MISSING: ") and len(err.strip().splitlines()) == 1
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


def test_phases_show_a_spinner_and_the_time_of_those_over_a_second():
    import io
    import time

    import pytest as _pytest

    from verifier.frontend import Phases

    silent = io.StringIO()
    phases = Phases(silent)
    with phases("reading x.csv"):
        pass
    assert silent.getvalue() == "" and "reading x.csv" in phases.seconds
    shown = io.StringIO()
    phases = Phases(shown, force=True, min_seconds=0.05)
    with phases("quick"):
        pass
    with phases("ranking the anonymized records"):
        time.sleep(0.1)
    with _pytest.raises(ValueError):
        with phases("failing"):
            raise ValueError("the FAIL line says it")
    drawn = shown.getvalue()
    assert "quick" in drawn and "quick:" not in drawn  # the spinner only: it took under min_seconds
    assert "ranking the anonymized records: 0.1 s" in drawn
    assert "failing" in drawn and "failing:" not in drawn
    assert phases.seconds["ranking the anonymized records"] >= 0.1


def test_off_a_terminal_a_long_phase_says_it_is_still_running_and_how_long_it_took():
    """Issue 37: piped, a 70 s release printed nothing until it ended. Off a terminal a phase past piped_after
    says so once, then its time; a quick one stays silent, and one that fails adds nothing to its FAIL line."""
    import io
    import time

    from verifier.frontend import Phases

    log = io.StringIO()
    phases = Phases(log, piped_after=0.2)
    with phases("reading x.csv"):
        pass
    assert log.getvalue() == ""
    with phases("anonymizing"):
        time.sleep(0.6)
    lines = log.getvalue().splitlines()
    assert lines[0] == "anonymizing: still running after 0.2 s"
    assert len(lines) == 2 and 0.6 <= float(lines[1].removeprefix("anonymizing: done in ").removesuffix(" s")) < 5
    log.truncate(0), log.seek(0)
    with pytest.raises(ValueError):
        with phases("failing"):
            time.sleep(0.4)
            raise ValueError("the FAIL line says it")
    assert log.getvalue() == "failing: still running after 0.2 s\n"


def test_a_command_on_a_terminal_shows_its_phases(paper_paths, tmp_path):
    import os
    import pty
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    # the output named relative to the command's folder: a phase line longer than the terminal would wrap
    proc = subprocess.Popen([sys.executable, "-m", "verifier", "distance", "--original", str(paper_paths["original"]),
                             "--anonymized", str(paper_paths["masked"]), "--out", "d.csv", "--json"],
                            stdout=subprocess.PIPE, stderr=secondary, stdin=subprocess.DEVNULL, cwd=tmp_path)
    os.close(secondary)
    drawn = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        drawn += chunk
    out, _ = proc.communicate()
    os.close(primary)
    assert proc.returncode == 0 and out.startswith(b"{")  # stdout stays clean JSON
    text = drawn.decode(errors="replace")
    for label in ("reading ", "ranking the anonymized records", "writing d.csv"):
        assert label in text


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
    assert sorted(p.name for p in (tmp_path / "release").iterdir()) == ["datapackage.json", "manifest.dsse.json", "manifest.json", "release.csv"]
    assert (tmp_path / "audit.md").exists()
    assert "replayed additive_noise then reverse_mapping 30 times" in out and "Verdict: inconclusive" in out  # 20 records
    assert "Your record is " in out and "Your p-value F_rand(" in out
    tui = out.rstrip().splitlines()[-1]
    assert tui.startswith("$ ") and tui.endswith(f"tui {tmp_path / 'release'} --key {tmp_path / 'keys' / 'public.pem'} "
                                                 f"--record {tmp_path / 'my_record.json'}")
    # refuses a folder that is not empty
    assert publisher_main(["demo", "--out", str(tmp_path)]) == 4


# ----------------------------------------------------------------------------- paper cuts (issue 12, item 7)

GOLDEN_DIR = Path(__file__).parent / "data" / "golden"


@pytest.mark.parametrize("command", ["anonymize", "release", "calibrate"])
def test_method_help_lists_every_method(command, capsys):
    from publisher.methods import METHODS

    with pytest.raises(SystemExit):
        publisher_main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help text
    missing = [name for name in METHODS if name not in text]
    assert len(METHODS) == 9 and missing == []


def _check_record(record: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verifier", "check", str(GOLDEN_DIR / "release"), "--key",
                           str(GOLDEN_DIR / "public.pem"), "--record", record, "--no-random-match"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_device_as_record_file_is_refused_not_read_forever():
    proc = _check_record("/dev/zero")
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip() == ("FAIL: /dev/zero: RECORD_FILE_NOT_REGULAR: is a device, not a record file; "
                                   "give a regular file")


def test_a_pipe_as_record_file_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "record.json"
    os.mkfifo(fifo)
    proc = _check_record(str(fifo))
    assert proc.returncode == 3 and "RECORD_FILE_NOT_REGULAR" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_oversized_record_file_is_refused_with_its_size(tmp_path):
    from verifier.releases.record import MAX_RECORD_BYTES

    big = tmp_path / "me.json"
    big.write_bytes(b'{"x1": 1, "x2": 2, "x3": 3}' + b" " * MAX_RECORD_BYTES)
    proc = _check_record(str(big))
    assert proc.returncode == 3
    assert f"RECORD_TOO_LARGE: holds {MAX_RECORD_BYTES + 27} bytes; a record file holds at most {MAX_RECORD_BYTES}" \
        in proc.stderr
    exact = tmp_path / "ok.json"  # at the limit it is read (and checked as a record)
    exact.write_bytes(b'{"x1": 100.87, "x2": 902.21, "x3": 5108.54}'.ljust(MAX_RECORD_BYTES))
    assert _check_record(str(exact)).returncode == 0


def test_verify_follows_a_link_to_a_release_directory(tmp_path, capsys):
    link = tmp_path / "latest"
    link.symlink_to((GOLDEN_DIR / "release").resolve(), target_is_directory=True)
    assert main(["verify", str(link), "--key", str(GOLDEN_DIR / "public.pem")]) == 0
    assert capsys.readouterr().out.startswith(f"OK: {link}\n")


@pytest.mark.parametrize("case, reason, sentence", [
    ("dangling", "FILE_MISSING", "is a link to {target}, which does not exist"),
    ("link to a file", "NOT_A_DIRECTORY", "is a link to {target}, which is a file, not a release directory"),
    ("file", "NOT_A_DIRECTORY", "is a file, not a release directory"),
    ("missing", "FILE_MISSING", "no such directory"),
])
def test_verify_says_why_a_path_is_no_release_directory(case, reason, sentence, tmp_path, capsys):
    target = tmp_path / "target"
    given = tmp_path / "given"
    if case == "dangling":
        given.symlink_to(target)
    elif case == "link to a file":
        target.write_text("x")
        given.symlink_to(target)
    elif case == "file":
        given.write_text("x")
    assert main(["verify", str(given), "--key", str(GOLDEN_DIR / "public.pem")]) == 1
    err = capsys.readouterr().err
    assert err == f"FAIL: {given}: {reason}: {sentence.format(target=target)}\n"


def test_a_closed_output_is_one_fail_line_not_a_traceback():
    """`verifier verify ... | head -0`: the reader is gone before the first line; the command says so and exits 4."""
    import subprocess
    import sys

    golden = Path(__file__).parent / "data" / "golden"
    proc = subprocess.Popen([sys.executable, "-m", "verifier", "verify", str(golden / "release"), "--key",
                             str(golden / "public.pem")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # closed long before the command has started up and written anything
    err = proc.stderr.read().decode()
    assert proc.wait() == 4
    assert err.strip() == "FAIL: -: OUTPUT_CLOSED: the output was closed before the command finished"
