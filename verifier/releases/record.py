"""A data subject's own record: read, validated against the schema, never echoed.

A record file (SPEC section 1) is a JSON object ``{"age": 34, "education":
"secondary"}`` or a CSV file with a header and one row. It must name exactly
the schema's attributes. A numeric value is a JSON number or an ASCII decimal
string (``"34"``, ``"-1.5"``, ``"2e3"``); an ordinal or nominal value is one
of the schema's categories, spelled exactly.

The record is the subject's secret: error messages name the file, the field
and what is wrong, never the value she typed (``spec/reliability.md``, the
record-entry threats), so that no diagnostic, log or terminal scrollback
holds it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from verifier.data.bounded_files import LIMITS, read_bounded
from verifier.data.strict_json import StrictJSONError, loads_strict
from verifier.errors import InvalidInputError, UsageError
from verifier.text import literal, note_normalized, same_name
from verifier.data.tables import read_csv_cells
from verifier.data.schema import Attribute, Schema

__all__ = ["LISTED", "MAX_RECORD_BYTES", "listed_categories", "read_record", "parse_record", "parse_number",
           "refuse_record_on_command_line"]

#: the largest record file read (a record of a few hundred attributes is a few kilobytes)
MAX_RECORD_BYTES = LIMITS["record"]

_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_EXACT_INT_LIMIT = 2**53


def parse_number(value: Any) -> tuple[float | None, str | None]:
    """``(number, None)``, or ``(None, why)`` for anything but a finite ASCII decimal.

    Accepts a JSON number (not a boolean) or a string of ASCII digits with an
    optional sign, decimal point and exponent. Refused: ``1_000``, non-ASCII
    digits, ``nan``, ``inf``, ``1e999`` (overflow), ``1e-400`` (underflows to
    zero), decimal commas, Unicode minus signs, integers a float cannot hold.

    >>> parse_number("2e3")
    (2000.0, None)
    >>> parse_number("1_000")[1]
    'is not a decimal number (ASCII digits, optional sign, . and exponent)'
    """
    if isinstance(value, bool) or value is None:
        return None, "is not a number"
    if isinstance(value, int):
        if abs(value) > _EXACT_INT_LIMIT:
            return None, "is an integer too large for a 64-bit float to hold exactly"
        return float(value), None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, "is not a finite number"
        return value, None
    if not isinstance(value, str):
        return None, "is not a number"
    text = value.strip()
    if _NUMBER_RE.fullmatch(text) is None:
        return None, "is not a decimal number (ASCII digits, optional sign, . and exponent)"
    number = float(text)
    if not math.isfinite(number):
        return None, "is too large for a 64-bit float"
    mantissa = re.split(r"[eE]", text)[0]
    if number == 0.0 and re.search(r"[1-9]", mantissa):
        return None, "is too small for a 64-bit float (it would become 0)"
    if "." not in text and "e" not in text.lower() and abs(int(text)) > _EXACT_INT_LIMIT:
        return None, "is an integer too large for a 64-bit float to hold exactly"
    return number, None


def _fail(path: str, reason: str, message: str) -> InvalidInputError:
    return InvalidInputError(message, path=path, reason=reason)


def _key(attr: Attribute, value: Any, path: str) -> float:
    if attr.kind == "numeric":
        number, why = parse_number(value)
        if why is not None:
            raise _fail(path, "RECORD_VALUE_INVALID", f"field {attr.name!r}: the value {why}")
        return float(number)  # type: ignore[arg-type]
    if not isinstance(value, str):
        raise _fail(path, "RECORD_VALUE_INVALID", f"field {attr.name!r}: the value must be one of the schema's categories, as text")
    assert attr.categories is not None
    try:
        return float(attr.categories.index(value))
    except ValueError:
        raise _fail(
            path, "RECORD_VALUE_INVALID",
            f"field {attr.name!r}: the value is not one of its {len(attr.categories)} categories (spelled exactly): "
            f"{listed_categories(attr.categories)}",
        ) from None


#: the categories an error lists at the most
LISTED = 20


def listed_categories(categories: Sequence[str]) -> str:
    """The schema's categories in an error (issue 60, item 4): the first :data:`LISTED`, each quoted and escaped,
    and how many more. They are the published schema's, never her value."""
    shown = ", ".join(f"'{literal(c)}'" for c in categories[:LISTED])
    return shown + (f", and {len(categories) - LISTED} more" if len(categories) > LISTED else "")


