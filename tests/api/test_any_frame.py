"""Any dataframe in (issue 44, item 3): an object with ``__arrow_c_stream__`` (polars, pyarrow,
DuckDB) is data for every library call; a keyed run on it gives the pandas path's bytes; tables
come back in the caller's kind (polars for polars, rows in the input's order)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpkit
from dpkit.api.frames import any_frame, arrow_kind, in_kind

pl = pytest.importorskip("polars", reason="polars is in the dev extra")
pa = pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
TEST = REPO / "sample_data" / "adult" / "test.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
S1 = REPO / "sample_data" / "clustering" / "s1.csv"
KEY = "0x3b9e0d7c5a1f46e28b0c7d9a4e1f3b65"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def frames() -> dict[str, object]:
    train = pd.read_csv(ADULT).head(6000)
    test = pd.read_csv(TEST).head(3000)
    return {"train": train, "test": test, "pl_train": pl.from_pandas(train), "pl_test": pl.from_pandas(test)}


def _release(data: object) -> dpkit.Release:
    return dpkit.publish(data, schema=SCHEMA, epsilon=1.0, random_state=KEY)


def test_kinds() -> None:
    df = pd.DataFrame({"a": [1]})
    assert arrow_kind(df) is None and arrow_kind("x.csv") is None and arrow_kind(ADULT) is None
    assert arrow_kind(pl.from_pandas(df)) == "polars"
    assert arrow_kind(pa.table(df)) == "arrow"
    assert arrow_kind([1, 2]) is None
    assert in_kind(df, "arrow") is df and in_kind(df, None) is df
    assert isinstance(in_kind(df, "polars"), pl.DataFrame)


@pytest.mark.parametrize("kind", ["polars", "pyarrow table", "pyarrow reader"])
def test_publish_same_bytes_as_pandas(frames, kind, tmp_path) -> None:
    table = pa.Table.from_pandas(frames["train"], preserve_index=False)
    data = {"polars": frames["pl_train"], "pyarrow table": table, "pyarrow reader": table.to_reader()}[kind]
    ours, theirs = _release(data), _release(frames["train"])
    ours.write(tmp_path / "ours.csv")
    theirs.write(tmp_path / "theirs.csv")
    assert (tmp_path / "ours.csv").read_bytes() == (tmp_path / "theirs.csv").read_bytes()
    assert ours.report["privacy"] == theirs.report["privacy"]
    if kind == "polars":  # the release's tables in the caller's kind, the same rows
        assert isinstance(ours.table, pl.DataFrame) and isinstance(ours.counts, pl.DataFrame)
        pd.testing.assert_frame_equal(ours.table.to_pandas().astype(str), theirs.table.astype(str))
        assert ours.counts["count"].sum() == theirs.counts["count"].sum()
    else:  # pyarrow in, pandas out
        pd.testing.assert_frame_equal(ours.table, theirs.table)


def test_a_release_on_polars_keeps_the_cut_order_as_an_enum(frames) -> None:
    """An ordered categorical column of the release (intervals low to high) is a polars Enum of
    the same order; the card and the notebook display read the release as before."""
    ours, theirs = _release(frames["pl_train"]), _release(frames["train"])
    for column in theirs.columns:
        dtype = theirs.table[column].dtype
        if isinstance(dtype, pd.CategoricalDtype) and dtype.ordered:
            assert ours.table.schema[column] == pl.Enum([str(v) for v in dtype.categories]), column
    assert "<svg" in ours._repr_html_() and "<svg" in ours.card()


def test_duckdb_relation(frames) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb is in the bench extra")
    rel = duckdb.sql(f"select * from read_csv('{ADULT}') limit 6000")
    # DuckDB types the columns itself; its relation is data as polars' frame is
    released = _release(rel)
    assert list(released.table.columns) == list(_release(frames["train"]).table.columns)
    assert released.report["release"]["target"] == "income"


def test_generalize_gives_polars_back_in_order(frames) -> None:
    release = _release(frames["pl_train"])
    ours = release.generalize(frames["pl_test"])
    theirs = release.generalize(frames["test"])
    assert isinstance(ours, pl.DataFrame)
    assert ours.columns == list(theirs.columns)
    assert ours.height == len(frames["test"])
    pd.testing.assert_frame_equal(ours.to_pandas().astype(str), theirs.reset_index(drop=True).astype(str))
    # pyarrow in, pandas out (the caller's kind where it is pandas or polars)
    assert isinstance(release.generalize(pa.Table.from_pandas(frames["test"])), pd.DataFrame)
    assert isinstance(dpkit.generalize(frames["pl_test"], release), pl.DataFrame)


def test_forest_predict_polars(frames) -> None:
    ours = dpkit.forest(frames["pl_train"], schema=SCHEMA, epsilon=1.0, n_estimators=3, max_depth=3, random_state=KEY)
    theirs = dpkit.forest(frames["train"], schema=SCHEMA, epsilon=1.0, n_estimators=3, max_depth=3, random_state=KEY)
    predicted = ours.predict(frames["pl_test"])
    assert isinstance(predicted, pl.Series) and predicted.name == "income"
    assert predicted.to_list() == theirs.predict(frames["test"]).tolist()
    proba = ours.predict_proba(frames["pl_test"])
    assert isinstance(proba, pl.DataFrame) and proba.columns == ["p_<=50K", "p_>50K"]
    assert proba.height == len(frames["test"])
    out = ours.predictions(frames["pl_test"], proba=True, keep="age")
    assert isinstance(out, pl.DataFrame) and out.columns[0] == "age"


def test_cluster_and_assign_polars() -> None:
    points = pd.read_csv(S1)
    ours = dpkit.cluster(pl.from_pandas(points), columns=["x", "y"], n_clusters=15, epsilon=1.0, random_state=KEY)
    theirs = dpkit.cluster(points, columns=["x", "y"], n_clusters=15, epsilon=1.0, random_state=KEY)
    assert (ours.centres == theirs.centres).all()
    assigned = ours.assign(pl.from_pandas(points.head(50)))
    assert isinstance(assigned, pl.DataFrame) and assigned.height == 50


def test_kanon_and_evaluate_take_polars(frames) -> None:
    small = pl.from_pandas(pd.read_csv(ADULT, dtype=str, keep_default_na=False).head(3000))
    selection = dpkit.kanon_select(small, k=10, schema=SCHEMA, target="income")
    assert selection.selected
    release = _release(frames["pl_train"])
    same = dpkit.kanon_select(small.to_pandas(), k=10, schema=SCHEMA, target="income")
    assert isinstance(selection.table, pl.DataFrame) and isinstance(same.table, pd.DataFrame)
    pd.testing.assert_frame_equal(selection.table.to_pandas().astype(str), same.table.astype(str))
    train = release.table.cast(pl.String)
    test = release.generalize(frames["pl_test"])
    scores = dpkit.evaluate_classifier(test, target="income", train=train, schema=SCHEMA)
    again = dpkit.evaluate_classifier(test.to_pandas(), target="income", train=train.to_pandas(), schema=SCHEMA)
    assert scores == again


def test_unreadable_stream_is_one_line() -> None:
    class Broken:
        def __arrow_c_stream__(self, requested_schema=None):
            raise ValueError("no stream today\nsecond line")

    with pytest.raises(dpkit.DataError, match=r"^<Broken>: could not be read through the Arrow PyCapsule "
                                              r"interface \(no stream today\); pass a pandas DataFrame or a file$"):
        dpkit.publish(Broken(), schema=SCHEMA, epsilon=1.0)


def test_not_a_frame_still_refused() -> None:
    with pytest.raises(dpkit.ParameterTypeError, match="Arrow"):
        dpkit.publish([1, 2, 3], schema=SCHEMA, epsilon=1.0)


def test_decorator_reads_positional_and_keyword() -> None:
    @any_frame("a", "b", back=True)
    def f(a, b=None):
        assert isinstance(a, pd.DataFrame) and (b is None or isinstance(b, pd.DataFrame))
        return a

    df = pl.DataFrame({"x": [3, 1, 2]})
    assert isinstance(f(df), pl.DataFrame)
    assert f(df, b=pa.table(df.to_pandas())).to_series().to_list() == [3, 1, 2]
    assert isinstance(f(a=pa.table(df.to_pandas())), pd.DataFrame)
    assert isinstance(f(df.to_pandas(), df), pd.DataFrame)
