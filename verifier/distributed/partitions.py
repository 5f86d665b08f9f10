"""Tables for the distributed engine: one file, or a directory of Parquet parts read where they lie.

A partitioned table is a directory whose ``*.parquet`` files (in name order)
are its parts (:mod:`verifier.data.parts`). Each part is read on a worker with the strict rules of
:func:`verifier.data.tables.read_table`, under one schema: the one given, or
the first part's (its nominal columns' categories then come from that part,
and a category another part adds is refused there, naming the part). A
single CSV or Parquet file is read here and cut into parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from verifier.data.parts import part_files
from verifier.data.schema import Schema
from verifier.data.tables import read_table
from verifier.distributed.cluster import default_pieces

__all__ = ["TableParts", "part_files", "table_pair", "table_parts"]


def _load(path: str, schema: Schema) -> np.ndarray:
    """One part's rank keys, read on a worker."""
    return read_table(path, schema).values


@dataclass(frozen=True, eq=False)
class TableParts:
    """A table as futures of ``(n_p, m)`` rank-key arrays, with its schema and where it came from."""

    parts: list
    schema: Schema
    where: str

    def n_records(self, client) -> int:
        """How many records the parts hold together (each part counted where it lies)."""
        return int(sum(client.gather([client.submit(len, p) for p in self.parts])))


def table_parts(client, path: str, schema: Schema | None, *, pieces: int) -> TableParts:
    """``path`` on the cluster: a directory's parts read by the workers, or one file read here and cut in ``pieces``."""
    files = part_files(path)
    if Path(path).is_dir():
        first = read_table(files[0], schema)  # the schema every part is read with
        futures = [client.submit(_load, str(f), first.schema) for f in files]
        return TableParts(futures, first.schema, str(path))
    table = read_table(path, schema)
    cuts = np.linspace(0, table.n_records, max(1, pieces) + 1).astype(np.int64)[1:-1]
    return TableParts([client.scatter(p) for p in np.split(table.values, cuts)], table.schema, str(path))


def table_pair(client, original: str, anonymized: str, schema: Schema | None) -> tuple[TableParts, TableParts]:
    """X and Y on the cluster, Y read with X's schema; a single file is cut in twice as many pieces as workers."""
    pieces = default_pieces(client)
    x = table_parts(client, original, schema, pieces=pieces)
    return x, table_parts(client, anonymized, x.schema, pieces=pieces)
