"""Public vocabularies (dpkit.domain.vocabulary) and the second round of partition selection
(dpkit.privacy.mechanisms.partition.first_round/second_round; issue 46)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpkit
from dpkit.api.domain import infer_schema, learn_schema, read_strings
from dpkit.domain import vocabulary as vocab_mod
from dpkit.domain.discover import DomainOptions
from dpkit.domain.vocabulary import COVERAGE, Thresholds, decide, load, spellings, thresholds
from dpkit.errors import DataError, DpkitUsageError
from dpkit.privacy import Accountant, exact, make_rng
from dpkit.privacy.mechanisms.partition import sum_tail, sum_threshold, threshold

REPO = Path(__file__).resolve().parents[2]
KEY = "0x5d1c3e7a9b2f40618e3d5c7b9a1f2e4d"


def rare_class(n: int = 3400, positives: int = 160, seed: int = 0) -> pd.DataFrame:
    """The issue's 5k-row table in small: a 0/1 target with ~4.7 % positives (the '1' under the
    target's partition-selection threshold at ε = 1), a few predictors."""
    g = np.random.default_rng(seed)
    y = np.array(["1"] * positives + ["0"] * (n - positives), dtype=object)
    g.shuffle(y)
    return pd.DataFrame({"married": np.where(g.random(n) < 0.6, "Yes", "No"),
                         "work": g.choice(["Private", "Self-employed", "Govt_job"], size=n, p=[.6, .25, .15]),
                         "age": g.integers(1, 82, n).astype(str), "stroke": y})


def test_the_package_vocabularies_are_shipped_in_their_public_spellings() -> None:
    v = load()
    for group in (("yes", "no"), ("Yes", "No"), ("YES", "NO"), ("0", "1"), ("true", "false"), ("Male", "Female")):
        assert group in v.groups
    assert any("February" in g for g in v.groups) and any("Sat" in g for g in v.groups)
    assert spellings(["yes", "no"]) == [("yes", "no"), ("YES", "NO"), ("Yes", "No")]
    assert vocab_mod.DEFAULT_FILE.is_file()


def test_a_user_file_extends_the_vocabularies(tmp_path: Path) -> None:
    f = tmp_path / "v.yaml"
    f.write_text("risk: [low, medium, high]\n")
    v = load(f)
    assert ("low", "medium", "high") in v.groups and ("High", "Medium", "Low")[::-1] in v.groups
    assert ("yes", "no") in v.groups  # the package's stay


@pytest.mark.parametrize("text,match", [("- a\n- b\n", "must map names to lists"),
                                        ("risk: []\n", "non-empty list"),
                                        ("risk: [a, [b]]\n", "non-empty list"),
                                        ("risk: [a\n", "not valid YAML")])
def test_a_bad_vocabulary_file_is_a_usage_error(tmp_path: Path, text: str, match: str) -> None:
    f = tmp_path / "v.yaml"
    f.write_text(text)
    with pytest.raises(DpkitUsageError, match=match):
        load(f)
    with pytest.raises(DpkitUsageError, match="cannot be read"):
        load(tmp_path / "nope.yaml")


def _noisy(v: vocab_mod.Vocabularies, **counts: int) -> dict[str, int]:
    return {x: counts.get(x, 0) for x in v.values}


