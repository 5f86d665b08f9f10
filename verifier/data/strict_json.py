"""Strict JSON parsing: no duplicate keys, no NaN or Infinity, no surprises.

Python's :func:`json.loads` keeps the last value of a duplicated key, accepts
``NaN`` and ``Infinity``, and turns ``1e400`` into ``inf``
(``spec/reliability.md`` section 2). Every JSON document the project reads
(schemas, records, manifests) goes through :func:`loads_strict` instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["StrictJSONError", "loads_strict"]


class StrictJSONError(ValueError):
    """The document is not strict JSON; the message says why."""


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not allowed")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise StrictJSONError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {text[:40]!r} is out of range")
    return value


def loads_strict(text: str | bytes) -> Any:
    """Parse ``text`` as JSON, rejecting duplicate keys and non-finite numbers.

    Raises
    ------
    StrictJSONError
        With a short reason; the caller adds the file name.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(f"not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        # Over-long integers (CVE-2020-10735 limit) and absurd nesting.
        raise StrictJSONError(type(exc).__name__ + ": " + str(exc)[:80]) from None
