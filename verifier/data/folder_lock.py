"""An exclusive lock on a folder that several processes write (a release log, a witness's state)."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from verifier.errors import InputIOError

__all__ = ["LOCK_NAME", "locked"]

#: the lock file in the folder; it holds nothing
LOCK_NAME = ".lock"


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the folder's lock (waiting for another holder) while the block runs; ``LOG_UNWRITABLE`` (exit 4) when
    the lock file cannot be opened."""
    try:
        handle = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        raise InputIOError(f"cannot open the folder's lock ({exc.strerror})", path=str(folder),
                           reason="LOG_UNWRITABLE") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)
