"""Checks of command-line values that argparse cannot express: each failure is a usage error (exit 2)."""

from __future__ import annotations

import argparse
import math
import os

from verifier.attacks.match_settings import MAX_SAMPLES
from verifier.frontend.output_paths import check_output
from verifier.errors import UsageError

__all__ = ["COUNTS", "count", "check_fraction", "check_non_negative", "check_out_file", "check_positive", "check_probability",
           "check_record_number", "parse_v", "same_file"]


#: every whole-number option's range (docs/release-format.md, section 4.2): checked as it is parsed, before any work.
#: A random-match test draws at most a million records; a replay simulates at most 10,000 releases.
COUNTS = {"samples": (1, MAX_SAMPLES), "runs": (2, 10_000), "power_runs": (0, 10_000), "exhaustive_limit": (0, 2**53),
          "seed": (0, 2**64 - 1), "workers": (1, 4096), "version": (1, 2**53), "part_rows": (1, 2**53),
          "distance": (0, 2**53), "record": (1, 2**53)}


def count(kind: str):
    """An argparse ``type`` for a whole number of ``kind`` (a key of :data:`COUNTS`), refused outside its range
    as the option is parsed (a usage error, exit 2) rather than after minutes of work."""
    low, high = COUNTS[kind]

    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text[:40]} is outside its range, {low} to {high:,}")
        return value

    parse.__name__ = "count"
    return parse


def check_probability(flag: str, value: float) -> float:
    """A level such as ``--alpha``: strictly between 0 and 1."""
    if not 0.0 < value < 1.0:
        raise UsageError(f"{flag} must be strictly between 0 and 1, got {value}")
    return value


def check_fraction(flag: str, value: float | None) -> float | None:
    """A share such as ``--max-linked-share``: between 0 and 1 inclusive (``None`` passes)."""
    if value is not None and not 0.0 <= value <= 1.0:
        raise UsageError(f"{flag} must be between 0 and 1, got {value}")
    return value


def check_positive(flag: str, value: int) -> int:
    """A count such as ``--samples``: at least 1."""
    if value < 1:
        raise UsageError(f"{flag} must be at least 1, got {value}")
    return value


def check_non_negative(flag: str, value: int | None) -> int | None:
    """A seed: a non-negative integer (``None`` passes)."""
    if value is not None and value < 0:
        raise UsageError(f"{flag} must be a non-negative integer, got {value}")
    return value


def check_record_number(record: int | None, n: int, path: str | None) -> None:
    """``--record N`` numbers a record of the original from 1 to n (``None`` passes)."""
    if record is not None and not 1 <= record <= n:
        raise UsageError(f"--record must be between 1 and {n}, got {record}", path=path)


def parse_v(text: str | None, m: int) -> list[float] | None:
    """``--v``: one non-negative spread for every attribute, or ``m`` comma-separated ones."""
    if text is None:
        return None
    try:
        v = [float(t) for t in text.split(",")]
    except ValueError:
        raise UsageError(f"--v takes {m} comma-separated numbers, got {text!r}") from None
    if len(v) == 1:
        v = v * m
    if len(v) != m or not all(math.isfinite(t) and t >= 0 for t in v):
        raise UsageError(f"--v takes one non-negative number or {m} comma-separated ones, got {text!r}")
    return v


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one existing file (an output must never overwrite an input)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_out_file(out: str | None, *inputs: str | None) -> None:
    """``--out FILE`` for per-record rows: ``.parquet`` or ``.csv``, and never one of the command's inputs."""
    if out is None:
        return
    from verifier.data.record_file import record_file_format

    record_file_format(out)
    check_output(out, inputs=inputs)
