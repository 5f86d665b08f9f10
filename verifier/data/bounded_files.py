"""One bounded reader for every file a command takes (SPEC section 14; docs/input-format.md, "Files").

A key, a record, a schema, a passphrase, a hierarchy file or a table is read
here: opened without waiting (a FIFO with no writer does not block), checked
on the open file itself (no race with a swapped path), refused at once when
it is not a regular file (a FIFO, a device such as ``/dev/zero``, a socket,
a directory), refused before any byte is read when it is larger than the
documented limit of its kind, and read at most one byte past that limit (a
file that grows while it is read is refused too).

======================  ==============  ==========================================
kind                    limit           why
======================  ==============  ==========================================
``key``                 64 KiB          a PEM key is a few hundred bytes
``passphrase``          4 KiB           one line
``record``              1 MiB           one record
``policy``              64 KiB          a verdict policy: a few dozen rules
``schema``              64 MiB          a million categories
``hierarchies``         64 MiB          the same, as trees
``json``                16 MiB          a manifest, a report, a protector's figures
``arx_hierarchy``       4 MiB           ARX's semicolon hierarchy of one column
``configuration``       1 MiB           another tool's configuration, published in
                                        the manifest
``links``               1 GiB           who is in a release (protector-only): tens of
                                        millions of linking ids
``table``               1 TiB           the memory check (docs/scale.md) decides
======================  ==============  ==========================================
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

from verifier.errors import InvalidInputError, VerifierError

__all__ = ["LIMITS", "read_bounded", "regular_file_problem", "require_regular"]

LIMITS = {"key": 64 << 10, "passphrase": 4 << 10, "record": 1 << 20, "policy": 64 << 10, "schema": 64 << 20, "hierarchies": 64 << 20,
          "json": 16 << 20, "table": 1 << 40, "arx_hierarchy": 4 << 20, "configuration": 1 << 20,
          "links": 1 << 30, "transition_matrix": 4 << 20}

_WHAT = {"key": "a key file", "passphrase": "a passphrase file", "record": "a record file", "policy": "a policy file",
         "schema": "a schema file", "hierarchies": "a hierarchy file", "json": "a JSON file", "table": "a table file",
         "arx_hierarchy": "an ARX hierarchy file", "configuration": "a configuration file", "links": "a links file",
         "transition_matrix": "a transition matrix file"}


def regular_file_problem(mode: int) -> str | None:
    """Why a file of this mode is no input file (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


def _codes(reasons: dict[str, str] | None) -> dict[str, str]:
    """The reason codes of a failure, with the caller's own names for some of them."""
    return {code: code for code in ("FILE_NOT_FOUND", "FILE_UNREADABLE", "FILE_NOT_REGULAR", "FILE_TOO_LARGE")} | (
        reasons or {})


def read_bounded(path: str | Path, kind: str, *,
                 error: Callable[..., VerifierError] = InvalidInputError, reasons: dict[str, str] | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``LIMITS[kind]`` of them.

    Failures raise ``error(message, path=..., reason=...)`` with the reasons
    ``FILE_NOT_FOUND``, ``FILE_UNREADABLE``, ``FILE_NOT_REGULAR`` and
    ``FILE_TOO_LARGE``, or the caller's own names for them in ``reasons``.
    """
    limit, what, name, codes = LIMITS[kind], _WHAT[kind], str(path), _codes(reasons)

    def fail(code: str, message: str) -> VerifierError:
        return error(message, path=name, reason=codes[code])

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise fail("FILE_NOT_FOUND", "no such file") from None
    except IsADirectoryError:
        raise fail("FILE_NOT_REGULAR", f"is a directory, not {what}") from None
    except OSError as exc:
        raise fail("FILE_UNREADABLE", f"cannot read ({exc.strerror})") from None
    info = os.fstat(fd)
    problem = regular_file_problem(info.st_mode)
    if problem:  # before fdopen, which refuses a directory with a bare IsADirectoryError
        os.close(fd)
        raise fail("FILE_NOT_REGULAR", f"{problem}, not {what}; give a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > limit:
            raise fail("FILE_TOO_LARGE", f"holds {info.st_size} bytes; {what} holds at most {limit}")
        try:
            raw = handle.read(min(limit, info.st_size) + 1)
            if len(raw) > info.st_size:  # it grew while being read: read on, up to the limit
                raw += handle.read(limit + 1 - len(raw))
        except OSError as exc:
            raise fail("FILE_UNREADABLE", f"cannot read ({exc.strerror})") from None
    if len(raw) > limit:
        raise fail("FILE_TOO_LARGE", f"holds more than {limit} bytes, the most {what} holds")
    return raw


def require_regular(path: str | Path, kind: str, *, error: Callable[..., VerifierError] = InvalidInputError,
                    reasons: dict[str, str] | None = None) -> None:
    """Refuse at once a path that is missing or no regular file, before a library opens it (a Parquet reader
    would wait on a pipe for ever)."""
    codes = _codes(reasons)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error("no such file", path=str(path), reason=codes["FILE_NOT_FOUND"]) from None
    except OSError as exc:
        raise error(f"cannot read ({exc.strerror})", path=str(path), reason=codes["FILE_UNREADABLE"]) from None
    problem = regular_file_problem(info.st_mode)
    if problem:
        raise error(f"{problem}, not {_WHAT[kind]}; give a regular file", path=str(path),
                    reason=codes["FILE_NOT_REGULAR"])
