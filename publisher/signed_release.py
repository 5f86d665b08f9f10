"""Signed releases: the protector's side of SPEC section 9, for every method family.

:func:`make_release` anonymizes, computes the claims under the model of the
methods used (:mod:`publisher.claims`), writes the data (CSV, or typed
Parquet), the hierarchy file a generalizing method used, the manifest and its
DSSE envelope, verifies its own signature, writes everything into a temporary
directory beside the target and renames it into place. The release holds no
key and no seed.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import base64
import datetime as _dt
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from publisher.calibrate import weakest_sound
from publisher.claims import permutation_claims
from publisher.degenerate import STRENGTH, degenerate_problems, unchanged_rows
from publisher.earlier_releases import Earlier, check_links_output, fresh_noise_problem, republishing
from publisher.environment import environment
from publisher.keys import SigningKey, write_new
from publisher.methods import Method, anonymize, anonymizing_label, frame_to_keys
from publisher.methods.frames import frame_coded_columns, published_cells
from publisher.release_data import csv_bytes, generalized_parquet_bytes, parquet_bytes
from publisher.release_metadata import check_metadata, unsafe_text
from publisher.version import __version__
from verifier.core.interrupts import raise_if_interrupted
from verifier.core.permutation import RankSpace
from verifier.core.side_by_side import side_by_side
from verifier.compiling import compiling_pays
from verifier.frontend.output_paths import log_holding
from verifier.attacks.assessment import assess, smallest_class
from verifier.attacks.generalized import assess_generalized
from verifier.attacks.reidentification import WEIGHTED, table_risk
from verifier.data.sampling_weights import WEIGHTS, check_weights, identifying_weights, weights_csv
from verifier.data.formula_cells import FormulaCells, formula_cells_in_keys, formula_cells_in_text
from verifier.data.tables import Table, current_umask
from verifier.errors import InputIOError, InvalidInputError, VerifierError
from verifier.releases.data_files import MAX_PARTS, PART_MEDIA, is_part, part_name
from verifier.releases.datapackage import DATAPACKAGE, datapackage
from verifier.attacks.classes import PublishedCells, mask_probability
from verifier.attacks.mask_model import mask_model
from verifier.releases.composition import composition_claim
from verifier.releases.links import Links, links_commitment, links_path
from verifier.releases.family import family_of, generalized_columns, step_parameters
from verifier.releases.levels import counted_levels, every_level, records_not_protected
from verifier.releases.policy import Policy, default_policy
from verifier.releases.subject import Prepared
from verifier.releases.recompute import family_disclosure, group_release_claims, sensitive_marginals
from verifier.releases.targets import joint_misses, target_misses
from verifier.text import literal
from verifier.releases.verification import (
    DATA_FILE,
    DATA_FILES,
    ENVELOPE,
    EXTRA_FILES,
    HIERARCHIES,
    MANIFEST,
    PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    TrustedKey,
    VerifiedRelease,
    dumps_manifest,
    key_id,
    pae,
    verify_release,
)

__all__ = ["make_release", "release_figures"]


def _check_arguments(out: Path, dataset_id: str, release_version: int, data_format: str,
                     part_rows: int | None, n_records: int) -> None:
    if data_format not in ("csv", "parquet"):
        raise InvalidInputError(f"the data format is csv or parquet, not {data_format!r}", reason="PARAMETER_INVALID")
    if part_rows is not None and (data_format != "parquet" or isinstance(part_rows, bool)
                                  or not isinstance(part_rows, int) or part_rows < 1):
        raise InvalidInputError("--part-rows takes a whole number of rows from 1 up, with --format parquet",
                                reason="PARAMETER_INVALID")
    if part_rows is not None and -(-n_records // part_rows) > MAX_PARTS:
        raise InvalidInputError(f"--part-rows {part_rows} cuts {n_records} records into more than {MAX_PARTS} "
                                "parts; give more rows per part", reason="PARAMETER_INVALID")
    if out.exists() or out.is_symlink():
        raise InputIOError("already exists; a release is never overwritten", path=str(out), reason="OUTPUT_EXISTS")
    if not dataset_id or len(dataset_id) > 256 or unsafe_text(dataset_id):
        raise InvalidInputError("--dataset-id must be one line of at most 256 characters, with no control, "
                                "direction-changing or invisible characters (docs/manifest.schema.json)",
                                reason="PARAMETER_INVALID")
    if isinstance(release_version, bool) or not isinstance(release_version, int) or release_version < 1:
        raise InvalidInputError("the release version is an integer from 1 up", reason="PARAMETER_INVALID")


def _refuse_formula_cells(found: FormulaCells, where: str, allowed: bool) -> None:
    """``FORMULA_LIKE_CELL`` (exit 3) for text a spreadsheet would run, unless ``--allow-formula-cells``."""
    if found.count and not allowed:
        raise InvalidInputError(f"{found.describe()}; rename it in the schema and data, or pass "
                                "--allow-formula-cells", path=where, reason="FORMULA_LIKE_CELL")


def _ranked(table: Table, result, methods: list[dict], family: str, *, alpha: float, samples: int,
            data_format: str, part_rows: int | None, progress, allow_formula_cells: bool,
            weights: tuple[np.ndarray, np.ndarray] | None, allow_degenerate: bool,
            avoid_degenerate: Callable[[], str]) -> tuple[list[tuple[str, bytes]], dict, dict, np.ndarray]:
    """Data files, claims, utility and released rank keys of a release whose cells have ranks (every family but
    ``generalized``).

    ``weights`` are the sampling weights in the original's and in the released row order, or None;
    ``part_rows`` cuts Parquet data into parts of that many rows. An output that protects nothing
    (:mod:`publisher.degenerate`) is refused unless ``allow_degenerate``, with ``avoid_degenerate()``'s
    sentence of what avoids it.
    """
    schema = table.schema
    y = frame_to_keys(result.released, schema)
    _refuse_formula_cells(formula_cells_in_keys(schema, y), "the released table", allow_formula_cells)
    x = table.values[result.order]  # the original in the released row order, for the assessment only
    assessed = assess(x, y, schema, paired=True, alpha=alpha, samples=samples, random_state=0, progress=progress)
    problems = degenerate_problems(table.values, x, y, schema, methods, assessed.intruder.confidently_linked,
                                   result.order)
    if problems and not allow_degenerate:
        raise InvalidInputError(problems.sentence() + ". " + avoid_degenerate() + "; nothing was written",
                                reason="OUTPUT_DEGENERATE")
    assessment = assessed.to_json()
    claims = permutation_claims(assessment, smallest_class(y, schema))
    claims["protector_only"]["unchanged_records"] = int(np.count_nonzero(unchanged_rows(x, y)))
    original_weights, released_weights = weights or (None, None)
    claims["reidentification"] = table_risk(y, schema, released_weights)
    claims["risk_original"] = table_risk(table.values, schema, original_weights)
    claims["attribute_disclosure"] = family_disclosure(family, methods, x, y, schema, assessment["attribute_disclosure"])
    if data_format == "csv":
        data = [(DATA_FILE, csv_bytes(frame_coded_columns(result.released, schema, y), schema))]
    elif part_rows is None:
        data = [("release.parquet", parquet_bytes(y, schema))]
    else:
        data = [(part_name(i), parquet_bytes(y[a:a + part_rows], schema))
                for i, a in enumerate(range(0, max(1, y.shape[0]), part_rows))]
    # the release's rank space and search, which every record's level reads again
    return data, claims, assessment["utility"], assessed.space if isinstance(assessed.space, RankSpace) else y


def _check_inputs(table: Table, target: Path, metadata: Mapping[str, str] | None, protector_report: str | Path | None,
                  allow_formula_cells: bool, weight_column: str | None,
                  weights: np.ndarray | None) -> tuple[dict[str, str], np.ndarray | None]:
    """Everything about the inputs that can be refused before any work: the metadata, where the protector's report
    goes, formula-like cells and the sampling weights; returns the metadata and weights checked."""
    metadata = check_metadata(metadata or {})
    if protector_report is not None:
        _check_protector_report(Path(protector_report), target)
    _refuse_formula_cells(formula_cells_in_keys(table.schema, table.values), table.path, allow_formula_cells)
    return metadata, _check_weights(table, weight_column, weights)


def _about_to_sign(table: Table, released: np.ndarray | PublishedCells, files: list[tuple[str, bytes]],
                   predicate: dict, trusted: TrustedKey) -> Prepared:
    """The release about to be signed (its statement, and the released keys or cells its data file holds), as a
    subject's check reads it."""
    release = VerifiedRelease(path="(the release being made)", key=trusted, statement=_statement(files, predicate),
                              data_name="", data=b"")
    schema = table.schema
    if isinstance(released, PublishedCells):
        return Prepared(release, schema, np.empty((0, len(schema.names))), list(schema.kinds), released)
    if isinstance(released, RankSpace):
        return Prepared(release, schema, released.values, list(schema.kinds), ranked=released)
    return Prepared(release, schema, released, list(schema.kinds))


