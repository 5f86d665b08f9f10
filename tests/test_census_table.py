"""The census benchmark runs from a clone (issue 60, item 7): ``python -m benchmarks.census`` drew its tables from
the Adult training file beside the repository, which a clone does not hold; where it is absent, the tables are drawn
from the 3,000-record sample the repository ships."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import benchmarks.census as census


def test_a_clone_without_the_adult_file_draws_the_census_from_the_shipped_sample(tmp_path, monkeypatch):
    monkeypatch.setattr(census, "ADULT", tmp_path / "absent.csv")
    assert census.census_source() == census.SAMPLE and census.SAMPLE.exists()
    out = census.census_table(5_000, tmp_path / "census.csv")
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    sample = pd.read_csv(census.SAMPLE, dtype=str, keep_default_na=False)
    assert len(table) == 5_000 and list(table.columns) == list(sample.columns)
    # categorical cells are the sample's; integer ones jittered inside their column's range
    assert set(table["education"]) <= set(sample["education"])
    ages = table["age"].astype(int)
    assert ages.min() >= sample["age"].astype(int).min() and ages.max() <= sample["age"].astype(int).max()
    assert census.census_table(5_000, tmp_path / "again.csv").read_bytes() == Path(out).read_bytes()  # seeded
