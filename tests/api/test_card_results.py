"""Every result's release card (issue 44): ``card()`` from memory, with and without the owner's
test rows, and the notebook display as the same card."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
from card.cardhtml import parse

import dpkit

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
TEST = REPO / "sample_data" / "adult" / "test.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
S1 = REPO / "sample_data" / "clustering" / "s1.csv"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    small = pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(4000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "Release": dpkit.publish(small, schema=SCHEMA, epsilon=1.0, random_state=KEY),
            "Forest": dpkit.forest(small, schema=SCHEMA, epsilon=1.0, n_estimators=3, max_depth=3, random_state=KEY),
            "Clustering": dpkit.cluster(S1, columns=["x", "y"], n_clusters=15, epsilon=1.0, random_state=KEY),
            "KAnonymousTable": dpkit.kanon_select(small, k=10, schema=SCHEMA, target="income"),
        }


@pytest.fixture(scope="module")
def test_rows() -> pd.DataFrame:
    return pd.read_csv(TEST, dtype=str, keep_default_na=False).head(1500)


@pytest.mark.parametrize("name", ["Release", "Forest", "Clustering", "KAnonymousTable"])
def test_card_and_notebook_card(results, name: str, tmp_path: Path) -> None:
    obj = results[name]
    html = obj.card()
    page = parse(html)
    assert page.headings[0] == ("h1", f"dpkit {name}: release card") and "Owner only" not in html
    assert html == obj.card(tmp_path / "card.html") == (tmp_path / "card.html").read_text(encoding="utf-8")
    div = obj._repr_html_()
    assert div.startswith("<div class='dpkit-card'") and parse(div).headings[1:4] == page.headings[1:4]


def test_a_clusterings_card_sizes_its_centroids(results) -> None:
    page = parse(results["Clustering"].card())
    scatter = next(s for s in page.svgs if s.title.startswith("The centroids"))
    assert scatter.attrs["aria-label"].count(", size ") == 15


@pytest.mark.parametrize("name", ["Release", "Forest", "Clustering", "KAnonymousTable"])
def test_the_owners_card(results, test_rows, name: str) -> None:
    obj = results[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "Clustering":
            rows = pd.read_csv(S1).head(1500)
            html = obj.card(test=rows, target="label")
        else:
            html = obj.card(test=test_rows, **({"baseline": pd.read_csv(ADULT, dtype=str, keep_default_na=False)
                                                .head(4000)} if name == "Release" else {}))
    page = parse(html)
    assert "Owner only" in html and [t for h, t in page.headings if h == "h2"][-1].startswith("For the data owner")
    text = " ".join(page.text)
    if name in ("Release", "Forest"):
        assert any(s.title.startswith("ROC curve") for s in page.svgs) and "balanced accuracy" in text
    if name == "Release":
        assert "raw-data baseline" in text and any(s.title.startswith("sex:") for s in page.svgs)
    if name == "Clustering":
        assert "nicv" in text and "f measure" in text
    if name == "KAnonymousTable":
        assert "svm accuracy" in text and "majority class accuracy" in text


def test_a_forest_read_back_has_no_card_but_a_notebook_display(results, tmp_path: Path) -> None:
    results["Forest"].write(tmp_path / "m.json")
    loaded = dpkit.load_forest(tmp_path / "m.json")
    with pytest.raises(dpkit.DpkitUsageError, match="no report"):
        loaded.card()
    assert "dpkit Forest" in loaded._repr_html_()
