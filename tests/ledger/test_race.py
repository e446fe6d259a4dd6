"""Concurrent runs racing for the last ε never together pass the cap (issue 8, must show).

8 processes, cap 1.0, each asking ε = 0.3. All 8 pass the read-only pre-check at once (the
ledger is empty), then race to reserve: the ``BEGIN IMMEDIATE`` reservation serializes them,
so at most 3 succeed, the ledger sums to ≤ 1.0, and every refused run wrote nothing.
"""

from __future__ import annotations

import multiprocessing as mp
import time

import pytest

from dpkit.ledger import Ledger, LedgerError

N_PROC = 8
CAP = 1.0
ASK = 0.3


def _racer(i: int, data: str, ledger: str, outdir: str, barrier, results) -> None:  # noqa: ANN001
    from dpkit.io.output import atomic_output
    from dpkit.run import PrivateRun

    out = f"{outdir}/out{i}.csv"
    try:
        run = PrivateRun("publish", "race", ASK, None, inputs=[data],
                         outputs=[out, f"{outdir}/out{i}.report.json"], ledger=ledger)
    except LedgerError:
        barrier.wait()
        results.put((i, "refused-precheck"))
        return
    barrier.wait()  # everyone has passed the pre-check; now race for the reservation
    try:
        with run:
            time.sleep(0.05)  # hold the reservation while the others try
            run.accountant.spend("release", "test", ASK)
            with atomic_output(out) as fh:
                fh.write("x\n1\n")
    except LedgerError:
        results.put((i, "refused"))
        return
    results.put((i, "ok"))


@pytest.mark.parametrize("round_", range(2))
def test_eight_processes_race_for_the_cap(tmp_path, round_):
    data = tmp_path / "data.csv"
    data.write_text("x\n1\n2\n")
    ledger = tmp_path / "ledger.db"
    Ledger(ledger, create=True).register("toy", data, CAP)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(N_PROC)
    results = ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(i, str(data), str(ledger), str(tmp_path), barrier, results))
             for i in range(N_PROC)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    outcome = dict(results.get(timeout=5) for _ in range(N_PROC))
    ok = sorted(i for i, r in outcome.items() if r == "ok")
    assert 1 <= len(ok) <= 3  # 3 × 0.3 = 0.9 ≤ 1.0 < 4 × 0.3
    assert len(ok) == 3  # serialized, not merely safe: the cap is used up to what fits
    # every refused run wrote nothing; every successful one wrote its output
    for i in range(N_PROC):
        assert (tmp_path / f"out{i}.csv").exists() == (i in ok)
    book = Ledger(ledger)
    runs = book.history()
    assert len(runs) == len(ok)  # refused runs are not recorded
    assert all(r["status"] == "complete" for r in runs)
    total = sum(r["epsilon_counted"] for r in runs)
    assert total <= CAP + 1e-9
    (s,) = book.status()
    assert s.spent == pytest.approx(0.9) and s.reserved == 0.0


def _init(i: int, ledger: str, outdir: str, barrier, results) -> None:  # noqa: ANN001
    from pathlib import Path

    data = Path(outdir) / f"d{i}.csv"
    data.write_text(f"x\n{i}\n")
    barrier.wait()
    try:
        Ledger(ledger, create=True).register(f"set{i}", data, 1.0)
        results.put((i, "ok"))
    except Exception as exc:  # noqa: BLE001 — report any failure to the parent
        results.put((i, f"{type(exc).__name__}: {exc}"))


def test_concurrent_budget_init_on_a_new_ledger(tmp_path):
    """Four `budget init`s creating the same new ledger at once all succeed."""
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(4)
    results = ctx.Queue()
    ledger = str(tmp_path / "new.db")
    procs = [ctx.Process(target=_init, args=(i, ledger, str(tmp_path), barrier, results)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    outcome = dict(results.get(timeout=5) for _ in range(4))
    assert set(outcome.values()) == {"ok"}, outcome
    assert sorted(s.name for s in Ledger(ledger).status()) == ["set0", "set1", "set2", "set3"]
