"""Private schema discovery (dpkit.domain, dpkit.api.domain.infer_schema; issue 22)."""

from __future__ import annotations

import hashlib
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpkit.api.domain import LearnedSchema, infer_schema, learn_schema, read_strings
from dpkit.domain.discover import DomainOptions, column_budgets
from dpkit.domain.grid import decade_points, zero_edge
from dpkit.domain.metadata import ColumnMeta
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning
from dpkit.io.source import ReadOptions
from dpkit.io.table import load
from dpkit.privacy import Accountant, make_rng
from dpkit.report import dumps
from dpkit.schema.parse import CategoricalColumn, NumericColumn, parse_schema

RARE = "SECRET-RARE-VALUE"
KEY = "0x222f942a52fbe775abf9c37c75d4e92d"


def table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    color = np.where(g.random(n) < 0.5, "red", "blue").astype(object)
    color[0] = RARE  # held by one record
    color[1:10] = "x9"  # nine records: far below any threshold here
    color[10:20] = "?"
    income = np.where(g.random(n) < 0.3, "hi", "lo").astype(object)
    income[5] = RARE + "-class"
    return pd.DataFrame({"color": color, "age": g.integers(18, 80, n).astype(str), "income": income,
                         "note": [f"n{i}" for i in range(n)]})


@pytest.fixture
def csv(tmp_path):  # noqa: ANN001, ANN201
    p = tmp_path / "t.csv"
    table().to_csv(p, index=False)
    return str(p)


def learn(data, **kw):  # noqa: ANN001, ANN003, ANN201
    kw = {"target": "income", "epsilon": 1.0, "delta": 1e-6, "seed": KEY, "ignore": ["note"], **kw}
    return infer_schema(data, **kw)


def test_learned_schema_is_a_private_schema_that_loads_the_data(csv, tmp_path) -> None:  # noqa: ANN001
    out, rep = tmp_path / "s.yaml", tmp_path / "s.report.json"
    s = learn(csv, output=str(out), report=str(rep))
    assert isinstance(s, LearnedSchema) and not s.draft
    color, income, age = s.columns["color"], s.columns["income"], s.columns["age"]
    # missing values are values (issue 36 item 3): keep — here with no missing token, so no leaf;
    # the learned numeric column reads a non-number as missing (unparsable: missing): its bucket
    assert s.missing_policy == "keep" and "missing_policy: keep" in s.yaml
    assert isinstance(color, CategoricalColumn) and color.leaves == ("blue", "red", "(other)")
    assert color.unlisted == "other" and income.unlisted == "missing" and income.leaves == ("hi", "lo")
    assert isinstance(age, NumericColumn) and age.integer and age.lo <= 20 and age.hi >= 75 and age.missing
    assert out.read_text() == s.yaml
    parsed = parse_schema(s.yaml, "s.yaml")
    assert not parsed.draft and parsed.columns["color"] == color
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = load(ReadOptions(csv), parsed)
    # the record of the unreleased class is dropped; the rare colour is (other), and so is '?': ten
    # records are far below the stability threshold that would make it a missing token
    assert t.n_rows == 3000 - 1 and s.missing_tokens == ()
    # (other): the rare colour (row 0), the '?' rows and the x9 rows but row 5 (its class was not released)
    assert int(np.count_nonzero(t.columns["color"] == 2)) == 19
    assert json.loads(rep.read_text()) == json.loads(dumps(s.report))


