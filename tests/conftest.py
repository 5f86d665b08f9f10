"""Shared fixtures: the paper's running example, shipped inside the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from verifier.io import read_table

PAPER = Path(str(resources.files("verifier") / "data" / "paper"))
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def paper_paths() -> dict[str, Path]:
    """Paper 003, Table 1: X (original), Y (masked), Z (reverse-mapped)."""
    return {name: PAPER / f"{name}.csv" for name in ("original", "masked", "reverse_mapped")}


@pytest.fixture(scope="session")
def paper(paper_paths):
    return {name: read_table(path) for name, path in paper_paths.items()}


def write(path: Path, content: str | bytes) -> Path:
    """Write a test input file and return its path."""
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path
