"""Tables as they come (issue 43): every row back from generalize, forest predict and evaluate;
drafts that keep rows; a stray value never refuses a private run.

Each test reproduces a measured failure on a small table built here: a reviewed draft whose
`?` generalized to `(missing)`, a value the release never holds; one unknown category or three
`NA` cells refusing a whole test file; one `oops` in a numeric column refusing (exit 70) a
publish with a learned schema; a draft whose `missing_policy: drop` emptied a release.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_publish import invoke  # tests/cli is on sys.path

import dpkit
from dpkit.algorithms.publish.cut import Cut
from dpkit.errors import DpkitWarning
from dpkit.schema.parse import load_schema


def table(n: int, seed: int, *, share: float = 0.3) -> pd.DataFrame:
    """An Adult-like table: `?` in ``share`` of workclass, the class decided by age."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    work = np.where(rng.random(n) < share, "?", rng.choice(["Private", "Gov", "Self"], n))
    return pd.DataFrame({"age": age.astype(str), "workclass": work, "edu": rng.choice(["HS", "BSc", "MSc"], n),
                         "label": np.where((age > 40) ^ (rng.random(n) < 0.05), "yes", "no")})


def held(report: dict, schema_path: str) -> dict[str, set[str]]:
    """Per predictor, the labels of the released cut: the values the release holds."""
    schema = load_schema(schema_path, allow_draft=True)
    cut = Cut.from_json(schema, report["release"]["target"], report["release"]["cut"])
    return {c: set(v) for c, v in cut.labels().items()}


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def reviewed_draft(tmp_path: Path, train: Path) -> Path:
    code, _, err = invoke(["taxonomy", "infer", str(train), "--target", "label", "-o", str(tmp_path / "draft.yaml")])
    assert code == 0, err
    text = (tmp_path / "draft.yaml").read_text()
    assert "missing_policy: keep" in text  # drafts keep rows
    rev = tmp_path / "rev.yaml"
    rev.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith("draft:")))
    return rev


@pytest.fixture(scope="module")
def split(tmp_path_factory) -> dict[str, Path]:  # noqa: ANN001
    d = tmp_path_factory.mktemp("split")
    table(4000, 0).to_csv(d / "train.csv", index=False)
    table(1000, 1).to_csv(d / "test.csv", index=False)
    return {"dir": d, "train": d / "train.csv", "test": d / "test.csv"}


def test_reviewed_draft_generalizes_to_values_the_release_holds(split, tmp_path) -> None:
    rev = reviewed_draft(tmp_path, split["train"])
    out = tmp_path / "rel.csv"
    code, _, err = invoke(["publish", str(split["train"]), "--schema", str(rev), "--epsilon", "1", "--seed", "3",
                           "-o", str(out), "-v"])
    assert code == 0 and "dropped" not in err, err  # the owner's form: a notice only for rows dropped
    code, _, err = invoke(["generalize", str(split["test"]), "--cut", str(tmp_path / "rel.report.json"),
                           "-o", str(tmp_path / "gen.csv")])
    assert code == 0, err
    gen, test = read(tmp_path / "gen.csv"), read(split["test"])
    assert len(gen) == len(test) and list(gen["label"]) == list(test["label"])
    labels = held(json.loads((tmp_path / "rel.report.json").read_text()), str(rev))
    for c, values in labels.items():
        assert set(gen[c]) <= values, (c, set(gen[c]) - values)


