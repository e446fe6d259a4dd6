"""The automatic choice of the category lists' noise (``partition="auto"``; issue 36): a forest
without a schema on a wide table takes the joint discrete Gaussian, on a narrow one the
per-column discrete Laplace; publish keeps the Laplace (held-out mushroom: docs/domain-reference.md, "Many
columns"); the report and the learned YAML name the one used."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run

KEY = "0x5b1f0e27c4a94d6b8e3f21a7c90d4e11"


def _table(tmp_path: Path, predictors: int) -> Path:
    """``predictors`` categorical columns of three values, a target; 6,000 rows."""
    g = np.random.default_rng(7)
    n = 6000
    df = pd.DataFrame({f"c{j:02d}": g.choice(["a", "b", "c"], n, p=[.5, .3, .2]) for j in range(predictors)})
    df["y"] = np.where(g.random(n) < 0.4, "yes", "no")
    p = tmp_path / f"wide{predictors}.csv"
    df.to_csv(p, index=False)
    return p


@pytest.mark.parametrize(("command", "predictors", "mechanism"),
                         [(["publish"], 3, "laplace"), (["publish"], 16, "laplace"),
                          (["forest", "train"], 3, "laplace"), (["forest", "train"], 16, "gaussian")])
def test_a_run_without_a_schema_names_the_partition_noise_it_chose(capsys, tmp_path, command, predictors,  # noqa: ANN001
                                                                   mechanism) -> None:
    src = _table(tmp_path, predictors)
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / ("rel.csv" if command == ["publish"] else "model.json")
    code = run(cli, [*command, str(src), "--target", "y", "--epsilon", "1", "--delta", "1e-6",
                     "--categorical", ",".join(f"c{j:02d}" for j in range(predictors)), "--missing", "none",
                     "--seed", KEY, "-o", str(out), "-q"])
    _, err = capsys.readouterr()
    assert code == 0, err
    rep = json.loads(out.with_suffix(".report.json").read_text())
    cats = [s for s in rep["spends"] if s["step"].startswith("domain: categories of")]
    yaml = next(out.parent.glob("*.schema.yaml")).read_text()
    if mechanism == "gaussian":  # one joint step for all the categorical columns, L2 sensitivity √m
        (spend,) = cats
        assert f"discrete gaussian, {predictors + 1} columns" in spend["mechanism"]
        assert spend["sensitivity"] == pytest.approx((predictors + 1) ** 0.5)
        assert "discrete Gaussian" in yaml and "discrete Laplace" not in yaml
    else:
        assert len(cats) == predictors + 1 and all("discrete laplace" in s["mechanism"] for s in cats)
        assert "discrete Laplace" in yaml and "discrete Gaussian" not in yaml


def test_taxonomy_infer_reports_the_rule_and_the_mechanism(capsys, tmp_path) -> None:  # noqa: ANN001
    src = _table(tmp_path, 16)
    for flag, used, rule in (([], "laplace", "laplace"), (["--partition", "auto"], "gaussian", "auto")):
        out = tmp_path / f"{rule}.yaml"
        code = run(cli, ["taxonomy", "infer", str(src), "--target", "y", "--epsilon", "0.2", "--delta", "1e-6",
                         "--missing", "none", *flag, "--seed", KEY, "-o", str(out)])
        _, err = capsys.readouterr()
        assert code == 0, err
        rep = json.loads((tmp_path / f"{rule}.report.json").read_text())
        assert rep["parameters"]["partition"] == used and rep["parameters"]["partition_rule"] == rule
        assert ("discrete Gaussian" if used == "gaussian" else "discrete Laplace") in out.read_text()
