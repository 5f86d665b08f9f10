"""``publisher release``: anonymize, assess, sign and publish a release (SPEC section 9)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from publisher.release_metadata import METADATA_FIELDS
from publisher.cli.common import add_intruder_args, add_method_args, load_input, load_weights, route_params, secret_seed
from verifier.frontend.passphrase import load_key
from publisher.degenerate import releasable_chain
from verifier.errors import InputIOError
from verifier.frontend import Phases, ProgressBar, UsageError, add_command, count
from verifier.frontend.output_paths import check_output, log_holding, release_holding
from verifier.releases.links import links_path, read_link_column
from verifier.releases.facts import claims_summary, composition_lines, counterfeits_text
from verifier.releases.family import family_of
from verifier.releases.targets import parse_targets, target_words
from verifier.releases.verification import TrustedKey, load_public_key, verify_release
from verifier.releases.exposure import base_rate_line, base_rates, class_model_lines, class_models
from verifier.releases.policy import load_policy
from verifier.text import literal, number, plural

__all__ = ["register"]


def _add_external_args(parser) -> None:
    """The options of a release another tool made (ARX, sdcMicro, mu-ARGUS)."""
    external = parser.add_argument_group(
        "a release another tool made (ARX, sdcMicro, mu-ARGUS; docs/methods.md)",
        "Publish the tool's output of --input instead of running a method: its rows are shuffled with the secret "
        "seed, its claims computed under the model its cells fit, and the tool, its configuration and its "
        "hierarchies published in the manifest.")
    external.add_argument("--anonymized", metavar="FILE",
                          help="the tool's output (CSV, rows in --input's order, suppressed records kept as *)")
    external.add_argument("--produced-by", metavar="TOOL", help='the tool and its version ("ARX 3.9.2")')
    external.add_argument("--configuration", metavar="FILE",
                          help="the tool's configuration or project file, published with its SHA-256 (at most 1 MiB)")
    external.add_argument("--hierarchy", action="append", default=[], metavar="COLUMN=FILE",
                          help="a column's hierarchy in ARX's semicolon format, as the tool used it (repeatable)")
    external.add_argument("--transition-matrix", action="append", default=[], metavar="COLUMN=FILE",
                          help="a post-randomized column's transition matrix (sdcMicro's pram Rs, written by R's "
                               "write.csv: a row per true category, a column per published one); the release is "
                               "judged under randomized response with it (repeatable)")


def register(sub, common) -> None:
    p = add_command(
        sub, common, "release", run=run, help="anonymize, assess, sign and publish a release",
        description="Anonymize X, assess the result, write a manifest with every parameter except the seed and "
        "the computed claims, sign it (DSSE, Ed25519), verify the signature, and move the release directory into "
        "place atomically (SPEC section 9). The private key never enters the release.",
    )
    p.add_argument("--input", required=True, metavar="X.csv")
    p.add_argument("--schema", metavar="schema.json", help="column kinds, roles and category orders")
    add_method_args(p, required=False)
    _add_external_args(p)
    add_intruder_args(p)
    p.add_argument("--key", required=True, metavar="private.pem", help="the signing key")
    p.add_argument("--passphrase-file", metavar="FILE", help="the key's passphrase (default: asked on the terminal)")
    p.add_argument("--public-key", metavar="public.pem", help="refuse unless the private key matches this public key")
    p.add_argument("--dataset-id", required=True, metavar="ID", help="the dataset this release belongs to")
    p.add_argument("--release-version", type=count("version"), default=1, metavar="N", help="grows with each release (default 1)")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv", dest="data_format",
                   help="the data file: release.csv (default) or release.parquet")
    p.add_argument("--part-rows", type=count("part_rows"), metavar="N",
                   help="with --format parquet, cut the data by rows into parts release-00000.parquet, ... of N "
                   "rows each, every part signed by its own digest: a census that Dask workers read part by part "
                   "(docs/scale.md); not for generalized releases")
    p.add_argument("--allow-formula-cells", action="store_true",
                   help="publish text cells that start with =, +, -, @, a tab or a carriage return, which a "
                   "spreadsheet would run as formulas (refused by default: FORMULA_LIKE_CELL, exit 3)")
    p.add_argument("--drop-identifier", action="append", default=[], metavar="COLUMN",
                   help="a direct identifier of the input (a name, an ID number) that is not released; its name "
                   "is listed in the manifest's dropped_identifiers (repeatable)")
    p.add_argument("--weight-column", metavar="COLUMN",
                   help="the input's sampling weights (how many people each record stands for; not released as an "
                   "attribute): the re-identification risks estimate population frequencies with them, and they "
                   "are published row for row in weights.csv")
    p.add_argument("--publisher", metavar="NAME", help="who publishes the release (release_metadata)")
    p.add_argument("--contact", metavar="ADDRESS", help="where to write about it: an e-mail or web address")
    p.add_argument("--purpose", metavar="TEXT", help="what the release is for, in one line")
    p.add_argument("--license", metavar="SPDX", help="its licence, an SPDX identifier or expression (CC-BY-4.0)")
    p.add_argument("--publish-protector-figures", action="store_true",
                   help="also publish the link shares that need the secret row pairing (protector_only); by "
                   "default they stay out of the manifest and go to --protector-report")
    p.add_argument("--protector-report", metavar="FILE",
                   help="where the protector's own report is written: the link shares that need the secret row "
                   "pairing, and every record exposed or at risk by input row with the rule that decided it "
                   "(mode 0600; default: DIR.protector.json beside the release, never inside it)")
    p.add_argument("--target", action="append", default=[], metavar="NAME=VALUE",
                   help="a protection target the release must meet, signed in the manifest (repeatable): "
                   "min_distance=D, min_k=K, max_linked_share=SHARE, max_attribute_risk=P (every sensitive "
                   "attribute, or ATTR:P,ATTR:P), min_l=L, max_exposed=N and max_at_risk_share=S (records "
                   "at each level under the verdict policy); a release that misses one is refused (TARGET_MISSED, "
                   "exit 3) and nothing is written")
    p.add_argument("--allow-uninformative", action="store_true",
                   help="publish a generalized release that tells nothing: one class of every record, every "
                   "quasi-identifier or a sensitive attribute at the root or suppressed (refused by default: "
                   "OUTPUT_UNINFORMATIVE, exit 3)")
    p.add_argument("--policy", metavar="policy.json",
                   help="count the records at each level under this verdict policy instead of the verifier's "
                   "default (docs/subject.md); the manifest names it, and max_exposed and max_at_risk_share "
                   "targets are held to its counts")
    together = p.add_argument_group(
        "people released before (docs/release-format.md, section 8)",
        "Check this release together with earlier releases of the same people, as each person's own joint check "
        "does, and sign the earlier releases' digests and the joint figures in the manifest.")
    together.add_argument("--link-column", metavar="COL",
                          help="the input's column that says who each person is across releases (an id; never "
                          "published): writes the protector-only links file DIR.links.json beside the release "
                          "(mode 0600), which a later release's --previous reads")
    together.add_argument("--previous", action="append", default=[], metavar="DIR",
                          help="an earlier release of the same people, signed with --key and made with the same "
                          "--link-column (its DIR.links.json beside it); repeatable, at most 16. A target the joint "
                          "figures miss refuses the release (COMPOSITION_DISCLOSURE, exit 3), and so does fresh "
                          "additive noise on people an earlier noisy release holds (COMPOSITION_FRESH_NOISE)")
    p.add_argument("--log", metavar="LOG",
                   help="append the release to this log (publisher log init) once it is signed, and write its proof "
                   "beside the release as DIR.tlog-proof; a dataset id and version already logged is refused "
                   "(RELEASE_EXISTS) before any work")
    p.add_argument("--log-key", metavar="log.pem", help="the log's signing key (default: --key)")
    p.add_argument("--log-passphrase-file", metavar="FILE", help="read the log key's passphrase from this file")
    p.add_argument("--out", required=True, metavar="DIR", help="the release directory to create")
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def _summary(verified, args: argparse.Namespace, protector: dict, released=None) -> list[str]:
    """What the publisher prints once the release is verified: JSON, or the claims, targets and exposure
    (``released``: the cells or rank keys the data file was written from, not read again)."""
    claims, target = verified.claims, str(args.out)
    if args.json:
        return [json.dumps({"release": target, "fingerprint": verified.key.fingerprint,
                            "dataset_id": verified.dataset_id, "release_version": verified.release_version,
                            "methods": verified.methods, "claims": claims,
                            "targets": verified.predicate.get("targets") or {},
                            "randomness": verified.predicate["toolkit"].get("randomness"),
                            "links_file": args.link_column and str(links_path(args.out))}, indent=2, allow_nan=False)]
    lines = [f"released {target}: {claims['n_records']} records, dataset {verified.dataset_id!r} version "
             f"{verified.release_version}",
             f"  signed by fingerprint {verified.key.fingerprint}",
             f"  randomness: {verified.predicate['toolkit'].get('randomness')} (the key or seed is not kept)",
             f"  claims ({claims.get('model')} model): {claims_summary(verified)}"]
    lines += [f"  m-invariance: {counterfeits_text(step['parameters'])}" for step in verified.methods
              if step["method"] == "m_invariant"]
    lines += k_lines(verified) + suppression_lines(claims.get("suppression"))
    if verified.predicate.get("targets"):
        lines.append(f"  targets, all met: {', '.join(target_words(verified.predicate['targets']))}")
    lines += exposure_lines(claims, claims.get("protector_only") or protector, base_rates(verified, released),
                            protector_report(args))
    lines += class_model_lines(class_models(verified, released), indent="    ")
    lines += information_loss_lines(verified.predicate.get("utility") or {}, claims["n_records"])
    lines += [f"  {line}" for line in composition_lines(claims.get("composition"))]
    lines += _links_lines(args.link_column and str(links_path(args.out)))
    return lines + [f"Check it as a subject or auditor would: verifier verify {target} --key <public.pem>"]


def _links_lines(links_file: str | None) -> list[str]:
    if not links_file:
        return []
    return [f"  links file (who is in this release, for you alone; never publish it): {links_file}"]


def suppression_lines(figures: dict | None) -> list[str]:
    """Another tool's release in the figures that tool reports (ARX leaves its suppressed records out)."""
    if not figures:
        return []
    lines = [f"  as ARX counts, leaving out the {plural(figures['suppressed_records'], 'suppressed record')}: "
             f"{plural(figures['classes'], 'class', plural_form='classes')}, the smallest of "
             f"{number(figures['smallest_class'])}; prosecutor risk highest "
             f"{number(figures['highest_prosecutor_risk'])}, average {number(figures['average_prosecutor_risk'])}"]
    if figures.get("suppressed_cells") and figures.get("smallest_matching") is not None:
        lines.append(f"  as sdcMicro counts, a suppressed cell matching any value "
                     f"({plural(figures['suppressed_cells'], 'suppressed cell')}): every record matches at least "
                     f"{figures['smallest_matching']:,} released records, so it is {figures['smallest_matching']:,}-"
                     "anonymous; the k above counts identical published cells, as someone who knows how the tool "
                     "chose the cells it suppressed tells a record with one from those it matches")
    return lines