def test_decide_lists_a_matched_vocabulary_whole_and_only_when_it_covers_the_column() -> None:
    v = load()
    lim = Thresholds(value=500, group=dict.fromkeys(range(1, 13), 200))
    # a 0/1 target: '1' far under every threshold, listed with '0'
    assert set(decide(v, _noisy(v, **{"0": 3000, "1": 40}), lim)) == {"0", "1"}
    # a compass column E/N/S/W (listed by partition selection, 6000 of noisy mass): N does not bring Y
    assert decide(v, _noisy(v, N=1500), lim, listed=6000) == ["N"]
    # ... but a yes/no column with a third value keeps both
    assert set(decide(v, _noisy(v, Yes=2000, No=1500), lim, listed=1000)) == {"Yes", "No"}
    # M/F before T/F (the larger sum first); T is not listed
    assert set(decide(v, _noisy(v, M=2000, F=1900), lim)) == {"M", "F"}
    # nothing held: nothing listed
    assert decide(v, _noisy(v), lim) == []
    # a target: a -1/1 target does not bring a class 0 with its 1 (the vocabulary holds half of it) ...
    lim = Thresholds(value=500, group=dict.fromkeys(range(1, 13), 200), present=30)
    assert decide(v, _noisy(v, **{"1": 1500}), lim, listed=1500, target=True) == ["1"]  # by its own τ
    # ... a 1/2 target whose 1 is 95 % lists 1, not an empty 0 (its own count must clear `present`)
    assert decide(v, _noisy(v, **{"1": 2850, "0": 3}), lim, listed=150, target=True) == ["1"]
    # ... and a 0/1 target keeps its rare class
    assert decide(v, _noisy(v, **{"0": 3000, "1": 40}), lim, target=True) == ["0", "1"]
    # a declared missing token ('no' here) has no vocabulary cell: its vocabulary is not matched
    counts = _noisy(v, yes=3000, no=900)
    del counts["no"]
    assert decide(v, counts, lim) == ["yes"]
    assert COVERAGE == 0.5


def test_the_rare_class_of_a_01_target_is_kept_without_flags() -> None:
    """The issue: "only one class of the target ('0') is held by enough records ... (threshold
    265)". '0' and '1' are a public vocabulary: listed together."""
    df = rare_class(positives=100)  # under the target's partition-selection threshold (≈ 146 here)
    for s in range(5):
        learned = infer_schema(df, target="stroke", epsilon=0.2, delta=1e-6, random_state=1000 + s)
        assert learned.columns["stroke"].leaves == ("0", "1")
        assert learned.columns["married"].leaves[:2] == ("No", "Yes")
    rel = dpkit.publish(df, target="stroke", epsilon=1.0, delta=1e-6, random_state=KEY)
    assert rel.schema.columns["stroke"].leaves == ("0", "1")


def test_a_forest_without_a_schema_keeps_the_rare_class() -> None:
    f = dpkit.forest(rare_class(positives=100), target="stroke", epsilon=1.0, delta=1e-6, random_state=KEY)
    assert [str(c) for c in f.model.classes] == ["0", "1"]


def test_without_vocabularies_the_rare_class_is_refused_as_before() -> None:
    strings, _ = read_strings(rare_class(positives=60))
    with pytest.raises(DataError, match=r"only one class of the target 'stroke' \('0'\)"):
        learn_schema(strings, target="stroke", epsilon=0.2, delta=1e-6, rng=make_rng(3),
                     accountant=Accountant(0.2, delta=1e-6), vocabulary=False)


def test_a_column_holding_no_vocabulary_value_lists_none() -> None:
    g = np.random.default_rng(1)
    n = 4000
    df = pd.DataFrame({"c": g.choice(["p", "q", "r"], size=n), "y": g.choice(["a", "b"], size=n)})
    names = set(load().values)
    for s in range(10):
        learned = infer_schema(df, target="y", epsilon=0.5, delta=1e-6, random_state=2000 + s)
        assert not names & set(learned.columns["c"].leaves)


def test_the_learned_schema_says_which_values_came_from_a_vocabulary() -> None:
    learned = infer_schema(rare_class(), target="stroke", epsilon=0.2, delta=1e-6, random_state=KEY)
    assert "of a public vocabulary" in learned.yaml


