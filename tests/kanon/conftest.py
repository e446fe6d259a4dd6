"""Shared helpers for the kanon-select tests: an independent k-anonymity check."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
ADULT_SCHEMA = ROOT / "taxonomies" / "adult.yaml"
BCW = ROOT / "sample_data" / "breast-cancer-wisconsin" / "breast-cancer-wisconsin.csv"
BCW_SCHEMA = ROOT / "taxonomies" / "breast-cancer-wisconsin.yaml"


def smallest_class(df: pd.DataFrame, qis: list[str]) -> int:
    """k of ``df`` on ``qis`` by a plain pandas groupby (independent of dpkit's code)."""
    if not qis:
        return len(df)
    return int(df.groupby(qis, dropna=False, observed=True).size().min())


def smallest_l(df: pd.DataFrame, qis: list[str], sensitive: str) -> int:
    """Distinct ℓ of ``sensitive`` on ``qis`` by a plain pandas groupby."""
    if not qis:
        return int(df[sensitive].nunique())
    return int(df.groupby(qis, dropna=False, observed=True)[sensitive].nunique().min())


@pytest.fixture(scope="session")
def adult_small() -> pd.DataFrame:
    """The first 3,000 Adult training rows without '?' (strings, as read from the CSV)."""
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False, nrows=3300)
    df = df[~(df == "?").any(axis=1)].head(3000).reset_index(drop=True)
    return df
