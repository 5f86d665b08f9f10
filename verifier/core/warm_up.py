"""Loading the compiled kernels while a command reads its tables.

numba loads each cached kernel on its first call: about half a second for
the CSV reader's, the tree's and the spreads' kernels, a tenth of a
subject's whole check at census size.
A command that will search starts :class:`KernelWarmUp` before it verifies
and reads (which run in C and release the GIL), and waits for it before its
first search. The warm-up runs every kernel once on a table of a few
records, so the types are the ones of a real call and nothing is compiled
twice; it never raises (a kernel that cannot load fails again, with its
proper message, where the command calls it).
"""

from __future__ import annotations

import threading

import numpy as np

from verifier.core.kdtree import RankTree
from verifier.core.window import compensated_prefix, two_pass_variance
from verifier.data.decimal_cells import first_bad_cell, long_integer_cells

__all__ = ["KernelWarmUp", "warm_up"]


def warm_up() -> None:
    """Call the CSV reader's, the search's and the spreads' kernels once on a tiny table."""
    import pyarrow as pa

    cells = pa.array(["1.5", "-2e3"])
    first_bad_cell(cells)
    long_integer_cells(cells)
    lo = np.ones((32, 2), dtype=np.int64)
    tree = RankTree(lo, lo * 32)  # every record in one block: a match set too large for the buffer
    tree.nearest(lo[:2], lo[:2])
    tree.distances(lo[:2], lo[:2])
    z = np.linspace(0.0, 1.0, 8)
    compensated_prefix(z)
    two_pass_variance(z, np.zeros(2, np.int64), np.full(2, 7, np.int64))


class KernelWarmUp:
    """:func:`warm_up` in a background thread; :meth:`wait` before the first parallel kernel.

    Waiting matters: numba's fallback threading layer (workqueue) refuses
    parallel kernels launched from two threads at once.
    """

    def __init__(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kernel-warm-up", daemon=True)
        self._thread.start()

    @staticmethod
    def _run() -> None:
        try:
            warm_up()
        except BaseException:  # noqa: BLE001 - the real call reports it
            pass

    def wait(self) -> None:
        self._thread.join()
