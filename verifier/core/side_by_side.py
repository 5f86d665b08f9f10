"""Two computations that share nothing, run at once on a machine of two cores or more.

A release's assessment makes two searches: the (d, v)-permuted privacy of X
in Y's space, and the intruder's reverse mapping, linkage and random-match
test in Z's. Each is partly serial (ranking, labelling, building a tree) and
partly parallel (the searches themselves). Side by side, the serial parts of
one fill the core the other leaves idle: the 1e6 census microaggregated with
k = 5, 21.8 s one after the other and 17.3 s side by side
(docs/performance.md). A generalized release computes its claims and writes
its data file beside its assessment, which read the same published cells:
SD's release of 1e6 Adult records, 19.8-22.5 s to 18.1-19.9 s. The results
are the same to the bit: the two share no state, and each keeps its own
randomness.

numba's parallel kernels may be launched from two threads at once only under
a thread-safe threading layer (OpenMP or TBB); its fallback, the work queue,
ends the process when a second thread launches one. Where numba chose the
work queue, or the process may use one core only, the two run one after the
other, first the first.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

import numpy as np

__all__ = ["THREAD_SAFE_LAYERS", "kernels_share_threads", "side_by_side"]

A = TypeVar("A")
B = TypeVar("B")

#: numba's threading layers under which two threads may launch parallel kernels at once
THREAD_SAFE_LAYERS = frozenset({"omp", "tbb"})


def _cores() -> int:
    """The cores this process may run on (a container or ``taskset`` may allow fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@functools.cache
def kernels_share_threads() -> bool:
    """Whether two threads may each run numba's parallel kernels at once, to any gain: two cores or more, and a
    thread-safe threading layer. numba chooses its layer at the first parallel launch, so one is made first (a
    spreads kernel on two values, which every search loads anyway). numba's layer stays the one chosen for the
    life of the process, so the answer is found once (a release asks for MDAV, then for its assessment)."""
    if _cores() < 2:
        return False
    import numba

    from verifier.core.window import two_pass_variance

    two_pass_variance(np.zeros(2), np.zeros(1, np.int64), np.ones(1, np.int64))
    return numba.threading_layer() in THREAD_SAFE_LAYERS


def side_by_side(first: Callable[[], A], second: Callable[[Callable[[], A]], B], *, at_once: bool = True
                 ) -> tuple[A, B]:
    """``(first(), second(wait))``: ``first`` on a second thread while ``second`` runs on this one, where
    ``wait()`` returns first's result once it is there (for the part of ``second`` that needs it).

    ``second`` keeps the calling thread, so its progress and the command's signals stay where they were; an
    interrupt waits for ``first`` to end, as it waits for a kernel. Without ``at_once``, or where
    :func:`kernels_share_threads` says no, ``first`` runs, then ``second``. An exception of either is raised
    here once both have ended.
    """
    if not (at_once and kernels_share_threads()):
        done = first()
        return done, second(lambda: done)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="side-by-side") as pool:
        job = pool.submit(first)
        answer = second(job.result)
        return job.result(), answer