def _levels(prepared: Prepared, table: Table, order: np.ndarray, predicate: dict, policy: Policy, phase,
            earlier: Sequence[Earlier], links: tuple[str, Sequence[str]] | None) -> dict[str, Any]:
    """Every record given the level her own check gives her, then, with earlier releases, the people released before
    checked together; each figure held to its targets before anything is signed. Returns the protector's list of
    the records not protected (:func:`~verifier.releases.levels.records_not_protected`). The records are taken in
    the released row ``order``, as the claims took them, so that the rank index's search is not run again."""
    with phase("giving every record the level its subject's check gives"):
        if prepared.ranks_apply and len(order) == table.n_records:
            level, rule_at = np.empty(len(order), np.int8), np.empty(len(order), np.int64)
            level[order], rule_at[order] = every_level(prepared, table.values[order], policy)
        else:  # no search to share (a generalized release; an m-invariant one adds counterfeit rows)
            level, rule_at = every_level(prepared, table.values, policy)
        predicate["claims"]["policy_levels"] = counted_levels(level, rule_at, policy).to_json()
    _refuse_misses(predicate.get("targets"), predicate["claims"], predicate.get("methods") or [])
    if earlier and links is not None:
        with phase("checking the people released before with the earlier releases"):
            _compose(prepared, table, predicate, earlier, links[1], policy)
    return records_not_protected(level, rule_at, policy)


