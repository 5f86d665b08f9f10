"""Strict JSON parsing: no duplicate keys, no NaN or Infinity, no surprises.

Python's :func:`json.loads` keeps the last value of a duplicated key, accepts
``NaN`` and ``Infinity``, turns ``1e400`` into ``inf`` and ``1e-400`` into 0
(``spec/reliability.md`` section 2). Every JSON document the project reads
(schemas, records, manifests) goes through :func:`loads_strict` instead, and
refuses all of these. A signed document (manifest, envelope, policy, data
package, hierarchies) is read ``interoperable``: an integer beyond 2**53 is
refused too, since a browser's JSON reader (the subject's page, whose twin is
``verifier/page/strict_json.js``) cannot hold it exactly (RFC 7493, I-JSON).
"""

from __future__ import annotations

import json
import math
import re
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
    if value == 0 and any(c in "123456789" for c in text.lower().split("e")[0]):
        raise StrictJSONError(f"number {text[:40]!r} is too small (it would become 0)")
    return value


#: the largest integer every JSON reader holds exactly (a 64-bit float's)
EXACT_INTEGER = 2**53


def _exact_int(text: str) -> int:
    value = int(text)
    if abs(value) > EXACT_INTEGER:
        raise StrictJSONError(f"integer {text[:40]!r} is beyond 2**53, which not every JSON reader holds exactly")
    return value


#: the deepest nesting read (the page's reader holds the same): Python's own limit is its stack's, which varies
MAX_DEPTH = 500
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')


def _depth(text: str) -> int:
    """The document's deepest nesting of arrays and objects, strings left out (a bracket inside one is text)."""
    if "[" not in text and "{" not in text:
        return 0
    import numpy as np

    bare = _STRINGS.sub("", text).encode("utf-8", "surrogatepass")
    steps = np.frombuffer(bare.translate(_STEPS), dtype=np.int8).astype(np.int64) - 1
    return int(np.cumsum(steps).max()) if steps.size else 0


_STEPS = bytes(2 if b in b"[{" else 0 if b in b"]}" else 1 for b in range(256))


def loads_strict(text: str | bytes, *, interoperable: bool = False) -> Any:
    """Parse ``text`` as JSON, rejecting duplicate keys, non-finite numbers and numbers that underflow to 0; and
    with ``interoperable``, integers beyond 2**53.

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
    if _depth(text) > MAX_DEPTH:
        raise StrictJSONError(f"nesting deeper than {MAX_DEPTH}")
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            **({"parse_int": _exact_int} if interoperable else {}),
        )
    except StrictJSONError:
        raise
    except json.JSONDecodeError as exc:
        raise StrictJSONError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        # Over-long integers (CVE-2020-10735 limit) and absurd nesting.
        raise StrictJSONError(type(exc).__name__ + ": " + str(exc)[:80]) from None
