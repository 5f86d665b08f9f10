"""Reading the files a release lists: regular files only, never through a link, never past their declared size.

Every file of a release is read here (SPEC section 9, step 5). A link, a
special file or a file with other hard links is refused before it is opened;
a file is read at most up to its declared size plus one byte, so a file grown
to fill the disk is refused after that byte; and its sha256 is compared with
the signed one. :func:`read_listed` returns the checked bytes;
:func:`hash_listed` streams a large file through the hash in chunks and keeps
none of it (a part of a partitioned release, :mod:`verifier.releases.data_files`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO

from verifier.errors import VerifierError

__all__ = ["ReleaseError", "fail", "hash_listed", "open_regular", "read_capped", "read_listed"]

#: chunk in which a large listed file is hashed
CHUNK = 8 << 20


class ReleaseError(VerifierError):
    """The release is not trustworthy (exit code 1)."""

    exit_code = 1
    default_reason = "VERIFICATION_FAILED"


def fail(path: str, reason: str, message: str) -> ReleaseError:
    return ReleaseError(message, path=path, reason=reason)


def open_regular(path: Path, limit: int, shown: str) -> BinaryIO:
    """A regular file of at most ``limit`` bytes, opened without following links; links and special files refused."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise fail(shown, "FILE_MISSING", "is listed but not in the release") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise fail(shown, "UNSAFE_PATH", "is a link or a special file, not a regular file")
    if info.st_nlink > 1:
        raise fail(shown, "UNSAFE_PATH", "has other hard links; a release holds its own files")
    if info.st_size > limit:
        raise fail(shown, "SIZE_MISMATCH", f"holds {info.st_size} bytes, more than the {limit} allowed")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise fail(shown, "FILE_UNREADABLE", f"cannot be read ({exc.strerror})") from None
    return os.fdopen(fd, "rb")


def read_capped(path: Path, limit: int, shown: str) -> bytes:
    """Read a regular file of at most ``limit`` bytes (one byte more is read, to see that it is longer).

    No more is asked for than the file holds: a declared size of a terabyte allocates nothing.
    """
    with open_regular(path, limit, shown) as handle:
        return handle.read(min(limit, os.fstat(handle.fileno()).st_size) + 1)


def _size_problem(got: int, size: int) -> str:
    return f"holds {got}{'+' if got > size else ''} bytes; the manifest says {size}"


def _changed(data: bool) -> str:
    return f"its sha256 differs from the manifest's: {'the data was changed' if data else 'the file was changed'}"


def read_listed(path: Path, sha256: str, size: int, shown: str, *, data: bool) -> bytes:
    """A listed file, read at most once and only up to its declared size plus one byte, then hashed."""
    content = read_capped(path, size, shown)
    if len(content) != size:
        raise fail(shown, "SIZE_MISMATCH", _size_problem(len(content), size))
    if hashlib.sha256(content).hexdigest() != sha256:
        raise fail(shown, "DIGEST_MISMATCH", _changed(data))
    return content


def hash_listed(path: Path, sha256: str, size: int, shown: str) -> None:
    """Check a listed data file's size and sha256 chunk by chunk, holding at most one chunk of it."""
    digest = hashlib.sha256()
    got = 0
    with open_regular(path, size, shown) as handle:
        while got <= size:
            chunk = handle.read(min(CHUNK, size + 1 - got))
            if not chunk:
                break
            digest.update(chunk)
            got += len(chunk)
    if got != size:
        raise fail(shown, "SIZE_MISMATCH", _size_problem(got, size))
    if digest.hexdigest() != sha256:
        raise fail(shown, "DIGEST_MISMATCH", _changed(True))