def _compose(prepared: Prepared, table: Table, predicate: dict, earlier: Sequence[Earlier], ids: Sequence[str],
             policy: Policy) -> None:
    """``predicate.claims.composition``: the earlier releases' digests and the joint figures of the people they
    share with this one (:mod:`verifier.releases.composition`); a target they miss refuses the release."""
    figures = composition_claim([prepared, *[e.prepared for e in earlier]], table.values, ids,
                                [e.links for e in earlier], policy)
    predicate["claims"]["composition"] = figures
    misses = joint_misses(predicate.get("targets"), figures)
    if misses:
        levels = figures["policy_levels"]
        raise InvalidInputError(
            "together with the earlier releases, this release misses its target: "
            + "; ".join(m.text() for m in misses) + f". Of the {levels['checked']:,} people checked who were released "
            f"before ({figures['linked']:,} in all), {levels['exposed']:,} are exposed together and "
            f"{levels['at_risk']:,} at risk; {figures['newly_exposed']:,} of them are exposed in no release alone. "
            "Generalize more, keep each returning person's group of sensitive values (m-invariance), or leave "
            "out people released before; nothing was written", reason="COMPOSITION_DISCLOSURE")


def _avoiding(table: Table, methods: Sequence[Method], seed: int | None, alpha: float, samples: int) -> str:
    """What avoids a degenerate output: the weakest stronger parameter that does (:func:`weakest_sound`)."""
    found = weakest_sound(table.to_frame(), table.schema, methods, seed=seed, alpha=alpha, samples=samples)
    if found is None:
        return "Choose stronger parameters, or pass --allow-degenerate to publish it anyway"
    name, value = found
    shown = ",".join(f"{k}:{v:g}" for k, v in value.items()) if isinstance(value, dict) else f"{value:g}"
    draw = "the same secret draws" if seed is not None else "fresh secret draws"
    return (f"The weakest stronger setting that avoids it on {draw}, as publisher calibrate sweeps, is "
            f"--param {name}={shown}; or pass --allow-degenerate to publish it anyway")


#: the information-loss figures a generalized release signs beside NCP and discernibility (docs/methods.md)
INFORMATION_LOSS = ("average_class_size", "exact_cell_share", "suppressed_records", "sensitive_at_root")


def _refuse_uninformative(assessed: Mapping[str, Any], schema) -> None:
    """``OUTPUT_UNINFORMATIVE`` (exit 3) for a release that tells nothing: one class of every record, every
    quasi-identifier at the root or suppressed, or every sensitive attribute at the root on every record (one
    of several at the root is said in the summary, the others still tell)."""
    n, why = assessed["n_records"], []
    if n > 1 and assessed["classes"] == 1:
        why.append(f"all {n} records fall in one class")
    if n and assessed["suppressed_records"] == n:
        why.append("every quasi-identifier of every record is generalized to the root or suppressed")
    at_root = assessed["sensitive_at_root"]
    if at_root and len(at_root) == len([a for a in schema.attributes if a.role == "sensitive"]):
        why.append(f"every record's {' and '.join(map(literal, at_root))} "
                   f"{'is' if len(at_root) == 1 else 'are'} generalized to the root")
    if why:
        raise InvalidInputError("this release tells nothing: " + "; ".join(why) + ". Choose weaker parameters (a "
                                "smaller k, alpha_qi or alpha_sa closer to 1), or pass --allow-uninformative to publish "
                                "it anyway; nothing was written", reason="OUTPUT_UNINFORMATIVE")


def _generalized(table: Table, result, methods: list[dict], hierarchies: dict | None,
                 data_format: str, part_rows: int | None, allow_formula_cells: bool,
                 weights: tuple[np.ndarray, np.ndarray] | None,
                 allow_uninformative: bool) -> tuple[list[tuple[str, bytes]], dict, dict, PublishedCells]:
    """Data file, claims, utility and cells of a generalized release; the claims come from the published cells
    alone.
    A release that tells nothing is refused unless ``allow_uninformative``."""
    if part_rows is not None:
        raise InvalidInputError("a generalized release is published as one data file; --part-rows cuts the data of "
                                "the other methods", reason="PARAMETER_INVALID")
    schema = table.schema
    columns, published = published_cells(result.released, schema, hierarchies)
    _refuse_formula_cells(formula_cells_in_text(schema, published.text), "the released table", allow_formula_cells)
    # the claims and the data file beside the assessment: each reads the published cells only
    (claims, data), utility = side_by_side(
        lambda: (_generalized_claims(table, published, methods, hierarchies, weights),
                 _generalized_data(published, columns, methods, schema, data_format)),
        lambda claimed: _generalized_utility(table, published, hierarchies, allow_uninformative),
        at_once=compiling_pays(table.n_records),  # a small table's release loads no kernel to decide
    )
    return [data], claims, utility, published


