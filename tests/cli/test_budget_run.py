"""`dpkit budget run|check` and `init --exist-ok` (issue 23): all-or-nothing nights, by subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
PY = sys.executable


def dpkit(*argv: str, **kw) -> subprocess.CompletedProcess:  # noqa: ANN003
    return subprocess.run([PY, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO, **kw)


@pytest.fixture
def night(tmp_path: Path) -> dict[str, str]:
    data = tmp_path / "export.csv"
    data.write_bytes(ADULT.read_bytes())
    led = str(tmp_path / "ledger.db")
    res = dpkit("budget", "init", str(data), "--name", "adult", "--cap", "3", "--ledger", led)
    assert res.returncode == 0, res.stderr
    return {"data": str(data), "ledger": led, "dir": str(tmp_path)}


def _status(led: str) -> dict:
    (row,) = json.loads(dpkit("budget", "status", "--json", "--ledger", led).stdout)
    return row


def test_nights_are_all_or_nothing(night: dict[str, str]) -> None:
    d = night["dir"]
    script = (f"{PY} -m dpkit -q publish {night['data']} --schema {SCHEMA} --epsilon 1 -o {d}/rel.csv && "
              f"{PY} -m dpkit -q forest train {night['data']} --schema {SCHEMA} --epsilon 1 -o {d}/model.json && "
              f"touch {d}/ran")
    res = dpkit("-q", "budget", "run", "--epsilon", "2", "--ledger", night["ledger"], "--", "sh", "-c", script)
    assert res.returncode == 0, res.stderr
    assert Path(d, "ran").exists() and _status(night["ledger"])["remaining"] == pytest.approx(1.0)
    os.unlink(Path(d, "ran"))
    # night 2: 2 does not fit in the 1 left: refused as a whole, CMD never starts
    res = dpkit("-q", "budget", "run", "--epsilon", "2", "--ledger", night["ledger"], "--", "sh", "-c", script)
    assert res.returncode == 1 and "exceeded" in res.stderr and res.stderr.count("\n") == 1
    assert not Path(d, "ran").exists() and _status(night["ledger"])["remaining"] == pytest.approx(1.0)
    events = json.loads(dpkit("budget", "history", "--json", "--ledger", night["ledger"]).stdout)
    kinds = [e["kind"] for e in events]
    assert kinds.count("run") == 2 and kinds.count("reservation") == 1 and kinds.count("refusal") == 1
    refusal = next(e for e in events if e["kind"] == "refusal")
    assert refusal["epsilon"] == 2 and "sh -c" in refusal["command"]


def test_a_command_passing_its_reservation_is_refused(night: dict[str, str]) -> None:
    d = night["dir"]
    res = dpkit("-q", "budget", "run", "--epsilon", "1", "--ledger", night["ledger"], "--",
                PY, "-m", "dpkit", "-q", "publish", night["data"], "--schema", str(SCHEMA), "--epsilon", "1.5",
                "-o", f"{d}/rel.csv")
    assert res.returncode == 1 and "reservation" in res.stderr and not Path(d, "rel.csv").exists()
    assert _status(night["ledger"])["remaining"] == pytest.approx(3.0)


def _started(path: Path) -> None:
    for _ in range(300):
        if path.exists():
            return
        time.sleep(0.05)
    raise AssertionError("the command did not start")


@pytest.mark.parametrize("sig,target", [(signal.SIGTERM, "runner"), (signal.SIGKILL, "child"),
                                        (signal.SIGKILL, "runner")])
def test_the_reservation_comes_back_however_it_ends(night: dict[str, str], sig: int, target: str) -> None:
    d = Path(night["dir"])
    child = (f"import os, time; open({str(d / 'pid')!r}, 'w').write(str(os.getpid())); time.sleep(60)")
    runner = subprocess.Popen([PY, "-m", "dpkit", "-q", "budget", "run", "--epsilon", "2", "--ledger",
                               night["ledger"], "--", PY, "-c", child], cwd=REPO, stderr=subprocess.PIPE)
    _started(d / "pid")
    time.sleep(0.1)
    assert _status(night["ledger"])["reserved"] == pytest.approx(2.0)
    os.kill(runner.pid if target == "runner" else int((d / "pid").read_text()), sig)
    code = runner.wait(timeout=30)
    if target == "child":
        assert code == 128 + sig  # the shell's convention: 137 for SIGKILL
    elif sig == signal.SIGTERM:
        assert code == 128 + sig  # forwarded: the child ended on it
    else:  # the runner itself was killed: its child lives on, the ledger reclaims the reservation
        os.kill(int((d / "pid").read_text()), signal.SIGKILL)
    row = _status(night["ledger"])
    assert row["reserved"] == 0 and row["remaining"] == pytest.approx(3.0)


def test_init_exist_ok_and_check(night: dict[str, str]) -> None:
    args = ["budget", "init", night["data"], "--name", "adult", "--ledger", night["ledger"], "--exist-ok"]
    assert dpkit(*args, "--cap", "3").returncode == 0
    res = dpkit(*args, "--cap", "5")
    assert res.returncode == 1 and "with cap 3, not 5" in res.stderr
    assert dpkit("budget", "check", "--epsilon", "2.5", "--ledger", night["ledger"]).returncode == 0
    assert dpkit("budget", "check", "--epsilon", "3.5", "--ledger", night["ledger"]).returncode == 1
    assert _status(night["ledger"])["runs"] == 0  # nothing booked