@pytest.mark.statistical
def test_an_unheld_vocabulary_is_matched_no_more_often_than_its_bound(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    """Pure-ε thresholds: a pair of cells the data leaves at 0 sums past ``group[2]`` (one cell
    past ``group[1]``) with probability ≤ FALSE_POSITIVE/len(groups) (raised here to make it
    measurable)."""
    monkeypatch.setattr(vocab_mod, "FALSE_POSITIVE", 0.3)
    f = tmp_path / "v.yaml"
    f.write_text("solo: [zzz]\n")
    v = load(f)
    eps = 0.05
    lim = thresholds(v, 10**6, epsilon=eps)
    bound = 0.3 / len(v.groups)
    s, t = exact.noise_fraction(eps)
    n = 200_000
    z = exact.discrete_laplace(make_rng(7), s, t, 2 * n).reshape(n, 2)
    rate_pair = float(np.mean(z.sum(axis=1) >= lim.group[2]))
    rate_one = float(np.mean(z[:, 0] >= lim.group[1]))
    for rate in (rate_pair, rate_one):
        assert rate <= bound + 4.5 * math.sqrt(bound * (1 - bound) / n)
    assert rate_one >= bound / 3  # and not needlessly high: the single cell's bound is tight


def test_sum_tail_bounds_the_exact_tail() -> None:
    for a1, a2 in ((0.3, 0.3), (0.2, 0.5), (0.5, 0.1)):
        q1, q2 = math.exp(-a1), math.exp(-a2)
        zs = np.arange(-400, 401)
        p1 = (1 - q1) / (1 + q1) * q1 ** np.abs(zs)
        p2 = (1 - q2) / (1 + q2) * q2 ** np.abs(zs)
        conv = np.convolve(p1, p2)  # the pmf of Z1 + Z2 on -800..800
        for k in (1, 5, 20, 40, 80):
            exact_tail = conv[800 + k:].sum()
            assert exact_tail <= sum_tail(k, a1, a2)
            if k >= 40:  # where thresholds lie, the bound is close (P(Z1 >= k) is its only slack)
                assert sum_tail(k, a1, a2) <= exact_tail * 1.25


@pytest.mark.statistical
def test_a_singleton_passes_the_sum_threshold_at_most_delta_of_the_time() -> None:
    e1, e2, d = 0.4, 0.6, 0.01
    tau = sum_threshold(e1, e2, d)
    n = 200_000
    rng = make_rng(11)
    z = exact.discrete_laplace(rng, *exact.noise_fraction(e1), n) + exact.discrete_laplace(rng, *exact.noise_fraction(e2), n)
    rate = float(np.mean(2 + z >= tau))
    assert rate <= d + 4.5 * math.sqrt(d * (1 - d) / n)
    assert rate >= d / 4  # the bound is close to the exact tail
    assert tau <= 2 * threshold(max(e1, e2), d)


@settings(max_examples=15, deadline=None)
@given(eps=st.floats(0.05, 2.0), second=st.sampled_from([0.0, 0.3, 0.5]), seed=st.integers(0, 10**6),
       vocabulary=st.booleans())
def test_the_domain_spends_no_more_than_its_budget(eps: float, second: float, seed: int, vocabulary: bool) -> None:
    g = np.random.default_rng(seed)
    n = 600
    df = pd.DataFrame({f"c{j}": g.choice(["Yes", "No", "maybe", f"v{j}"], size=n, p=[.4, .3, .2, .1]) for j in range(4)})
    df["x"] = g.integers(0, 50, n).astype(str)
    df["y"] = g.choice(["0", "1"], size=n, p=[.9, .1])
    strings, _ = read_strings(df)
    acc = Accountant(eps, delta=1e-6)
    try:
        learn_schema(strings, target="y", epsilon=eps, delta=1e-6, rng=make_rng(seed), accountant=acc,
                     options=DomainOptions(empty="ignore", second_round=second),
                     vocabulary=None if vocabulary else False)
    except DataError:
        pass  # refused after its draws: the spend is on the record all the same
    assert acc.spent <= eps * (1 + 1e-9) and acc.delta_spent <= 1e-6 * (1 + 1e-9)


def test_a_second_round_reaches_the_columns_the_first_left_open() -> None:
    """Eight yes/no columns (listed whole in round 1) and one of three values at 20 % each: the
    second round gives the open column the share of all eight, and lists its values."""
    g = np.random.default_rng(4)
    n = 6000
    df = pd.DataFrame({f"b{j}": np.where(g.random(n) < 0.5, "Yes", "No") for j in range(8)})
    df["pay"] = g.choice(["cash", "card", "check", "wire", "bank"], size=n)
    df["y"] = g.choice(["0", "1"], size=n)
    strings, _ = read_strings(df)
    got = {}
    for second in (0.0, 0.5):
        acc = Accountant(0.15, delta=1e-6)
        learned = learn_schema(strings, target="y", epsilon=0.15, delta=1e-6, rng=make_rng(5), accountant=acc,
                               options=DomainOptions(empty="ignore", second_round=second))
        got[second] = learned.schema.columns["pay"]
        assert acc.spent <= 0.15 * (1 + 1e-9)
        assert any("second round" in s.step for s in acc.spends) == (second > 0)
    assert got[0.0].kind == "ignore"  # 1,200 records each: under one round's threshold
    assert set(got[0.5].leaves) >= {"cash", "card", "check", "wire", "bank"}


def _dpkit(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)


def test_publish_takes_a_vocabulary_file_and_refuses_a_bad_one(tmp_path: Path) -> None:
    g = np.random.default_rng(2)
    n = 3000
    df = pd.DataFrame({"a": g.choice(["u", "v"], size=n),
                       "risk": np.where(g.random(n) < 0.04, "high", "low")})
    data = tmp_path / "t.csv"
    df.to_csv(data, index=False)
    voc = tmp_path / "risk.yaml"
    voc.write_text("risk: [low, high]\n")
    res = _dpkit("-q", "publish", str(data), "--target", "risk", "--epsilon", "1", "--delta", "1e-6",
                 "--vocabulary", str(voc), "--seed", KEY, "-o", str(tmp_path / "rel.csv"))
    assert res.returncode == 0, res.stderr
    assert "values: [high, low]" in (tmp_path / "rel.schema.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a\n")
    res = _dpkit("-q", "publish", str(data), "--target", "risk", "--epsilon", "1", "--delta", "1e-6",
                 "--vocabulary", str(bad), "-o", str(tmp_path / "rel2.csv"))
    assert res.returncode == 2 and "vocabulary file" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "rel2.csv").exists()
    res = _dpkit("-q", "publish", str(data), "--schema", str(tmp_path / "rel.schema.yaml"), "--epsilon", "1",
                 "--vocabulary", str(voc), "-o", str(tmp_path / "rel3.csv"))
    assert res.returncode == 2 and "vocabulary applies only without a schema" in res.stderr


def test_taxonomy_infer_takes_a_vocabulary_file(tmp_path: Path) -> None:
    g = np.random.default_rng(3)
    n = 3000
    pd.DataFrame({"a": g.choice(["u", "v"], size=n),
                  "risk": np.where(g.random(n) < 0.04, "high", "low")}).to_csv(tmp_path / "t.csv", index=False)
    voc = tmp_path / "risk.yaml"
    voc.write_text("risk: [low, high]\n")
    res = _dpkit("-q", "taxonomy", "infer", str(tmp_path / "t.csv"), "--target", "risk", "--epsilon", "0.5",
                 "--delta", "1e-6", "--vocabulary", str(voc), "-o", str(tmp_path / "s.yaml"))
    assert res.returncode == 0, res.stderr
    assert "values: [high, low]" in (tmp_path / "s.yaml").read_text()
    res = _dpkit("-q", "taxonomy", "infer", str(tmp_path / "t.csv"), "--vocabulary", str(voc), "-o",
                 str(tmp_path / "d.yaml"))
    assert res.returncode == 2 and "--vocabulary belongs to the private mode" in res.stderr
