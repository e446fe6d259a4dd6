"""Bounds a person would write and identifiers left out by name (issue 46): the whole-number grid
for columns whose fractions are not established, the upper bound's reward, the few-values rule,
the identifier name rule with ``keep=``, and the draft's robust bounds."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.api.domain import learn_schema
from dpkit.domain.discover import DomainOptions, _numeric, discover
from dpkit.domain.grid import nice_grid, reward_window
from dpkit.domain.metadata import (
    MISSING_CANDIDATES,
    ColumnMeta,
    Declarations,
    decide,
    named_ids,
)
from dpkit.errors import DpkitUsageError, DpkitWarning
from dpkit.privacy import Accountant, make_rng
from dpkit.privacy.mechanisms.quantiles import Profile, bounds_on_grid
from dpkit.schema.draft import draft_from_data, robust_bounds, round_nice
from dpkit.schema.names import looks_like_id
from dpkit.schema.parse import IgnoredColumn, NumericColumn

KEY = "0x5d0b1c2e3f405162738495a6b7c8d9e0"


# --------------------------------------------------------------------------- identifiers by name


@pytest.mark.parametrize("name", ["id", "ID", "Id", "customer_id", "CustomerId", "userID", "RowNumber", "row_number",
                                  "Unnamed: 0", "index", "uuid", "GUID", "api-key", "record_id", "rowid"])
def test_identifier_names(name: str) -> None:
    assert looks_like_id(name)


@pytest.mark.parametrize("name", ["paid", "valid", "Idade", "PAID", "Surname", "idle", "identity", "age", "grid",
                                  "ref_number", "video_id2", "width", "keys_pressed", "HTTPCode", ""])
def test_names_that_are_not_identifiers(name: str) -> None:
    assert not looks_like_id(name)


def test_a_declared_type_or_keep_learns_an_identifier_named_column() -> None:
    cols = ["RowNumber", "CustomerId", "age", "y"]
    assert named_ids(cols, "y", Declarations()) == ["RowNumber", "CustomerId"]
    assert named_ids(cols, "y", Declarations(keep="CustomerId")) == ["RowNumber"]
    assert named_ids(cols, "y", Declarations(numeric=["RowNumber"])) == ["CustomerId"]
    assert named_ids(["id", "y"], "id", Declarations()) == []  # the target is never left out
    with pytest.raises(DpkitUsageError, match="keep: column"):
        named_ids(cols, "y", Declarations(keep="nope"))


def _bank(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    y = np.where(g.random(n) < 0.3, "1", "0")
    return pd.DataFrame({"RowNumber": np.arange(1, n + 1).astype(str), "CustomerId": (g.permutation(n) + 10**7).astype(str),
                         "score": np.clip(np.round(g.normal(650, 100, n)), 350, 850).astype(int).astype(str),
                         "flag": (g.random(n) < 0.6).astype(int).astype(str), "y": y})


def test_identifiers_are_left_out_with_one_warning_naming_keep() -> None:
    df = _bank()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        s = dpkit.infer_schema(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY)
    assert isinstance(s.columns["RowNumber"], IgnoredColumn) and isinstance(s.columns["CustomerId"], IgnoredColumn)
    named = [str(w.message) for w in got if "named like an identifier" in str(w.message)]
    assert len(named) == 1 and "'RowNumber', 'CustomerId'" in named[0] and "keep=" in named[0]
    assert not [st for st in s.report["spends"] if "RowNumber" in st["step"] or "CustomerId" in st["step"]]
    kept = dpkit.infer_schema(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY, keep="CustomerId")
    assert isinstance(kept.columns["CustomerId"], NumericColumn) and isinstance(kept.columns["RowNumber"], IgnoredColumn)


def test_publish_keep_learns_the_column_and_counts_in_the_key_only_when_given() -> None:
    from dpkit.run import call_identity

    assert call_identity({"levels": 3, "keep": None}) == {"levels": 3}
    df = _bank(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dpkit.publish(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY, keep=["RowNumber"])
    assert isinstance(r.schema.columns["RowNumber"], NumericColumn)
    assert isinstance(r.schema.columns["CustomerId"], IgnoredColumn)
    with pytest.raises(DpkitUsageError, match="keep applies only without a schema"):
        dpkit.publish(df, target="y", epsilon=1.0, schema=r.schema, keep=["RowNumber"])


# --------------------------------------------------------------------------- whole numbers


def test_a_decision_says_whether_fractions_are_established() -> None:
    k = len(MISSING_CANDIDATES)
    noisy = np.zeros(k + 5, dtype=np.int64)
    noisy[k + 0], noisy[k + 1], noisy[k + 4] = 163, 250, 3200  # whole, fraction, zero: all below τ but zeros
    d = decide(noisy, MISSING_CANDIDATES, tau=2000)
    assert d.kind == "numeric" and not d.integer and not d.fractions
    noisy[k + 1] = 2500
    assert decide(noisy, MISSING_CANDIDATES, tau=2000).fractions


def test_a_flag_whose_fractions_are_not_established_gets_whole_number_bounds() -> None:
    """A rare 0/1 column read as not integer (its noisy whole-number count under the fraction
    count's) took [0, 0.001] on the reals' grid: its bounds are now whole numbers."""
    prof = Profile.of(np.r_[np.zeros(3200), np.ones(170)])
    m = ColumnMeta("promo", "numeric", integer=False, fractions=False, noisy_numbers=3400, noisy_others=0)
    his = set()
    for seed in range(30):
        col, _ = _numeric(m, prof, 0.02, DomainOptions(), make_rng(seed), Accountant(1.0), "d")
        assert col is not None and float(col.lo).is_integer() and float(col.hi).is_integer()
        his.add(col.hi)
    assert 1.0 in his
    # established fractions keep the reals' grid (a share in [0, 0.06] can be [0, 0.1])
    frac = ColumnMeta("share", "numeric", integer=False, fractions=True, noisy_numbers=3400, noisy_others=0)
    got = {_numeric(frac, Profile.of(np.linspace(0, 0.06, 3400)), 0.05, DomainOptions(), make_rng(s),
                    Accountant(1.0), "d")[0].hi for s in range(20)}
    assert any(h < 1 for h in got)


# --------------------------------------------------------------------------- the upper bound's reward


def _utility(prof: Profile, grid: np.ndarray, reward: tuple[int, int]) -> np.ndarray:
    g = grid
    below = prof.below(g)
    above = prof.n - prof.at_most(g)
    half = np.where(g > 0, prof.at_most(g) - prof.at_most(g / 2), 0)
    r0, r1 = reward
    rew = np.clip(half - r0, 0, r1 - r0)
    return -below[:, None] - above[None, :] + rew[None, :]


@pytest.mark.parametrize("x", [-3.0, 0.0, 0.7, 1.0, 4.0, 9.0, 55.0, 300.0])
def test_the_rewarded_utility_has_sensitivity_one(x: float) -> None:
    """Adding any one record changes every pair's utility by at most one (the mechanism then uses
    exp(ε·u/2): not monotone)."""
    g = np.random.default_rng(1)
    base = np.clip(np.round(g.normal(20, 6, 400)), 0, None)
    grid = nice_grid(True)[300:380]  # around the data, both signs
    for reward in ((0, 50), (40, 140), (0, 0)):
        a = _utility(Profile.of(base), grid, reward)
        b = _utility(Profile.of(np.r_[base, x]), grid, reward)
        ok = np.triu(np.ones_like(a, dtype=bool), 1)
        assert np.abs(a - b)[ok].max() <= 1


def test_the_reward_brings_an_upper_bound_past_the_data_back_within_a_factor_two() -> None:
    """A credit score (N(650, 100) in [350, 850]): past 1,000 only the prior placed hi, which left
    it at 2,000-5,000 in a run of three; with the reward hi is within 2x the data's top."""
    g = np.random.default_rng(0)
    n = 6000
    prof = Profile.of(np.clip(np.round(g.normal(650, 100, n)), 350, 850))
    grid = nice_grid(True)
    eps = 0.01
    plain = [bounds_on_grid(prof, grid, epsilon=eps, rng=make_rng(s), accountant=Accountant(1), step="b",
                            zero_bonus=3, negative_lower=3)[1] for s in range(40)]
    rewarded = [bounds_on_grid(prof, grid, epsilon=eps, rng=make_rng(s), accountant=Accountant(1), step="b",
                               gamma=0.125, zero_bonus=3, negative_lower=3, reward=reward_window(n))[1]
                for s in range(40)]
    assert sum(h > 1700 for h in plain) >= 10
    assert all(h <= 1700 for h in rewarded) and sum(h >= 800 for h in rewarded) >= 36