def _generalized_claims(table: Table, published: PublishedCells, methods: list[dict], hierarchies: dict | None,
                        weights: tuple[np.ndarray, np.ndarray] | None) -> dict[str, Any]:
    """The claims of a generalized release, from its published cells (and the original's risk and marginals)."""
    schema = table.schema
    original_weights, released_weights = weights or (None, None)
    masks = None
    marginals = {}
    if step_parameters(methods, "multi_sensitive_generalization") is not None or mask_probability(methods) > 0:
        # the prior of the masks' model: MaskClass rerun, or masks drawn whatever the value
        marginals = sensitive_marginals(table.values, schema)
        masks = mask_model(published, methods, {"attribute_disclosure": {n: {"marginal": m}
                                                                         for n, m in marginals.items()}}, hierarchies)
    claims = group_release_claims(published, methods, released_weights, masks)
    for name, counts in marginals.items():
        claims["attribute_disclosure"][name]["marginal"] = counts
    claims["risk_original"] = table_risk(table.values, schema, original_weights)
    return claims


def _generalized_data(published: PublishedCells, columns, methods: list[dict], schema, data_format: str
                      ) -> tuple[str, bytes]:
    """The data file of a generalized release: its cells as CSV (from the coded ``columns``), or as Parquet."""
    generalized = generalized_columns(methods, schema)
    if data_format == "parquet":
        return "release.parquet", generalized_parquet_bytes(published, generalized)
    return DATA_FILE, csv_bytes(columns, schema, generalized=generalized)


def _generalized_utility(table: Table, published: PublishedCells, hierarchies: dict | None,
                         allow_uninformative: bool) -> dict[str, Any]:
    """The utility of a generalized release (its assessment against the original); ``OUTPUT_UNINFORMATIVE`` for one
    that tells nothing, unless ``allow_uninformative``."""
    schema = table.schema
    # the original's cells it reads: the quasi-identifiers' and sensitive ones (text or numbers, as a frame holds them)
    read = [j for j, a in enumerate(schema.attributes) if a.role in ("quasi_identifier", "sensitive")]
    original = {schema.names[j]: (table.column_text(j) if schema.attributes[j].categories is not None
                                  else table.values[:, j]).tolist() for j in read or range(len(schema.names))}
    assessed = assess_generalized(original, {n: published.text[n] for n in schema.names}, schema,
                                  hierarchies=hierarchies)
    if not allow_uninformative:
        _refuse_uninformative(assessed, schema)
    utility = {key: assessed[key] for key in ("ncp", "data_utility", "discernibility", "qi_distortion_ratio",
                                              "sa_distortion_ratio", *INFORMATION_LOSS) if key in assessed}
    utility["attribute_disclosure_of_original_records"] = assessed["attribute_disclosure"]
    return utility


#: per method, what makes it stronger against the level targets, in its own parameters; a method of ranks has a
#: strength parameter `publisher calibrate` sweeps (:data:`publisher.degenerate.STRENGTH`)
_REMEDIES = {
    "sd_k_anonymity": "a larger k (--param k=...), or masks drawn at random whatever the value "
                      "(--param mask_probability=...)",
    "multi_sensitive_generalization": "a smaller alpha_qi or alpha_sa, or a larger k (--param k=...)",
    "m_invariant": "a larger m (--param m=...)",
    "randomized_response": "smaller keep probabilities (--param keep_probabilities=ATTRIBUTE:P), or a larger l "
                           "(--param l=...)",
    "random_attribute_replacement": "a larger k (--param k=...)",
}


#: per method without a strength parameter, the one `publisher calibrate` sweeps first against the level targets
_SWEPT = {"sd_k_anonymity": "k", "multi_sensitive_generalization": "alpha_sa", "m_invariant": "m",
          "randomized_response": "keep_probabilities", "random_attribute_replacement": "k"}


def _target_args(targets: Mapping[str, Any] | None) -> str:
    """The targets as ``--target NAME=VALUE`` arguments, as the protector gave them."""
    def value(v: Any) -> str:
        return ",".join(f"{a}:{p:g}" for a, p in v.items()) if isinstance(v, Mapping) else f"{v:g}"

    return "".join(f" --target {name}={value(v)}" for name, v in (targets or {}).items())


def remedy_hint(methods: Sequence[Mapping[str, Any]], targets: Mapping[str, Any] | None = None) -> str:
    """What moves a missed target, for the release's own method (issue 60, item 6): a command that works for it,
    with the protector's ``targets``."""
    method = next((step.get("method") for step in methods if isinstance(step, Mapping)), None)
    if method in STRENGTH:
        return (f"A stronger {STRENGTH[method]} moves it: `publisher calibrate --method {method} --param-grid "
                f"{STRENGTH[method]}=V1,V2,...` sweeps it and draws its frontier, and `publisher release --target` "
                "as here judges the levels of the value you choose")
    if method in _REMEDIES:
        return (f"{_REMEDIES[method][0].upper()}{_REMEDIES[method][1:]} moves it: `publisher calibrate --method "
                f"{method} --param-grid {_SWEPT[method]}=V1,V2,...{_target_args(targets)}` judges each value as here "
                "and names the least lossy one that meets the targets; `publisher release --target` as here refuses, "
                "writing nothing, until they are met")
    return ("Another output of the tool that made it, with stronger settings, moves it: publish each with "
            "`publisher release --anonymized ... --target` as here")


