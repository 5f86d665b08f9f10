"""A new user's first hour (issue 28): output that fits 80 columns, a fast --help, a first run that compiles
nothing it does not need."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ADULT, PAPER, adult_schema
from verifier.frontend.output import ELLIPSIS, FittedStream, command_lines, text_table

ORIGINAL, MASKED = PAPER / "original.csv", PAPER / "masked.csv"


def _run(tool: str, *argv: str, columns: str | None = "80", cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    proc = subprocess.run([sys.executable, "-m", tool, *argv], capture_output=True, text=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


# ----------------------------------------------------------------------------- 80 columns


def test_every_command_of_the_demo_fits_80_columns():
    """The demo runs keygen, release, verify, audit, replay and check as a user types them; with COLUMNS=80 each
    step's command line and output fit (they were up to 355 characters wide). Its folder is a short one, as the
    demo's own temporary folder is: a path longer than a line cannot be cut."""
    with tempfile.TemporaryDirectory(prefix="pp-demo-", dir="/tmp") as folder:
        proc = _run("publisher", "demo", "--out", str(Path(folder) / "demo"))
    assert _widest(proc.stdout) <= 80 and _widest(proc.stderr) <= 80
    out = proc.stdout
    for step in ("keygen", "release", "verify", "audit", "replay", "check"):
        assert f"$ {'publisher' if step in ('keygen', 'release', 'replay') else 'verifier'} {step} " in out
    assert "reidentification.expected_reidentifications" in out  # the audit's longest claim, whole
    assert " \\\n    --key " in out  # a long command continues on the next line, as a shell reads it
    audit = out.split("$ verifier audit ")[1].split("$ publisher replay ")[0]
    assert ELLIPSIS not in audit  # issue 37: a long value was cut in the table ("the table i…"); it is whole below it
    assert 'reidentification.population (true): "the table itself (no sampling weights)"' in " ".join(audit.split())


def test_the_other_commands_fit_80_columns(tmp_path):
    for tool, argv in (
        ("verifier", ["distance", "--original", str(ORIGINAL), "--anonymized", str(MASKED)]),
        ("verifier", ["intruder", "--original", str(ORIGINAL), "--anonymized", str(MASKED)]),
        ("verifier", ["reverse-map", "--original", str(ORIGINAL), "--anonymized", str(MASKED), "--out",
                      str(tmp_path / "z.csv")]),
        ("publisher", ["assess", "--original", str(ORIGINAL), "--anonymized", str(MASKED)]),
        ("publisher", ["calibrate", "--input", str(ORIGINAL), "--method", "additive_noise", "--param-grid",
                       "relative_sd=0.1,0.5", "--seed", "1"]),
    ):
        proc = _run(tool, *argv)
        assert _widest(proc.stdout) <= 80, (argv[0], proc.stdout)


def test_a_drafted_schema_is_summed_up_one_role_per_line_fitted_to_the_terminal(tmp_path):
    """Issue 37: publisher schema summed up the Adult sample's 15 columns in one line of 403 characters, on stderr
    where nothing fits it to the terminal."""
    proc = _run("publisher", "schema", "--input", str(ADULT), "--sensitive", "salary-class", "--other", "fnlwgt",
                "--missing", "category", "--out", "s.json", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0] == "wrote s.json: 15 columns"
    assert lines[-1] == "review the kinds, roles and category orders before you publish it"
    assert lines[1] == "  quasi-identifiers: age (numeric), workclass (nominal), education (nominal),"
    assert _widest(proc.stdout) <= 80 and "native-country (nominal)" in " ".join(proc.stdout.split())
    assert [line for line in lines if not line.startswith("    ")][-3:-1] == ["  sensitive: salary-class (nominal)",
                                                                            "  other columns: fnlwgt (numeric)"]
    assert "wrote" not in proc.stderr and json.loads((tmp_path / "s.json").read_text())["attributes"][0]["name"] == "age"


