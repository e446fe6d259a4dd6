"""`dpkit evaluate sweep` end to end, with a task module written for the test."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run

TASK = '''
import os

def run_experiment(params, seed):
    with open(os.path.join(os.environ["SWEEP_CALLS"], f"{seed}-{params['epsilon']}"), "w"):
        pass
    if params.get("boom"):
        raise RuntimeError("boom")
    return {"accuracy": 0.7 + 0.1 * params["epsilon"] + (seed % 100) / 10000, "floor_accuracy": 0.6,
            "epsilon_spent": params["epsilon"]}
'''

YAML = """\
name: cli-sweep
task: sweeptask_{tag}:run_experiment
repeats: 2
fixed: {{levels: 5}}
sweeps:
  - name: eps
    grid: {{algorithm: [a, b], epsilon: [0.5, 1.0]}}
plots:
  - {{sweep: eps, x: epsilon, y: accuracy, lines: algorithm}}
paper:
  values:
    - {{sweep: eps, where: {{algorithm: a, epsilon: 1.0}}, metric: accuracy, value: 0.81}}
"""


def invoke(argv: list) -> tuple[int, str, str]:
    runner = CliRunner()
    with runner.isolation() as (out, err, _):
        code = boundary_run(cli, [str(a) for a in argv])
    return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture
def setup(tmp_path, monkeypatch, request) -> tuple[Path, Path]:
    tag = request.node.name.replace("[", "_").replace("]", "").replace("-", "_")
    (tmp_path / f"sweeptask_{tag}.py").write_text(TASK)
    monkeypatch.syspath_prepend(str(tmp_path))
    calls = tmp_path / "calls"
    calls.mkdir()
    monkeypatch.setenv("SWEEP_CALLS", str(calls))
    exp = tmp_path / "exp.yaml"
    exp.write_text(YAML.format(tag=tag))
    return exp, calls


def test_sweep_writes_everything_and_resumes(setup, tmp_path):
    exp, calls = setup
    out_dir = tmp_path / "out"
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", out_dir, "-j", "2"])
    assert code == 0, err
    assert out == ""  # data go to files; messages to stderr
    assert "8 run(s) executed, 0 already" in err
    assert len(list(calls.iterdir())) == 8
    for name in ("results.csv", "summary.csv", "summary.md", "eps-accuracy-vs-epsilon.png"):
        assert (out_dir / name).stat().st_size > 0, name
    md = (out_dir / "summary.md").read_text()
    assert "| 0.81 |" in md and "![eps: eps-accuracy-vs-epsilon](eps-accuracy-vs-epsilon.png)" in md
    # kill simulation: drop the last 3 rows; rerun executes exactly those 3
    path = out_dir / "results.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-3]))
    for f in calls.iterdir():
        f.unlink()
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", out_dir, "-j", "1"])
    assert code == 0, err
    assert "3 run(s) executed, 5 already" in err
    assert len(list(calls.iterdir())) == 3
    with open(path, newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 8
    # --repeats raises the count: only the new repeat runs
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", out_dir, "-j", "1", "--repeats", "3"])
    assert code == 0 and "4 run(s) executed, 8 already" in err


def test_failed_runs_exit_1_and_are_retried(setup, tmp_path):
    exp, calls = setup
    exp.write_text(exp.read_text().replace("fixed: {levels: 5}", "fixed: {levels: 5, boom: true}"))
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", tmp_path / "o", "-j", "1", "--repeats", "1"])
    assert code == 1
    assert "4 of 4 run(s) failed" in err and "RuntimeError: boom" in err
    assert "rerun the command to retry" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\ntask: publish\nsweeps:\n  - {name: a, grid: {e: [1]}\n", "exp.yaml:5:1: YAML syntax error"),
        ("name: x\ntask: magic\nsweeps: [{name: a, grid: {e: [1]}}]\n", "exp.yaml:2:7: unknown task 'magic'"),
    ],
)
def test_bad_yaml_is_one_line_exit_2(tmp_path, text, message):
    exp = tmp_path / "exp.yaml"
    exp.write_text(text)
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", tmp_path / "o"])
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_missing_file_and_bad_options(tmp_path):
    code, _, err = invoke(["evaluate", "sweep", tmp_path / "none.yaml", "-o", tmp_path / "o"])
    assert code == 2 and "none.yaml: experiment file not found" in err
    (tmp_path / "e.yaml").write_text("name: x\ntask: publish\nsweeps: [{name: a, grid: {e: [1]}}]\n")
    code, _, err = invoke(["evaluate", "sweep", tmp_path / "e.yaml", "-o", tmp_path / "o", "--jobs", "0"])
    assert code == 2
    code, _, err = invoke(["evaluate", "sweep", tmp_path / "e.yaml", "-o", tmp_path / "o", "--repeats", "0"])
    assert code == 2


def test_dry_run_prints_plan_and_runs_nothing(setup, tmp_path):
    exp, calls = setup
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", tmp_path / "o", "--dry-run", "--repeats", "3"])
    assert code == 0, err
    assert out.splitlines() == ["sweep\tpoints\truns\tdone\ttodo", "eps\t4\t12\t0\t12", "total\t4\t12\t0\t12"]
    assert list(calls.iterdir()) == []
    assert not (tmp_path / "o").exists()


def test_output_that_is_a_file_is_refused(setup, tmp_path):
    exp, _ = setup
    (tmp_path / "afile").write_text("x")
    code, out, err = invoke(["evaluate", "sweep", exp, "-o", tmp_path / "afile"])
    assert code in (1, 2) and "afile" in err and "Traceback" not in err
