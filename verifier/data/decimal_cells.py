"""The strict decimal-number rule of docs/input-format.md, compiled, for the cells of an Arrow string column.

A numeric cell is ``[+-]?([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)?`` and
nothing else: no space, no ``inf`` or ``nan``, no thousands separator. RE2
(through Arrow) checks that at about 0.1 s per million cells, a third of
reading a census release; this automaton reads each byte once, but takes
half a second to compile after an install, so a column below
:data:`AUTOMATON_FROM` cells is checked by RE2. The tests hold both to the
strict reader's pattern on generated cells.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["AUTOMATON_FROM", "DECIMAL", "KERNELS", "first_bad_cell", "long_integer_cells", "warm_kernels"]

#: the rule as an RE2 pattern, what a column of fewer than :data:`AUTOMATON_FROM` cells is checked with
DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: cells from which compiling the automaton (half a second, once after an install) beats RE2 (0.1 s per million)
AUTOMATON_FROM = 1_000_000

# states of the automaton; a cell is accepted when it ends in INT, FRAC or EXP_DIGITS
_START, _SIGN, _INT, _DOT, _FRAC, _EXP, _EXP_SIGN, _EXP_DIGITS, _REJECT = range(9)


@nb.njit(cache=True, inline="always")
def _step(state, c):
    digit = 48 <= c <= 57
    if state == _START or state == _SIGN:
        if digit:
            return _INT
        if c == 46:  # '.'
            return _DOT
        if state == _START and (c == 43 or c == 45):  # '+', '-'
            return _SIGN
        return _REJECT
    if state == _INT or state == _FRAC:
        if digit:
            return state
        if c == 46 and state == _INT:
            return _FRAC
        if c == 69 or c == 101:  # 'E', 'e'
            return _EXP
        return _REJECT
    if state == _DOT:
        return _FRAC if digit else _REJECT
    if state == _EXP:
        if digit:
            return _EXP_DIGITS
        return _EXP_SIGN if (c == 43 or c == 45) else _REJECT
    if state == _EXP_SIGN or state == _EXP_DIGITS:
        return _EXP_DIGITS if digit else _REJECT
    return _REJECT


@nb.njit(cache=True, nogil=True)
def _first_bad(data, offsets, first, count):
    for i in range(count):
        state = _START
        for t in range(offsets[first + i], offsets[first + i + 1]):
            state = _step(state, data[t])
            if state == _REJECT:
                break
        if not (state == _INT or state == _FRAC or state == _EXP_DIGITS):
            return i
    return -1


@nb.njit(cache=True, nogil=True)
def _long_integers(data, offsets, first, count, digits):
    for i in range(count):
        s, e = offsets[first + i], offsets[first + i + 1]
        if s < e and (data[s] == 43 or data[s] == 45):
            s += 1
        if e - s < digits:
            continue
        plain = True
        for t in range(s, e):
            if not (48 <= data[t] <= 57):
                plain = False
                break
        if plain:
            return True
    return False


def _buffers(column) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The bytes, the offsets, the first cell and the number of cells of an Arrow (large_)string array."""
    import pyarrow as pa

    _, offsets, data = column.buffers()
    wide = pa.types.is_large_string(column.type)
    offsets_np = np.frombuffer(offsets, dtype=np.int64 if wide else np.int32)
    data_np = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return data_np, offsets_np, column.offset, len(column)


def first_bad_cell(column) -> int:
    """The 0-based row of the first cell of a null-free Arrow string array that is not a decimal number, or -1."""
    if len(column) < AUTOMATON_FROM:
        import pyarrow.compute as pc

        return int(pc.index(pc.match_substring_regex(column, DECIMAL), False).as_py())
    return int(_first_bad(*_buffers(column)))


def long_integer_cells(column, digits: int = 16) -> bool:
    """Whether a cell is an integer of at least ``digits`` digits (it may not fit a float exactly)."""
    if len(column) < AUTOMATON_FROM:
        import pyarrow.compute as pc

        return bool(pc.any(pc.match_substring_regex(column, f"^[+-]?[0-9]{{{digits},}}$")).as_py() or False)
    return bool(_long_integers(*_buffers(column), digits))


#: the compiled kernels of this module (for the warm-up and its cache check)
KERNELS = (_first_bad, _long_integers)


def warm_kernels() -> None:
    """Call each compiled kernel once on two cells, with the types a real column gives."""
    import pyarrow as pa

    buffers = _buffers(pa.array(["1.5", "-2e3"]))
    _first_bad(*buffers)
    _long_integers(*buffers, 16)
