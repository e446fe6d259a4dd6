"""A released public missing token is the column's missing value, not a category (issue 36 item 3).

A run without a schema learns its missing tokens from noisy counts against the metadata's
stability threshold, which is far above partition selection's: on a new user's table of 8,000
rows and eight predictors, ``''`` in 10 % of ``region`` (800 records) is not learned as a token
(τ_j = 914) but is released by partition selection (τ = 226), and the schema listed
``values: ['', E, N, S, W, (other)]``. Now a released value of the public token list is read as
the column's missing value (``dpkit.domain.discover.released_tokens``: post-processing).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.api.domain import infer_schema
from dpkit.cli import cli
from dpkit.cli.boundary import run
from dpkit.domain.discover import DomainOptions, discover, released_tokens
from dpkit.domain.metadata import MISSING_CANDIDATES, ColumnMeta
from dpkit.domain.profile import Categories
from dpkit.errors import DataError
from dpkit.io.source import ReadOptions
from dpkit.io.table import load
from dpkit.privacy import Accountant, make_rng
from dpkit.schema.parse import CategoricalColumn, load_schema, parse_schema

KEY = "0x5e1ea5ed70ca11e2b0de0c3a7e5a1f00"


def region_table(n: int = 8000, seed: int = 0, *, frac: float = 0.10, cats: int = 4, nums: int = 3,
                 token: str = "") -> pd.DataFrame:
    """The new user's table: ``region`` (E/N/S/W, ``token`` in ``frac`` of the rows), ``cats``
    three-valued and ``nums`` integer predictors, and a target ``y`` that depends on region."""
    g = np.random.default_rng(seed)
    region = np.where(g.random(n) < frac, token, g.choice(["E", "N", "S", "W"], n)).astype(object)
    p_yes = pd.Series(region).map({"E": 0.2, "N": 0.4, "S": 0.6, "W": 0.8, token: 0.5}).to_numpy()
    cols: dict[str, object] = {"region": region}
    cols |= {f"c{j}": g.choice(["a", "b", "c"], n) for j in range(cats)}
    cols |= {f"n{j}": g.integers(0, 100, n) for j in range(nums)}
    cols["y"] = np.where(g.random(n) < p_yes, "yes", "no")
    return pd.DataFrame(cols)


# --- the rule ------------------------------------------------------------------------------------

def test_released_tokens_splits_tokens_from_values() -> None:
    assert released_tokens(["E", "", "N", "?"], MISSING_CANDIDATES) == (["E", "N"], ("", "?"))
    # a value that is not a token of the public list stays a value, however missing it looks
    assert released_tokens(["unknown", "missing", "E"], MISSING_CANDIDATES) == (["unknown", "missing", "E"], ())
    # tokens declared (no candidates): the user said what missing is; '' stays a value
    assert released_tokens(["", "E"], ()) == (["", "E"], ())


@given(st.lists(st.sampled_from([*MISSING_CANDIDATES, "E", "N", "unknown", "NaN", " ", "none"]), unique=True),
       st.booleans())
def test_released_tokens_is_a_partition_of_the_released_values(kept, declared) -> None:  # noqa: ANN001
    """Every released value comes out once, as a value or a token; values keep their order;
    tokens are exactly the released values of the public list, in the list's order."""
    candidates = () if declared else MISSING_CANDIDATES
    values, tokens = released_tokens(kept, candidates)
    assert sorted([*values, *tokens]) == sorted(kept)
    assert values == [v for v in kept if v not in candidates]
    assert tokens == tuple(t for t in candidates if t in kept)


