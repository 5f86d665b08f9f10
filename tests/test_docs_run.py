"""Docs that run (issue 28, item 4): every shell block of README.md and docs/*.md runs, and its shown output is
what the commands print.

The blocks of a file run in order, from a scratch folder that holds what the
repository root holds for them (the Adult sample in ``experiments/data/``,
the schemas of ``docs/examples/`` and sdcMicro's outputs in
``tests/data/sdcmicro/``), so that one block's keys and releases serve the
next. A ``sh`` block's commands must each exit 0. A ``console``
block gives commands (``$ ...``) and what they print: each shown line must
appear, in order, in the command's output (``...`` stands for lines left
out), and a command whose shown output has a ``FAIL:`` line must fail.
Synopses (``[--option]``) are ``text`` blocks, never run. The few blocks that
cannot run here are listed below with the reason; the listing is checked, so
a block that goes stays out of it. Python blocks are docs/api.md's, run as
doctests by tests/test_api.py, and scale.md's cluster script.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)

#: blocks that do not run here, by file and first line, with the reason
NOT_RUN = {
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/publisher demo"):
        "it installs the project into a new environment; the demo it ends with runs in tests/test_cli.py",
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -q '.[test]' && PATH=\"$PWD/.venv/bin:$PATH\" "
                  "python -m pytest -q -p no:cacheprovider -n auto --dist loadfile"):
        "it is this test suite: .ci/run runs it on a fresh clone",
    ("README.md", ".venv/bin/verifier tui DEMO_DIR/release --key DEMO_DIR/keys/public.pem --record "
                  "DEMO_DIR/my_record.json"): "the TUI needs a terminal; tests/test_tui.py drives it with Textual's pilot",
    ("performance.md", "python -m benchmarks            # full sizes (about 3 minutes)"):
        "the benchmarks take minutes; docs/performance.md records what they measured",
    ("release-format.md", "check-jsonschema --schemafile docs/manifest.schema.json RELEASE/manifest.json"):
        "check-jsonschema is not a dependency; tests/test_manifest_schema.py validates releases with the same schema",
    ("release-format.md", "#!/usr/bin/env bash"):
        "a listing of docs/verify-by-hand.sh, which tests/test_verify_by_hand.py runs and holds to this copy",
    ("scale.md", "pip install 'permuted-privacy[dask]'"):
        "it needs a census-sized table in Parquet parts; tests/test_distributed.py runs the same commands on small ones",
    ("scale.md", "verifier distance --original /shared/census/x/ --anonymized /shared/census/y/ \\"):
        "it needs a running Dask scheduler at that address",
    ("scale.md", "# cluster.py: 16 workers of 8 GB, one Slurm job each"): "it needs a Slurm cluster",
}


def _blocks() -> list[tuple[Path, int, str, str]]:
    out = []
    for path in FILES:
        text = path.read_text()
        for m in FENCE.finditer(text):
            out.append((path, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)))
    return out


BLOCKS = _blocks()


def _key(path: Path, body: str) -> tuple[str, str]:
    return path.name, body.splitlines()[0] if body.strip() else ""


def _commands(body: str) -> list[str]:
    """The commands of a ``sh`` block, lines ending in a backslash joined."""
    return [c for c in re.sub(r"\\\n\s*", "", body).splitlines() if c.strip() and not c.lstrip().startswith("#")]


def _console(body: str) -> list[tuple[str, list[str]]]:
    """``(command, shown lines)`` of a ``console`` block."""
    out: list[tuple[str, list[str]]] = []
    for line in re.sub(r"\\\n\s*", "", body).splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out and line.strip():
            out[-1][1].append(line.strip())
    return out


def _scratch(tmp_path: Path) -> Path:
    (tmp_path / "experiments" / "data").mkdir(parents=True)
    shutil.copy(ROOT / "experiments" / "data" / "adult_sample_3000.csv", tmp_path / "experiments" / "data")
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")
    shutil.copytree(ROOT / "tests" / "data" / "sdcmicro", tmp_path / "tests" / "data" / "sdcmicro")
    return tmp_path


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # whole lines, as a pipe gets them
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def _shown_in(shown: list[str], printed: str) -> bool:
    """Every shown line in the printed lines, in order; ``...`` skips any number of lines."""
    lines = [line.strip() for line in printed.splitlines()]
    at = 0
    for want in shown:
        if want == "...":
            continue
        try:
            at = lines.index(want, at) + 1
        except ValueError:
            return False
    return True


RUNNABLE = sorted({p for p, _, lang, body in BLOCKS if lang in ("sh", "console") and _key(p, body) not in NOT_RUN})


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.name)
def test_the_shell_blocks_run_and_print_what_they_show(path, tmp_path):
    cwd = _scratch(tmp_path)
    for _, line, lang, body in (b for b in BLOCKS if b[0] == path):
        if lang not in ("sh", "console") or _key(path, body) in NOT_RUN:
            continue
        if lang == "sh":
            for command in _commands(body):
                proc = _run(command, cwd)
                assert proc.returncode == 0, f"{path.name}:{line}: {command}\n{proc.stderr}"
            continue
        for command, shown in _console(body):
            proc = _run(command, cwd)
            printed = proc.stdout + proc.stderr
            failing = any(s.startswith("FAIL:") for s in shown)
            assert (proc.returncode != 0) == failing, f"{path.name}:{line}: {command}\n{printed}"
            assert _shown_in(shown, printed), f"{path.name}:{line}: {command} printed\n{printed}\nnot\n{shown}"


def test_every_block_is_run_text_or_listed_with_a_reason():
    kinds = {}
    for path, line, lang, body in BLOCKS:
        kinds.setdefault(lang, []).append(f"{path.name}:{line}")
        if lang == "python":
            assert path.name == "api.md" or _key(path, body) in NOT_RUN, f"{path.name}:{line}"
    assert set(kinds) <= {"sh", "console", "text", "python", "json", "yaml", "bash", ""}, kinds
    present = {_key(p, body) for p, _, _, body in BLOCKS}
    assert [k for k in NOT_RUN if k not in present] == []  # a listed block that went must leave the list
    assert len(RUNNABLE) >= 2 and ROOT / "docs" / "methods.md" in RUNNABLE
