"""Tables as they come, tried as a new user would (issue 36/37): a run without a schema on a
table with empty cells, 'N/A' and dates, then used from Python and the shell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpkit

KEY = "0x2b7e151628aed2a6abf7158809cf4f3c"


def hr_table(n: int = 4000, seed: int = 3) -> pd.DataFrame:
    """An HR-like table: ISO hire dates, a zero-heavy bonus, codes, 15 % empty cells, 'N/A'."""
    rng = np.random.default_rng(seed)
    level = rng.integers(1, 6, n)
    bonus = np.where(rng.random(n) < 0.8, 0.0, np.round(rng.lognormal(3, 1, n), 2))
    df = pd.DataFrame({
        "hire_date": (pd.Timestamp("2012-01-01") + pd.to_timedelta(rng.integers(0, 4000, n), unit="D"))
        .strftime("%Y-%m-%d"),
        "department": rng.choice(["ENG", "SLS", "OPS"], n),
        "bonus": bonus.astype(object),
        "level": level,
        "left": np.where(bonus / 20 + (level - 3) + rng.normal(0, 1, n) < 0, "yes", "no"),
    })
    for col in ["hire_date", "bonus"]:
        df[col] = df[col].astype(object)
        df.loc[rng.random(n) < 0.15, col] = ""
    df.loc[rng.random(n) < 0.03, "bonus"] = "N/A"
    return df


@pytest.fixture(scope="module")
def hr() -> pd.DataFrame:
    return hr_table()


def test_a_forest_without_schema_predicts_rows_with_empty_cells(hr, tmp_path) -> None:
    """The learned schema says ``unparsable: missing``: an empty date or an 'N/A' bonus in the
    rows to predict is a missing value (it follows the branch with more records), as the release
    and generalize read it — not an error that refuses the whole test set."""
    train, test = hr.iloc[:3000], hr.iloc[3000:]
    model = dpkit.forest(train, target="left", epsilon=1.0, delta=1e-6, date=["hire_date"],
                         n_estimators=3, max_depth=2, random_state=KEY)
    assert (test["hire_date"] == "").any() and (test["bonus"] == "N/A").any()
    pred = model.predict(test)
    assert pred.index.equals(test.index) and pred.notna().all()
    # the same after a save and a load (the model file keeps the rule) and from a file
    model.write(tmp_path / "m.json")
    test.to_csv(tmp_path / "test.csv", index=False)
    again = dpkit.load_forest(tmp_path / "m.json").predict(tmp_path / "test.csv")
    assert (again.to_numpy() == pred.to_numpy()).all()


@pytest.mark.parametrize("call", ["publish", "forest", "infer_schema"])
def test_a_declared_target_of_one_class_is_refused(hr, call) -> None:
    """One class declared public (``values={"left": ["yes"]}``) used to run: every other row was
    dropped and the release held one class — what a learned target is refused for."""
    kwargs = {"epsilon": 1.0, "delta": 1e-6, "target": "left", "values": {"left": ["yes"]}, "seed": KEY}
    with pytest.raises(ValueError, match="at least two classes"):
        getattr(dpkit, call)(hr, **kwargs)


def test_evaluate_classifier_takes_the_release_schema(hr) -> None:
    """``schema=release.schema`` (a Schema, as every other function takes) used to raise a raw
    TypeError from pathlib: only a path was accepted."""
    from dpkit.api.evaluate import evaluate_classifier

    train, test = hr.iloc[:3000], hr.iloc[3000:]
    release = dpkit.publish(train, target="left", epsilon=1.0, delta=1e-6, date=["hire_date"], random_state=KEY)
    scores = evaluate_classifier(release.generalize(test), target="left", train=release.table,
                                 schema=release.schema)
    assert scores["accuracy"] > scores.get("floor_accuracy", 0.5) - 0.1, scores


def test_a_parsed_date_column_is_read_as_its_iso_text(hr) -> None:
    """A notebook parses its dates (``pd.to_datetime``): generalize used to map every such date to
    ``(missing)`` (numpy turns datetime64[ns] into integers on the way to object) and a forest
    read them as missing. A parsed column gives what its ISO text gives, NaT as the empty cell."""
    train, test = hr.iloc[:3000], hr.iloc[3000:]
    release = dpkit.publish(train, target="left", epsilon=1.0, delta=1e-6, date=["hire_date"], random_state=KEY)
    parsed = test.assign(hire_date=pd.to_datetime(test["hire_date"].replace("", None)))
    assert parsed["hire_date"].isna().any() and parsed["hire_date"].dtype.kind == "M"
    text_cut, parsed_cut = release.generalize(test), release.generalize(parsed)
    assert (parsed_cut["hire_date"].astype(str) != "(missing)").mean() > 0.8
    pd.testing.assert_frame_equal(parsed_cut, text_cut)
    model = dpkit.forest(train, target="left", epsilon=1.0, delta=1e-6, date=["hire_date"],
                         n_estimators=3, max_depth=3, random_state=KEY)
    pd.testing.assert_frame_equal(model.predict_proba(parsed), model.predict_proba(test))


def test_a_misspelt_keyword_of_predict_names_the_closest(hr) -> None:
    """``predict(test, decison=...)`` listed only the reading options, not ``decision``."""
    model = dpkit.forest(hr, target="left", epsilon=1.0, delta=1e-6, n_estimators=2, max_depth=2, random_state=KEY)
    for call in (model.predict, model.predictions):
        with pytest.raises(TypeError, match="did you mean 'decision'"):
            call(hr, decison="balanced")


def test_the_learned_schema_of_a_publish_does_not_claim_taxonomy_infer(hr, tmp_path) -> None:
    """The YAML a run without a schema writes beside its output said it was learned "by `dpkit
    taxonomy infer`" — a command the user never ran (and a CLI word in library output)."""
    out = tmp_path / "r.csv"
    dpkit.publish(hr, target="left", epsilon=1.0, delta=1e-6, date=["hire_date"], random_state=KEY, output=out)
    text = (tmp_path / "r.schema.yaml").read_text()
    assert text.startswith("# Schema learned under differential privacy by dpkit ")
    assert "taxonomy infer" not in text.splitlines()[0]


def test_duplicate_column_names_of_a_dataframe_are_refused_in_one_line(hr) -> None:
    """``df.columns = [...]`` with a name twice used to raise pandas' raw AttributeError ('DataFrame'
    object has no attribute 'tolist'); a file's header with a name twice is a DataError."""
    dup = hr.copy()
    dup.columns = ["hire_date", "hire_date", "bonus", "level", "left"]
    with pytest.raises(dpkit.DataError, match="duplicate column name 'hire_date'"):
        dpkit.publish(dup, target="left", epsilon=1.0, delta=1e-6, random_state=KEY)
    release = dpkit.publish(hr, target="left", epsilon=1.0, delta=1e-6, random_state=KEY)
    model = dpkit.forest(hr, target="left", epsilon=1.0, delta=1e-6, n_estimators=2, max_depth=2, random_state=KEY)
    for call in (release.generalize, model.predict):
        with pytest.raises(dpkit.DataError, match="duplicate column name"):
            call(dup)


def test_kmeans_refuses_nan_in_a_dataframe_before_spending(hr, tmp_path) -> None:
    """``DPQTKMeans().fit(df)`` with NaN in ``df`` clustered (dropping the rows), booked its ε on
    the ledger, then raised on ``labels_``: the ε was spent for nothing. Refused first now."""
    X = pd.DataFrame({"bonus": pd.to_numeric(hr["bonus"], errors="coerce"), "level": hr["level"].astype(float)})
    assert X["bonus"].isna().any()
    ledger = dpkit.Ledger(tmp_path / "l.ledger")
    ledger.register("x", X, cap=5.0)
    with pytest.raises(ValueError, match="NaN"):
        dpkit.DPQTKMeans(3, epsilon=1.0, random_state=KEY, ledger=ledger).fit(X)
    assert ledger.status()[0].spent == 0 and not ledger.history()
    km = dpkit.DPQTKMeans(3, epsilon=1.0, random_state=KEY).fit(X.dropna())
    assert len(km.labels_) == len(X.dropna())


@pytest.mark.parametrize("gap", [None, np.nan])
def test_a_classifier_refuses_missing_labels_before_spending(hr, tmp_path, gap) -> None:
    """``y`` with None used to fit, spend and book ε, then raise numpy's raw TypeError ('<' not
    supported between 'str' and 'NoneType'); NaN became a class 'nan'."""
    X = hr.drop(columns="left")
    y = hr["left"].astype(object).where(np.arange(len(hr)) % 10 != 0, gap)
    ledger = dpkit.Ledger(tmp_path / "l.ledger")
    ledger.register("x", X, cap=5.0)
    clf = dpkit.DiffPRFsClassifier(1.0, delta=1e-6, n_estimators=2, max_depth=2, random_state=KEY, ledger=ledger)
    with pytest.raises(ValueError, match="y contains NaN or None"):
        clf.fit(X, y)
    assert ledger.status()[0].spent == 0


def test_an_empty_target_cell_is_not_a_class(hr) -> None:
    """A target with NaN in 8 % of the rows (held by more records than the threshold) released a
    class '' beside 'no' and 'yes'; a missing class is missing: those records are dropped."""
    gaps = hr.assign(left=hr["left"].where(np.arange(len(hr)) % 12 != 0, np.nan))
    with pytest.warns(dpkit.DpkitWarning, match="dropped rows"):
        release = dpkit.publish(gaps, target="left", epsilon=1.0, delta=1e-6, date=["hire_date"], random_state=KEY)
    assert set(release.table["left"].astype(str)) == {"no", "yes"}
    assert release.schema.columns["left"].leaves == ("no", "yes")


def test_a_column_of_dates_does_not_warn_of_few_dates_however_small_its_epsilon() -> None:
    """A pandas datetime64 column declared with date= (every value a date) gives no "few or none
    of its values are ISO 8601 dates" warning, from publish or forest: the rule compares the
    column's noisy count of dates with its noisy count of non-dates (both from the metadata's shape
    cells), so it does not hang on the size count's small ε (5 columns, 4,000 rows, ε = 1: the old
    rule, ε_c·ñ < 3, warned in 4 of these 20 runs)."""
    import warnings

    rng = np.random.default_rng(0)
    n = 4000
    df = pd.DataFrame({"hired": pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), unit="D"),
                       "age": rng.integers(20, 65, n), "smoker": rng.integers(0, 2, n),
                       "dept": rng.choice(list("ABCD"), n)})
    df["left"] = np.where((df.age < 35) | (df.smoker == 1), "yes", "no")
    for seed in range(10):
        for fit in (dpkit.publish, dpkit.forest):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fit(df, target="left", epsilon=1.0, delta=1e-6, date=["hired"], random_state=seed)
            assert not [w for w in caught if "ISO 8601" in str(w.message)], (fit.__name__, seed)


def test_few_dates_compares_noisy_dates_with_noisy_non_dates() -> None:
    from dpkit.domain.discover import _few_dates
    from dpkit.domain.metadata import ColumnMeta

    def meta(dates: int | None, unread: int | None) -> ColumnMeta:
        return ColumnMeta("d", "date", noisy_numbers=dates, noisy_others=unread, noisy_unread=unread)

    assert _few_dates(meta(3, 2990), 0.001, 5) and not _few_dates(meta(2990, 4), 0.001, 5)
    # not profiled (declared tokens): the size count's rule, ε_c·ñ < 3
    assert _few_dates(meta(None, None), 0.001, 2000) and not _few_dates(meta(None, None), 0.01, 2000)