def test_bad_reward_is_refused() -> None:
    prof = Profile.of(np.arange(10.0))
    with pytest.raises(DpkitUsageError, match="reward"):
        bounds_on_grid(prof, nice_grid(True), epsilon=1, rng=make_rng(0), accountant=Accountant(1), step="b",
                       reward=(5, 2))


def test_without_the_reward_the_bounds_are_the_draws_of_before() -> None:
    """``bounds_reward=False`` draws exactly as before the reward existed (the same k per step)."""
    g = np.random.default_rng(2)
    prof = Profile.of(np.round(g.lognormal(3, 1, 500)))
    got = [bounds_on_grid(prof, nice_grid(True), epsilon=0.05, rng=make_rng(s), accountant=Accountant(1), step="b",
                          zero_bonus=3, negative_lower=3) for s in range(5)]
    again = [bounds_on_grid(prof, nice_grid(True), epsilon=0.05, rng=make_rng(s), accountant=Accountant(1), step="b",
                            zero_bonus=3, negative_lower=3, reward=None) for s in range(5)]
    assert got == again


# --------------------------------------------------------------------------- too few values


def _sparse_meta(numbers: int, others: int, missing: bool = True) -> ColumnMeta:
    return ColumnMeta("ref", "numeric", integer=True, fractions=False, missing=missing, noisy_numbers=numbers,
                      noisy_others=others)


