"""A package's public names, loaded on first use (PEP 562): ``verifier``, ``verifier.core``,
``verifier.attacks`` and ``verifier.releases`` re-export names from their modules without importing those
modules, and so the numba kernels, when a command needs none of them."""

from __future__ import annotations

import sys
from importlib import import_module
from typing import Any, Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public name ``n`` lives in module ``where[n]``."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(where[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