def test_a_fifteen_attribute_check_fits_80_columns(tmp_path):
    """Her match table on a 15-attribute Adult release was over 200 characters: it now goes below itself in
    blocks, each led by the match column, and every attribute is still shown."""
    schema = adult_schema(tmp_path)
    _run("publisher", "keygen", "--out", str(tmp_path / "keys"), "--unencrypted")
    _run("publisher", "release", "--input", str(ADULT), "--schema", str(schema), "--method", "rank_swapping",
         "--param", "p=5", "--samples", "200", "--seed", "3", "--key", str(tmp_path / "keys" / "private.pem"),
         "--dataset-id", "adult", "--out", str(tmp_path / "release"))
    header, first = ADULT.read_text().splitlines()[:2]
    names = json.loads(schema.read_text())["attributes"]
    import csv

    row = dict(zip(next(csv.reader([header])), next(csv.reader([first]))))
    record = {a["name"]: (float(row[a["name"]]) if a["kind"] == "numeric" else row[a["name"]]) for a in names}
    (tmp_path / "me.json").write_text(json.dumps(record))
    proc = _run("verifier", "check", "release", "--key", "keys/public.pem", "--record", "me.json", "--samples", "200",
                cwd=tmp_path)  # short paths: the width measured is the table's, whatever the temporary folder's
    assert _widest(proc.stdout) <= 80
    assert all(f'dev "{a["name"]}"' in proc.stdout for a in names)


def test_piped_output_is_whole_lines_unless_columns_is_set(tmp_path):
    """Without a terminal and without COLUMNS, lines are not wrapped: scripts and grep see them whole."""
    proc = _run("verifier", "intruder", "--original", str(ORIGINAL), "--anonymized", str(MASKED), columns=None)
    assert _widest(proc.stdout) > 80
    assert _widest(_run("verifier", "intruder", "--original", str(ORIGINAL), "--anonymized", str(MASKED),
                        columns="60").stdout) <= 60


def test_json_is_never_wrapped(tmp_path):
    proc = _run("verifier", "intruder", "--original", str(ORIGINAL), "--anonymized", str(MASKED), "--json",
                columns="40")
    assert json.loads(proc.stdout)["n_records"] == 20


def test_a_table_cuts_long_cells_keeps_names_and_numbers_whole():
    rows = [["utility.attributes.x3.variance_anonymized", "39536.1106", "39536.1106", "true"],
            ["utility.correlation_original", "[[1.0000, 0.1496, -0.0910], [0.1496, 1.0000, -0.0360]]",
             "[[1.0000, 0.1496, -0.0910], [0.1496, 1.0000, -0.0360]]", "true"]]
    table = text_table(rows, ["claim", "manifest", "recomputed", "verdict"], width=80)
    lines = table.splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) == 4
    assert lines[2].startswith("utility.attributes.x3.variance_anonymized") and lines[2].count("39536.1106") == 2
    assert lines[3].count(ELLIPSIS) == 2 and lines[3].endswith("true")
    assert text_table(rows, ["claim", "manifest", "recomputed", "verdict"], width=None).count(ELLIPSIS) == 0


def test_a_table_too_wide_for_any_cut_goes_below_itself_in_blocks():
    header = ["match", *[f'dev "attribute-{k}"' for k in range(15)]]
    table = text_table([["7", *[str(k) for k in range(15)]]], header, width=80)
    blocks = table.split("\n\n")
    assert len(blocks) == 5 and all(b.startswith("match") and b.splitlines()[2].startswith("7") for b in blocks)
    assert max(map(len, table.splitlines())) <= 80
    assert [h for h in header[1:] if h not in table] == []


class _Sink:
    """A stream that keeps what is written to it in ``out``."""

    def __init__(self, out: list[str]):
        self.out = out

    def write(self, text: str) -> None:
        self.out.append(text)

    def flush(self) -> None:
        pass


