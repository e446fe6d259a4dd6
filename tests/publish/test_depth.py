"""``--levels auto``: the noisy N, the resolution cap, the depth, post-processing, and cells
indexed without numpy's 64-dimension limit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.publish import depth, make_model
from dpkit.algorithms.publish.diffgen import DiffGen
from dpkit.algorithms.publish.maxgddp import MaxGDDP, parse_levels
from dpkit.algorithms.publish.sparse import NoisyTable, postprocess
from dpkit.data.counting import cell_counts
from dpkit.errors import DpkitUsageError
from dpkit.io.table import EncodedTable
from dpkit.privacy import Accountant, make_rng
from dpkit.privacy.mechanisms import discrete_laplace_pmf
from dpkit.schema.parse import parse_schema


def test_noise_sd_matches_the_pmf():
    for eps in (0.05, 0.5, 2.0):
        k = np.arange(-4000, 4001)
        var = float(np.sum(k**2 * discrete_laplace_pmf(k, eps)))
        assert math.isclose(depth.noise_sd(eps), math.sqrt(var), rel_tol=1e-6)


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
@pytest.mark.parametrize("t", [1, 2, 5])
def test_tail_noise_matches_the_pmf(eps, t):
    k = np.arange(t, 5000)
    assert math.isclose(depth.tail_noise(eps, t), float(np.sum(k * discrete_laplace_pmf(k, eps))), rel_tol=1e-9)


def test_auto_levels_from_the_cap():
    assert depth.auto_levels(1.5, 2) == 0  # not even the root cut is resolved
    assert depth.auto_levels(4.0, 2) == 1
    assert depth.auto_levels(2 * 2**12.3, 2) == 13
    assert depth.auto_levels(1e300, 2) == depth.MAX_AUTO_LEVELS
    # the cap grows with N and shrinks with the noise
    assert depth.max_cells(30000, 0.5) > depth.max_cells(3000, 0.5) > depth.max_cells(3000, 0.05)


def test_suppression_threshold_is_the_smallest_that_bounds_the_noise():
    log_m, eps, n = math.log(60000), 0.5, 30000
    t = depth.suppression_threshold(log_m, eps, n)
    assert 60000 * depth.tail_noise(eps, t) <= depth.NOISE_SHARE_KEPT * n
    assert t == 1 or 60000 * depth.tail_noise(eps, t - 1) > depth.NOISE_SHARE_KEPT * n
    assert depth.expected_noise_share(log_m, eps, n, t) < depth.expected_noise_share(log_m, eps, n, 1)
    assert depth.expected_noise_share(1e5, eps, n) == 1.0  # astronomically many cells: all noise, no overflow


def test_parse_levels():
    assert parse_levels("auto") == "auto" and parse_levels(None) == "auto" and parse_levels("13") == 13
    for bad in ("0", "x", 0, -1, True, 1.5):
        with pytest.raises(DpkitUsageError, match="^levels must be") as info:
            parse_levels(bad)
        assert info.value.param == "levels"  # the CLI writes --levels in its place


def test_auto_accounts_for_the_noisy_n_and_respects_the_cap(table):
    acc = Accountant(1.0)
    m = MaxGDDP(epsilon=1.0, grid=4).fit(table, "label", accountant=acc, rng=make_rng(3))
    steps = [s.step for s in acc.spends]
    assert steps[0] == "noisy N" and steps[-1] == "noisy counts"
    assert math.isclose(acc.spends[0].epsilon, depth.N_SHARE * 1.0)
    assert math.isclose(acc.spent, 1.0) and acc.spent <= 1.0 + 1e-9
    plan = m.depth_
    assert plan.n_hat is not None and plan.max_cells is not None
    assert len(m.selections_) <= plan.levels
    assert m.cut_.n_cells() * 3 <= plan.max_cells or not m.selections_
    assert math.isclose(m.epsilon_counts_, acc.spends[-1].epsilon)


def test_auto_with_too_few_records_releases_the_root(table):
    # ε so small that Ñ/σ is below the class count: no selection, everything to the counts
    acc = Accountant(0.01)
    m = MaxGDDP(epsilon=0.01).fit(table, "label", accountant=acc, rng=make_rng(1))
    assert m.depth_.levels == 0 and not m.selections_ and m.cut_.n_cells() == 1
    assert [s.step for s in acc.spends] == ["noisy N", "noisy counts"]
    assert math.isclose(acc.spent, 0.01)


def test_diffgen_auto_accounts_every_draw(table):
    acc = Accountant(1.0)
    d = DiffGen(epsilon=1.0).fit(table, "label", accountant=acc, rng=make_rng(2))
    assert acc.spends[0].step == "noisy N" and acc.spends[-1].step == "noisy counts"
    assert acc.spent <= 1.0 + 1e-9 and len(d.selections_) <= d.depth_.levels
    assert math.isclose(d.epsilon_counts_, acc.spends[-1].epsilon)


def test_fixed_levels_draw_no_noisy_n_and_raw_keeps_every_positive_cell(table):
    assert MaxGDDP(epsilon=1.0, levels=3).fit(table, "label", accountant=Accountant(1.0),
                                              rng=make_rng(4)).postprocess == "raw"  # fixed h: the paper's release
    assert MaxGDDP(epsilon=1.0).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(4)).postprocess == "suppress"
    acc = Accountant(1.0)
    m = make_model("maxgddp", 1.0, {"levels": 3, "raw": True, "selection_share": 0.5, "allocation": "geometric",
                                    "selector": "report-noisy-max", "grid": 4})
    m.fit(table, "label", accountant=acc, rng=make_rng(4))
    assert [s.step for s in acc.spends][0] == "select level 1"
    assert m.depth_.n_hat is None and m.threshold_ == 1
    # raw is the mechanism's output: the same noisy table as a suppressing run of the same seed, before post-processing
    m2 = make_model("maxgddp", 1.0, {"levels": 3, "postprocess": "suppress", "selection_share": 0.5, "allocation": "geometric",
                                     "selector": "report-noisy-max", "grid": 4})
    m2.fit(table, "label", accountant=Accountant(1.0), rng=make_rng(4))
    assert m2.cut_.to_json() == m.cut_.to_json()
    assert m2.release_.counts.size <= m.release_.counts.size


def test_postprocess_suppresses_and_scales(table):
    m = MaxGDDP(epsilon=1.0, levels=2, grid=4, postprocess="raw").fit(table, "label", accountant=Accountant(1.0),
                                                                      rng=make_rng(5))
    raw = m.release_
    out = postprocess(raw, threshold=3, total=500)
    kept = raw.counts >= 3
    assert out.counts.size <= int(kept.sum())
    assert abs(int(out.counts.sum()) - 500) <= out.counts.size  # rounding only
    nothing = postprocess(raw, threshold=10**9, total=None)  # never an empty release
    assert nothing.counts.size >= 1 and nothing.counts.max() == raw.counts.max()
    empty = NoisyTable(raw.cut, raw.class_labels, raw.cells[:0], raw.counts[:0])
    assert postprocess(empty, threshold=2, total=10).counts.size == 0


def test_class_thresholds_keep_a_class_the_threshold_would_erase():
    """A rare class whose true cells (2-5 records) are all under T keeps every positive cell;
    a class mostly above T, a class the noise does not resolve, and T = 1 are left alone."""
    eps, t, log_m = 0.5, 8, math.log(16)
    majority = np.array([120, 90, 60, 30, 9, 1])  # nearly all above T
    rare = np.array([3, 4, 2, 5, 3, 4, 9, 1, 2])  # ~30 records, all under T but a noise cell
    faint = np.array([1, 2])  # below the noise's own spread: not resolved
    assert depth.class_thresholds([majority, rare, faint], log_m, eps, t) == [t, 1, t]
    assert depth.class_thresholds([majority, rare], log_m, eps, 1) == [1, 1]
    # the kept share decides: the same rare class with its records above T keeps T
    assert depth.class_thresholds([np.array([12, 10, 9, 1])], log_m, eps, t) == [t]


def test_postprocess_takes_a_threshold_per_class(table):
    m = MaxGDDP(epsilon=1.0, levels=2, grid=4, postprocess="raw").fit(table, "label", accountant=Accountant(1.0),
                                                                      rng=make_rng(5))
    raw = m.release_
    last = len(raw.class_labels) - 1
    assert (raw.cells[:, -1] == last).any()
    out = postprocess(raw, threshold=[10**9] * last + [1], total=None)  # the last class keeps every cell
    assert set(map(tuple, out.cells)) == set(map(tuple, raw.cells[raw.cells[:, -1] == last]))


def test_the_class_rule_applies_to_the_automatic_depth_only(table):
    """A fixed deep cut keeps its single threshold (measured: the rule hurt it on Adult at ε = 0.1)."""
    m = make_model("maxgddp", 1.0, {"levels": 3, "postprocess": "suppress"})
    m.fit(table, "label", accountant=Accountant(1.0), rng=make_rng(3))
    assert m.kept_classes_ == []


def _reference_cells(codes, shape):
    stacked = np.stack(codes, axis=1)
    return np.unique(stacked, axis=0, return_counts=True)


@pytest.mark.parametrize("d", [3, 70, 300])
def test_cell_counts_any_number_of_dimensions(d):
    rng = np.random.default_rng(d)
    shape = [int(s) for s in rng.integers(1, 40, size=d)]
    codes = [rng.integers(0, s, size=500) for s in shape]
    cells, counts = cell_counts(codes, shape)
    ref_cells, ref_counts = _reference_cells(codes, shape)
    assert np.array_equal(cells, ref_cells) and np.array_equal(counts, ref_counts)


def test_cell_counts_beyond_int64():
    shape = [2**40, 2**40, 3, 1]  # 2^80·3 cells: packed into two keys
    codes = [np.array([5, 5, 2**40 - 1]), np.array([7, 7, 0]), np.array([2, 2, 0]), np.array([0, 0, 0])]
    cells, counts = cell_counts(codes, shape)
    assert cells.tolist() == [[5, 7, 2, 0], [2**40 - 1, 0, 0, 0]] and counts.tolist() == [2, 1]


def _wide(n_pred: int, n: int = 300):
    cols = "\n".join(f"  p{j}: {{type: categorical, hierarchy: {{Any: {{L: [a, b], R: [c, d]}}}}}}"
                     for j in range(n_pred))
    schema = parse_schema(f"target: y\ncolumns:\n{cols}\n  y: {{type: categorical, values: [u, v]}}\n", "wide.yaml")
    rng = np.random.default_rng(0)
    data = {f"p{j}": rng.integers(0, 4, n).astype(np.int32) for j in range(n_pred)}
    data["y"] = (data["p0"] >= 2).astype(np.int32)
    return EncodedTable(schema, data, n)


@pytest.mark.parametrize("n_pred", [63, pytest.param(2000, marks=pytest.mark.slow)])
def test_many_predictors_publish(n_pred):
    t = _wide(n_pred)
    acc = Accountant(1.0)
    m = MaxGDDP(epsilon=1.0).fit(t, "y", accountant=acc, rng=make_rng(0))
    assert m.release_.cells.shape[1] == n_pred + 1 and m.release_.counts.sum() > 0
    assert math.isclose(acc.spent, 1.0)


def test_many_fixed_levels_are_refused_in_one_line_before_the_counts():
    t = _wide(80)
    acc = Accountant(1.0)
    with pytest.raises(DpkitUsageError, match=r"released table would have 10\^.* cells \(limit") as e:
        MaxGDDP(epsilon=1.0, levels=200).fit(t, "y", accountant=acc, rng=make_rng(0))
    assert "\n" not in str(e.value)
    assert "noisy counts" not in [s.step for s in acc.spends]


TINY = """\
target: label
columns:
  age: {type: numeric, bounds: [0, 10], integer: true}
  size: {type: numeric, bounds: [0, 1]}
  band:
    type: numeric
    bounds: [0, 100]
    hierarchy: {"0..100": {"0..50": {"0..20": null, "20..50": null}, "50..100": null}}
  color:
    type: categorical
    hierarchy:
      Any:
        Warm: [red, orange]
        Cool: [blue, green, teal]
  label: {type: categorical, values: [a, b, c]}
