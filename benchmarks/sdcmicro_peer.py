"""sdcMicro as a peer (issue 61, item 2): the same table, the same parameters, the same run, beside this tool.

    python -m benchmarks.sdcmicro_peer [--rows N ...] [--json]

Where R and sdcMicro are installed (``sh ../shared/tools/sdcmicro/install.sh``, about 4 minutes as root; the
benchmark says so where they are not), each row times a whole process of each tool on one table, with its peak
memory (:mod:`benchmarks.commands`' runner): sdcMicro 5.8.1 through ``benchmarks/sdcmicro/peer.R`` (R's start
and the CSV's reading included; the step alone beside it, as ``system.time`` gives it), this tool through its
command line (Python's start and its imports included).

- ``measure_risk`` against ``publisher assess --generalized`` of the table against itself: the equivalence classes
  and the smallest class, which both compute alike;
- ``localSuppression(k = 5)`` against ``publisher anonymize --method sd_k_anonymity --param k=5``, the two tools'
  way to 5-anonymity; then sdcMicro's output read by this tool (:func:`verifier.attacks.suppression.matching_counts`,
  a suppressed cell matching any value): its smallest f_k is sdcMicro's;
- ``microaggregation(method = "mdav", aggr = 5)`` of the six numeric columns against ``publisher anonymize
  --method microaggregation --param k=5``: the groups of each;
- ``pram`` of education (pd = 0.8) against randomized response of education (keep 0.8): the share of values
  changed, which differ in meaning (sdcMicro's matrix moves a value to the others by their frequencies, mixed
  with alpha = 0.5; randomized response moves it to each other value alike), so the row shows both.

The table: experiments/data/adult_sample_3000.csv (shipped), or that sample drawn with replacement (seed 61) to
``--rows``; quasi-identifiers age, education, marital-status, race and sex, occupation sensitive.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.generalization_pace import _timed

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "experiments" / "data" / "adult_sample_3000.csv"
PEER = Path(__file__).resolve().parent / "sdcmicro" / "peer.R"
QIS = ("age", "education", "marital-status", "race", "sex")
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
INSTALL = "sh ../shared/tools/sdcmicro/install.sh (R from Debian's packages and sdcMicro 5.8.1; about 4 minutes, root)"


def sdcmicro_installed() -> bool:
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", 'quit(status = !requireNamespace("sdcMicro", quietly = TRUE))'],
                          capture_output=True).returncode == 0


def _table(n: int | None, folder: Path) -> Path:
    frame = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    if n is not None and n != len(frame):
        frame = frame.iloc[np.random.default_rng(61).integers(0, len(frame), n)].reset_index(drop=True)
    out = folder / f"adult-{len(frame)}.csv"
    frame[[*dict.fromkeys((*QIS, "occupation", *NUMERIC))]].to_csv(out, index=False)
    return out


def _schema(folder: Path, table: Path, name: str, numeric: bool) -> Path:
    out = folder / f"{name}.json"
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    attributes = ([{"name": c, "kind": "numeric", "role": "quasi_identifier"} for c in NUMERIC] if numeric else
                  [{"name": c, "kind": "nominal", "role": r, "categories": sorted(frame[c].unique())}
                   for c, r in [*[(q, "quasi_identifier") for q in QIS], ("occupation", "sensitive")]])
    out.write_text(json.dumps({"attributes": attributes}))
    return out


def _peer(step: str, table: Path, folder: Path, *extra: str) -> dict:
    figures = folder / f"peer-{step}.json"
    timed = _timed(["Rscript", str(PEER), step, str(table), str(figures), *extra])
    found = json.loads(figures.read_text())
    return {**timed, "step_seconds": round(found.pop("seconds"), 2),
            **{k: v for k, v in found.items() if k not in ("step", "n")}}


def _ours(folder: Path, *argv: str) -> dict:
    return _timed([sys.executable, "-m", "publisher", *argv])


def run(n: int | None, folder: Path) -> dict:
    from verifier.attacks.classes import read_published
    from verifier.attacks.suppression import matching_counts
    from verifier.data.schema import Schema

    table = _table(n, folder)
    keys = ["keys=" + ",".join(QIS), "sens=occupation"]
    categorical, numeric = _schema(folder, table, "categorical", False), _schema(folder, table, "numeric", True)
    rows = {}
    assessed = folder / "assess.json"
    ours = _ours(folder, "assess", "--original", str(table), "--anonymized", str(table), "--schema", str(categorical),
                 "--generalized", "--json")
    subprocess.run([sys.executable, "-m", "publisher", "assess", "--original", str(table), "--anonymized", str(table),
                    "--schema", str(categorical), "--generalized", "--json"], check=True,
                   stdout=assessed.open("w"))
    found = json.loads(assessed.read_text())
    rows["measure_risk"] = {"sdcmicro": _peer("measure_risk", table, folder, *keys),
                            "ours": {**ours, "classes": found.get("classes"), "k": found.get("k")}}
    written = folder / "suppressed.csv"
    theirs = _peer("local_suppression", table, folder, *keys, "write=" + str(written))
    frame = pd.read_csv(written, dtype=str, keep_default_na=False).replace("NA", "*")
    frame.columns = [c.replace("_", "-") for c in frame.columns]
    schema = Schema.from_dict(json.loads(categorical.read_text()))
    fk = matching_counts(read_published(schema, list(frame.columns), [frame[c].tolist() for c in frame.columns]))
    rows["local_suppression"] = {"sdcmicro": theirs, "read_by_ours": {"smallest_fk": int(fk.min()),
                                                                      "violating": int((fk < 5).sum())},
                                 "ours": _ours(folder, "anonymize", "--input", str(table), "--schema",
                                               str(categorical), "--method", "sd_k_anonymity", "--param", "k=5",
                                               "--seed", "1", "--out", str(folder / "sd.csv"), "--force")}
    out = folder / "mdav.csv"
    rows["mdav"] = {"sdcmicro": _peer("mdav", table, folder, "num=" + ",".join(NUMERIC)),
                    "ours": _ours(folder, "anonymize", "--input", str(table), "--schema", str(numeric), "--method",
                                  "microaggregation", "--param", "k=5", "--seed", "1", "--out", str(out), "--force")}
    rows["mdav"]["ours"]["groups"] = int(pd.read_csv(out)[list(NUMERIC)].drop_duplicates().shape[0])
    out = folder / "rr.csv"
    rows["pram"] = {"sdcmicro": _peer("pram", table, folder, *keys, "pram=education", "pd=0.8"),
                    "ours": _ours(folder, "anonymize", "--input", str(table), "--schema", str(categorical), "--method",
                                  "randomized_response", "--param", "keep_probabilities=education:0.8", "--seed", "1",
                                  "--keep-order", "--out", str(out), "--force")}
    before = pd.read_csv(table, dtype=str, keep_default_na=False)["education"]
    rows["pram"]["ours"]["changed"] = float((pd.read_csv(out, dtype=str, keep_default_na=False)["education"]
                                             != before).mean())
    return {"n": int(sum(1 for _ in table.open()) - 1), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sdcmicro_peer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=float, action="append",
                        help="table size (repeatable; default 3,000, the sample)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not sdcmicro_installed():
        print(f"R and sdcMicro are not installed here; install them with {INSTALL}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-sdcmicro-") as tmp:
        results = [run(int(r) if r else None, Path(tmp)) for r in (args.rows or [None])]
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print("| records | step | sdcMicro s (the step alone) | sdcMicro MB | ours s | ours MB | figures |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for result in results:
        r = result["rows"]
        figures = {
            "measure_risk": f"classes {r['measure_risk']['sdcmicro']['classes']:,} and "
                            f"{r['measure_risk']['ours']['classes']:,}",
            "local_suppression": f"sdcMicro: {r['local_suppression']['sdcmicro']['suppressed_cells']:,} cells, "
                                 f"smallest f_k {r['local_suppression']['sdcmicro']['smallest_fk']}; read by ours "
                                 f"{r['local_suppression']['read_by_ours']['smallest_fk']}",
            "mdav": f"groups {r['mdav']['sdcmicro']['groups']:,} and {r['mdav']['ours']['groups']:,}",
            "pram": f"changed {r['pram']['sdcmicro']['changed']:.1%} and {r['pram']['ours']['changed']:.1%}",
        }
        for step, row in r.items():
            print(f"| {result['n']:,} | {step} | {row['sdcmicro']['seconds']} ({row['sdcmicro']['step_seconds']}) | "
                  f"{row['sdcmicro']['peak_mb']:,} | "
                  f"{row['ours']['seconds']} | {row['ours']['peak_mb']:,} | {figures[step]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
