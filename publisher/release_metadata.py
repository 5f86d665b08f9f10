"""Who published a release and why: the manifest's ``release_metadata`` (docs/release-format.md, section 2).

``publisher release --publisher NAME --contact ADDRESS --purpose TEXT --license SPDX``;
each value one line of text that a terminal shows as it is, the licence an
SPDX identifier or expression.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from verifier.errors import InvalidInputError

__all__ = ["METADATA_FIELDS", "check_metadata", "unsafe_text"]

#: who published a release and why (``publisher release --publisher --contact --purpose --license``)
METADATA_FIELDS = ("publisher", "contact", "purpose", "license")
#: line and paragraph separators, bidi controls, and the invisible format characters (zero-width spaces and
#: joiners, word joiners, the byte-order mark) that make two different names look the same
_UNSAFE = frozenset("\u2028\u2029\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")


def unsafe_text(value: str) -> bool:
    """Whether a line of manifest text holds a control, direction-changing or invisible character."""
    return any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 or c in _UNSAFE for c in value)
_SPDX = re.compile(r"[A-Za-z0-9.+-]+(?: (?:AND|OR|WITH) [A-Za-z0-9.+-]+)*")


def check_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The release metadata as the manifest carries it: single lines of text, the licence an SPDX expression."""
    out = {}
    for key, value in metadata.items():
        if value is None:
            continue
        if key not in METADATA_FIELDS:
            raise InvalidInputError(f"unknown release metadata {key!r}; known: {', '.join(METADATA_FIELDS)}",
                                    reason="PARAMETER_INVALID")
        if not isinstance(value, str) or not value.strip() or len(value) > 2000 or unsafe_text(value):
            raise InvalidInputError(f"--{key} must be one line of text (at most 2000 characters)",
                                    reason="PARAMETER_INVALID")
        if key == "license" and _SPDX.fullmatch(value) is None:
            raise InvalidInputError("--license must be an SPDX licence identifier or expression, such as "
                                    "CC-BY-4.0 or 'MIT OR Apache-2.0'", reason="PARAMETER_INVALID")
        out[key] = value
    return out
