"""The randomness that hides the data (spec/reliability.md, "Secret seeds" and "PCG64 is not a CSPRNG").

Every draw of a release (noise, swap partners, coin flips, replacements,
tie-breaks, the row shuffle) comes from one generator:

- **no seed** (production): ChaCha20, a stream cipher, through randomgen's
  numpy bit generator, keyed with 256 bits from the operating system
  (``secrets``). Knowing outputs does not reveal the key, which PCG64 cannot
  promise (Bouillaguet, Martinez and Sauvage recovered PCG seeds from 512
  bytes of output);
- **a seed** the protector gives to reproduce a run, and the tests: numpy's
  PCG64 from that seed.

The key is never returned, printed or written. What kind of generator was
used is public (Kerckhoffs' principle) and goes into the manifest.
"""

from __future__ import annotations

import secrets

import numpy as np
from randomgen import ChaCha

__all__ = ["noise_generator", "SECRET_STREAM", "SEEDED_STREAM"]

SECRET_STREAM = "ChaCha20 (randomgen), keyed with 256 bits of operating-system entropy"
SEEDED_STREAM = "PCG64 (numpy), from a seed the protector chose (reproducible runs and tests)"


def noise_generator(random_state: int | np.random.Generator | None) -> tuple[np.random.Generator, str]:
    """The generator for a release and its public description.

    ``None`` keys ChaCha20 from the operating system; an int seeds PCG64; a
    Generator (a caller's own, e.g. calibration runs) is used as it is.
    """
    if random_state is None:
        return np.random.Generator(ChaCha(key=secrets.randbits(256), counter=0, rounds=20)), SECRET_STREAM
    if isinstance(random_state, np.random.Generator):
        return random_state, f"{type(random_state.bit_generator).__name__}, given by the caller"
    from verifier.core.validation import as_generator

    return as_generator(random_state), SEEDED_STREAM
