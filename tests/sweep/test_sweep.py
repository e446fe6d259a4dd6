"""The sweep engine: YAML parsing, grid expansion, seeds, the journal and resume, summaries."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from dpkit.errors import DpkitError
from dpkit.sweep import runner, spec
from dpkit.sweep.runner import run_sweep
from dpkit.sweep.spec import ExperimentError, derive_seed, expand, parse_experiment, register_task

from . import fake_task

YAML = """\
name: fake-sweep
task: fake
description: a test sweep
repeats: 3
fixed: {levels: 13, data: some/file.csv}
sweeps:
  - name: eps
    grid: {algorithm: [maxgddp, diffgen], epsilon: [0.1, 1]}
  - name: h
    grid: {levels: [4, 8]}
    fixed: {epsilon: 0.5, algorithm: maxgddp}
plots:
  - {sweep: eps, x: epsilon, y: accuracy, lines: algorithm, logx: true}
  - {sweep: h, x: levels, y: [accuracy, epsilon_spent]}
paper:
  source: A paper, Fig. 3
  values:
    - {sweep: eps, where: {algorithm: maxgddp, epsilon: 1}, metric: accuracy, value: 0.8372}
    - {sweep: h, where: {levels: 99}, metric: accuracy, value: 0.5}
"""


@pytest.fixture(autouse=True)
def _fake_task():
    register_task("fake", fake_task.run_experiment)
    yield
    spec.TASKS.pop("fake", None)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- parsing


def test_parse_and_expand():
    exp = parse_experiment(YAML, "e.yaml")
    assert exp.name == "fake-sweep" and exp.repeats == 3
    runs = expand(exp)
    assert len(runs) == (2 * 2 + 2) * 3
    first = runs[0]
    assert first.sweep == "eps" and first.point == {"algorithm": "maxgddp", "epsilon": 0.1}
    assert first.params == {"levels": 13, "data": "some/file.csv", "algorithm": "maxgddp", "epsilon": 0.1}
    h = [r for r in runs if r.sweep == "h"]
    # sweep fixed overrides/extends the top-level fixed; the grid overrides both
    assert {r.params["levels"] for r in h} == {4, 8}
    assert all(r.params["epsilon"] == 0.5 for r in h)
    assert [r.repeat for r in runs[:3]] == [0, 1, 2]
    assert len(expand(exp, repeats=1)) == 6


def test_seeds_deterministic_distinct_and_stable_under_more_repeats():
    exp = parse_experiment(YAML)
    a, b = expand(exp), expand(exp)
    assert [r.seed for r in a] == [r.seed for r in b]
    assert len({r.seed for r in a}) == len(a)
    more = expand(exp, repeats=5)
    assert {(r.run_id, r.seed) for r in a} <= {(r.run_id, r.seed) for r in more}
    assert derive_seed("x", "s", {"e": 1}, 0) != derive_seed("y", "s", {"e": 1}, 0)
    assert 0 <= derive_seed("x", "s", {"e": 1}, 0) < 2**32


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\ntask: fake\nsweeps: [\n", "e.yaml:4:1: YAML syntax error"),
        ("name: x\ntask: nope\nsweeps: []\n", "e.yaml:2:7: unknown task 'nope'"),
        ("name: x\ntask: fake\nsweeps: []\n", "e.yaml:3:9: sweeps must be a non-empty list"),
        ("name: x\ntask: fake\nrepeats: 0\nsweeps: [{name: a, grid: {e: [1]}}]\n", "e.yaml:3:10: repeats must be"),
        ("task: fake\nsweeps: [{name: a, grid: {e: [1]}}]\n", "e.yaml:1:1: the experiment needs a 'name'"),
        ("name: x\ntask: fake\nsweeps:\n  - {name: a, grid: {e: [1, 1]}}\n", "e.yaml:4:25: sweep 'a': grid parameter 'e' repeats"),
        ("name: x\ntask: fake\nsweeps:\n  - {name: a, grid: {e: [1]}, fixd: {}}\n", "e.yaml:4:31: unknown key 'fixd'"),
        ("name: x\ntask: fake\nsweeps: [{name: a, grid: {e: [1]}}]\nplots: [{sweep: a, x: h, y: acc}]\n",
         "e.yaml:4:23: plot x 'h' is not a grid parameter"),
        ("name: x\ntask: fake\nsweeps: [{name: a, grid: {e: [1]}}]\nplots: [{sweep: b, x: e, y: acc}]\n",
         "e.yaml:4:17: plot of unknown sweep 'b'"),
        ("", "e.yaml: the experiment file is empty"),
    ],
)
def test_errors_name_line_and_column(text, message):
    with pytest.raises(ExperimentError) as info:
        parse_experiment(text, "e.yaml")
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_top_level_key_is_a_warning():
    with pytest.warns(UserWarning, match="e.yaml:3:1: unknown key 'repeat'"):
        exp = parse_experiment("name: x\ntask: fake\nrepeat: 4\nsweeps: [{name: a, grid: {e: [1]}}]\n", "e.yaml")
    assert exp.repeats == 1


# --------------------------------------------------------------------------- running


def _counting(monkeypatch) -> list:
    calls: list = []

    def task(params, seed):
        calls.append((params["epsilon"], seed))
        return fake_task.run_experiment(params, seed)

    register_task("fake", task)
    return calls


def test_sweep_writes_results_summary_plots(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    exp = parse_experiment(YAML)
    out = run_sweep(exp, tmp_path / "o", jobs=1)
    assert out.executed == 18 and out.skipped == 0 and not out.failed
    assert len(calls) == 18
    rows = _rows(tmp_path / "o" / "results.csv")
    assert len(rows) == 18
    assert list(rows[0])[:4] == ["run_id", "sweep", "repeat", "seed"]
    assert {"algorithm", "epsilon", "levels", "accuracy", "epsilon_spent", "wall_seconds"} <= set(rows[0])
    # a parameter fixed in one sweep but gridded in another shows its value
    assert {r["levels"] for r in rows if r["sweep"] == "eps"} == {"13"}
    # summary stats recomputed from results.csv
    summary = _rows(tmp_path / "o" / "summary.csv")
    acc = [float(r["accuracy"]) for r in rows if r["sweep"] == "eps" and r["algorithm"] == "diffgen" and r["epsilon"] == "0.1"]
    line = [s for s in summary if s["sweep"] == "eps" and s["algorithm"] == "diffgen" and s["epsilon"] == "0.1" and s["metric"] == "accuracy"]
    assert len(line) == 1
    assert float(line[0]["mean"]) == pytest.approx(statistics.fmean(acc))
    assert float(line[0]["sd"]) == pytest.approx(statistics.stdev(acc))
    assert line[0]["n"] == "3"
    pngs = sorted(p.name for p in (tmp_path / "o").glob("*.png"))
    assert pngs == ["eps-accuracy-vs-epsilon.png", "h-accuracy-vs-levels.png", "h-epsilon_spent-vs-levels.png"]
    for p in pngs:
        assert (tmp_path / "o" / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "o" / "summary.md").read_text()
    assert "](eps-accuracy-vs-epsilon.png)" in md
    assert "| accuracy: paper |" in md and "0.8372" in md
    assert "not run" in md  # the paper value with no matching grid point
    assert "A paper, Fig. 3" in md


def test_resume_after_kill_runs_only_missing(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    exp = parse_experiment(YAML)
    d = tmp_path / "o"
    run_sweep(exp, d, jobs=1, plots=False)
    full = _rows(d / "results.csv")
    # simulate a kill: keep the header and 7 rows, plus half of the 8th line
    lines = (d / "results.csv").read_text().splitlines(keepends=True)
    (d / "results.csv").write_text("".join(lines[:8]) + lines[8][:15])
    calls.clear()
    with pytest.warns(UserWarning, match="partial last line"):
        out = run_sweep(exp, d, jobs=1, plots=False)
    assert out.skipped == 7 and out.executed == 11
    assert len(calls) == 11
    again = _rows(d / "results.csv")
    assert len(again) == 18 and len({r["run_id"] for r in again}) == 18
    # same seeds give the same metrics as the uninterrupted sweep
    by_id = {r["run_id"]: r["accuracy"] for r in full}
    assert all(by_id[r["run_id"]] == r["accuracy"] for r in again)
    # a third run does nothing
    calls.clear()
    out = run_sweep(exp, d, jobs=1, plots=False)
    assert out.executed == 0 and calls == []
    # more repeats run only the new ones
    out = run_sweep(exp, d, jobs=1, repeats=4, plots=False)
    assert out.executed == 6 and len(calls) == 6


def test_parallel_pool_matches_serial_and_resumes(tmp_path, monkeypatch):
    """Worker processes: every run executed once, same numbers as in-process."""
    calls_dir = tmp_path / "calls"
    calls_dir.mkdir()
    monkeypatch.setenv(fake_task.CALLS_DIR_ENV, str(calls_dir))
    exp = parse_experiment(YAML)
    run_sweep(exp, tmp_path / "serial", jobs=1, plots=False)
    for f in calls_dir.iterdir():
        f.unlink()
    d = tmp_path / "par"
    out = run_sweep(exp, d, jobs=2, plots=False)
    assert out.executed == 18 and len(list(calls_dir.iterdir())) == 18
    serial = {r["run_id"]: r["accuracy"] for r in _rows(tmp_path / "serial" / "results.csv")}
    par = {r["run_id"]: r["accuracy"] for r in _rows(d / "results.csv")}
    assert serial == par
    # drop 5 finished runs from the journal, rerun in parallel: only those 5 execute
    lines = (d / "results.csv").read_text().splitlines(keepends=True)
    (d / "results.csv").write_text("".join(lines[:-5]))
    for f in calls_dir.iterdir():
        f.unlink()
    out = run_sweep(exp, d, jobs=2, plots=False)
    assert out.executed == 5 and len(list(calls_dir.iterdir())) == 5
    assert len(_rows(d / "results.csv")) == 18


def test_failed_runs_are_not_journaled(tmp_path):
    text = YAML.replace("fixed: {levels: 13, data: some/file.csv}", "fixed: {levels: 13, fail: true}")
    exp = parse_experiment(text)
    out = run_sweep(exp, tmp_path, jobs=1, repeats=1, plots=False)
    assert len(out.failed) == 6
    assert "ValueError: asked to fail" in out.failed[0][1]
    assert not (tmp_path / "results.csv").exists() or _rows(tmp_path / "results.csv") == []
    assert (tmp_path / "summary.md").exists()


def test_edited_yaml_leaves_stale_rows_out(tmp_path):
    exp = parse_experiment(YAML)
    run_sweep(exp, tmp_path, jobs=1, repeats=1, plots=False)
    edited = parse_experiment(YAML.replace("levels: 13", "levels: 12"))
    with pytest.warns(UserWarning, match="other parameters"):
        out = run_sweep(edited, tmp_path, jobs=1, repeats=1, plots=False)
    # the eps sweep's params changed (levels 12), the h sweep's did not (its grid sets levels)
    assert out.executed == 4 and out.skipped == 2


def test_unavailable_task_module_is_one_clear_error(tmp_path):
    exp = parse_experiment(YAML.replace("task: fake", "task: dpkit.nonexistent.experiment"))
    with pytest.raises(DpkitError, match="not available"):
        run_sweep(exp, tmp_path, jobs=1, plots=False)


ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs" / "experiments").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_experiments_parse_and_name_existing_files(path):
    exp = spec.load_experiment(path)
    assert exp.task in spec.TASKS
    assert exp.name == path.stem  # make reproduce writes results/<stem>, build_results reads it
    for run in expand(exp, repeats=1):
        for key in ("data", "test", "schema"):
            value = run.params.get(key)
            if isinstance(value, str):
                assert (ROOT / value).is_file(), f"{path.name}: sweep {run.sweep}: {key} {value} not found"


def test_plan_counts_done_runs(tmp_path):
    exp = parse_experiment(YAML)
    run_sweep(exp, tmp_path, jobs=1, repeats=1, plots=False)
    rows = runner.plan_sweep(exp, tmp_path, repeats=2)
    assert [(r["sweep"], r["points"], r["runs"], r["done"], r["todo"]) for r in rows] == [
        ("eps", 4, 8, 4, 4), ("h", 2, 4, 2, 2)]
    assert runner.plan_sweep(exp, tmp_path / "nothing")[0]["done"] == 0


def test_pool_is_exact_over_underlying_runs():
    from dpkit.sweep.groups import Group, Stat, pool

    values = {("a", 0): [1.0, 2.0, 4.0], ("a", 1): [3.0], ("b", 0): [5.0, 7.0], ("b", 1): [6.0, 6.5]}
    groups = []
    for (alg, split), vs in values.items():
        sd = statistics.stdev(vs) if len(vs) > 1 else float("nan")
        groups.append(Group("s", {"alg": alg, "split": split}, {"alg": alg, "split": split, "h": 3},
                            {"acc": Stat(statistics.fmean(vs), sd, len(vs))}, runs=len(vs)))
    pooled = {g.point["alg"]: g for g in pool(groups, ["alg"])}
    for alg in ("a", "b"):
        allv = values[(alg, 0)] + values[(alg, 1)]
        st = pooled[alg].stats["acc"]
        assert st.mean == pytest.approx(statistics.fmean(allv))
        assert st.sd == pytest.approx(statistics.stdev(allv))
        assert st.n == len(allv) and pooled[alg].runs == len(allv)
        assert pooled[alg].params == {"alg": alg, "h": 3}  # split differs: not a common param


def test_unplotted_grid_parameter_is_pooled_in_summary(tmp_path):
    text = YAML.replace("grid: {algorithm: [maxgddp, diffgen], epsilon: [0.1, 1]}",
                        "grid: {algorithm: [maxgddp, diffgen], epsilon: [0.1, 1], split: [0, 1]}")
    exp = parse_experiment(text)
    run_sweep(exp, tmp_path, jobs=1, repeats=2)
    md = (tmp_path / "summary.md").read_text()
    assert "Pooled over split (as plotted)" in md
    assert "<details><summary>every grid point</summary>" in md
    assert (tmp_path / "eps-accuracy-vs-epsilon.png").exists()
    # the pooled rows count the runs of both splits
    pooled_rows = md.split("Pooled over split")[1].split("<details>")[0]
    assert "| maxgddp | 0.1 |" in pooled_rows and pooled_rows.rstrip().splitlines()[-1].endswith("| 4 |")


def test_second_sweep_on_same_directory_is_refused(tmp_path):
    import fcntl

    exp = parse_experiment(YAML)
    with open(tmp_path / ".sweep.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(DpkitError, match="another 'dpkit evaluate sweep' is writing"):
            run_sweep(exp, tmp_path, jobs=1, plots=False)
    # released: runs
    assert run_sweep(exp, tmp_path, jobs=1, repeats=1, plots=False).executed == 6


def test_new_metric_mid_sweep_widens_the_journal(tmp_path):
    def task(params, seed):
        out = fake_task.run_experiment(params, seed)
        if params["epsilon"] == 1:
            out["extra"] = 7.0
        return out

    register_task("fake", task)
    exp = parse_experiment(YAML)
    run_sweep(exp, tmp_path, jobs=1, repeats=1, plots=False)
    rows = _rows(tmp_path / "results.csv")
    assert len(rows) == 6
    assert list(rows[0])[-1] == "wall_seconds"  # wall time stays last
    assert [r["extra"] for r in rows if r["sweep"] == "eps"] == ["", "7.0", "", "7.0"]
    summary = _rows(tmp_path / "summary.csv")
    extra = [s for s in summary if s["metric"] == "extra"]
    assert len(extra) == 2 and all(s["mean"] == "7.0" and s["n"] == "1" and s["sd"] == "" for s in extra)
