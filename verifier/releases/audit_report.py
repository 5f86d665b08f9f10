"""The audit report for people: Markdown with its figures rounded, and PNG plots a reader understands.

Full values stay in ``verifier audit --json``; the table rounds every figure
to 4 significant digits. The plots, each titled with the question it answers:
the permutation distance of every original record's closest match against the
claimed D, the random-match test (how far original records and random ones lie
from their closest released match), the spreads against the claimed v, and for
a generalized release the group sizes against the claimed k.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from verifier.text import markdown, markdown_code, number
from verifier.data.tables import write_atomic, write_atomic_bytes
from verifier.releases.audit import AuditResult

__all__ = ["write_report", "rounded"]


def rounded(value: Any) -> str:
    """A claimed or recomputed figure for people, the same in the terminal and in the report: numbers in the
    one format (:func:`verifier.text.number`), lists element by element, ``true``/``false`` as JSON writes
    them, strings quoted and escaped (a signed manifest may still hold any JSON)."""
    if value is None:
        return "-"
    if isinstance(value, list):
        return "[" + ", ".join(rounded(v) for v in value) + "]"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return json.dumps(value)
    return number(int(value) if isinstance(value, np.integer) else float(value) if isinstance(value, np.floating)
                  else value)


def _finished(fig, ax, xlabel: str, ylabel: str, title: str) -> bytes:
    """Axis labels, the title (the question the plot answers) and the legend; the PNG bytes."""
    from verifier.plots import png

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    return png(fig)


def _distances_plot(f: dict[str, Any]) -> bytes:
    """How far each original record's closest released match was permuted, with the claimed D marked."""
    from verifier.plots import figure

    fig, ax = figure()
    distances = np.asarray(f["record_distances"], dtype=np.int64)
    low = int(distances.min()) if len(distances) else 0
    high = int(distances.max()) if len(distances) else 0
    bins = np.arange(low, high + 2) - 0.5 if high - low <= 60 else 50
    ax.hist(distances, bins=bins, weights=np.full(len(distances), 1 / max(len(distances), 1)),
            label="original records")
    claimed = f.get("claimed_distance")
    if isinstance(claimed, (int, float)) and not isinstance(claimed, bool):
        ax.axvline(claimed, color="black", linestyle="--", label=f"claimed D = {rounded(claimed)}")
    ax.axvline(low, color="tab:red", linestyle=":", label=f"recomputed D = {low} (the closest record)")
    return _finished(fig, ax, "permutation distance of the record's closest match in the release",
                     "share of original records",
                     "How far was each record permuted?\n(the claim holds if no record lies left of the claimed D)")


def _random_match_plot(f: dict[str, Any]) -> bytes:
    """The random-match test: can an intruder tell an original record's match from a random record's?"""
    from verifier.plots import figure

    fig, ax = figure()
    d = np.arange(len(f["random_distribution"]))
    ax.bar(d - 0.2, [f["original_distribution"][str(k)] for k in d], width=0.4, label="original records")
    ax.bar(d + 0.2, [f["random_distribution"][str(k)] for k in d], width=0.4, label="random records")
    return _finished(fig, ax, "permutation distance of the closest match in the release",
                     "share of records",
                     "Could an intruder tell a true match from chance?\n(similar bars: no)")


def _spreads_plot(f: dict[str, Any]) -> bytes:
    """Per attribute, the recomputed spread v at the data-set distance beside the claimed one, values written on."""
    from verifier.plots import figure, label

    fig, ax = figure()
    names = [label(n if len(n) <= 12 else n[:11] + "...") for n in f["attributes"]]
    x = np.arange(len(names))
    series = [("recomputed v", f["variances"])]
    if isinstance(f.get("claimed_variances"), list) and len(f["claimed_variances"]) == len(names):
        series.append(("claimed v", f["claimed_variances"]))
    width = 0.8 / len(series)
    top = 0.0
    for i, (name, values) in enumerate(series):
        heights = [v if isinstance(v, (int, float)) and math.isfinite(v) else 0.0 for v in values]
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, heights, width=width, label=name)
        ax.bar_label(bars, labels=[rounded(v) for v in values], fontsize=7, padding=2)
        top = max([top, *heights])
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_ylim(0, top * 4 + 1e-3)  # room above the tallest bar for its label
    kinds = sorted(set(f.get("spread_kinds") or []))
    return _finished(fig, ax, "attribute", "spread v" + (f" ({', '.join(kinds)})" if kinds else ""),
                     "How much do the values around each record vary?\n"
                     "(smallest spread v per attribute, recomputed and claimed)")


