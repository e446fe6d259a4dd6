"""`dpkit evaluate classify` end to end (in-process through the error boundary)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run

ROOT = Path(__file__).resolve().parents[2]
ADULT_SCHEMA = str(ROOT / "taxonomies" / "adult.yaml")


def invoke(argv: list[str]) -> tuple[int, str, str]:
    runner = CliRunner()
    with runner.isolation() as (out, err, _):
        code = boundary_run(cli, [str(a) for a in argv])
    return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture(scope="module")
def iris(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("iris")
    df = pd.read_csv(ROOT / "sample_data" / "iris" / "iris.csv", dtype=str)
    df.iloc[::2].to_csv(d / "train.csv", index=False)
    df.iloc[1::2].to_csv(d / "test.csv", index=False)
    return d / "train.csv", d / "test.csv"


@pytest.fixture(scope="module")
def adult(tmp_path_factory) -> dict[str, Path]:
    """Small raw Adult splits, and a fake 'release' of them: age generalized to intervals."""
    d = tmp_path_factory.mktemp("adult")
    train = pd.read_csv(ROOT / "sample_data" / "adult" / "train.csv", dtype=str, keep_default_na=False).iloc[:1500]
    test = pd.read_csv(ROOT / "sample_data" / "adult" / "test.csv", dtype=str, keep_default_na=False).iloc[:800]
    train.to_csv(d / "raw_train.csv", index=False)
    test.to_csv(d / "raw_test.csv", index=False)

    def gen(df: pd.DataFrame) -> pd.DataFrame:
        df = df[~(df == "?").any(axis=1)].drop(columns="fnlwgt").copy()
        df["age"] = ["[15,37)" if int(a) < 37 else "[37,95]" for a in df["age"]]
        return df

    rel, tst = gen(train), gen(test)
    rel.to_csv(d / "released.csv", index=False)
    tst.to_csv(d / "test_gen.csv", index=False)
    counts = rel.groupby(list(rel.columns)).size().reset_index(name="count")
    counts.to_csv(d / "counts.csv", index=False)
    return {"raw_train": d / "raw_train.csv", "raw_test": d / "raw_test.csv", "released": d / "released.csv",
            "test_gen": d / "test_gen.csv", "counts": d / "counts.csv", "dir": d}


def test_tree_json_multiclass(iris):
    code, out, err = invoke(["evaluate", "classify", "--train", iris[0], "--test", iris[1], "--target", "species", "--json"])
    assert code == 0, err
    r = json.loads(out)
    assert r["model"] == "tree" and r["average"] == "macro" and r["positive"] is None
    assert r["labels"] == ["setosa", "versicolor", "virginica"]
    assert r["accuracy"] > 0.85
    assert sum(map(sum, r["confusion_matrix"])) == 75
    assert 0 < r["f1"] <= 1


@pytest.mark.parametrize("model", ["svm", "forest"])
def test_other_models(iris, model):
    code, out, err = invoke(["evaluate", "classify", "--train", iris[0], "--test", iris[1], "--target", "species",
                             "--model", model, "--json", "--positive", "virginica"])
    assert code == 0, err
    r = json.loads(out)
    assert r["model"] == model and r["average"] == "binary" and r["positive"] == "virginica"
    assert r["accuracy"] > 0.85


def test_plain_output_is_key_value_lines(iris):
    code, out, err = invoke(["evaluate", "classify", "--train", iris[0], "--test", iris[1], "--target", "species"])
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "model: tree"
    assert any(line.startswith("accuracy: 0.") for line in lines)
    assert "confusion[setosa]: 25 0 0" in lines
    assert all(": " in line for line in lines)
    assert err == ""


def test_released_table_with_schema_intervals_and_baseline(adult):
    code, out, err = invoke([
        "evaluate", "classify", "--train", adult["released"], "--test", adult["test_gen"], "--target", "income",
        "--schema", ADULT_SCHEMA, "--baseline", adult["raw_train"], "--baseline-test", adult["raw_test"], "--json",
    ])
    assert code == 0, err
    r = json.loads(out)
    assert r["positive"] == ">50K"
    assert r["floor_accuracy"] == pytest.approx(0.75, abs=0.05)
    assert r["accuracy"] > r["floor_accuracy"]
    assert r["baseline_accuracy"] > r["floor_accuracy"]
    assert {"baseline_precision", "baseline_recall", "baseline_f1"} <= set(r)
    assert "dropped" in err  # the raw splits' '?' rows, by the schema's policy
    assert "never occur" not in err  # the generalized test matches the released labels


def test_counts_table_equals_released_rows(adult):
    base = ["--test", adult["test_gen"], "--target", "income", "--schema", ADULT_SCHEMA, "--json"]
    code, out_rows, err = invoke(["evaluate", "classify", "--train", adult["released"], *base])
    assert code == 0, err
    code, out_counts, err = invoke(["evaluate", "classify", "--train", adult["counts"], *base])
    assert code == 0, err
    rows, counts = json.loads(out_rows), json.loads(out_counts)
    assert counts["accuracy"] == pytest.approx(rows["accuracy"])
    assert counts["confusion_matrix"] == rows["confusion_matrix"]
    # without the weights the counts table is a different training set
    renamed = adult["dir"] / "counts_n.csv"
    pd.read_csv(adult["counts"], dtype=str).rename(columns={"count": "n"}).to_csv(renamed, index=False)
    code, out_w, err = invoke(["evaluate", "classify", "--train", renamed, *base, "--weight-column", "n"])
    assert code == 0, err
    assert json.loads(out_w)["confusion_matrix"] == rows["confusion_matrix"]


def test_predictions_file(iris, tmp_path):
    test = pd.read_csv(iris[1], dtype=str)
    pred = tmp_path / "p.csv"
    pd.DataFrame({"prediction": test["species"]}).to_csv(pred, index=False)
    code, out, err = invoke(["evaluate", "classify", "--predictions", pred, "--test", iris[1], "--target", "species", "--json"])
    assert code == 0, err
    r = json.loads(out)
    assert r["accuracy"] == 1.0 and r["model"] == "predictions"


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--target", "nope"], 2, "--target 'nope' is not a column"),  # a usage error, as publish's
        (["--target", "species", "--predictions", "x.csv"], 2, "exactly one of --train, --predictions"),
        (["--target", "species", "--baseline-test", "x.csv"], 2, "--baseline-test needs --baseline"),
        (["--target", "species", "--positive", "rose"], 2, "--positive 'rose' is not a class"),
        (["--target", "species", "--model", "knn"], 2, "Invalid value for '--model'"),
    ],
)
def test_errors(iris, extra, code, message):
    c, out, err = invoke(["evaluate", "classify", "--train", iris[0], "--test", iris[1], *extra])
    assert c == code
    assert message in err
    assert out == ""
    assert "Traceback" not in err


def test_dpkit_forest_model(iris, tmp_path):
    pytest.importorskip("dpkit.algorithms.forest.model")
    model = tmp_path / "model.json"
    code, _, err = invoke(["forest", "train", iris[0], "--schema", ROOT / "taxonomies" / "iris.yaml", "--target",
                           "species", "--epsilon", "5", "--seed", "3", "-o", model])
    assert code == 0, err
    code, out, err = invoke(["evaluate", "classify", "--dpkit-model", model, "--test", iris[1], "--target", "species",
                             "--baseline", iris[0], "--baseline-test", iris[1], "--model", "forest", "--json"])
    assert code == 0, err
    r = json.loads(out)
    assert r["model"] == "dpkit-forest"
    assert sum(map(sum, r["confusion_matrix"])) == 75
    assert r["baseline_accuracy"] > 0.85


def test_missing_file_and_dpkit_model(iris, tmp_path):
    c, out, err = invoke(["evaluate", "classify", "--train", tmp_path / "none.csv", "--test", iris[1], "--target", "species"])
    assert c == 1 and "none.csv: file not found" in err
    model = tmp_path / "m.json"
    model.write_text("{}")
    c, out, err = invoke(["evaluate", "classify", "--dpkit-model", model, "--test", iris[1], "--target", "species"])
    try:
        from dpkit.algorithms.forest.model import predict_frame  # noqa: F401
    except ImportError:
        assert c == 2 and "dpkit forest predict" in err
    else:  # the forest module exists: an empty model file is a clear error, not a crash
        assert c in (1, 2) and "internal error" not in err