def test_a_long_sentence_wraps_at_spaces_with_a_hanging_indent():
    out: list[str] = []
    stream = FittedStream(_Sink(out), 30)
    stream.write("  claims (permutation model): 20 records, D = 1, k = 1\nshort\n/a/very/long/path/" + "x" * 40)
    stream.flush()
    assert "".join(out).splitlines() == ["  claims (permutation model):", "    20 records, D = 1, k = 1", "short",
                                         "/a/very/long/path/" + "x" * 40]


def test_a_command_line_continues_as_a_shell_reads_it():
    words = ["verifier", "audit", "/tmp/a release", "--key", "/tmp/keys/public.pem", "--original", "/data/x.csv",
             "--report", "/tmp/audit.md"]
    text = command_lines(words, 40)
    assert text.splitlines() == ["$ verifier audit '/tmp/a release' \\", "    --key /tmp/keys/public.pem \\",
                                 "    --original /data/x.csv \\", "    --report /tmp/audit.md"]
    assert command_lines(words, None) == "$ verifier audit '/tmp/a release' --key /tmp/keys/public.pem " \
                                         "--original /data/x.csv --report /tmp/audit.md"


def test_a_command_with_a_path_longer_than_the_line_keeps_its_continuation_on_the_path_s_line():
    """Issue 60, item 7: the demo printed lines holding only ``\\`` on a terminal whose paths outgrew it: the
    command's continuation, cut from its path when the stdout wrapped the line. A path longer than the width stays
    whole, its continuation beside it."""
    out: list[str] = []
    long = "/home/someone/projects/permuted-privacy-demo-abcdefgh/release"
    stream = FittedStream(_Sink(out), 40)
    stream.write(command_lines(["verifier", "tui", long, "--key", long + "/public.pem"], 40) + "\n")
    stream.flush()
    lines = "".join(out).splitlines()
    assert lines == ["$ verifier tui \\", f"    {long} \\", "    --key \\", f"    {long}/public.pem"]
    assert not any(line.strip() == "\\" for line in lines)


# ----------------------------------------------------------------------------- no silent choices


