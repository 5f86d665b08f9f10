"""What the audit makes of a release another tool made (issue 38, item 2).

The ``external`` step cannot be rerun here: whether the release is one of
the tool's runs is listed as not checked, with why, never as passed. What
can be checked is checked: each file the step publishes (the tool's
configuration, its ARX hierarchies) against its signed SHA-256 and size,
and each ARX hierarchy against the tree of ``hierarchies.json`` that the
release's cells are read with (:mod:`verifier.data.arx_hierarchy`), so a
publisher cannot show one hierarchy and read the cells with another.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any, Iterator

from verifier.data.arx_hierarchy import read_arx_hierarchy
from verifier.errors import InvalidInputError
from verifier.releases.family import EXTERNAL

__all__ = ["external_checks", "not_replayable"]


def not_replayable(params: dict[str, Any]) -> str:
    """Why an external step is not rerun: the words the audit and ``publisher replay`` both say."""
    return (f"produced by {params.get('produced_by')}: not replayable (only that tool can rerun it), so whether "
            "the release is one of its runs is not checked")


def _file_check(name: str, params: dict[str, Any], raw: bytes | None) -> tuple[str, Any, Any, bool, str]:
    claimed = params.get("sha256")
    if raw is None:
        return name, claimed, None, False, "its published content cannot be read"
    computed = hashlib.sha256(raw).hexdigest()
    size = params.get("bytes")
    ok = computed == claimed and (size is None or size == len(raw))
    return name, claimed, computed, ok, "" if ok else "the published file is not the one its SHA-256 and size name"


def external_checks(methods: list[Any], hierarchies: dict[str, Any] | None) -> Iterator[tuple[str, Any, Any, bool, str]]:
    """``(name, claimed, computed, ok, note)`` of every published file of each external step; its replay is
    :func:`not_replayable`."""
    for i, step in enumerate(methods):
        if not isinstance(step, dict) or step.get("method") != EXTERNAL:
            continue
        params = step.get("parameters") or {}
        config = params.get("configuration")
        if isinstance(config, dict):
            try:
                raw = base64.b64decode(str(config.get("base64")), validate=True)
            except (binascii.Error, ValueError):
                raw = None
            yield _file_check(f"methods[{i}].configuration", config, raw)
        for column, entry in (params.get("hierarchy_files") or {}).items():
            name = f"methods[{i}].hierarchy_files.{column}"
            text = str(entry.get("text"))
            found = _file_check(name, entry, text.encode("utf-8"))
            if not found[3]:
                yield found
                continue
            try:
                tree = read_arx_hierarchy(column, str(entry.get("name")), text.encode("utf-8")).tree()
            except InvalidInputError as exc:
                yield name, found[1], found[2], False, f"it is no ARX hierarchy: {exc.message}"
                continue
            used = (hierarchies or {}).get(column)
            if params.get("model") == "generalized" and tree != used:
                yield name, found[1], found[2], False, ("its tree is not the one hierarchies.json reads the cells "
                                                        "with")
            else:
                yield found
