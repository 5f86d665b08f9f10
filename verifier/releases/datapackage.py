"""The release as a Frictionless data package: ``datapackage.json`` (docs/release-format.md, section 1.5).

A reader outside the project (pandas, R, a spreadsheet import, a data
portal) cannot know from ``release.csv`` alone that ``00501`` is a category
and not the number 501, which categories a column may hold, or that ``[20,40)``
is an interval. The data package says it in a standard vocabulary: one
tabular resource (path, ``hash``, ``bytes``, ``mediatype``) and its Table
Schema (a type per column, categories as ``enum`` and ``categories`` with
``categoriesOrdered``, no missing values, generalized cells described).
The project's roles and kinds sit in documented custom properties
(:mod:`verifier.data.frictionless`), so ``--schema`` can read a data package back.

The file is derived from the signed manifest and the data's digest: the
publisher writes it, lists it in the statement, and the verifier rebuilds it
and refuses a release whose copy says anything else (``DATAPACKAGE_MISMATCH``).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from verifier.data.frictionless import table_schema
from verifier.data.sampling_weights import WEIGHT_COLUMN, WEIGHTS
from verifier.data.schema import Schema
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.errors import InvalidInputError
from verifier.releases.data_files import is_data, is_part
from verifier.releases.family import generalized_columns

__all__ = ["DATAPACKAGE", "PROFILE", "datapackage", "datapackage_problem"]

DATAPACKAGE = "datapackage.json"
PROFILE = "https://datapackage.org/profiles/2.0/datapackage.json"
_MEDIA = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet"}


def _package_name(dataset_id: str) -> str:
    """The package's ``name`` (lower-case letters, digits, ``.``, ``_``, ``-``); the dataset id itself is the title."""
    return re.sub(r"[^a-z0-9._-]+", "-", dataset_id.lower()).strip("-") or "release"


def _weights_resource(sha256: str, size: int) -> dict[str, Any]:
    """``weights.csv`` as a second tabular resource: one positive number per released record, in the data's order."""
    return {
        "name": "weights", "type": "table", "path": WEIGHTS, "format": "csv", "mediatype": "text/csv",
        "hash": f"sha256:{sha256}", "bytes": size, "encoding": "utf-8",
        "description": "the sampling weight of each record of the release, row for row",
        "schema": {"fields": [{"name": WEIGHT_COLUMN, "type": "number", "constraints": {"required": True,
                                                                                      "exclusiveMinimum": 0}}],
                   "missingValues": []},
    }


def _data_resource(name: str, data_name: str, sha256: str, size: int, schema: Schema,
                   generalized: Sequence[str]) -> dict[str, Any]:
    data_format = "parquet" if data_name.endswith(".parquet") else "csv"
    resource: dict[str, Any] = {
        "name": name, "type": "table", "path": data_name, "format": data_format,
        "mediatype": _MEDIA[data_format], "hash": f"sha256:{sha256}", "bytes": size,
    }
    if data_format == "csv":
        resource["encoding"] = "utf-8"
        resource["dialect"] = {"delimiter": ",", "header": True, "quoteChar": '"', "doubleQuote": True,
                               "lineTerminator": "\n"}
    resource["schema"] = table_schema(schema, generalized=generalized, data_format=data_format)
    return resource


def datapackage(*, dataset_id: str, release_version: int, schema: Schema, data: Sequence[tuple[str, str, int]],
                generalized: Sequence[str] = (), weights: tuple[str, int] | None = None) -> dict[str, Any]:
    """The data package of a release: its data (name, sha256, size) with their Table Schema, and ``weights``.

    One data file is the resource ``release``; the parts of a partitioned
    release are the resources ``release-00000``, ``release-00001``, ... in
    order, each with the same schema. ``weights`` (sha256, size) adds the
    resource ``weights``.
    """
    if len(data) == 1 and not is_part(data[0][0]):
        resources = [_data_resource("release", *data[0], schema, generalized)]
    else:
        resources = [_data_resource(name.rsplit(".", 1)[0], name, sha256, size, schema, generalized)
                     for name, sha256, size in data]
    if weights is not None:
        resources.append(_weights_resource(*weights))
    return {"$schema": PROFILE, "name": _package_name(dataset_id), "title": dataset_id,
            "version": str(release_version), "resources": resources}


def datapackage_problem(predicate: dict[str, Any], listed: Sequence[tuple[str, str, int]], raw: bytes) -> str | None:
    """Why the release's ``datapackage.json`` is not the one its manifest and listed files imply, or None when it is.

    ``listed`` holds each listed file's name, sha256 and size, the data file (or its parts) first.
    """
    try:
        schema = Schema.from_dict(predicate["schema"])
    except InvalidInputError as exc:
        return f"the manifest's schema is not valid ({exc.message})"
    data = [e for e in listed if is_data(e[0])]
    weights = next(((digest, n) for name, digest, n in listed if name == WEIGHTS), None)
    expected = datapackage(dataset_id=predicate["datasetId"], release_version=predicate["releaseVersion"],
                           schema=schema, data=data, generalized=generalized_columns(predicate["methods"], schema),
                           weights=weights)
    try:
        got = loads_strict(raw, interoperable=True)
    except StrictJSONError as exc:
        return f"it is not strict JSON: {exc}"
    if got == expected:
        return None
    if not isinstance(got, dict):
        return "it is not a JSON object"
    differ = sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))
    return f"it says something else than the manifest and the data about {', '.join(map(repr, differ))}"
