"""Where a command may write: one check for every output path, made before the work starts (SPEC section 14).

An output path is refused (nothing is computed, nothing is written) when it

- is a symbolic link (``OUTPUT_UNSAFE``): an output is never written through a link;
- exists and is no regular file, such as a device (``/dev/full``), a pipe or
  a folder (``OUTPUT_UNSAFE``): writing would replace it with a file;
- is one of the command's own inputs (``OUTPUT_IS_INPUT``, exit 2);
- exists (``OUTPUT_EXISTS``), unless the command takes ``--force`` and got it;
- lies inside a release, a folder holding ``manifest.dsse.json``
  (``OUTPUT_INSIDE_RELEASE``): the release would stop verifying;
- lies in a folder that does not exist (``OUTPUT_FOLDER_MISSING``).

Every refusal but ``OUTPUT_IS_INPUT`` exits 4. Files are then written
atomically (beside the target, moved into place when complete).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Sequence

from verifier.errors import InputIOError, UsageError

__all__ = ["check_output", "log_holding", "release_holding"]

ENVELOPE = "manifest.dsse.json"
#: what marks a transparency log's folder (publisher.release_log): its checkpoint, a signed note
CHECKPOINT = "checkpoint"


def release_holding(path: str | Path) -> Path | None:
    """The release folder that ``path`` would land in (a folder holding a release's envelope), or None."""
    here = Path(os.path.abspath(path))
    for folder in here.parents:
        try:
            if (folder / ENVELOPE).exists():
                return folder
        except OSError:  # a name too long for the file system holds no release; writing it fails on its own
            continue
    return None


def log_holding(path: str | Path) -> Path | None:
    """The transparency log folder that ``path`` would land in (a folder whose ``checkpoint`` is a signed note, a
    C2SP checkpoint: the log publishes its folder whole), or None."""
    here = Path(os.path.abspath(path))
    for folder in here.parents:
        try:
            if not stat.S_ISREG(os.stat(folder / CHECKPOINT).st_mode):  # a pipe is never opened (it would block)
                continue
            with open(folder / CHECKPOINT, "rb") as f:
                head = f.read(65536)
        except OSError:  # none, unreadable: no log's checkpoint
            continue
        if b"\n\n\xe2\x80\x94 " in head:  # a blank line, then a signature line: "— <name> <signature>"
            return folder
    return None


def _same(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: str | Path | None, *, option: str = "--out", inputs: Sequence[str | Path | None] = (),
                 force: bool | None = None) -> None:
    """Refuse ``path`` as an output of ``option`` for any of the reasons of the module docstring.

    ``force`` is the command's ``--force`` (None when it has none): an existing regular file is replaced only
    with it."""
    if path is None:
        return
    shown = str(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputIOError(f"{option} cannot be checked ({exc.strerror})", path=shown, reason="OUTPUT_UNSAFE") from None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise InputIOError(f"{option} is a symbolic link; an output is never written through a link",
                               path=shown, reason="OUTPUT_UNSAFE")
        if not stat.S_ISREG(info.st_mode):
            raise InputIOError(f"{option} exists and is not a regular file (a folder, a device or a pipe); "
                               "it is never replaced", path=shown, reason="OUTPUT_UNSAFE")
    for given in inputs:
        if given and _same(path, given):
            raise UsageError(f"{option} would overwrite the input {given}", path=shown, reason="OUTPUT_IS_INPUT")
    if info is not None and not force:
        raise InputIOError("already exists; pass --force to replace it" if force is False
                           else f"{option} already exists; it is never replaced", path=shown, reason="OUTPUT_EXISTS")
    release = release_holding(path)
    if release is not None:
        raise InputIOError(f"{option} lies inside the release {release}, which would stop verifying; write it "
                           "elsewhere", path=shown, reason="OUTPUT_INSIDE_RELEASE")
    if not Path(os.path.abspath(path)).parent.is_dir():
        raise InputIOError(f"the folder of {option} does not exist", path=shown, reason="OUTPUT_FOLDER_MISSING")
