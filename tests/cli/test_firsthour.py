"""A data engineer's first hour (issue 16): signals, exit codes and CLI conventions.

Each test names the docs/errors.md row it proves (``errors.md row: ID``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run as boundary_run

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult"
SCHEMA = ROOT / "taxonomies" / "adult.yaml"


def invoke(argv: list[str], input: str | None = None) -> tuple[int, str, str]:
    """Through the real error boundary (exit codes as the shell sees them)."""
    runner = CliRunner()
    with runner.isolation(input=input) as (out, err, _):
        code = boundary_run(cli, [str(a) for a in argv])
    return code, out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace")


def dpkit(*args: str, **kw) -> subprocess.CompletedProcess:  # noqa: ANN003
    return subprocess.run([sys.executable, "-m", "dpkit", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=kw.pop("timeout", 120), **kw)


# --------------------------------------------------------------------------- 13: entry point


def test_bare_dpkit_prints_help_and_exits_0() -> None:
    code, out, err = invoke([])
    assert code == 0, err
    assert "Usage: dpkit" in out and "publish" in out


def test_dash_V_is_version() -> None:
    code, out, _ = invoke(["-V"])
    assert code == 0 and out.startswith("dpkit, version")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_command_prints_a_script(shell: str) -> None:
    code, out, err = invoke(["completion", shell])
    assert code == 0, err
    assert "_DPKIT_COMPLETE" in out


def test_completion_env_var_works_through_the_entry_point() -> None:
    env = {**os.environ, "_DPKIT_COMPLETE": "bash_source"}
    proc = dpkit(env=env)
    assert proc.returncode == 0, proc.stderr
    assert "_dpkit_completion" in proc.stdout
    env = {**os.environ, "_DPKIT_COMPLETE": "bash_complete", "COMP_WORDS": "dpkit pub", "COMP_CWORD": "1"}
    proc = dpkit(env=env)
    assert "publish" in proc.stdout


# --------------------------------------------------------------------------- 11: --config


def test_config_sets_a_required_option(tmp_path: Path) -> None:
    """errors.md row: config-sets-schema"""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"schema: {SCHEMA}\ntarget: income\nepsilon: 1\nlevels: 2\nseed: 3\n")
    out = tmp_path / "r.csv"
    code, _, err = invoke(["publish", str(ADULT / "train.csv"), "--config", str(cfg), "-o", str(out), "-q"])
    assert code == 0, err
    report = json.loads((tmp_path / "r.report.json").read_text())
    assert report["parameters"]["levels"] == 2 and report["parameters"]["schema"] == str(SCHEMA)


def test_flag_overrides_config_and_unknown_key_is_refused(tmp_path: Path) -> None:
    """errors.md row: config-unknown-key"""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("evaluate-classify:\n  target: income\n  model: svm\n  nonsense: 1\n")
    code, out, err = invoke(["evaluate", "classify", "--config", str(cfg), "--train", "a.csv", "--test", "b.csv"])
    assert code == 2
    assert "unknown key 'nonsense'" in err and str(cfg) in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("path", [
    ["publish"], ["generalize"], ["forest", "train"], ["forest", "predict"], ["cluster"], ["kanon-select"],
    ["evaluate", "classify"], ["evaluate", "cluster"], ["evaluate", "kanon"],
    ["taxonomy", "validate"], ["taxonomy", "infer"],
])
def test_every_command_with_options_takes_config(path: list[str]) -> None:
    code, out, _ = invoke([*path, "--help"])
    assert code == 0 and "--config" in out


def test_config_value_is_type_checked_naming_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("grid: many\n")
    code, _, err = invoke(["publish", "x.csv", "--config", str(cfg)])
    assert code == 2 and f"{cfg}: bad value for 'grid'" in err


# --------------------------------------------------------------------------- 2: sweep -o


SLOW_TASK = """\
import os, time
def run(params, seed):
    if params["x"] > 0 and os.environ.get("SWEEP_SLEEP"):
        open(os.path.join(os.environ["SWEEP_PIDS"], str(os.getpid())), "w").close()
        time.sleep(float(os.environ["SWEEP_SLEEP"]))
    return {"value": float(params["x"])}
