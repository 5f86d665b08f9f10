"""``python -m experiments all --quick``: every paper's experiment reruns on small samples (issue 17, item 3).

The quick run uses the Adult sample shipped in experiments/data, so it runs
on a fresh clone; it must stay under two minutes in total. The figures the
experiments are sure of are asserted: paper 003's Tables 5 and 6 are
computed exactly on the shipped running example.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_experiment_runs_quickly_and_writes_its_pages(tmp_path):
    out = tmp_path / "experiments"
    done = subprocess.run([sys.executable, "-m", "experiments", "all", "--quick", "--json", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = {r["name"]: r for r in json.loads(done.stdout)}
    assert set(runs) == {"paper000", "paper003"}
    for name, run in runs.items():
        assert run["quick"] is True and run["comparisons"], name
        assert all(c["verdict"] in ("reproduced", "reproduced in trend", "differs") and c["reason"]
                   for c in run["comparisons"])
        page = (out / f"{name}.md").read_text()
        assert "## The paper beside ours" in page and all((out / f).stat().st_size > 1000 for f in run["figures"])
    verdicts = {c["figure"]: c for c in runs["paper003"]["comparisons"]}
    assert verdicts["Table 5, match sets and distances of the 20 records"]["verdict"] == "reproduced"
    assert verdicts["Table 6, random records (all 8,000 combinations, exact)"]["verdict"] == "reproduced"
    counts = verdicts["Table 5, correct / multiple / misidentified links"]
    assert (counts["paper"], counts["ours"], counts["verdict"]) == ("5 / 4 / 11", "6 / 3 / 11", "differs")
    summary = (tmp_path / "experiments.md").read_text()
    assert "(experiments/paper000.md)" in summary and "(experiments/paper003.md)" in summary
