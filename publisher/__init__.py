"""permuted-privacy publisher: what a data protector runs before and while releasing.

The publisher may import the verifier (it computes its claims with the
verifier's own code); the verifier never imports the publisher. In a
notebook: ``publisher.anonymize(frame, method, **params)`` and
``publisher.release(frame, method, key=..., out=..., dataset_id=...)``, or for another tool's output
``publisher.release_external(frame, anonymized, produced_by=..., key=..., out=..., dataset_id=...)``
(docs/api.md).
"""

import sys as _sys

from verifier.console import guard_if_console as _guard_if_console

_guard_if_console(_sys.argv)  # the console command handles Ctrl-C from its first instant (verifier/console.py)


from importlib import import_module

from publisher.version import __version__

__all__ = ["__version__", "anonymize", "release", "release_external"]


def __getattr__(name: str):
    """``anonymize``, ``release`` and ``release_external`` are loaded on first use: the console command starts
    without them."""
    if name not in ("anonymize", "release", "release_external"):
        raise AttributeError(f"module 'publisher' has no attribute {name!r}")
    value = getattr(import_module("publisher.api"), name)
    globals()[name] = value
    return value