def _drop_release(split: dict[str, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A release under the old draft's missing_policy: drop, and its schema."""
    schema = tmp_path / "drop.yaml"
    schema.write_text("target: label\nmissing: '?'\nmissing_policy: drop\ncolumns:\n"
                      "  age: {type: numeric, bounds: [10, 90], integer: true}\n"
                      "  workclass: {type: categorical, values: [Gov, Private, Self]}\n"
                      "  edu: {type: categorical, values: [BSc, HS, MSc]}\n"
                      "  label: {type: categorical, values: ['no', 'yes']}\n")
    code, _, err = invoke(["publish", str(split["train"]), "--schema", str(schema), "--epsilon", "1", "--seed", "3",
                           "-o", str(tmp_path / "rel.csv")])
    assert code == 0, err
    return tmp_path / "rel.report.json", schema


def test_a_cut_at_its_root_holds_every_value_missing_included(split, tmp_path) -> None:
    report_path, schema = _drop_release(split, tmp_path)
    report = json.loads(report_path.read_text())
    report["release"]["cut"]["workclass"] = ["Any"]  # the release generalized the column to its root
    report["release"]["cut"]["age"] = [[10, 90]]
    rooted = tmp_path / "root.report.json"
    rooted.write_text(json.dumps(report))
    test = read(split["test"])
    test.loc[5, "age"] = "NA"  # not a number: missing, then the whole interval
    test.loc[6, "workclass"] = "Other"  # not listed: missing, then the root
    test.to_csv(tmp_path / "t.csv", index=False)
    code, _, err = invoke(["generalize", str(tmp_path / "t.csv"), "--cut", str(rooted), "-o", str(tmp_path / "g.csv")])
    assert code == 0, err
    gen = read(tmp_path / "g.csv")
    assert len(gen) == len(test) and set(gen["workclass"]) == {"Any"} and set(gen["age"]) == {"[10,90]"}
    assert "written '(missing)'" not in err  # nothing written that the release does not hold
    # the library, on a DataFrame with a shuffled index: every row, in order, with its index
    shuffled = test.sample(frac=1, random_state=4)
    with pytest.warns(DpkitWarning, match="values not in the schema were read as missing in 'age', 'workclass'"):
        got = dpkit.generalize(shuffled, report, schema=str(schema))
    assert got.index.equals(shuffled.index) and set(got["workclass"]) == {"Any"}


def test_below_the_root_a_drop_release_says_what_it_does_not_hold(split, tmp_path) -> None:
    report_path, schema = _drop_release(split, tmp_path)
    cut = json.loads(report_path.read_text())["release"]["cut"]
    assert cut["workclass"] != ["Any"], "the release was expected to split workclass"
    code, _, err = invoke(["generalize", str(split["test"]), "--cut", str(report_path), "-o", str(tmp_path / "g.csv")])
    assert code == 0, err
    # one warning beside the load's notices (those a log gets whatever the data: ", if any");
    # the quiet form names the column, not the count
    assert len([ln for ln in err.splitlines() if "dpkit: warning:" in ln and ", if any" not in ln]) == 1, err
    assert "missing values of 'workclass' were written '(missing)'" in err and "does not hold" in err
    assert "'workclass': more than 20% of the rows" in err and "%" not in err.split("more than 20%")[0]
    code, _, err = invoke(["generalize", str(split["test"]), "--cut", str(report_path), "-o", str(tmp_path / "g.csv"),
                           "-v"])
    n_q = int((read(split["test"])["workclass"] == "?").sum())
    assert code == 0 and f"'workclass': {n_q:,} written '(missing)'" in err, err


@pytest.mark.parametrize("change", ["category", "numbers"])
def test_one_stray_value_never_refuses_a_test_file(split, tmp_path, change) -> None:
    rev = reviewed_draft(tmp_path, split["train"])
    code, _, err = invoke(["publish", str(split["train"]), "--schema", str(rev), "--epsilon", "1", "--seed", "3",
                           "-o", str(tmp_path / "rel.csv")])
    assert code == 0, err
    test = table(1704, 5)
    if change == "category":
        test.loc[17, "workclass"] = "Other"  # 1 row of 1,704
        column, shown = "workclass", "'Other'; the first on line 19"
    else:
        test.loc[[3, 40, 41], "age"] = "NA"  # 3 NA cells in a numeric column
        column, shown = "age", "'NA'; the first on line 5"
    test.to_csv(tmp_path / "t.csv", index=False)
    report = tmp_path / "rel.report.json"
    code, _, err = invoke(["generalize", str(tmp_path / "t.csv"), "--cut", str(report), "-o", str(tmp_path / "g.csv")])
    assert code == 0, err
    assert f"values not in the schema were read as missing in '{column}'" in err and "Other" not in err
    gen = read(tmp_path / "g.csv")
    assert len(gen) == 1704
    for c, values in held(json.loads(report.read_text()), str(rev)).items():
        assert set(gen[c]) <= values, (c, set(gen[c]) - values)  # a keep release holds (missing)
    code, _, err = invoke(["generalize", str(tmp_path / "t.csv"), "--cut", str(report), "-o", str(tmp_path / "g.csv"),
                           "-v"])
    assert code == 0 and shown in err, err


def test_forest_predict_and_evaluate_score_every_row(split, tmp_path) -> None:
    rev = reviewed_draft(tmp_path, split["train"])
    model = tmp_path / "m.json"
    code, _, err = invoke(["forest", "train", str(split["train"]), "--schema", str(rev), "--epsilon", "1",
                           "--seed", "2", "--trees", "5", "--depth", "3", "-o", str(model)])
    assert code == 0, err
    test = table(300, 6)
    test.loc[2, "workclass"] = "Other"
    test.loc[[7, 8, 9], "age"] = "NA"
    test.to_csv(tmp_path / "t.csv", index=False)
    code, _, err = invoke(["forest", "predict", str(model), str(tmp_path / "t.csv"), "-o", str(tmp_path / "p.csv")])
    assert code == 0 and "every row scored" in err, err
    assert len(read(tmp_path / "p.csv")) == 300
    code, out, err = invoke(["evaluate", "classify", "--test", str(tmp_path / "t.csv"), "--target", "label",
                             "--dpkit-model", str(model)])
    assert code == 0 and "every row scored" in err, err
    forest = dpkit.load_forest(model)
    shuffled = test.sample(frac=1, random_state=1)
    with pytest.warns(DpkitWarning, match="every row scored"):
        pred = forest.predict(shuffled)
    assert pred.index.equals(shuffled.index) and len(pred) == 300


LEARN = 3000


@pytest.fixture(scope="module")
def learned(tmp_path_factory) -> dict[str, Path]:  # noqa: ANN001
    """A schema learned (under DP) without the record, and the table plus one `amount=oops`."""
    d = tmp_path_factory.mktemp("learned")
    rng = np.random.default_rng(1)
    amount = rng.integers(0, 1000, LEARN)
    df = pd.DataFrame({"amount": amount.astype(str), "color": rng.choice(["red", "blue"], LEARN),
                       "label": np.where(amount > 500, "yes", "no")})
    df.to_csv(d / "c.csv", index=False)
    code, _, err = invoke(["taxonomy", "infer", str(d / "c.csv"), "--target", "label", "--epsilon", "1",
                           "--delta", "1e-6", "--seed", "1", "-o", str(d / "learned.yaml")])
    assert code == 0, err
    assert "unparsable: missing" in (d / "learned.yaml").read_text()
    pd.concat([df, pd.DataFrame({"amount": ["oops"], "color": ["red"], "label": ["yes"]})]).to_csv(
        d / "stray.csv", index=False)
    return {"dir": d, "schema": d / "learned.yaml", "data": d / "stray.csv"}


@pytest.mark.parametrize("policy", ["keep", "drop", "error"])
def test_a_stray_value_never_refuses_a_private_run(learned, tmp_path, policy) -> None:
    schema = tmp_path / "s.yaml"
    text = learned["schema"].read_text()
    schema.write_text(text.replace("missing_policy: keep", f"missing_policy: {policy}"))
    code, _, err = invoke(["publish", str(learned["data"]), "--schema", str(schema), "--epsilon", "1", "--seed", "1",
                           "-o", str(tmp_path / "rel.csv")])
    assert code == 0 and "internal error" not in err, err
    assert "oops" not in err
    # keep: the missing bucket; drop and error: the row dropped (the owner's notice), never refused
    code, _, owner = invoke(["publish", str(learned["data"]), "--schema", str(schema), "--epsilon", "1", "--seed", "1",
                             "-o", str(tmp_path / "rel.csv"), "-v"])
    assert code == 0 and ("dropped 1 row" in owner) == (policy != "keep"), owner
    df = read(learned["data"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = dpkit.publish(df, schema=str(schema), epsilon=1, random_state=1)
    assert release.report["release"]["released_records"] > 0
    for cmd in (["forest", "train", "--trees", "3", "--depth", "2", "-o", str(tmp_path / "m.json")],
                ["cluster", "-k", "2", "--columns", "amount", "-o", str(tmp_path / "k.csv")]):
        code, _, err = invoke([cmd[0], *cmd[1:2], str(learned["data"]), "--schema", str(schema), "--epsilon", "1",
                               "--seed", "1", *cmd[2:]] if cmd[0] == "forest" else
                              [cmd[0], str(learned["data"]), "--schema", str(schema), "--epsilon", "1", "--seed", "1",
                               *cmd[1:]])
        assert code == 0 and "internal error" not in err, (cmd, err)


def test_a_missing_token_under_error_still_refuses(learned, tmp_path) -> None:
    """The owner's declared contract: missing_policy: error refuses a declared token (docs/formats.md)."""
    schema = tmp_path / "s.yaml"
    text = learned["schema"].read_text().replace("missing_policy: keep", "missing: '?'\nmissing_policy: error")
    schema.write_text(text)
    data = tmp_path / "q.csv"
    data.write_text(learned["data"].read_text().replace("oops,", "?,"))
    code, _, err = invoke(["publish", str(data), "--schema", str(schema), "--epsilon", "1", "-o", str(tmp_path / "r.csv")])
    assert code == 1 and "has a missing value" in err, err


NULLS = 3000


@pytest.fixture(scope="module")
def nulls(tmp_path_factory) -> Path:  # noqa: ANN001
    """One column 94 % NULL."""
    d = tmp_path_factory.mktemp("nulls")
    rng = np.random.default_rng(2)
    a = rng.integers(0, 100, NULLS)
    b = np.where(rng.random(NULLS) < 0.94, "NULL", rng.integers(0, 5, NULLS).astype(str))
    pd.DataFrame({"a": a, "b": b, "c": rng.choice(["x", "y"], NULLS),
                  "label": np.where(a > 50, "yes", "no")}).to_csv(d / "n.csv", index=False)
    return d / "n.csv"


def test_a_draft_keeps_the_rows_of_a_mostly_missing_column(nulls, tmp_path) -> None:
    code, _, err = invoke(["taxonomy", "infer", str(nulls), "--target", "label", "-o", str(tmp_path / "d.yaml")])
    assert code == 0, err
    assert "column(s) missing in more than 20% of the rows: 'b'" in err and "94%" not in err
    text = (tmp_path / "d.yaml").read_text()
    assert "missing_policy: keep" in text and "94% of the values are missing" in text  # the draft is the owner's
    code, _, err = invoke(["taxonomy", "infer", str(nulls), "--target", "label", "-o", str(tmp_path / "d.yaml"), "-v"])
    assert code == 0 and "'b' (94%)" in err, err
    rev = tmp_path / "rev.yaml"
    rev.write_text("".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("draft:")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = dpkit.publish(str(nulls), schema=str(rev), epsilon=1, random_state=1)
    assert "dropped" not in json.dumps(release.report)
    assert release.report["release"]["released_records"] > 0.8 * NULLS  # 0.6.1: 53-63 of 9,958


def test_a_large_drop_gives_the_owner_the_column_and_share(nulls, tmp_path) -> None:
    schema = tmp_path / "drop.yaml"
    schema.write_text("target: label\nmissing: 'NULL'\nmissing_policy: drop\ncolumns:\n"
                      "  a: {type: numeric, bounds: [0, 100], integer: true}\n"
                      "  b: {type: numeric, bounds: [0, 10], integer: true}\n"
                      "  c: {type: categorical, values: [x, y]}\n"
                      "  label: {type: categorical, values: ['no', 'yes']}\n")
    argv = ["publish", str(nulls), "--schema", str(schema), "--epsilon", "1", "--seed", "1", "-o", str(tmp_path / "r.csv")]
    code, _, quiet = invoke(argv)
    assert code == 0
    dropped = [ln for ln in quiet.splitlines() if "dropped" in ln]
    # a log: the same summary as ever, no share, whatever the data (a private command)
    assert dropped == [f"dpkit: warning: {nulls}: dropped rows with a missing value ('NULL') in the used columns, "
                       "if any (-v shows the detail)"]
    code, _, owner = invoke([*argv, "-v"])
    assert code == 0 and "— more than 20% of the rows: 'b' is missing in 9" in owner and "missing_policy: keep" in owner
