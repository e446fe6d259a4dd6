"""A run without a schema gives every numeric column its missing bucket / child, established or
not (issue 36 gap (b); dpkit.domain.metadata.structural_missing).

On a narrow or smallish table the metadata's threshold (≈ 2,900 records with 4 predictors) is far
above a column's 10–20 % of missing values, so the learned schema said ``missing: false`` and a
missing value was read as the column's lowest interval (publish) or lower bound (forest) — mixed
with its lowest values. Now the learned schema says ``missing: structural`` (a public rule, so
marked in the YAML and the report): publish sets the bucket apart at the column's first split
(counted as a quarter cell in the automatic depth's budget), the forest gives it a missing child."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.algorithms.forest.model import missing_rule
from dpkit.domain.metadata import ColumnMeta, structural_missing
from dpkit.errors import SchemaError
from dpkit.schema.parse import parse_schema, schema_to_dict


def narrow(n: int, seed: int = 0) -> pd.DataFrame:
    """4 predictors; ``x`` is '?' in 15 % of the rows, and a missing x means yes (as the lowest
    x's never do): label = yes iff x > 60 or x missing."""
    g = np.random.default_rng(seed)
    x = g.integers(0, 101, n)
    gone = g.random(n) < 0.15
    xs = x.astype(str).astype(object)
    xs[gone] = "?"
    return pd.DataFrame({"x": xs, "y": g.integers(0, 50, n).astype(str),
                         "color": g.choice(["red", "green", "blue"], n),
                         "size": g.choice(["s", "m", "l"], n),
                         "label": np.where((x > 60) | gone, "yes", "no")})


def test_the_rule_flags_only_unestablished_numbers_and_dates() -> None:
    metas = [ColumnMeta("a", "numeric", missing=False), ColumnMeta("b", "numeric", missing=True),
             ColumnMeta("c", "categorical", missing=False), ColumnMeta("d", "date", integer=True, missing=False),
             ColumnMeta("e", "numeric", missing=None), ColumnMeta("f", "ignore")]
    got = {m.name: (m.missing, m.missing_structural) for m in structural_missing(metas)}
    assert got == {"a": (True, True), "b": (True, False), "c": (False, False), "d": (True, True),
                   "e": (None, False), "f": (None, False)}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[dpkit.Forest, Path, pd.DataFrame]:
    d = tmp_path_factory.mktemp("narrow")
    train = d / "train.csv"
    narrow(4000).to_csv(train, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = dpkit.forest(str(train), target="label", epsilon=1.0, delta=1e-6, seed=7, output=str(d / "f.json"))
    return f, d, narrow(2000, seed=1)


def test_a_forest_gives_a_missing_child_to_a_column_below_the_threshold(trained) -> None:
    """x's 600 '?' sit far below the metadata threshold: not established (no token learned), yet
    the forest's rule for x is a missing child (before: 'low', its lower bound)."""
    f, d, _ = trained
    text = (d / "f.schema.yaml").read_text()
    assert "'?'" not in text.split("columns:")[0]  # '?' not learned as a token
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("x:"))
    assert "missing: structural" in line
    assert "STRUCTURAL (a public rule, not learned)" in text
    assert f.report["release"]["missing_values"]["features"]["x"] == "branch"
    meta = f.report["parameters"]["metadata"]["columns"]["x"]
    assert meta["structural"] == ["missing"] and "missing tokens" in meta["learned"]
    model = json.loads((d / "f.json").read_text())
    assert next(ft for ft in model["features"] if ft["name"] == "x")["missing"] == "branch"


@pytest.mark.statistical
def test_the_missing_rows_reach_their_own_child(trained) -> None:
    """A missing x means yes; x's lowest values mean no. Read as the lower bound (before), the
    '?' rows were predicted with the low x's: 'no' for most of them (seed 7: none of them yes, accuracy 0.83);
    with the missing child, yes (tolerance: ≥ 0.8 of them at ε = 1, seed 7)."""
    f, _, test = trained
    gone = (test["x"] == "?").to_numpy()
    got = np.asarray(f.predict(test.drop(columns="label")))
    assert (got[gone] == "yes").mean() >= 0.8
    assert (got == test["label"].to_numpy()).mean() >= 0.85


def test_the_learned_schema_given_back_trains_the_same_rule(trained) -> None:
    _, d, _ = trained
    s = parse_schema((d / "f.schema.yaml").read_text(), "f.schema.yaml")
    x = s.columns["x"]
    assert x.holds_missing is True and x.structural and missing_rule(x) == "branch"
    assert schema_to_dict(s)["columns"]["x"]["missing"] == "structural"  # written back as read


def test_publish_keeps_the_learned_flag_and_a_structural_schema_sets_the_rows_apart(tmp_path: Path) -> None:
    """publish without a schema keeps the learned flag (x ``missing: false``: an empty structural
    bucket is a cell of the release where nothing is missing — docs/domain-reference.md, "Missing values").
    The same schema with x ``missing: structural`` (a reviewed schema may say it) sets the '?' rows
    apart once x is split: the bucket ``(missing)`` in the release and the generalized test split,
    not the lowest interval."""
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    narrow(4000).to_csv(train, index=False)
    narrow(1000, seed=1).to_csv(test, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpkit.publish(str(train), target="label", epsilon=1.0, delta=1e-6, seed=7, output=str(tmp_path / "l.csv"))
    text = (tmp_path / "l.schema.yaml").read_text()
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("x:"))
    assert "missing: false" in line and "STRUCTURAL" not in text
    (tmp_path / "s.yaml").write_text(text.replace(line, line.replace("missing: false", "missing: structural")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = dpkit.publish(str(train), schema=str(tmp_path / "s.yaml"), target="label", epsilon=1.0, seed=7,
                            output=str(tmp_path / "r.csv"))
        dpkit.generalize(str(test), rel, output=str(tmp_path / "g.csv"))
    cut = rel.report["release"]["cut"]["x"]
    assert cut[-1] == "(missing)" and len(cut) >= 3  # x split, its bucket apart
    g = pd.read_csv(tmp_path / "g.csv", dtype=str, keep_default_na=False)
    src = pd.read_csv(test, dtype=str, keep_default_na=False)
    gone = (src["x"] == "?").to_numpy()
    assert (g["x"][gone] == "(missing)").all() and not (g["x"][~gone] == "(missing)").any()
    released = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False)
    assert (released["x"] == "(missing)").any()


SCHEMA = """\
target: label
missing: '?'
missing_policy: keep
columns:
  x: {type: numeric, bounds: [0, 100], integer: true, missing: FLAG}
  label: {type: categorical, values: ['no', 'yes']}
"""


def test_missing_structural_is_parsed_written_and_keyed() -> None:
    s = parse_schema(SCHEMA.replace("FLAG", "structural"))
    x = s.columns["x"]
    assert x.holds_missing is True and x.structural and "structural=True" in repr(x)
    assert schema_to_dict(s)["columns"]["x"]["missing"] == "structural"
    learned = parse_schema(SCHEMA.replace("FLAG", "true")).columns["x"]
    assert not learned.structural and "structural" not in repr(learned)
    with pytest.raises(SchemaError, match="must be true or false"):  # a category's missing value is a leaf
        parse_schema(SCHEMA.replace("x: {type: numeric, bounds: [0, 100], integer: true, missing: FLAG}",
                                    "x: {type: categorical, values: [a, b], missing: structural}"))


def test_the_cell_budget_counts_a_structural_bucket_as_a_quarter_cell() -> None:
    """x split once: [0,50) [50,100] and its bucket. A learned bucket makes 3 × 2 classes = 6
    cells, and a second split 8; a structural one 2.25 × 2 = 4.5, and a second split 6.5."""
    from dpkit.algorithms.publish.cut import Cut
    from dpkit.algorithms.publish.maxgddp import STRUCTURAL_BUCKET, fitting
    from dpkit.algorithms.publish.scoring import Candidate

    assert STRUCTURAL_BUCKET == 0.25
    for flag, fits in (("true", False), ("structural", True)):
        s = parse_schema(SCHEMA.replace("FLAG", flag))
        cut = Cut.initial(s, "label")
        cut.attributes["x"].split(0, [50.0])
        assert cut.shape() == [3]
        cand = Candidate("x", interval=0, points=(25.0,))
        kept, _ = fitting(cut, [cand], np.zeros(1), 2, max_cells=7.0)
        assert (kept == [cand]) is fits