"""


def _experiment(tmp_path: Path, xs: int) -> Path:
    (tmp_path / "slowtask.py").write_text(SLOW_TASK)
    exp = tmp_path / "exp.yaml"
    exp.write_text(f"name: slow\ntask: slowtask:run\nsweeps: [{{name: a, grid: {{x: {list(range(xs))}}}}}]\n")
    return exp


def test_sweep_unwritable_output_is_one_line_exit_1(tmp_path: Path) -> None:
    """errors.md row: sweep-output-not-writable"""
    exp = _experiment(tmp_path, 1)
    if os.geteuid() == 0:
        target = "/proc/dpkit-no-such-dir/results"  # even root cannot create it
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = str(locked / "results")
    code, _, err = invoke(["evaluate", "sweep", str(exp), "-o", target])
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in err
    assert "cannot create the directory" in lines[0] or "not writable" in lines[0]


# --------------------------------------------------------------------------- 1: sweep SIGTERM


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" not in fh.read()  # a zombie is dead, only not yet reaped
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sweep_sigterm_stops_workers_exits_143_and_resumes(tmp_path: Path) -> None:
    """errors.md row: sweep-sigterm"""
    exp = _experiment(tmp_path, 6)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "SWEEP_PIDS": str(pids), "SWEEP_SLEEP": "60",
           "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "dpkit", "evaluate", "sweep", str(exp), "-o", str(out), "-j", "2", "-q"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    journal = out / "results.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list(pids.iterdir())) >= 2 and journal.exists() and journal.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) == 2 and proc.poll() is None, "the sweep did not reach two sleeping workers"
    proc.send_signal(signal.SIGTERM)
    # communicate() returns only when every holder of the stderr pipe (the workers too) is gone
    _, err = proc.communicate(timeout=20)
    err = err.decode()
    assert proc.returncode == 143, err
    assert err.strip() == "dpkit: terminated", err
    time.sleep(0.2)
    assert not [pid for pid in workers if _alive(pid)]
    # resumable: the finished run stays in the journal; a rerun does only the others
    assert journal.read_text().count("\n") == 2
    env.pop("SWEEP_SLEEP")
    rerun = subprocess.run([*argv, "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    outcome = json.loads(rerun.stdout)
    assert outcome["skipped"] == 1 and outcome["executed"] == 5 and outcome["failed"] == 0


# --------------------------------------------------------------------------- 16: classify


def test_classify_baseline_without_baseline_test_is_refused() -> None:
    """errors.md row: classify-baseline-needs-test"""
    code, out, err = invoke(["evaluate", "classify", "--train", "out.csv", "--test", "test.gen.csv",
                             "--target", "income", "--baseline", str(ADULT / "train.csv")])
    assert code == 2, err
    assert "--baseline-test" in err and len(err.strip().splitlines()) == 1
    assert out == ""


def test_classify_reads_each_input_with_its_own_delimiter(tmp_path: Path) -> None:
    """errors.md row: classify-delimiter-for"""
    rows = [("a", "x"), ("b", "y")] * 20
    train = tmp_path / "train.csv"
    train.write_text("f,label\n" + "".join(f"{f},{lab}\n" for f, lab in rows))
    test = tmp_path / "test.csv"
    test.write_text("f;label\n" + "".join(f"{f};{lab}\n" for f, lab in rows))
    code, out, err = invoke(["evaluate", "classify", "--train", train, "--test", test, "--target", "label",
                             "--delimiter-for", "test=;", "--json"])
    assert code == 0, err
    assert json.loads(out)["accuracy"] == 1.0
    code, _, err = invoke(["evaluate", "classify", "--train", train, "--test", test, "--target", "label",
                           "--delimiter-for", "nope=;"])
    assert code == 2 and "--delimiter-for 'nope=;'" in err


# --------------------------------------------------------------------------- 12: -o optional


IRIS = ROOT / "sample_data" / "iris" / "iris.csv"
IRIS_SCHEMA = ROOT / "taxonomies" / "iris.yaml"
PUBLISH_IRIS = ["publish", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "1", "--levels", "2", "--seed", "1"]


def test_data_commands_write_stdout_without_o(tmp_path: Path) -> None:
    rep = tmp_path / "r.json"
    code, out, err = invoke([*PUBLISH_IRIS, "--report", rep])
    assert code == 0, err
    assert out.startswith("sepal_length_cm,") and rep.exists()
    code, out, err = invoke(["taxonomy", "infer", IRIS, "--target", "species", "-q"])
    assert code == 0, err
    assert "species" in out


def test_stdout_without_report_is_refused_even_quiet() -> None:
    """errors.md row: stdout-needs-report"""
    code, out, err = invoke([*PUBLISH_IRIS, "-q"])
    assert code == 2 and out == ""
    assert err.strip() == ("dpkit: error: the output goes to stdout (no -o FILE), so the report needs a file: "
                           "give --report FILE")


# --------------------------------------------------------------------------- 14: --json


@pytest.mark.parametrize("argv", [
    [*PUBLISH_IRIS, "-o", "{tmp}/rel.csv"],
    ["forest", "train", IRIS, "--schema", IRIS_SCHEMA, "--epsilon", "1", "--trees", "2", "-o", "{tmp}/m.json"],
    ["cluster", IRIS, "--schema", IRIS_SCHEMA, "-k", "3", "--epsilon", "1", "-o", "{tmp}/c.csv"],
    ["kanon-select", IRIS, "--target", "species", "-k", "5", "-o", "{tmp}/k.csv"],
], ids=["publish", "forest-train", "cluster", "kanon-select"])
def test_json_result_is_one_object_without_private_counts(tmp_path: Path, argv: list) -> None:
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = invoke([*argv, "--json", "-q"])
    assert code == 0, err
    result = json.loads(out)
    assert result["files"]["output"] == argv[-1] and Path(result["files"]["report"]).exists()
    # a plain --seed makes the run reproducible, not private (docs/formats.md, seeds)
    expected = "k-anonymity" if argv[0] == "kanon-select" else "none" if "--seed" in argv else "epsilon-dp"
    assert result["privacy"]["model"] == expected
    # public facts only: nothing about record counts or class sizes
    assert not any(word in out for word in ("records", "smallest", "n_estimate", "count"))


def test_json_goes_to_stderr_when_stdout_carries_data(tmp_path: Path) -> None:
    code, out, err = invoke([*PUBLISH_IRIS, "--report", tmp_path / "r.json", "--json", "-q"])
    assert code == 0
    assert out.startswith("sepal_length_cm,")
    assert json.loads(err)["command"] == "publish"


def test_taxonomy_validate_json() -> None:
    code, out, err = invoke(["taxonomy", "validate", IRIS_SCHEMA, IRIS, "--json", "-q"])
    assert code == 0, err
    r = json.loads(out)
    assert r["ok"] and r["covered"] and r["target"] == "species"


# --------------------------------------------------------------------------- 4 and 5


def test_ctrl_c_after_a_complete_run_exits_0(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """errors.md row: ctrl-c-after-complete"""
    import dpkit.cli.options as results
    from dpkit.ledger import Ledger

    ledger = tmp_path / "l.db"
    Ledger(ledger, create=True).register(IRIS, "iris", 10)

    def interrupted(*args, **kwargs) -> None:  # noqa: ANN002, ANN003
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, after output, report and ledger row
        time.sleep(1)

    monkeypatch.setattr(results, "emit_run_result", interrupted)
    out = tmp_path / "rel.csv"
    # Python's own Ctrl-C handler, as an interactive dpkit has it: pytest started from a shell
    # without job control (`cmd &`, cron) inherits SIGINT ignored, and the signal did nothing
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code, _, err = invoke([*PUBLISH_IRIS, "-o", out, "--ledger", ledger, "--json"])
    finally:
        signal.signal(signal.SIGINT, old)
    assert code == 0, err
    assert "interrupted after the run had completed" in err
    assert out.exists() and (tmp_path / "rel.report.json").exists()
    assert [r["status"] for r in Ledger(ledger).history()] == ["complete"]


def test_closed_stdout_that_loses_a_release_exits_1_even_quiet(tmp_path: Path) -> None:
    """errors.md row: head-loses-release"""
    rep = tmp_path / "r.json"
    argv = [sys.executable, "-m", "dpkit", "publish", str(ADULT / "train.csv"), "--schema", str(SCHEMA),
            "--epsilon", "1", "--levels", "2", "--report", str(rep), "-q"]
    p1 = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    p2 = subprocess.Popen(["head", "-n", "1"], stdin=p1.stdout, stdout=subprocess.PIPE)
    p1.stdout.close()
    first = p2.communicate(timeout=120)[0]
    err = p1.stderr.read().decode()
    p1.wait(timeout=120)
    assert first.startswith(b"age,") or first.strip(), err
    assert p1.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "standard output was closed" in lines[0] and "Traceback" not in err
    assert not rep.exists()


# --------------------------------------------------------------------------- 3: cluster -k


@pytest.mark.parametrize("algorithm", ["dpqt", "eug"])
def test_cluster_k_above_the_noisy_size_is_refused_at_once(tmp_path: Path, algorithm: str) -> None:
    """errors.md row: cluster-k-too-large"""
    data = tmp_path / "p.csv"
    data.write_text("x,y\n" + "".join(f"{i % 10},{i % 7}\n" for i in range(200)))
    out = tmp_path / "c.csv"
    start = time.monotonic()
    code, _, err = invoke(["cluster", data, "--columns", "x,y", "--bounds", "0:10,0:10", "-k", "100000",
                           "--epsilon", "1", "--seed", "4", "--algorithm", algorithm, "-o", out,
                           "-q"])  # -q: the load's clip notice (there whatever the data holds, issue 43)
    assert time.monotonic() - start < 20
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "k=100000 is more clusters than" in lines[0]
    assert "about 200 rows" not in lines[0]  # the noisy size, never the exact one
    assert not out.exists() and not list(tmp_path.glob("c.*"))


# --------------------------------------------------------------------------- 9: taxonomy infer


def test_infer_keeps_a_mostly_numeric_column_numeric_and_lists_the_strays(tmp_path: Path) -> None:
    lines = ["name;city;salary"]
    for i in range(500):
        salary = {17: "n/a", 345: "unknown"}.get(i, str(20000 + 97 * i))
        lines.append(f"p{i};{('Genève', 'Zürich', 'Bern')[i % 3]};{salary}")
    data = tmp_path / "hr.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "hr.yaml"
    code, _, err = invoke(["taxonomy", "infer", data, "-d", ";", "-o", out, "-v"])
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    salary = next(line for line in text.splitlines() if line.strip().startswith("salary:"))
    assert "type: numeric" in salary
    assert "'n/a' (line 19)" in salary and "'unknown' (line 347)" in salary
    assert "Genève" in text and "\\x" not in text  # UTF-8, not escapes
    assert "ALGORITHMS.md" not in text and "docs/algorithms.md" in text
    assert "column 'salary' is numeric but for 2 value(s)" in err


def test_infer_a_text_column_stays_text() -> None:
    import pandas as pd

    from dpkit.schema.draft import draft_from_data

    df = pd.DataFrame({"x": [str(i) for i in range(50)] + ["a", "b", "c", "d", "e", "f"]})
    with pytest.warns(Warning):
        spec = draft_from_data(df)["columns"]["x"]
    assert spec["type"] != "numeric"  # 6 distinct strays in 56 values: not "a few"


def test_repo_docs_do_not_point_outside_the_repo() -> None:
    for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "dpkit").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text, path
        if path.name != "algorithms.md":
            assert "ALGORITHMS.md" not in text, path
    assert (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8").startswith("<!--")


# --------------------------------------------------------------------------- 10: ARX folder


def test_arx_folder_with_its_data_file_imports_the_hierarchies_only(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "adult"
    shutil.copytree(ROOT / "tests" / "data" / "fixtures" / "arx", folder)
    (folder / "adult.csv").write_text("age;sex;income\n39;Male;<=50K\n50;Female;>50K\n")
    out = tmp_path / "adult.yaml"
    code, _, err = invoke(["taxonomy", "import", folder, "--target", "income", "-o", out])
    assert code == 0, err
    assert "skipped adult.csv" in err and "--data" in err
    text = out.read_text(encoding="utf-8")
    assert "workclass" in text and "age" in text


def test_arx_folder_of_plain_attribute_files_is_read_whole(tmp_path: Path) -> None:
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "sex.csv").write_text("Male;*\nFemale;*\n")
    (folder / "income.csv").write_text("<=50K;*\n>50K;*\n")
    code, out, err = invoke(["taxonomy", "import", folder, "--target", "income"])
    assert code == 0, err
    assert "skipped" not in err and "sex" in out
