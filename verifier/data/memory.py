"""Will the tables fit? The memory a command needs, estimated before it reads anything.

A command that runs out of memory half-way is killed by the operating system
with nothing said, after minutes of work. So the commands that read whole
tables first estimate what they will need, from the size of their inputs,
and stop at once with one FAIL line (exit 4, ``MEMORY_EXCEEDED``) that says
how much they need, how much there is, and how many records would fit.

- **Records and columns** come from the file without reading it: a Parquet
  file's metadata, or a CSV file's size divided by the mean length of its
  first lines (columns from the schema, or from the header).
- **The need** is a fixed start-up cost plus a cost per cell that each
  command declares, measured by ``python -m benchmarks.commands`` (the whole
  process's peak at 1e6 records, see docs/performance.md) and rounded up.
- **The budget** is ``PERMUTED_PRIVACY_MEMORY`` when it is set (``8G``,
  ``512M``, or bytes: a share of a server, say), else what the machine has
  available: the least of the kernel's MemAvailable, the room left under the
  process's cgroup limit and its address-space limit.
"""

from __future__ import annotations

import os
import re
import resource
import stat
from pathlib import Path
from typing import Sequence

from verifier.errors import InputIOError, UsageError

__all__ = ["ENV", "START_UP", "parse_size", "available_memory", "table_shape", "ensure_fits", "size_text"]

ENV = "PERMUTED_PRIVACY_MEMORY"
#: Python, numpy, pandas, pyarrow and numba loaded, before any table
START_UP = 300 * 2**20
_SAMPLE = 1 << 20
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str) -> int:
    """``"8G"``, ``"512M"``, ``"1.5GB"``, ``"2GiB"`` or a number of bytes."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*", text, flags=re.IGNORECASE)
    if not found:
        raise UsageError(f"{ENV} must be a size such as 8G or 512M, got {text!r}", reason="MEMORY_BUDGET_INVALID")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def size_text(n: float) -> str:
    """Bytes in words: ``1.6 GB``, ``850 MB``."""
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def _read_first(path: str, prefix: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if line.startswith(prefix):
                    return line
    except OSError:
        return None
    return None


def _cgroup_room() -> int | None:
    """What is left under this process's cgroup (v2) memory limit, when it has one."""
    try:
        line = Path("/proc/self/cgroup").read_text().splitlines()[0]
        folder = Path("/sys/fs/cgroup") / line.split("::", 1)[1].lstrip("/")
        limit = (folder / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int((folder / "memory.current").read_text().strip())
    except (OSError, IndexError, ValueError):
        return None


def available_memory() -> tuple[int, str]:
    """The memory budget in bytes, and where it comes from (for the FAIL line)."""
    given = os.environ.get(ENV)
    if given:
        return parse_size(given), f"{ENV}={given.strip()}"
    candidates: list[tuple[int, str]] = []
    line = _read_first("/proc/meminfo", "MemAvailable:")
    if line:
        candidates.append((int(line.split()[1]) * 1024, "MemAvailable"))
    else:
        try:
            candidates.append((os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"), "free pages"))
        except (ValueError, OSError):
            pass
    room = _cgroup_room()
    if room is not None:
        candidates.append((room, "left under the cgroup's memory.max"))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        candidates.append((soft, "ulimit -v"))
    return min(candidates) if candidates else (2**62, "unknown")


def table_shape(path: str | Path, columns: int | None = None) -> tuple[int, int] | None:
    """(records, columns) of a CSV or Parquet file, estimated without reading it; None when unreadable."""
    p = Path(path)
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):  # a pipe or a device: never opened here (the reader refuses it)
            return None
        if p.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(p).metadata
            return meta.num_rows, columns or meta.num_columns
        size = p.stat().st_size
        with open(p, "rb") as f:
            sample = f.read(_SAMPLE)
    except Exception:  # noqa: BLE001 - the reader itself will say what is wrong with the file
        return None
    lines = sample.split(b"\n")
    header, body = lines[0], lines[1:-1] if len(sample) == _SAMPLE else lines[1:]
    body = [b for b in body if b.strip()]
    if not body:
        return 0, columns or header.count(b",") + 1
    mean = sum(len(b) + 1 for b in body) / len(body)
    return int((size - len(header) - 1) / mean) + 1, columns or header.count(b",") + 1


def ensure_fits(tables: Sequence[tuple[str | Path, int | None]], per_cell: int) -> None:
    """Refuse, before reading, tables whose cells at ``per_cell`` bytes each exceed the budget.

    ``tables`` holds (path, columns the command takes, or None for all).
    Raises :class:`InputIOError` (exit 4, ``MEMORY_EXCEEDED``) naming the
    largest table, how much the command needs and how many records would fit.
    """
    shapes = [(str(path), table_shape(path, columns)) for path, columns in tables]
    shapes = [(path, shape) for path, shape in shapes if shape is not None]
    if not shapes:
        return
    cells = sum(n * m for _, (n, m) in shapes)
    need = START_UP + per_cell * cells
    budget, source = available_memory()
    if need <= budget:
        return
    path, (n, m) = max(shapes, key=lambda s: s[1][0] * s[1][1])
    fit = max(0, int(n * (budget - START_UP) / (need - START_UP)))
    raise InputIOError(
        f"about {n:,} records x {m} columns: this command needs about {size_text(need)} and "
        f"{size_text(budget)} is available ({source}); about {fit:,} records would fit. Run it on a machine "
        f"with more memory or on a sample; {ENV} sets the budget",
        path=path, reason="MEMORY_EXCEEDED")
