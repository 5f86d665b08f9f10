"""A release's data: one file (``release.csv``, ``release.parquet``) or Parquet parts (docs/release-format.md, section 1.7).

The parts are ``release-00000.parquet``, ``release-00001.parquet``, ... A census does not fit one file a worker can read, so a release may cut its
data by rows into Parquet parts. Each part is listed in the signed statement
like a single data file, with its own sha256 and size; the parts are
numbered from 00000 without a gap, listed in that order, and together, in
that order, they are the released table. Nothing else changes: the schema,
the claims and ``weights.csv`` (row for row, over the parts in order) are
those of the whole table.

Verification streams each part through its hash and keeps none of it. A
reader that parses a part afterwards (the local table, a Dask worker) reads
it again with :func:`read_part`, which checks the digest on the very bytes it
returns: a part swapped after verification is refused, never parsed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from verifier.releases.listed_files import read_listed

__all__ = ["DATA_FILE", "DATA_FILES", "MAX_PARTS", "PART_MEDIA", "is_data", "is_part", "part_name",
           "part_numbering_problem", "read_part"]

DATA_FILE = "release.csv"
#: the one data file a release may hold, and the media type its manifest entry must give (SPEC section 9)
DATA_FILES = {"release.csv": "text/csv", "release.parquet": "application/vnd.apache.parquet"}
PART_MEDIA = "application/vnd.apache.parquet"
#: parts a release may have (five digits)
MAX_PARTS = 100_000
_PART = re.compile(r"release-(\d{5})\.parquet")


def is_part(name: str) -> bool:
    """Whether ``name`` is a part's name (``release-`` five digits ``.parquet``)."""
    return _PART.fullmatch(name) is not None


def is_data(name: str) -> bool:
    """Whether ``name`` is the data file or one of its parts."""
    return name in DATA_FILES or is_part(name)


def part_name(i: int) -> str:
    """The name of part ``i`` (0-based)."""
    if not 0 <= i < MAX_PARTS:
        raise ValueError(f"a release has at most {MAX_PARTS} parts")
    return f"release-{i:05d}.parquet"


def part_numbering_problem(names: Sequence[str]) -> str | None:
    """Why the listed parts are not numbered 00000, 00001, ... in listed order, or None when they are."""
    for i, name in enumerate(names):
        if name != part_name(i):
            return (f"the data's parts must be listed in order as release-00000.parquet, release-00001.parquet, "
                    f"...; entry {i + 1} is {name}")
    return None


def read_part(root: str | Path, entry: tuple[str, str, int], shown: str) -> bytes:
    """A verified part's bytes, read again and checked again against its signed digest before anyone parses them."""
    name, sha256, size = entry
    return read_listed(Path(root) / name, sha256, size, f"{shown}/{name}", data=True)