def _discover(values: dict[str, dict[str, int]], *, target: str = "y", candidates=MISSING_CANDIDATES,  # noqa: ANN001
              tokens: tuple[str, ...] = (), policy: str = "keep", seed: int = 0):  # noqa: ANN202
    """discover() on fixed exact counts, every listed value far above any threshold (so the
    release is the same for every draw) and a few singletons far below it."""
    metas, cats = [], {}
    for name, counts in values.items():
        learned = () if name == target else ("type", "missing tokens")
        metas.append(ColumnMeta(name, "categorical", learned=learned, missing=None if name == target else False))
        order = list(dict.fromkeys([*tokens, *counts]))
        cats[name] = Categories(tuple(order), np.array([counts.get(v, 0) for v in order], dtype=np.int64),
                                np.isin(np.asarray(order, dtype=object), list(tokens)) if tokens
                                else np.zeros(len(order), bool))
    return discover(metas, cats, {}, target=target, tokens=tokens, epsilon=1.0, delta=1e-6, rng=make_rng(seed),
                    accountant=Accountant(1.0, delta=1e-6), options=DomainOptions(missing_policy=policy),
                    candidates=candidates)


BIG = 50_000


def test_a_released_token_becomes_the_columns_missing_leaf() -> None:
    d = _discover({"region": {"E": BIG, "N": BIG, "": BIG, "lonely": 1}, "kind": {"a": BIG, "unknown": BIG},
                   "y": {"no": BIG, "yes": BIG}})
    region, kind = d.schema.columns["region"], d.schema.columns["kind"]
    assert isinstance(region, CategoricalColumn) and isinstance(kind, CategoricalColumn)
    assert "" not in region.leaves and region.leaves == ("E", "N", "(other)", "(missing)")
    assert region.missing_leaf == "(missing)" and region.holds_missing is True
    assert d.schema.missing_tokens == ("",) and d.schema.missing_policy == "keep"
    assert d.released_tokens == {"region": ("",)}
    # a non-token value stays a value, and the other column keeps its flag
    assert kind.leaves == ("a", "unknown", "(other)") and kind.holds_missing is False
    note = next(n for n in d.notes if n.name == "region")
    assert note.missing_tokens == ("",) and "the column's missing token" in note.learned


def test_the_rule_draws_nothing_and_changes_no_noise() -> None:
    """Same key, with and without the rule: the same released values (the token only moves from
    the value list to the missing leaf) and the same ledger — post-processing only."""
    counts = {"region": {"E": BIG, "": BIG, "S": 300}, "y": {"no": BIG, "yes": BIG}}
    acc_on, acc_off = Accountant(1.0, delta=1e-6), Accountant(1.0, delta=1e-6)
    metas = [ColumnMeta("region", "categorical", learned=("type",), missing=False), ColumnMeta("y", "categorical")]
    cats = {n: Categories(tuple(c), np.array(list(c.values()), dtype=np.int64), np.zeros(len(c), bool))
            for n, c in counts.items()}
    on = discover(metas, cats, {}, target="y", tokens=(), epsilon=1.0, delta=1e-6, rng=make_rng(7),
                  accountant=acc_on, candidates=MISSING_CANDIDATES)
    off = discover(metas, cats, {}, target="y", tokens=(), epsilon=1.0, delta=1e-6, rng=make_rng(7),
                   accountant=acc_off)
    assert off.schema.columns["region"].leaves == ("", "E", "S", "(other)")  # the old schema
    assert on.schema.columns["region"].leaves == ("E", "S", "(other)", "(missing)")
    assert acc_on.spends == acc_off.spends
    assert on.noisy_records == off.noisy_records


def test_declared_tokens_leave_a_released_empty_cell_a_value() -> None:
    d = _discover({"region": {"E": BIG, "": BIG, "?": BIG}, "y": {"no": BIG, "yes": BIG}},
                  candidates=(), tokens=("?",))
    region = d.schema.columns["region"]
    assert region.leaves[:3] == ("", "E", "(other)") and d.schema.missing_tokens == ("?",)
    assert d.released_tokens == {}


def test_under_drop_a_released_token_drops_its_rows_as_a_learned_one() -> None:
    d = _discover({"region": {"E": BIG, "N": BIG, "NA": BIG}, "y": {"no": BIG, "yes": BIG}}, policy="drop")
    region = d.schema.columns["region"]
    assert d.schema.missing_policy == "drop" and d.schema.missing_tokens == ("NA",)
    assert region.leaves == ("E", "N", "(other)") and region.missing_leaf is None
    assert region.missing_code == -2  # a missing value drops its row (CategoricalColumn.missing_code)


