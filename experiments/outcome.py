"""What an experiment found: its comparisons with the paper, its tables and figures, and where they are written.

``docs/experiments/NAME.md`` holds one experiment's tables, comparisons and
figures (``NAME-*.png`` beside it) and ``NAME.json`` its comparisons for
machines; ``docs/experiments.md`` is the summary of every experiment written
so far, rebuilt from those JSON files.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["VERDICTS", "Comparison", "Outcome", "markdown_table", "write_outcome", "write_summary"]

#: what a comparison with the paper can conclude
VERDICTS = ("reproduced", "reproduced in trend", "differs")


@dataclass(frozen=True)
class Comparison:
    """One figure of the paper beside ours, with the verdict and the reason for it."""

    figure: str
    paper: str
    ours: str
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {VERDICTS}, not {self.verdict!r}")


@dataclass
class Outcome:
    """An experiment's result: ``sections`` are (heading, Markdown) pairs, ``figures`` (file stem, title, PNG)."""

    name: str
    title: str
    quick: bool
    setting: str
    comparisons: list[Comparison] = field(default_factory=list)
    sections: list[tuple[str, str]] = field(default_factory=list)
    figures: list[tuple[str, str, bytes]] = field(default_factory=list)
    seconds: float = 0.0
    data: str = ""
    """The data it ran on, in a few words (the one line ``python -m experiments all`` prints per paper)."""

    def tally(self) -> dict[str, int]:
        """How many of its figures have each verdict, every verdict listed."""
        return {v: sum(c.verdict == v for c in self.comparisons) for v in VERDICTS}

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "quick": self.quick, "data": self.data, "setting": self.setting,
                "seconds": round(self.seconds, 1), "comparisons": [asdict(c) for c in self.comparisons],
                "figures": [f"{self.name}-{stem}.png" for stem, _, _ in self.figures]}


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table; cells are written as given (format numbers before)."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")  # U(O | S) stays in its cell

    lines = ["| " + " | ".join(map(cell, header)) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines)


def _comparisons(outcome: Outcome) -> str:
    return markdown_table(["figure", "paper", "ours", "verdict", "reason"],
                          [[c.figure, c.paper, c.ours, f"**{c.verdict}**", c.reason] for c in outcome.comparisons])


def write_outcome(outcome: Outcome, folder: Path) -> list[Path]:
    """Write ``NAME.md``, ``NAME.json`` and the PNG figures into ``folder``; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    parts = [f"# {outcome.title}", "",
             f"`python -m experiments {outcome.name}{' --quick' if outcome.quick else ''}`"
             f" ({outcome.seconds:.0f} s). {outcome.setting}", "", "## The paper beside ours", "",
             _comparisons(outcome), ""]
    for heading, text in outcome.sections:
        parts += [f"## {heading}", "", text, ""]
    for stem, title, png in outcome.figures:
        path = folder / f"{outcome.name}-{stem}.png"
        path.write_bytes(png)
        written.append(path)
        parts += [f"![{title}]({path.name})", ""]
    for path, text in ((folder / f"{outcome.name}.md", "\n".join(parts)),
                       (folder / f"{outcome.name}.json", json.dumps(outcome.to_json(), indent=2) + "\n")):
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def write_summary(folder: Path, summary: Path) -> Path:
    """``docs/experiments.md``: every experiment written into ``folder``, its verdicts counted, its comparisons."""
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    parts = ["# The papers' experiments, rerun", "",
             "Each seed paper's evaluation rerun with the project's methods and checks "
             "(`python -m experiments NAME`, the package `experiments/`). Every figure the paper "
             "reports is set beside ours with a verdict: **reproduced** (the same number, to the "
             "precision the paper prints), **reproduced in trend** (the paper only draws it, or our "
             "data differ, and the shape agrees), or **differs**, with the reason found. Differences "
             "are documented, never tuned away. `--quick` reruns everything on small samples in the "
             "test suite, so that the experiments cannot rot; the numbers below are from full runs.", "",
             "Papers 000, 001, 002 and 004 run on the UCI Adult training file: a full run reads it "
             "from `../shared/data/real/adult_uci_train_32561.csv`, beside the repository (put "
             "`adult.data` there under that name, with the header of `experiments/data/"
             "adult_sample_3000.csv`), and falls back to that 3,000-record sample, which the "
             "repository ships, when the file is not there; each page says which it used.", ""]
    for run in runs:
        counts = {v: sum(c["verdict"] == v for c in run["comparisons"]) for v in VERDICTS}
        parts += [f"## [{run['title']}](experiments/{run['name']}.md)", "",
                  f"{run['setting']} ({'quick, ' if run['quick'] else ''}{run['seconds']:.0f} s): "
                  + ", ".join(f"{n} {v}" for v, n in counts.items()), "",
                  markdown_table(["figure", "paper", "ours", "verdict"],
                                 [[c["figure"], c["paper"], c["ours"], c["verdict"]] for c in run["comparisons"]]),
                  ""]
    summary.write_text("\n".join(parts), encoding="utf-8")
    return summary