def test_a_mostly_missing_column_is_left_out_and_a_full_one_is_not() -> None:
    prof = Profile.of(np.round(np.random.default_rng(0).lognormal(30, 0.5, 200), -6))
    col, why = _numeric(_sparse_meta(200, 3100), prof, 0.02, DomainOptions(), make_rng(0), Accountant(1), "d")
    assert col is None and "too few values" in why
    # as many numbers but no established missing values (a small table): kept
    col, _ = _numeric(_sparse_meta(200, 3100, missing=False), prof, 0.02, DomainOptions(), make_rng(0), Accountant(1), "d")
    assert col is not None
    # half or more of the values are numbers, or enough of them for the bounds: kept
    for numbers, others in ((3000, 2000), (2000, 30000)):
        col, _ = _numeric(_sparse_meta(numbers, others), prof, 0.02, DomainOptions(), make_rng(0), Accountant(1), "d")
        assert col is not None, (numbers, others)
    col, _ = _numeric(_sparse_meta(200, 3100), prof, 0.02, DomainOptions(few_values=False), make_rng(0),
                      Accountant(1), "d")
    assert col is not None


def test_a_run_leaves_a_mostly_null_column_out_naming_bounds_and_bounds_keep_it() -> None:
    g = np.random.default_rng(5)
    n = 4000
    df = pd.DataFrame({"visits": g.poisson(2, n).astype(str),
                       "ref": np.where(g.random(n) < 0.94, "NULL", np.round(g.lognormal(30, 0.5, n), -6).astype(np.int64).astype(str)),
                       "y": np.where(g.random(n) < 0.4, "a", "b")})
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = dpkit.publish(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY)
    assert isinstance(r.schema.columns["ref"], IgnoredColumn)
    msgs = [w.message for w in got if "too few values" in str(w.message)]
    assert len(msgs) == 1 and "'ref'" in str(msgs[0]) and "bounds=" in str(msgs[0])
    assert isinstance(msgs[0], DpkitWarning) and msgs[0].param == "bounds"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = dpkit.publish(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY, bounds={"ref": (0, 10**14)})
    assert isinstance(r.schema.columns["ref"], NumericColumn) and r.schema.columns["ref"].hi == 10**14


def test_discover_keeps_the_header_order() -> None:
    metas = [ColumnMeta("x", "numeric", integer=True, fractions=False, noisy_numbers=500, noisy_others=0),
             ColumnMeta("c", "categorical"), ColumnMeta("y", "categorical")]
    from dpkit.domain.profile import Categories

    cats = {c: Categories(("a", "b"), np.array([300, 200]), np.array([False, False])) for c in ("c", "y")}
    d = discover(metas, cats, {"x": Profile.of(np.arange(500.0))}, target="y", tokens=(), epsilon=5.0, delta=1e-3,
                 rng=make_rng(0), accountant=Accountant(5.0, delta=1e-3))
    assert list(d.schema.columns) == ["x", "c", "y"] and [n.name for n in d.notes] == ["x", "c", "y"]


# --------------------------------------------------------------------------- the draft


@pytest.mark.parametrize(("lo", "hi", "want"), [(392, 850, (350, 850)), (84, 172, (80, 180)), (0, 72, (0, 80)),
                                                (0, 0.06, (0, 0.06)), (-3, 8, (-4, 8)), (17, 90, (10, 90))])
def test_round_nice(lo: float, hi: float, want: tuple[float, float]) -> None:
    assert round_nice(lo, hi) == want
    if float(lo).is_integer() and float(hi).is_integer() and hi - lo <= 20:
        assert round_nice(lo, hi, integer=True) == (lo, hi)  # a code list's ends, as a person writes them