def k_lines(verified) -> list[str]:
    """Why a release with ranks claims k = 1: the quasi-identifiers its methods publish as they are."""
    from publisher.methods import known_methods  # the method classes say which columns each step changed

    if verified.claims.get("k") != 1 or verified.family == "generalized":
        return []
    schema, methods = verified.schema(), known_methods()
    changed = {name for step in verified.methods if step.get("method") in methods
               for name in methods[step["method"]].changed_columns(schema, step.get("parameters") or {})}
    changed |= {name for step in verified.methods  # another tool's post-randomized columns
                for name in (step.get("parameters") or {}).get("transition_matrices") or {}}
    kept = [a.name for a in schema.attributes if a.role == "quasi_identifier" and a.name not in changed]
    why = "some released records share their quasi-identifier values with no other released record"
    if not kept:
        return [f"  k = 1: {why}"]
    names = ", ".join(literal(name) for name in kept)
    return [f"  k = 1: {why}. k counts records alike on every quasi-identifier, and the methods publish",
            f"    {plural(len(kept), 'quasi-identifier')} as they are ({names}): grouping or noising the others does "
            "not make records alike on these; generalize them (sd_k_anonymity) or make them other columns in the "
            "schema if they identify nobody"]


def exposure_lines(claims: dict, protector: dict, rates: dict, report: str | None = None) -> list[str]:
    """What this release exposes, in words a protector reads before she publishes (issue 26, item 3), each
    risk beside its base rate: what anyone guesses right knowing nothing about a person (issue 36, item 2)."""
    lines = ["  what this release exposes:"]
    for name, entry in (claims.get("attribute_disclosure") or {}).items():
        share = entry.get("certain_share")
        if share is not None:
            lines.append(f"    {literal(name)}: guessed with certainty for {number(share, share=True)} of records "
                         f"(largest risk {number(entry.get('max', 0.0), share=True)})")
        if name in rates:
            lines.append(f"      base rate: {base_rate_line(name, rates[name])}")
    linked = (claims.get("intruder") or {}).get("confidently_linked_share")
    if linked is not None:
        lines.append(f"    records the intruder links with confidence: {number(linked, share=True)}")
    if protector.get("unchanged_records") is not None:
        lines.append(unchanged_line(protector["unchanged_records"], claims))
    lines += level_lines(claims.get("policy_levels"), report)
    return lines if len(lines) > 1 else []