def _refuse_misses(targets: Mapping[str, Any] | None, claims: dict, methods: Sequence[Mapping[str, Any]]) -> None:
    """``TARGET_MISSED`` (exit 3) naming every figure on the wrong side of the protector's target, and what moves
    it for this method (:func:`remedy_hint`)."""
    misses = target_misses(targets, claims)
    if misses:
        decided = (claims.get("policy_levels") or {}).get("by_rule") or {}
        why = ("; the rules that decided those levels: " + ", ".join(f"{rule} {count:,}" for rule, count in
                                                                      sorted(decided.items(), key=lambda r: -r[1]))
               if decided and any(m.name in ("max_exposed", "max_at_risk_share") for m in misses) else "")
        certain = ("; a value guessed near certainly (value_near_certain) needs a method that bounds each value's "
                   "share of a class (docs/methods.md, \"From a refused release to a published one\")"
                   if "value_near_certain" in decided else "")
        raise InvalidInputError("the release misses its target: " + "; ".join(m.text() for m in misses) + why
                                + "; nothing was written. " + remedy_hint(methods, targets) + certain,
                                reason="TARGET_MISSED")


def _publishable(methods: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict | None]:
    """The methods as the manifest lists them, and the hierarchy file a method used (published beside the data)."""
    out, hierarchies = [], None
    for step in methods:
        params = dict(step["parameters"])
        if isinstance(params.get("hierarchies"), dict) and params["hierarchies"]:  # two-step generalization, a tool's
            hierarchies = params["hierarchies"]
            params["hierarchies"] = HIERARCHIES
        out.append({"method": step["method"], "parameters": params})
    return out, hierarchies


def _check_weights(table: Table, column: str | None, weights: np.ndarray | None) -> np.ndarray | None:
    """The sampling weights as float64, one per record and each above zero, with the column they came from."""
    if weights is None:
        if column is not None:
            raise InvalidInputError("a weight column needs its weights", reason="PARAMETER_INVALID")
        return None
    if not column or column in table.schema.names:
        raise InvalidInputError("the weight column is named, and is not one of the released attributes",
                                reason="PARAMETER_INVALID")
    weights = check_weights(weights, table.path, column)
    if weights.shape != (table.n_records,):
        raise InvalidInputError(f"{weights.size} sampling weights for {table.n_records} records", path=table.path,
                                reason="WEIGHT_INVALID")
    naming = identifying_weights(weights)
    if naming:
        raise InvalidInputError(f"column {literal(column)}: {naming}", path=table.path, reason="WEIGHT_IDENTIFYING")
    return weights


def _files(data: list[tuple[str, bytes]], hierarchies: dict | None, weights: np.ndarray | None, *, dataset_id: str,
           release_version: int, schema, generalized: Sequence[str]) -> list[tuple[str, bytes]]:
    """The listed files: the data (or its parts), the hierarchies and weights it is read with, and the data package."""
    files = list(data)
    if hierarchies is not None:
        files.append((HIERARCHIES, dumps_manifest(hierarchies)))
    weight_entry = None
    if weights is not None:
        content = weights_csv(weights)
        files.append((WEIGHTS, content))
        weight_entry = (hashlib.sha256(content).hexdigest(), len(content))
    files.append((DATAPACKAGE, dumps_manifest(datapackage(
        dataset_id=dataset_id, release_version=release_version, schema=schema,
        data=[(name, hashlib.sha256(content).hexdigest(), len(content)) for name, content in data],
        generalized=generalized, weights=weight_entry))))
    return files


def _envelope(manifest: bytes, key: SigningKey, trusted: TrustedKey) -> bytes:
    """The DSSE envelope of ``manifest``, its signature checked with the public half before anything is written."""
    signature = key.sign(pae(PAYLOAD_TYPE, manifest))
    if not trusted.verify(signature, pae(PAYLOAD_TYPE, manifest)):
        raise InputIOError("the signature just made does not verify", reason="SIGNING_FAILED")
    return dumps_manifest({
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(manifest).decode("ascii"),
        "signatures": [{"keyid": key_id(key.public_raw), "sig": base64.b64encode(signature).decode("ascii")}],
    })


def _statement(files: Sequence[tuple[str, bytes]], predicate: dict[str, Any]) -> dict[str, Any]:
    media = {**DATA_FILES, **EXTRA_FILES}
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": hashlib.sha256(content).hexdigest()},
                     "mediaType": PART_MEDIA if is_part(name) else media[name], "annotations": {"size": len(content)}}
                    for name, content in files],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


