"""``verifier verify``: a signed release checked with the key you trust (SPEC section 9)."""

from __future__ import annotations

import argparse
import json

from verifier.frontend import ExitCode, add_command, add_release_args, print_json, verified
from verifier.frontend.log_args import add_log_args, check_log_args, log_standing_of
from verifier.releases.facts import (WITHHELD, claims_summary, composition_lines, counterfeits_text, external_text,
                                    formula_cells, formula_warning)
from verifier.releases.family import EXTERNAL
from verifier.releases.targets import target_words

__all__ = ["register"]


def register(sub, common) -> None:
    p = add_command(
        sub, common, "verify", run=run, help="verify a signed release (SPEC section 9)",
        description="Check the release's signature with the key you trust, its manifest, and every file's size and "
        "digest, in the order of SPEC section 9; print who signed what, and every parameter. Then read the data "
        "and warn about text cells a spreadsheet would run as formulas (formula_like_cells in --json).",
        epilog="Exit codes: 0 verified, 1 not trustworthy (FAIL line with the reason), 2 usage error (no --key), "
        "4 the key file is unusable.",
    )
    add_release_args(p)
    add_log_args(p)


def _method_text(step: dict) -> str:
    params = step.get("parameters") or {}
    if step.get("method") == EXTERNAL:  # the files it publishes are named with their digests, not printed whole
        return external_text(params)
    if step.get("method") == "m_invariant":  # one count per group: said in numbers, listed in the manifest
        return f"m_invariant: {counterfeits_text(params)}"
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in params.items() if v is not None)
    return f"{step.get('method')}({shown})"


def run(args: argparse.Namespace) -> int:
    check_log_args(args)
    release = verified(args)
    standing = log_standing_of(args, release)
    claims = release.claims
    found = formula_cells(release)
    if args.json:
        print_json({
            "verified": True, "release": release.path, "fingerprint": release.key.fingerprint,
            "key_id": release.key.key_id, "dataset_id": release.dataset_id, "release_version": release.release_version,
            "created_at": release.created_at, "methods": release.methods,
            "data_file": {"name": release.data_name, "size": release.data_size,
                          **({"parts": release.data_files} if release.parts else {})}, "claims": claims,
            "formula_like_cells": found.count,
            "release_metadata": release.predicate.get("release_metadata"),
            "environment": release.predicate.get("environment"),
            "dropped_identifiers": release.predicate.get("dropped_identifiers"),
            "sampling_weights": release.predicate.get("sampling_weights"),
            "targets": release.predicate.get("targets") or {},
            "log": standing.to_json(), "unwitnessed": standing.unwitnessed,
        })
        return ExitCode.OK
    print(f"OK: {release.path}")
    print(f"  signed by the key you trust, fingerprint {release.key.fingerprint}")
    print(f"  dataset {json.dumps(release.dataset_id)}, release version {release.release_version}, "
          f"created {json.dumps(release.created_at)}")
    for step in release.methods:
        print(f"  method: {_method_text(step)}")
    metadata = release.predicate.get("release_metadata")
    if isinstance(metadata, dict) and metadata:
        order = ["publisher", "contact", "purpose", "license"]
        keys = [k for k in order if k in metadata] + sorted(k for k in metadata if k not in order)
        print("  published by: " + "; ".join(f"{k} {json.dumps(metadata[k], ensure_ascii=False)}" for k in keys))
    dropped = release.predicate.get("dropped_identifiers")
    if isinstance(dropped, list) and dropped:
        print("  direct identifiers dropped: " + ", ".join(json.dumps(c, ensure_ascii=False) for c in dropped))
    weighted = release.predicate.get("sampling_weights")
    if isinstance(weighted, dict):
        print(f"  sampling weights: column {json.dumps(weighted.get('column'), ensure_ascii=False)} of the input, "
              "one per record in weights.csv; the re-identification risks estimate the population with them")
    if release.parts:
        print(f"  data in {len(release.parts)} Parquet parts ({release.data_files[0]} to {release.data_files[-1]}), "
              f"{release.data_size} bytes, each checked against its own signed digest")
    print(f"  withheld: {WITHHELD}")
    print(f"  log: {standing.words()}")
    for line in standing.history:
        print(f"    {line}")
    if standing.logged is not None and standing.unwitnessed:
        print(f"    {standing.unwitnessed}")
    # the publisher's word, signed: verify checks whose word it is, not the figures (issue 59, item 9)
    print(f"  claims as the publisher signed them, not recomputed here (verifier audit recomputes them): "
          f"{claims_summary(release)}")
    targets = target_words(release.predicate.get("targets"))
    print("  targets the publisher promised: " + (", ".join(targets) if targets else
                                                  "none (only the method's own bounds apply)"))
    for line in composition_lines(release.claims.get("composition")):
        print(f"  {line}")
    warning = formula_warning(release, found)
    if warning:
        print(warning)
    return ExitCode.OK
