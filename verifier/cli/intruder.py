"""``verifier intruder``: the maximum-knowledge intruder and the random-match test (paper 003, Def. 3, section 5)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from verifier.cli.inputs import PER_CELL, check_exhaustive, intruder_options, load_pair
from verifier.data.memory import ensure_fits
from verifier.data.schema_file import load_schema
from verifier.data.tables import read_table
from verifier.errors import InvalidInputError
from verifier.frontend import (
    Phases,
    ExitCode,
    ProgressBar,
    UsageError,
    add_command,
    add_engine_args,
    check_out_file,
    check_record_number,
    engine_client,
    finite,
    print_json,
    text_table,
    count,
)
from verifier.releases.record import read_record, refuse_record_on_command_line
from verifier.releases.facts import p_value_words
from verifier.text import figure, number, plural

__all__ = ["register", "random_json", "as_dict", "PAIRED_FIGURES", "UNPAIRED_REASON"]

PAIRED_FIGURES = ("correct_link_share", "multiple_match_share", "misidentified_share", "rank_correlation")
UNPAIRED_REASON = ("they score each link against the true pairing of rows, which a shuffled release hides; "
                   "give --paired only for a table kept in X's order")


def register(sub, common) -> None:
    p = add_command(
        sub, common, "intruder", run=run,
        help="the maximum-knowledge intruder and the random-match test (paper 003, Def. 3, section 5)",
        description="Protector's test (--original): reverse-map Y onto X, link every original record to its closest "
        "records in Z, and compare the link distances with those of random records built from X's columns; a record "
        "whose p-value F_rand(d) is below --alpha is confidently linked (SPEC section 5). Subject's test "
        "(--subject-record): her own distance to Y against random records built from Y's columns. The random "
        "distribution is exact when the n^m combinations are at most --exhaustive-limit, else a Monte Carlo "
        "estimate with 95%% intervals.",
        epilog="Exit codes: 0 done (and --max-linked-share met), 1 --max-linked-share exceeded (with "
        "--subject-record: her record confidently linked), 2 usage error, 3 invalid input data, 4 I/O failure.",
    )
    p.add_argument("--original", metavar="X.csv", help="the original table X: the protector's or auditor's test")
    p.add_argument("--anonymized", required=True, metavar="Y.csv", help="the anonymized table Y, same columns")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    p.add_argument("--subject-record", metavar="FILE",
                   help="a subject's own record (JSON object or one-row CSV): her test, from Y alone")
    p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a link is confident (default 0.01)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--exhaustive", action="store_true",
                     help="insist on the exact distribution (refused when n^m exceeds --exhaustive-limit)")
    how.add_argument("--monte-carlo", action="store_true", help="always sample, even when enumeration is possible")
    p.add_argument("--samples", type=count("samples"), default=10_000, metavar="N", help="Monte Carlo draws (default 10000, at most 10000000)")
    p.add_argument("--exhaustive-limit", type=count("exhaustive_limit"), default=10**6, metavar="N",
                   help="enumerate every combination when n^m is at most N (default 1000000)")
    p.add_argument("--seed", type=count("seed"), default=0,
                   help="the intruder's own randomness: Y's tie-break and the random draws (default 0; not a secret)")
    p.add_argument("--paired", action="store_true",
                   help="row i of Y anonymizes row i of X (a table kept in X's order, never a shuffled release): "
                   "also score the links against that pairing (correct, multiple, misidentified shares and the "
                   "rank correlation of X and Z); without it those figures are left out and the JSON says why")
    p.add_argument("--record", type=count("record"), metavar="N",
                   help="with --json, also record N's link (distance, matches, p-value; numbered from 1)")
    p.add_argument("--out", metavar="FILE",
                   help="write every record's link (distance, matches, p-value, confident, outcome with --paired) to "
                   "FILE.parquet or FILE.csv (no list columns); streamed, written whole or not at all")
    p.add_argument("--max-linked-share", type=float, metavar="S",
                   help="check: exit 1 if more than this share of records is confidently linked "
                   "(with --subject-record: if her record is)")
    p.add_argument("--json", action="store_true",
                   help="the summary as JSON on stdout; per-record JSON only with --record N, every record with --out")
    add_engine_args(p)


def as_dict(values: np.ndarray, size: int) -> dict[str, float | None]:
    """``{"0": share, "1": share, ...}`` over distances 0 .. size-1."""
    padded = np.pad(np.asarray(values, dtype=np.float64), (0, size - len(values)))
    return {str(d): finite(v) for d, v in enumerate(padded)}


def random_json(random) -> dict[str, Any]:
    lo, hi = random.pmf_interval()
    clo, chi = random.cdf_interval()
    return {
        "method": random.method,
        "random_records": random.total,
        "confidence": None if random.exact else random.confidence,
        "counts": {str(d): int(c) for d, c in enumerate(random.counts)},
        "distribution_interval": {str(d): [finite(a), finite(b)] for d, (a, b) in enumerate(zip(lo, hi))},
        "cumulative": {str(d): finite(c) for d, c in enumerate(random.cdf)},
        "cumulative_interval": {str(d): [finite(a), finite(b)] for d, (a, b) in enumerate(zip(clo, chi))},
    }


def _how(random, n: int, m: int, seed: int) -> str:
    if random.exact:
        return f"exhaustive over all {n}^{m} = {random.total} combinations (exact)"
    return f"Monte Carlo, {random.total} random records, {100 * random.confidence:g}% intervals, seed {seed}"


def _histogram_rows(original: np.ndarray | None, random, width: int = 20) -> list[list[str]]:
    """Rows of the distance histogram with text bars; long ranges are binned to 30 rows."""
    size = max(random.pmf.size, 0 if original is None else original.size)
    rnd = np.pad(random.pmf, (0, size - random.pmf.size))
    org = None if original is None else np.pad(original, (0, size - original.size))
    cdf = random.p_value(np.arange(size))
    cdf_lo, cdf_hi = random.p_value_interval(np.arange(size))
    step = -(-size // 30)
    sums = [float(rnd[a : a + step].sum()) for a in range(0, size, step)]
    orgs = None if org is None else [float(org[a : a + step].sum()) for a in range(0, size, step)]
    top = max(sums + (orgs or [])) or 1.0
    rows = []
    for k, start in enumerate(range(0, size, step)):
        stop = min(size, start + step)
        row = [str(start) if step == 1 else f"{start}-{stop - 1}"]
        bar = "=" * round(width * sums[k] / top)
        if orgs is not None:
            row.append(number(orgs[k]))
            bar = f"{'#' * round(width * orgs[k] / top):<{width}} {bar}"
        row += [number(sums[k]), number(cdf[stop - 1])]
        if not random.exact:
            row.append(f"{number(cdf_lo[stop - 1])}-{number(cdf_hi[stop - 1])}")
        rows.append(row + [bar])
    return rows


def run(args: argparse.Namespace) -> int:
    # the intruder's kernels and the engine load when the command runs, not when any command starts
    from verifier.attacks.intruder import run_intruder
    from verifier.distributed.intruder import distributed_intruder
    from verifier.distributed.partitions import table_pair

    options = intruder_options(args)
    if (args.original is None) == (args.subject_record is None):
        raise UsageError("give --original X.csv (the protector's test) or --subject-record FILE (a subject's), not both")
    if args.subject_record is not None:
        if args.paired or args.out or args.record is not None:
            raise UsageError("--paired, --record and --out belong to the protector's test (--original)")
        if args.engine != "local":
            raise UsageError("--engine dask runs the protector's test (--original); a subject's test reads Y here")
        return _subject_intruder(args, options)
    check_out_file(args.out, args.original, args.anonymized)
    with engine_client(args) as client:
        if client is None:
            with Phases()(f"reading {args.original} and {args.anonymized}"):
                x, y = load_pair(args.original, args.anonymized, args.schema)
            _check_tables(args, x.n_records, y.n_records, x.n_attributes)
            report = run_intruder(
                x.values, y.values, x.kinds, paired=args.paired, progress=ProgressBar("random-match test"), **options
            )
            return _output(args, x.names, report)
        phases = Phases()
        with phases(f"reading {args.original} and {args.anonymized} on the cluster"):
            xp, yp = table_pair(client, args.original, args.anonymized,
                                load_schema(args.schema) if args.schema else None)
            n_x, n_y = xp.n_records(client), yp.n_records(client)
        _check_tables(args, n_x, n_y, len(xp.schema.names))
        report = distributed_intruder(client, xp.parts, yp.parts, xp.schema.kinds, paired=args.paired, phase=phases,
                                      where=args.anonymized, progress=ProgressBar("random-match test"), **options)
        return _output(args, xp.schema.names, report)


def _check_tables(args: argparse.Namespace, n_x: int, n_y: int, m: int) -> None:
    check_record_number(args.record, n_x, args.original)
    if n_x != n_y:
        raise InvalidInputError(
            f"has {n_y} records and the original {n_x}; the intruder reverse-maps Y onto X, "
            "which needs the same number", path=args.anonymized, reason="SHAPE_MISMATCH",
        )
    check_exhaustive(n_x, m, args)


def _output(args: argparse.Namespace, names: list[str], report) -> int:
    from verifier.attacks.link_rows import link_columns
    from verifier.core.record_rows import distance_summary
    from verifier.data.record_file import BATCH, write_record_file

    size = max(report.random.pmf.size, report.original_pmf.size)
    if args.out:
        write_record_file(args.out, link_columns(report, batch=BATCH))
    if args.record is not None:
        wanted = [args.record - 1]
    else:
        wanted = [] if args.json else range(min(report.n_records, 50))
    records = [_link_record(report, r) for r in wanted]
    limit = args.max_linked_share
    passed = limit is None or report.confidently_linked_share <= limit
    out: dict[str, Any] = {
        "attributes": names,
        "engine": args.engine,
        "n_records": report.n_records,
        "alpha": report.alpha,
        "seed": args.seed,
        "paired": args.paired,
        "out": args.out,
        **({"records": records} if args.record is not None else {}),
        "distances": distance_summary(report.linkage.distances, report.linkage.match_counts),
        "random_distribution": as_dict(report.random.pmf, size),
        "original_distribution": as_dict(report.original_pmf, size),
        "random": random_json(report.random),
        "hellinger": finite(report.hellinger),
        "confidently_linked_share": report.confidently_linked_share,
        "ambiguous_share": report.ambiguous_share,
    }
    if args.paired:
        out.update(correct_link_share=report.correct_link_share, multiple_match_share=report.multiple_match_share,
                   misidentified_share=report.misidentified_share,
                   rank_correlation=[finite(t) for t in report.rank_correlation])
    else:
        out["not_computed"] = {"figures": list(PAIRED_FIGURES), "reason": UNPAIRED_REASON}
    if limit is not None:
        out["check"] = {"max_linked_share": limit, "satisfied": passed}
    if args.json:
        print_json(out)
    else:
        _print_intruder(len(names), report, records, args, passed)
    return ExitCode.OK if passed else ExitCode.CHECK_FAILED


def _link_record(report, r: int) -> dict[str, Any]:
    link = report.linkage
    entry = {
        "record": r + 1,
        "distance": int(link.distances[r]),
        "matches": (link.record_matches(r) + 1).tolist(),
        "p_value": finite(report.p_values[r]),
        "p_value_interval": [finite(report.p_value_low[r]), finite(report.p_value_high[r])],
        "confidently_linked": bool(report.confidently_linked[r]),
    }
    if report.outcomes is not None:
        entry["outcome"] = str(report.outcomes[r])
    return entry


def _print_intruder(m: int, report, records, args, passed: bool) -> None:
    n = report.n_records
    print(f"Maximum-knowledge intruder (paper 003, Def. 3): knows {args.original} and {args.anonymized} "
          f"({n} records, {m} attributes),")
    print("reverse-maps Y to Z and links every original record to its closest records in Z.\n")
    print(f"Random-match test: {_how(report.random, n, m, args.seed)}")
    print("Distance of the link: share of original records, share of random records, p-value F_rand(d)\n")
    interval = [] if report.random.exact else [f"{100 * report.random.confidence:g}% interval"]
    header = ["d", "original", "random", "random <= d", *interval, "# original  = random"]
    print(text_table(_histogram_rows(report.original_pmf, report.random), header, left=(0, -1)))
    linked = int(report.confidently_linked.sum())
    print(f"\nHellinger distance between the two distributions: {number(report.hellinger)} (0 = indistinguishable, 1 = disjoint)")
    print(f"Confidently linked records (p-value < {report.alpha:g}): {linked} of {n} "
          f"({number(report.confidently_linked_share, share=True)})")
    print(f"Records linked to several records at once: {number(report.ambiguous_share, share=True)}")
    if report.outcomes is not None:
        c = {k: int(np.sum(report.outcomes == k)) for k in ("correct", "multiple", "misidentified")}
        print(f"True pairing (row i of Y is record i of X): correctly linked {c['correct']} "
              f"({number(c['correct'] / n, share=True)}), true record among several {c['multiple']} "
              f"({number(c['multiple'] / n, share=True)}), misidentified {c['misidentified']} "
              f"({number(c['misidentified'] / n, share=True)})")
    else:
        print("Not scored against a true pairing (Y's rows may be shuffled, as in every release; "
              "--paired for a table kept in X's order).")
    if n <= 50:
        paired = report.outcomes is not None
        rows = [
            [str(r["record"]), str(r["distance"]),
             " ".join(map(str, r["matches"][:6])) + (" ..." if len(r["matches"]) > 6 else ""),
             figure(r["p_value"]), "yes" if r["confidently_linked"] else "no", *([r["outcome"]] if paired else [])]
            for r in records
        ]
        header = ["record", "d", "matches in Z", "p-value", "confident", *(["outcome"] if paired else [])]
        print("\n" + text_table(rows, header))
    else:
        print(f"({n} records are too many to list here; " + (f"every record's link is in {args.out})" if args.out
              else "--out FILE.parquet writes every record's link)"))
    if linked == 0:
        print("\nVerdict: no link is closer than chance explains at this alpha: "
              "the release withstands the known-plaintext attack.")
    else:
        print(f"\nVerdict: {plural(linked, 'record')} {'is' if linked == 1 else 'are'} linked more closely than "
              "chance explains; "
              "an intruder can be confident of those links.")
    if args.max_linked_share is not None:
        word = "met" if passed else "NOT MET"
        print(f"Check: confidently linked share {number(report.confidently_linked_share, share=True)} <= "
              f"{number(args.max_linked_share, share=True)}: {word}")


def _subject_intruder(args: argparse.Namespace, options: dict[str, Any]) -> int:
    from verifier.attacks.intruder import subject_test
    from verifier.core.permutation import RankSpace

    refuse_record_on_command_line(args.subject_record)
    schema = load_schema(args.schema) if args.schema else None
    ensure_fits([(args.anonymized, len(schema.names) if schema else None)], PER_CELL)
    with Phases()(f"reading {args.anonymized}"):
        y = read_table(args.anonymized, schema)
    record = read_record(args.subject_record, y.schema)
    check_exhaustive(y.n_records, y.n_attributes, args)
    space = RankSpace(y.values, y.kinds)
    report = subject_test(space, record, progress=ProgressBar("random-match test"), **options)
    random = report.random
    passed = args.max_linked_share is None or not report.confidently_linked
    matches = report.record.matches
    out: dict[str, Any] = {
        "attributes": y.names,
        "n_records": y.n_records,
        "alpha": report.alpha,
        "seed": args.seed,
        "distance": report.distance,
        "matches": (matches + 1).tolist(),
        "deviations": report.record.deviations.tolist(),
        "p_value": finite(report.p_value),
        "p_value_interval": [finite(report.p_value_low), finite(report.p_value_high)],
        "confidently_linked": report.confidently_linked,
        "random_distribution": as_dict(random.pmf, random.pmf.size),
        "random": random_json(random),
    }
    if args.json:
        print_json(out)
        return ExitCode.OK if passed else ExitCode.CHECK_FAILED
    print(f"Your record against {args.anonymized} ({y.n_records} records, {y.n_attributes} attributes):")
    print(f"  permutation distance d = {report.distance}; {plural(matches.size, 'released record')} {'matches' if matches.size == 1 else 'match'} at that distance")
    print(f"\nRandom-match test: {_how(random, y.n_records, y.n_attributes, args.seed)}")
    interval = [] if random.exact else [f"{100 * random.confidence:g}% interval"]
    print(text_table(_histogram_rows(None, random), ["d", "random", "random <= d", *interval, "= random"], left=(0, -1)))
    interval = "" if random.exact else f" (95% interval {number(report.p_value_low)} to {number(report.p_value_high)})"
    print(f"\nYour p-value F_rand({report.distance}) = {number(report.p_value)}{interval}:")
    print(f"  {p_value_words(report.p_value, report.alpha, whose='the')}.")
    return ExitCode.OK if passed else ExitCode.CHECK_FAILED
