"""`dpkit budget init|status|history` end to end through the CLI's error boundary."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from dpkit.cli import cli
from dpkit.cli.boundary import run
from dpkit.run import PrivateRun


def dpkit(*args: str, env: dict | None = None) -> tuple[int, str, str]:
    """Run the CLI like the console script does (exit code, stdout, stderr)."""
    runner = CliRunner()
    with runner.isolation(env=env) as (out, err, _):
        code = run(cli, [str(a) for a in args])
    return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "adult.csv"
    p.write_text("age,income\n30,<=50K\n40,>50K\n")
    return p


def test_init_status_history(tmp_path, data):
    led = tmp_path / "l.db"
    code, out, err = dpkit("budget", "init", data, "--name", "adult", "--cap", "4", "--ledger", led)
    assert code == 0, err
    assert out == ""  # messages on stderr only
    assert "registered" in err and "'adult'" in err and "cap ε=4" in err
    # the fingerprint is never shown
    from dpkit.ledger import fingerprint

    assert fingerprint(data) not in err
    r = PrivateRun("publish", "maxgddp", "1.5", None, inputs=[str(data)],
                   outputs=[str(tmp_path / "r.csv"), str(tmp_path / "r.report.json")], ledger=str(led))
    with r:
        r.accountant.spend("s", "m", 1.25)
    code, out, err = dpkit("budget", "status", "--json", "--ledger", led)
    assert code == 0, err
    (row,) = json.loads(out)
    assert row == {"name": "adult", "cap": 4.0, "spent": 1.25, "reserved": 0.0,
                   "remaining": 2.75, "runs": 1, "delta_cap": None, "delta_spent": 0.0}
    code, out, _ = dpkit("budget", "status", "--ledger", led)
    lines = out.splitlines()
    assert lines[0].split("\t") == ["data set", "cap", "spent", "reserved", "remaining", "runs"]
    assert lines[1].split("\t") == ["adult", "4", "1.25", "0", "2.75", "1"]
    code, out, _ = dpkit("budget", "history", "--name", "adult", "--json", "--ledger", led)
    (h,) = json.loads(out)
    assert h["command"] == "publish" and h["status"] == "complete"
    assert h["epsilon_reserved"] == 1.5 and h["epsilon_spent"] == 1.25
    assert h["report"].endswith("r.report.json") and h["outputs"][0].endswith("r.csv")
    code, out, _ = dpkit("budget", "history", "--ledger", led)
    assert code == 0
    head, row1 = out.splitlines()
    assert head.startswith("when (UTC)\tdata set\tcommand")
    assert "\tadult\tpublish\t1.5\t1.25\tcomplete\t" in row1


def test_env_var_names_the_ledger(tmp_path, data):
    led = tmp_path / "env.db"
    code, _, err = dpkit("budget", "init", data, "--name", "a", "--cap", "1", env={"DPKIT_LEDGER": str(led)})
    assert code == 0, err
    code, out, _ = dpkit("budget", "status", "--json", env={"DPKIT_LEDGER": str(led)})
    assert json.loads(out)[0]["name"] == "a"


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["budget", "status"], 2, "give the ledger with --ledger"),
        (["budget", "status", "--ledger", "{tmp}/none.db"], 1, "does not exist; register the data set first"),
        (["budget", "init", "{data}", "--name", "x", "--ledger", "{tmp}/n.db"], 2, "--cap is required"),
        (["budget", "init", "{data}", "--name", "x", "--cap", "-1", "--ledger", "{tmp}/n.db"], 2, "--cap must be a finite number > 0"),
        (["budget", "init", "{data}", "--name", "x", "--cap", "abc", "--ledger", "{tmp}/n.db"], 2, "--cap must be a number > 0"),
        (["budget", "init", "{tmp}/missing.csv", "--name", "x", "--cap", "1", "--ledger", "{tmp}/n.db"], 1, "file not found"),
        (["budget", "init", "{data}", "--name", "x", "--cap", "1", "--ledger", "{tmp}/no/dir/n.db"], 1, "does not exist"),
        (["budget", "history", "--ledger", "{data}"], 1, "not a dpkit ledger"),
    ],
)
def test_budget_errors(tmp_path, data, args, code, message):
    argv = [a.format(tmp=tmp_path, data=data) for a in args]
    got, out, err = dpkit(*argv)
    assert got == code, err
    assert message in err
    assert "Traceback" not in err and out == ""
    # one message line (Click adds "Usage:"/"Try" lines for exit 2)
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith(("Usage:", "Try "))]
    assert len(lines) == 1 and message in lines[0]


def test_help_has_example():
    for sub in ("init", "status", "history"):
        code, out, _ = dpkit("budget", sub, "--help")
        assert code == 0 and "Example:" in out


@pytest.mark.parametrize("name", ["probe", "publish", "forest", "cluster"])
def test_every_dp_command_draws_on_the_ledger(tmp_path, name):
    """A DP command with --ledger: the first run is recorded complete with its outputs and
    report; the next, which would pass the cap, is refused (exit 1) and writes nothing."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_errors import COMMANDS, GOOD, SCHEMA, invoke, unavailable

    from dpkit.ledger import Ledger

    cmd = COMMANDS[name]
    (tmp_path / "out").mkdir()
    data = tmp_path / "data.csv"
    data.write_text(GOOD)
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA)
    led = tmp_path / "l.db"
    code, _, err = dpkit("budget", "init", data, "--name", "toy", "--cap", "1.5", "--ledger", led)
    assert code == 0, err
    ext = "json" if name == "forest" else "csv"

    def argv(i):
        return cmd.argv({"data": str(data), "schema": str(schema), "out": str(tmp_path / "out" / f"o{i}.{ext}"),
                         "epsilon": "1", "seed": "1", "extra": ["--ledger", str(led)]})

    why = unavailable(cmd, argv(1))
    if why:
        pytest.skip(why)
    code, _, err = invoke(cmd, argv(1))
    assert code == 0, err
    (run,) = Ledger(led).history()
    assert run["status"] == "complete" and run["command"].split()[0] == name
    assert 0 < run["epsilon_spent"] <= 1.0 and run["epsilon_reserved"] == 1.0
    assert run["report"].endswith("o1.report.json") and (tmp_path / "out" / "o1.report.json").exists()
    code, _, err = invoke(cmd, argv(2))
    assert code == 1 and "exceeded" in err and "Traceback" not in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"o1.{ext}", "o1.report.json"]
    assert len(Ledger(led).history()) == 1


@pytest.mark.parametrize("name", ["probe", "publish", "forest", "cluster"])
def test_refusal_comes_before_the_data_is_parsed(tmp_path, name):
    """Over the cap, a command refuses having read only the fingerprint: even a data file
    that would fail to parse gets the ledger's refusal, not a data error."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_errors import COMMANDS, SCHEMA, invoke, unavailable

    cmd = COMMANDS[name]
    data = tmp_path / "data.csv"
    data.write_text("x,y,color,label,note\n1,2,red\n")  # ragged: parsing would fail
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA)
    led = tmp_path / "l.db"
    assert dpkit("budget", "init", data, "--name", "toy", "--cap", "0.5", "--ledger", led)[0] == 0
    argv = cmd.argv({"data": str(data), "schema": str(schema), "out": str(tmp_path / "o.out"),
                     "epsilon": "1", "seed": "1", "extra": ["--ledger", str(led)]})
    why = unavailable(cmd, argv)
    if why:
        pytest.skip(why)
    code, _, err = invoke(cmd, argv)
    assert code == 1 and "privacy budget of data set 'toy' exceeded" in err, err
    assert "ragged" not in err
