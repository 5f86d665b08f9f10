"""A private key's passphrase (a release's, a log's, a witness's): from a file or asked on the terminal, never from
the command line."""

from __future__ import annotations

import getpass
import sys

from verifier.data.bounded_files import read_bounded
from verifier.errors import InputIOError, InvalidInputError
from verifier.errors import UsageError

__all__ = ["load_key", "prompt", "read_passphrase_file"]


def read_passphrase_file(path: str) -> bytes:
    data = read_bounded(path, "passphrase", error=InputIOError)
    passphrase = data.rstrip(b"\r\n")
    if not passphrase:
        raise InvalidInputError("the passphrase file is empty", path=path, reason="KEY_PASSPHRASE")
    return passphrase


def prompt(text: str) -> bytes:
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the passphrase: give --passphrase-file FILE")
    return getpass.getpass(text).encode("utf-8")


def load_key(path: str, passphrase_file: str | None, *, asked: str = "passphrase: ", expected=None):
    """A private key file, its passphrase read from ``passphrase_file`` or asked on the terminal (``asked``) when the
    key is encrypted; ``expected``, a trusted public key it must be the half of."""
    from verifier.releases.signing_key import key_is_encrypted, load_private_key

    passphrase = None
    if key_is_encrypted(path):
        passphrase = read_passphrase_file(passphrase_file) if passphrase_file else prompt(asked)
    elif passphrase_file:
        passphrase = read_passphrase_file(passphrase_file)
    return load_private_key(path, passphrase, expected=expected)