def _write(target: Path, files: Sequence[tuple[str, bytes]], trusted: TrustedKey,
           before_move: Callable[[Path], None] | None = None) -> None:
    """Write into a staging folder beside ``target``, verify it, and rename it into place; nothing half-written.

    ``before_move(staging)`` runs after the verification and before the rename: whatever it still has to write
    (the protector's report, the summary on stdout) fails with the release unpublished."""
    parent = target.parent if str(target.parent) else Path(".")
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise InputIOError(f"cannot write here ({exc.strerror})", path=str(target), reason="WRITE_FAILED") from None
    try:
        os.chmod(staging, 0o755 & ~current_umask())
        for name, content in files:
            write_new(staging / name, content, 0o644 & ~current_umask())
        verify_release(staging, trusted)
        if before_move is not None:
            before_move(staging)
        os.rename(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, (BrokenPipeError, VerifierError)):
            raise InputIOError(f"cannot write the release ({exc.strerror or exc})", path=str(target),
                               reason="WRITE_FAILED") from None
        raise


def _commit_to_people(predicate: dict, links: tuple[str, Sequence[str]] | None) -> str | None:
    """With linking ids, the manifest signs a commitment to the release's people (``predicate.links_commitment``);
    the salt, returned, stays in the links file alone. None without linking ids."""
    if links is None:
        return None
    salt = secrets.token_hex(32)
    predicate["links_commitment"] = links_commitment(salt, links[1])
    return salt


def _links(links: tuple[str, Sequence[str]], methods: Sequence[Method], dataset_id: str, release_version: int,
           manifest: bytes, salt: str | None) -> bytes:
    """The protector's links file: who is in the release, the salt of the manifest's commitment to them and, from an
    m_invariant step, each person's signature."""
    kept = next((m.kept for m in methods if getattr(m, "kept", None) is not None), None)
    return Links(dataset_id, release_version, hashlib.sha256(manifest).hexdigest(), links[0], tuple(links[1]),
                 None if kept is None else {i: tuple(sorted(s)) for i, s in zip(links[1], kept)}, salt).to_bytes()


def _check_links(table: Table, target: Path, links: tuple[str, Sequence[str]] | None, earlier: Sequence[Earlier],
                 methods: Sequence[Method]) -> None:
    """Before any work: one linking id per record, nothing where the links file goes, earlier releases only with
    the ids that find their people, and no fresh noise on people an earlier noisy release holds."""
    if links is None:
        if earlier:
            raise InvalidInputError("earlier releases are checked with the linking ids of this one's people",
                                    reason="PARAMETER_INVALID")
        return
    if len(links[1]) != table.n_records:
        raise InvalidInputError(f"{len(links[1])} linking ids for {table.n_records} records", path=table.path,
                                reason="LINK_INVALID")
    check_links_output(target)
    problem = fresh_noise_problem([{"method": m.name} for m in methods], earlier, links[1])
    if problem:
        raise InvalidInputError(problem, reason="COMPOSITION_FRESH_NOISE")


def report_bytes(doc: dict[str, Any]) -> bytes:
    """The protector's report as the manifest is written (sorted keys, indent 2), but each record not protected on
    one line: ``[row, "level", "rule"]``. A census lists hundreds of thousands; one value per line would make its
    report ten times as long, and as slow to write and read."""
    listed = doc.get("records_not_protected")
    if not listed or not listed.get("rows"):
        return dumps_manifest(doc)
    marker = "\u0000rows\u0000"
    text = dumps_manifest({**doc, "records_not_protected": {**listed, "rows": marker}}).decode("utf-8")
    # levels and rule ids are [a-z0-9_] (the policy refuses any other id): nothing in a row needs escaping
    rows = ",\n".join(f'      [{r}, "{level}", "{rule}"]' for r, level, rule in listed["rows"])
    return text.replace(json.dumps(marker), "[\n" + rows + "\n    ]", 1).encode("utf-8")


def _check_protector_report(report: Path, target: Path) -> None:
    """The protector's report goes to a new file in an existing folder, never inside (or as) the release, nor
    inside a transparency log's folder, which is published whole."""
    here, release = Path(os.path.abspath(report)), Path(os.path.abspath(target))
    if here == release or release in here.parents:
        raise InputIOError("is inside the release; the protector's figures are never published",
                           path=str(report), reason="OUTPUT_INSIDE_RELEASE")
    if log_holding(here) is not None:
        raise InputIOError(f"is inside the transparency log {log_holding(here)}, which is published whole; the "
                           "protector's figures are never published", path=str(report), reason="OUTPUT_INSIDE_LOG")
    if report.exists() or report.is_symlink():
        raise InputIOError("already exists; a protector's report is never overwritten", path=str(report),
                           reason="OUTPUT_EXISTS")
    if not here.parent.is_dir():
        raise InputIOError("its folder does not exist; nothing was done", path=str(report), reason="WRITE_FAILED")


def _publish(target: Path, files: Sequence[tuple[str, bytes]], trusted: TrustedKey, report: Path | None,
             report_doc: dict[str, Any], before_move: Callable[[Path, dict, Any], None] | None,
             link_file: tuple[Path, bytes] | None = None, released: Any = None) -> None:
    """Write the release; before it is moved into place, the protector's report and links file, then the caller's
    summary (``released``, what the data file was written from, is handed to it).

    A failure anywhere leaves none of them: the staging folder is removed, and the report and links file of a
    release that was never published are deleted."""
    written = [path for path in (report, link_file and link_file[0]) if path is not None]

    def finish(staging: Path) -> None:
        if report is not None:
            write_new(report, report_bytes(report_doc), 0o600)
        if link_file is not None:
            write_new(*link_file, 0o600)
        if before_move is not None:
            before_move(staging, report_doc["protector_only"] or {}, released)
        raise_if_interrupted()  # Ctrl-C that landed where Python swallows it: the release is not moved in

    try:
        _write(target, files, trusted, finish)
    except BaseException:
        if not target.exists():
            for path in written:
                path.unlink(missing_ok=True)
        raise


