"""The ``publisher`` command line: what a data protector runs.

Exit codes as the verifier's (SPEC section 10): 0 done, 1 a check failed,
2 usage error, 3 invalid input data, 4 environment or I/O failure. A failure
prints one line ``FAIL: <path>: <REASON_CODE>: <sentence>`` on stderr.
"""

from __future__ import annotations

import argparse
import getpass
import json
import shlex
import sys
from pathlib import Path
from typing import Sequence

from publisher import __version__
from publisher.schema_infer import infer_schema
from verifier.text import figure
from verifier.cli import ProgressBar, UsageError, _print_json, _same_file, _table, run_parsed
from verifier.errors import InputIOError, InvalidInputError
from verifier.data.tables import read_table, write_atomic, write_csv_atomic
from verifier.data.schema import Schema, load_schema

__all__ = ["main"]


def _cmd_schema(args: argparse.Namespace) -> int:
    schema = infer_schema(args.input, sensitive=args.sensitive, other=args.other)
    text = json.dumps(schema.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        if Path(args.out).exists() and not args.force:
            raise InputIOError("already exists; pass --force to replace it", path=args.out, reason="OUTPUT_EXISTS")
        write_atomic(args.out, lambda handle: handle.write(text))
        kinds = ", ".join(f"{a.name}: {a.kind}" for a in schema.attributes)
        print(f"wrote {args.out} ({kinds}); review the kinds, roles and category orders before you publish it",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


# ----------------------------------------------------------------------------- shared


def _load_input(path: str, schema_path: str | None):
    schema = load_schema(schema_path) if schema_path else None
    table = read_table(path, schema)
    return table, table.schema


def _check_out(out: str, inputs: Sequence[str], force: bool) -> None:
    for given in inputs:
        if given and _same_file(out, given):
            raise UsageError(f"--out would overwrite the input {given}", path=out)
    if Path(out).exists() and not force:
        raise InputIOError("already exists; pass --force to replace it", path=out, reason="OUTPUT_EXISTS")


def _split_param(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"--param takes name=value, got {text!r}")
    return name.strip(), value.strip()


def _route_params(methods: Sequence[str], texts: Sequence[str]) -> list[dict[str, str]]:
    """Give each ``name=value`` to the method of the chain that has that parameter.

    ``method.name=value`` names the method outright; a bare name that several
    methods of the chain accept is refused as ambiguous.
    """
    from publisher.methods import known_methods

    METHODS = known_methods()

    for m in methods:
        if m not in METHODS:
            raise InvalidInputError(f"unknown method {m!r}; known: {', '.join(sorted(METHODS))}", reason="METHOD_UNKNOWN")
    routed: list[dict[str, str]] = [{} for _ in methods]
    for text in texts:
        name, value = _split_param(text)
        owner, dot, bare = name.rpartition(".")
        if dot:
            if owner not in methods:
                raise UsageError(f"--param {name}: {owner!r} is not a method of this run")
            routed[methods.index(owner)][bare] = value
            continue
        takers = [k for k, m in enumerate(methods) if name in METHODS[m].parsers]
        if len(takers) > 1:
            raise UsageError(f"--param {name} fits several methods; write method.{name}=value")
        if not takers:
            raise InvalidInputError(
                f"{' then '.join(methods)} has no parameter {name!r}", reason="PARAMETER_UNKNOWN"
            )
        routed[takers[0]][name] = value
    return routed


def _seed(args: argparse.Namespace) -> int | None:
    """The secret seed: ``--seed``, else ``None`` (fresh OS entropy). Never printed."""
    if args.seed is not None and args.seed < 0:
        raise UsageError("--seed must be a non-negative integer")
    return args.seed


# ----------------------------------------------------------------------------- anonymize


def _cmd_anonymize(args: argparse.Namespace) -> int:
    from publisher.methods import anonymize, frame_rows, make_method

    methods = [args.method, *args.then]
    _check_out(args.out, [args.input, args.schema], args.force)
    routed = _route_params(methods, args.param)
    chain = [make_method(m, p, allow_degenerate=args.allow_degenerate) for m, p in zip(methods, routed)]
    table, schema = _load_input(args.input, args.schema)
    result = anonymize(table.to_frame(), schema, chain, random_state=_seed(args))
    frame = result.table if args.keep_order else result.released
    write_csv_atomic(args.out, schema.names, frame_rows(frame, schema))
    first = result.steps[0]
    out = {"method": first["method"], "parameters": first["parameters"], "metrics": first["metrics"],
           "steps": result.steps, "output": args.out, "rows_shuffled": not args.keep_order,
           "randomness": result.randomness}
    if args.keep_order:
        print(f"note: {args.out} keeps the original row order for experiments; never publish it", file=sys.stderr)
    if args.json:
        _print_json(out)
    else:
        print(f"wrote {args.out}: {len(frame)} records, {'original row order' if args.keep_order else 'rows shuffled'}")
        print(f"  randomness: {result.randomness}")
        for step in result.steps:
            params = ", ".join(f"{k}={json.dumps(v)}" for k, v in step["parameters"].items() if v is not None)
            print(f"  {step['method']}({params})")
            for k, v in step["metrics"].items():
                print(f"    {k}: {json.dumps(v)}")
    return 0


# ----------------------------------------------------------------------------- assess


def _cmd_assess(args: argparse.Namespace) -> int:
    from verifier.attacks.assessment import assess

    if not 0.0 < args.alpha < 1.0:
        raise UsageError(f"--alpha must be strictly between 0 and 1, got {args.alpha}")
    if args.samples < 1:
        raise UsageError(f"--samples must be at least 1, got {args.samples}")
    x, schema = _load_input(args.original, args.schema)
    if args.generalized or args.hierarchies:
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
    result = assess(x.values, y.values, schema, paired=args.paired, alpha=args.alpha, samples=args.samples,
                    exhaustive_limit=args.exhaustive_limit, random_state=args.intruder_seed,
                    progress=ProgressBar("random-match test"))
    out = result.to_json()
    if args.json:
        _print_json(out)
    else:
        _print_assessment(out, args)
    return 0


def _assess_generalized(args: argparse.Namespace, x, schema: Schema) -> int:
    """SPEC sections 6 and 8 for a generalized release: k, NCP, DM, DR, group-based disclosure."""
    from verifier.attacks.generalized import assess_generalized
    from verifier.data.tables import read_csv_cells

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
        from verifier.data.strict_json import StrictJSONError, loads_strict

        try:
            hierarchies = loads_strict(Path(args.hierarchies).read_bytes())
        except (OSError, StrictJSONError) as exc:
            raise InvalidInputError(f"cannot read the hierarchies: {exc}", path=args.hierarchies,
                                    reason="HIERARCHY_INVALID") from None
    result = assess_generalized({n: frame[n].tolist() for n in schema.names}, published, schema,
                                hierarchies=hierarchies)
    out = {"generalized": True, "attributes": schema.names, **result}
    if args.json:
        _print_json(out)
        return 0
    print(f"Assessment of the generalized release {args.anonymized} against {args.original}: "
          f"{result['n_records']} records ({result['note']})")
    print(f"  k = {result['k']} ({result['classes']} classes of identical published QI values)")
    print(f"  NCP {figure(result['ncp'], 3)}, data utility {figure(result['data_utility'], 3)}, "
          f"discernibility DM {result['discernibility']}")
    for key in ("qi_distortion_ratio", "sa_distortion_ratio"):
        if key in result:
            print(f"  {key.replace('_', ' ')}: {figure(result[key], 3)}")
    for name, r in result["attribute_disclosure"].items():
        print(f"  attribute disclosure of {name} (group-based, {figure(r['mean_candidates'], 3)} candidates on "
              f"average): max {figure(r['max'], 3)}, mean {figure(r['mean'], 3)}")
    return 0


def _print_assessment(a: dict, args: argparse.Namespace) -> None:
    pp, it, u = a["permuted_privacy"], a["intruder"], a["utility"]
    names = a["attributes"]
    print(f"Assessment of {args.anonymized} against {args.original}: {a['n_records']} records, {len(names)} attributes"
          + ("" if a["paired"] else " (rows not paired: figures that need the true pairing are left out)"))
    print(f"\nPermuted privacy (SPEC section 4): D = {pp['distance']}, v = ("
          + ", ".join(figure(v) for v in pp["variances"]) + ")")
    print(f"\nIntruder (section 5; {it['random_method'].replace('_', ' ')}, {it['random_records']} random records):")
    print(f"  confidently linked (p < {it['alpha']:g}): {100 * it['confidently_linked_share']:.2f}% of records")
    print(f"  Hellinger distance, original vs random link distances: {figure(it['hellinger'], 3)}")
    if a["paired"]:
        print(f"  correctly linked {100 * it['correct_link_share']:.1f}%, true record among several "
              f"{100 * it['multiple_match_share']:.1f}%, misidentified {100 * it['misidentified_share']:.1f}%")
    print("\nUtility (section 8):")
    rows = []
    for n in names:
        e = u["attributes"][n]
        rows.append([n, figure(e.get("mean_original")), figure(e.get("mean_anonymized")), figure(e.get("variance_original")),
                     figure(e.get("variance_anonymized")), figure(e.get("rank_correlation"), 3),
                     figure(e.get("mean_abs_y_x")), figure(e.get("mean_abs_y_z"))])
    print(_table(rows, ["attribute", "mean X", "mean Y", "var X", "var Y", "rank corr X~Z", "mean |Y-X|", "mean |Y-Z|"]))
    print(f"  largest change of a correlation: {figure(u['max_abs_correlation_change'], 3)}")
    if u["distortion"] is not None:
        print(f"  distortion, mean |Y-X| / sd(X) over attributes: {figure(u['distortion'], 3)}")
    if a["attribute_disclosure"]:
        print("\nAttribute disclosure risk (section 6): the chance an attacker who knows a record's QIs predicts its "
              "sensitive value")
        for name, r in a["attribute_disclosure"].items():
            print(f"  {name} ({r['mode']}-based, {figure(r['mean_candidates'], 3)} candidates on average): "
                  f"max {figure(r['max'], 3)}, mean {figure(r['mean'], 3)}")


# ----------------------------------------------------------------------------- calibrate


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from publisher.calibrate import Targets, calibrate, plot_frontier
    from publisher.methods import known_methods

    METHODS = known_methods()

    name, _, grid = args.param_grid.partition("=")
    values = [v.strip() for v in grid.split(",") if v.strip()]
    if not name or not values:
        raise UsageError(f"--param-grid takes name=v1,v2,..., got {args.param_grid!r}")
    if args.method not in METHODS:
        raise InvalidInputError(f"unknown method {args.method!r}; known: {', '.join(sorted(METHODS))}", reason="METHOD_UNKNOWN")
    if name not in METHODS[args.method].parsers:
        raise InvalidInputError(f"{args.method} has no parameter {name!r}", reason="PARAMETER_UNKNOWN")
    if args.plot:
        _check_out(args.plot, [args.input, args.schema], args.force)
    fixed = dict(_split_param(t) for t in args.param)
    targets = Targets(max_linked_share=args.max_linked_share, min_distance=args.min_distance,
                      max_distortion=args.max_distortion)
    table, schema = _load_input(args.input, args.schema)
    result = calibrate(
        table.to_frame(), schema, args.method, name, values, fixed=fixed, then=args.then, targets=targets,
        seed=_seed(args), alpha=args.alpha, samples=args.samples, allow_degenerate=args.allow_degenerate,
        progress=ProgressBar("calibration"),
    )
    if args.plot:
        plot_frontier(result, args.plot)
    if args.json:
        _print_json(result.to_json())
    else:
        rows = [[f"{r['value']:g}", str(r["distance"]), f"{100 * r['confidently_linked_share']:.2f}%",
                 f"{100 * r['correct_link_share']:.1f}%", figure(r["hellinger"], 3), figure(r["distortion"], 3),
                 figure(r["max_abs_correlation_change"], 3), figure(r["mean_rank_correlation"], 3),
                 "yes" if r["meets_targets"] else "no"] for r in result.frontier]
        print(f"Calibration of {args.method}{''.join(' then ' + t for t in args.then)} over {name} "
              f"({len(values)} values, {table.n_records} records):\n")
        print(_table(rows, [name, "D", "linked", "correct", "Hellinger", "distortion", "max corr change",
                            "rank corr X~Z", "meets targets"]))
        if result.chosen is None:
            print("\nNo value meets the targets; widen the grid or relax the targets.")
        else:
            print(f"\nChosen: {name} = {result.chosen['value']:g}, the least distorting value that meets the targets.")
        if args.plot:
            print(f"Frontier plot: {args.plot}")
    return 0 if result.chosen is not None else 1


# ----------------------------------------------------------------------------- keys and releases


def _read_passphrase_file(path: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputIOError(f"cannot read the passphrase file ({exc.strerror})", path=path, reason="FILE_UNREADABLE") from None
    passphrase = data.rstrip(b"\r\n")
    if not passphrase:
        raise InvalidInputError("the passphrase file is empty", path=path, reason="KEY_PASSPHRASE")
    return passphrase


def _prompt(text: str) -> bytes:
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the passphrase: give --passphrase-file FILE")
    return getpass.getpass(text).encode("utf-8")


def _cmd_keygen(args: argparse.Namespace) -> int:
    from publisher.release import keygen

    if args.unencrypted and args.passphrase_file:
        raise UsageError("--unencrypted and --passphrase-file exclude each other")
    if args.unencrypted:
        passphrase = None
    elif args.passphrase_file:
        passphrase = _read_passphrase_file(args.passphrase_file)
    else:
        passphrase = _prompt("passphrase for the new private key: ")
        if passphrase != _prompt("the same passphrase again: "):
            raise UsageError("the two passphrases differ")
        if not passphrase:
            raise UsageError("an empty passphrase; use --unencrypted to write an unencrypted key on purpose")
    private, public, fp, kid = keygen(args.out, passphrase)
    if args.json:
        _print_json({"private_key": str(private), "public_key": str(public), "fingerprint": fp, "key_id": kid,
                     "encrypted": passphrase is not None})
    else:
        print(f"wrote {private} (mode 0600{', encrypted' if passphrase else ', NOT encrypted'}) and {public}")
        print(f"fingerprint (SHA-256 of the public key): {fp}")
        print(f"key id (in-toto / TUF): {kid}")
        print("Publish the fingerprint where subjects can check it (your web site, the release notice).")
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    from publisher.methods import make_method
    from publisher.release import key_is_encrypted, load_private_key, make_release
    from verifier.releases.verification import load_public_key

    if Path(args.out).exists():
        raise InputIOError("already exists; a release is never overwritten", path=args.out, reason="OUTPUT_EXISTS")
    if args.release_version < 1:
        raise UsageError("--release-version is an integer from 1 up")
    methods = [args.method, *args.then]
    routed = _route_params(methods, args.param)
    chain = [make_method(m, p, allow_degenerate=args.allow_degenerate) for m, p in zip(methods, routed)]
    expected = load_public_key(args.public_key) if args.public_key else None
    passphrase = None
    if key_is_encrypted(args.key):
        passphrase = _read_passphrase_file(args.passphrase_file) if args.passphrase_file else _prompt("passphrase: ")
    elif args.passphrase_file:
        passphrase = _read_passphrase_file(args.passphrase_file)
    key = load_private_key(args.key, passphrase, expected=expected)
    table, _ = _load_input(args.input, args.schema)
    target = make_release(table, chain, key, args.out, dataset_id=args.dataset_id, release_version=args.release_version,
                          seed=_seed(args), alpha=args.alpha, samples=args.samples, progress=ProgressBar("assessment"),
                          data_format=args.data_format)
    from verifier.releases.verification import verify_release, TrustedKey

    verified = verify_release(target, TrustedKey(raw=key.public_raw, path=args.key))
    claims = verified.claims
    if args.json:
        _print_json({"release": str(target), "fingerprint": verified.key.fingerprint, "dataset_id": verified.dataset_id,
                     "release_version": verified.release_version, "methods": verified.methods, "claims": claims,
                     "randomness": verified.predicate["toolkit"].get("randomness")})
    else:
        print(f"released {target}: {claims['n_records']} records, dataset {verified.dataset_id!r} version {verified.release_version}")
        print(f"  signed by fingerprint {verified.key.fingerprint}")
        print(f"  randomness: {verified.predicate['toolkit'].get('randomness')} (the key or seed is not kept)")
        print(f"  D = {claims['permuted_privacy']['distance']}, confidently linked "
              f"{100 * claims['intruder']['confidently_linked_share']:.2f}% (alpha {claims['intruder']['alpha']:g}), k = {claims['k']}")
        print(f"Check it as a subject or auditor would: verifier verify {target} --key <public.pem>")
    return 0


# ----------------------------------------------------------------------------- demo


def _cmd_demo(args: argparse.Namespace) -> int:
    """The whole workflow on the paper's running example, with the real commands."""
    import tempfile
    from importlib import resources

    from verifier.cli import main as verifier_main

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="permuted-privacy-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise InputIOError("is not empty; the demo writes into an empty or new folder", path=str(out),
                           reason="OUTPUT_EXISTS")
    data = resources.files("verifier") / "data" / "paper"
    with resources.as_file(data) as folder:
        original = str(folder / "original.csv")
        keys, release = out / "keys", out / "release"
        record = out / "my_record.json"
        # the subject who contributed record 3 of paper 003's Table 1 keeps her own record
        record.write_text('{"x1": 100.87, "x2": 902.21, "x3": 5108.54}\n', encoding="utf-8")
        steps = [
            ("The protector makes a signing key (keep private.pem secret; publish the fingerprint)",
             ["keygen", "--out", str(keys), "--unencrypted"], "publisher"),
            ("She anonymizes (additive noise, then reverse mapping), assesses, signs and publishes",
             ["release", "--input", original, "--method", "additive_noise", "--param", "relative_sd=0.8",
              "--then", "reverse_mapping", "--key", str(keys / "private.pem"), "--public-key",
              str(keys / "public.pem"), "--dataset-id", "paper-example", "--out", str(release)], "publisher"),
            ("Anyone verifies the release with the published key",
             ["verify", str(release), "--key", str(keys / "public.pem")], "verifier"),
            ("An auditor entitled to the original recomputes every claim",
             ["audit", str(release), "--key", str(keys / "public.pem"), "--original", original,
              "--report", str(out / "audit.md")], "verifier"),
            ("The subject checks her own record against the verified release: distance, spreads, random-match test",
             ["check", str(release), "--key", str(keys / "public.pem"), "--record", str(record)], "verifier"),
        ]
        for title, argv, tool in steps:
            print(f"\n=== {title}\n$ {tool} {' '.join(argv)}\n", flush=True)
            code = (main if tool == "publisher" else verifier_main)(argv)
            if code != 0:
                return code
    print(f"\nEverything is in {out}: keys/, release/, audit.md with its plots, my_record.json.")
    script = Path(sys.executable).parent / "verifier"
    tui = [str(script) if script.exists() else "verifier", "tui", str(release), "--key", str(keys / "public.pem"),
           "--record", str(record)]
    print("\nThe subject's own view, in a terminal (F1 for help, Ctrl+Q to quit):\n$ " + shlex.join(tui))
    return 0


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # SUPPRESS: a subcommand must not reset a -v given before it
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="show a traceback on failure")
    parser = argparse.ArgumentParser(
        prog="publisher", allow_abbrev=False, parents=[common],
        description="Prepare an anonymized release of microdata that its subjects can check.",
        epilog="Exit codes: 0 done, 1 a check failed, 2 usage error, 3 invalid input data, 4 I/O failure.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(required=True, dest="command", metavar="COMMAND")
    p = sub.add_parser(
        "schema", parents=[common], allow_abbrev=False, help="draft the schema of an original table",
        description="Draft a schema (SPEC section 1) from a CSV file: all-number columns are numeric, others "
        "nominal with categories by decreasing frequency. Every column is a quasi-identifier unless named "
        "with --sensitive or --other.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--sensitive", action="append", default=[], metavar="COLUMN", help="a sensitive column (repeatable)")
    p.add_argument("--other", action="append", default=[], metavar="COLUMN", help="a column that is neither (repeatable)")
    p.add_argument("--out", metavar="schema.json", help="write here (default: stdout)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=_cmd_schema)

    def method_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--method", required=True, metavar="NAME",
                       help="additive_noise, rank_swapping, microaggregation (see docs/methods.md)")
        p.add_argument("--then", action="append", default=[], metavar="NAME",
                       help="a method chained after it, typically reverse_mapping (repeatable)")
        p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                       help="a parameter (repeatable); method.NAME=VALUE when several methods have it")
        p.add_argument("--seed", type=int, metavar="N",
                       help="the secret seed, to reproduce a run; default: fresh OS entropy. Never printed or written")
        p.add_argument("--allow-degenerate", action="store_true",
                       help="run parameters that give no protection (sd 0, k 1, p 0)")

    p = sub.add_parser(
        "anonymize", parents=[common], allow_abbrev=False, help="anonymize a table (for experiments)",
        description="Run a method (and the methods chained after it with --then) on X and write Y, rows shuffled "
        "with the secret seed (SPEC section 7). For experiments: a release is made with 'publisher release'.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    method_args(p)
    p.add_argument("--out", required=True, metavar="Y.csv", help="written atomically")
    p.add_argument("--keep-order", action="store_true",
                   help="keep X's row order, so that 'publisher assess --paired' can score the links (never publish it)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--json", action="store_true", help='print {"parameters": ..., "metrics": ..., "steps": [...]}')
    p.set_defaults(func=_cmd_anonymize)

    def intruder_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a link is confident (default 0.01)")
        p.add_argument("--samples", type=int, default=10_000, metavar="N",
                       help="random records of the intruder's test when n^m is too many to enumerate (default 10000)")

    p = sub.add_parser(
        "assess", parents=[common], allow_abbrev=False, help="assess an anonymized table before release",
        description="Data-set (D, v)-permuted privacy (SPEC section 4), the maximum-knowledge intruder's test "
        "(section 5) and the utility figures (section 8) of Y against X.",
    )
    p.add_argument("--original", required=True, metavar="X.csv")
    p.add_argument("--anonymized", required=True, metavar="Y.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    p.add_argument("--paired", action="store_true",
                   help="row i of Y anonymizes row i of X (anonymize --keep-order): adds correct-link and |Y-X| figures")
    intruder_args(p)
    p.add_argument("--exhaustive-limit", type=int, default=10**6, metavar="N",
                   help="enumerate every random record when n^m is at most N (default 1000000)")
    p.add_argument("--intruder-seed", type=int, default=0, metavar="N",
                   help="the intruder's own randomness (public; default 0)")
    p.add_argument("--generalized", action="store_true",
                   help="Y holds generalized values ([25,45], {a,b}, hierarchy nodes): k, NCP, DM and group-based "
                   "disclosure instead of ranks")
    p.add_argument("--hierarchies", metavar="FILE",
                   help="the hierarchy file the release was generalized with (implies --generalized; adds DR)")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_assess)

    p = sub.add_parser(
        "calibrate", parents=[common], allow_abbrev=False, help="sweep a parameter: the privacy/utility frontier",
        description="For each value of one parameter, anonymize X, assess the result, and report the frontier "
        "(SPEC section 8). The chosen value is the least distorting one that meets the targets; exit 1 if none does.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds and category orders (default: all numeric)")
    method_args(p)
    p.add_argument("--param-grid", required=True, metavar="NAME=V1,V2,...", help="the parameter to sweep and its values")
    intruder_args(p)
    p.add_argument("--max-linked-share", type=float, metavar="S", help="target: confidently linked share at most S")
    p.add_argument("--min-distance", type=int, metavar="D", help="target: data-set permutation distance D at least this")
    p.add_argument("--max-distortion", type=float, metavar="X", help="target: distortion at most X")
    p.add_argument("--plot", metavar="frontier.png", help="write the frontier as a PNG plot")
    p.add_argument("--force", action="store_true", help="replace an existing --plot file")
    p.add_argument("--json", action="store_true",
                   help='print {"frontier": [{"value": ..., "distance": ..., ...}], "chosen": ...}')
    p.set_defaults(func=_cmd_calibrate)

    p = sub.add_parser(
        "keygen", parents=[common], allow_abbrev=False, help="make the Ed25519 key pair that signs releases",
        description="Write DIR/private.pem (PKCS#8, encrypted with a passphrase unless --unencrypted, mode 0600, "
        "never overwritten) and DIR/public.pem, and print the public key's full fingerprint. The passphrase is "
        "asked for on the terminal or read from a file, never taken from the command line.",
    )
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--passphrase-file", metavar="FILE", help="read the passphrase from this file (first line)")
    p.add_argument("--unencrypted", action="store_true", help="write the private key without a passphrase")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_keygen)

    p = sub.add_parser(
        "release", parents=[common], allow_abbrev=False, help="anonymize, assess, sign and publish a release",
        description="Anonymize X, assess the result, write a manifest with every parameter except the seed and "
        "the computed claims, sign it (DSSE, Ed25519), verify the signature, and move the release directory into "
        "place atomically (SPEC section 9). The private key never enters the release.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds, roles and category orders")
    method_args(p)
    intruder_args(p)
    p.add_argument("--key", required=True, metavar="private.pem", help="the signing key")
    p.add_argument("--passphrase-file", metavar="FILE", help="the key's passphrase (default: asked on the terminal)")
    p.add_argument("--public-key", metavar="public.pem", help="refuse unless the private key matches this public key")
    p.add_argument("--dataset-id", required=True, metavar="ID", help="the dataset this release belongs to")
    p.add_argument("--release-version", type=int, default=1, metavar="N", help="grows with each release (default 1)")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv", dest="data_format",
                   help="the data file: release.csv (default) or release.parquet")
    p.add_argument("--out", required=True, metavar="DIR", help="the release directory to create")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    p.set_defaults(func=_cmd_release)

    p = sub.add_parser(
        "demo", parents=[common], allow_abbrev=False, help="the whole workflow on the paper's running example",
        description="Make a key, publish a signed release of paper 003's running example, verify it, audit it "
        "against the original, and check one subject's record against it, with the real commands.",
    )
    p.add_argument("--out", metavar="DIR", help="an empty or new folder for the demo's files (default: a new temporary one)")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_parsed(build_parser().parse_args(argv))
