"""The ``verifier`` command line.

Exit codes (SPEC section 10):

====  ==========================================================
0     all checks passed
1     a check or verification failed
2     usage error (bad arguments)
3     invalid input data (a table, a schema, a record)
4     environment or I/O failure (cannot write an output)
====  ==========================================================

A failure prints one line on stderr, ``FAIL: <path>: <REASON_CODE>: <sentence>``;
a traceback only with ``--verbose``. Results go to stdout, as a readable
report or, with ``--json``, as JSON.
"""

from __future__ import annotations

import argparse
import enum
import json
import math
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from verifier import __version__
from verifier.text import LiteralStream, figure
from verifier._progress import ProgressBar
from verifier.errors import InvalidInputError, UsageError, VerifierError
from verifier.data.tables import Table, read_table, write_csv_atomic
from verifier.core.permutation import RankSpace, compute_permuted_privacy
from verifier.core.ranks import reverse_map
from verifier.data.schema import load_schema

__all__ = ["main", "ExitCode"]


class ExitCode(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    INPUT_ERROR = 3
    IO_ERROR = 4


# ----------------------------------------------------------------------------- helpers


def _finite(x: float) -> float | None:
    """JSON has no NaN or infinity: an undefined figure is ``null``."""
    x = float(x)
    return x if math.isfinite(x) else None


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


def _load_pair(original: str, anonymized: str, schema_path: str | None) -> tuple[Table, Table]:
    """X with its schema (nominal orders from X), then Y read with X's schema."""
    schema = load_schema(schema_path) if schema_path else None
    x = read_table(original, schema)
    y = read_table(anonymized, x.schema)
    return x, y


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _table(rows: list[list[str]], header: list[str], *, left: Sequence[int] = (0,)) -> str:
    """A plain text table: columns in ``left`` aligned left, the others right."""
    left = {k % len(header) for k in left}
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()
    body = [
        "  ".join(c.ljust(w) if k in left else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in rows
    ]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


# ----------------------------------------------------------------------------- reverse-map


def _cmd_reverse_map(args: argparse.Namespace) -> int:
    for given in (args.original, args.anonymized):
        if _same_file(args.out, given):
            raise UsageError(f"--out would overwrite the input {given}", path=args.out)
    x, y = _load_pair(args.original, args.anonymized, args.schema)
    if x.n_records != y.n_records:
        raise InvalidInputError(
            f"has {y.n_records} records and the original {x.n_records}; reverse mapping needs the same number",
            path=args.anonymized, reason="SHAPE_MISMATCH",
        )
    result = reverse_map(x.values, y.values, random_state=args.seed)
    text = x.cell_text()
    cols = np.arange(x.n_attributes)
    z_text = text[result.source_rows, cols]
    write_csv_atomic(args.out, x.names, z_text.tolist())
    attrs = [
        {
            "name": name,
            "rank_correlation": _finite(result.rank_correlation[j]),
            "mean_abs_noise_y_x": _finite(result.mean_abs_noise_y_x[j]),
            "mean_abs_noise_y_z": _finite(result.mean_abs_noise_y_z[j]),
        }
        for j, name in enumerate(x.names)
    ]
    if args.json:
        _print_json({"output": args.out, "n_records": x.n_records, "seed": args.seed, "attributes": attrs})
    else:
        print(f"Reverse-mapped {x.n_records} records of {args.anonymized} onto {args.original}: wrote {args.out}")
        print("Per attribute: Spearman rank correlation of X and Z (a disclosure proxy, paper 003 section 2),")
        print("and the noise left once the permutation is taken out (mean |Y-Z|) beside the noise added (mean |Y-X|).\n")
        rows = [
            [a["name"], figure(result.rank_correlation[j], 3), figure(result.mean_abs_noise_y_x[j]), figure(result.mean_abs_noise_y_z[j])]
            for j, a in enumerate(attrs)
        ]
        print(_table(rows, ["attribute", "rank corr X~Z", "mean |Y-X|", "mean |Y-Z|"]))
    return ExitCode.OK


# ----------------------------------------------------------------------------- distance


def _parse_v(text: str | None, m: int) -> list[float] | None:
    if text is None:
        return None
    try:
        v = [float(t) for t in text.split(",")]
    except ValueError:
        raise UsageError(f"--v takes {m} comma-separated numbers, got {text!r}") from None
    if len(v) == 1:
        v = v * m
    if len(v) != m or not all(math.isfinite(t) and t >= 0 for t in v):
        raise UsageError(f"--v takes one non-negative number or {m} comma-separated ones, got {text!r}")
    return v


def _cmd_distance(args: argparse.Namespace) -> int:
    x, y = _load_pair(args.original, args.anonymized, args.schema)
    m = x.n_attributes
    v = _parse_v(args.v, m)
    if (args.d is None) != (v is None):
        raise UsageError("--d and --v go together: the (d, v) to check")
    if args.record is not None and not 1 <= args.record <= x.n_records:
        raise UsageError(f"--record must be between 1 and {x.n_records}, got {args.record}", path=args.original)
    space = RankSpace(y.values, y.kinds)
    report = compute_permuted_privacy(space, x.values, progress=ProgressBar("permutation distances"))
    wanted = [args.record - 1] if args.record is not None else range(x.n_records)
    records = []
    for r in wanted:
        matches = report.record_matches(r)
        records.append(
            {
                "record": r + 1,
                "distance": int(report.distances[r]),
                "matches": (matches + 1).tolist(),
                "query_blocks": [[int(a), int(b)] for a, b in zip(report.query_lo[r], report.query_hi[r])],
                "deviations": space.deviations(report.query_lo[r], report.query_hi[r], matches).tolist(),
                "variances_at_dataset_distance": [_finite(t) for t in report.spread_at_dataset_distance[r]],
                "variances_at_record_distance": [_finite(t) for t in report.spread_at_record_distance[r]],
            }
        )
    out: dict[str, Any] = {
        "attributes": x.names,
        "spread_kinds": report.spread_kinds,
        "records": records,
        "dataset": {"distance": report.dataset_distance, "variances": [_finite(t) for t in report.dataset_spread]},
    }
    check = None
    if args.d is not None:
        check = report.check_dv(space, d=args.d, v=v, record=None if args.record is None else args.record - 1)
        out["check"] = {
            "scope": f"record {args.record}" if args.record is not None else "dataset",
            "d": check.d,
            "v": list(check.v),
            "distance": check.distance,
            "variances_at_d": [_finite(t) for t in check.spread],
            "satisfied": check.satisfied,
        }
    if args.json:
        _print_json(out)
    else:
        _print_distance(x, report, records, check, args)
    return ExitCode.OK if check is None or check.satisfied else ExitCode.CHECK_FAILED


def _print_distance(x: Table, report, records, check, args) -> None:
    names = x.names
    kinds = report.spread_kinds
    if any(k != "variance" for k in kinds):
        print("Spread: " + ", ".join(f"{n}: {k.replace('_', '-')}" for n, k in zip(names, kinds)) + "\n")
    if args.record is not None:
        rec = records[0]
        print(f"Record {rec['record']} of {args.original}")
        print(f"  query ranks (blocks): {', '.join(f'{n}={a}' if a == b else f'{n}={a}-{b}' for n, (a, b) in zip(names, rec['query_blocks']))}")
        print(f"  permutation distance d = {rec['distance']}; {len(rec['matches'])} matching released record(s)")
        rows = [[str(mi), *[str(t) for t in dev]] for mi, dev in zip(rec["matches"][:50], rec["deviations"][:50])]
        print(_table(rows, ["match", *[f"dev {n}" for n in names]]))
        if len(rec["matches"]) > 50:
            print(f"  ... and {len(rec['matches']) - 50} more (use --json for all)")
        print(f"  spread at d = {rec['distance']}: " + ", ".join(f"{n}={figure(t)}" for n, t in zip(names, rec["variances_at_record_distance"])))
        print(f"  spread at D = {report.dataset_distance}: " + ", ".join(f"{n}={figure(t)}" for n, t in zip(names, rec["variances_at_dataset_distance"])))
    else:
        shown = records[:50]
        rows = [
            [str(r["record"]), str(r["distance"]), " ".join(map(str, r["matches"][:6])) + (" ..." if len(r["matches"]) > 6 else ""),
             *[figure(t) for t in r["variances_at_dataset_distance"]]]
            for r in shown
        ]
        print(_table(rows, ["record", "d", "matches", *[f"spread@D {n}" for n in names]]))
        if len(records) > 50:
            print(f"... {len(records) - 50} more records (use --json for all)")
    print(
        f"\nData set: D = {report.dataset_distance}, v = ("
        + ", ".join(figure(t) for t in report.dataset_spread)
        + "): every record is at least D ranks from its closest match, and no window at D is less spread"
        " than v (paper 003, Def. 2; Table 4)."
    )
    if check is not None:
        verdict = "HOLDS" if check.satisfied else "DOES NOT HOLD"
        print(f"\nCheck ({check.d}, ({', '.join(figure(t) for t in check.v)}))-permuted privacy: {verdict}")
        print(f"  distance {check.distance} >= {check.d}: {'yes' if check.distance_ok else 'no'}")
        for n, s, t, ok in zip(names, check.spread, check.v, check.spread_ok):
            print(f"  spread of {n} at d = {check.d}: {figure(s)} > {figure(t)}: {'yes' if ok else 'no'}")


# ----------------------------------------------------------------------------- intruder


def _as_dict(values: np.ndarray, size: int) -> dict[str, float | None]:
    """``{"0": share, "1": share, ...}`` over distances 0 .. size-1."""
    padded = np.pad(np.asarray(values, dtype=np.float64), (0, size - len(values)))
    return {str(d): _finite(v) for d, v in enumerate(padded)}


def _random_json(random) -> dict[str, Any]:
    lo, hi = random.pmf_interval()
    clo, chi = random.cdf_interval()
    return {
        "method": random.method,
        "random_records": random.total,
        "confidence": None if random.exact else random.confidence,
        "counts": {str(d): int(c) for d, c in enumerate(random.counts)},
        "distribution_interval": {str(d): [_finite(a), _finite(b)] for d, (a, b) in enumerate(zip(lo, hi))},
        "cumulative": {str(d): _finite(c) for d, c in enumerate(random.cdf)},
        "cumulative_interval": {str(d): [_finite(a), _finite(b)] for d, (a, b) in enumerate(zip(clo, chi))},
    }


def _intruder_options(args: argparse.Namespace) -> dict[str, Any]:
    if args.samples < 1:
        raise UsageError(f"--samples must be at least 1, got {args.samples}")
    if not 0 <= args.exhaustive_limit <= 2**53:
        raise UsageError(f"--exhaustive-limit must be between 0 and 2**53, got {args.exhaustive_limit}")
    if not 0.0 < args.alpha < 1.0:
        raise UsageError(f"--alpha must be strictly between 0 and 1, got {args.alpha}")
    if args.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    if args.max_linked_share is not None and not 0.0 <= args.max_linked_share <= 1.0:
        raise UsageError(f"--max-linked-share must be between 0 and 1, got {args.max_linked_share}")
    mode = "exhaustive" if args.exhaustive else "monte_carlo" if args.monte_carlo else "auto"
    return {"alpha": args.alpha, "mode": mode, "samples": args.samples,
            "exhaustive_limit": args.exhaustive_limit, "random_state": args.seed}


def _check_exhaustive(n: int, m: int, args: argparse.Namespace) -> None:
    """Refuse ``--exhaustive`` before any work when ``n^m`` is over the limit."""
    if args.exhaustive and n**m > args.exhaustive_limit:
        raise UsageError(
            f"--exhaustive needs n^m = {n}^{m} random records, more than "
            f"--exhaustive-limit {args.exhaustive_limit}; raise the limit or let it sample"
        )


def _how(random, n: int, m: int, seed: int) -> str:
    if random.exact:
        return f"exhaustive over all {n}^{m} = {random.total} combinations (exact)"
    return f"Monte Carlo, {random.total} random records, {100 * random.confidence:g}% intervals, seed {seed}"


def _p_in_words(p: float, alpha: float) -> str:
    """A p-value for people (SPEC section 10.1, item 4)."""
    from verifier.releases.subject import p_value_words

    return p_value_words(p, alpha, whose="the")


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
            row.append(f"{orgs[k]:.4f}")
            bar = f"{'#' * round(width * orgs[k] / top):<{width}} {bar}"
        row += [f"{sums[k]:.4f}", f"{cdf[stop - 1]:.4f}"]
        if not random.exact:
            row.append(f"{cdf_lo[stop - 1]:.4f}-{cdf_hi[stop - 1]:.4f}")
        rows.append(row + [bar])
    return rows


def _cmd_intruder(args: argparse.Namespace) -> int:
    options = _intruder_options(args)
    if (args.original is None) == (args.subject_record is None):
        raise UsageError("give --original X.csv (the protector's test) or --subject-record FILE (a subject's), not both")
    if args.subject_record is not None:
        if args.unpaired:
            raise UsageError("--unpaired belongs to the protector's test (--original)")
        return _subject_intruder(args, options)
    from verifier.attacks.intruder import run_intruder

    x, y = _load_pair(args.original, args.anonymized, args.schema)
    if x.n_records != y.n_records:
        raise InvalidInputError(
            f"has {y.n_records} records and the original {x.n_records}; the intruder reverse-maps Y onto X, "
            "which needs the same number", path=args.anonymized, reason="SHAPE_MISMATCH",
        )
    _check_exhaustive(x.n_records, x.n_attributes, args)
    report = run_intruder(
        x.values, y.values, x.kinds, paired=not args.unpaired, progress=ProgressBar("random-match test"), **options
    )
    link = report.linkage
    size = max(report.random.pmf.size, report.original_pmf.size)
    records = []
    for r in range(report.n_records):
        entry = {
            "record": r + 1,
            "distance": int(link.distances[r]),
            "matches": (link.record_matches(r) + 1).tolist(),
            "p_value": _finite(report.p_values[r]),
            "p_value_interval": [_finite(report.p_value_low[r]), _finite(report.p_value_high[r])],
            "confidently_linked": bool(report.confidently_linked[r]),
        }
        if report.outcomes is not None:
            entry["outcome"] = str(report.outcomes[r])
        records.append(entry)
    limit = args.max_linked_share
    passed = limit is None or report.confidently_linked_share <= limit
    out: dict[str, Any] = {
        "attributes": x.names,
        "n_records": report.n_records,
        "alpha": report.alpha,
        "seed": args.seed,
        "paired": not args.unpaired,
        "records": records,
        "random_distribution": _as_dict(report.random.pmf, size),
        "original_distribution": _as_dict(report.original_pmf, size),
        "random": _random_json(report.random),
        "hellinger": _finite(report.hellinger),
        "confidently_linked_share": report.confidently_linked_share,
        "correct_link_share": report.correct_link_share,
        "multiple_match_share": report.multiple_match_share,
        "misidentified_share": report.misidentified_share,
        "ambiguous_share": report.ambiguous_share,
        "rank_correlation": [_finite(t) for t in report.reverse_mapping.rank_correlation],
    }
    if limit is not None:
        out["check"] = {"max_linked_share": limit, "satisfied": passed}
    if args.json:
        _print_json(out)
    else:
        _print_intruder(x, report, records, args, passed)
    return ExitCode.OK if passed else ExitCode.CHECK_FAILED


def _print_intruder(x: Table, report, records, args, passed: bool) -> None:
    n, m = report.n_records, x.n_attributes
    print(f"Maximum-knowledge intruder (paper 003, Def. 3): knows {args.original} and {args.anonymized} "
          f"({n} records, {m} attributes),")
    print("reverse-maps Y to Z and links every original record to its closest records in Z.\n")
    print(f"Random-match test: {_how(report.random, n, m, args.seed)}")
    print("Distance of the link: share of original records, share of random records, p-value F_rand(d)\n")
    interval = [] if report.random.exact else [f"{100 * report.random.confidence:g}% interval"]
    header = ["d", "original", "random", "random <= d", *interval, "# original  = random"]
    print(_table(_histogram_rows(report.original_pmf, report.random), header, left=(0, -1)))
    linked = int(report.confidently_linked.sum())
    print(f"\nHellinger distance between the two distributions: {report.hellinger:.3f} (0 = indistinguishable, 1 = disjoint)")
    print(f"Confidently linked records (p-value < {report.alpha:g}): {linked} of {n} "
          f"({100 * report.confidently_linked_share:.1f}%)")
    print(f"Records linked to several records at once: {100 * report.ambiguous_share:.1f}%")
    if report.outcomes is not None:
        c = {k: int(np.sum(report.outcomes == k)) for k in ("correct", "multiple", "misidentified")}
        print(f"True pairing (row i of Y is record i of X): correctly linked {c['correct']} "
              f"({100 * c['correct'] / n:.1f}%), true record among several {c['multiple']} "
              f"({100 * c['multiple'] / n:.1f}%), misidentified {c['misidentified']} ({100 * c['misidentified'] / n:.1f}%)")
    if n <= 50:
        paired = report.outcomes is not None
        rows = [
            [str(r["record"]), str(r["distance"]),
             " ".join(map(str, r["matches"][:6])) + (" ..." if len(r["matches"]) > 6 else ""),
             figure(r["p_value"]), "yes" if r["confidently_linked"] else "no", *([r["outcome"]] if paired else [])]
            for r in records
        ]
        header = ["record", "d", "matches in Z", "p-value", "confident", *(["outcome"] if paired else [])]
        print("\n" + _table(rows, header))
    else:
        print("(use --json for every record's distance, matches and p-value)")
    if linked == 0:
        print("\nVerdict: no link is closer than chance explains at this alpha: "
              "the release withstands the known-plaintext attack.")
    else:
        print(f"\nVerdict: {linked} record(s) are linked more closely than chance explains; "
              "an intruder can be confident of those links.")
    if args.max_linked_share is not None:
        word = "met" if passed else "NOT MET"
        print(f"Check: confidently linked share {report.confidently_linked_share:.4f} <= {args.max_linked_share:g}: {word}")


def _subject_intruder(args: argparse.Namespace, options: dict[str, Any]) -> int:
    from verifier.attacks.intruder import subject_test
    from verifier.releases.record import read_record, refuse_record_on_command_line

    refuse_record_on_command_line(args.subject_record)
    schema = load_schema(args.schema) if args.schema else None
    y = read_table(args.anonymized, schema)
    record = read_record(args.subject_record, y.schema)
    _check_exhaustive(y.n_records, y.n_attributes, args)
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
        "p_value": _finite(report.p_value),
        "p_value_interval": [_finite(report.p_value_low), _finite(report.p_value_high)],
        "confidently_linked": report.confidently_linked,
        "random_distribution": _as_dict(random.pmf, random.pmf.size),
        "random": _random_json(random),
    }
    if args.json:
        _print_json(out)
        return ExitCode.OK if passed else ExitCode.CHECK_FAILED
    print(f"Your record against {args.anonymized} ({y.n_records} records, {y.n_attributes} attributes):")
    print(f"  permutation distance d = {report.distance}; {matches.size} released record(s) match at that distance")
    print(f"\nRandom-match test: {_how(random, y.n_records, y.n_attributes, args.seed)}")
    interval = [] if random.exact else [f"{100 * random.confidence:g}% interval"]
    print(_table(_histogram_rows(None, random), ["d", "random", "random <= d", *interval, "= random"], left=(0, -1)))
    interval = "" if random.exact else f" (95% interval {report.p_value_low:.4f} to {report.p_value_high:.4f})"
    print(f"\nYour p-value F_rand({report.distance}) = {report.p_value:.4f}{interval}:")
    print(f"  {_p_in_words(report.p_value, report.alpha)}.")
    return ExitCode.OK if passed else ExitCode.CHECK_FAILED


# ----------------------------------------------------------------------------- verify and audit


def _verified(args: argparse.Namespace):
    """Verify the release directory against the user's key; the key never comes from the release."""
    from verifier.releases.subject import open_release

    if not args.key:
        raise UsageError(
            "give the trusted public key with --key public.pem (a key inside a release proves nothing)",
            path=args.release, reason="NO_TRUSTED_KEY",
        )
    return open_release(args.release, args.key, fingerprint=args.fingerprint, dataset_id=args.dataset_id,
                        min_version=args.min_version)


def _method_text(step: dict) -> str:
    params = ", ".join(f"{k}={json.dumps(v)}" for k, v in (step.get("parameters") or {}).items() if v is not None)
    return f"{step.get('method')}({params})"


def _cmd_verify(args: argparse.Namespace) -> int:
    from verifier.releases.subject import WITHHELD, claims_summary

    release = _verified(args)
    claims = release.claims
    if args.json:
        _print_json({
            "verified": True, "release": release.path, "fingerprint": release.key.fingerprint,
            "key_id": release.key.key_id, "dataset_id": release.dataset_id, "release_version": release.release_version,
            "created_at": release.created_at, "methods": release.methods,
            "data_file": {"name": release.data_name, "size": len(release.data)}, "claims": claims,
        })
        return ExitCode.OK
    print(f"OK: {release.path}")
    print(f"  signed by the key you trust, fingerprint {release.key.fingerprint}")
    print(f"  dataset {json.dumps(release.dataset_id)}, release version {release.release_version}, "
          f"created {json.dumps(release.created_at)}")
    for step in release.methods:
        print(f"  method: {_method_text(step)}")
    print(f"  withheld: {WITHHELD}")
    print(f"  claims: {claims_summary(release)}")
    return ExitCode.OK


def _cmd_audit(args: argparse.Namespace) -> int:
    from verifier.releases.audit import audit_release, write_report

    release = _verified(args)
    original = read_table(args.original, release.schema()) if args.original else None
    result = audit_release(release, original)
    written = write_report(result, args.report) if args.report else []
    if args.json:
        _print_json({**result.to_json(), "report": written})
    else:
        print(f"OK: {release.path} verifies (fingerprint {release.key.fingerprint}); auditing its claims"
              + (" with the original" if original is not None else " from the release alone"))
        rows = [[c.name, _claim_text(c.claimed), _claim_text(c.computed), "true" if c.ok else "FALSE"] for c in result.checks]
        print(_table(rows, ["claim", "manifest", "recomputed", "verdict"]))
        for c in result.checks:
            if not c.ok:
                print(f"FALSE: {c.name}: {c.note or 'the figures differ'}")
        if result.unchecked:
            print("not checked: " + ", ".join(result.unchecked))
        for path in written:
            print(f"wrote {path}")
    return ExitCode.OK if result.passed else ExitCode.CHECK_FAILED


def _cmd_check(args: argparse.Namespace) -> int:
    """A subject's report on her own record (SPEC sections 4, 5 subject's version, 6)."""
    from verifier.releases.record import read_record, refuse_record_on_command_line
    from verifier.releases.subject import check_record, prepare, random_match

    refuse_record_on_command_line(args.record)
    release = _verified(args)
    prepared = prepare(release)
    record = read_record(args.record, prepared.schema)
    check = check_record(prepared, record)
    options = _intruder_options(args)
    if args.no_random_match:
        report = None
    else:
        _check_exhaustive(prepared.n_records, len(prepared.kinds), args)
        report = random_match(prepared, check, alpha=options["alpha"], samples=options["samples"],
                              seed=options["random_state"], progress=ProgressBar("random-match test"))
    out = check.to_json(report)
    if args.json:
        _print_json(out)
        return ExitCode.OK
    names = check.names
    print(f"OK: {release.path} verifies (fingerprint {release.key.fingerprint}): dataset "
          f"{json.dumps(release.dataset_id)}, version {release.release_version}")
    print("\n" + "\n".join(out["verdict"]) + "\n")
    rows = [[str(m), *[str(t) for t in dev]] for m, dev in zip(out["matches"][:20], out["deviations"][:20])]
    print(_table(rows, ["match", *[f"dev {json.dumps(n)}" for n in names]]))
    if len(out["matches"]) > 20:
        print(f"... and {len(out['matches']) - 20} more (use --json)")
    claimed = out["claimed"]
    spread_rows = []
    for j, n in enumerate(names):
        at_d = out["variances_at_claimed_distance"][j] if out["variances_at_claimed_distance"] else None
        v = claimed["variances"][j] if claimed["variances"] and j < len(claimed["variances"]) else None
        spread_rows.append([json.dumps(n), figure(out["variances"][j]), figure(at_d), figure(v)])
    print("\n" + _table(spread_rows, ["attribute", f"spread at your d = {check.distance}",
                                       f"at claimed D = {claimed['distance']}", "claimed v"]))
    if report is not None:
        print(f"\nYour p-value F_rand({check.distance}) = {report.p_value:.4f} "
              f"({report.random.method.replace('_', ' ')}, {report.random.total} random records)")
    return ExitCode.OK


def _cmd_tui(args: argparse.Namespace) -> int:
    """The subject's TUI (SPEC section 10.1); Textual is imported only here."""
    if not 0 < args.alpha < 1:
        raise UsageError("--alpha is a number strictly between 0 and 1")
    if args.samples < 1:
        raise UsageError("--samples is a positive integer")
    if args.record is not None:
        from verifier.releases.record import refuse_record_on_command_line

        refuse_record_on_command_line(args.record)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("the TUI needs a terminal; `verifier check` gives the same report without one",
                         reason="NO_TERMINAL")
    from verifier.tui import SubjectApp

    app = SubjectApp(args.release, args.key, fingerprint=args.fingerprint, record_path=args.record,
                     alpha=args.alpha, samples=args.samples, verbose=args.verbose)
    app.run()
    return int(app.return_code or 0)


def _claim_text(v) -> str:
    """A claimed or recomputed figure for people; a signed manifest may still hold any JSON."""
    if v is None:
        return "-"
    if isinstance(v, list):
        return "[" + ", ".join(_claim_text(t) for t in v) + "]"
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return json.dumps(v)  # strings quoted, control characters escaped
    if isinstance(v, (int, np.integer)):
        return str(v)
    return figure(v)


# ----------------------------------------------------------------------------- demo


def _cmd_demo(args: argparse.Namespace) -> int:
    """Run the paper's running example end to end with the real commands."""
    data = resources.files("verifier") / "data" / "paper"
    with resources.as_file(data) as folder:
        original, masked = str(folder / "original.csv"), str(folder / "masked.csv")
        out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="permuted-privacy-demo-"))
        out_dir.mkdir(parents=True, exist_ok=True)
        z_path = str(out_dir / "reverse_mapped.csv")
        steps = [
            ("Reverse mapping (paper 003, Algorithm 1): what is left of the masking once the permutation is taken out",
             ["reverse-map", "--original", original, "--anonymized", masked, "--out", z_path]),
            ("The subject who contributed record 3 computes her permutation distance (Algorithm 2, Table 3)",
             ["distance", "--original", original, "--anonymized", masked, "--record", "3"]),
            ("The protector checks (1, v)-permuted privacy of the whole data set (Definition 2, Table 4)",
             ["distance", "--original", original, "--anonymized", masked, "--d", "1", "--v", "0.001,10,30"]),
            ("The maximum-knowledge intruder links every record and tests the links against chance (Tables 5-6)",
             ["intruder", "--original", original, "--anonymized", masked, "--max-linked-share", "0.01"]),
        ]
        for title, argv in steps:
            print(f"\n=== {title}\n$ verifier {' '.join(argv)}\n", flush=True)
            code = main(argv)
            if code != ExitCode.OK:
                return code
    print(f"\nThe reverse-mapped table is in {z_path}.")
    return ExitCode.OK


