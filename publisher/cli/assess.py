"""``publisher assess``: the pre-release test of an anonymized table against the original (SPEC sections 4-6, 8)."""

from __future__ import annotations

import argparse

from publisher.cli.common import add_intruder_args, load_input
from verifier.data.bounded_files import read_bounded
from verifier.data.schema import Schema
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.data.tables import read_csv_cells, read_table
from verifier.errors import InvalidInputError
from verifier.frontend import (
    Phases,
    ProgressBar,
    UsageError,
    add_command,
    add_engine_args,
    check_positive,
    check_probability,
    engine_client,
    print_json,
    text_table,
    count,
)
from verifier.text import figure, number, plural

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "assess", run=run, help="assess an anonymized table before release",
        description="Data-set (D, v)-permuted privacy (SPEC section 4), the maximum-knowledge intruder's test "
        "(section 5) and the utility figures (section 8) of Y against X.",
    )
    p.add_argument("--original", required=True, metavar="X.csv")
    p.add_argument("--anonymized", required=True, metavar="Y.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    p.add_argument("--paired", action="store_true",
                   help="row i of Y anonymizes row i of X (anonymize --keep-order): adds correct-link and |Y-X| figures")
    add_intruder_args(p)
    p.add_argument("--exhaustive-limit", type=count("exhaustive_limit"), default=10**6, metavar="N",
                   help="enumerate every random record when n^m is at most N (default 1000000)")
    p.add_argument("--intruder-seed", type=count("seed"), default=0, metavar="N",
                   help="the intruder's own randomness (public; default 0)")
    p.add_argument("--generalized", action="store_true",
                   help="Y holds generalized values ([25,45], {a,b}, hierarchy nodes): k, NCP, DM and group-based "
                   "disclosure instead of ranks")
    p.add_argument("--hierarchies", metavar="FILE",
                   help="the hierarchy file the release was generalized with (implies --generalized; adds DR)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    add_engine_args(p, what="the permutation distances and the intruder run on the cluster, with the same "
                    "results; the tables and the figures computed from the results stay here")


def run(args: argparse.Namespace) -> int:
    # the assessment and its kernels load when it runs, not when any command starts
    from verifier.attacks.assessment import assess
    from verifier.distributed.searches import ClusterSearches

    check_probability("--alpha", args.alpha)
    check_positive("--samples", args.samples)
    x, schema = load_input(args.original, args.schema)
    if args.generalized or args.hierarchies:
        if args.engine != "local":
            raise UsageError("a generalized release has no ranks to search: --engine dask goes without --generalized")
        return _assess_generalized(args, x, schema)
    try:
        y = read_table(args.anonymized, schema)
    except InvalidInputError as exc:
        if exc.reason in ("VALUE_NOT_NUMERIC", "CATEGORY_UNKNOWN"):
            exc.message += " (a generalized release, such as sd_k_anonymity's? add --generalized)"
        raise
    if x.n_records != y.n_records:
        raise InvalidInputError(
            f"has {y.n_records} records and the original {x.n_records}; a release has one row per subject",
            path=args.anonymized, reason="SHAPE_MISMATCH",
        )
    with engine_client(args) as client:
        searches = None if client is None else ClusterSearches(client, phase=Phases())
        result = assess(x.values, y.values, schema, paired=args.paired, alpha=args.alpha, samples=args.samples,
                        exhaustive_limit=args.exhaustive_limit, random_state=args.intruder_seed,
                        progress=ProgressBar("random-match test"), searches=searches)
    out = {**result.to_json(), "engine": args.engine}
    if args.json:
        print_json(out)
    else:
        _print_assessment(out, args)
    return 0



