"""How often a command lets Python's cycle collector run.

A command on a census holds millions of small objects for its whole run
(parsed cells, row tuples, lists of texts). Python's default thresholds
(700, 10, 10) walk every one of them again each time enough new containers
have lived long enough: the full collections of one SD release of 1e6
records took 3 s of its 23 s, and freed almost nothing, since the project's
data hold no cycles. While a command runs, the youngest generation is
collected every 100,000 new containers instead of every 700, and the whole
heap about a hundredth as often; the thresholds are put back afterwards, for
a caller that runs commands in its own process (the tests, a notebook).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["COMMAND_THRESHOLDS", "fewer_collections"]

#: gc.set_threshold while a command runs: the youngest generation every 100,000 containers, the middle one every
#: 50 of those, the whole heap every 100 of the middle one's (or when a quarter more objects have lived long)
COMMAND_THRESHOLDS = (100_000, 50, 100)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with :data:`COMMAND_THRESHOLDS`, then put the caller's thresholds back."""
    before = gc.get_threshold()
    gc.set_threshold(*COMMAND_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
