"""A partitioned table: a directory whose ``*.parquet`` files, in name order, are its parts.

Spark, Dask and pyarrow's dataset writer leave tables this way. Every engine
reads one by the same rules: the parts are the directory's own regular
files (a link could lead anywhere, and is refused), and a directory without
a part is no table.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from verifier.errors import InvalidInputError

__all__ = ["PART_SUFFIXES", "part_files"]

#: the suffixes of a part
PART_SUFFIXES = (".parquet", ".pq")


def part_files(path: str | Path) -> list[Path]:
    """The parts of a partitioned table: the ``*.parquet`` files of a directory, in name order; or the file itself."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    parts = sorted(q for q in p.iterdir() if q.suffix.lower() in PART_SUFFIXES)
    for q in parts:  # a part is the directory's own regular file: a link could lead anywhere
        info = os.lstat(q)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            raise InvalidInputError("is a link or not a regular file; a directory of parts holds only its own "
                                    "regular files", path=str(q), reason="UNSAFE_PATH")
    if not parts:
        raise InvalidInputError("is a directory without .parquet parts", path=str(path), reason="FILE_NOT_FOUND")
    return parts
