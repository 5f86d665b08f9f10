"""Frictionless Table Schemas: the project's schema written as one, and read back from one (or a data package).

Roles and kinds travel in two documented custom field properties,
:data:`ROLE` and :data:`KIND`; generalized columns are marked with
:data:`GENERALIZED` (docs/release-format.md, section 1.5).
"""

from __future__ import annotations

from typing import Any, Sequence

from verifier.data.schema import Attribute, Schema
from verifier.errors import InvalidInputError

__all__ = ["ROLE", "KIND", "GENERALIZED", "table_schema", "schema_from_frictionless", "is_frictionless"]

#: custom field properties: the column's role and kind in the project's schema, and its generalized notation
ROLE, KIND, GENERALIZED = "permuted_privacy:role", "permuted_privacy:kind", "permuted_privacy:generalized"
_NOTATION = ("generalized cells (docs/release-format.md, section 1.1): a value, an interval [a,b] or [a,b), a set "
             "{a,b}, a hierarchy node, or * for every value")


def _field(attr: Attribute, generalized: bool, data_format: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": attr.name}
    if generalized:
        out["type"] = "object" if data_format == "parquet" else "string"
        out["description"] = _NOTATION + (" (in Parquet, a struct: the text and what it covers, section 1.2)"
                                          if data_format == "parquet" else "")
        out[GENERALIZED] = True
    elif attr.kind == "numeric":
        out["type"] = "number"
    else:
        out["type"] = "string"
        if attr.categories is not None:
            out["categories"] = list(attr.categories)
            out["categoriesOrdered"] = attr.kind == "ordinal"
            out["constraints"] = {"required": True, "enum": list(attr.categories)}
    out.setdefault("constraints", {"required": True})
    out[ROLE] = attr.role
    out[KIND] = attr.kind
    return out


def table_schema(schema: Schema, *, generalized: Sequence[str] = (), data_format: str = "csv") -> dict[str, Any]:
    """A Frictionless Table Schema of ``schema`` (no missing values: a release has none)."""
    return {"fields": [_field(a, a.name in generalized, data_format) for a in schema.attributes],
            "missingValues": []}


def is_frictionless(data: Any) -> bool:
    """Whether a parsed schema file is a Frictionless Table Schema or data package rather than the project's own."""
    return isinstance(data, dict) and "attributes" not in data and ("fields" in data or "resources" in data)


def _attribute(i: int, item: Any) -> Attribute:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise InvalidInputError(f"field {i} of the Table Schema is not an object with a name")
    typ = item.get("type", "string")
    categories = item.get("categories")
    if categories is None and isinstance(item.get("constraints"), dict):
        categories = item["constraints"].get("enum")
    if categories is not None and (not isinstance(categories, list) or not all(isinstance(c, str) for c in categories)):
        raise InvalidInputError(f"field {item['name']!r}: categories must be a list of strings "
                                "(labelled categories {value, label} are not read)")
    kind = item.get(KIND)
    if kind is None:
        if typ in ("number", "integer"):
            kind = "numeric"
        elif typ == "string":
            kind = "ordinal" if item.get("categoriesOrdered") is True else "nominal"
        else:
            raise InvalidInputError(f"field {item['name']!r} has Frictionless type {typ!r}; a column is a number, "
                                    "an integer or a string")
    return Attribute(name=item["name"], kind=kind, role=item.get(ROLE, "quasi_identifier"),
                     categories=tuple(categories) if categories is not None and kind != "numeric" else None)


def schema_from_frictionless(data: dict[str, Any]) -> Schema:
    """A project schema from a Frictionless Table Schema (``{"fields": [...]}``) or data package.

    A data package gives the Table Schema of its first tabular resource. Types:
    ``number`` and ``integer`` are numeric columns, ``string`` with
    ``categoriesOrdered: true`` ordinal, any other ``string`` nominal, with
    the categories of ``categories`` or of the ``enum`` constraint. Roles come
    from the ``permuted_privacy:role`` property (default ``quasi_identifier``)
    and ``permuted_privacy:kind`` overrides the kind.
    """
    if isinstance(data.get("resources"), list):
        tables = [r for r in data["resources"] if isinstance(r, dict) and isinstance(r.get("schema"), dict)]
        if not tables:
            raise InvalidInputError("the data package has no resource with an inline Table Schema")
        data = tables[0]["schema"]
    fields = data.get("fields")
    if not isinstance(fields, list) or not fields:
        raise InvalidInputError('a Frictionless Table Schema is an object {"fields": [...]}')
    return Schema(tuple(_attribute(i, item) for i, item in enumerate(fields, start=1)))