def unchanged_line(unchanged: int, claims: dict) -> str:
    """How many records the release holds exactly as they were, and what the verdict policy made of them (issue 60,
    item 5): a count beside "exposed 0" reads as a contradiction unless it says which rule reads it."""
    line = f"    records published unchanged: {unchanged:,} of {claims['n_records']:,}"
    levels = claims.get("policy_levels") or {}
    if not unchanged or not levels:
        return line
    decided = (levels.get("by_rule") or {}).get("published_unchanged", 0)
    return (f"{line} (each equal to its own original on every attribute, as the secret pairing shows; the rule "
            f"published_unchanged, which exposes a subject who finds a released record equal to hers at distance "
            f"0, decided {decided:,} of the levels below)")


def protector_report(args: argparse.Namespace) -> str:
    """Where the protector's own report goes: ``--protector-report``, or DIR.protector.json beside the release."""
    return args.protector_report or f"{str(args.out).rstrip('/')}.protector.json"


def level_lines(levels: dict | None, report: str | None = None) -> list[str]:
    """How many records each level holds under the verdict policy, as each subject's own check decides it, and
    where the protector's report lists those not protected."""
    if not levels:
        return []
    checked, records = levels["checked"], levels["records"]
    of = (f"of {checked:,} records" if checked == records
          else f"of {checked:,} records drawn at random from {records:,}")
    share = f" ({number(levels['at_risk_share'], share=True)})" if checked else ""
    return [f"    each record as its subject's check decides, under the verdict policy "
            f"\"{literal(levels['policy']['name'])}\" version {levels['policy']['version']}:",
            f"      exposed {levels['exposed']:,}, at risk {levels['at_risk']:,}{share}, protected "
            f"{levels['protected']:,} {of}"] + (
        ["      those not protected, by input row and deciding rule (never published):",
         f"        {report}"] if report and levels["exposed"] + levels["at_risk"] else [])