def test_a_column_whose_only_released_value_is_a_token_keeps_other_and_missing() -> None:
    d = _discover({"region": {"": BIG, "E": 3, "N": 2}, "y": {"no": BIG, "yes": BIG}})
    assert d.schema.columns["region"].leaves == ("(other)", "(missing)")
    assert d.released_tokens == {"region": ("",)}


def test_a_released_token_is_no_class_of_the_target() -> None:
    d = _discover({"region": {"E": BIG, "N": BIG}, "y": {"no": BIG, "yes": BIG, "NA": BIG, "": BIG}})
    y = d.schema.columns["y"]
    assert y.leaves == ("no", "yes") and y.unlisted == "missing"  # 'NA' rows read as missing: dropped
    assert d.released_tokens == {} and d.schema.missing_tokens == ()  # the target's token is not the schema's
    assert "read as a missing class" in next(n for n in d.notes if n.name == "y").learned
    # with one class left, the existing refusal applies (naming the one released class only)
    with pytest.raises(DataError, match="only one class of the target 'y' \\('yes'\\)"):
        _discover({"region": {"E": BIG}, "y": {"yes": BIG, "null": BIG}})


# --- the new user's table through the library ---------------------------------------------------

@pytest.fixture(scope="module")
def region_csv(tmp_path_factory) -> Path:  # noqa: ANN001
    p = tmp_path_factory.mktemp("region") / "region.csv"
    region_table().to_csv(p, index=False)
    return p


def test_the_new_users_table_gets_a_missing_leaf_not_an_empty_category(region_csv) -> None:  # noqa: ANN001
    """8,000 rows, 10 % '' in region: the metadata does not learn '' (800 < τ_j), partition
    selection releases it; the schema reads it as region's '(missing)' and every row loads."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = infer_schema(str(region_csv), target="y", epsilon=1.0, delta=1e-6, random_state=KEY)
    meta = s.report["parameters"]["metadata"]
    assert meta["missing_tokens"] == []  # the metadata step did not learn it ...
    region = s.columns["region"]
    assert "" not in region.leaves and region.leaves == ("E", "N", "S", "W", "(other)", "(missing)")
    assert s.missing_tokens == ("",) and region.holds_missing is True
    assert meta["columns"]["region"]["missing_tokens_released"] == [""]  # ... partition selection released it
    assert meta["schema_missing_tokens"] == [""] and s.report["parameters"]["missing"] == [""]
    assert all("missing_tokens_released" not in meta["columns"][c] for c in ("c0", "n0", "y"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = load(ReadOptions(str(region_csv)), parse_schema(s.yaml, "s.yaml"))
    raw = pd.read_csv(region_csv, keep_default_na=False, dtype=str)
    assert t.n_rows == len(raw)  # every row kept
    codes = t.columns["region"]
    assert np.array_equal(codes == region.leaf_code["(missing)"], (raw["region"] == "").to_numpy())


def test_declared_tokens_through_the_library_leave_the_empty_cell_a_value(region_csv) -> None:  # noqa: ANN001
    """missing="none" declares that nothing is missing: the released '' stays a category."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = infer_schema(str(region_csv), target="y", epsilon=1.0, delta=1e-6, random_state=KEY, missing="none")
    assert s.columns["region"].leaves == ("", "E", "N", "S", "W", "(other)") and s.missing_tokens == ()
    assert "missing_tokens_released" not in s.report["parameters"]["metadata"]["columns"]["region"]


# --- the command line ---------------------------------------------------------------------------

