"""`dpkit cluster` and `dpkit evaluate cluster` end to end (in-process, through the error boundary)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run

ROOT = Path(__file__).resolve().parents[2]
S1 = ROOT / "sample_data" / "clustering" / "s1.csv"
CLUSTER_SCHEMA = ROOT / "taxonomies" / "clustering.yaml"
BOX = "0:1e6,0:1e6"


def dpkit(capsys, *args: object) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """600 rows of S1 (every 8th/9th row: all 15 clusters present)."""
    path = tmp_path_factory.mktemp("cluster") / "s1small.csv"
    df = pd.read_csv(S1, dtype=str)
    df.iloc[::8].to_csv(path, index=False)
    return path


def check_report(path: Path, epsilon: float) -> dict:
    rep = json.loads(path.read_text())
    priv = rep["privacy"]
    assert priv["epsilon_budget"] == epsilon
    assert math.fsum(s["epsilon"] for s in rep["spends"]) == pytest.approx(priv["epsilon_spent"])
    assert priv["epsilon_spent"] <= epsilon * (1 + 1e-9)
    assert rep["command"] == "cluster"
    text = json.dumps(rep)
    assert "n_rows" not in text and "exact" not in text
    return rep


def test_dpqt_end_to_end(capsys, tmp_path: Path, small: Path) -> None:
    out = tmp_path / "c.csv"
    code, stdout, err = dpkit(capsys, "cluster", small, "--columns", "x,y", "-k", 15, "--epsilon", 1,
                              "--bounds", BOX, "--seed", 3, "-o", out)
    assert code == 0, err
    assert stdout == ""
    c = pd.read_csv(out)
    # a plain seed is not private: the label says so (issue 24 item 5)
    assert list(c.columns) == ["cluster_not_private", "x", "y"] and len(c) == 15
    assert c[["x", "y"]].stack().between(0, 1e6).all()
    rep = check_report(tmp_path / "c.report.json", 1.0)
    assert rep["algorithm"] == "dpqt" and rep["privacy"]["seeded"] is True
    assert rep["parameters"]["bounds"] == [[0.0, 1e6], [0.0, 1e6]]
    assert len(rep["release"]["centroids"]) == 15 and rep["release"]["height"] >= 2
    assert any(s["step"] == "bucket counts" for s in rep["spends"])
    # the same seed reproduces the release
    out2 = tmp_path / "c2.csv"
    assert dpkit(capsys, "cluster", small, "--columns", "x,y", "-k", 15, "--epsilon", 1,
                 "--bounds", BOX, "--seed", 3, "-o", out2)[0] == 0
    assert out.read_text() == out2.read_text()


@pytest.mark.parametrize("algorithm", ["dpkmeans", "eug"])
def test_baselines_from_schema_bounds(capsys, tmp_path: Path, small: Path, algorithm: str) -> None:
    out = tmp_path / "c.csv"
    code, _, err = dpkit(capsys, "cluster", small, "--schema", CLUSTER_SCHEMA, "-k", 5, "--epsilon", 0.5,
                         "--algorithm", algorithm, "--seed", 1, "-o", out)
    assert code == 0, err
    assert len(pd.read_csv(out)) == 5
    rep = check_report(tmp_path / "c.report.json", 0.5)
    assert rep["parameters"]["columns"] == ["x", "y"]  # the schema's numeric columns
    assert rep["privacy"]["epsilon_spent"] == pytest.approx(0.5)


def test_histogram_and_assign(capsys, tmp_path: Path, small: Path) -> None:
    out, hist, asg = tmp_path / "c.csv", tmp_path / "h.csv", tmp_path / "a.csv"
    code, _, err = dpkit(capsys, "cluster", small, "--columns", "x,y", "-k", 4, "--epsilon", 1,
                         "--bounds", BOX, "--histogram", hist, "--assign", asg, "--seed", 2, "-o", out)
    assert code == 0, err
    h = pd.read_csv(hist)
    assert list(h.columns) == ["x_lo", "x_hi", "y_lo", "y_hi", "count_not_private"]  # a plain seed
    assert (h["count_not_private"] >= 0).all()
    assert ((h.x_hi - h.x_lo) * (h.y_hi - h.y_lo)).sum() == pytest.approx(1e12)
    a = pd.read_csv(asg)
    src = pd.read_csv(small)
    assert len(a) == len(src) and list(a.columns) == ["x", "y", "label", "cluster_not_private"]
    assert set(a["cluster_not_private"]) <= set(range(4))


def test_assign_with_a_learned_box_keeps_every_row(capsys, tmp_path: Path) -> None:
    """Without bounds the learned schema reads a word in a number column as missing: its row is
    dropped from the points, and --assign gives it an empty label (it crashed, exit 70, when the
    labels were matched to the rows by the missing tokens alone)."""
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,2\nNA,3\n4,oops\n5,6\n")
    out, asg = tmp_path / "c.csv", tmp_path / "a.csv"
    code, _, err = dpkit(capsys, "cluster", data, "--columns", "x,y", "-k", 2, "--epsilon", 1, "--seed", 3,
                         "--assign", asg, "-o", out)
    assert code == 0, err
    a = pd.read_csv(asg, dtype=str, keep_default_na=False)
    assert a["x"].tolist() == ["1", "NA", "4", "5"]
    label = a.columns[-1]
    assert a[label].tolist()[1:3] == ["", ""] and all(v != "" for v in a[label].tolist()[::3])


def test_help_says_assign_is_private(capsys) -> None:
    code, out, _ = dpkit(capsys, "cluster", "--help")
    assert code == 0 and "Example:" in out and "do not publish" in out


def test_config_and_stdout(capsys, tmp_path: Path, small: Path) -> None:
    code, out, err = dpkit(capsys, "cluster", small, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                           "--bounds", BOX, "--config", ROOT / "configs" / "cluster.yaml", "-o", "-",
                           "--report", tmp_path / "r.json")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0] == "cluster,x,y" and len(lines) == 4


def test_allow_data_bounds_is_loud(capsys, tmp_path: Path, small: Path) -> None:
    out = tmp_path / "c.csv"
    code, _, err = dpkit(capsys, "cluster", small, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                         "--allow-data-bounds", "-o", out)
    assert code == 0, err
    assert "NOT differentially private" in err
    rep = json.loads((tmp_path / "c.report.json").read_text())
    assert rep["privacy"]["guarantee"] == "none: domain read from data"
    assert "read from the data" in rep["parameters"]["bounds"]


def test_points_outside_bounds_are_clipped_and_counted(capsys, tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,1\n2,2\n50,3\n-4,2\n3,3\n")
    code, _, err = dpkit(capsys, "cluster", data, "--columns", "x,y", "-k", 2, "--epsilon", 1,
                         "--bounds", "0:10,0:10", "-o", tmp_path / "c.csv", "-v")
    assert code == 0, err
    assert "clipped 2 value(s) of 'x'" in err


def test_degenerate_cases_do_not_crash(capsys, tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,1\n1,1\n1,2\n")
    # k = 1
    code, _, err = dpkit(capsys, "cluster", data, "--columns", "x,y", "-k", 1, "--epsilon", 1,
                         "--bounds", "0:10,0:10", "-o", tmp_path / "a.csv")
    assert code == 0, err
    assert len(pd.read_csv(tmp_path / "a.csv")) == 1
    # more clusters than (positive) buckets: tiny data, small ε
    code, _, err = dpkit(capsys, "cluster", data, "--columns", "x,y", "-k", 6, "--epsilon", 0.01,
                         "--bounds", "0:10,0:10", "--seed", 0, "-o", tmp_path / "b.csv")
    assert code == 0, err
    assert "warning" in err and len(pd.read_csv(tmp_path / "b.csv")) == 6


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["-k", 3, "--epsilon", 1, "--bounds", BOX, "--domain-share", "0.2"], 2, "--domain-share applies only"),
        (["-k", 3, "--epsilon", 1, "--domain-share", "0"], 2, "--domain-share must be a number between 0"),
        (["-k", 3, "--epsilon", 1, "--bounds", "5:5,0:1"], 2, "lo < hi"),
        (["-k", 3, "--epsilon", 1, "--bounds", "0:1"], 2, "1 lo:hi pair"),
        (["-k", 3, "--epsilon", 1, "--bounds", "0:x,0:1"], 2, "bounds must be numbers"),
        (["-k", 300, "--epsilon", 1, "--bounds", BOX, "--max-height", 3], 2, "k=300 is larger"),
        (["-k", 0, "--epsilon", 1, "--bounds", BOX], 2, "k must be"),
        (["--epsilon", 1, "--bounds", BOX], 2, "-k"),
        (["-k", 3, "--epsilon", 0, "--bounds", BOX], 2, "epsilon"),
        (["-k", 3, "--epsilon", 1, "--bounds", BOX, "--gamma", 1.5], 2, "gamma"),
        (["-k", 3, "--epsilon", 1, "--bounds", BOX, "--algorithm", "dpkmeans", "--histogram", "h.csv"], 2, "--histogram"),
    ],
)
def test_usage_errors(capsys, tmp_path: Path, small: Path, args: list, code: int, message: str) -> None:
    out = tmp_path / "c.csv"
    got, stdout, err = dpkit(capsys, "cluster", small, "--columns", "x,y", *args, "-o", out)
    assert got == code, err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_non_numeric_column(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)  # values and lines shown
    data = tmp_path / "d.csv"
    data.write_text("x,y\n1,1\n2,abc\n")
    code, _, err = dpkit(capsys, "cluster", data, "--columns", "x,y", "-k", 1, "--epsilon", 1,
                         "--bounds", "0:10,0:10", "-o", tmp_path / "c.csv")
    assert code == 1
    assert ":3: numeric column 'y' has 'abc'" in err and "Traceback" not in err
    code, _, err = dpkit(capsys, "cluster", data, "--columns", "x,z", "-k", 1, "--epsilon", 1,
                         "--bounds", "0:10,0:10", "-o", tmp_path / "c.csv")
    assert code == 1 and "'z'" in err


# --------------------------------------------------------------------------- evaluate cluster


def test_evaluate_cluster(capsys, tmp_path: Path, small: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out, alg in ((a, "dpqt"), (b, "eug")):
        assert dpkit(capsys, "cluster", small, "--columns", "x,y", "-k", 15, "--epsilon", 1, "--bounds", BOX,
                     "--algorithm", alg, "--seed", 5, "-o", out)[0] == 0
    code, out, err = dpkit(capsys, "evaluate", "cluster", small, "--centroids", a, "--labels", "label",
                           "--compare", b, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert set(res) == {"k", "n_points", "nicv", "nonprivate_nicv", "nicv_ratio", "f_measure", "nicv_other", "rcp"}
    assert res["k"] == 15 and res["nicv_ratio"] >= 0.99 and 0 < res["f_measure"] <= 1
    assert res["rcp"] == pytest.approx((res["nicv_other"] - res["nicv"]) / res["nicv_other"])
    code, out, _ = dpkit(capsys, "evaluate", "cluster", small, "--centroids", a, "--no-reference")
    assert code == 0 and out.startswith("k: 15\n") and "nicv: " in out and "nonprivate" not in out


def test_evaluate_cluster_errors(capsys, tmp_path: Path, small: Path) -> None:
    cents = tmp_path / "c.csv"
    cents.write_text("cluster,x,y\n0,1,oops\n")
    code, _, err = dpkit(capsys, "evaluate", "cluster", small, "--centroids", cents)
    assert code == 1 and "c.csv:2: column 'y' has 'oops', neither a finite number nor an ISO date" in err
    cents.write_text("cluster,x,y\n0,1,2\n")
    code, _, err = dpkit(capsys, "evaluate", "cluster", small, "--centroids", cents, "--labels", "nope")
    assert code == 2 and "'nope'" in err
    code, _, err = dpkit(capsys, "evaluate", "cluster", small, "--centroids", cents, "--columns", "x,q")
    assert code == 1 and "'q'" in err


def test_ledger_caps_repeated_runs(capsys, tmp_path: Path, small: Path) -> None:
    ledger = tmp_path / "ledger.db"
    assert dpkit(capsys, "budget", "init", small, "--name", "s1", "--cap", 1, "--ledger", ledger)[0] == 0
    args = ["cluster", small, "--columns", "x,y", "-k", 3, "--epsilon", 0.6, "--bounds", BOX, "--ledger", ledger]
    assert dpkit(capsys, *args, "-o", tmp_path / "a.csv")[0] == 0
    code, _, err = dpkit(capsys, *args, "-o", tmp_path / "b.csv")
    assert code == 1 and "exceeded" in err
    assert not (tmp_path / "b.csv").exists()
