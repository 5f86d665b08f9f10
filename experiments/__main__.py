"""``python -m experiments NAME [--quick] [--json] [--out DIR]``: rerun a paper's experiment (docs/experiments.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from experiments.outcome import write_outcome, write_summary
from experiments.registry import EXPERIMENTS
from verifier.frontend import output_width, text_table
from verifier.frontend.output import FittedStream

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: what a quick run says first: its numbers are not the paper's
QUICK_WORDS = ("Quick run: small samples and few repetitions, to show that each experiment runs. Its numbers are "
               "not the paper's and not docs/experiments.md's; run without --quick for those.")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Rerun a seed paper's evaluation and set each reported figure beside ours, with a verdict.",
        epilog="Experiments: " + "; ".join(f"{name}: {text}" for name, (text, _) in EXPERIMENTS.items())
        + ". Exit codes: 0 done, 2 usage error.")
    p.add_argument("name", choices=[*EXPERIMENTS, "all"], help="the experiment, or all of them")
    p.add_argument("--quick", action="store_true",
                   help="small samples (seconds, the test suite's run); writes nothing unless --out is given")
    p.add_argument("--json", action="store_true", help="the comparisons as JSON on stdout")
    p.add_argument("--out", metavar="DIR", help="where NAME.md, NAME.json and the figures go (default docs/experiments; "
                   "docs/experiments.md is rebuilt beside it)")
    args = p.parse_args(argv)
    folder = Path(args.out) if args.out else (None if args.quick else DOCS / "experiments")
    names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    width = None if args.json else output_width()
    out = FittedStream(sys.stdout, width) if width else sys.stdout
    if args.quick and not args.json:
        out.write(QUICK_WORDS + "\n")
    results = []
    for name in names:
        start = time.perf_counter()
        outcome = EXPERIMENTS[name][1](args.quick)
        outcome.seconds = time.perf_counter() - start
        if folder is not None:
            write_outcome(outcome, folder)
        results.append(outcome)
        if not args.json and len(names) == 1:  # one paper: its figures; for all of them, one line each below
            for c in outcome.comparisons:
                out.write(f"{c.figure}: paper {c.paper}; ours {c.ours}: {c.verdict.upper()} ({c.reason})\n")
    if not args.json:
        rows = [[r.name, r.data, *(str(k) for k in r.tally().values()), f"{r.seconds:.0f} s"] for r in results]
        out.write(text_table(rows, ["paper", "data", "reproduced", "in trend", "differs", "time"],
                             left=(0, 1), width=width) + "\n")
        out.flush()
    if folder is not None:
        summary = write_summary(folder, folder.parent / f"{folder.name}.md")
        if not args.json:
            out.write(f"wrote {folder}/ and {summary}\n")
            out.flush()
    if args.json:
        json.dump([r.to_json() for r in results], sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