def dpkit(capsys, *args) -> tuple[int, str, str]:  # noqa: ANN001
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_taxonomy_infer_writes_missing_not_an_empty_value(capsys, tmp_path, region_csv) -> None:  # noqa: ANN001
    out = tmp_path / "s.yaml"
    code, _, err = dpkit(capsys, "taxonomy", "infer", region_csv, "--target", "y", "--epsilon", "1",
                         "--delta", "1e-6", "--seed", KEY, "-o", out)
    assert code == 0, err
    text = out.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("  region:"))
    assert "values: [E, N, S, W, (other)]" in line and "''" not in line.split("#")[0]
    assert "missing: true" in line and "'' released too" in line
    assert "\nmissing: ''\nmissing_policy: keep\n" in text
    assert "a released value of the public list of missing tokens is its column's missing value: '' in region" in text
    schema = load_schema(out)
    assert schema.columns["region"].leaves[-1] == "(missing)" and "" not in schema.columns["region"].leaves
    rep = json.loads((tmp_path / "s.report.json").read_text())
    assert rep["parameters"]["metadata"]["columns"]["region"]["missing_tokens_released"] == [""]


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> tuple[Path, Path]:  # noqa: ANN001
    """A train/test split publish's own domain share releases '' in: 20 % of region, three
    predictors (the metadata's τ_j 2,491 against partition selection's 624 at ε = 1)."""
    d = tmp_path_factory.mktemp("split")
    train, test = d / "train.csv", d / "test.csv"
    region_table(8000, 0, frac=0.2, cats=1, nums=1).to_csv(train, index=False)
    region_table(2000, 9, frac=0.2, cats=1, nums=1).to_csv(test, index=False)
    return train, test


def test_publish_then_generalize_maps_the_empty_cell_to_missing(capsys, tmp_path, split) -> None:  # noqa: ANN001
    train, test = split
    rel, rep, gen = tmp_path / "rel.csv", tmp_path / "rel.json", tmp_path / "gen.csv"
    code, _, err = dpkit(capsys, "publish", train, "--target", "y", "--epsilon", "1", "--delta", "1e-6",
                         "--seed", KEY, "-o", rel, "--report", rep)
    assert code == 0, err
    released = pd.read_csv(rel, keep_default_na=False, dtype=str)
    assert "(missing)" in set(released["region"]) and "" not in set(released["region"])
    code, _, err = dpkit(capsys, "generalize", test, "--cut", rep, "-o", gen)
    assert code == 0, err
    t = pd.read_csv(test, keep_default_na=False, dtype=str)
    g = pd.read_csv(gen, keep_default_na=False, dtype=str)
    assert len(g) == len(t)  # every test row comes out, in order
    empty = (t["region"] == "").to_numpy()
    assert empty.sum() > 300 and (g["region"][empty] == "(missing)").all()
    assert (g["region"][~empty] == t["region"][~empty]).all()


def test_forest_reads_the_empty_cell_as_missing_in_training_and_prediction(capsys, tmp_path, split) -> None:  # noqa: ANN001
    """The forest's learned schema reads '' as region's '(missing)' when it trains, and its model
    does so when it predicts: rows with '' follow the '(missing)' branch, whose class mix (p(yes)
    = 0.5 here) is neither of the branches an unlisted value would take."""
    train, test = split
    model, pred = tmp_path / "model.json", tmp_path / "pred.csv"
    code, _, err = dpkit(capsys, "forest", "train", train, "--target", "y", "--epsilon", "1", "--delta", "1e-6",
                         "--seed", KEY, "--trees", "3", "--depth", "1", "--columns", "region", "-o", model)
    assert code == 0, err
    m = json.loads(model.read_text())
    feat = next(f for f in m["features"] if f["name"] == "region")
    assert feat["values"] == ["E", "N", "S", "W", "(other)", "(missing)"] and m["missing"] == ""
    code, _, err = dpkit(capsys, "forest", "predict", model, test, "-o", pred, "--proba", "--keep", "region")
    assert code == 0, err
    p = pd.read_csv(pred, keep_default_na=False, dtype={"region": str})
    assert len(p) == 2000
    by_region = p.groupby("region")["p_yes"].mean()
    # the (missing) leaf's counts (half yes) for '' rows; E (0.2) and W (0.8) are far from it
    assert abs(by_region[""] - 0.5) < 0.1 and by_region["E"] < 0.35 and by_region["W"] > 0.65
    # the same rows given as a DataFrame with NaN predict the same (the readers' empty cell)
    from dpkit.algorithms.forest.model import predict_proba

    frame = pd.read_csv(test, keep_default_na=False, dtype=str).replace({"": np.nan})
    assert np.allclose(predict_proba(str(model), frame)[:, 1], p["p_yes"].to_numpy(), atol=1e-6)
