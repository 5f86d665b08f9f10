"""Her check and the release at 3,000 records, before and after the named intruder's work (issue 58, item 6).

    python -m benchmarks.kerckhoffs_pace [--before REV] [--json]

Each family releases the Adult sample the repository ships (experiments/data/adult_sample_3000.csv, the schema of
docs/examples/adult-one-sensitive.json: marital-status, race and sex quasi-identifiers, salary-class sensitive)
with the real ``publisher release`` (seed 1, 200 random-match samples), and one subject (the sample's first
record) runs the real ``verifier check`` on it: each a whole process, timed with its peak memory by
:func:`benchmarks.commands.measure`, then profiled for where its time goes. The same rows run on the code of
``--before`` (a git revision, default the last commit before issue 58's work), checked out apart and put first on
``PYTHONPATH``, so both sides read the same data on the same machine in the same run; ``--repeat`` timed runs of
each, the two sides alternating, and the median is shown.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.commands import measure

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
SCHEMA = ROOT / "docs" / "examples" / "adult-one-sensitive.json"
#: the last commit before issue 58's work
BEFORE = "44d6fb8"
FAMILIES = {
    "SD k-anonymity, k = 5": ["--method", "sd_k_anonymity", "--param", "k=5"],
    "two-step generalization": ["--method", "multi_sensitive_generalization", "--param", "alpha_qi=0.9",
                                "--param", "alpha_sa=0.8"],
    "randomized response, l = 2": ["--method", "randomized_response", "--param", "l=2"],
    "random replacement, k = 1": ["--method", "random_attribute_replacement", "--param", "k=1"],
}


def _subject(folder: Path) -> Path:
    import csv

    with SAMPLE.open() as f:
        first = next(csv.DictReader(f))
    names = [a["name"] for a in json.loads(SCHEMA.read_text())["attributes"]]
    path = folder / "me.json"
    path.write_text(json.dumps({n: first[n] for n in names}))
    return path


def _commands(folder: Path, me: Path) -> dict[str, dict[str, list[str]]]:
    """Each family's release and check, writing under ``folder``."""
    keys = folder / "keys"
    out = {}
    for name, argv in FAMILIES.items():
        release = folder / name.split(",")[0].replace(" ", "-")
        out[name] = {"release": ["publisher", "release", "--input", str(SAMPLE), "--schema", str(SCHEMA), *argv,
                                 "--seed", "1", "--samples", "200", "--key", str(keys / "private.pem"),
                                 "--dataset-id", "pace", "--out", str(release)],
                     "check": ["verifier", "check", str(release), "--key", str(keys / "public.pem"), "--record",
                               str(me)]}
    return out


def _fresh(argv: list[str]) -> None:
    """A release's output and the files beside it removed: a release never replaces one."""
    out = argv[argv.index("--out") + 1]
    subprocess.run(["rm", "-rf", out, f"{out}.protector.json", f"{out}.links.json"], check=True)


def _on(code: Path) -> None:
    os.environ["PYTHONPATH"] = str(code)


def run(before: str, repeat: int) -> dict:
    """``repeat`` timed runs of every command on each side, the sides alternating so that the machine's drift
    falls on both; then one profiled run of each command on this checkout for where its time goes."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old = tmp / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), before], check=True,
                       capture_output=True)
        try:
            sides = {"before": old, "now": ROOT}
            commands = {}
            for side, code in sides.items():
                work = tmp / f"out-{side}"
                work.mkdir()
                _on(code)
                subprocess.run([sys.executable, "-m", "publisher", "keygen", "--out", str(work / "keys"),
                                "--unencrypted"], check=True, capture_output=True)
                commands[side] = _commands(work, _subject(work))
            times = {side: {name: {c: [] for c in ("release", "check")} for name in FAMILIES} for side in sides}
            for _ in range(repeat):
                for side, code in sides.items():
                    _on(code)
                    for name in FAMILIES:
                        for command, argv in commands[side][name].items():
                            if command == "release":
                                _fresh(argv)
                            times[side][name][command].append(measure(argv, tmp, "timed", profile=False))
            _on(ROOT)
            phases = {}
            for name in FAMILIES:
                phases[name] = {}
                for command, argv in commands["now"][name].items():
                    if command == "release":
                        _fresh(argv)
                    label = f"{command}-{name.split(',')[0].replace(' ', '-')}"
                    phases[name][command] = measure(argv, tmp, label)["phases"]
            return {"before": before, "repeat": repeat, "times": times, "phases": phases}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=True)


def _median(runs: list[dict], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kerckhoffs_pace", description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"the git revision to compare with (default {BEFORE})")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each command on each side (default 5)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)
    result = run(args.before, args.repeat)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"| family | command | before s (median of {args.repeat}) | now s | before MB | now MB | where the time "
          "goes now (profiled, s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in FAMILIES:
        for command in ("release", "check"):
            b, n = result["times"]["before"][name][command], result["times"]["now"][name][command]
            top = sorted(result["phases"][name][command].items(), key=lambda kv: -kv[1])[:4]
            where = ", ".join(f"{k} {v:.2f}" for k, v in top) or "-"
            print(f"| {name} | {command} | {_median(b, 'seconds'):.2f} | {_median(n, 'seconds'):.2f} | "
                  f"{_median(b, 'peak_mb'):.0f} | {_median(n, 'peak_mb'):.0f} | {where} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
