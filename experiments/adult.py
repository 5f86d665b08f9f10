"""The Adult data of papers 000-002: the whole training file when it is here, else the sample shipped here.

The papers drop the records with a missing value (30,162 of the 32,561
records of ``adult.data``). A full run reads
``../shared/data/real/adult_uci_train_32561.csv``; a quick run, or a clone
without that folder, reads ``experiments/data/adult_sample_3000.csv``, 3,000
of those complete records (CC BY 4.0, attribution in ``experiments/data/README.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from verifier.data.schema import Attribute, Schema

__all__ = ["FULL", "SAMPLE", "adult_schema", "adult_words", "load_adult"]

FULL = Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "adult_uci_train_32561.csv"
SAMPLE = Path(__file__).resolve().parent / "data" / "adult_sample_3000.csv"


def load_adult(quick: bool) -> tuple[pd.DataFrame, str]:
    """The complete records as text columns, and a sentence saying which file they came from."""
    path = SAMPLE if quick or not FULL.exists() else FULL
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    complete = frame[(frame != "").all(axis=1)].reset_index(drop=True)
    where = ("the UCI Adult training file" if path == FULL else "a 3,000-record sample of the UCI Adult training file")
    complete.attrs["source"] = "Adult" if path == FULL else "Adult sample"
    return complete, f"{where} ({len(complete):,} records without a missing value)"


def adult_words(frame: pd.DataFrame) -> str:
    """``Adult sample, 3,000 rows``: the data of a frame from :func:`load_adult`, in a few words."""
    return f"{frame.attrs.get('source', 'Adult')}, {len(frame):,} rows"


def adult_schema(frame: pd.DataFrame, columns: Iterable[str], *, sensitive: Iterable[str] = (),
                 numeric: Iterable[str] = ()) -> Schema:
    """The schema of ``columns``: nominal with their values sorted as categories (``numeric`` ones numeric),
    quasi-identifiers except the ``sensitive`` ones."""
    sensitive, numeric = set(sensitive), set(numeric)
    return Schema(tuple(Attribute(c, kind="numeric" if c in numeric else "nominal",
                                  role="sensitive" if c in sensitive else "quasi_identifier",
                                  categories=None if c in numeric else tuple(sorted(set(frame[c]))))
                        for c in columns))