def _predicate(table: Table, methods: list[dict], claims: dict, utility: dict, randomness: str, *, dataset_id: str,
               release_version: int, created_at: str | None, targets: Mapping[str, Any] | None,
               dropped_identifiers: Sequence[str], metadata: Mapping[str, str],
               weight_column: str | None) -> dict[str, Any]:
    """The signed predicate: every parameter but the seed, the claims, the targets, the utility, the provenance."""
    return {
        "datasetId": dataset_id,
        "releaseVersion": release_version,
        "createdAt": created_at or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "schema": table.schema.to_dict(),
        "methods": methods,
        "withheld": ["random_seed"],
        "claims": claims,
        **({"targets": dict(targets)} if targets else {}),
        "utility": utility,
        "toolkit": {"name": "permuted-privacy", "version": __version__, "randomness": randomness},
        "environment": environment(),
        "dropped_identifiers": [str(c) for c in dropped_identifiers],
        **({} if weight_column is None else
           {"sampling_weights": {"column": weight_column, "file": WEIGHTS, "used_for": WEIGHTED}}),
        **({"release_metadata": dict(metadata)} if metadata else {}),
    }


@dataclass(frozen=True)
class _Made:
    """A chain's anonymization and what its release signs of it, before anything is signed."""

    result: Any
    listed: list[dict[str, Any]]
    hierarchies: dict | None
    family: str
    paired: tuple[np.ndarray, np.ndarray] | None
    data: list[tuple[str, bytes]]
    claims: dict[str, Any]
    utility: dict[str, Any]
    released: Any


def _made(table: Table, methods: Sequence[Method], *, seed: int | None, alpha: float, samples: int, progress, phase,
          data_format: str, part_rows: int | None, allow_formula_cells: bool, weights: np.ndarray | None,
          allow_degenerate: bool, allow_uninformative: bool) -> _Made:
    """Anonymize ``table`` with ``methods`` and compute the data files, claims and utility of its release, refusing
    as :func:`make_release` refuses (a degenerate or uninformative output, formula-like cells)."""
    with phase(anonymizing_label(methods)):
        result = anonymize(table.to_frame(), table.schema, methods, random_state=seed)
    listed, hierarchies = _publishable(result.parameters)
    family = family_of(listed)
    paired = None if weights is None else (weights, weights[result.order])  # the original's order, the release's
    if family == "generalized":
        data, claims, utility, released = _generalized(table, result, listed, hierarchies, data_format, part_rows,
                                                       allow_formula_cells, paired, allow_uninformative)
    else:
        data, claims, utility, released = _ranked(table, result, listed, family, alpha=alpha, samples=samples,
                                                  data_format=data_format, part_rows=part_rows, progress=progress,
                                                  allow_formula_cells=allow_formula_cells, weights=paired,
                                                  allow_degenerate=allow_degenerate,
                                                  avoid_degenerate=lambda: _avoiding(table, methods, seed, alpha,
                                                                                     samples))
    return _Made(result, listed, hierarchies, family, paired, data, claims, utility, released)


def release_figures(table: Table, methods: Sequence[Method], *, seed: int | None = None, alpha: float = 0.01,
                    samples: int = 10_000, policy: Policy | None = None, allow_degenerate: bool = False,
                    allow_uninformative: bool = False) -> dict[str, Any]:
    """What ``publisher release`` would sign of this chain's release, with no key and no file: its ``model``, its
    ``claims`` (every record's level under ``policy``, ``policy_levels``, among them), its ``utility`` and its
    ``methods`` with their metrics; its refusals raised as the release raises them. ``publisher calibrate`` sweeps it
    (issue 60, item 6)."""
    made = _made(table, methods, seed=seed, alpha=alpha, samples=samples, progress=None,
                 phase=lambda label: nullcontext(), data_format="csv", part_rows=None, allow_formula_cells=True,
                 weights=None, allow_degenerate=allow_degenerate, allow_uninformative=allow_uninformative)
    files = _files(made.data, made.hierarchies, None, dataset_id="calibration", release_version=1,
                   schema=table.schema, generalized=generalized_columns(made.listed, table.schema))
    predicate = _predicate(table, made.listed, {"model": made.family, **made.claims}, made.utility,
                           made.result.randomness, dataset_id="calibration", release_version=1, created_at=None,
                           targets=None, dropped_identifiers=(), metadata={}, weight_column=None)
    nobody = TrustedKey(raw=bytes(32), path="(a calibration: nothing is signed)")
    _levels(_about_to_sign(table, made.released, files, predicate, nobody), table, made.result.order, predicate,
            policy or default_policy(), lambda label: nullcontext(), (), None)
    return {"model": made.family, "claims": predicate["claims"], "utility": made.utility,
            "methods": made.result.steps}


