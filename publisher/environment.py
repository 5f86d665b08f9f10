"""The runtime a release was made in: the versions an auditor's rerun or a replay should match.

The intruder's Monte Carlo test and ``publisher replay`` draw random numbers
through numpy; the ranks and the tree run in numba; the files are written by
pyarrow and pandas. A manifest names their versions (never a path, a host or
a user name) so that an auditor whose figure differs in the last digit can
tell a version difference from a false claim.
"""

from __future__ import annotations

import platform
from importlib import metadata

__all__ = ["PACKAGES", "environment"]

#: distribution name -> the key it is listed under
PACKAGES = {"permuted-privacy": "permuted_privacy", "numpy": "numpy", "scipy": "scipy", "pandas": "pandas",
            "pyarrow": "pyarrow", "numba": "numba", "cryptography": "cryptography"}


def environment() -> dict[str, str]:
    """Python's implementation and version, and the version of each package in :data:`PACKAGES` installed."""
    out = {"python": f"{platform.python_implementation()} {platform.python_version()}"}
    for dist, key in PACKAGES.items():
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "not installed"
    return out
