"""evaluate_clustering and evaluate_kanon take a pandas DataFrame, as their DataLike annotation
says (issue 37 item 8), and give what they give for the same rows in a file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import dpkit

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"


def test_evaluate_kanon_takes_a_dataframe(tmp_path: Path) -> None:
    df = pd.read_csv(ADULT, dtype=str, skipinitialspace=True).head(500)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    mem = dpkit.evaluate_kanon(df, quasi_identifiers=["sex", "race"], k=2)
    disk = dpkit.evaluate_kanon(str(path), quasi_identifiers=["sex", "race"], k=2)
    assert mem.check.records == disk.check.records == 500
    assert mem.check.classes == disk.check.classes and mem.check.k == disk.check.k


def test_evaluate_clustering_takes_a_dataframe(tmp_path: Path) -> None:
    points = pd.DataFrame({"x": [0.0, 0.1, 5.0, 5.1], "y": [0.0, 0.2, 5.0, 4.9]})
    cents = tmp_path / "c.csv"
    pd.DataFrame({"x": [0.05, 5.05], "y": [0.1, 4.95]}).to_csv(cents, index=False)
    path = tmp_path / "p.csv"
    points.to_csv(path, index=False)
    mem = dpkit.evaluate_clustering(points, str(cents), reference=False)
    disk = dpkit.evaluate_clustering(str(path), str(cents), reference=False)
    assert mem == disk and mem


def test_evaluate_clustering_reads_the_iso_centroids_of_a_date_column(tmp_path: Path) -> None:
    """cluster(..., date=[...]) writes a date column's centroids as ISO dates; evaluate_clustering
    reads them (and the data's dates) as the day numbers the run clustered: its NICV is the one
    computed from those day numbers, for the CSV and for a DataFrame of datetimes alike."""
    import datetime as dt

    import numpy as np

    days = np.repeat(np.r_[np.arange(0, 300, 3), np.arange(1000, 1300, 3)], 10)  # two clumps of days after 2019
    first = dt.date(2019, 1, 1).toordinal()
    dates = [dt.date.fromordinal(first + int(d)).isoformat() for d in days]
    df = pd.DataFrame({"d": dates, "x": (days % 7).astype(float)})
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    res = dpkit.cluster(str(path), columns=["d", "x"], date=["d"], n_clusters=2, epsilon=2, random_state=None)
    cents = tmp_path / "c.csv"
    res.write(cents)
    assert all(dt.date.fromisoformat(v) for v in pd.read_csv(cents, dtype=str)["d"])  # ISO text in the file
    epoch = dt.date(1970, 1, 1).toordinal()
    pts = np.c_[days + first - epoch, df["x"]]
    c = res._centres()
    want = float(np.mean(np.min(((pts[:, None, :] - c[None]) ** 2).sum(axis=2), axis=1)))
    disk = dpkit.evaluate_clustering(str(path), str(cents), reference=False)
    assert disk["nicv"] == pytest.approx(want, rel=1e-12)
    mem = dpkit.evaluate_clustering(df.assign(d=pd.to_datetime(df["d"])), str(cents), reference=False)
    assert mem == disk
    # a centroid that is neither a number nor an ISO date: one line naming the file, line, column
    text = cents.read_text().splitlines()
    text[2] = text[2].replace(text[2].split(",")[1], "2021-3-4")
    cents.write_text("\n".join(text) + "\n")
    with pytest.raises(dpkit.DataError, match=r"c\.csv:3: column 'd' has '2021-3-4', neither a finite number "
                                              r"nor an ISO date"):
        dpkit.evaluate_clustering(str(path), str(cents), reference=False)


def test_evaluate_classifier_reads_an_integer_target_as_the_release_does() -> None:
    """A release's classes are text (a CSV's 0/1 is "0"/"1"); a DataFrame whose target holds the
    integers 0 and 1 is scored against them, not refused by scikit-learn's "a mix of unknown and
    binary targets" (which reached a new user as a traceback)."""
    import numpy as np

    rng = np.random.default_rng(7)
    n = 600
    x = rng.choice(["a", "b", "c"], n)
    y = ((x == "a") | (rng.random(n) < 0.1)).astype(int)  # integers, as pandas reads a 0/1 column
    df = pd.DataFrame({"x": x, "y": y})
    released = pd.DataFrame({"x": pd.Categorical(x), "y": pd.Categorical(y.astype(str))})  # as Release.table
    out = dpkit.evaluate_classifier(df, train=released, target="y")
    assert out["accuracy"] > 0.85 and sorted(out["labels"]) == ["0", "1"]
    same = dpkit.evaluate_classifier(df.astype({"y": str}), train=released, target="y")
    assert same["accuracy"] == out["accuracy"]
