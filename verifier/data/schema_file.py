"""Reading a schema file: the project's own JSON (SPEC section 1), or a Frictionless Table Schema or data package."""

from __future__ import annotations

from pathlib import Path

from verifier.data.bounded_files import read_bounded
from verifier.data.frictionless import is_frictionless, schema_from_frictionless
from verifier.data.schema import Schema
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.errors import InvalidInputError

__all__ = ["load_schema"]


def load_schema(path: str | Path) -> Schema:
    """Read a schema file strictly: ``{"attributes": [...]}``, or a Frictionless Table Schema or data package.

    In the Frictionless forms, roles and kinds come from the custom field
    properties of :mod:`verifier.data.frictionless` (docs/input-format.md).
    """
    p = Path(path)
    raw = read_bounded(p, "schema")
    try:
        data = loads_strict(raw)
    except StrictJSONError as exc:
        raise InvalidInputError(f"not a valid schema file: {exc}", path=str(p), reason="SCHEMA_INVALID") from None
    try:
        return schema_from_frictionless(data) if is_frictionless(data) else Schema.from_dict(data)
    except InvalidInputError as exc:
        raise InvalidInputError(exc.message, path=str(p), reason="SCHEMA_INVALID") from None