def make_release(
    table: Table,
    methods: Sequence[Method],
    key: SigningKey,
    out: str | Path,
    *,
    dataset_id: str,
    release_version: int = 1,
    seed: int | None = None,
    alpha: float = 0.01,
    samples: int = 10_000,
    created_at: str | None = None,
    progress=None,
    phase=None,
    data_format: str = "csv",
    allow_formula_cells: bool = False,
    metadata: Mapping[str, str] | None = None,
    dropped_identifiers: Sequence[str] = (),
    publish_protector_figures: bool = False,
    protector_report: str | Path | None = None,
    weight_column: str | None = None,
    weights: np.ndarray | None = None,
    part_rows: int | None = None,
    targets: Mapping[str, Any] | None = None,
    allow_degenerate: bool = False,
    allow_uninformative: bool = False,
    policy: Policy | None = None,
    before_move: Callable[[Path, dict, Any], None] | None = None,
    links: tuple[str, Sequence[str]] | None = None,
    earlier: Sequence[Earlier] = (),
) -> Path:
    """Anonymize ``table``, compute the claims, sign, verify, and move the release into ``out`` atomically.

    ``data_format``: ``csv`` or ``parquet`` (cut into parts of ``part_rows`` rows). ``progress`` follows the
    assessment, ``phase(label)`` (a context manager) the other steps. Formula-like text cells are refused
    (``FORMULA_LIKE_CELL``) unless ``allow_formula_cells``. ``metadata`` goes into ``release_metadata``, the names
    in ``dropped_identifiers`` into ``dropped_identifiers``. ``protector_report`` (mode 0600, beside the release)
    gets the link shares that need the secret row pairing, unless ``publish_protector_figures``, and every record
    exposed or at risk by input row. ``weights`` (column ``weight_column``) are published in ``weights.csv``. One of
    ``targets`` missed refuses the release (``TARGET_MISSED``), one that protects nothing (``OUTPUT_DEGENERATE``) unless
    ``allow_degenerate``, one that tells nothing (``OUTPUT_UNINFORMATIVE``) unless ``allow_uninformative``; every
    record's level under ``policy`` is signed. ``before_move(staging, protector_figures, released)`` runs on the
    verified release before it is moved into place (the command line prints its summary there; ``released`` is what
    its data file was written from: a generalized release's cells, or the released rank keys). ``links`` (the linking
    column and one id per record) writes the protector-only links file beside the release; with ``earlier``
    releases of the same people (:mod:`publisher.earlier_releases`) the manifest signs their digests and the joint
    figures, refused past a target (``COMPOSITION_DISCLOSURE``) or with fresh noise (``COMPOSITION_FRESH_NOISE``).
    """
    phase = phase or (lambda label: nullcontext())
    target = Path(out)
    _check_arguments(target, dataset_id, release_version, data_format, part_rows, table.n_records)
    metadata, weights = _check_inputs(table, target, metadata, protector_report, allow_formula_cells, weight_column,
                                      weights)
    _check_links(table, target, links, earlier, methods)
    methods = republishing(methods, earlier, table.values, None if links is None else links[1], table.schema,
                           weights is not None)
    made = _made(table, methods, seed=seed, alpha=alpha, samples=samples, progress=progress, phase=phase,
                 data_format=data_format, part_rows=part_rows, allow_formula_cells=allow_formula_cells,
                 weights=weights, allow_degenerate=allow_degenerate, allow_uninformative=allow_uninformative)
    result, listed, family = made.result, made.listed, made.family
    files = _files(made.data, made.hierarchies, None if made.paired is None else made.paired[1],
                   dataset_id=dataset_id, release_version=release_version, schema=table.schema,
                   generalized=generalized_columns(listed, table.schema))
    claims = made.claims
    protector = None if publish_protector_figures else claims.pop("protector_only", None)
    predicate = _predicate(table, listed, {"model": family, **claims}, made.utility, result.randomness,
                           dataset_id=dataset_id, release_version=release_version, created_at=created_at,
                           targets=targets, dropped_identifiers=dropped_identifiers, metadata=metadata,
                           weight_column=weight_column if weights is not None else None)
    salt = _commit_to_people(predicate, links)
    trusted = TrustedKey(raw=key.public_raw, path="(the signing key)")
    not_protected = _levels(_about_to_sign(table, made.released, files, predicate, trusted), table, result.order,
                            predicate, policy or default_policy(), phase, earlier, links)
    manifest = dumps_manifest(_statement(files, predicate))
    report_doc = dict(release=str(target), datasetId=dataset_id, releaseVersion=release_version,
                      protector_only=protector, records_not_protected=not_protected)
    link_file = None if links is None else (links_path(target), _links(links, methods, dataset_id, release_version,
                                                                       manifest, salt))
    with phase(f"writing {target}"):
        _publish(target, [*files, (MANIFEST, manifest), (ENVELOPE, _envelope(manifest, key, trusted))], trusted,
                 None if protector_report is None else Path(protector_report), report_doc, before_move, link_file,
                 made.released.values if isinstance(made.released, RankSpace) else made.released)
    return target
