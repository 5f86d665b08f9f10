"""What several publisher commands share: the input table, the output file, the method chain and its parameters."""

from __future__ import annotations

import argparse
from typing import Sequence

from publisher.methods.names import METHOD_NAMES
from verifier.releases.coherence import chain_problem
from verifier.data.memory import ensure_fits
from verifier.data.schema import Schema
from verifier.data.sampling_weights import read_weight_column
from verifier.data.schema_file import load_schema
from verifier.data.tables import column_names, read_table
from verifier.errors import InvalidInputError
from verifier.frontend import UsageError, check_non_negative, count

__all__ = ["add_intruder_args", "add_method_args", "load_input", "load_weights", "route_params", "secret_seed",
           "split_param"]


def add_method_args(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--method``, ``--then``, ``--param``, ``--seed``, ``--allow-degenerate``; the help lists every method."""
    p.add_argument("--method", required=required, metavar="NAME",
                   help=f"one of {', '.join(METHOD_NAMES)} (see docs/methods.md)"
                   + ("" if required else "; or --anonymized for another tool's output"))
    p.add_argument("--then", action="append", default=[], metavar="NAME",
                   help="a method chained after it, typically reverse_mapping (repeatable)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter (repeatable); method.NAME=VALUE when several methods have it")
    p.add_argument("--seed", type=count("seed"), metavar="N",
                   help="the secret seed, to reproduce a run; default: fresh OS entropy. Never printed or written")
    p.add_argument("--allow-degenerate", action="store_true",
                   help="run parameters that give no protection (sd 0, k 1, p 0)")


def add_intruder_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--alpha", type=float, default=0.01, help="p-value below which a link is confident (default 0.01)")
    p.add_argument("--samples", type=count("samples"), default=10_000, metavar="N",
                   help="random records of the intruder's test when n^m is too many to enumerate (default 10000, at most 10000000)")


#: bytes per input cell the publisher's commands hold at their peak (release: 1.6 GB at 1e6 x 5, rounded up)
PER_CELL = 350


def load_input(path: str, schema_path: str | None, *, drop: Sequence[str] = (), weight: str | None = None,
               link: str | None = None):
    """The input table by its schema; ``drop`` names direct identifiers that must not be released.

    Each dropped column must be a column of the file and not one of the schema's (exit 3,
    ``COLUMN_MISSING`` or ``IDENTIFIER_RELEASED``); so must the sampling-weight column
    ``weight`` (``COLUMN_MISSING`` or ``WEIGHT_INVALID``), read with :func:`load_weights`, and the linking
    column ``link`` (``--link-column``), a direct identifier too. Without a schema every other column is taken.
    """
    schema = load_schema(schema_path) if schema_path else None
    drop = list(dict.fromkeys([*drop, *([link] if link else [])]))
    if drop or weight:
        names = column_names(path)
        for column in [*drop, *([weight] if weight else [])]:
            option = ("--weight-column" if column == weight else "--link-column" if column == link
                      else "--drop-identifier")
            if column not in names:
                raise InvalidInputError(f"{option} {column!r} is not a column of the file", path=path,
                                        reason="COLUMN_MISSING")
            if schema is not None and column in schema.names and column == weight:
                raise InvalidInputError(f"column {column!r} holds the sampling weights, which are not an attribute: "
                                        "leave it out of the schema", path=schema_path, reason="WEIGHT_INVALID")
            if schema is not None and column in schema.names:
                raise InvalidInputError(f"column {column!r} is a direct identifier and would be released: leave "
                                        "it out of the schema", path=schema_path, reason="IDENTIFIER_RELEASED")
        if schema is None:
            schema = Schema.all_numeric([n for n in names if n not in drop and n != weight])
    ensure_fits([(path, len(schema.names) if schema else None)], PER_CELL)
    try:
        table = read_table(path, schema)
    except InvalidInputError as exc:
        if schema_path is None and exc.reason in ("VALUE_NOT_NUMERIC", "VALUE_MISSING"):  # say what comes next
            exc.message += (f"; without --schema every column is read as a number: draft a schema with `publisher "
                            f"schema --input {path} --out schema.json`, review its kinds and roles, then pass "
                            "--schema schema.json")
        raise
    return table, table.schema


def load_weights(path: str, weight: str | None):
    """The sampling weights of the input's column ``weight`` (each a number above zero), or None."""
    return None if weight is None else read_weight_column(path, weight)


def split_param(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"--param takes name=value, got {text!r}")
    return name.strip(), value.strip()


def route_params(methods: Sequence[str], texts: Sequence[str]) -> list[dict[str, str]]:
    """Give each ``name=value`` to the method of the chain that has that parameter.

    ``method.name=value`` names the method outright; a bare name that several
    methods of the chain accept is refused as ambiguous.
    """
    from publisher.methods.registry import METHODS

    for m in methods:
        if m not in METHODS:
            raise InvalidInputError(f"unknown method {m!r}; known: {', '.join(sorted(METHODS))}", reason="METHOD_UNKNOWN")
    chain = chain_problem(list(methods))
    if chain is not None:
        raise InvalidInputError(f"{' then '.join(methods)}: {chain[1]}", reason="METHOD_CHAIN_INVALID")
    routed: list[dict[str, str]] = [{} for _ in methods]
    for text in texts:
        name, value = split_param(text)
        owner, dot, bare = name.rpartition(".")
        if dot:
            if owner not in methods:
                raise UsageError(f"--param {name}: {owner!r} is not a method of this run")
            _once(routed[methods.index(owner)], bare, value, name)
            continue
        takers = [k for k, m in enumerate(methods) if name in METHODS[m].parsers]
        if len(takers) > 1:
            raise UsageError(f"--param {name} fits several methods; write method.{name}=value")
        if not takers:
            known = ", ".join(sorted({p for m in methods for p in METHODS[m].parsers})) or "none"
            raise InvalidInputError(f"{' then '.join(methods)} has no parameter {name!r} (their parameters: {known})",
                                    reason="PARAMETER_UNKNOWN")
        _once(routed[takers[0]], name, value, name)
    return routed


def _once(params: dict[str, str], name: str, value: str, given: str) -> None:
    """One value per parameter: a repeated key is a usage error, never the last one silently winning."""
    if name in params:
        raise UsageError(f"--param {given} is given twice ({params[name]!r} and {value!r}); give it once")
    params[name] = value


def secret_seed(args: argparse.Namespace) -> int | None:
    """The secret seed: ``--seed``, else ``None`` (fresh OS entropy). Never printed."""
    return check_non_negative("--seed", args.seed)