def _group_sizes_plot(f: dict[str, Any]) -> bytes:
    """How many records sit in groups of each size, with the claimed k marked: no bar may lie left of it."""
    from verifier.plots import figure

    fig, ax = figure()
    sizes, counts = np.unique(np.asarray(f["class_sizes"], dtype=np.int64), return_counts=True)
    ax.vlines(sizes, 0, sizes * counts, linewidth=4, label="records in groups of that size")
    k = f.get("k")
    if isinstance(k, int) and not isinstance(k, bool):
        ax.axvline(k, color="black", linestyle="--", label=f"claimed k = {k}")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    return _finished(fig, ax, "size of the group of records sharing published quasi-identifiers",
                     "number of records",
                     "Is every group at least k records large?")


def _plots(result: AuditResult, stem: str) -> list[tuple[str, bytes]]:
    """The plots the audit's figures allow; (file name, PNG bytes)."""
    f = result.figures
    if "class_sizes" in f:
        return [(f"{stem}-group-sizes.png", _group_sizes_plot(f))]
    out = []
    if f.get("record_distances") is not None:
        out.append((f"{stem}-distances.png", _distances_plot(f)))
    if "random_distribution" in f:
        out.append((f"{stem}-random-match.png", _random_match_plot(f)))
    if "variances" in f:
        out.append((f"{stem}-spreads.png", _spreads_plot(f)))
    return out


def _md(text: Any) -> str:
    """Untrusted text in a Markdown table cell (:func:`verifier.text.markdown`)."""
    return markdown(text)


def _lines(result: AuditResult) -> list[str]:
    r = result.release
    lines = [
        f"# Audit of release {_md(r.dataset_id)}, version {r.release_version}",
        "",
        f"- Verified: signed by the trusted key with fingerprint `{r.key.fingerprint}`.",
        f"- Created: {_md(r.created_at)}; methods: " + ", ".join(_md(m.get("method")) for m in r.methods) + ".",
        f"- Original table given: {'yes' if result.with_original else 'no'}.",
        f"- Verdict: **{'every checked claim is true' if result.passed else 'a claim is FALSE'}**.",
        "- Figures rounded to 4 significant digits; `verifier audit --json` gives them in full.",
        "",
        "| claim | manifest | recomputed | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for c in result.checks:
        lines.append(f"| {_md(c.name)} | {_md(rounded(c.claimed))} | {_md(rounded(c.computed))} | "
                     f"{'true' if c.ok else 'FALSE: ' + _md(c.note or 'differs')} |")
    if result.unchecked:
        lines += ["", "## Not checked", "", "| figure | why |", "| --- | --- |"]
        lines += [f"| {_md(k)} | {_md(v)} |" for k, v in result.unchecked.items()]
    if result.settings:
        lines += ["", "Settings used to rerun the tests: " + ", ".join(markdown_code(s) for s in result.settings) + "."]
    return lines


#: the plots a report may write beside itself, as ``<stem>-<name>.png``
PLOT_NAMES = ("group-sizes", "distances", "random-match", "spreads")


def report_paths(path: str | None) -> list[str]:
    """Every file ``--report path`` may write: the report and its plots (checked before the audit runs)."""
    if path is None:
        return []
    p = Path(path)
    return [str(p.with_name(f"{p.stem}-{name}.png")) for name in PLOT_NAMES] + [str(p)]


def write_report(result: AuditResult, path: str) -> list[str]:
    """The audit as Markdown, with PNG plots beside it; every file written atomically. Returns the paths."""
    p = Path(path)
    plots = _plots(result, p.stem)
    text = "\n".join(_lines(result) + [""] + [f"![{name}]({name})" for name, _ in plots] + [""])
    written = []
    for name, data in plots:
        target = p.with_name(name)
        write_atomic_bytes(target, data)
        written.append(str(target))
    write_atomic(p, lambda handle: handle.write(text))
    written.append(str(p))
    return written
