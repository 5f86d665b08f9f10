"""Errors raised by the verifier, and the warning class for privacy pitfalls.

Every error carries a stable ``reason`` code and, where it concerns a file, the
file's path, so that the command line can print the one-line diagnostic of
SPEC section 10::

    FAIL: <path>: <REASON_CODE>: <sentence>

The exit code of each class follows SPEC section 10: 1 a check or verification
failed, 2 a usage error, 3 invalid input data, 4 environment or I/O failure.
"""

from __future__ import annotations

from verifier.text import literal

__all__ = [
    "VerifierError",
    "UsageError",
    "InvalidInputError",
    "InputIOError",
    "PrivacyWarning",
]


class VerifierError(Exception):
    """Base class of every error the verifier raises on purpose."""

    exit_code = 1
    default_reason = "CHECK_FAILED"

    def __init__(self, message: str, *, path: str | None = None, reason: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.reason = reason or self.default_reason

    def diagnostic(self) -> str:
        """The one line printed on stderr: ``FAIL: <path>: <REASON>: <sentence>``."""
        where = _cut(literal(self.path), MAX_PATH) if self.path is not None else "-"
        # One line, whatever the message holds: untrusted text may contain
        # newlines or control characters, which a terminal would act on; a
        # column name of a megabyte is cut, not printed.
        sentence = _cut(literal(" ".join(self.message.split())), MAX_SENTENCE)
        return f"FAIL: {where}: {self.reason}: {sentence}"


#: the longest path and sentence a FAIL line shows; the rest is cut with an ellipsis
MAX_PATH, MAX_SENTENCE = 300, 1000


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "\u2026"


class UsageError(VerifierError):
    """The command was asked for something it cannot do as given (exit 2)."""

    exit_code = 2
    default_reason = "USAGE"


class InvalidInputError(VerifierError, ValueError):
    """The user's own input is invalid: a data file, a schema, a record, a parameter."""

    exit_code = 3
    default_reason = "INPUT_INVALID"


class InputIOError(VerifierError, OSError):
    """The environment failed us: a file could not be written, a disk is full."""

    exit_code = 4
    default_reason = "IO_FAILURE"


class PrivacyWarning(RuntimeWarning):
    """A result is valid but weaker than it looks (for example, heavy ties)."""