def run(args: argparse.Namespace) -> int:
    from publisher.earlier_releases import load_earlier, require_link_column
    from publisher.methods import make_method  # loaded when run, not for --help
    from publisher.signed_release import make_release

    if Path(args.out).exists():
        raise InputIOError("already exists; a release is never overwritten", path=args.out, reason="OUTPUT_EXISTS")
    if release_holding(args.out) is not None:  # the release it lands in would stop verifying
        raise InputIOError(f"lies inside the release {release_holding(args.out)}; a release is never written into "
                           "another", path=args.out, reason="OUTPUT_INSIDE_RELEASE")
    if args.release_version < 1:
        raise UsageError("--release-version is an integer from 1 up")
    policy = load_policy(args.policy) if args.policy else None  # a policy that cannot be read: before any work
    if args.part_rows is not None and (args.data_format != "parquet" or args.part_rows < 1):
        raise UsageError("--part-rows takes a number of rows from 1 up, and goes with --format parquet")
    if args.weight_column and args.weight_column in args.drop_identifier:
        raise UsageError(f"--weight-column {args.weight_column} would publish in weights.csv the column "
                         "--drop-identifier withholds; a dropped identifier is never released")
    report = protector_report(args)
    if release_holding(report) is not None:  # another, already published release would stop verifying
        raise InputIOError(f"--protector-report lies inside the release {release_holding(report)}, which would stop "
                           "verifying; write it elsewhere", path=report, reason="OUTPUT_INSIDE_RELEASE")
    if log_holding(report) is not None:  # a log's folder is published whole: the report would be public
        raise InputIOError(f"--protector-report lies inside the transparency log {log_holding(report)}, which is "
                           "published whole, and the protector's figures are private; write it elsewhere",
                           path=report, reason="OUTPUT_INSIDE_LOG")
    external = _external_arguments(args)
    if external is None:
        methods = [args.method, *args.then]
        routed = route_params(methods, args.param)
        chain = [make_method(m, p, allow_degenerate=args.allow_degenerate) for m, p in zip(methods, routed)]
        releasable_chain(chain)
    expected = load_public_key(args.public_key) if args.public_key else None
    key = load_key(args.key, args.passphrase_file, expected=expected)
    log_key = _log_key(args, key)
    phases = Phases()
    require_link_column(args.previous, args.link_column)
    with phases(f"reading {args.input}"):
        table, _ = load_input(args.input, args.schema, drop=list(dict.fromkeys(args.drop_identifier)),
                              weight=args.weight_column, link=args.link_column)
        weights = load_weights(args.input, args.weight_column)
        ids = read_link_column(args.input, args.link_column) if args.link_column else None
    earlier = load_earlier(args.previous, TrustedKey(raw=key.public_raw, path=args.key), table.schema,
                           args.link_column)
    if external is not None:
        from publisher.methods.external import ExternalTool

        with phases(f"reading {args.anonymized}"):
            chain = [ExternalTool.read(table, args.anonymized, produced_by=args.produced_by,
                                       configuration=args.configuration, hierarchies=external[0],
                                       transition_matrices=external[1])]
        releasable_chain(chain)
    targets = parse_targets(args.target, family=family_of([{"method": m.name, "parameters": m.parameters()}
                                                           for m in chain]),
                            sensitive=[a.name for a in table.schema.attributes if a.role == "sensitive"])
    trusted = TrustedKey(raw=key.public_raw, path=args.key)

    published = []

    def announce(staging: Path, protector: dict, released=None) -> None:
        """The summary, written and flushed before the release is moved into place (nothing half-done). With
        --log, the release is appended only once it is in place (below): a failure before leaves no entry, one
        after leaves an entry whose release exists."""
        verified = verify_release(staging, trusted)
        published.append(verified)
        _say(_summary(verified, args, protector, released), "the release was not published")

    make_release(table, chain, key, args.out, dataset_id=args.dataset_id, release_version=args.release_version,
                 seed=secret_seed(args), alpha=args.alpha, samples=args.samples, progress=ProgressBar("assessment"),
                 phase=phases, data_format=args.data_format, part_rows=args.part_rows,
                 allow_formula_cells=args.allow_formula_cells,
                 metadata={k: getattr(args, k) for k in METADATA_FIELDS},
                 dropped_identifiers=list(dict.fromkeys(args.drop_identifier)),
                 publish_protector_figures=args.publish_protector_figures,
                 protector_report=report,
                 weight_column=args.weight_column, weights=weights, targets=targets,
                 allow_degenerate=args.allow_degenerate, allow_uninformative=args.allow_uninformative,
                 policy=policy, before_move=announce,
                 links=None if ids is None else (args.link_column, ids), earlier=earlier)
    if log_key is not None:  # publish, then append: the entry never names a release that is not there
        _say(_append_to_log(args, published[0], log_key), "the release is published and logged")
    return 0


