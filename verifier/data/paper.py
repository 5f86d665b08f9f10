"""The running example of paper 003 (Table 1 and its masked version), shipped with the package."""

from __future__ import annotations

import contextlib
from importlib import resources
from pathlib import Path
from typing import Iterator

__all__ = ["example_folder"]


@contextlib.contextmanager
def example_folder() -> Iterator[Path]:
    """A folder holding ``original.csv``, ``masked.csv`` and ``reverse_mapped.csv`` of paper 003's example."""
    with resources.as_file(resources.files("verifier.data") / "paper") as folder:
        yield Path(folder)