# ----------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # SUPPRESS: a subcommand must not reset a -v given before it
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show a traceback on failure")
    parser = argparse.ArgumentParser(
        prog="verifier",
        allow_abbrev=False,
        description="Check an anonymized release: permutation distance, (d,v)-permuted privacy, reverse mapping.",
        epilog="Exit codes: 0 passed, 1 a check failed, 2 usage error, 3 invalid input data, 4 I/O failure.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(required=True, dest="command", metavar="COMMAND")

    def pair(p: argparse.ArgumentParser) -> None:
        p.add_argument("--original", required=True, metavar="X.csv", help="the original table X (CSV or Parquet)")
        p.add_argument("--anonymized", required=True, metavar="Y.csv", help="the anonymized table Y, same columns")
        p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")

    p = sub.add_parser(
        "reverse-map", parents=[common], allow_abbrev=False, help="reverse-map Y onto X (paper 003, Algorithm 1)",
        description="Write Z: each value of Y replaced by the value of X with the same rank (SPEC section 3). "
        "Prints per attribute the rank correlation of X and Z and the noise |Y-Z| beside |Y-X|.",
    )
    pair(p)
    p.add_argument("--out", required=True, metavar="Z.csv", help="where to write Z (written atomically)")
    p.add_argument("--seed", type=int, default=0, help="breaks ties among Y's values: the intruder's own randomness")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_reverse_map)

    p = sub.add_parser(
        "distance", parents=[common], allow_abbrev=False, help="permutation distance and (d,v)-permuted privacy (paper 003, Def. 1-2)",
        description="For every original record (or one), its permutation distance to Y, the matching released "
        "records and their rank deviations, and the spread of the windows around it; then the data-set level "
        "(D, v) (SPEC section 4). With --d and --v, check (d, v)-permuted privacy and exit 1 if it does not hold.",
    )
    pair(p)
    p.add_argument("--record", type=int, metavar="N", help="only record N of X (numbered from 1)")
    p.add_argument("--d", type=int, metavar="D", help="check: permutation distance at least D")
    p.add_argument("--v", metavar="V1,V2,...", help="check: spread above v_j for every attribute (one value for all)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_distance)

    p = sub.add_parser(
        "intruder", parents=[common], allow_abbrev=False,
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
    p.add_argument("--samples", type=int, default=10_000, metavar="N", help="Monte Carlo draws (default 10000)")
    p.add_argument("--exhaustive-limit", type=int, default=10**6, metavar="N",
                   help="enumerate every combination when n^m is at most N (default 1000000)")
    p.add_argument("--seed", type=int, default=0,
                   help="the intruder's own randomness: Y's tie-break and the random draws (default 0; not a secret)")
    p.add_argument("--unpaired", action="store_true",
                   help="Y's rows are not in X's order (a shuffled release): skip the correct/misidentified shares")
    p.add_argument("--max-linked-share", type=float, metavar="S",
                   help="check: exit 1 if more than this share of records is confidently linked "
                   "(with --subject-record: if her record is)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_intruder)

    def release_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("release", metavar="DIR", help="the release directory")
        p.add_argument("--key", metavar="public.pem",
                       help="the publisher's public key, obtained out of band (never from the release)")
        p.add_argument("--fingerprint", metavar="SHA256", help="also require the key's fingerprint to be this")
        p.add_argument("--dataset-id", metavar="ID", help="refuse a release of another dataset")
        p.add_argument("--min-version", type=int, metavar="N", help="refuse a release older than version N (rollback)")
        p.add_argument("--json", action="store_true", help="machine-readable output on stdout")

    p = sub.add_parser(
        "verify", parents=[common], allow_abbrev=False, help="verify a signed release (SPEC section 9)",
        description="Check the release's signature with the key you trust, its manifest, and every file's size and "
        "digest, in the order of SPEC section 9; print who signed what, and every parameter.",
        epilog="Exit codes: 0 verified, 1 not trustworthy (FAIL line with the reason), 2 usage error (no --key), "
        "4 the key file is unusable.",
    )
    release_args(p)
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser(
        "audit", parents=[common], allow_abbrev=False, help="verify a release and recompute its claims",
        description="Verify, then recompute every claim of the manifest that the given data allow: from the release "
        "alone the record count and k; with --original also (D, v), the intruder's figures and the utility figures.",
        epilog="Exit codes: 0 every checked claim is true, 1 verification failed or a claim is false, 2 usage error, "
        "3 invalid original table, 4 I/O failure.",
    )
    release_args(p)
    p.add_argument("--original", metavar="X.csv", help="the original table, for an auditor entitled to it")
    p.add_argument("--report", metavar="audit.md", help="write a Markdown report with PNG plots beside it")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser(
        "check", parents=[common], allow_abbrev=False, help="check your own record against a verified release",
        description="Verify the release, then compute your permutation distance, the released records that match "
        "you and their deviations, the variances around your record against the publisher's claimed (D, v), "
        "your attribute disclosure risk, and your random-match test, with a verdict in plain words. Your record "
        "is read from a file (JSON object or one-row CSV), never from the command line, and never written.",
        epilog="Exit codes: 0 checked, 1 the release does not verify, 2 usage error, 3 invalid record, 4 key file "
        "unusable.",
    )
    release_args(p)
    p.add_argument("--record", required=True, metavar="my_record.json", help="your own record (a file)")
    p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a match is confident")
    p.add_argument("--samples", type=int, default=10_000, metavar="N", help="Monte Carlo draws (default 10000)")
    p.add_argument("--exhaustive-limit", type=int, default=10**6, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help="the random-match test's own randomness (default 0)")
    p.add_argument("--no-random-match", action="store_true", help="skip the random-match test")
    p.set_defaults(func=_cmd_check, exhaustive=False, monte_carlo=False, max_linked_share=None)

    p = sub.add_parser(
        "tui", parents=[common], allow_abbrev=False, help="check your own record in a terminal interface",
        description="Open a release with the publisher's public key, see the verification result, enter your "
        "record in a form generated from the signed schema (or load a record file), and see your permutation "
        "distance, matching records, spreads against the claimed (D, v) and your own thresholds, attribute "
        "disclosure and the random-match test. Keyboard only; F1 shows help. Your record is never given on the "
        "command line and never written unless you export your report.",
        epilog="Exit codes: 0 done, 1 the last release opened did not verify, 2 usage error, 4 the TUI stopped on "
        "an unexpected error (one line on stderr; with --verbose also the traceback, without local variables).",
    )
    p.add_argument("release", nargs="?", metavar="DIR", help="the release directory (or type it in the TUI)")
    p.add_argument("--key", metavar="public.pem", help="the publisher's public key, obtained out of band")
    p.add_argument("--fingerprint", metavar="SHA256", help="also require the key's fingerprint to be this")
    p.add_argument("--record", metavar="my_record.json", help="load your record from this file once verified")
    p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a match is confident")
    p.add_argument("--samples", type=int, default=10_000, metavar="N", help="Monte Carlo draws (default 10000)")
    p.set_defaults(func=_cmd_tui)

    p = sub.add_parser(
        "demo", parents=[common], allow_abbrev=False, help="run the paper's running example with the commands above",
        description="Reverse-map, compute the permutation distance of record 3 and of the whole data set, then run "
        "the maximum-knowledge intruder's test, on the running example of paper 003 shipped with the package.",
    )
    p.add_argument("--out", metavar="DIR", help="where to write the demo's outputs (default: a new temporary folder)")
    p.set_defaults(func=_cmd_demo)
    return parser


def run_parsed(args: argparse.Namespace) -> int:
    """Run a parsed subcommand: ``FAIL:`` line and exit code on our own errors.

    Shared with the ``publisher`` command line. Only the project's own errors
    are caught; a traceback is shown for them only with ``--verbose``.
    """
    args.verbose = getattr(args, "verbose", False)
    stdout = sys.stdout
    if getattr(args, "command", None) != "tui":  # the TUI draws the terminal itself
        sys.stdout = LiteralStream(stdout)
    try:
        return int(args.func(args))
    except VerifierError as exc:
        if args.verbose:
            raise
        print(exc.diagnostic(), file=sys.stderr)
        return exc.exit_code
    except MemoryError:
        if args.verbose:
            raise
        print("FAIL: -: OUT_OF_MEMORY: not enough memory for this table", file=sys.stderr)
        return ExitCode.IO_ERROR
    finally:
        sys.stdout = stdout


_RECORD_COMMANDS = {"check", "tui"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        if getattr(args, "command", None) in _RECORD_COMMANDS or getattr(args, "subject_record", None):
            # argparse would echo the extra words, and they may be her values
            print(f"FAIL: -: RECORD_ON_COMMAND_LINE: {len(extra)} unexpected argument(s), not shown; your record is "
                  "read from a file (--record) or typed in the TUI, never given on the command line, where the "
                  "shell history and the process list would keep it", file=sys.stderr)
            return ExitCode.USAGE
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return run_parsed(args)