def _say(lines: list[str], otherwise: str) -> None:
    """Write ``lines`` to stdout and flush them; a closed or full stdout is one line (``WRITE_FAILED``) saying
    what was done (``otherwise``), never a traceback."""
    try:  # a stdout closed before the start is verifier.console's _Closed, whose writes fail as here
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        raise InputIOError(f"cannot write the output ({getattr(exc, 'strerror', None) or exc}); {otherwise}",
                           reason="WRITE_FAILED") from None



def _proof_path(args: argparse.Namespace) -> str:
    return f"{str(args.out).rstrip('/')}.tlog-proof"


def _log_key(args: argparse.Namespace, key):
    """The log's signing key when --log appends the release (checked, with the log, before any work), else None."""
    if args.log is None:
        if args.log_key or args.log_passphrase_file:
            raise UsageError("--log-key and --log-passphrase-file go with --log LOG")
        return None
    from publisher.release_log import refuse_logged

    log_key = load_key(args.log_key, args.log_passphrase_file, asked="log key passphrase: ") if args.log_key else key
    check_output(_proof_path(args), option="the proof --log writes")
    refuse_logged(args.log, args.dataset_id, args.release_version, log_key)
    return log_key


def _append_to_log(args: argparse.Namespace, verified, log_key) -> list[str]:
    """Append the verified release, now in place, to the log and write its proof beside it; the lines about it.
    A failure says that the release is published and how to log it."""
    from publisher.keys import write_new
    from publisher.release_log import append_leaf
    from verifier.errors import VerifierError

    try:
        index, size, proof = append_leaf(args.log, verified, log_key)
    except VerifierError as exc:
        exc.message = (f"{exc.message}; the release {args.out} is published but not logged: append it with "
                       f"publisher log append {args.log} {args.out} --key <log key> --release-key <public.pem>")
        raise
    try:
        write_new(Path(_proof_path(args)), proof, 0o644)
    except OSError as exc:
        raise InputIOError(f"cannot write the proof ({exc.strerror or exc}); the release is published and logged at "
                           f"index {index}: write its proof with publisher log append {args.log} {args.out} --key "
                           "<log key> --release-key <public.pem>", path=_proof_path(args),
                           reason="WRITE_FAILED") from None
    return [f"  logged in {args.log} at index {index} of {size}; its proof: {_proof_path(args)} (give it to "
            "verifier verify --proof with the log's verifier key)"]


