"""Per-record results in a file, never on stdout: Parquet (list columns kept) or CSV, streamed in batches, atomic.

A census has millions of records; printing each one's matches as JSON made a
command write hundreds of megabytes to a terminal. ``--out FILE`` writes one
row per record instead, batch by batch (the memory of one batch, never of a
whole copy of the table), into a temporary file that is renamed into place
when complete: a failed run leaves no half-written file.

Parquet keeps list columns (a record's matches, her deviations per match);
CSV, which has no lists, leaves them out and keeps the scalar columns.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from verifier.data.tables import write_atomic
from verifier.errors import UsageError

__all__ = ["BATCH", "record_file_format", "write_record_file"]

#: records per written batch
BATCH = 65_536


def record_file_format(path: str) -> str:
    """``parquet`` or ``csv`` from the file name; anything else is a usage error (exit 2)."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise UsageError(f"--out takes a .parquet or .csv file name, got {path!r}", path=path)
    return suffix[1:]


def _table(batch: Mapping[str, Any], keep_lists: bool):
    import pyarrow as pa

    columns = {}
    for name, values in batch.items():
        array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(np.asarray(values))
        if keep_lists or not pa.types.is_list(array.type):
            columns[name] = array
    return pa.table(columns)


def write_record_file(path: str, batches: Iterable[Mapping[str, Any]]) -> int:
    """Write the batches (column name -> numpy array or Arrow array) to ``path``; returns the rows written.

    Each batch is written in a second thread while the next one is built
    (Arrow's writers release the GIL), and Parquet columns are written
    without dictionary encoding: per-record figures are nearly all distinct,
    so the dictionary was built and thrown away page after page (1e7
    records: 6.5 s of writing against 2.9 s, and a file 8 % smaller).
    """
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    fmt = record_file_format(path)
    written = 0

    def fill(handle) -> None:
        nonlocal written
        writer = None
        pending: Future | None = None
        with ThreadPoolExecutor(max_workers=1) as pool:
            try:
                for batch in batches:
                    table = _table(batch, keep_lists=fmt == "parquet")
                    if writer is None:
                        writer = (pq.ParquetWriter(handle, table.schema, use_dictionary=False) if fmt == "parquet"
                                  else pcsv.CSVWriter(handle, table.schema))
                    if pending is not None:
                        pending.result()
                    pending = pool.submit(writer.write_table, table)
                    written += table.num_rows
                if pending is not None:
                    pending.result()
            finally:
                if pending is not None:
                    wait([pending])  # never close the writer under a write still running
                if writer is not None:
                    writer.close()

    write_atomic(path, fill, binary=True)
    return written
