"""docs/cron.md's nightly script and Makefile, run as written (issue 23): two nights over the
same export (the second refused whole), then a rotated export sharing the cap."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "cron.md"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def blocks() -> dict[str, str]:
    """The code blocks of docs/cron.md that start with a '# file: NAME' line."""
    out = {}
    for body in re.findall(r"```(?:bash|make)\n(.*?)```", DOC.read_text(), flags=re.S):
        m = re.search(r"^#!.*\n# file: (\S+)|^# file: (\S+)", body, flags=re.M)
        if m:
            out[m.group(1) or m.group(2)] = body
    return out


def test_the_doc_has_the_two_files() -> None:
    assert set(blocks()) == {"nightly.sh", "nightly.mk"}


def test_nights_release_all_or_nothing(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    for name, body in blocks().items():
        (job / name).write_text(body)
    (job / "nightly.sh").chmod(0o755)
    export = tmp_path / "export.csv"
    export.write_bytes((REPO / "sample_data/adult/train.csv").read_bytes())
    # a cron job runs outside make: a sub-make's variables (make test-newest runs make test)
    # would make the script's own `make -s` print "Entering directory"
    outside = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    env = {**outside, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "DATA": str(export), "SCHEMA": str(REPO / "taxonomies/adult.yaml"),
           "DPKIT_LEDGER": str(tmp_path / "ledger.db")}

    def night(n: int) -> subprocess.CompletedProcess:
        return subprocess.run([str(job / "nightly.sh")], env={**env, "OUT": str(tmp_path / f"night{n}")},
                              capture_output=True, text=True, timeout=300)

    first = night(1)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "" and first.stderr == ""  # -q: a good night prints nothing
    assert {p.name for p in (tmp_path / "night1").iterdir()} == {
        "adult.released.csv", "adult.released.report.json", "adult.forest.json", "adult.forest.report.json"}
    second = night(2)  # 2 more do not fit in the 1 left of cap 3: nothing runs
    assert second.returncode == 1 and "exceeded" in second.stderr and len(second.stderr.splitlines()) == 1
    assert not (tmp_path / "night2").exists() and not (tmp_path / "night2.partial").exists()
    # rotation: tomorrow's export is a new file, a new version of the same data set (same cap)
    export.write_bytes(export.read_bytes() + export.read_bytes().splitlines(keepends=True)[1])
    third = night(3)
    assert third.returncode == 1 and "remaining 1 of cap 3" in third.stderr
    history = subprocess.run([sys.executable, "-m", "dpkit", "budget", "history", "--json"], env=env,
                             capture_output=True, text=True).stdout
    assert history.count('"kind": "refusal"') == 2 and history.count('"kind": "reservation"') == 1
    # the ledger books the files a reader finds, under their final names (not a renamed .partial)
    assert str(tmp_path / "night1" / "adult.released.csv") in history and ".partial" not in history
    again = night(1)  # a night already released is never overwritten, nor removed
    assert again.returncode == 2 and "exists" in again.stderr
    assert (tmp_path / "night1" / "adult.released.csv").exists()