def _external_arguments(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]] | None:
    """The ARX hierarchy files and the transition matrix files by column when --anonymized publishes another tool's
    output ({} without any), None when a method of this tool runs; a mix of the two, or either half missing, is a
    usage error."""
    if args.anonymized is None:
        if args.produced_by or args.configuration or args.hierarchy or args.transition_matrix:
            raise UsageError("--produced-by, --configuration, --hierarchy and --transition-matrix describe another "
                             "tool's output: give it with --anonymized FILE")
        if not args.method:
            raise UsageError("give --method NAME to anonymize here, or --anonymized FILE --produced-by TOOL to "
                             "publish another tool's output")
        return None
    if args.method or args.then or args.param or args.allow_degenerate:
        raise UsageError("--anonymized publishes another tool's output as it is: no --method, --then, --param or "
                         "--allow-degenerate goes with it")
    if not args.produced_by:
        raise UsageError('--anonymized needs --produced-by naming the tool and its version ("ARX 3.9.2")')
    return _column_files(args.hierarchy, "--hierarchy"), _column_files(args.transition_matrix, "--transition-matrix")


def _column_files(items: list[str], flag: str) -> dict[str, str]:
    """``COLUMN=FILE`` options by column, each column once."""
    files: dict[str, str] = {}
    for item in items:
        column, sep, path = item.partition("=")
        if not sep or not column or not path:
            raise UsageError(f"{flag} takes COLUMN=FILE, got {literal(item)!r}")
        if column in files:
            raise UsageError(f"{flag} {literal(column)} is given twice; give each column once")
        files[column] = path
    return files


def information_loss_lines(utility: dict, n: int) -> list[str]:
    """What a generalized release gives up, in the measures ARX and sdcMicro users compare (docs/methods.md)."""
    if "average_class_size" not in utility:
        return []
    return ["  information loss:",
            f"    NCP {number(utility['ncp'])}, discernibility {utility['discernibility']:,}, average class size "
            f"{number(utility['average_class_size'])}",
            f"    quasi-identifier cells published exactly: {number(utility['exact_cell_share'], share=True)}; "
            f"records suppressed: {utility['suppressed_records']} of {n}",
            *[f"    {literal(name)} is generalized to the root on every record: the release tells nothing of it"
              for name in utility.get("sensitive_at_root") or ()]]
