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

import os
import threading

import numpy as np

from verifier.compiling import compiling_pays
from verifier.core import kdtree, window
from verifier.core.kdtree import RankTree
from verifier.core.window import compensated_prefix, two_pass_variance
from verifier.data import decimal_cells

__all__ = ["COLD_NOTICE", "KernelWarmUp", "kernels_cached", "warm_up"]

#: what a command says while the kernels compile, once after an install
COLD_NOTICE = "preparing the search kernels for this machine (once after installing; about 10 s)"


def warm_up() -> None:
    """Call the CSV reader's, the search's and the spreads' kernels once on a tiny table."""
    decimal_cells.warm_kernels()
    lo = np.ones((32, 2), dtype=np.int64)
    tree = RankTree(lo, lo * 32)  # every record in one block: a match set too large for the buffer
    tree.nearest(lo[:2], lo[:2])
    tree.distances(lo[:2], lo[:2])
    z = np.linspace(0.0, 1.0, 8)
    compensated_prefix(z)
    two_pass_variance(z, np.zeros(2, np.int64), np.full(2, 7, np.int64))


def kernels_cached() -> bool:
    """Whether numba's cache holds every kernel :func:`warm_up` loads (False on a fresh install: they compile).

    Read from numba's own cache index files; where numba keeps them
    elsewhere than it says, the answer is False, which only shows a notice.
    """
    kernels = (*decimal_cells.KERNELS, *kdtree.KERNELS, *window.KERNELS)
    try:
        return all(os.path.exists(k._cache._cache_file._index_path) for k in kernels)
    except AttributeError:
        return False


class KernelWarmUp:
    """:func:`warm_up` in a background thread; :meth:`wait` before the first parallel kernel.

    Waiting matters: numba's fallback threading layer (workqueue) refuses
    parallel kernels launched from two threads at once. A table of ``n_records``
    too small for the kernels (:func:`~verifier.compiling.compiling_pays`)
    starts nothing: its plain twins answer. ``cold`` says whether the kernels
    will be compiled, not loaded, which takes seconds once after an install.
    """

    def __init__(self, n_records: int | None = None) -> None:
        self.needed = n_records is None or compiling_pays(n_records)
        self.cold = self.needed and not kernels_cached()
        self._thread = threading.Thread(target=self._run, name="kernel-warm-up", daemon=True)
        if self.needed:
            self._thread.start()

    @staticmethod
    def _run() -> None:
        try:
            warm_up()
        except BaseException:  # noqa: BLE001 - the real call reports it
            pass

    def wait(self) -> None:
        if self.needed:
            self._thread.join()
