"""A new user's notebook session on tables the defaults were not tuned on (issues 36 and 37).

Run: ``python bench/notebook_check.py`` (from the repository root; < 2 minutes). It builds two
seeded tables — an HR-like one (ISO hire dates, a zero-heavy bonus, department codes, 15 % empty
cells and some 'N/A', an employee_id) and a medical-like one ('?' in a third of one column,
integer-coded diagnoses) — splits them with scikit-learn (a shuffled index, NaN/None in the
frames) and uses dpkit as a notebook would. One line per check, PASS or FAIL; exit 1 on a FAIL.
The figures it prints (accuracy of a tree on the release) are a smoke test, not a benchmark.
"""

from __future__ import annotations

import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import dpkit

KEY = "0x9c4f1e2b7a5d43c8b1e6f0a2d7c3b5e1"
SCRIPT = str(Path(__file__).resolve())
FLAG_WORDS = ("--", " -v", "(-v")
RESULTS: list[tuple[str, bool, str]] = []


def check(name: str) -> Callable[[Callable[[], str | None]], None]:
    """Run the decorated function now: PASS unless it raises (an AssertionError's text is the why)."""
    def run(fn: Callable[[], str | None]) -> None:
        try:
            note = fn() or ""
            RESULTS.append((name, True, note))
            print(f"PASS  {name}{'  ' + note if note else ''}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a check's failure of any kind is reported, not raised
            where = traceback.extract_tb(exc.__traceback__)[-1]
            RESULTS.append((name, False, f"{type(exc).__name__}: {exc}"))
            print(f"FAIL  {name}  {type(exc).__name__}: {str(exc)[:300]} "
                  f"({Path(where.filename).name}:{where.lineno})", flush=True)
    return run


def hr_table(n: int = 9000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dept = rng.choice(["ENG", "SLS", "OPS", "FIN", "HR"], n, p=[.35, .25, .2, .12, .08])
    hire = (pd.Timestamp("2012-01-01") + pd.to_timedelta(rng.integers(0, 4000, n), unit="D")).strftime("%Y-%m-%d")
    bonus = np.where(rng.random(n) < 0.8, 0.0, np.round(rng.lognormal(3, 1, n), 2))
    level = rng.integers(1, 6, n)
    score = bonus / 20 + (level - 3) + rng.normal(0, 1, n) + (dept == "ENG") * 0.5
    df = pd.DataFrame({"employee_id": np.arange(100000, 100000 + n), "hire_date": hire, "department": dept,
                       "bonus": bonus, "salary": np.round(rng.normal(60000, 15000, n), -2), "level": level,
                       "left": np.where(score < 0, "yes", "no")})
    for col in ["department", "bonus", "salary", "hire_date"]:  # 15 % missing, as pandas reads them
        df[col] = df[col].astype(object)
        df.loc[rng.random(n) < 0.15, col] = None if col in ("department", "hire_date") else np.nan
    df.loc[rng.random(n) < 0.03, "salary"] = "N/A"
    return df


def med_table(n: int = 6000, seed: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    diag = rng.choice([101, 204, 305, 410, 512], n)
    bp = np.round(rng.normal(130, 20, n)).astype(int)
    chol = np.round(rng.normal(200, 40, n)).astype(int).astype(object)
    chol[rng.random(n) < 0.33] = "?"
    score = (age - 50) / 15 + (diag == 305) * 1.5 + (bp - 130) / 20 + rng.normal(0, 1, n)
    return pd.DataFrame({"age": age, "diagnosis": diag, "bp": bp, "chol": chol,
                         "outcome": np.where(score > 0.5, "sick", "well")})


def caught(fn: Callable[[], object]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn()
    return list(got)


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="dpkit-notebook-"))
    hr = hr_table()
    train, test = train_test_split(hr, test_size=0.3, random_state=0)
    med = med_table()
    mtrain, mtest = train_test_split(med, test_size=0.3, random_state=0)
    state: dict[str, object] = {}

    @check("publish a DataFrame without a schema (NaN/None, 'N/A', dates, an id column)")
    def _() -> str:
        release = dpkit.publish(train, target="left", epsilon=1, delta=1e-6, random_state=KEY)
        state["release"] = release
        kinds = {n: c.kind for n, c in release.schema.columns.items()}
        assert kinds["employee_id"] == "ignore", kinds
        assert kinds["hire_date"] == "numeric" and release.schema.columns["hire_date"].time == "date", kinds
        assert release.report["privacy"]["epsilon_spent"] <= 1 + 1e-9
        return f"{len(release.table)} rows released"

    @check("release.generalize(test) keeps every row and test's index")
    def _() -> None:
        out = state["release"].generalize(test)  # type: ignore[attr-defined]
        state["gen"] = out
        assert len(out) == len(test), (len(out), len(test))
        assert out.index.equals(test.index)

    @check("a tree on the release scores every generalized test row")
    def _() -> str:
        from dpkit.api.evaluate import evaluate_classifier

        release = state["release"]
        scores = evaluate_classifier(state["gen"], target="left", train=release.table,  # type: ignore[attr-defined]
                                     schema=release.schema, random_state=0)  # type: ignore[attr-defined]
        assert scores["accuracy"] > scores["floor_accuracy"], scores
        return f"accuracy {scores['accuracy']:.3f} (floor {scores['floor_accuracy']:.3f})"

    @check("a parsed date column (pd.to_datetime, NaT) generalizes as its ISO text does")
    def _() -> None:
        parsed = test.assign(hire_date=pd.to_datetime(test["hire_date"]))
        got = state["release"].generalize(parsed)  # type: ignore[attr-defined]
        pd.testing.assert_frame_equal(got, state["gen"])  # type: ignore[arg-type]
        assert (got["hire_date"].astype(str) != "(missing)").mean() > 0.7

    @check("publish the '?'-heavy medical table; generalize keeps all test rows")
    def _() -> str:
        release = dpkit.publish(mtrain, target="outcome", epsilon=1, delta=1e-6, categorical=["diagnosis"],
                                missing="?", random_state=KEY)
        out = release.generalize(mtest)
        assert len(out) == len(mtest) and out.index.equals(mtest.index)
        assert (out["chol"].astype(str) == "(missing)").mean() > 0.2, out["chol"].value_counts().head()
        return f"chol (missing) share {(out['chol'].astype(str) == '(missing)').mean():.2f}"

    @check("dpkit.forest(...).predict(test) aligned to test's index, every row predicted")
    def _() -> None:
        model = dpkit.forest(train, target="left", epsilon=1, delta=1e-6, n_estimators=5, max_depth=3, random_state=KEY)
        state["model"] = model
        got = test.copy()
        got["pred"] = model.predict(test)
        assert got["pred"].notna().all(), f"{got['pred'].isna().sum()} rows without a prediction"
        proba = model.predict_proba(test)
        assert proba.index.equals(test.index)
        one = test.iloc[[7]]
        noise = caught(lambda: model.predict(one))
        assert not [w for w in noise if "% of rows" in str(w.message)], "one row warned of a one-class model"
        assert model.predict(one).iloc[0] == got.loc[one.index[0], "pred"]

    @check("forest save/load predicts the same from a CSV with empty cells")
    def _() -> None:
        model = state["model"]
        model.write(tmp / "m.json")  # type: ignore[attr-defined]
        test.to_csv(tmp / "test.csv", index=False)
        again = dpkit.load_forest(tmp / "m.json").predict(tmp / "test.csv")
        assert (again.to_numpy() == model.predict(test).to_numpy()).all()  # type: ignore[attr-defined]

    X, y = train.drop(columns=["left"]), train["left"]
    ledger = dpkit.Ledger(tmp / "nb.ledger")

    @check("Ledger(path) on a new file; register(name, df, cap)")
    def _() -> None:
        ledger.register("hr-x", X, cap=3.0)
        assert [s.name for s in ledger.status()] == ["hr-x"]

    @check("DiffPRFsClassifier keyword-only, fits without a schema under the ledger; refit warns")
    def _() -> str:
        try:
            dpkit.DiffPRFsClassifier(1.0, 5)  # type: ignore[misc]
        except TypeError:
            pass
        else:
            raise AssertionError("a second positional parameter was accepted")
        clf = dpkit.DiffPRFsClassifier(1.0, delta=1e-6, n_estimators=5, max_depth=3, random_state=KEY,
                                       ledger=ledger)
        first = caught(lambda: clf.fit(X, y))
        assert not [w for w in first if issubclass(w.category, dpkit.PrivacyLeakWarning)], "warned on a first fit"
        pred = clf.predict(test.drop(columns=["left"]))
        assert isinstance(pred, np.ndarray) and len(pred) == len(test)
        again = caught(lambda: clf.fit(X, y))
        leak = [w for w in again if issubclass(w.category, dpkit.PrivacyLeakWarning)]
        assert leak, "no PrivacyLeakWarning on a refit"
        assert leak[0].filename == SCRIPT, f"the warning points at {leak[0].filename}:{leak[0].lineno}"
        assert len(ledger.history()) == 2, ledger.history()
        return f"spent {ledger.status()[0].spent:g} of 3"

    @check("a run past the ledger's cap is refused before reading")
    def _() -> None:
        clf = dpkit.DiffPRFsClassifier(3.5, delta=1e-6, random_state=KEY, ledger=ledger)  # cap 3
        try:
            clf.fit(X, y)
        except dpkit.BudgetExceeded:
            return
        raise AssertionError("a fit past the cap ran")

    @check("DPQTKMeans keyword-only, learns its bounds")
    def _() -> None:
        try:
            dpkit.DPQTKMeans(3, 1.0)  # type: ignore[misc]
        except TypeError:
            pass
        else:
            raise AssertionError("a second positional parameter was accepted")
        pts = np.random.default_rng(0).normal(size=(3000, 2)) * [10, 1000]
        km = dpkit.DPQTKMeans(3, epsilon=1.0, random_state=KEY).fit(pts)
        assert km.cluster_centers_.shape == (3, 2)
        assert len(km.predict(pts)) == len(pts)

    @check("estimators refuse NaN in y (classifier) and in X (k-means) before spending")
    def _() -> None:
        book = dpkit.Ledger(tmp / "nan.ledger")
        pts = train[["bonus", "level"]].astype(float)
        book.register("pts", pts, cap=5.0)
        book.register("hr-x2", X, cap=5.0)
        gaps = y.where(np.arange(len(y)) % 10 != 0, None)
        for fit in (lambda: dpkit.DPQTKMeans(3, epsilon=1.0, random_state=KEY, ledger=book).fit(pts),
                    lambda: dpkit.DiffPRFsClassifier(1.0, delta=1e-6, random_state=KEY, ledger=book).fit(X, gaps)):
            try:
                fit()
            except ValueError:
                continue
            raise AssertionError("fitted on NaN")
        assert all(s.spent == 0 for s in book.status()), book.status()

    @check("repr(release) <= 1,000 characters and a _repr_html_ card")
    def _() -> str:
        release = state["release"]
        text = repr(release)
        assert len(text) <= 1000, len(text)
        assert "Privacy spent by step" in release._repr_html_()  # type: ignore[attr-defined]
        for obj in (state["model"], dpkit.cluster(mtrain, columns=["age", "bp"], n_clusters=3, epsilon=1, random_state=KEY)):
            assert len(repr(obj)) <= 1000 and hasattr(obj, "_repr_html_"), type(obj)
        return f"{len(text)} characters"

    @check("Release.table: ordered categoricals (dates and intervals in order)")
    def _() -> None:
        table = state["release"].table  # type: ignore[attr-defined]
        assert table["hire_date"].dtype == "category" and table["hire_date"].cat.ordered
        assert table["bonus"].cat.ordered

    @check("an unknown keyword raises TypeError naming the closest")
    def _() -> None:
        for value in (None, 3):
            try:
                dpkit.publish(train, target="left", epsilon=1, delta=1e-6, random_state=KEY, domain_shar=value)
            except TypeError as bad:
                assert "domain_share" in str(bad), bad
            else:
                raise AssertionError(f"domain_shar={value!r} accepted")

    @check("epsilon=0 / nan / delta=2 raise what `except ValueError` catches")
    def _() -> None:
        for kw in ({"epsilon": 0}, {"epsilon": float("nan")}, {"epsilon": 1, "delta": 2.0}):
            try:
                dpkit.publish(train, target="left", **{"delta": 1e-6, **kw})
            except ValueError:
                continue
            raise AssertionError(f"{kw} accepted or not a ValueError")

    @check("a bad input names the problem without a CLI flag (missing target, unknown --date column)")
    def _() -> None:
        for kw in ({"target": "nope"}, {"target": "left", "date": ["nope"]}):
            try:
                dpkit.publish(train, epsilon=1, delta=1e-6, **kw)
            except dpkit.DpkitError as bad:
                text = str(bad)
                assert "\n" not in text and not any(w in text for w in FLAG_WORDS), text
                continue
            raise AssertionError(f"{kw} accepted")

    @check("warnings point at this script's line and name no CLI flag")
    def _() -> str:
        got = caught(lambda: dpkit.publish(train, target="left", epsilon=1, delta=1e-6, random_state=KEY))
        got += caught(lambda: dpkit.forest(mtrain, target="outcome", epsilon=1, delta=1e-6, n_estimators=3, max_depth=2,
                                           random_state=KEY))
        ours = [w for w in got if issubclass(w.category, dpkit.DpkitWarning)]
        assert ours, "no warning at all (clipping was expected)"
        for w in ours:
            assert w.filename == SCRIPT, f"{w.filename}:{w.lineno}: {w.message}"
            assert not any(f in str(w.message) for f in FLAG_WORDS), str(w.message)
        return f"{len(ours)} warnings checked"

    failed = [name for name, ok, _ in RESULTS if not ok]
    print(f"{len(RESULTS) - len(failed)} of {len(RESULTS)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