"""


@settings(max_examples=25)
@given(n=st.integers(1, 400), eps=st.floats(0.01, 20.0), seed=st.integers(0, 2**31), algorithm=st.sampled_from(
    ["maxgddp", "diffgen"]))
def test_auto_property_spends_epsilon_and_respects_the_cap(n, eps, seed, algorithm):
    schema = parse_schema(TINY, "tiny.yaml")
    rng = np.random.default_rng(seed)
    cols = {"age": rng.integers(0, 11, n).astype(float), "size": rng.random(n), "band": rng.random(n) * 100,
            "color": rng.integers(0, 5, n).astype(np.int32), "label": rng.integers(0, 3, n).astype(np.int32)}
    t = EncodedTable(schema, cols, n)
    acc = Accountant(eps)
    m = (MaxGDDP(epsilon=eps) if algorithm == "maxgddp" else DiffGen(epsilon=eps)).fit(
        t, "label", accountant=acc, rng=make_rng(seed))
    assert acc.spent <= eps * (1 + 1e-9) and math.isclose(acc.spent, eps, rel_tol=1e-9)
    assert acc.spends[0].step == "noisy N"
    assert len(m.selections_) <= m.depth_.levels
    assert not m.selections_ or m.cut_.n_cells() * 3 <= m.depth_.max_cells
    assert 0.0 <= m.noise_share_ <= 1.0 and m.release_.counts.size >= 0


def test_a_rare_class_under_the_threshold_is_released_whole():
    """breast-cancer-wisconsin with 30 of its malignant records: at ε = 1 the threshold (8) is
    above every malignant cell; the report names the class kept whole and its rows are released."""
    import warnings
    from pathlib import Path

    import pandas as pd

    import dpkit

    root = Path(__file__).resolve().parents[2]
    df = pd.read_csv(root / "sample_data/breast-cancer-wisconsin/breast-cancer-wisconsin.csv", dtype=str)
    d = pd.concat([df[df["class"] == "2"], df[df["class"] == "4"].head(30)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # seed 7: a run that shows the case before and after the integer top split (issue 46);
        # whether the threshold lies above every malignant cell depends on the noise
        r = dpkit.publish(d, schema=str(root / "taxonomies/breast-cancer-wisconsin.yaml"), epsilon=1.0, random_state=7)
    assert r.report["release"]["kept_classes"] == ["4"] and r.report["release"]["suppression_threshold"] == 8
    assert (r.table["class"] == "4").sum() > 0