def test_schema_refuses_missing_cells_unless_told_what_they_are(tmp_path, capsys):
    """``publisher schema`` made the category "" of missing cells without a word; now it names the column and rows,
    and says what works: --missing category, which lists each spelling as a category and says so."""
    from publisher.cli import main as publisher

    x = tmp_path / "x.csv"
    x.write_text("age,job\n30,b\n40,\n35,?\n50,b\n")
    out = tmp_path / "schema.json"
    capsys.readouterr()
    assert publisher(["schema", "--input", str(x), "--out", str(out)]) == 3
    err = capsys.readouterr().err.strip()
    assert err == (f"FAIL: {x}: VALUE_MISSING: column 'job', rows 2, 3: missing value ''; pass --missing category to "
                   "keep each missing spelling as a category of its own (the schema then lists it), or fill them "
                   "in before you draft the schema")
    assert not out.exists()
    assert publisher(["schema", "--input", str(x), "--missing", "category", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["attributes"][1] == {"name": "job", "kind": "nominal",
                                                            "role": "quasi_identifier", "categories": ["b", "", "?"]}
    assert "note: column 'job': 2 missing cells kept as the categories '', '?' (--missing category)" in \
        capsys.readouterr().err
    x.write_text("age,job\n30,b\nNA,a\n")  # a numeric column needs a number in every cell, whatever the policy
    assert publisher(["schema", "--input", str(x), "--missing", "category"]) == 3
    assert "column 'age', row 2: missing value 'NA'; its other cells are numbers" in capsys.readouterr().err


def _parts(folder: Path, x, cut: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    for k, (a, b) in enumerate(((0, cut), (cut, len(x)))):
        pq.write_table(pa.table({"a": x[a:b, 0], "b": x[a:b, 1]}), folder / f"part-{k}.parquet")
    return folder


def test_the_local_engine_reads_a_directory_of_parquet_parts_as_the_dask_engine_does(tmp_path):
    """It answered FILE_UNREADABLE: is a directory; now the parts are one table, in name order, by the rules of a
    partitioned release (regular files, no links)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from verifier.data.tables import read_table
    from verifier.errors import InvalidInputError

    x = np.random.default_rng(5).normal(size=(90, 2))
    parts = _parts(tmp_path / "y", x, 40)
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table({"a": x[:, 0], "b": x[:, 1]}), whole)
    assert read_table(parts).values.tobytes() == read_table(whole).values.tobytes()
    from_parts = json.loads(_run("verifier", "distance", "--original", str(whole), "--anonymized", str(parts),
                                 "--json").stdout)
    assert from_parts == json.loads(_run("verifier", "distance", "--original", str(whole), "--anonymized",
                                         str(whole), "--json").stdout)
    assert from_parts["dataset"]["distance"] == 0
    (parts / "part-2.parquet").symlink_to(whole)
    with pytest.raises(InvalidInputError) as info:
        read_table(parts)
    assert info.value.reason == "UNSAFE_PATH" and info.value.path == str(parts / "part-2.parquet")
    (parts / "part-2.parquet").unlink()
    pq.write_table(pa.table({"a": x[:3, 0], "c": x[:3, 1]}), parts / "part-2.parquet")
    with pytest.raises(InvalidInputError) as info:
        read_table(parts)
    assert info.value.reason == "PARQUET_MALFORMED" and "columns differ from the first part's" in info.value.message


# ----------------------------------------------------------------------------- notebook results


def test_every_result_has_a_short_rounded_repr_and_an_html_table(tmp_path):
    """issue 28, item 5: under 10 lines and 600 characters, figures rounded; a small HTML table in a notebook."""
    import pandas as pd

    import publisher
    import verifier
    from publisher.keys import keygen

    x = pd.read_csv(ORIGINAL)
    masked = publisher.anonymize(x, "additive_noise", relative_sd=0.3, seed=42)
    pp = verifier.permuted_privacy(x, masked.released)
    private, public, _, _ = keygen(tmp_path / "keys", None)
    out = publisher.release(x, "rank_swapping", p=10, then={"reverse_mapping": {}}, key=private, out=tmp_path / "r",
                            dataset_id="d", seed=4, allow_degenerate=True)
    release = verifier.open_release(out, public)
    results = {"Anonymized": masked, "PermutedPrivacy": pp, "DVPrivacyResult": pp.check(1, 0.0),
               "Intruder": verifier.intruder(x, masked.table, paired=True), "Release": release,
               "RecordCheck": verifier.check_record(release, record=x.iloc[0].to_dict())}
    for name, result in results.items():
        text = repr(result)
        assert text.startswith(name + "(") and len(text) <= 600 and text.count("\n") < 10, text
        assert not any(len(t.split(".")[1]) > 4 for t in re.findall(r"\d+\.\d+", text)), text  # rounded
        page = result._repr_html_()
        assert page.startswith("<table><caption>") and page.count("<tr>") >= 2, name
    assert "%" in repr(results["Intruder"]) and "1.0000" not in repr(results["DVPrivacyResult"])


# ----------------------------------------------------------------------------- errors that say what works

SAMPLE = Path(__file__).resolve().parents[1] / "experiments" / "data" / "adult_sample_3000.csv"
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def test_randomized_response_names_settings_that_meet_its_target(tmp_path, capsys):
    """The refusal lists settings found to meet l on this table; each one it lists then runs."""
    from publisher.cli import main as publisher

    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    base = ["release", "--input", str(SAMPLE), "--schema", str(EXAMPLES / "adult-one-sensitive.json"), "--method",
            "randomized_response", "--param", "l=2", "--key", str(tmp_path / "keys" / "private.pem"),
            "--dataset-id", "rr", "--allow-degenerate", "--seed", "3"]
    capsys.readouterr()
    assert publisher([*base, "--param", "attributes=salary-class", "--out", str(tmp_path / "r0")]) == 3
    err = capsys.readouterr().err
    assert "METHOD_NOT_APPLICABLE" in err and "the schema's categorical ones are marital-status, race, sex" in err
    settings = re.findall(r"attributes=([\w,-]+) scope=(\w+)", err.split("is met with: ")[1])
    assert settings and ("salary-class,sex", "both") in settings
    for k, (attributes, scope) in enumerate(settings):
        assert publisher([*base, "--param", f"attributes={attributes}", "--param", f"scope={scope}", "--out",
                          str(tmp_path / f"r{k + 1}")]) == 0, capsys.readouterr().err


def test_two_step_generalization_names_the_fewest_of_a_class(tmp_path, capsys):
    """Step one reads the quasi-identifiers alone (issue 58): a class holds at least k and 1/alpha_qi rows, so a
    table with fewer rows than k is refused and says so; with k its size, one class of every record, every
    quasi-identifier '*', tells nothing and says so."""
    from publisher.cli import main as publisher

    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    base = ["release", "--input", str(SAMPLE), "--schema", str(EXAMPLES / "adult-two-sensitive.json"), "--method",
            "multi_sensitive_generalization", "--param", "alpha_sa=0.5", "--param", "alpha_qi=0.5", "--key",
            str(tmp_path / "keys" / "private.pem"), "--dataset-id", "md", "--allow-degenerate"]
    capsys.readouterr()
    assert publisher([*base, "--param", "k=3001", "--out", str(tmp_path / "a")]) == 3
    err = capsys.readouterr().err
    assert "TARGET_INFEASIBLE: multi_sensitive_generalization: the table has fewer than 3001 records, the fewest " \
        "of a class" in err and not (tmp_path / "a").exists()
    assert publisher([*base, "--param", "k=3000", "--out", str(tmp_path / "c")]) == 3
    assert "OUTPUT_UNINFORMATIVE: this release tells nothing: all 3000 records fall in one class" in \
        capsys.readouterr().err
    assert publisher([*base, "--param", "k=3000", "--allow-uninformative", "--out", str(tmp_path / "c")]) == 0
    # paper 002's alpha-QI step one, which reads the values, is not released
    assert publisher([*base, "--param", "step_one=alpha_qi", "--out", str(tmp_path / "d")]) == 3
    assert "PARAMETER_INVALID" in capsys.readouterr().err and not (tmp_path / "d").exists()


@pytest.mark.parametrize("extra, words", [
    (["--method", "rank_swapping", "--param", "p=5", "--param", "q=1"],
     "rank_swapping has no parameter 'q' (their parameters: attributes, p)"),
    (["--method", "rank_swapping", "--param", "p=5", "--param", "attributes=x9"],
     "rank_swapping: attribute 'x9' is not in the table (those it can change: x1, x2, x3)"),
    (["--method", "sd_k_anonymity", "--param", "k=3", "--schema", "OTHERS"],
     "sd_k_anonymity needs quasi-identifiers, and the schema marks none: give the columns an attacker could know "
     "the role quasi_identifier"),
    (["--method", "multi_sensitive_generalization", "--schema", "NUMERIC_SENSITIVE"],
     "x3 is numeric: bin it into categories, or give the role other"),
])
def test_a_refused_parameter_or_method_names_what_works(tmp_path, capsys, extra, words):
    from publisher.cli import main as publisher

    schemas = {"OTHERS": [("x1", "other"), ("x2", "other"), ("x3", "other")],
               "NUMERIC_SENSITIVE": [("x1", "quasi_identifier"), ("x2", "quasi_identifier"), ("x3", "sensitive")]}
    for name, roles in schemas.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({"attributes": [
            {"name": n, "kind": "numeric", "role": r} for n, r in roles]}))
    extra = [str(tmp_path / f"{e}.json") if e in schemas else e for e in extra]
    capsys.readouterr()
    code = publisher(["anonymize", "--input", str(ORIGINAL), *extra, "--out", str(tmp_path / "y.csv")])
    err = capsys.readouterr().err
    assert code == 3 and len(err.strip().splitlines()) == 1 and words in err, err


# ----------------------------------------------------------------------------- cold start


def test_a_first_check_says_it_prepares_the_kernels(tmp_path):
    """On a fresh install (numba's cache empty) a check of a release above PLAIN_BELOW says, on a terminal, that
    it is preparing the search kernels; warm, it does not. stderr is a real pseudo-terminal here."""
    import pty

    import numpy as np

    from publisher.cli import main as publisher

    from verifier.compiling import PLAIN_BELOW

    x = np.random.default_rng(2).normal(size=(PLAIN_BELOW + 952, 3)) * [10, 100, 1000]
    np.savetxt(tmp_path / "x.csv", x, delimiter=",", header="a,b,c", comments="", fmt="%.4f")
    assert publisher(["keygen", "--out", str(tmp_path / "keys"), "--unencrypted"]) == 0
    assert publisher(["release", "--input", str(tmp_path / "x.csv"), "--method", "additive_noise", "--param",
                      "relative_sd=0.8", "--then", "reverse_mapping", "--seed", "4", "--key", str(tmp_path / "keys" / "private.pem"),
                      "--dataset-id", "d", "--out", str(tmp_path / "release")]) == 0
    (tmp_path / "me.json").write_text(json.dumps(dict(zip("abc", x[0].round(4).tolist()))))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")

    def run() -> str:
        leader, follower = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "verifier", "check", str(tmp_path / "release"), "--key",
                                 str(tmp_path / "keys" / "public.pem"), "--record", str(tmp_path / "me.json"),
                                 "--samples", "500"], stdout=subprocess.DEVNULL, stderr=follower,
                                stdin=subprocess.DEVNULL, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        os.close(leader)
        assert proc.wait(timeout=120) == 0
        return b"".join(chunks).decode(errors="replace")

    assert "preparing the search kernels for this machine" in run()
    assert "preparing the search kernels" not in run()


def test_a_fresh_install_says_the_methods_kernels_compile_while_it_anonymizes(tmp_path):
    """Issue 37: a first MDAV release sat 20 s on "anonymizing" with nothing to say why. With numba's cache empty
    the phase names the methods whose kernels compile; once compiled (here rank swapping's, on a tiny table), it
    is plain "anonymizing" again."""
    script = (
        "import numpy as np, pandas as pd\n"
        "from publisher.methods import anonymize, anonymizing_label, make_method\n"
        "from verifier.data.schema import Schema\n"
        "chain = [make_method('rank_swapping', {'p': '10'}), make_method('microaggregation', {'k': '3'})]\n"
        "print(anonymizing_label(chain))\n"
        "x = pd.DataFrame({'a': np.arange(20.0)})\n"
        "anonymize(x, Schema.all_numeric(['a']), chain[:1], random_state=1)\n"
        "print(anonymizing_label(chain[:1]))\n"
        "print(anonymizing_label(chain))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "anonymizing (compiling rank_swapping and microaggregation for this machine: once after installing, up to "
        "a minute; later runs load it)",
        "anonymizing",
        "anonymizing (compiling microaggregation for this machine: once after installing, up to a minute; later "
        "runs load it)"]


def test_a_columns_no_ascii_digit_writes_is_no_width(monkeypatch):
    """COLUMNS=² (a digit to str.isdigit, not to int) was a ValueError in every command; it is ignored."""
    from verifier.frontend import output_width

    monkeypatch.setenv("COLUMNS", "\u00b2")
    monkeypatch.setattr("sys.__stdout__", None)  # no terminal either: whole lines
    assert output_width() is None
    monkeypatch.setenv("COLUMNS", "100")
    assert output_width() == 100
