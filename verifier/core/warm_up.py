"""Loading the compiled kernels while a command reads its tables.

numba loads each cached kernel on its first call: about half a second for
the CSV reader's, the tree's and the spreads' kernels, a tenth of a
subject's whole check at census size.
A command that will search starts :class:`KernelWarmUp` before it verifies
and reads (which run in C and release the GIL), and waits for it before its
first search. The warm-up runs the kernels a check calls once on a table of
a few records (the listing of large match sets and the parallel search
compile where they are first needed), so the types are the ones of a real
call and nothing is compiled twice; it never raises (a kernel that cannot load fails again, with its
proper message, where the command calls it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np

from verifier.compiling import compiling_pays
from verifier.core import kdtree, ranks, window
from verifier.core.kdtree import RankTree
from verifier.core.window import prefix_table, run_variance, two_pass_variance, window_moments
from verifier.data import decimal_cells

__all__ = ["COLD_NOTICE", "WARMED", "KernelWarmUp", "compiled_kernels", "kernels_cached", "warm_build", "warm_reader", "warm_search",
           "warm_spreads", "warm_up"]

#: how long a command waits for the process compiling the build's kernels, in seconds
HELPER_TIMEOUT = 300
#: what a command says while the kernels compile, once after an install
COLD_NOTICE = "preparing the search kernels for this machine (once after installing; a few seconds)"


def warm_reader() -> None:
    """The CSV reader's automaton (a column of a million cells or more)."""
    decimal_cells.warm_kernels()


def warm_build() -> None:
    """The tree's build kernels, on a table of a few records."""
    lo = np.ones((32, 2), dtype=np.int64)
    RankTree(lo, lo * 32)


def warm_spreads() -> None:
    """The spreads' kernels."""
    z = np.linspace(0.0, 1.0, 8)
    blocks = np.ones(2, np.int64)
    window_moments(prefix_table(z), z, blocks, blocks, np.zeros(1, np.int64), 8)
    two_pass_variance(z, np.zeros(2, np.int64), np.full(2, 7, np.int64))
    run_variance(z, np.arange(8, dtype=np.int64), np.zeros(2, np.int64), np.full(2, 7, np.int64))


def warm_search() -> None:
    """The tree's search kernel, on a one-leaf tree made by hand (so that no build kernel is needed here), the
    query blocks' kernel and the ranking's."""
    lo = kdtree.padded(np.ones((2, 2), dtype=np.int64))  # the blocks' type and width a tree keeps
    start, end = np.zeros(1, np.int64), np.full(1, 2, np.int64)
    box = lo[:1].copy()
    kdtree.search_kernel(lo[:1], lo[:1], 0, False, start, end, box, box.copy(), lo, lo.copy(),
                         np.arange(2, dtype=np.int64), 0)
    blocks = np.ones((2, 2), dtype=np.int64)
    ranks.ColumnBlocks.from_values(np.arange(2.0)).query_into(np.zeros((2, 2)), 0, blocks, blocks.copy())
    ranks.ColumnBlocks.rank_into(np.arange(2.0), 0, blocks.copy(), blocks.copy())


def warm_up(*, reader: bool = True) -> None:
    """Call the kernels a command's search and spreads (and, with ``reader``, its CSV reader) use, once."""
    if reader:
        warm_reader()
    warm_build()
    warm_search()
    warm_spreads()


#: the kernels :func:`warm_up` loads; the tree's listing of large match sets, and the copies of the distinct
#: records' tree (:mod:`verifier.core.distinct_tree`), compile where they are first needed
WARMED = (*decimal_cells.KERNELS, *kdtree.WARMED, *ranks.KERNELS, *window.KERNELS)


def kernels_cached(*, reader: bool = True) -> bool:
    """Whether numba's cache holds every kernel :func:`warm_up` loads (False on a fresh install: they compile);
    without ``reader``, leaving out the CSV reader's, which a table below a million cells does not use.

    Read from numba's own cache index files; where numba keeps them
    elsewhere than it says, the answer is False, which only shows a notice.
    """
    return compiled_kernels(WARMED if reader else [k for k in WARMED if k not in decimal_cells.KERNELS])


def compiled_kernels(kernels) -> bool:
    """Whether numba's cache holds every one of ``kernels`` (``cache=True`` dispatchers), so that they load
    rather than compile; False where numba keeps its cache elsewhere than it says, which only shows a notice."""
    try:
        return all(os.path.exists(k._cache._cache_file._index_path) for k in kernels)
    except AttributeError:
        return False


class KernelWarmUp:
    """The kernels loaded (or compiled) while a command verifies and reads; :meth:`wait` before the first search.

    Waiting matters: numba's fallback threading layer (workqueue) refuses
    parallel kernels launched from two threads at once. A table of ``n_records``
    too small for the kernels (:func:`~verifier.compiling.compiling_pays`)
    starts nothing: its plain twins answer. ``cold`` says whether the kernels
    will be compiled, not loaded, which takes seconds once after an install;
    then a second process compiles the tree build's kernels into numba's
    cache while this one compiles the search's and the spreads', so that two
    cores share the wait.
    """

    def __init__(self, n_records: int | None = None) -> None:
        self.needed = n_records is None or compiling_pays(n_records)
        self._reader = n_records is None or n_records >= decimal_cells.AUTOMATON_FROM
        self.cold = self.needed and not kernels_cached(reader=self._reader)
        self._helper: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._run, name="kernel-warm-up", daemon=True)
        if not self.needed:
            return
        if self.cold:
            try:
                self._helper = subprocess.Popen([sys.executable, "-m", "verifier.core.warm_up"],
                                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL)
            except OSError:
                self._helper = None  # this process compiles them all
        self._thread.start()

    def _run(self) -> None:
        try:
            if self._reader:
                warm_reader()
            warm_search()
            warm_spreads()
            if self._helper is None:
                warm_build()
        except BaseException:  # noqa: BLE001 - the real call reports it
            pass

    def wait(self) -> None:
        if not self.needed:
            return
        self._thread.join()
        if self._helper is not None:
            try:  # its kernels are then in the cache, and load at their first call
                self._helper.wait(timeout=HELPER_TIMEOUT)
            except subprocess.TimeoutExpired:  # a helper that hangs is stopped: this process compiles what it needs
                self._helper.kill()
            self._helper = None


def main() -> int:
    """``python -m verifier.core.warm_up``: compile the tree build's kernels into numba's cache."""
    warm_build()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