def parse_record(fields: Mapping[str, Any], schema: Schema, *, source: str = "record") -> np.ndarray:
    """The rank keys ``(m,)`` of a record given as ``{attribute: value}``.

    Every attribute of the schema must be present and no other; categorical
    attributes need their categories in the schema. ``source`` names the
    record in messages (a file path, or ``record`` for a form).
    """
    names = schema.names
    given = {same_name(str(k)): v for k, v in fields.items()}  # field names compared in Unicode NFC
    spelled = {same_name(str(k)): str(k) for k in fields}
    if len(given) < len(fields):
        raise _fail(source, "RECORD_FIELD_DUPLICATE", "a field is given twice (two spellings of one name)")
    known = {same_name(n) for n in names}
    unknown = [k for k in given if k not in known]
    if unknown:
        raise _fail(source, "RECORD_FIELD_UNKNOWN", f"field {unknown[0]!r} is not an attribute of the release (its attributes: {', '.join(map(repr, names))})")
    missing = [n for n in names if same_name(n) not in given]
    if missing:
        raise _fail(source, "RECORD_FIELD_MISSING", f"field {missing[0]!r} is missing; a record gives every attribute of the release")
    for attr in schema.attributes:
        if attr.is_categorical and attr.categories is None:
            raise _fail(source, "SCHEMA_INVALID", f"attribute {attr.name!r} has no category list to rank the record's value by")
    for attr in schema.attributes:
        note_normalized(spelled[same_name(attr.name)], attr.name, source)
    return np.array([_key(attr, given[same_name(attr.name)], source) for attr in schema.attributes], dtype=np.float64)


_PLAIN_PATH = re.compile(r"[\w./~+-]+", re.ASCII)


def refuse_record_on_command_line(value: str) -> None:
    """Refuse (exit 2, the value not shown) a ``--record`` argument that may be the record, not a file name.

    ``--record '{"age": 34}'``, ``--record 34`` or ``--record 34,50000`` would
    put her values in the shell history and the process list, and a "no such
    file" message would echo them back. A name that exists is always taken; a
    missing one is echoed only if it looks like a file name (ASCII letters,
    digits and ``_ . / ~ + -``, with at least one letter).
    """
    try:
        if Path(value).exists():
            return
    except (OSError, ValueError):  # a name too long for the file system, or a NUL byte: no file
        pass
    if _PLAIN_PATH.fullmatch(value) and re.search(r"[A-Za-z]", value) and parse_number(value)[1] is not None:
        return  # a missing file with an ordinary name: read_record says so, naming it
    raise UsageError("--record names a file holding your record; no file has that name, and the value is not "
                     "shown because it does not look like a file name (it may be the record itself, which never "
                     "goes on the command line, where the shell history and the process list keep it)",
                     reason="RECORD_ON_COMMAND_LINE")


def _record_bytes(p: Path, name: str) -> bytes:
    """The bytes of a regular record file (:func:`verifier.data.bounded_files.read_bounded`)."""
    return read_bounded(p, "record", reasons={"FILE_NOT_REGULAR": "RECORD_FILE_NOT_REGULAR",
                                              "FILE_TOO_LARGE": "RECORD_TOO_LARGE"})


def read_record(path: str | Path, schema: Schema) -> np.ndarray:
    """Read a subject's record file (JSON object, or CSV with one row) into rank keys.

    Only a regular file of at most :data:`MAX_RECORD_BYTES` is read: a device
    (``/dev/zero``), a pipe or a socket is refused before any byte is read.
    """
    p = Path(path)
    name = str(path)
    raw = _record_bytes(p, name)
    if p.suffix.lower() == ".csv":
        header, columns = read_csv_cells(p, raw)
        rows = len(columns[0]) if columns else 0
        if rows != 1:
            raise _fail(name, "RECORD_INVALID", f"a record file holds exactly one row under its header; this one has {rows}")
        return parse_record({h: col[0] for h, col in zip(header, columns)}, schema, source=name)
    try:
        data = loads_strict(raw)
    except StrictJSONError as exc:
        # the strict parser quotes an out-of-range number; her value stays unsaid
        why = (("a number is too small for a 64-bit float (it would become 0)" if "too small" in str(exc)
                else "a number is out of range") if str(exc).startswith("number") else str(exc))
        raise _fail(name, "RECORD_INVALID", f"not a valid JSON record: {why}") from None
    if not isinstance(data, dict):
        raise _fail(name, "RECORD_INVALID", "a JSON record is one object {\"attribute\": value, ...}")
    return parse_record(data, schema, source=name)
