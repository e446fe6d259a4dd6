"""Missing values are values (issue 36 item 3): ``missing_policy: keep`` — a ``(missing)`` leaf,
a numeric missing bucket, every row released, generalized and scored."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpkit
from dpkit.algorithms.publish.cut import Cut
from dpkit.algorithms.publish.scoring import Marginals, numeric_candidates
from dpkit.data.encode import encode
from dpkit.engine.numpy_frame import NumpyFrame
from dpkit.io.source import ReadOptions
from dpkit.io.table import load
from dpkit.schema.parse import CategoricalColumn, NumericColumn, parse_schema, schema_to_dict

KEEP = """\
target: label
missing: ['?', '']
missing_policy: keep
columns:
  age: {type: numeric, bounds: [0, 100], integer: true}
  color:
    type: categorical
    hierarchy:
      Any:
        Warm: [red, orange]
        Cool: [blue, green]
  label: {type: categorical, values: [a, b]}
"""


def rows(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """age missing ('?') in ~30 % of the rows, color empty in ~10 %; the label depends on both,
    and a missing age says 'b' (so the missing bucket carries signal)."""
    g = np.random.default_rng(seed)
    age = g.integers(5, 95, n)
    color = g.choice(["red", "orange", "blue", "green"], n).astype(object)
    label = np.where((age < 50) == np.isin(color, ["red", "orange"]), "a", "b").astype(object)
    miss_age = g.random(n) < 0.3
    label[miss_age] = "b"
    age_s = age.astype(str).astype(object)
    age_s[miss_age] = "?"
    color[g.random(n) < 0.1] = ""
    return pd.DataFrame({"age": age_s, "color": color, "label": label})


@pytest.fixture(autouse=True)
def _owners_notices(monkeypatch):  # noqa: ANN001, ANN202
    """The owner's form of the load's notices (a terminal, -v): there only when rows were dropped,
    which "no warning" asserts below; without it the short form is there whatever the data holds
    (issue 43, docs/domain.md "What stderr says")."""
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)


def test_keep_adds_a_missing_leaf_but_not_to_the_target_nor_to_the_yaml() -> None:
    s = parse_schema(KEEP)
    color, age, label = s.columns["color"], s.columns["age"], s.columns["label"]
    assert isinstance(color, CategoricalColumn) and color.leaves[-1] == "(missing)" == color.missing_leaf
    assert color.missing_code == 4 and color.root.hi == 5 and color.nodes["Cool"].hi == 4  # other codes unchanged
    assert isinstance(age, NumericColumn) and age.missing
    assert isinstance(label, CategoricalColumn) and label.missing_leaf is None and label.leaves == ("a", "b")
    d = schema_to_dict(s)
    assert d["missing_policy"] == "keep" and "(missing)" not in json.dumps(d)
    # a schema that says nothing about keep is as before: no leaf, no bucket
    drop = parse_schema(KEEP.replace("keep", "drop"))
    assert drop.columns["color"].leaves == ("red", "orange", "blue", "green")
    assert not drop.columns["age"].missing


def test_both_load_paths_keep_every_row(tmp_path: Path) -> None:
    s = parse_schema(KEEP)
    df = rows()
    p = tmp_path / "d.csv"
    df.to_csv(p, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no row dropped: no warning
        fast = load(ReadOptions(str(p)), s, ["age", "color", "label"])
        exact = encode(df, s, ["age", "color", "label"])
    assert fast.n_rows == exact.n_rows == len(df)
    assert np.array_equal(fast.columns["color"], exact.columns["color"])
    assert np.array_equal(fast.columns["age"], exact.columns["age"], equal_nan=True)
    assert np.array_equal(np.isnan(exact.columns["age"]), (df["age"] == "?").to_numpy())
    assert np.array_equal(exact.columns["color"] == 4, (df["color"] == "").to_numpy())
    # the same file under drop loses those rows
    with pytest.warns(dpkit.DpkitWarning, match="dropped"):
        dropped = load(ReadOptions(str(p)), parse_schema(KEEP.replace("keep", "drop")), ["age", "color", "label"])
    assert dropped.n_rows < len(df)


def test_the_missing_bucket_is_set_apart_by_the_first_split() -> None:
    s = parse_schema(KEEP)
    age = Cut.initial(s, "label").attributes["age"]
    vals = np.array([3.0, np.nan, 60.0, 100.0])
    assert age.size == 1 and age.labels() == ["[0,100]"] and age.codes(vals).tolist() == [0, 0, 0, 0]
    assert age.separates_missing()
    age.split(0, [50])
    assert age.size == 3 and age.labels() == ["[0,50)", "[50,100]", "(missing)"]
    assert age.codes(vals).tolist() == [0, 2, 1, 1]
    assert age.key("age").evaluate({"age": vals}).tolist() == [0, 2, 1, 1]  # the engines' key agrees
    age.split(0, [20])
    assert age.labels() == ["[0,20)", "[20,50)", "[50,100]", "(missing)"] and age.codes(vals).tolist() == [0, 3, 2, 2]
    back = Cut.from_json(s, "label", {"age": age.to_json()}).attributes["age"]
    assert age.to_json()[-1] == "(missing)" and back.labels() == age.labels()


def test_a_split_of_the_whole_column_scores_the_missing_values_as_one_piece() -> None:
    s = parse_schema(KEEP)
    df = rows()
    frame = NumpyFrame(encode(df, s, ["age", "color", "label"]))
    cut = Cut.initial(s, "label")
    marg = Marginals(frame, "label", 2, cut)
    cands, scores = numeric_candidates("age", cut.attributes["age"], marg, 4)
    # Max score: Σ over the pieces of the majority count — the missing piece's (all 'b') included
    y = df["label"].to_numpy()
    miss = (df["age"] == "?").to_numpy()
    ages = pd.to_numeric(df["age"], errors="coerce").to_numpy()
    for c, got in zip(cands, scores, strict=True):
        p = c.points[0]
        pieces = [~miss & (ages < p), ~miss & (ages >= p), miss]
        want = sum(max(np.sum(y[m] == "a"), np.sum(y[m] == "b")) for m in pieces)
        assert got == want


def test_publish_keep_releases_every_record_and_generalize_keeps_every_row(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(KEEP)
    df = rows(2000)
    df.to_csv(tmp_path / "d.csv", index=False)
    rel = dpkit.publish(str(tmp_path / "d.csv"), schema=str(tmp_path / "s.yaml"), epsilon=5.0, random_state=1, levels=4,
                        raw=True)
    cut = rel.report["release"]["cut"]
    assert "(missing)" in cut["age"]  # the missing bucket carries the signal: selected
    assert "(missing)" in set(rel.table["age"])
    test = rows(300, seed=7)
    test.index = pd.RangeIndex(1000, 1300)[::-1]  # a shuffled, non-default index
    out = dpkit.generalize(test, rel)
    assert len(out) == len(test) and list(out.index) == list(test.index)
    assert (out["age"] == "(missing)").to_numpy().tolist() == (test["age"] == "?").to_numpy().tolist()
    assert (out["label"] == test["label"]).all()


def test_generalize_never_drops_a_row_of_a_drop_schema(tmp_path: Path) -> None:
    """A release made under missing_policy: drop never saw a missing value: generalize labels it
    '(missing)', every other value as in 0.4."""
    schema = KEEP.replace("keep", "drop")
    (tmp_path / "s.yaml").write_text(schema)
    df = rows(2000)
    df.to_csv(tmp_path / "d.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = dpkit.publish(str(tmp_path / "d.csv"), schema=str(tmp_path / "s.yaml"), epsilon=5.0, random_state=1, levels=4)
    test = rows(300, seed=7)
    out = dpkit.generalize(test, rel)
    assert len(out) == len(test) and list(out.index) == list(test.index)
    miss = ((test["age"] == "?") | (test["color"] == "")).to_numpy()
    assert ((out["age"] == "(missing)").to_numpy() == (test["age"] == "?").to_numpy()).all()
    assert ((out["color"] == "(missing)").to_numpy() == (test["color"] == "").to_numpy()).all()
    # the rows 0.4 kept are mapped as 0.4 mapped them: through the cut
    kept = test[~miss]
    ages = pd.to_numeric(kept["age"]).to_numpy()
    age_cut = Cut.from_json(rel.schema, "label", rel.report["release"]["cut"]).attributes["age"]
    labels = np.asarray(age_cut.labels(), dtype=object)[age_cut.codes(ages)]
    assert (out.loc[kept.index, "age"].to_numpy() == labels).all()


def test_no_schema_publish_keeps_missing_rows_and_every_test_row_is_scored(tmp_path: Path) -> None:
    from dpkit.api.evaluate import evaluate_classifier

    df = rows(3000)
    df.to_csv(tmp_path / "d.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = dpkit.publish(str(tmp_path / "d.csv"), target="label", epsilon=2.0, delta=1e-6, random_state=3,
                            output=str(tmp_path / "r.csv"))
    assert rel.schema.missing_policy == "keep"
    assert "missing_policy: keep" in (tmp_path / "r.schema.yaml").read_text()
    test = rows(500, seed=9)
    gen = dpkit.generalize(test, rel)
    assert len(gen) == len(test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = evaluate_classifier(gen, target="label", train=str(tmp_path / "r.csv"))
    assert int(np.sum(s["confusion_matrix"])) == len(test)


def test_evaluate_keeps_a_keep_schemas_tokens_in_raw_data(tmp_path: Path) -> None:
    from dpkit.api.evaluate import evaluate_classifier

    (tmp_path / "s.yaml").write_text(KEEP)
    train, test = rows(600), rows(200, seed=4)
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    s = evaluate_classifier(str(tmp_path / "test.csv"), target="label", train=str(tmp_path / "train.csv"),
                            schema=str(tmp_path / "s.yaml"))
    assert int(np.sum(s["confusion_matrix"])) == len(test)


def test_spark_batch_encoder_keeps_missing_values_as_encode_does() -> None:
    """The Spark executors' columnar encoder (no Spark needed) gives encode's codes under keep:
    the (missing) leaf, NaN in the bucket, no row dropped."""
    pa = pytest.importorskip("pyarrow")
    from dpkit.data.encoded import leaf_index
    from dpkit.engine.spark import encode as sf

    s = parse_schema(KEEP)
    df = rows(200)
    names = ["age", "color", "label"]
    cols = [s.columns[c] for c in names]
    batch = pa.RecordBatch.from_arrays([pa.array(df[c].tolist(), pa.string()) for c in names], names=names)
    got = sf._fast_batch(batch, s, cols, list(s.missing_tokens),
                         {c.name: leaf_index(c) for c in cols if isinstance(c, CategoricalColumn)})
    assert got is not None
    out, dropped, _ = got
    want = encode(df, s, names)
    assert dropped == 0
    for c, o in zip(names, out, strict=True):
        assert np.array_equal(np.asarray(o, dtype=float), np.asarray(want.columns[c], dtype=float), equal_nan=True), c


def test_forest_keeps_and_cluster_drops_rows_with_a_missing_number_under_keep(tmp_path: Path) -> None:
    """A forest's numeric split has a missing child (dpkit.algorithms.forest.dprf): under keep every row is
    kept, nothing dropped; k-means points have no missing bucket: a keep schema's row with a
    missing number is dropped there (with the warning)."""
    s = parse_schema(KEEP).dropping_missing_numbers()
    assert s.missing_policy == "drop" and not s.columns["age"].missing
    assert s.columns["color"].missing_leaf == "(missing)"
    (tmp_path / "s.yaml").write_text(KEEP)
    rows(600).to_csv(tmp_path / "d.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing dropped
        f = dpkit.forest(str(tmp_path / "d.csv"), schema=str(tmp_path / "s.yaml"), epsilon=1.0, random_state=1, n_estimators=2)
    kept = f.report["release"]["missing_values"]
    assert kept["features"] == {"age": "branch", "color": "(missing)"}
    assert abs(kept["noisy_records"] - 600) < 60
    with pytest.warns(dpkit.DpkitWarning, match="dropped"):
        dpkit.cluster(str(tmp_path / "d.csv"), schema=str(tmp_path / "s.yaml"), epsilon=1.0, random_state=1, n_clusters=2,
                      columns=["age"])


def test_a_date_column_keeps_its_missing_values_in_the_bucket(tmp_path: Path) -> None:
    schema = """\
