"""`dpkit forest train|predict` end to end (in-process, through the error boundary)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
ADULT_TEST = ROOT / "sample_data" / "adult" / "test.csv"
SCHEMA = str(ROOT / "taxonomies" / "adult.yaml")
IRIS = str(ROOT / "sample_data" / "iris" / "iris.csv")
IRIS_SCHEMA = str(ROOT / "taxonomies" / "iris.yaml")


def dpkit(capsys, *args) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _head(src: Path, dest: Path, n: int) -> Path:
    lines = src.read_text(encoding="utf-8").splitlines()[: n + 1]
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("forest")
    return {"train": _head(ADULT, d / "train.csv", 3000), "test": _head(ADULT_TEST, d / "test.csv", 400), "dir": d}


@pytest.fixture(scope="module")
def trained(files) -> dict[str, Path]:
    out = files["dir"] / "model.json"
    code = run(cli, ["forest", "train", str(files["train"]), "--schema", SCHEMA, "--target", "income",
                     "--epsilon", "1", "--trees", "5", "--depth", "4", "--seed", "7", "-o", str(out)])
    assert code == 0
    return {"model": out, "report": files["dir"] / "model.report.json"}


def test_train_writes_model_and_report(trained) -> None:
    model = json.loads(trained["model"].read_text())
    assert model["format"] == "dpkit-forest" and len(model["trees"]) == 5
    report = json.loads(trained["report"].read_text())
    priv = report["privacy"]
    assert math.fsum(s["epsilon"] for s in report["spends"]) == pytest.approx(priv["epsilon_spent"])
    assert priv["epsilon_spent"] <= priv["epsilon_budget"] * (1 + 1e-9)
    assert priv["seeded"] is True
    assert report["parameters"]["trees"] == 5 and report["parameters"]["sampling"] == "disjoint"
    by_tree = report["spends_by_tree"]
    assert [t["tree"] for t in by_tree] == [1, 2, 3, 4, 5]
    # the default (balanced) utility's class weights: 5 % of ε on noisy class counts, the trees the rest
    assert report["parameters"]["utility"] == "balanced"
    assert [s["epsilon"] for s in report["spends"] if s["step"] == "noisy class counts"] == [pytest.approx(0.05)]
    assert len(report["release"]["shape"]["class_weights"]) == 2
    for t in by_tree:
        assert math.fsum(s["epsilon"] for s in t["spends"]) == pytest.approx(0.95)
        assert all(s["step"].startswith(f"tree {t['tree']} level") for s in t["spends"])
    # nothing exact leaks into the report: no row counts of the data
    assert "n_rows" not in json.dumps(report) and "3000" not in json.dumps(report["release"])


def test_predict(trained, files, tmp_path, capsys) -> None:
    out = tmp_path / "pred.csv"
    code, _, err = dpkit(capsys, "forest", "predict", trained["model"], files["test"], "-o", out, "--proba")
    assert code == 0, err
    pred = pd.read_csv(out)
    assert list(pred.columns) == ["income", "p_<=50K", "p_>50K"]
    assert len(pred) == 400  # every input row, '?' rows included
    assert ((pred["p_<=50K"] + pred["p_>50K"]) - 1).abs().max() < 1e-5
    test = pd.read_csv(files["test"])
    assert (pred["income"] == test["income"]).mean() > 0.7
    # to stdout
    code, out_text, _ = dpkit(capsys, "forest", "predict", trained["model"], files["test"], "-o", "-")
    assert code == 0 and out_text.splitlines()[0] == "income" and len(out_text.splitlines()) == 401


def test_predict_other_version_and_truncated(trained, files, tmp_path, capsys) -> None:
    data = json.loads(trained["model"].read_text())
    data["format_version"] = 2
    other = tmp_path / "v2.json"
    other.write_text(json.dumps(data))
    code, _, err = dpkit(capsys, "forest", "predict", other, files["test"], "-o", tmp_path / "p.csv")
    assert code == 1 and "format version 2" in err and "Traceback" not in err
    text = trained["model"].read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) * 2 // 3])
    code, _, err = dpkit(capsys, "forest", "predict", cut, files["test"], "-o", tmp_path / "p.csv")
    assert code == 1 and "truncated" in err and "Traceback" not in err
    assert not (tmp_path / "p.csv").exists()


def test_predict_bad_data(trained, files, tmp_path, capsys) -> None:
    df = pd.read_csv(files["test"], dtype=str, keep_default_na=False)
    df.drop(columns=["education"]).to_csv(tmp_path / "nocol.csv", index=False)
    code, _, err = dpkit(capsys, "forest", "predict", trained["model"], tmp_path / "nocol.csv", "-o", tmp_path / "p.csv")
    assert code == 1 and "'education'" in err and "not in the header" in err
    df.loc[3, "workclass"] = "Astronaut"
    df.to_csv(tmp_path / "unseen.csv", index=False)
    code, _, err = dpkit(capsys, "forest", "predict", trained["model"], tmp_path / "unseen.csv", "-o", tmp_path / "p.csv")
    # an unknown category is missing, never a refusal (issue 43): every row scored, one warning;
    # a log names neither the line nor the value (issue 38); -v (the owner) names both
    assert code == 0 and "unseen.csv: every row scored; values not in the schema were read as missing in 'workclass'" in err
    assert "line 5" not in err and "Astronaut" not in err
    assert len((tmp_path / "p.csv").read_text().splitlines()) == len(df) + 1
    code, _, err = dpkit(capsys, "forest", "predict", trained["model"], tmp_path / "unseen.csv", "-o", tmp_path / "p.csv",
                         "-v")
    assert code == 0 and "the first on line 5" in err and "'Astronaut'" in err and "Traceback" not in err


def test_predict_no_header_row_numbers_lines_from_one(trained, files, tmp_path, capsys) -> None:
    """With -H the first data row is line 1 (it was reported as line 2)."""
    df = pd.read_csv(files["test"], dtype=str, keep_default_na=False)
    df.loc[3, "workclass"] = "Astronaut"
    df.to_csv(tmp_path / "nohead.csv", index=False, header=False)
    names = ",".join(df.columns)
    code, _, err = dpkit(capsys, "forest", "predict", trained["model"], tmp_path / "nohead.csv", "-H",
                         "--column-names", names, "-o", tmp_path / "p.csv", "-v")
    assert code == 0 and "'Astronaut'; the first on line 4)" in err
    assert len((tmp_path / "p.csv").read_text().splitlines()) == len(df) + 1


def test_model_keeps_every_missing_token(files, tmp_path, capsys) -> None:
    """A schema with several missing tokens: the model lists them all, and predict treats each
    as missing (it used to keep only the first, so 'n/a' was an unknown category)."""
    schema = Path(SCHEMA).read_text(encoding="utf-8").replace('missing: "?"', "missing: ['?', 'n/a']")
    assert "missing: ['?', 'n/a']" in schema
    (tmp_path / "s.yaml").write_text(schema, encoding="utf-8")
    model = tmp_path / "m.json"
    code, _, err = dpkit(capsys, "forest", "train", files["train"], "--schema", tmp_path / "s.yaml", "--target",
                         "income", "--epsilon", "1", "--trees", "3", "--depth", "3", "--seed", "1", "-o", model)
    assert code == 0, err
    assert json.loads(model.read_text())["missing"] == ["?", "n/a"]
    df = pd.read_csv(files["test"], dtype=str, keep_default_na=False)
    df.loc[0, "workclass"] = "n/a"
    df.to_csv(tmp_path / "t.csv", index=False)
    code, _, err = dpkit(capsys, "forest", "predict", model, tmp_path / "t.csv", "-o", tmp_path / "p.csv")
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "p.csv")) == len(df)


def test_train_usage_errors(files, tmp_path, capsys) -> None:
    base = ["forest", "train", files["train"], "--schema", SCHEMA, "-o", tmp_path / "m.json"]
    code, _, err = dpkit(capsys, *base, "--epsilon", "-1")
    assert code == 2 and "epsilon" in err
    code, _, err = dpkit(capsys, *base, "--epsilon", "1", "--target", "age")
    assert code == 2 and "categorical" in err
    code, _, err = dpkit(capsys, *base, "--epsilon", "1", "--features-per-node", "many")
    assert code == 2 and "features per node" in err
    code, _, err = dpkit(capsys, *base, "--epsilon", "1", "--sampling", "bootstrap")
    assert code == 2
    assert not (tmp_path / "m.json").exists()


def test_train_refuses_a_one_class_target(tmp_path, capsys) -> None:
    """A schema that lists one class: refused before anything is spent (exit 2, no model), rather
    than a model file that `forest predict` then cannot load."""
    data, schema = tmp_path / "d.csv", tmp_path / "s.yaml"
    data.write_text("y,x\nno,1\nno,2\nno,3\n")
    schema.write_text("target: y\ncolumns:\n  y: {type: categorical, values: ['no']}\n"
                      "  x: {type: numeric, bounds: [0, 10]}\n")
    code, _, err = dpkit(capsys, "forest", "train", data, "--schema", schema, "--epsilon", "1", "-q", "--seed",
                         "0x6b1f3c9d2e8a4f7051c6d9e2a3b4c5d6", "-o", tmp_path / "m.json")
    assert code == 2 and "one class" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "m.report.json").exists()


def test_config_and_none_sampling(tmp_path, capsys) -> None:
    cfg = tmp_path / "forest.yaml"
    cfg.write_text("forest:\n  trees: 3\n  depth: 2\n  sampling: none\n  utility: gini\n")
    out = tmp_path / "iris.json"
    code, _, err = dpkit(capsys, "forest", "train", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "2",
                         "--config", cfg, "--depth", "3", "--seed", "1", "-o", out)
    assert code == 0, err
    report = json.loads((tmp_path / "iris.report.json").read_text())
    assert report["parameters"]["trees"] == 3 and report["parameters"]["depth"] == 3  # flag wins
    assert report["parameters"]["sampling"] == "none"
    assert all(s["step"].startswith("tree ") for s in report["spends"])  # by tree, top level
    assert math.fsum(s["epsilon"] for s in report["spends"]) == pytest.approx(2.0)


def test_shipped_config_is_valid(tmp_path, capsys) -> None:
    out = tmp_path / "iris.json"
    code, _, err = dpkit(capsys, "forest", "train", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "1",
                         "--config", ROOT / "configs" / "forest.yaml", "--trees", "2", "-o", out)
    assert code == 0, err


def test_help_has_examples(capsys) -> None:
    for args in (["forest"], ["forest", "train"], ["forest", "predict"]):
        code, out, _ = dpkit(capsys, *args, "--help")
        assert code == 0 and "Example:" in out