def test_a_drafted_flag_is_one_a_release_can_split() -> None:
    """A flag is drafted [0, 1], as a person writes it, and publish splits it at its upper bound
    (before the integer top split it was drafted [0, 2]: [0, 1] was released as one cell)."""
    g = np.random.default_rng(0)
    n = 3000
    f = (g.random(n) < 0.5).astype(int)
    df = pd.DataFrame({"f": f.astype(str), "y": np.where(g.random(n) < np.where(f == 1, 0.9, 0.1), "a", "b")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = draft_from_data(df, target="y")
        assert d["columns"]["f"]["bounds"] == [0, 1] and "data min 0, max 1" in d["columns"]["f"]["_comment"]
        d.pop("draft")
        from dpkit.schema.importers import dump_schema
        from dpkit.schema.parse import parse_schema

        r = dpkit.publish(df, schema=parse_schema(dump_schema(d), "d.yaml"), epsilon=1.0, random_state=KEY)
    assert set(r.table["f"]) == {"[0,1)", "[1,1]"}


def test_a_learned_flag_gets_an_upper_bound_past_its_ones() -> None:
    prof = Profile.of(np.r_[np.zeros(3000), np.ones(3000)])
    m = ColumnMeta("f", "numeric", integer=True, fractions=False, noisy_numbers=6000, noisy_others=0)
    his = [_numeric(m, prof, 0.01, DomainOptions(), make_rng(s), Accountant(1), "d")[0].hi for s in range(30)]
    assert min(his) >= 2  # the default: past the ones, a few steps loose
    his = [_numeric(m, prof, 0.01, DomainOptions(bounds_reward=True), make_rng(s), Accountant(1), "d")[0].hi
           for s in range(30)]
    assert min(his) >= 2 and sum(h == 2 for h in his) >= 25  # with the reward: one past them


def test_robust_bounds_leave_entry_errors_out_and_keep_a_real_tail() -> None:
    g = np.random.default_rng(0)
    bp = np.round(g.normal(128, 17, 20000))
    bp[:80] = g.choice([-150, 1400, 11500, 16020], 80)
    lo, hi = robust_bounds(bp)
    assert 0 <= lo <= 80 and 180 <= hi <= 400
    gains = np.where(g.random(20000) < 0.9, 0, np.round(g.lognormal(8, 1, 20000)))
    lo, hi = robust_bounds(gains)
    assert lo == 0 and hi >= np.quantile(gains, 0.995)
    assert robust_bounds(np.array([3.0, 3.0, 3.0])) == (3, 4)


def test_the_draft_writes_robust_rounded_bounds_with_the_exact_extremes_in_a_comment() -> None:
    g = np.random.default_rng(1)
    n = 5000
    bp = np.round(g.normal(128, 17, n)).astype(int)
    bp[:20] = [16020, -150] * 10
    df = pd.DataFrame({"id": np.arange(n).astype(str), "CustomerId": np.arange(n).astype(str),
                       "ap_hi": bp.astype(str), "y": np.where(g.random(n) < 0.5, "a", "b")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = draft_from_data(df, target="y")
        kept = draft_from_data(df, target="y", keep=["CustomerId"])
    ap = d["columns"]["ap_hi"]
    assert ap["integer"] and ap["bounds"][0] >= 0 and ap["bounds"][1] <= 400
    assert "data min -150, max 16020" in ap["_comment"] and "% of values outside" in ap["_comment"]
    assert ap["_comment"].startswith("REVIEW:")
    for c in ("id", "CustomerId"):
        assert d["columns"][c]["type"] == "ignore" and d["columns"][c]["_comment"].startswith("REVIEW:")
        assert "--keep" in d["columns"][c]["_comment"]
    assert kept["columns"]["CustomerId"]["type"] == "numeric" and kept["columns"]["id"]["type"] == "ignore"


def test_learn_schema_names_the_identifiers_it_leaves_out_once() -> None:
    df = _bank(1500)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        learn_schema(df, target="y", epsilon=1.0, delta=1e-6, rng=make_rng(0), accountant=Accountant(1.0, delta=1e-6))
    assert sum("named like an identifier" in str(w.message) for w in got) == 1


def test_grid_holds_only_integers_for_integer_columns() -> None:
    g = nice_grid(True)
    assert all(float(x).is_integer() for x in g) and not math.isnan(g.sum())
    assert list(itertools.islice((x for x in g if 0 < x < 10), 9)) == [float(i) for i in range(1, 10)]