target: label
missing: '?'
missing_policy: keep
columns:
  signup: {type: date, bounds: [2019-01-01, 2025-01-01]}
  label: {type: categorical, values: [a, b]}
"""
    s = parse_schema(schema)
    assert s.columns["signup"].missing
    df = pd.DataFrame({"signup": ["2020-03-04", "?", "2023-12-31", "?"], "label": ["a", "b", "a", "b"]})
    p = tmp_path / "d.csv"
    df.to_csv(p, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing dropped
        fast = load(ReadOptions(str(p)), s, ["signup", "label"])
        exact = encode(df, s, ["signup", "label"])
    assert fast.n_rows == exact.n_rows == 4
    assert np.isnan(exact.columns["signup"]).tolist() == [False, True, False, True]
    assert np.array_equal(fast.columns["signup"], exact.columns["signup"], equal_nan=True)
    cut = Cut.initial(s, "label").attributes["signup"]
    cut.split(0, [float(np.nanmin(exact.columns["signup"])) + 400])
    assert np.asarray(cut.labels(), dtype=object)[cut.codes(exact.columns["signup"])].tolist()[1] == "(missing)"


def test_taxonomy_validate_says_a_keep_schema_keeps_the_rows(tmp_path: Path) -> None:
    from dpkit.api.taxonomy import validate_schema

    (tmp_path / "s.yaml").write_text(KEEP)
    rows(50).to_csv(tmp_path / "d.csv", index=False)
    got = validate_schema(str(tmp_path / "s.yaml"), str(tmp_path / "d.csv"))
    assert got["rows_with_missing"] and "are kept, as (missing)" in got["message"] and "dropped" not in got["message"]


def test_a_target_other_than_the_schemas_has_no_missing_class(tmp_path: Path) -> None:
    """Under keep the class column gets no (missing) leaf, also when the run names a target other
    than the schema's: its missing rows are dropped, and the schema's own target becomes a
    predictor with a (missing) leaf."""
    s = parse_schema(KEEP.replace("target: label\n", "target: color\n"))
    assert s.columns["color"].missing_leaf is None and s.columns["label"].missing_leaf == "(missing)"
    t = s.for_target("label")
    assert t.columns["label"].leaves == ("a", "b") and t.columns["label"].root.hi == 2
    assert t.columns["color"].missing_leaf == "(missing)"
    (tmp_path / "s.yaml").write_text(KEEP.replace("target: label\n", "target: color\n"))
    rows(500).to_csv(tmp_path / "d.csv", index=False)
    rel = dpkit.publish(str(tmp_path / "d.csv"), schema=str(tmp_path / "s.yaml"), target="label", epsilon=2.0,
                        random_state=1, levels=2)
    assert set(rel.table["label"]) <= {"a", "b"}
