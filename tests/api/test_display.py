"""Result objects in a notebook (issue 37 item 6): a short repr, an HTML card, typed columns."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpkit

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
S1 = REPO / "sample_data" / "clustering" / "s1.csv"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    small = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(6000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "Release": dpkit.publish(small, schema=SCHEMA, epsilon=1.0, random_state=KEY),
            "Forest": dpkit.forest(small, schema=SCHEMA, epsilon=1.0, n_estimators=3, max_depth=3, random_state=KEY),
            "Clustering": dpkit.cluster(S1, columns=["x", "y"], n_clusters=15, epsilon=1.0, random_state=KEY),
            "KAnonymousTable": dpkit.kanon_select(small, k=10, schema=SCHEMA, target="income", generalize=True),
            "LearnedSchema": dpkit.infer_schema(small, target="income", epsilon=0.5, delta=1e-6, random_state=KEY),
        }


@pytest.mark.parametrize("name", ["Release", "Forest", "Clustering", "KAnonymousTable", "LearnedSchema"])
def test_repr_is_a_few_lines_and_html_a_card(results, name) -> None:
    obj = results[name]
    text = repr(obj)
    assert text.startswith(f"<dpkit.{name}") and len(text) <= 1000 and 2 <= len(text.splitlines()) <= 6
    if name != "KAnonymousTable":
        assert "ε=" in text and "δ=" in text  # what was spent
    card = obj._repr_html_()
    assert card.startswith("<div") and card.endswith("</div>") and f"dpkit {name}" in card
    if name in ("Release", "Clustering", "LearnedSchema", "Forest"):
        assert "Privacy spent by step" in card


def test_release_table_is_typed_and_the_csv_unchanged(results, tmp_path: Path) -> None:
    release = results["Release"]
    table = release.table
    assert all(isinstance(t, pd.CategoricalDtype) for t in table.dtypes)
    age = table["age"].cat
    assert age.ordered and age.categories[0].startswith("[") and len(age.categories) >= 1
    lows = [float(c.strip("[(").split(",")[0]) for c in age.categories]
    assert lows == sorted(lows)  # intervals low to high
    assert not table["income"].cat.ordered  # classes have no order
    assert "Privacy spent by step" in release._repr_html_()
    release.write(tmp_path / "r.csv")
    text = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(text, table.astype(str))  # the labels written are the table's


def test_numbers_stay_numbers() -> None:
    from dpkit.api.display import typed

    df = pd.DataFrame({"a": ["1", "3", "1"], "b": ["x", "y", "x"], "y": ["0", "1", "0"]})
    out = typed(df, {"a": ["1", "3"], "b": ["y", "x"], "y": ["0", "1"]}, ordered=["a", "b"])
    assert out["a"].dtype == "int64" and list(out["a"]) == [1, 3, 1]
    assert list(out["b"].cat.categories) == ["y", "x"] and out["b"].cat.ordered
    assert isinstance(out["y"].dtype, pd.CategoricalDtype)
