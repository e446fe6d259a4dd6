"""Warnings in Python terms (issue 37 item 7): they point at the caller's line, name every
clipped column in one warning, say nothing of the command line, and the exact detail is the
data owner's choice (dpkit.set_verbosity)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpkit

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


@pytest.fixture(scope="module")
def model() -> dpkit.Forest:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpkit.forest(ADULT, schema=SCHEMA, epsilon=1.0, n_estimators=2, max_depth=2, random_state=KEY)


def _caught(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call()
    return [w for w in seen if issubclass(w.category, dpkit.DpkitWarning)]


def test_warnings_point_at_the_callers_line(model) -> None:
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(3000)  # holds '?': rows dropped
    seen = _caught(lambda: dpkit.publish(df, schema=SCHEMA, epsilon=1.0, random_state=KEY))
    seen += _caught(lambda: model.predict(df.assign(age="200")))  # clipped at prediction
    seen += _caught(lambda: dpkit.cluster(df, columns=["age"], n_clusters=2, epsilon=1.0, allow_data_bounds=True, random_state=1))
    assert len(seen) >= 3
    for w in seen:
        assert w.filename == __file__, (w.filename, str(w.message))


def test_one_clipping_warning_names_every_column(model) -> None:
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(50)
    wide = df.assign(age="500", **{"hours-per-week": "500", "capital-loss": "-5"})
    clips = [w for w in _caught(lambda: model.predict(wide)) if "clipped" in str(w.message)]
    assert len(clips) == 1
    text = str(clips[0].message)
    assert all(f"'{c}'" in text for c in ("age", "hours-per-week", "capital-loss"))
    loaded = _caught(lambda: dpkit.publish(wide.assign(income=df["income"]), schema=SCHEMA, epsilon=1.0, random_state=KEY))
    assert len([w for w in loaded if "clipped" in str(w.message)]) == 1


def test_no_command_line_words_and_the_detail_on_request(model) -> None:
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(50).assign(age="500")
    (quiet,) = [w for w in _caught(lambda: model.predict(df)) if "clipped" in str(w.message)]
    assert "-v" not in str(quiet.message) and "50 value" not in str(quiet.message)
    assert "dpkit.set_verbosity(True)" in str(quiet.message)
    dpkit.set_verbosity(True)
    try:
        (loud,) = [w for w in _caught(lambda: model.predict(df)) if "clipped" in str(w.message)]
    finally:
        dpkit.set_verbosity(False)
    assert "clipped 50 value(s) of 'age'" in str(loud.message)


def test_the_command_line_writes_its_own_flag() -> None:
    from dpkit.cli.boundary import cli_message
    from dpkit.console import private

    assert cli_message(dpkit.DpkitWarning(private("x: 3 rows", "x: rows"))) == "x: rows (-v shows the detail)"