def _assess_generalized(args: argparse.Namespace, x, schema: Schema) -> int:
    """SPEC sections 6 and 8 for a generalized release: k, NCP, DM, DR, group-based disclosure."""
    from verifier.attacks.classes import group_claims, read_published
    from verifier.attacks.generalized import assess_generalized

    header, columns = read_csv_cells(args.anonymized)
    missing = [n for n in schema.names if n not in header]
    if missing:
        raise InvalidInputError(f"column {missing[0]!r} of the schema is not in the file", path=args.anonymized,
                                reason="COLUMN_MISSING")
    published = {h: col for h, col in zip(header, columns)}
    if len(published[schema.names[0]]) != x.n_records:
        raise InvalidInputError(f"has {len(published[schema.names[0]])} records and the original {x.n_records}",
                                path=args.anonymized, reason="SHAPE_MISMATCH")
    frame = x.to_frame()
    hierarchies = None
    if args.hierarchies:
        try:
            hierarchies = loads_strict(read_bounded(args.hierarchies, "hierarchies"))
        except StrictJSONError as exc:
            raise InvalidInputError(f"cannot read the hierarchies: {exc}", path=args.hierarchies,
                                    reason="HIERARCHY_INVALID") from None
    result = assess_generalized({n: frame[n].tolist() for n in schema.names}, published, schema,
                                hierarchies=hierarchies)
    # one definition per figure: the release's claims come from its published classes (verifier.attacks.classes),
    # as the signed manifest and `publisher anonymize` give them; the original records' risks are a utility figure
    cells = read_published(schema, header, columns, hierarchies=hierarchies, path=args.anonymized)
    result["attribute_disclosure_of_original_records"] = result["attribute_disclosure"]
    result["attribute_disclosure"] = group_claims(cells)["attribute_disclosure"]
    out = {"generalized": True, "attributes": schema.names, **result}
    if args.json:
        print_json(out)
        return 0
    print(f"Assessment of the generalized release {args.anonymized} against {args.original}: "
          f"{result['n_records']} records ({result['note']})")
    print(f"  k = {result['k']} ({plural(result['classes'], 'class', plural_form='classes')} of identical published "
          "QI values)")
    print(f"  NCP {number(result['ncp'])}, data utility {number(result['data_utility'])}, "
          f"discernibility DM {result['discernibility']}")
    for key in ("qi_distortion_ratio", "sa_distortion_ratio"):
        if key in result:
            print(f"  {key.replace('_', ' ')}: {number(result[key])}")
    for name, r in result["attribute_disclosure"].items():
        print(f"  attribute disclosure of {name} (group-based, from the published classes): max "
              f"{number(r['max'])}, mean {number(r['mean'])}, guessed with certainty for "
              f"{number(r['certain_share'], share=True)} of records")
    return 0



def _print_assessment(a: dict, args: argparse.Namespace) -> None:
    pp, it, u = a["permuted_privacy"], a["intruder"], a["utility"]
    names = a["attributes"]
    print(f"Assessment of {args.anonymized} against {args.original}: {a['n_records']} records, {len(names)} attributes"
          + ("" if a["paired"] else " (rows not paired: figures that need the true pairing are left out)"))
    print(f"\nPermuted privacy (SPEC section 4): D = {pp['distance']}, v = ("
          + ", ".join(figure(v) for v in pp["variances"]) + ")")
    print(f"\nIntruder (section 5; {it['random_method'].replace('_', ' ')}, {it['random_records']} random records):")
    print(f"  confidently linked (p < {it['alpha']:g}): {number(it['confidently_linked_share'], share=True)} of records")
    print(f"  Hellinger distance, original vs random link distances: {number(it['hellinger'])}")
    if a["paired"]:
        print(f"  correctly linked {number(it['correct_link_share'], share=True)}, true record among several "
              f"{number(it['multiple_match_share'], share=True)}, misidentified "
              f"{number(it['misidentified_share'], share=True)}")
    print("\nUtility (section 8):")
    rows = []
    for n in names:
        e = u["attributes"][n]
        rows.append([n, figure(e.get("mean_original")), figure(e.get("mean_anonymized")), figure(e.get("variance_original")),
                     figure(e.get("variance_anonymized")), number(e.get("rank_correlation")),
                     figure(e.get("mean_abs_y_x")), figure(e.get("mean_abs_y_z"))])
    print(text_table(rows, ["attribute", "mean X", "mean Y", "var X", "var Y", "rank corr X~Z", "mean |Y-X|", "mean |Y-Z|"]))
    print(f"  largest change of a correlation: {number(u['max_abs_correlation_change'])}")
    if u["distortion"] is not None:
        print(f"  distortion, mean |Y-X| / sd(X) over attributes: {number(u['distortion'])}")
    if a["attribute_disclosure"]:
        print("\nAttribute disclosure risk (section 6): the chance an attacker who knows a record's QIs predicts its "
              "sensitive value")
        for name, r in a["attribute_disclosure"].items():
            print(f"  {name} ({r['mode']}-based, {number(r['mean_candidates'])} candidates on average): "
                  f"max {number(r['max'])}, mean {number(r['mean'])}")

