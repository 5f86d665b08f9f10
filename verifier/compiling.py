"""When compiling a kernel pays.

numba compiles the search, spread and reader kernels on their first call
after an install (seconds each on a small machine) and loads them from its
cache afterwards. A table below :data:`PLAIN_BELOW` rows (a column below as
many cells) is answered by the kernels' plain twins instead, in numpy or in
the kernel's own Python: the same results, nothing compiled. The tests hold
each twin to its kernel.
"""

__all__ = ["PLAIN_BELOW", "compiling_pays"]

#: below this many rows (or cells of a column) the plain twins answer and no kernel is compiled: a subject's
#: check of a 3,000-record release took 12-20 s on a fresh install of a 2-core machine with the kernels (the
#: compiling), 1.1-1.2 s without them, and the plain check stays at or below the compiled one's warm time up to
#: about 1e4 records (docs/performance.md, "Her first minute"); above it, compiling pays back
PLAIN_BELOW = 8192


def compiling_pays(n: int) -> bool:
    """Whether a table of ``n`` rows (or a column of ``n`` cells) is large enough for the compiled kernels."""
    return n >= PLAIN_BELOW