def test_a_rare_missing_value_gets_no_leaf_and_its_rows_are_kept(csv) -> None:  # noqa: ANN001
    """Issue 36 item 3: under the learned keep policy a missing value is a value, but with the
    tokens learned only a column whose noisy counts establish missingness gets the '(missing)'
    leaf or a bucket (dpkit.domain.metadata.holds_missing): color's ten '?' are far below τ, so
    it has none and they are read as its '(other)' leaf; no row is dropped for them."""
    s = learn(csv)
    color, income, age = s.columns["color"], s.columns["income"], s.columns["age"]
    assert s.missing_policy == "keep" and s.missing_tokens == ()
    assert color.holds_missing is False and age.holds_missing is False and income.holds_missing is None
    assert color.missing_leaf is None and income.missing_leaf is None
    assert "missing: false" in s.yaml.split("\ncolumns:")[1] and "(missing)" not in s.yaml.split("\ncolumns:")[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = load(ReadOptions(csv), parse_schema(s.yaml, "s.yaml"))
    assert t.n_rows == 3000 - 1  # the '?' rows kept; the record of the unreleased class dropped
    assert int(np.count_nonzero(t.columns["color"] == color.other_code)) == 19  # RARE, x9, the ten "?"


def test_declared_missing_tokens_keep_every_columns_missing_cell(csv) -> None:  # noqa: ANN001
    """With the tokens declared the user has said what missing is: no per-column flag, every
    predictor keeps its '(missing)' leaf or bucket, as under a hand-written keep schema."""
    s = learn(csv, missing=["?"])
    assert s.missing_policy == "keep" and s.missing_tokens == ("?",)
    assert all(c.holds_missing is None for c in s.columns.values() if hasattr(c, "holds_missing"))
    assert "missing: false" not in s.yaml and s.columns["color"].missing_leaf is not None


def test_a_rare_value_never_appears_anywhere(csv, tmp_path, capsys) -> None:  # noqa: ANN001
    """Issue 22: a value held by fewer than the threshold's records is in no schema, report
    or message — over 20 runs (each one's ε is small enough that x9 and the rare value fail)."""
    for seed in range(20):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = learn(csv, seed="0x" + hashlib.sha256(bytes([seed])).hexdigest()[:32], report=str(tmp_path / "r.json"))
        text = s.yaml + dumps(s.report) + (tmp_path / "r.json").read_text() + "".join(str(w.message) for w in caught)
        assert RARE not in text and "x9" not in text
    got = capsys.readouterr()
    assert RARE not in got.out + got.err


def test_report_is_epsilon_delta_and_adds_up(csv) -> None:  # noqa: ANN001
    s = learn(csv, epsilon=0.8, delta=2e-6)
    p = s.report["privacy"]
    assert p["model"] == "(epsilon, delta)-dp" and p["delta"] == p["delta_spent"] == pytest.approx(2e-6)
    assert p["delta_budget"] == 2e-6 and p["guarantee"].startswith("(epsilon, delta)-DP")
    spends = s.report["spends"]
    assert math.fsum(x["epsilon"] for x in spends) == pytest.approx(0.8)
    assert math.fsum(x.get("delta", 0) for x in spends) == pytest.approx(2e-6)
    cats = [x for x in spends if x["step"].startswith("domain: categories")]
    assert len(cats) == 2 and all(x["delta"] == pytest.approx(1e-6) for x in cats)
    assert all("delta" not in x for x in spends if x not in cats)
    assert s.report["release"]["schema"]["columns"]["color"]["values"] == ["blue", "red", "(other)"]


def test_header_says_what_is_learned_and_what_is_public(csv) -> None:  # noqa: ANN001
    s = learn(csv, categorical=["color"])
    head = [line for line in s.yaml.splitlines() if line.startswith("#")]
    text = "\n".join(head)
    assert "LEARNED UNDER DP" in text and "DECLARED (public" in text and "epsilon=1" in text
    assert "the missing tokens (of a public list; found: none)" in text
    # color was declared, age's type and whole-number flag were learned
    assert "#     the types of age;" in text and "#     the whole-number flags of age;" in text
    assert "#   - the types of color;" in text and "#   - ignored: note" in text
    assert "age:" in s.yaml and "type, whole-number flag, missing tokens learned under DP (epsilon" in s.yaml


def test_same_key_same_schema(csv) -> None:  # noqa: ANN001
    assert learn(csv).yaml == learn(csv).yaml


def test_a_column_with_no_surviving_value_is_refused_naming_it(csv, tmp_path) -> None:  # noqa: ANN001
    out = tmp_path / "s.yaml"
    with pytest.raises(DataError, match=r"column\(s\) 'note'.*threshold \d+ records.*ignore") as exc:
        learn(csv, ignore=None, output=str(out))
    assert not out.exists() and getattr(exc.value, "param", None) == "ignore"
    s = learn(csv, ignore=None, empty="ignore")
    assert s.columns["note"].kind == "ignore"


def test_the_target_with_no_surviving_class_is_always_refused() -> None:
    df = pd.DataFrame({"y": [f"c{i}" for i in range(500)], "a": ["p"] * 500})
    with pytest.raises(DataError, match="the target 'y'"):
        infer_schema(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY, empty="ignore")


def test_a_target_with_one_surviving_class_is_refused_naming_only_that_class() -> None:
    """97 % 'stay': at ε = 0.1 the 90 'left' records are under the threshold and only 'stay' would
    be released — a one-class release predicts 'stay' for everyone, so it is refused. (Classes of
    no public vocabulary: a yes/no target keeps both classes, tests/domain/test_vocabulary.py.)"""
    n = 3000
    df = pd.DataFrame({"y": ["left"] * 90 + ["stay"] * (n - 90), "a": ["p", "q"] * (n // 2)})
    with pytest.raises(DataError, match=r"only one class of the target 'y' \('stay'\).*threshold \d+ records") as exc:
        infer_schema(df, target="y", epsilon=0.1, delta=1e-6, random_state=KEY)
    assert "'left'" not in str(exc.value)
    assert infer_schema(df, target="y", epsilon=5.0, delta=1e-6, random_state=KEY).columns["y"].leaves == ("left", "stay")


@pytest.mark.parametrize("delta", [0, -1e-6, 2e-3, 1.0, "x", None])
def test_bad_delta_is_refused_before_anything(csv, tmp_path, delta) -> None:  # noqa: ANN001
    out = tmp_path / "s.yaml"
    with pytest.raises(DpkitUsageError, match="delta must be a number > 0 and at most 0.001"):
        learn(csv, delta=delta, output=str(out))
    assert not out.exists()


@pytest.mark.parametrize(("kw", "match"), [
    ({"numeric": ["nope"]}, "numeric: column\\(s\\) 'nope' are not in the data"),
    ({"date": ["nope"]}, "date: column\\(s\\) 'nope' are not in the data"),
    ({"numeric": ["age"], "categorical": ["age"]}, "declared two types"),
    ({"numeric": ["income"]}, "target 'income' must be categorical"),
    ({"integer": ["color"], "categorical": ["color"]}, "declared two types"),
    ({"target": "nope"}, "target 'nope' is not a column"),
])
def test_bad_metadata_is_refused_with_nothing_spent(kw, match) -> None:  # noqa: ANN001
    acc = Accountant(1.0, delta=1e-6)
    df, _ = read_strings(table(300))
    args = {"target": "income", "ignore": ["note"], **kw}
    with pytest.raises(DpkitUsageError, match=match):
        learn_schema(df, epsilon=1.0, delta=1e-6, rng=make_rng(1), accountant=acc, **args)
    assert acc.spends == ()


def test_delta_above_one_over_n_warns_with_the_noisy_count() -> None:
    """δ = 1e-3 on ~3,000 records is above 1/N: a warning quoting the noisy count."""
    df = table(3000)
    with pytest.warns(DpkitWarning, match=r"delta=0.001 is above 1/N for this data \(N ≈ \d+, a noisy count\)"):
        infer_schema(df, target="income", epsilon=5.0, delta=1e-3, random_state=KEY, ignore=["note"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DpkitWarning)
        infer_schema(df, target="income", epsilon=5.0, delta=1e-6, random_state=KEY, ignore=["note"])


def test_dataframe_input_with_numbers_and_nan() -> None:
    g = np.random.default_rng(4)
    df = pd.DataFrame({"x": g.normal(100, 10, 2000), "k": g.integers(0, 9, 2000), "c": ["a", "b"] * 1000})
    df.loc[3, "x"] = np.nan
    s = infer_schema(df, epsilon=2.0, delta=1e-6, random_state=KEY)
    x, k = s.columns["x"], s.columns["k"]
    assert x.kind == "numeric" and not x.integer and x.lo < 80 and x.hi > 120
    assert k.kind == "numeric" and k.integer
    # one NaN (read as '') is far below the stability threshold: no missing token is learned, and
    # the empty value is read as missing all the same (x reads a non-number as missing)
    assert s.missing_tokens == () and x.unparsable == "missing"


def test_levels_zero_gives_bounds_only_and_levels_give_a_hierarchy(csv) -> None:  # noqa: ANN001
    assert learn(csv, levels=0).columns["age"].hierarchy is None
    h = learn(csv, levels=3).columns["age"].hierarchy
    assert h is not None and len(h.children) == 2


def test_column_budgets_split_epsilon_by_weight_and_delta_over_categories() -> None:
    metas = [ColumnMeta("a", "categorical"), ColumnMeta("b", "numeric"), ColumnMeta("c", "categorical"),
             ColumnMeta("d", "ignore")]
    b = column_budgets(metas, 1.0, 1e-6, DomainOptions(numeric_weight=2.0))
    assert b == {"a": (0.25, 5e-7), "b": (0.5, 0.0), "c": (0.25, 5e-7)}
    # the target weighs target_weight (default 4): its rarest class must clear the threshold
    b = column_budgets(metas, 1.0, 1e-6, DomainOptions(), target="c")
    assert b == {"a": (pytest.approx(1 / 6), 5e-7), "b": (pytest.approx(1 / 6), 0.0), "c": (pytest.approx(4 / 6), 5e-7)}
    with pytest.raises(DpkitUsageError, match="every column is ignored"):
        column_budgets([ColumnMeta("d", "ignore")], 1.0, 1e-6, DomainOptions())


@pytest.mark.parametrize("kw", [{"numeric_weight": 0}, {"target_weight": 0}, {"target_weight": float("nan")}, {"levels": 9}, {"levels": True}, {"empty": "x"},
                                {"split_share": 1.0}, {"split_share": 0}, {"bound_prior": -1}])
def test_domain_options_are_checked(kw) -> None:  # noqa: ANN001
    with pytest.raises(DpkitUsageError):
        DomainOptions(**kw)


def test_the_other_leaf_gets_a_free_name() -> None:
    df = pd.DataFrame({"c": ["(other)"] * 300 + ["a"] * 300})
    s = infer_schema(df, epsilon=2.0, delta=1e-6, random_state=KEY)
    assert s.columns["c"].leaves == ("(other)", "a", "(other values)")
    assert s.columns["c"].other == "(other values)"


def test_public_values_and_bounds_are_taken_as_given_and_cost_nothing(csv) -> None:  # noqa: ANN001
    s = learn(csv, values={"income": ["lo", "hi", "mid"]}, bounds={"age": (0, 100)}, levels=0, integer=["age"],
              categorical=["color"], missing="none")
    assert s.columns["income"].leaves == ("lo", "hi", "mid") and s.columns["income"].unlisted == "missing"
    age = s.columns["age"]
    assert (age.lo, age.hi, age.hierarchy) == (0, 100, None)
    steps = [x["step"] for x in s.report["spends"]]
    assert steps == ["domain: categories of color"]  # the one column still learned gets all of ε
    assert s.report["privacy"]["epsilon_spent"] == pytest.approx(1.0)
    assert "the value lists of income;" in s.yaml and "the bounds of age." in s.yaml
    h = learn(csv, bounds={"age": (0, 100)}, levels=2).columns["age"]
    assert (h.lo, h.hi) == (0, 100) and h.hierarchy is not None  # with levels: only split points learned


@pytest.mark.parametrize(("kw", "match"), [
    ({"values": {"age": []}}, "non-empty list"),
    ({"values": {"age": ["1"]}, "numeric": ["age"]}, "categorical type"),
    ({"bounds": {"age": (5, 1)}}, "finite lo < hi"),
    ({"bounds": {"color": (0, 1)}, "categorical": ["color"]}, "numeric type"),
    ({"bounds": {"age": ("a", 1)}}, "two numbers"),
])
def test_bad_public_values_or_bounds(kw, match) -> None:  # noqa: ANN001
    df, _ = read_strings(table(300))
    with pytest.raises(DpkitUsageError, match=match):
        learn_schema(df, target="income", epsilon=1.0, delta=1e-6, rng=make_rng(1),
                     accountant=Accountant(1.0, delta=1e-6), ignore=["note"], **kw)


def test_a_zero_heavy_column_keeps_its_non_zero_values_and_a_split_beside_zero() -> None:
    """Issue 36: a float column, 80 % zeros, the rest lognormal(3, 1), among 14 predictors (a
    column's ε ≈ 0.011 at ε = 0.2 for the domain): bounds [0, ≥ 50] (before: [-2e-09, 0]-like,
    every non-zero value clipped), a split point 0.1 offered beside the bound 0, and the
    released YAML carries it. One key (the statistical rate is in tests/privacy/test_quantiles.py)."""
    g = np.random.default_rng(36)
    n = 8000
    df = pd.DataFrame({"amount": np.where(g.random(n) < 0.2, np.round(g.lognormal(3, 1, n), 2), 0.0).astype(str),
                       **{f"x{j}": g.normal(50, 10, n).round(1).astype(str) for j in range(13)},
                       "y": np.where(g.random(n) < 0.3, "a", "b")})
    s = infer_schema(df, target="y", epsilon=0.2, delta=1e-6, random_state=KEY)
    amount = s.columns["amount"]
    assert amount.lo == 0 and amount.hi >= 50 and not amount.integer
    # the split beside 0 only: the log-spaced points are off by default (measured on a held-out
    # public table, DomainOptions.decade_points); with them, the points below publish's first step
    assert amount.points == (zero_edge(0, amount.hi, False),)
    from dpkit.domain.discover import DomainOptions
    from dpkit.privacy import Accountant, make_rng

    def learned(opts: DomainOptions) -> NumericColumn:
        return learn_schema(df, target="y", epsilon=0.2, delta=1e-6, rng=make_rng(5), accountant=Accountant(0.2, delta=1e-6),
                            options=opts).schema.columns["amount"]

    a1, a2 = learned(DomainOptions()), learned(DomainOptions(decade_points=True))
    assert (a2.lo, a2.hi) == (a1.lo, a1.hi) and a1.points == (zero_edge(0, a1.hi, False),)  # post-processing
    step = a2.hi / 32
    assert a2.points[0] == (0.1 if a2.hi < 1000 else 1.0)
    assert len(a2.points) >= 4 and all(p < step for p in a2.points)
    assert a2.points == tuple(sorted({zero_edge(0, a2.hi, False), *decade_points(0, a2.hi, False)}))
    assert parse_schema(s.yaml, "learned.yaml").columns["amount"].points == amount.points
    for c in s.columns.values():
        if isinstance(c, NumericColumn):
            assert all(b == 0 or abs(b) >= 1e-6 for b in (c.lo, c.hi, *c.points))
