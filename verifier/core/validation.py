"""Parameter checks shared by the public entry points."""

from __future__ import annotations

import numbers

import numpy as np

from verifier.errors import InvalidInputError

__all__ = ["as_generator", "check_matrix", "check_same_shape"]


def as_generator(random_state: int | np.random.Generator | None) -> np.random.Generator:
    """Normalise ``random_state`` to a numpy Generator.

    An int seeds a fresh ``Generator(PCG64(seed))``; a Generator is used as is;
    ``None`` draws fresh entropy from the operating system.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence()))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and random_state >= 0:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(random_state))))
    raise InvalidInputError(
        f"random_state must be a non-negative int, a numpy Generator or None. Got {type(random_state).__name__} instead."
    )


def check_matrix(values: np.ndarray, name: str) -> np.ndarray:
    """A finite 2-D float64 array with at least one row and one column."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidInputError(f"{name} must be a non-empty 2-D table. Got shape {arr.shape} instead.")
    if not np.isfinite(arr).all():
        raise InvalidInputError(f"{name} holds NaN or infinite values")
    return arr


def check_same_shape(a: np.ndarray, b: np.ndarray, a_name: str, b_name: str, *, rows: bool) -> None:
    """Both tables have the same number of attributes (and of records, if ``rows``)."""
    if a.shape[1] != b.shape[1]:
        raise InvalidInputError(
            f"{a_name} has {a.shape[1]} attributes and {b_name} has {b.shape[1]}; they must have the same attributes"
        )
    if rows and a.shape[0] != b.shape[0]:
        raise InvalidInputError(
            f"{a_name} has {a.shape[0]} records and {b_name} has {b.shape[0]}; reverse mapping needs the same number"
        )
